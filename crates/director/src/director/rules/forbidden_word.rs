//! `forbidden_word`: per-character words that must never appear (やな never says 姉様) → RETRY.

use super::super::finding::{Finding, RuleId, Status};
use super::super::lexicon::Cat;
use super::super::{Input, messages};
use super::{at, hits, pattern};

pub fn check(input: &Input) -> Vec<Finding> {
    let words = &input.character.forbidden_words;
    hits(input, Cat::Forbidden)
        .filter_map(|h| {
            let w = words.get(h.idx as usize)?;
            let (m, s) = messages::forbidden(&w.word, &w.reason);
            Some(
                at(
                    input,
                    Finding::new(RuleId::ForbiddenWord, Status::Retry, m, s),
                    h.start,
                    h.end,
                )
                .with_evidence(pattern(input, h)),
            )
        })
        .collect()
}
