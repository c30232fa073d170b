//! `Analysis`: everything the rules need to know about one text, computed once and cached by
//! text hash so re-judging after a rule edit never re-normalises or re-tokenises.
//!
//! Cheap parts (normalisation, mask, sentences, lines) are computed eagerly; morphological
//! parts (topics, keywords) lazily, only when a rule asks, because the analyzer is the slow part.

use std::any::Any;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex, OnceLock};

use super::analyzer::{Analyzer, Morpheme};
use super::chars::closing_of;
use super::normalize::{Normalized, normalize};
use super::sentences::{Sentence, split};
use super::topics::{self, Topic};

#[derive(Debug)]
pub struct Analysis {
    pub original: String,
    pub norm: Normalized,
    pub chars: Vec<char>,
    pub sentences: Vec<Sentence>,
    pub lines: usize,
    /// The utterance was wholly wrapped in 「…」 (seed 001 §8) and has been unwrapped.
    pub script_format: bool,
    topics: OnceLock<(Vec<Topic>, usize)>,
    keywords: OnceLock<Vec<String>>,
    /// The whole normalised text tokenised, for rules that read lemmas or word boundaries.
    morphemes: OnceLock<Vec<Morpheme>>,
    /// Derived data keyed by its producer's fingerprint (e.g. lexicon hits of one ruleset
    /// vocabulary), so a rule edit that keeps the vocabulary re-runs rules only.
    memo: Mutex<Vec<(u64, Arc<dyn Any + Send + Sync>)>>,
}

impl Analysis {
    pub fn new(original: &str) -> Analysis {
        let skip = script_wrapping(original);
        let norm = normalize(original, &skip);
        let chars: Vec<char> = norm.text.chars().collect();
        let (sentences, lines) = split(&chars);
        Analysis {
            original: original.to_string(),
            norm,
            chars,
            sentences,
            lines,
            script_format: !skip.is_empty(),
            topics: OnceLock::new(),
            keywords: OnceLock::new(),
            morphemes: OnceLock::new(),
            memo: Mutex::new(Vec::new()),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.chars.iter().all(|c| c.is_whitespace())
    }

    pub fn text(&self) -> &str {
        &self.norm.text
    }

    /// Topic boundaries (seed 001 §6.2), computed on first use.
    pub fn topics(&self, analyzer: &dyn Analyzer) -> &[Topic] {
        &self.topics_and_count(analyzer).0
    }

    /// Number of distinct topics.
    pub fn topic_count(&self, analyzer: &dyn Analyzer) -> usize {
        self.topics_and_count(analyzer).1
    }

    fn topics_and_count(&self, analyzer: &dyn Analyzer) -> &(Vec<Topic>, usize) {
        self.topics.get_or_init(|| {
            let t = topics::find_topics(self, analyzer);
            let mut heads: Vec<&str> = t.iter().map(|t| t.head.as_str()).collect();
            heads.sort_unstable();
            heads.dedup();
            let n = heads.len();
            (t, n)
        })
    }

    /// Returns the memoised value for `key`, computing it with `make` the first time.
    /// `make` runs without the lock held, so it may memoise other values of this analysis;
    /// when two threads race, the first value stored wins.
    pub fn memo<T: Any + Send + Sync>(&self, key: u64, make: impl FnOnce() -> T) -> Arc<T> {
        let find = |memo: &[(u64, Arc<dyn Any + Send + Sync>)]| {
            memo.iter()
                .find(|(k, _)| *k == key)
                .and_then(|(_, v)| Arc::clone(v).downcast::<T>().ok())
        };
        if let Some(v) = find(&self.memo.lock().unwrap_or_else(|p| p.into_inner())) {
            return v;
        }
        let v = Arc::new(make());
        let mut memo = self.memo.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(first) = find(&memo) {
            return first;
        }
        memo.retain(|(k, _)| *k != key);
        memo.push((key, v.clone() as Arc<dyn Any + Send + Sync>));
        v
    }

    /// The normalised text's morphemes (char offsets into it), tokenised on first use only:
    /// rules ask for them after a cheap string test, so most lines are never tokenised whole.
    pub fn morphemes(&self, analyzer: &dyn Analyzer) -> &[Morpheme] {
        self.morphemes
            .get_or_init(|| analyzer.tokenize(self.text()))
    }

    /// Content keywords (nouns of 2+ chars), computed on first use.
    pub fn keywords(&self, analyzer: &dyn Analyzer) -> &[String] {
        self.keywords
            .get_or_init(|| topics::find_keywords(self, analyzer))
    }

    /// Finds every occurrence of `needle` in the normalised text; yields char ranges.
    pub fn find_all<'a>(&'a self, needle: &'a str) -> impl Iterator<Item = (usize, usize)> + 'a {
        let len = needle.chars().count();
        self.norm.text.match_indices(needle).map(move |(b, _)| {
            let s = self.norm.char_at_byte(b);
            (s, s + len)
        })
    }

    /// First occurrence of `needle` outside quotes/parentheses.
    pub fn find_unmasked(&self, needle: &str) -> Option<(usize, usize)> {
        self.find_all(needle)
            .find(|&(s, e)| !self.norm.any_masked(s, e))
    }

    /// Maps a normalised char range to an original char range.
    pub fn span(&self, start: usize, end: usize) -> std::ops::Range<usize> {
        self.norm.to_original(start, end)
    }
}

/// Longest speaker label (やな：) unwrapped with a script-format quote.
const MAX_LABEL: usize = 10;

/// A speaker label at `i` (a short name and ： or :, then optional spaces) directly before a
/// 「: returns where the 「 starts.
fn label_before_quote(chars: &[char], i: usize) -> Option<usize> {
    let name = chars[i..]
        .iter()
        .take(MAX_LABEL + 1)
        .take_while(|c| c.is_alphanumeric() || **c == 'ー')
        .count();
    if name == 0 || name > MAX_LABEL {
        return None;
    }
    let colon = i + name;
    if !matches!(chars.get(colon), Some('：' | ':')) {
        return None;
    }
    let mut q = colon + 1;
    while chars.get(q).is_some_and(|c| super::chars::is_hspace(*c)) {
        q += 1;
    }
    (chars.get(q) == Some(&'「')).then_some(q)
}

/// If the text, ignoring whitespace and parenthesised stage directions, consists only of
/// 「…」 blocks — the first one optionally behind a speaker label (やな：「…」, seed 001 §8) —
/// returns the original char ranges of the label and brackets so they can be skipped.
fn script_wrapping(text: &str) -> Vec<(usize, usize)> {
    let chars: Vec<char> = text.chars().collect();
    let mut skip = Vec::new();
    let mut i = 0;
    let mut quotes = 0;
    let lead = chars.iter().take_while(|c| c.is_whitespace()).count();
    if let Some(q) = (lead < chars.len())
        .then(|| label_before_quote(&chars, lead))
        .flatten()
    {
        skip.push((lead, q));
        i = q;
    }
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        let Some(close) = closing_of(c) else {
            return Vec::new();
        };
        // find the matching close at the same nesting level
        let mut depth = 0usize;
        let mut j = i;
        let mut found = None;
        while j < chars.len() {
            if chars[j] == c {
                depth += 1;
            } else if chars[j] == close {
                depth -= 1;
                if depth == 0 {
                    found = Some(j);
                    break;
                }
            } else if chars[j] == '\n' && c != '「' {
                break;
            }
            j += 1;
        }
        let Some(end) = found else {
            return Vec::new();
        };
        if c == '「' {
            quotes += 1;
            skip.push((i, i + 1));
            skip.push((end, end + 1));
        } else if c == '『' {
            return Vec::new();
        }
        i = end + 1;
    }
    if quotes == 0 { Vec::new() } else { skip }
}

/// Analyses cached by text hash (the text itself is compared too, so a collision is harmless).
#[derive(Default)]
pub struct AnalysisCache {
    map: HashMap<u64, Vec<Arc<Analysis>>>,
    hits: u64,
    misses: u64,
}

impl AnalysisCache {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn get_or_analyze(&mut self, text: &str) -> Arc<Analysis> {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        text.hash(&mut h);
        let key = h.finish();
        let bucket = self.map.entry(key).or_default();
        if let Some(a) = bucket.iter().find(|a| a.original == text) {
            self.hits += 1;
            return Arc::clone(a);
        }
        self.misses += 1;
        let a = Arc::new(Analysis::new(text));
        bucket.push(Arc::clone(&a));
        a
    }

    pub fn len(&self) -> usize {
        self.map.values().map(Vec::len).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// (hits, misses) since creation.
    pub fn stats(&self) -> (u64, u64) {
        (self.hits, self.misses)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unwraps_script_format() {
        let a = Analysis::new("「わ！すっごいね」");
        assert!(a.script_format);
        assert_eq!(a.text(), "わ！すっごいね");
        assert_eq!(a.span(0, 1), 1..2);
        let b = Analysis::new("（頷いて）「そうだね」");
        assert!(b.script_format);
        assert_eq!(b.text(), "（頷いて）そうだね");
        let c = Analysis::new("「ねえ」って言ったよ");
        assert!(!c.script_format);
    }

    #[test]
    fn unwraps_a_labelled_script_line() {
        let a = Analysis::new("やな：「わ！すっごい景色だね！」");
        assert!(a.script_format);
        assert_eq!(a.text(), "わ！すっごい景色だね！");
        assert_eq!(a.span(0, 1), 4..5);
        let b = Analysis::new("  あゆ: 「そうですね」（頷く）");
        assert!(b.script_format);
        assert_eq!(b.text(), " そうですね（頷く）");
        // Not a script: a label with no quote, a second labelled line, a label mid-line.
        for t in [
            "やな：わ！すごいね",
            "やな：「わ！」\nあゆ：「はい」",
            "ねえ、やな：「わ！」",
            "とても長い名前のキャラクター：「はい」",
        ] {
            assert!(!Analysis::new(t).script_format, "{t}");
        }
    }

    #[test]
    fn cache_reuses_analyses() {
        let mut cache = AnalysisCache::new();
        let a = cache.get_or_analyze("そっか。");
        let b = cache.get_or_analyze("そっか。");
        assert!(Arc::ptr_eq(&a, &b));
        assert_eq!(cache.stats(), (1, 1));
    }
}
