//! Word-list matching shared by Layers 1, 2 and 5: Aho-Corasick over the folded view (and over
//! the plain view for `exact` words), every overlapping hit, latin words only at latin word
//! boundaries, and the "a safe word shadows the hits inside it" rule.

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};

use super::fold::{Folded, fold_str, plain_str};

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
    folded: Option<(AhoCorasick, Vec<usize>)>,
    plain: Option<(AhoCorasick, Vec<usize>)>,
    /// Per entry: must its first / last char sit at a latin word boundary.
    bounds: Vec<(bool, bool)>,
    /// Per entry: the matched form (folded, or NFKC for exact ones).
    forms: Vec<String>,
}

fn is_latin(c: char) -> bool {
    c.is_ascii_alphanumeric()
}

impl WordSet {
    /// Builds the set from `(text, exact)` pairs. A word that folds to nothing is an error
    /// naming it.
    pub fn new<I, S>(words: I) -> Result<WordSet, String>
    where
        I: IntoIterator<Item = (S, bool)>,
        S: AsRef<str>,
    {
        WordSet::build(words, true)
    }

    /// Like `new`, but latin words match anywhere (the caller checks its own boundaries).
    pub fn unbounded<I, S>(words: I) -> Result<WordSet, String>
    where
        I: IntoIterator<Item = (S, bool)>,
        S: AsRef<str>,
    {
        WordSet::build(words, false)
    }

    fn build<I, S>(words: I, bounded: bool) -> Result<WordSet, String>
    where
        I: IntoIterator<Item = (S, bool)>,
        S: AsRef<str>,
    {
        let mut set = WordSet::default();
        let (mut folded, mut plain) = ((Vec::new(), Vec::new()), (Vec::new(), Vec::new()));
        for (i, (text, exact)) in words.into_iter().enumerate() {
            let text = text.as_ref();
            let form = if exact {
                plain_str(text)
            } else {
                fold_str(text)
            };
            let form = form.trim().to_string();
            if form.is_empty() {
                return Err(format!("the word {text:?} is empty after normalisation"));
            }
            set.bounds.push((
                bounded && form.chars().next().is_some_and(is_latin),
                bounded && form.chars().next_back().is_some_and(is_latin),
            ));
            let list = if exact { &mut plain } else { &mut folded };
            list.0.push(form.clone());
            list.1.push(i);
            set.forms.push(form);
        }
        set.folded = build(folded)?;
        set.plain = build(plain)?;
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

    /// Every hit (overlapping ones included), sorted by start then end.
    pub fn find(&self, f: &Folded) -> Vec<WordHit> {
        let mut out = Vec::new();
        if let Some((ac, ids)) = &self.folded {
            self.collect(ac, ids, &f.folded, &|b| f.folded_char_at(b), &mut out);
        }
        if let Some((ac, ids)) = &self.plain {
            self.collect(ac, ids, &f.plain, &|b| f.plain_char_at(b), &mut out);
        }
        out.sort_by_key(|h| (h.start, h.end, h.entry));
        out
    }

    fn collect(
        &self,
        ac: &AhoCorasick,
        ids: &[usize],
        text: &str,
        char_at: &dyn Fn(usize) -> usize,
        out: &mut Vec<WordHit>,
    ) {
        for m in ac.find_overlapping_iter(text) {
            let Some(&entry) = ids.get(m.pattern().as_usize()) else {
                continue;
            };
            let (need_start, need_end) = self.bounds[entry];
            let before = text.get(..m.start()).and_then(|s| s.chars().next_back());
            let after = text.get(m.end()..).and_then(|s| s.chars().next());
            if (need_start && before.is_some_and(is_latin))
                || (need_end && after.is_some_and(is_latin))
            {
                continue;
            }
            out.push(WordHit {
                entry,
                start: char_at(m.start()),
                end: char_at(m.end()),
            });
        }
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
