//! `topic_loop` (seed 001 §8, WARN only): the same keyword repeated within the line, or present
//! in this line and in each of the previous N turns. Needs context; RETRY attempts never enter
//! the context (seed §9), so a rejected line cannot feed a loop.

use super::super::finding::{Finding, RuleId, Status};
use super::super::{Input, messages};

pub fn check(input: &Input) -> Vec<Finding> {
    let r = &input.rules.topic_loop;
    let a = input.a;
    let keywords = a.keywords(input.analyzer);
    let mut out = Vec::new();
    if r.repeat_in_line > 1 {
        for w in keywords {
            let n = a.text().matches(w.as_str()).count();
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
        let recent = &input.context[input.context.len() - r.turns..];
        let looping = keywords.iter().find(|w| {
            recent
                .iter()
                .all(|t| t.analysis.keywords(input.analyzer).contains(w))
        });
        if let Some(w) = looping {
            let (m, s) = messages::topic_loop_turns(w, r.turns + 1);
            out.push(Finding::new(RuleId::TopicLoop, Status::Warn, m, s).with_evidence(w.clone()));
        }
    }
    out
}
