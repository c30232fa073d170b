//! `tone` (seed 001 §4): tone_score = marker_hit + vocab_hit + style_hit; 0 RETRY, 1 WARN,
//! ≥ 2 pass. In `violations` mode only forbidden endings/words count and neutral lines pass.
//! Quoted text is excluded. An ending counts at a sentence end or before a quotative or
//! conjunctive particle (雨かなって思った), so ますます or 静かな never count as ます or かな.
//! Violation endings and polite-style endings stay strictly sentence-final.

use super::super::finding::{Finding, RuleId, Status, ToneScore};
use super::super::lexicon::Cat;
use super::super::ruleset::{StyleRule, ToneMode};
use super::super::{Input, messages};
use super::{at, ends_phrase, is_sentence_final, pattern, visible_hits};

pub fn score(input: &Input) -> ToneScore {
    let tone = &input.character.tone;
    let a = input.a;
    let marker = visible_hits(input, Cat::ToneEnding).any(|h| {
        tone.endings
            .get(h.idx as usize)
            .is_some_and(|p| ends_phrase(input, h, p))
    });
    let vocab = visible_hits(input, Cat::ToneVocab).next().is_some();
    let style = match &tone.style {
        StyleRule::Exclaim { max_sentences } => {
            a.sentences.len() <= *max_sentences
                && a.chars
                    .iter()
                    .zip(&a.norm.masked)
                    .any(|(&c, &m)| !m && (c == '！' || c == '？'))
        }
        StyleRule::Polite { min_count, endings } => {
            let mut finals: Vec<usize> = visible_hits(input, Cat::PoliteEnding)
                .filter(|h| {
                    endings
                        .get(h.idx as usize)
                        .is_some_and(|p| is_sentence_final(input, *h, p))
                })
                .filter_map(|h| super::sentence_index(input, h.start))
                .collect();
            finals.dedup(); // でした and した… count once per sentence
            // Seed 001 §4.4 asks for two polite sentence ends; a one-sentence line cannot have
            // two, so there every sentence ending politely is enough (an all-です・ます line
            // is never "no あゆ style").
            finals.len() >= (*min_count).min(a.sentences.len().max(1))
        }
    };
    let (marker, vocab, style) = (marker as u8, vocab as u8, style as u8);
    ToneScore {
        marker,
        vocab,
        style,
        score: marker + vocab + style,
    }
}

pub fn check(input: &Input) -> (Vec<Finding>, ToneScore) {
    let t = score(input);
    let c = input.character;
    let findings = match input.rules.tone_mode {
        ToneMode::Markers => {
            let status = match t.score {
                0 => Status::Retry,
                1 => Status::Warn,
                _ => return (Vec::new(), t),
            };
            let m = messages::tone(&c.display_name, &t, status == Status::Retry);
            vec![
                Finding::new(RuleId::Tone, status, m, c.tone.hint.clone())
                    .with_evidence(format!("m{}v{}s{}", t.marker, t.vocab, t.style)),
            ]
        }
        ToneMode::Violations => violations(input),
    };
    (findings, t)
}

fn violations(input: &Input) -> Vec<Finding> {
    let c = input.character;
    let v = &c.tone.violations;
    let mut out = Vec::new();
    let mut ends: Vec<usize> = Vec::new();
    let mut endings: Vec<_> = visible_hits(input, Cat::ViolationEnding).collect();
    // ございます and ます end at the same place: report the longest once.
    endings.sort_by_key(|h| (h.end, std::cmp::Reverse(h.end - h.start)));
    for h in endings {
        let Some(p) = v.endings.get(h.idx as usize) else {
            continue;
        };
        if ends.contains(&h.end) || !is_sentence_final(input, h, p) {
            continue;
        }
        ends.push(h.end);
        let (m, s) = messages::tone_violation(&c.display_name, p, true);
        out.push(
            at(
                input,
                Finding::new(RuleId::Tone, Status::Retry, m, s),
                h.start,
                h.end,
            )
            .with_evidence(p.as_str()),
        );
    }
    for h in visible_hits(input, Cat::ViolationWord) {
        let w = pattern(input, h);
        let (m, s) = messages::tone_violation(&c.display_name, w, false);
        out.push(
            at(
                input,
                Finding::new(RuleId::Tone, Status::Retry, m, s),
                h.start,
                h.end,
            )
            .with_evidence(w),
        );
    }
    if v.max_exclamations > 0 {
        let n = input
            .a
            .chars
            .iter()
            .zip(&input.a.norm.masked)
            .filter(|(c, m)| **c == '！' && !**m)
            .count();
        if n > v.max_exclamations {
            let (m, s) = messages::too_many_exclamations(&c.display_name, n, v.max_exclamations);
            out.push(Finding::new(RuleId::Tone, Status::Warn, m, s).with_evidence(n.to_string()));
        }
    }
    out
}
