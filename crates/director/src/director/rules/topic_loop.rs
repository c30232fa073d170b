//! `topic_loop` (seed 001 §8, WARN only): the same keyword repeated within the line (as whole
//! tokens outside quotes, never as a substring of a longer word), or present
//! in this line and in each of the previous N turns. Needs context; RETRY attempts never enter
//! the context (seed §9), so a rejected line cannot feed a loop.

use super::super::finding::{Finding, RuleId, Status};
use super::super::{Input, messages};
use crate::text::topics;

/// Memo key of the per-keyword occurrence counts (distinct from lexicon fingerprints).
const REPEAT_COUNTS: u64 = 0x746f_7069_635f_6c70;

pub fn check(input: &Input) -> Vec<Finding> {
    let r = &input.rules.topic_loop;
    let a = input.a;
    let keywords = a.keywords(input.analyzer);
    let mut out = Vec::new();
    if r.repeat_in_line > 1 {
        // How often each keyword occurs depends on the text only: count once per analysis,
        // so re-judging after a rule edit does not search the text again.
        // Whole tokens outside quotes: 京都 inside 東京都 or a quoted 「京都」 is not a repeat.
        let counts = a.memo(REPEAT_COUNTS, || {
            let all = topics::keyword_occurrences(a, input.analyzer);
            keywords
                .iter()
                .map(|w| all.iter().filter(|o| *o == w).count())
                .collect::<Vec<usize>>()
        });
        for (w, &n) in keywords.iter().zip(counts.iter()) {
            if n >= r.repeat_in_line {
                let (m, s) = messages::topic_loop_line(w, n);
                out.push(
                    Finding::new(RuleId::TopicLoop, Status::Warn, m, s).with_evidence(w.clone()),
                );
                break;
            }
        }
    }
    if r.turns > 0 && input.context.len() >= r.turns {
        let recent: Vec<&[String]> = input.context[input.context.len() - r.turns..]
            .iter()
            .map(|t| t.analysis.keywords(input.analyzer))
            .collect();
        let looping = keywords
            .iter()
            .find(|w| recent.iter().all(|k| k.contains(w)));
        if let Some(w) = looping {
            let (m, s) = messages::topic_loop_turns(w, r.turns + 1);
            out.push(Finding::new(RuleId::TopicLoop, Status::Warn, m, s).with_evidence(w.clone()));
        }
    }
    out
}
