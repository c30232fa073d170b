//! The search: coordinate-wise greedy over candidate changes (at most one per rule) on the
//! training folds, judged on the held-out fold; the proposals come from all labels only when
//! the held-out gain holds up (mean gain above its spread across folds and a sign test over
//! the held-out turns the changes flipped).

use std::collections::BTreeMap;

use serde::Serialize;

use super::eval::{PrecisionRecall, folds_by_run, kappa, mean_sd, precision_recall, sign_test};
use super::{Candidate, Case, rule_key, usable, verdict};
use crate::director::{RuleId, Status};

/// Search settings (tunables: `assets/rules/tune.toml`).
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    pub folds: usize,
    /// A step must raise training κ by at least this much …
    pub min_gain: f64,
    /// … and flip at least this many more training turns right than wrong.
    pub min_net: usize,
    pub max_steps: usize,
    /// The held-out sign test must reach this (one-sided).
    pub alpha: f64,
    pub min_labels: usize,
    pub grid: Grid,
    /// The judge's few-shot examples (`tune --judge`).
    #[serde(default)]
    pub examples: super::examples::ExampleSettings,
}

/// The threshold values tried (`[grid]` of `assets/rules/tune.toml`).
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Grid {
    pub lines_retry: Vec<usize>,
    pub scatter_retry_sentences: Vec<usize>,
    pub scatter_retry_topics: Vec<usize>,
    /// The judge's cut-offs: RETRY below, PASS from (pairs with pass_from ≥ retry_below).
    #[serde(default)]
    pub judge_retry_below: Vec<f64>,
    #[serde(default)]
    pub judge_pass_from: Vec<f64>,
}

/// One proposal with its evidence (the JSON contract's `proposals[]`).
#[derive(Debug, Clone, Serialize)]
pub struct Proposal {
    pub rule: String,
    pub change: String,
    pub before: String,
    pub after: String,
    /// Turns (`run#turn`) it flips toward their label …
    pub support: Vec<String>,
    /// … and those it flips away from it.
    pub against: Vec<String>,
    /// In how many of the folds' training searches it was chosen.
    pub chosen_in_folds: usize,
    /// The judge's few-shot examples it adds (`judge.examples` only).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub examples: Vec<crate::director::ruleset::JudgeExample>,
}

/// The whole result (the JSON contract plus the evidence behind it).
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub labels: usize,
    pub folds: usize,
    /// Held-out κ, mean over folds, with the current rules …
    pub agreement_before: f64,
    /// … and with the changes each fold's training search chose.
    pub agreement_after: f64,
    pub fold_before: Vec<f64>,
    pub fold_after: Vec<f64>,
    /// Standard deviation of the per-fold gain.
    pub spread: f64,
    /// Held-out turns the changes flipped right / wrong, and the sign test's p.
    pub flipped_right: usize,
    pub flipped_wrong: usize,
    pub p_value: f64,
    pub holds_up: bool,
    pub proposals: Vec<Proposal>,
    /// Held-out precision/recall of each rule's RETRY, before and after.
    pub retry_before: BTreeMap<String, PrecisionRecall>,
    pub retry_after: BTreeMap<String, PrecisionRecall>,
    /// The judge asked again with few-shot examples on held-out lines (`tune --judge`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub judge_examples: Option<super::examples::ExampleEvidence>,
}

/// Why tune refused to propose anything.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum TuneError {
    #[error("only {0} labelled turns; tune needs at least {1}")]
    TooFewLabels(usize, usize),
    #[error("the labels come from {0} run(s); held-out folds by run need at least 2")]
    TooFewRuns(usize),
}

fn agree(cases: &[Case], idx: &[usize], chosen: &[&Candidate]) -> f64 {
    kappa(
        idx.iter()
            .map(|&i| (usable(verdict(&cases[i], i, chosen)), cases[i].label.usable)),
    )
}

/// Greedy coordinate search on `idx`: each step adds the candidate (for a rule not yet
/// changed) that raises κ most, while the gain clears the settings' bars.
pub fn greedy<'a>(
    cases: &[Case],
    idx: &[usize],
    cands: &'a [Candidate],
    s: &Settings,
) -> Vec<&'a Candidate> {
    let mut chosen: Vec<&Candidate> = Vec::new();
    let mut current = agree(cases, idx, &chosen);
    for _ in 0..s.max_steps {
        let mut best: Option<(f64, &Candidate)> = None;
        for c in cands
            .iter()
            .filter(|c| chosen.iter().all(|x| x.rule != c.rule))
        {
            let mut trial = chosen.clone();
            trial.push(c);
            let k = agree(cases, idx, &trial);
            let (right, wrong) = flips(cases, idx, &chosen, &trial);
            if k - current >= s.min_gain
                && right >= wrong + s.min_net
                && best.is_none_or(|(b, _)| k > b)
            {
                best = Some((k, c));
            }
        }
        let Some((k, c)) = best else { break };
        chosen.push(c);
        current = k;
    }
    chosen
}

/// Turns in `idx` whose usable/unusable changes from `a` to `b`: (now right, now wrong).
fn flips(cases: &[Case], idx: &[usize], a: &[&Candidate], b: &[&Candidate]) -> (usize, usize) {
    let (mut right, mut wrong) = (0, 0);
    for &i in idx {
        let (x, y) = (
            usable(verdict(&cases[i], i, a)),
            usable(verdict(&cases[i], i, b)),
        );
        if x != y {
            if y == cases[i].label.usable {
                right += 1;
            } else {
                wrong += 1;
            }
        }
    }
    (right, wrong)
}

/// Runs the cross-validated search and, when it holds up, the final search on all labels.
pub fn tune(cases: &[Case], cands: &[Candidate], s: &Settings) -> Result<Report, TuneError> {
    if cases.len() < s.min_labels {
        return Err(TuneError::TooFewLabels(cases.len(), s.min_labels));
    }
    let runs: Vec<&str> = cases.iter().map(|c| c.run.as_str()).collect();
    let (fold, k) = folds_by_run(&runs, s.folds);
    if k < 2 {
        return Err(TuneError::TooFewRuns(k));
    }
    let (mut fb, mut fa) = (Vec::new(), Vec::new());
    let (mut right, mut wrong) = (0, 0);
    let mut picked: BTreeMap<(RuleId, String), usize> = BTreeMap::new();
    let mut held_after: Vec<(usize, Vec<&Candidate>)> = Vec::new();
    for f in 0..k {
        let train: Vec<usize> = (0..cases.len()).filter(|&i| fold[i] != f).collect();
        let test: Vec<usize> = (0..cases.len()).filter(|&i| fold[i] == f).collect();
        let chosen = greedy(cases, &train, cands, s);
        for c in &chosen {
            *picked.entry((c.rule, c.after.clone())).or_default() += 1;
        }
        fb.push(agree(cases, &test, &[]));
        fa.push(agree(cases, &test, &chosen));
        let (r, w) = flips(cases, &test, &[], &chosen);
        right += r;
        wrong += w;
        held_after.extend(test.into_iter().map(|i| (i, chosen.clone())));
    }
    let gains: Vec<f64> = fa.iter().zip(&fb).map(|(a, b)| a - b).collect();
    let (gain, spread) = mean_sd(&gains);
    let p_value = sign_test(right, wrong);
    let holds_up = gain > spread && gain > 0.0 && p_value < s.alpha;
    let all: Vec<usize> = (0..cases.len()).collect();
    let proposals = if holds_up {
        proposals(cases, &all, &greedy(cases, &all, cands, s), &picked)
    } else {
        Vec::new()
    };
    Ok(Report {
        labels: cases.len(),
        folds: k,
        agreement_before: mean_sd(&fb).0,
        agreement_after: mean_sd(&fa).0,
        fold_before: fb,
        fold_after: fa,
        spread,
        flipped_right: right,
        flipped_wrong: wrong,
        p_value,
        holds_up,
        proposals,
        retry_before: retry_table(cases, held_after.iter().map(|(i, _)| (*i, Vec::new()))),
        retry_after: retry_table(cases, held_after.into_iter()),
        judge_examples: None,
    })
}

fn proposals(
    cases: &[Case],
    all: &[usize],
    chosen: &[&Candidate],
    picked: &BTreeMap<(RuleId, String), usize>,
) -> Vec<Proposal> {
    chosen
        .iter()
        .map(|c| {
            let (mut support, mut against) = (Vec::new(), Vec::new());
            for &i in all {
                let was = usable(verdict(&cases[i], i, &[]));
                let now = usable(verdict(&cases[i], i, &[*c]));
                if was != now {
                    let id = format!("{}#{}", cases[i].run, cases[i].turn);
                    if now == cases[i].label.usable {
                        support.push(id);
                    } else {
                        against.push(id);
                    }
                }
            }
            Proposal {
                rule: rule_key(c.rule),
                change: c.key.clone(),
                before: c.before.clone(),
                after: c.after.clone(),
                support,
                against,
                chosen_in_folds: picked.get(&(c.rule, c.after.clone())).copied().unwrap_or(0),
                examples: Vec::new(),
            }
        })
        .collect()
}

/// Per-rule precision/recall of RETRY over held-out turns, each judged with its fold's changes.
fn retry_table<'a>(
    cases: &[Case],
    held: impl Iterator<Item = (usize, Vec<&'a Candidate>)>,
) -> BTreeMap<String, PrecisionRecall> {
    let mut per: BTreeMap<RuleId, Vec<(bool, bool)>> = BTreeMap::new();
    let held: Vec<_> = held.collect();
    let rules: Vec<RuleId> = {
        let mut r: Vec<RuleId> = cases.iter().flat_map(|c| c.base.keys().copied()).collect();
        r.sort();
        r.dedup();
        r
    };
    for (i, chosen) in &held {
        for rule in &rules {
            let s = match chosen.iter().find(|c| c.rule == *rule) {
                Some(c) => c.statuses[*i],
                None => cases[*i].base.get(rule).copied().unwrap_or(Status::Pass),
            };
            per.entry(*rule)
                .or_default()
                .push((s == Status::Retry, !cases[*i].label.usable));
        }
    }
    per.into_iter()
        .map(|(r, v)| (rule_key(r), precision_recall(v)))
        .collect()
}

const TUNE_TOML: &str = include_str!("../../../../assets/rules/tune.toml");

impl Default for Settings {
    /// The embedded `assets/rules/tune.toml`.
    fn default() -> Self {
        toml::from_str(TUNE_TOML).expect("assets/rules/tune.toml is valid")
    }
}
