//! Word-list matching shared by Layers 1, 2 and 5: the words' variants (`variants`: kana,
//! width, long vowels, separators, okurigana, readings) over the folded view, `exact` words over
//! the plain view, every overlapping hit, latin words only at latin word boundaries, and the
//! "a safe word shadows the hits inside it" rule.

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};

use super::fold::{Folded, plain_str};
use super::variants::{Dict, KeywordSet, View, on_token_boundaries};

/// A hit of entry `entry` at chars `[start, end)` of the folded/plain views.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WordHit {
    pub entry: usize,
    pub start: usize,
    pub end: usize,
}

/// A compiled word list. Entry numbers are the order the words were given in.
#[derive(Debug, Clone, Default)]
pub struct WordSet {
    variants: KeywordSet,
    plain: Option<(AhoCorasick, Vec<usize>)>,
    /// Per entry: must its first / last char sit at a latin word boundary.
    bounds: Vec<(bool, bool)>,
    /// Per entry: the matched form (loose, or NFKC for exact ones).
    forms: Vec<String>,
    dict: Dict,
}

fn is_latin(c: char) -> bool {
    c.is_ascii_alphanumeric()
}

impl WordSet {
    /// Builds the set from `(text, exact)` pairs, readings from the installed dictionary. A
    /// word that folds to nothing is an error naming it.
    pub fn new<I, S>(words: I) -> Result<WordSet, String>
    where
        I: IntoIterator<Item = (S, bool)>,
        S: AsRef<str>,
    {
        WordSet::build(words, true, Dict::installed())
    }

    /// Like `new`, with readings from `dict`.
    pub fn with_dict<I, S>(words: I, dict: Dict) -> Result<WordSet, String>
    where
        I: IntoIterator<Item = (S, bool)>,
        S: AsRef<str>,
    {
        WordSet::build(words, true, dict)
    }

    /// Like `new`, but latin words match anywhere (the caller checks its own boundaries).
    pub fn unbounded<I, S>(words: I) -> Result<WordSet, String>
    where
        I: IntoIterator<Item = (S, bool)>,
        S: AsRef<str>,
    {
        WordSet::build(words, false, Dict::none())
    }

    fn build<I, S>(words: I, bounded: bool, dict: Dict) -> Result<WordSet, String>
    where
        I: IntoIterator<Item = (S, bool)>,
        S: AsRef<str>,
    {
        let mut set = WordSet::default();
        let words: Vec<(String, bool)> = words
            .into_iter()
            .map(|(t, e)| (t.as_ref().to_string(), e))
            .collect();
        set.variants = KeywordSet::new(
            words
                .iter()
                .map(|(t, exact)| (!exact).then_some(t.as_str())),
            dict.clone(),
        )?;
        let mut plain = (Vec::new(), Vec::new());
        for (i, (text, exact)) in words.iter().enumerate() {
            let form = if *exact {
                plain_str(text).trim().to_string()
            } else {
                set.variants.forms[i].clone()
            };
            if form.is_empty() {
                return Err(format!("the word {text:?} is empty after normalisation"));
            }
            set.bounds.push((
                bounded && form.chars().next().is_some_and(is_latin),
                bounded && form.chars().next_back().is_some_and(is_latin),
            ));
            if *exact {
                plain.0.push(form.clone());
                plain.1.push(i);
            }
            set.forms.push(form);
        }
        set.plain = build(plain)?;
        set.dict = dict;
        Ok(set)
    }

    pub fn len(&self) -> usize {
        self.forms.len()
    }

    pub fn is_empty(&self) -> bool {
        self.forms.is_empty()
    }

    /// The matched form of an entry.
    pub fn form(&self, entry: usize) -> &str {
        self.forms.get(entry).map(String::as_str).unwrap_or("")
    }

    /// Are kanji words also matched by their kana reading?
    pub fn readings_checked(&self) -> bool {
        self.variants.readings_checked()
    }

    fn latin_ok(&self, entry: usize, before: Option<char>, after: Option<char>) -> bool {
        let (need_start, need_end) = self.bounds.get(entry).copied().unwrap_or_default();
        !((need_start && before.is_some_and(is_latin)) || (need_end && after.is_some_and(is_latin)))
    }

    /// Every hit (overlapping ones included), sorted by start then end.
    pub fn find(&self, f: &Folded) -> Vec<WordHit> {
        let mut out = Vec::new();
        if self.variants.forms.iter().any(|w| !w.is_empty()) {
            let accept = |entry: usize, view: &View, s: usize, e: usize| {
                let (before, after) = view.around(s, e);
                self.latin_ok(entry, before, after)
            };
            let chars = std::cell::OnceCell::new();
            let boundaries = |s: usize, e: usize| match self.dict.analyzer() {
                Some(a) => {
                    let chars = chars.get_or_init(|| f.plain.chars().collect::<Vec<char>>());
                    on_token_boundaries(a, chars, s, e)
                }
                None => false,
            };
            out.extend(
                self.variants
                    .find(f.loose(), &accept, &boundaries)
                    .into_iter()
                    .map(|h| WordHit {
                        entry: h.entry,
                        start: h.start,
                        end: h.end,
                    }),
            );
        }
        if let Some((ac, ids)) = &self.plain {
            for m in ac.find_overlapping_iter(&f.plain) {
                let Some(&entry) = ids.get(m.pattern().as_usize()) else {
                    continue;
                };
                let before = f.plain.get(..m.start()).and_then(|s| s.chars().next_back());
                let after = f.plain.get(m.end()..).and_then(|s| s.chars().next());
                if self.latin_ok(entry, before, after) {
                    out.push(WordHit {
                        entry,
                        start: f.plain_char_at(m.start()),
                        end: f.plain_char_at(m.end()),
                    });
                }
            }
        }
        out.sort_by_key(|h| (h.start, h.end, h.entry));
        out
    }
}

fn build(list: (Vec<String>, Vec<usize>)) -> Result<Option<(AhoCorasick, Vec<usize>)>, String> {
    if list.0.is_empty() {
        return Ok(None);
    }
    let ac = AhoCorasickBuilder::new()
        .match_kind(MatchKind::Standard)
        .build(&list.0)
        .map_err(|e| format!("cannot build the word matcher: {e}"))?;
    Ok(Some((ac, list.1)))
}

/// The first safe span that contains `[start, end)`, if any.
pub fn shadow(safe: &[(usize, usize)], start: usize, end: usize) -> Option<usize> {
    safe.iter().position(|&(s, e)| s <= start && end <= e)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hits(set: &WordSet, text: &str) -> Vec<(usize, usize, usize)> {
        set.find(&Folded::new(text))
            .into_iter()
            .map(|h| (h.entry, h.start, h.end))
            .collect()
    }

    #[test]
    fn folded_and_exact_words() {
        let set = WordSet::new([("バカ", false), ("エロ", true), ("AI", true)]).unwrap();
        assert_eq!(hits(&set, "ﾊﾞｶだなぁ"), vec![(0, 0, 2)]);
        assert_eq!(hits(&set, "ばかだなぁ"), vec![(0, 0, 2)]);
        assert_eq!(hits(&set, "エロい"), vec![(1, 0, 2)]);
        // Exact words keep their kana: 帰ろう in hiragana is not エロ.
        assert!(hits(&set, "もうかえろうよ").is_empty());
        assert_eq!(hits(&set, "ＡＩだよ"), vec![(2, 0, 2)]);
        assert!(hits(&set, "ai shiteru").is_empty());
    }

    #[test]
    fn latin_words_need_boundaries() {
        let set = WordSet::new([("ai", false), ("gpt", false)]).unwrap();
        assert!(hits(&set, "MAILを送った").is_empty());
        assert_eq!(hits(&set, "AIなの？"), vec![(0, 0, 2)]);
        assert_eq!(hits(&set, "GPT-4って"), vec![(1, 0, 3)]);
        assert!(hits(&set, "ChatGPT").is_empty());
    }

    #[test]
    fn overlapping_hits_and_shadows() {
        let set = WordSet::new([("ばか", false), ("ばかり", false)]).unwrap();
        let h = hits(&set, "遊んでばかり");
        assert_eq!(h, vec![(0, 3, 5), (1, 3, 6)]);
        assert_eq!(shadow(&[(3, 6)], 3, 5), Some(0));
        assert_eq!(shadow(&[(4, 6)], 3, 5), None);
        assert!(WordSet::new([(" ", false)]).is_err());
    }
}
