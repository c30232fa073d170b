//! `early_topic_shift` (seed 001 §8, WARN only): the line shares no keyword with the previous
//! turn, brings its own, and the previous turn's topic had been discussed for fewer than
//! `min_turns` turns — the partner's topic was dropped before it was explored.

use super::super::finding::{Finding, RuleId, Status};
use super::super::{Input, messages};

pub fn check(input: &Input) -> Vec<Finding> {
    let min = input.rules.early_topic_shift.min_turns;
    let an = input.analyzer;
    let Some(last) = input.context.last() else {
        return Vec::new();
    };
    let names = names(input);
    let topical = |ws: &[String]| -> Vec<String> {
        ws.iter()
            .filter(|w| !names.contains(&w.as_str()))
            .cloned()
            .collect()
    };
    let mine = topical(input.a.keywords(an));
    let theirs = topical(last.analysis.keywords(an));
    if min == 0 || mine.is_empty() || theirs.is_empty() || mine.iter().any(|w| theirs.contains(w)) {
        return Vec::new();
    }
    // How many turns, ending with the last one, have stayed on its topic.
    // Only whether it reaches `min_turns` matters: stop looking there (long runs stay linear).
    let mut depth = 1;
    for t in input.context.iter().rev().skip(1).take(min) {
        if topical(t.analysis.keywords(an))
            .iter()
            .any(|w| theirs.contains(w))
        {
            depth += 1;
        } else {
            break;
        }
    }
    if depth >= min {
        return Vec::new();
    }
    let (m, s) = messages::early_shift(&theirs[0], &mine[0]);
    vec![
        Finding::new(RuleId::EarlyTopicShift, Status::Warn, m, s)
            .with_evidence(format!("{}→{}", theirs[0], mine[0])),
    ]
}

/// The sisters' names and forms of address (あゆ, 姉様 …): calling each other is no topic.
fn names<'a>(input: &'a Input) -> Vec<&'a str> {
    input
        .rules
        .characters
        .values()
        .flat_map(|c| {
            std::iter::once(c.display_name.as_str())
                .chain(c.aliases.iter().map(String::as_str))
                .chain(c.address_partner.iter().map(String::as_str))
        })
        .collect()
}
