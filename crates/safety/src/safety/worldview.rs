//! Layer 5: the world-view check on a sister's REPLY. Meta talk that breaks the fiction (AI,
//! language models, vendor names, developers, prompts, training data) becomes a Director
//! finding `worldview` with an in-character way out for the sister who spoke; `correct` makes
//! the substitution chat mode can use (deterministic, unlike a random canned line).
//!
//! What counts, and what deliberately does not (モデルルーム, ファッションモデル, "MAIL"), is
//! documented in assets/safety/worldview.toml.

use std::collections::BTreeMap;

use regex::Regex;

use super::data::{MetaKind, Source, WvStatus};
use super::fold::{Folded, char_slice};
use super::layers::compile_regex;
use super::messages as m;
use super::types::Sister;
use super::words::{WordSet, shadow};
use crate::config::ConfigError;
use crate::director::{Finding, RuleId, Status};

#[derive(Debug, Clone)]
struct Term {
    key: String,
    kind: MetaKind,
    status: WvStatus,
}

#[derive(Debug, Clone)]
pub struct WorldviewChecker {
    terms: WordSet,
    term_info: Vec<Term>,
    safe: WordSet,
    patterns: Vec<(Regex, Term)>,
    /// Per sister id: (display name, correction line).
    characters: BTreeMap<String, (String, String)>,
}

impl WorldviewChecker {
    /// Merges the `[worldview]` sections: terms and safe phrases are added (a term listed again
    /// replaces the earlier one), patterns replace by id, characters by id.
    pub fn from_sources(sources: &[Source]) -> Result<WorldviewChecker, ConfigError> {
        let mut terms: Vec<(String, bool, Term)> = Vec::new();
        let mut safe = Vec::new();
        let mut patterns: Vec<(Regex, Term)> = Vec::new();
        let mut characters = BTreeMap::new();
        let holders = super::layers::placeholders(sources);
        for src in sources {
            let Some(w) = &src.file.worldview else {
                continue;
            };
            for t in &w.term {
                let info = Term {
                    key: t.text.clone(),
                    kind: t.kind,
                    status: t.status,
                };
                match terms
                    .iter()
                    .position(|(x, e, _)| x == &t.text && *e == t.exact)
                {
                    Some(i) => terms[i].2 = info,
                    None => terms.push((t.text.clone(), t.exact, info)),
                }
            }
            safe.extend(w.safe.iter().map(|s| (s.clone(), false)));
            for p in &w.pattern {
                let re = compile_regex(&p.regex, &holders).map_err(|e| {
                    src.error(&p.regex, format!("worldview pattern `{}`: {e}", p.id))
                })?;
                let info = Term {
                    key: p.id.clone(),
                    kind: p.kind,
                    status: p.status,
                };
                match patterns.iter().position(|(_, t)| t.key == p.id) {
                    Some(i) => patterns[i] = (re, info),
                    None => patterns.push((re, info)),
                }
            }
            for (id, c) in &w.character {
                characters.insert(id.clone(), (c.name.clone(), c.correction.clone()));
            }
        }
        let bad = |message: String| ConfigError::Invalid {
            path: "assets/safety/worldview.toml".into(),
            at: None,
            key: None,
            message,
        };
        Ok(WorldviewChecker {
            terms: WordSet::new(terms.iter().map(|(t, e, _)| (t.as_str(), *e))).map_err(bad)?,
            term_info: terms.into_iter().map(|(_, _, i)| i).collect(),
            safe: WordSet::new(safe).map_err(bad)?,
            patterns,
            characters,
        })
    }

    /// The sister's in-character way out of a meta question.
    pub fn correction(&self, sister: Sister) -> &str {
        self.characters
            .get(sister.id())
            .map(|c| c.1.as_str())
            .unwrap_or(match sister {
                Sister::Yana => "え、何の話？それよりさ、今日どうだった？",
                Sister::Ayu => "何のお話でしょう？それより、今日はどうでしたか？",
            })
    }

    fn name(&self, sister: Sister) -> &str {
        self.characters
            .get(sister.id())
            .map(|c| c.0.as_str())
            .unwrap_or(sister.name())
    }

    /// One finding per meta term in `reply` (overlapping hits merged, the longest kept), spans
    /// in chars of `reply`.
    pub fn check(&self, reply: &str, sister: Sister) -> Vec<Finding> {
        let f = Folded::new(reply);
        let safe: Vec<(usize, usize)> = self
            .safe
            .find(&f)
            .iter()
            .map(|h| (h.start, h.end))
            .collect();
        let mut found: Vec<(usize, usize, &Term)> = self
            .terms
            .find(&f)
            .iter()
            .filter(|h| shadow(&safe, h.start, h.end).is_none())
            .map(|h| (h.start, h.end, &self.term_info[h.entry]))
            .collect();
        for (re, term) in &self.patterns {
            for mt in re.find_iter(&f.folded) {
                let (s, e) = (f.folded_char_at(mt.start()), f.folded_char_at(mt.end()));
                if shadow(&safe, s, e).is_none() {
                    found.push((s, e, term));
                }
            }
        }
        // Longest first, then drop anything overlapping a kept one.
        found.sort_by_key(|(s, e, _)| (std::cmp::Reverse(e - s), *s));
        let mut kept: Vec<(usize, usize, &Term)> = Vec::new();
        for h in found {
            if !kept.iter().any(|k| h.0 < k.1 && k.0 < h.1) {
                kept.push(h);
            }
        }
        kept.sort_by_key(|(s, _, _)| *s);
        let name = self.name(sister);
        let correction = self.correction(sister);
        kept.into_iter()
            .map(|(s, e, term)| {
                let span = f.orig_span(s, e);
                let matched = char_slice(reply, span);
                let status = match term.status {
                    WvStatus::Warn => Status::Warn,
                    WvStatus::Retry => Status::Retry,
                };
                Finding::new(
                    RuleId::Worldview,
                    status,
                    m::worldview_message(&matched, term.kind, name),
                    m::worldview_suggestion(term.kind, name, correction),
                )
                .with_span(Some(span[0]..span[1]))
                .with_evidence(term.key.clone())
            })
            .collect()
    }

    /// The reply with every sentence holding meta talk removed and the sister's correction put
    /// first; `None` when the reply is clean.
    pub fn correct(&self, reply: &str, sister: Sister) -> Option<String> {
        let findings = self.check(reply, sister);
        if findings.is_empty() {
            return None;
        }
        let spans: Vec<[usize; 2]> = findings.iter().filter_map(|f| f.span).collect();
        let mut kept = String::new();
        let mut sentence = String::new();
        let mut start = 0;
        let chars: Vec<char> = reply.chars().collect();
        for (i, &c) in chars.iter().enumerate() {
            sentence.push(c);
            let end = matches!(c, '。' | '！' | '？' | '!' | '?' | '\n')
                && chars
                    .get(i + 1)
                    .is_none_or(|n| !matches!(n, '！' | '？' | '!' | '?'));
            if end || i + 1 == chars.len() {
                if !spans.iter().any(|s| s[0] < i + 1 && start < s[1]) {
                    kept.push_str(&sentence);
                }
                sentence.clear();
                start = i + 1;
            }
        }
        let kept = kept.trim();
        let correction = self.correction(sister);
        Some(if kept.is_empty() {
            correction.to_string()
        } else {
            format!("{correction}{kept}")
        })
    }
}
