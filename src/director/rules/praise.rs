//! `praise` (seed 001 §5): an evaluation word and an affirmation of the partner in the same
//! sentence → RETRY; an evaluation word alone → WARN. Quoted text is excluded; only characters
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
    let evals = visible_hits(input, Cat::Evaluation).chain(visible_hits(input, Cat::Affirmation));
    for e in evals {
        let Some(si) = sentence_index(input, e.start) else {
            continue;
        };
        if done.contains(&si) {
            continue;
        }
        let target = in_sentence(Cat::PartnerRef, si);
        let word = pattern(input, e);
        let f = match (target, e.cat) {
            (Some(t), _) => {
                let (m, s) = messages::praise_retry(word, pattern(input, t).trim_end_matches('の'));
                let (a, b) = (e.start.min(t.start), e.end.max(t.end));
                at(
                    input,
                    Finding::new(RuleId::Praise, Status::Retry, m, s),
                    a,
                    b,
                )
            }
            // An affirmation (正しい, 素敵) is only praise when aimed at the partner.
            (None, Cat::Affirmation) => continue,
            (None, _) => {
                let (m, s) = messages::praise_warn(word);
                at(
                    input,
                    Finding::new(RuleId::Praise, Status::Warn, m, s),
                    e.start,
                    e.end,
                )
            }
        };
        done.push(si);
        out.push(f.with_evidence(word));
    }
    out
}
