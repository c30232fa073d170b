//! The static checks over a prepared text: forbidden keywords, string similarity with explicit
//! hints, and direct quotation, against an input compiled once.

use std::collections::{HashMap, HashSet};

use aho_corasick::{AhoCorasick, MatchKind};

use crate::safety::variants::{Dict, KeywordSet, View, on_token_boundaries};
use crate::vault::similarity::{Folded, Profile, fold_core};

#[path = "leak_similar.rs"]
mod similar;

#[path = "leak_emoji.rs"]
mod emoji;

#[path = "leak_partial.rs"]
mod partial;

pub(super) use similar::content_words;

use super::messages;
use super::quote::{QuoteIndex, Source};
use super::text::Prepared;
use super::{IssueKind, LeakIssue, ReviewConfig, ReviewInput};

/// Many patterns searched at once, every occurrence reported (overlaps included).
struct Matcher {
    patterns: Vec<String>,
    ac: Option<AhoCorasick>,
}

impl Matcher {
    fn new(patterns: Vec<String>) -> Matcher {
        let ac = if patterns.is_empty() {
            None
        } else {
            AhoCorasick::builder()
                .match_kind(MatchKind::Standard)
                .build(&patterns)
                .ok()
        };
        Matcher { patterns, ac }
    }

    /// Calls `f(pattern, start_byte, end_byte)` for every occurrence.
    fn each(&self, hay: &str, mut f: impl FnMut(usize, usize, usize)) {
        if let Some(ac) = &self.ac {
            for m in ac.find_overlapping_iter(hay) {
                f(m.pattern().as_usize(), m.start(), m.end());
            }
            return;
        }
        // Only if the automaton could not be built (size limits): slower, same answers.
        for (p, pat) in self.patterns.iter().enumerate() {
            let mut from = 0;
            while let Some(at) = hay.get(from..).and_then(|h| h.find(pat.as_str())) {
                let start = from + at;
                f(p, start, start + pat.len());
                from = start + hay[start..].chars().next().map_or(1, char::len_utf8);
            }
        }
    }
}

/// Patterns deduplicated, each with the owners that listed it.
fn matcher<T: Copy>(items: impl IntoIterator<Item = (String, T)>) -> (Matcher, Vec<Vec<T>>) {
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut patterns = Vec::new();
    let mut owners: Vec<Vec<T>> = Vec::new();
    for (pat, owner) in items {
        if pat.is_empty() {
            continue;
        }
        let i = *index.entry(pat.clone()).or_insert_with(|| {
            patterns.push(pat);
            owners.push(Vec::new());
            owners.len() - 1
        });
        owners[i].push(owner);
    }
    (Matcher::new(patterns), owners)
}

fn is_kanji(c: char) -> bool {
    matches!(c, '\u{4E00}'..='\u{9FFF}' | '\u{3400}'..='\u{4DBF}' | '々' | '〆')
}

fn fold(s: &str) -> String {
    Folded::new(s.trim()).as_string()
}

/// (sentence, secret) pairs already reported, so a hint never repeats a stronger issue.
#[derive(Default)]
struct Seen {
    /// Keyword or similarity issues.
    strong: HashSet<(usize, usize)>,
    /// Hints by score.
    hinted: HashSet<(usize, usize)>,
}

pub(super) struct Compiled {
    /// Secrets of level ≤ 2.
    checked: Vec<usize>,
    /// Similarity profile per secret (empty for unchecked ones).
    profiles: Vec<Profile>,
    /// Forbidden keywords with their variants (kana, width, separators, okurigana, readings).
    keywords: KeywordSet,
    keyword_owners: Vec<Vec<(usize, usize)>>,
    /// `forbidden_keywords_global` with their readings, variants included.
    global: KeywordSet,
    /// Per `global` entry: its index in `forbidden_keywords_global`.
    global_owner: Vec<usize>,
    /// A keyword with kanji has no writer-given reading: only a dictionary finds its kana.
    readings_needed: bool,
    dict: Dict,
    allowed: Matcher,
    allowed_owners: Vec<Vec<usize>>,
    words: Matcher,
    word_owners: Vec<Vec<(usize, u32)>>,
    /// Content-word count per secret.
    word_counts: Vec<u32>,
    quotes: QuoteIndex,
    /// Romaji spellings of the keywords' kana readings, owned by (secret, keyword) in
    /// `romaji_owners`.
    romaji: super::romaji::Romaji,
    romaji_owners: Vec<(usize, usize)>,
    /// Per checked secret: its keywords and their readings, for emoji that stand for them.
    emoji_words: Vec<(usize, Vec<String>)>,
    /// Per checked secret with pieces: its keywords' kanji pieces (see `leak_partial.rs`).
    partial: Vec<(usize, Vec<partial::Piece>)>,
}

/// Allowed-expression occurrences in one text (folded char ranges).
pub(super) struct Allowed {
    pub by_secret: Vec<Vec<(usize, usize)>>,
    /// Folded chars inside an allowed expression of any secret.
    pub mask: Vec<bool>,
}

impl Allowed {
    fn covers(&self, secret: usize, start: usize, end: usize) -> bool {
        self.by_secret[secret]
            .iter()
            .any(|&(s, e)| s <= start && end <= e)
    }
}

impl Compiled {
    pub fn new(input: &ReviewInput, cfg: &ReviewConfig, dict: Dict) -> Compiled {
        let secrets = &input.secrets;
        let checked: Vec<usize> = (0..secrets.len())
            .filter(|&i| secrets[i].level <= 2)
            .collect();
        let entities: Vec<Vec<char>> = secrets.iter().map(|s| fold_core(&s.entity)).collect();
        let mut profiles = vec![Profile::default(); secrets.len()];
        for &i in &checked {
            profiles[i] = Profile::new(&fold_core(&secrets[i].content), &entities[i]);
        }
        // Deduplicated by loose form, each with the (secret, keyword) pairs that listed it; a
        // writer-given reading is one more spelling of its keyword.
        let readings_of = |w: &str| -> Vec<String> {
            input
                .keyword_readings
                .get(w.trim())
                .cloned()
                .unwrap_or_default()
        };
        let mut index: HashMap<String, usize> = HashMap::new();
        let mut words: Vec<String> = Vec::new();
        let mut keyword_owners: Vec<Vec<(usize, usize)>> = Vec::new();
        let mut unread = false;
        for &i in &checked {
            for (k, w) in secrets[i].forbidden_keywords.iter().enumerate() {
                let readings = readings_of(w);
                unread |= readings.is_empty() && w.chars().any(is_kanji);
                for spelling in std::iter::once(w.clone()).chain(readings) {
                    let form = crate::safety::variants::loose_str(&spelling);
                    if form.is_empty() {
                        continue;
                    }
                    let at = *index.entry(form).or_insert_with(|| {
                        words.push(spelling.clone());
                        keyword_owners.push(Vec::new());
                        words.len() - 1
                    });
                    keyword_owners[at].push((i, k));
                }
            }
        }
        // A keyword listed twice (or twice after folding) by one secret is one issue.
        for owners in &mut keyword_owners {
            owners.sort_unstable();
            owners.dedup_by_key(|o| o.0);
        }
        let keywords = KeywordSet::new(words.iter().map(|w| Some(w.as_str())), dict.clone())
            .unwrap_or_default();
        let mut global_words = Vec::new();
        let mut global_owner = Vec::new();
        for (g, w) in input.forbidden_keywords_global.iter().enumerate() {
            if w.trim().is_empty() {
                continue;
            }
            let readings = readings_of(w);
            unread |= readings.is_empty() && w.chars().any(is_kanji);
            for spelling in std::iter::once(w.clone()).chain(readings) {
                global_words.push(spelling);
                global_owner.push(g);
            }
        }
        let global = KeywordSet::new(global_words.iter().map(|w| Some(w.as_str())), dict.clone())
            .unwrap_or_default();
        let (allowed, allowed_owners) = matcher(
            secrets
                .iter()
                .enumerate()
                .flat_map(|(i, s)| s.allowed_expressions.iter().map(move |a| (fold(a), i))),
        );
        let mut word_counts = vec![0u32; secrets.len()];
        let mut all_words = Vec::new();
        // Level 2: hints too explicit; levels 0–1: hints a first-time reader could follow.
        for &i in &checked {
            let words = content_words(&secrets[i].content, &secrets[i].entity);
            word_counts[i] = words.len() as u32;
            for (b, w) in words.into_iter().enumerate() {
                all_words.push((w, (i, b as u32)));
            }
        }
        let (words, word_owners) = matcher(all_words);
        let mut romaji_owners = Vec::new();
        let mut readings = Vec::new();
        for &i in &checked {
            for (k, w) in secrets[i].forbidden_keywords.iter().enumerate() {
                for r in std::iter::once(w.clone()).chain(readings_of(w)) {
                    readings.push((r, romaji_owners.len()));
                    romaji_owners.push((i, k));
                }
            }
        }
        let romaji = super::romaji::Romaji::new(readings);
        let emoji_words = checked
            .iter()
            .map(|&i| {
                let words = secrets[i]
                    .forbidden_keywords
                    .iter()
                    .flat_map(|w| std::iter::once(w.trim().to_string()).chain(readings_of(w)))
                    .collect();
                (i, words)
            })
            .collect();
        let partial = checked
            .iter()
            .map(|&i| {
                let kw = &secrets[i].forbidden_keywords;
                let pieces = kw
                    .iter()
                    .enumerate()
                    .flat_map(|(k, w)| partial::pieces(k, w));
                (i, pieces.collect::<Vec<_>>())
            })
            .filter(|(_, p)| !p.is_empty())
            .collect();
        Compiled {
            checked,
            profiles,
            keywords,
            keyword_owners,
            global,
            global_owner,
            readings_needed: unread,
            dict,
            allowed,
            allowed_owners,
            words,
            word_owners,
            word_counts,
            quotes: QuoteIndex::new(input, cfg.quote_min_chars),
            romaji,
            romaji_owners,
            emoji_words,
            partial,
        }
    }

    fn allowed_in(&self, t: &Prepared, n_secrets: usize) -> Allowed {
        let mut a = Allowed {
            by_secret: vec![Vec::new(); n_secrets],
            mask: vec![false; t.fold.chars.len()],
        };
        self.allowed.each(&t.string, |p, sb, eb| {
            let (s, e) = (t.char_at_byte(sb), t.char_at_byte(eb));
            for &owner in &self.allowed_owners[p] {
                a.by_secret[owner].push((s, e));
            }
            a.mask[s..e].iter_mut().for_each(|m| *m = true);
        });
        a
    }

    /// Folded chars of `t` inside an allowed expression of any secret.
    pub fn allowed_mask(&self, t: &Prepared, n_secrets: usize) -> Vec<bool> {
        self.allowed_in(t, n_secrets).mask
    }

    pub fn run(&self, t: &Prepared, input: &ReviewInput, cfg: &ReviewConfig) -> Vec<LeakIssue> {
        let allowed = self.allowed_in(t, input.secrets.len());
        let mut issues = Vec::new();
        let mut seen = Seen::default();
        self.keyword_issues(t, input, cfg, &allowed, &mut issues, &mut seen);
        self.romaji_issues(t, input, cfg, &mut issues, &mut seen);
        self.emoji_issues(t, input, &mut issues, &mut seen);
        self.global_issues(t, input, cfg, &mut issues);
        self.similarity_issues(t, input, cfg, &allowed, &mut issues, &mut seen);
        self.word_hints(t, input, &allowed, &mut issues, &seen);
        self.partial_issues(t, input, &mut issues, &seen);
        self.quotation_issues(t, input, &allowed, &mut issues);
        issues
    }

    fn issue(
        t: &Prepared,
        kind: IssueKind,
        norm: (usize, usize),
        secret_id: Option<&str>,
        (detail, suggestion): (String, String),
    ) -> LeakIssue {
        let (s, e) = t.to_original(norm.0, norm.1);
        LeakIssue {
            kind,
            severity: kind.severity(),
            location: messages::location(t.paragraph(s)),
            detail,
            suggestion,
            secret_id: secret_id.map(str::to_string),
            span: [s, e],
            score: None,
            context: None,
        }
    }

    fn keyword_issues(
        &self,
        t: &Prepared,
        input: &ReviewInput,
        cfg: &ReviewConfig,
        allowed: &Allowed,
        issues: &mut Vec<LeakIssue>,
        seen: &mut Seen,
    ) {
        let boundaries = |s: usize, e: usize| {
            let (os, oe) = t.to_original(s, e);
            self.dict
                .analyzer()
                .is_some_and(|a| on_token_boundaries(a, &t.original, os, oe))
        };
        let accept = |_: usize, _: &View, _: usize, _: usize| true;
        // One issue per occurrence: overlapping hits for one secret (母の形見 and its 形見, or
        // one keyword found by spelling and by reading) are one span, named by the longest.
        let mut spans: Vec<(usize, usize, usize, usize)> = Vec::new();
        for hit in self.keywords.find(t.loose(), &accept, &boundaries) {
            for &(si, k) in &self.keyword_owners[hit.entry] {
                if !allowed.covers(si, hit.start, hit.end) {
                    spans.push((si, hit.start, hit.end, k));
                }
            }
        }
        spans.sort_unstable_by_key(|&(si, s, e, k)| (si, s, std::cmp::Reverse(e), k));
        let mut merged: Vec<(usize, usize, usize, usize)> = Vec::new();
        for (si, s, e, k) in spans {
            match merged.last_mut() {
                Some(m) if m.0 == si && s < m.2 => {
                    if e - s > m.2 - m.1 {
                        m.3 = k;
                    }
                    m.2 = m.2.max(e);
                }
                _ => merged.push((si, s, e, k)),
            }
        }
        for (si, s, e, k) in merged {
            let secret = &input.secrets[si];
            let keyword = secret.forbidden_keywords[k].trim();
            let msg = messages::forbidden_keyword(keyword, &secret.id, secret);
            let mut issue = Self::issue(
                t,
                IssueKind::ForbiddenKeyword,
                (s, e),
                Some(&secret.id),
                msg,
            );
            let [os, oe] = issue.span;
            let n = cfg.keyword_context_chars;
            issue.context = Some(t.original_text(os.saturating_sub(n), oe + n));
            issues.push(issue);
            if let Some(sent) = t.sentence_of(s) {
                seen.strong.insert((sent, si));
            }
        }
    }

    /// A keyword written in romaji (`Kōbō` for 工房): a forbidden keyword like any spelling.
    fn romaji_issues(
        &self,
        t: &Prepared,
        input: &ReviewInput,
        cfg: &ReviewConfig,
        issues: &mut Vec<LeakIssue>,
        seen: &mut Seen,
    ) {
        let mut done: Vec<(usize, usize)> = Vec::new();
        for (owner, s, e) in self.romaji.find(&t.original) {
            let (si, k) = self.romaji_owners[owner];
            if done.contains(&(si, s)) {
                continue;
            }
            done.push((si, s));
            let secret = &input.secrets[si];
            let keyword = secret.forbidden_keywords[k].trim();
            let (detail, suggestion) = messages::forbidden_keyword(keyword, &secret.id, secret);
            let n = cfg.keyword_context_chars;
            issues.push(LeakIssue {
                kind: IssueKind::ForbiddenKeyword,
                severity: IssueKind::ForbiddenKeyword.severity(),
                location: messages::location(t.paragraph(s)),
                detail: format!("{detail}（ローマ字表記）"),
                suggestion,
                secret_id: Some(secret.id.clone()),
                span: [s, e],
                score: None,
                context: Some(t.original_text(s.saturating_sub(n), e + n)),
            });
            let norm = t.norm_of(s);
            if let Some(sent) = t.sentence_of(norm) {
                seen.strong.insert((sent, si));
            }
        }
    }

    /// Emoji that stand for a secret's keywords (see `leak_emoji.rs`).
    fn emoji_issues(
        &self,
        t: &Prepared,
        input: &ReviewInput,
        issues: &mut Vec<LeakIssue>,
        seen: &mut Seen,
    ) {
        for (si, score, exact, (s, e)) in emoji::pointed(&t.original, &self.emoji_words) {
            let secret = &input.secrets[si];
            let kind = if exact {
                IssueKind::ForbiddenKeyword
            } else {
                IssueKind::LatentHint
            };
            let (detail, suggestion) = messages::emoji(&secret.id, score, secret);
            issues.push(LeakIssue {
                kind,
                severity: kind.severity(),
                location: messages::location(t.paragraph(s)),
                detail,
                suggestion,
                secret_id: Some(secret.id.clone()),
                span: [s, e],
                score: None,
                context: None,
            });
            if let Some(sent) = t.sentence_of(t.norm_of(s)) {
                seen.strong.insert((sent, si));
            }
        }
    }

    fn global_issues(
        &self,
        t: &Prepared,
        input: &ReviewInput,
        cfg: &ReviewConfig,
        issues: &mut Vec<LeakIssue>,
    ) {
        let boundaries = |s: usize, e: usize| {
            let (os, oe) = t.to_original(s, e);
            self.dict
                .analyzer()
                .is_some_and(|a| on_token_boundaries(a, &t.original, os, oe))
        };
        let accept = |_: usize, _: &View, _: usize, _: usize| true;
        for hit in self.global.find(t.loose(), &accept, &boundaries) {
            let owner = self.global_owner.get(hit.entry).copied();
            let Some(keyword) = owner.and_then(|g| input.forbidden_keywords_global.get(g)) else {
                continue;
            };
            let msg = messages::global_keyword(keyword.trim());
            let mut issue = Self::issue(
                t,
                IssueKind::ForbiddenKeyword,
                (hit.start, hit.end),
                None,
                msg,
            );
            let [os, oe] = issue.span;
            let n = cfg.keyword_context_chars;
            issue.context = Some(t.original_text(os.saturating_sub(n), oe + n));
            issues.push(issue);
        }
    }

    /// Were forbidden keywords also matched by their readings?
    pub fn readings_checked(&self) -> bool {
        self.keywords.readings_checked()
    }

    /// Does some keyword need the dictionary for its kana spellings?
    pub fn readings_needed(&self) -> bool {
        self.readings_needed
    }

    fn quotation_issues(
        &self,
        t: &Prepared,
        input: &ReviewInput,
        allowed: &Allowed,
        issues: &mut Vec<LeakIssue>,
    ) {
        let dense_at: Vec<usize> = (0..t.fold.chars.len())
            .filter(|&k| !t.fold.chars[k].is_whitespace())
            .collect();
        let dense: Vec<char> = dense_at.iter().map(|&k| t.fold.chars[k]).collect();
        // Allowed text is not part of a quotation: what is left must be long enough itself.
        let runs = self.quotes.find(&dense, |s, e| {
            dense_at[s..e].iter().any(|&k| allowed.mask[k])
        });
        for run in runs {
            let norm = (dense_at[run.start], dense_at[run.end - 1] + 1);
            let len = run.end - run.start;
            let (id, msg) = match run.source {
                Source::Setting(i) => (None, messages::quote_setting(&input.settings[i].key, len)),
                Source::Secret(i) => {
                    let s = &input.secrets[i];
                    (Some(s.id.as_str()), messages::quote_secret(&s.id, len))
                }
            };
            issues.push(Self::issue(t, IssueKind::DirectQuotation, norm, id, msg));
        }
    }
}

pub(super) fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}
