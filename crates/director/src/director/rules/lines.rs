//! `lines` (seed 001 §3 出力形式): ≥ retry non-empty lines RETRY, ≥ warn WARN.

use super::super::finding::{Finding, RuleId, Status};
use super::super::{Input, messages};

pub fn check(input: &Input) -> Vec<Finding> {
    let r = &input.rules.lines;
    let n = input.a.lines;
    let status = if n >= r.retry {
        Status::Retry
    } else if n >= r.warn {
        Status::Warn
    } else {
        return Vec::new();
    };
    let (m, s) = messages::lines(n, status == Status::Retry, r.warn.saturating_sub(1));
    vec![Finding::new(RuleId::Lines, status, m, s).with_evidence(n.to_string())]
}
