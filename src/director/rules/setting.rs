//! `setting` (seed 001 §3 設定整合性): phrases implying the sisters live apart → RETRY.

use super::super::finding::{Finding, RuleId, Status};
use super::super::lexicon::Cat;
use super::super::{Input, messages};
use super::{at, hits, pattern};

pub fn check(input: &Input) -> Vec<Finding> {
    hits(input, Cat::Setting)
        .map(|h| {
            let phrase = pattern(input, h);
            let (m, s) = messages::setting(phrase);
            at(
                input,
                Finding::new(RuleId::Setting, Status::Retry, m, s),
                h.start,
                h.end,
            )
            .with_evidence(phrase)
        })
        .collect()
}
