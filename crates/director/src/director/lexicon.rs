//! Every literal the rules look for, compiled per speaker into one Aho–Corasick automaton so a
//! line is scanned once, whatever the number of markers.

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, AhoCorasickKind, MatchKind};

use super::ruleset::{Character, RuleData, StyleRule};
use crate::text::Analysis;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cat {
    ToneEnding,
    ToneVocab,
    PoliteEnding,
    ViolationEnding,
    ViolationWord,
    Forbidden,
    Evaluation,
    PartnerRef,
    Affirmation,
    Setting,
    ContraAdverb,
    ContraNegation,
    Leak,
    SpeakerLabel,
}

/// One occurrence of a lexicon entry, in normalised char offsets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hit {
    pub cat: Cat,
    /// Index into the list the pattern came from.
    pub idx: u16,
    pub start: usize,
    pub end: usize,
}

/// The longest word (marker, ending, forbidden word …) a rules file may hold, in characters.
pub const MAX_WORD_CHARS: usize = 100;

pub struct Lexicon {
    /// Identifies the vocabulary: equal fingerprints scan identically.
    pub fingerprint: u64,
    ac: Option<AhoCorasick>,
    tags: Vec<(Cat, u16)>,
    pub patterns: Vec<String>,
}

impl std::fmt::Debug for Lexicon {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Lexicon({} patterns)", self.patterns.len())
    }
}

impl Lexicon {
    pub fn compile(data: &RuleData, c: &Character, partner: Option<&Character>) -> Lexicon {
        let mut patterns: Vec<String> = Vec::new();
        let mut tags = Vec::new();
        let mut add = |cat: Cat, list: &[String]| {
            for (i, p) in list.iter().enumerate() {
                if !p.is_empty() {
                    patterns.push(p.clone());
                    tags.push((cat, i as u16));
                }
            }
        };
        add(Cat::ToneEnding, &c.tone.endings);
        add(Cat::ToneVocab, &c.tone.vocab);
        if let StyleRule::Polite { endings, .. } = &c.tone.style {
            add(Cat::PoliteEnding, endings);
        }
        add(Cat::ViolationEnding, &c.tone.violations.endings);
        add(Cat::ViolationWord, &c.tone.violations.words);
        let forbidden: Vec<String> = c.forbidden_words.iter().map(|f| f.word.clone()).collect();
        add(Cat::Forbidden, &forbidden);
        add(Cat::Evaluation, &data.praise.evaluation_words);
        let mut refs = data.praise.partner_refs.clone();
        // 姉様の考え / やなの答え point at the partner; a bare vocative (姉様、…) does not.
        refs.extend(c.address_partner.iter().map(|a| format!("{a}の")));
        if let Some(p) = partner {
            refs.push(format!("{}の", p.display_name));
        }
        add(Cat::PartnerRef, &refs);
        add(Cat::Affirmation, &data.praise.affirmation_words);
        add(Cat::Setting, &data.setting.phrases);
        add(Cat::ContraAdverb, &data.contradiction.adverbs);
        add(Cat::ContraNegation, &data.contradiction.negations);
        add(Cat::Leak, &data.prompt_leak.markers);
        if data.prompt_leak.speaker_labels {
            let labels: Vec<String> = data
                .characters
                .values()
                .flat_map(|ch| {
                    [
                        format!("{}：", ch.display_name),
                        format!("{}:", ch.display_name),
                    ]
                })
                .collect();
            add(Cat::SpeakerLabel, &labels);
        }
        // The contiguous NFA: built in time linear in the vocabulary. A full DFA scans a little
        // faster but its construction is superlinear on long, repetitive words (64 words of
        // 100 × "a": 2.3 s; one of 2,048: minutes), and a rules file may come from anyone.
        // Words are also bounded by MAX_WORD_CHARS when the rules are loaded.
        let ac = AhoCorasickBuilder::new()
            .match_kind(MatchKind::Standard)
            .kind(Some(AhoCorasickKind::ContiguousNFA))
            .build(&patterns)
            .ok();
        let mut h = std::collections::hash_map::DefaultHasher::new();
        std::hash::Hash::hash(&patterns, &mut h);
        for (cat, idx) in &tags {
            std::hash::Hash::hash(&(*cat as u8, *idx), &mut h);
        }
        let fingerprint = std::hash::Hasher::finish(&h);
        Lexicon {
            fingerprint,
            ac,
            tags,
            patterns,
        }
    }

    /// The hits for this vocabulary, memoised in the analysis.
    pub fn hits(&self, a: &Analysis) -> std::sync::Arc<Vec<Hit>> {
        a.memo(self.fingerprint, || self.scan(a))
    }

    /// All (overlapping) hits in the normalised text, in order of end position.
    pub fn scan(&self, a: &Analysis) -> Vec<Hit> {
        let Some(ac) = &self.ac else {
            return Vec::new();
        };
        let mut hits = Vec::new();
        for m in ac.find_overlapping_iter(a.text()) {
            let (cat, idx) = self.tags[m.pattern().as_usize()];
            let start = a.norm.char_at_byte(m.start());
            let end = a.norm.char_at_byte(m.end());
            hits.push(Hit {
                cat,
                idx,
                start,
                end,
            });
        }
        hits
    }
}

#[cfg(test)]
mod build_tests {
    /// Vocabulary that made the old DFA build crawl for minutes (long, repetitive words) builds
    /// at once; the times are printed, not asserted (benches/director measures).
    #[test]
    fn matchers_build_in_time_linear_in_their_input() {
        let build = |words: usize, len: usize| {
            let r = crate::director::RuleSet::builtin().unwrap();
            let mut data = (*r.data).clone();
            for i in 0..words {
                let c = char::from(b'a' + (i % 26) as u8);
                data.praise.evaluation_words.push(c.to_string().repeat(len));
            }
            let r = crate::director::RuleSet::from_data(data).unwrap();
            let t = std::time::Instant::now();
            assert!(r.lexicon("yana").is_some());
            t.elapsed()
        };
        let small = build(64, super::MAX_WORD_CHARS);
        let big = build(512, super::MAX_WORD_CHARS);
        eprintln!("64 words of 100 chars: {small:?}; 512: {big:?}");
    }
}
