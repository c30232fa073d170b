//! `scatter` (seed 001 §3, §6): ≥ 4 sentences and ≥ 3 topics → RETRY; 3 sentences or
//! 2 topics → WARN. Also returns the topic count for the verdict.

use super::super::finding::{Finding, RuleId, Status};
use super::super::{Input, messages};

pub fn check(input: &Input) -> (Vec<Finding>, usize) {
    let r = &input.rules.scatter;
    let sentences = input.a.sentences.len();
    let topics = input.a.topic_count(input.analyzer);
    let status = if sentences >= r.retry_sentences && topics >= r.retry_topics {
        Status::Retry
    } else if sentences >= r.warn_sentences || topics >= r.warn_topics {
        Status::Warn
    } else {
        return (Vec::new(), topics);
    };
    let (m, s) = messages::scatter(sentences, topics, status == Status::Retry);
    let heads: Vec<&str> = input
        .a
        .topics(input.analyzer)
        .iter()
        .map(|t| t.head.as_str())
        .collect();
    let f = Finding::new(RuleId::Scatter, status, m, s).with_evidence(format!(
        "sentences={sentences} topics=[{}]",
        heads.join(",")
    ));
    (vec![f], topics)
}
