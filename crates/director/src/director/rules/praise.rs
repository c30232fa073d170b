//! `praise` (seed 001 §5): an evaluation word and an affirmation of the partner in the same
//! sentence → RETRY; an evaluation word alone → WARN; an affirmation of the partner without an
//! evaluation word (あなたの答えは正しい) → WARN, never RETRY. Quoted text is excluded; only characters
//! whose persona forbids praise are judged (あゆ by default).

use super::super::finding::{Finding, RuleId, Status};
use super::super::lexicon::{Cat, Hit};
use super::super::ruleset::PraisePolicy;
use super::super::{Input, messages};
use super::{at, pattern, sentence_index, visible_hits};

pub fn check(input: &Input) -> Vec<Finding> {
    if input.character.praise == PraisePolicy::Allow {
        return Vec::new();
    }
    let in_sentence = |cat: Cat, si: usize| -> Option<Hit> {
        visible_hits(input, cat).find(|h| sentence_index(input, h.start) == Some(si))
    };
    let mut out = Vec::new();
    let mut done: Vec<usize> = Vec::new();
    let words = visible_hits(input, Cat::Evaluation).chain(visible_hits(input, Cat::Affirmation));
    for w in words {
        let Some(si) = sentence_index(input, w.start) else {
            continue;
        };
        if done.contains(&si) {
            continue;
        }
        let eval = in_sentence(Cat::Evaluation, si);
        let target = in_sentence(Cat::PartnerRef, si);
        let f = match (eval, target) {
            // Seed §5.2: an evaluation word and the partner affirmed, in one sentence.
            (Some(e), Some(t)) => {
                let word = pattern(input, e);
                let (m, s) = messages::praise_retry(word, pattern(input, t).trim_end_matches('の'));
                let (a, b) = (e.start.min(t.start), e.end.max(t.end));
                at(
                    input,
                    Finding::new(RuleId::Praise, Status::Retry, m, s),
                    a,
                    b,
                )
                .with_evidence(word)
            }
            // An evaluation word alone (seed §5.2: WARN).
            (Some(e), None) => {
                let word = pattern(input, e);
                let (m, s) = messages::praise_warn(word);
                at(
                    input,
                    Finding::new(RuleId::Praise, Status::Warn, m, s),
                    e.start,
                    e.end,
                )
                .with_evidence(word)
            }
            // An affirmation aimed at the partner without an evaluation word (あなたの答えは正しい)
            // leans towards praise but is not the seed's RETRY.
            (None, Some(t)) if w.cat == Cat::Affirmation => {
                let word = pattern(input, w);
                let (m, s) = messages::praise_warn(word);
                let (a, b) = (w.start.min(t.start), w.end.max(t.end));
                at(
                    input,
                    Finding::new(RuleId::Praise, Status::Warn, m, s),
                    a,
                    b,
                )
                .with_evidence(word)
            }
            // An affirmation word alone (正しい手順) is not praise.
            _ => continue,
        };
        done.push(si);
        out.push(f);
    }
    out
}
