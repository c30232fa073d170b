//! One pass over a message for every word list the detectors search (issue 26 §1, speed).
//!
//! The markers, the predicates, the topics, the company and school forms and the naming cues
//! were seven automata, seven passes over every message. They are one automaton now, searched
//! once for every overlapping match; each list's matches are then picked exactly as its own
//! automaton picked them (leftmost-longest, or the earliest end for the standard lists), so
//! every detector sees what it saw before. `tests` checks that against aho-corasick itself.

use aho_corasick::{AhoCorasick, AhoCorasickKind, BuildError, MatchKind};

/// How a list's matches are chosen among the overlapping ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Pick {
    /// Non-overlapping; the leftmost start, then the longest (`MatchKind::LeftmostLongest`).
    LeftmostLongest,
    /// Non-overlapping; the earliest end, then the longest (`MatchKind::Standard`).
    Standard,
}

/// One match of one list: the pattern's index in its list and byte offsets in the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Hit {
    pub pattern: usize,
    pub start: usize,
    pub end: usize,
}

/// A list registered with a [`Builder`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct ListId(usize);

/// Collects the lists before the automaton is built.
#[derive(Default)]
pub(super) struct Builder {
    patterns: Vec<String>,
    /// First pattern id and pick of each list.
    lists: Vec<(usize, Pick)>,
}

impl Builder {
    /// Adds a list; its patterns keep their order (a hit's `pattern` indexes them).
    pub fn list<I, P>(&mut self, patterns: I, pick: Pick) -> ListId
    where
        I: IntoIterator<Item = P>,
        P: AsRef<str>,
    {
        self.lists.push((self.patterns.len(), pick));
        self.patterns
            .extend(patterns.into_iter().map(|p| p.as_ref().to_string()));
        ListId(self.lists.len() - 1)
    }

    pub fn build(self) -> Result<Lists, BuildError> {
        let ac = AhoCorasick::builder()
            .match_kind(MatchKind::Standard)
            .kind(Some(AhoCorasickKind::DFA))
            .build(&self.patterns)?;
        let mut owner = vec![0u32; self.patterns.len()];
        for (i, &(first, _)) in self.lists.iter().enumerate() {
            let end = self.lists.get(i + 1).map_or(owner.len(), |l| l.0);
            owner[first..end].fill(i as u32);
        }
        Ok(Lists {
            ac,
            lists: self.lists,
            owner,
        })
    }
}

/// Every list's patterns in one automaton.
pub(super) struct Lists {
    ac: AhoCorasick,
    lists: Vec<(usize, Pick)>,
    owner: Vec<u32>,
}

/// The picked matches of every list in one text.
pub(super) struct Hits {
    hits: Vec<Hit>,
    /// `hits[ranges[list].0..ranges[list].1]` are the list's, in text order.
    ranges: Vec<(usize, usize)>,
}

impl Hits {
    pub fn of(&self, list: ListId) -> &[Hit] {
        let (s, e) = self.ranges[list.0];
        &self.hits[s..e]
    }
}

impl Lists {
    /// One overlapping search, then each list's non-overlapping pick.
    pub fn scan(&self, text: &str) -> Hits {
        let mut raw: Vec<(u32, (usize, usize, usize), Hit)> = Vec::new();
        for m in self.ac.find_overlapping_iter(text) {
            let id = m.pattern().as_usize();
            let list = self.owner[id];
            let (first, pick) = self.lists[list as usize];
            let hit = Hit {
                pattern: id - first,
                start: m.start(),
                end: m.end(),
            };
            let key = match pick {
                Pick::LeftmostLongest => (hit.start, usize::MAX - hit.end, hit.pattern),
                Pick::Standard => (hit.end, hit.start, hit.pattern),
            };
            raw.push((list, key, hit));
        }
        raw.sort_unstable_by_key(|&(list, key, _)| (list, key));
        let mut hits = Vec::with_capacity(raw.len());
        let mut ranges = vec![(0, 0); self.lists.len()];
        let mut i = 0;
        while i < raw.len() {
            let list = raw[i].0;
            let start = hits.len();
            let mut last_end = 0;
            while i < raw.len() && raw[i].0 == list {
                let h = raw[i].2;
                if h.start >= last_end {
                    hits.push(h);
                    last_end = h.end;
                }
                i += 1;
            }
            ranges[list as usize] = (start, hits.len());
        }
        Hits { hits, ranges }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Random lists over a small alphabet (so matches overlap, nest and repeat, duplicates
    /// included) and random texts: every list's picked hits equal what aho-corasick's own
    /// automaton for that list reports, with that list's match kind.
    #[test]
    fn each_list_sees_what_its_own_automaton_sees() {
        const ALPHABET: &[&str] = &["あ", "い", "社", "a", "ー", "と"];
        let mut rng = fastrand::Rng::with_seed(26);
        let word = |rng: &mut fastrand::Rng, max: usize| -> String {
            (0..rng.usize(1..=max))
                .map(|_| ALPHABET[rng.usize(..ALPHABET.len())])
                .collect()
        };
        let mut compared = 0;
        for _ in 0..300 {
            let mut b = Builder::default();
            let mut own = Vec::new();
            for _ in 0..rng.usize(1..=4) {
                let pats: Vec<String> = (0..rng.usize(1..=6)).map(|_| word(&mut rng, 4)).collect();
                let pick = if rng.bool() {
                    Pick::LeftmostLongest
                } else {
                    Pick::Standard
                };
                let kind = match pick {
                    Pick::LeftmostLongest => MatchKind::LeftmostLongest,
                    Pick::Standard => MatchKind::Standard,
                };
                let ac = AhoCorasick::builder()
                    .match_kind(kind)
                    .build(&pats)
                    .unwrap();
                own.push((b.list(&pats, pick), ac));
            }
            let lists = b.build().unwrap();
            for _ in 0..10 {
                let text = word(&mut rng, 24);
                let hits = lists.scan(&text);
                for (id, ac) in &own {
                    let want: Vec<Hit> = ac
                        .find_iter(&text)
                        .map(|m| Hit {
                            pattern: m.pattern().as_usize(),
                            start: m.start(),
                            end: m.end(),
                        })
                        .collect();
                    assert_eq!(hits.of(*id), want.as_slice(), "text {text:?}");
                    compared += want.len();
                }
            }
        }
        assert!(
            compared > 1000,
            "the generated texts hold matches: {compared}"
        );
    }
}
