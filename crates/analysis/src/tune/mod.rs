//! `kakeai tune` core (pure): the labels in force on each turn, the Director's verdict on it
//! rule by rule, candidate rule changes re-judged per turn, and held-out evidence that a
//! change agrees better with the team's reviewers (folds by run, Cohen's κ, a sign test).
//! Only `source` reads the store; `overlay` writes accepted proposals as rules-file keys.

pub mod eval;
pub mod examples;
pub mod labels;
pub mod overlay;
pub mod rejudge;
pub mod search;
pub mod source;
pub mod words;

#[cfg(test)]
mod tests;

use std::collections::BTreeMap;

use crate::director::ruleset::{PROTECTED, Severity};
use crate::director::{RuleId, Status};

pub use labels::{Label, LabelSource, Provenance, ReviewerMark};

/// One labelled turn: where it comes from, the label in force, and the Director's status per
/// rule under the current rules (the worst finding of each rule that fired).
#[derive(Debug, Clone)]
pub struct Case {
    pub run: String,
    pub turn: u32,
    pub label: Label,
    pub base: BTreeMap<RuleId, Status>,
}

/// A proposed change to one rule, with that rule's status on every case re-judged under it
/// (`statuses[i]` belongs to `cases[i]`; `Status::Pass` when the rule no longer fires).
#[derive(Debug, Clone)]
pub struct Candidate {
    pub rule: RuleId,
    /// The rules-file key it changes (`lines.retry`, `severity.scatter`).
    pub key: String,
    pub before: String,
    pub after: String,
    pub statuses: Vec<Status>,
}

/// A verdict is usable unless it asks for a retry; a judge that did not answer (`Unscored`)
/// or a rewrite (`Modify`) is never counted as usable (fail closed).
pub fn usable(s: Status) -> bool {
    matches!(s, Status::Info | Status::Pass | Status::Warn)
}

/// The verdict on case `i` with the chosen candidates (one per rule) in place of the base.
pub fn verdict(case: &Case, i: usize, chosen: &[&Candidate]) -> Status {
    let mut worst = Status::Pass;
    for (rule, s) in &case.base {
        if !chosen.iter().any(|c| c.rule == *rule) {
            worst = worst.max(*s);
        }
    }
    for c in chosen {
        worst = worst.max(c.statuses[i]);
    }
    worst
}

/// A severity change: the value `[severity]` gets, and the status map.
type SeverityMap = (Severity, fn(Status) -> Status);

/// Severity candidates for every rule that fired on some case: off (its findings become INFO),
/// warn (RETRY → WARN), retry (WARN → RETRY) — exactly what `[severity]` does. A rule that
/// guards the never-leak promise is only ever raised.
pub fn severity_candidates(cases: &[Case]) -> Vec<Candidate> {
    let mut rules: Vec<RuleId> = cases.iter().flat_map(|c| c.base.keys().copied()).collect();
    rules.sort();
    rules.dedup();
    let maps: [SeverityMap; 3] = [
        (Severity::Off, |s| Severity::Off.apply(s)),
        (Severity::Warn, |s| Severity::Warn.apply(s)),
        (Severity::Retry, |s| Severity::Retry.apply(s)),
    ];
    let mut out = Vec::new();
    for rule in rules {
        for (sev, f) in maps {
            if PROTECTED.contains(&rule) && sev != Severity::Retry {
                continue;
            }
            let statuses: Vec<Status> = cases
                .iter()
                .map(|c| f(c.base.get(&rule).copied().unwrap_or(Status::Pass)))
                .collect();
            let changes = cases
                .iter()
                .zip(&statuses)
                .any(|(c, s)| c.base.get(&rule).copied().unwrap_or(Status::Pass) != *s);
            if changes {
                out.push(Candidate {
                    rule,
                    key: format!("severity.{}", rule_key(rule)),
                    before: "as written".into(),
                    after: sev.as_str().into(),
                    statuses,
                });
            }
        }
    }
    out
}

/// The rule's snake_case name as the rules file and reports spell it.
pub fn rule_key(rule: RuleId) -> String {
    serde_json::to_value(rule)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_else(|| format!("{rule:?}"))
}
