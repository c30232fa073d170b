//! Layer 1 (static NG words) and Layer 3 (compound regex patterns), built from the merged data
//! files, and the `Hit` both report in the trace.
//!
//! Merging: a [[word]] with the same matched form (and the same `exact`) as an earlier one
//! replaces it; a [[pattern]] with the same `id` replaces it; [placeholders] lists are joined.

use std::collections::{BTreeMap, HashMap};

use regex::{Regex, RegexBuilder};
use serde::Serialize;

use super::data::{PatternEntry, Source, WordEntry};
use super::fold::{Folded, char_slice, fold_char, fold_str, plain_str};
use super::types::{Category, Tier};
use super::variants::Dict;
use super::words::{WordSet, shadow};
use crate::config::ConfigError;

/// One match of a word or a pattern, as the trace shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Hit {
    /// The word as listed, or the pattern id.
    pub entry: String,
    /// What the message says there.
    pub text: String,
    /// Char offsets into the original message.
    pub span: [usize; 2],
    pub tier: Tier,
    pub category: Category,
    /// The safe word that made this hit harmless.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shadowed_by: Option<String>,
}

/// Layer 1.
#[derive(Debug, Clone)]
pub struct NgWords {
    set: WordSet,
    entries: Vec<WordEntry>,
}

/// What Layer 1 saw: its hits, and the safe spans (in view chars) that Layer 2 honours too.
#[derive(Debug, Clone, Default)]
pub struct L1Scan {
    pub hits: Vec<Hit>,
    pub safe_spans: Vec<(usize, usize)>,
}

impl NgWords {
    pub fn build(sources: &[Source]) -> Result<NgWords, ConfigError> {
        NgWords::build_with(sources, Dict::installed())
    }

    /// Like `build`, kanji words also matched by their reading from `dict`.
    pub fn build_with(sources: &[Source], dict: Dict) -> Result<NgWords, ConfigError> {
        let mut entries: Vec<WordEntry> = Vec::new();
        let mut index: HashMap<(String, bool), usize> = HashMap::new();
        for src in sources {
            for w in &src.file.word {
                let form = if w.exact {
                    plain_str(&w.text)
                } else {
                    fold_str(&w.text)
                };
                if form.trim().is_empty() {
                    return Err(src.error(
                        &format!("{:?}", w.text),
                        format!("[[word]] text {:?} is empty", w.text),
                    ));
                }
                match index.get(&(form.clone(), w.exact)) {
                    Some(&i) => entries[i] = w.clone(),
                    None => {
                        index.insert((form, w.exact), entries.len());
                        entries.push(w.clone());
                    }
                }
            }
        }
        let set = WordSet::with_dict(entries.iter().map(|w| (w.text.as_str(), w.exact)), dict)
            .map_err(|message| ConfigError::Invalid {
                path: "assets/safety/ng_words.toml".into(),
                at: None,
                key: None,
                message,
            })?;
        Ok(NgWords { set, entries })
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Are kanji words also matched by their kana reading (a dictionary is at hand)?
    pub fn readings_checked(&self) -> bool {
        self.set.readings_checked()
    }

    pub fn scan(&self, f: &Folded, original: &str) -> L1Scan {
        let raw = self.set.find(f);
        let safe: Vec<(usize, usize)> = raw
            .iter()
            .filter(|h| self.entries[h.entry].tier == Tier::Safe)
            .map(|h| (h.start, h.end))
            .collect();
        let hits = raw
            .iter()
            .map(|h| {
                let e = &self.entries[h.entry];
                let shadowed_by = (e.tier != Tier::Safe)
                    .then(|| shadow(&safe, h.start, h.end))
                    .flatten()
                    .map(|i| f.folded_slice(safe[i].0, safe[i].1).to_string());
                let span = f.orig_span(h.start, h.end);
                Hit {
                    entry: e.text.clone(),
                    text: char_slice(original, span),
                    span,
                    tier: e.tier,
                    category: e.category,
                    shadowed_by,
                }
            })
            .collect();
        L1Scan {
            hits,
            safe_spans: safe,
        }
    }
}

/// Layer 3.
#[derive(Debug, Clone, Default)]
pub struct Patterns {
    list: Vec<Compiled>,
}

#[derive(Debug, Clone)]
struct Compiled {
    id: String,
    tier: Tier,
    category: Category,
    all: Vec<Regex>,
    none: Vec<Regex>,
}

/// The merged [placeholders] (folded names, in order, without repeats).
pub fn placeholders(sources: &[Source]) -> BTreeMap<String, Vec<String>> {
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for src in sources {
        for (k, names) in &src.file.placeholders {
            let list = out.entry(k.clone()).or_default();
            for n in names {
                let n = fold_str(n).trim().to_string();
                if !n.is_empty() && !list.contains(&n) {
                    list.push(n);
                }
            }
        }
    }
    out
}

impl Patterns {
    pub fn build(
        sources: &[Source],
        holders: &BTreeMap<String, Vec<String>>,
    ) -> Result<Patterns, ConfigError> {
        let mut list: Vec<Compiled> = Vec::new();
        for src in sources {
            for p in &src.file.pattern {
                let c = compile_entry(src, p, holders)?;
                match list.iter().position(|x| x.id == c.id) {
                    Some(i) => list[i] = c,
                    None => list.push(c),
                }
            }
        }
        Ok(Patterns { list })
    }

    pub fn len(&self) -> usize {
        self.list.len()
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    pub fn scan(&self, f: &Folded, original: &str) -> Vec<Hit> {
        let text = f.folded.as_str();
        let mut out = Vec::new();
        'pattern: for p in &self.list {
            let (mut start, mut end) = (usize::MAX, 0);
            for re in &p.all {
                let found = if re.capture_names().any(|n| n == Some("m")) {
                    re.captures(text)
                        .and_then(|c| c.name("m").or_else(|| c.get(0)))
                } else {
                    re.find(text)
                };
                let Some(m) = found else {
                    continue 'pattern;
                };
                start = start.min(m.start());
                end = end.max(m.end());
            }
            if p.none.iter().any(|re| re.is_match(text)) {
                continue;
            }
            let span = f.orig_span(f.folded_char_at(start), f.folded_char_at(end));
            out.push(Hit {
                entry: p.id.clone(),
                text: char_slice(original, span),
                span,
                tier: p.tier,
                category: p.category,
                shadowed_by: None,
            });
        }
        out
    }
}

fn compile_entry(
    src: &Source,
    p: &PatternEntry,
    holders: &BTreeMap<String, Vec<String>>,
) -> Result<Compiled, ConfigError> {
    let at = format!("\"{}\"", p.id);
    if p.all.is_empty() {
        return Err(src.error(&at, format!("pattern `{}`: `all` is empty", p.id)));
    }
    let compile = |source: &String| {
        compile_regex(source, holders).map_err(|m| {
            let needle = source.lines().next().unwrap_or(source);
            let at = if src.text.contains(needle) {
                needle
            } else {
                &at
            };
            src.error(at, format!("pattern `{}`: {m}", p.id))
        })
    };
    Ok(Compiled {
        id: p.id.clone(),
        tier: p.tier,
        category: p.category,
        all: p.all.iter().map(compile).collect::<Result<_, _>>()?,
        none: p.none.iter().map(compile).collect::<Result<_, _>>()?,
    })
}

/// Compiles a regex written for the folded text: placeholders expanded, katakana folded to
/// hiragana, full-width forms refused (they would turn into regex syntax), case-insensitive.
pub fn compile_regex(
    source: &str,
    holders: &BTreeMap<String, Vec<String>>,
) -> Result<Regex, String> {
    let mut s = String::with_capacity(source.len());
    let mut chars = source.char_indices().peekable();
    let mut prev = '\0';
    while let Some((i, c)) = chars.next() {
        if c == '{' && !matches!(prev, 'p' | 'P') {
            let rest = &source[i + 1..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                .collect();
            if !name.is_empty() && rest[name.len()..].starts_with('}') {
                let names = holders.get(&name).ok_or_else(|| {
                    let known: Vec<&str> = holders.keys().map(String::as_str).collect();
                    format!(
                        "unknown placeholder {{{name}}} (defined: {})",
                        known.join(", ")
                    )
                })?;
                let alts: Vec<String> = names.iter().map(|n| regex::escape(n)).collect();
                s.push_str(&format!("(?:{})", alts.join("|")));
                for _ in 0..=name.len() {
                    chars.next();
                }
                prev = '}';
                continue;
            }
        }
        if c.is_ascii() {
            s.push(c);
        } else {
            let folded = fold_str(&c.to_string());
            if folded.chars().any(|x| x.is_ascii()) {
                return Err(format!(
                    "`{c}` is folded to `{folded}` in messages; write `{folded}` (escaped if it is regex syntax)"
                ));
            }
            s.extend(folded.chars().map(fold_char));
        }
        prev = c;
    }
    RegexBuilder::new(&s)
        .case_insensitive(true)
        .build()
        .map_err(|e| format!("invalid regex: {e}"))
}
