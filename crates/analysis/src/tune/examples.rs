//! Few-shot examples for the 5-aspect judge, chosen from the team's gold-labelled lines, and
//! the held-out evidence that they help: per fold (by run, as the rule search), examples come
//! only from the training runs and the judge is asked again on the held-out lines with and
//! without them. The asking is the caller's (it needs the model); this module plans the folds,
//! chooses the examples and scores the answers.
//!
//! Never-leak: a line a never-leak rule spoke on, a withheld line or one whose verdict is not
//! on record is never an example, and every example's text is masked for personal data.

use serde::Serialize;

use super::eval::{folds_by_run, kappa, mean_sd, sign_test};
use super::rejudge::Turn;
use super::search::Proposal;
use super::{Provenance, usable};
use crate::director::Status;
use crate::director::ruleset::JudgeExample;

/// How examples are chosen and measured (`[examples]` of `assets/rules/tune.toml`).
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExampleSettings {
    /// Examples of each kind (usable, to be regenerated).
    pub per_class: usize,
    /// Longer lines are not shown (a prompt is not a transcript).
    pub max_chars: usize,
    /// At most this many held-out lines are asked again (two judge calls each).
    pub max_asked: usize,
}

impl Default for ExampleSettings {
    fn default() -> Self {
        ExampleSettings {
            per_class: 2,
            max_chars: 120,
            max_asked: 200,
        }
    }
}

/// One fold: the examples its training runs give, and the held-out turns (indices into the
/// turns) to ask the judge about.
#[derive(Debug, Clone)]
pub struct FoldPlan {
    pub examples: Vec<JudgeExample>,
    pub held_out: Vec<usize>,
}

/// The examples `turns[idx]` give: gold-labelled, unguarded, short lines; those the judge's
/// stored score got wrong first (most confidently wrong first), then the unscored, then the
/// rest; `per_class` of each label, alternating speakers and spread over runs.
pub fn choose(
    turns: &[Turn],
    idx: &[usize],
    rule: &crate::director::ruleset::JudgeRule,
    s: &ExampleSettings,
) -> Vec<JudgeExample> {
    let mut out = Vec::new();
    for want in [false, true] {
        let mut pool: Vec<(u8, i64, usize)> = idx
            .iter()
            .copied()
            .filter(|&i| {
                eligible(&turns[i], s) && turns[i].label.as_ref().map(|l| l.usable) == Some(want)
            })
            .map(|i| {
                let t = &turns[i];
                let (rank, margin) = match t.judge_mean {
                    Some(m) => {
                        let st = crate::director::judge::status_of_mean(m, rule);
                        let cut = if want {
                            rule.retry_below
                        } else {
                            rule.pass_from
                        };
                        let wrong = usable(st) != want;
                        (u8::from(!wrong) * 2, -((m - cut).abs() * 100.0) as i64)
                    }
                    None => (1, 0),
                };
                (rank, margin, i)
            })
            .collect();
        pool.sort();
        out.extend(
            spread(turns, &pool, s.per_class)
                .into_iter()
                .map(|i| example(turns, i)),
        );
    }
    out
}

/// A gold label on an unguarded line of a reasonable length.
fn eligible(t: &Turn, s: &ExampleSettings) -> bool {
    let gold = t
        .label
        .as_ref()
        .is_some_and(|l| l.provenance == Provenance::Gold);
    let n = t.text.chars().count();
    gold && !t.guarded && n > 0 && n <= s.max_chars
}

/// Up to `n` of the ranked pool: always from the best rank left, and within it a speaker and
/// a run not yet taken where there is one.
fn spread(turns: &[Turn], pool: &[(u8, i64, usize)], n: usize) -> Vec<usize> {
    let mut taken: Vec<usize> = Vec::new();
    while taken.len() < n {
        let left: Vec<&(u8, i64, usize)> = pool.iter().filter(|p| !taken.contains(&p.2)).collect();
        let Some(best) = left.first().map(|p| p.0) else {
            break;
        };
        let tier: Vec<usize> = left.iter().filter(|p| p.0 == best).map(|p| p.2).collect();
        let fresh = |i: usize, by_speaker: bool, by_run: bool| {
            (!by_speaker || !taken.iter().any(|&j| turns[j].speaker == turns[i].speaker))
                && (!by_run || !taken.iter().any(|&j| turns[j].run == turns[i].run))
        };
        let next = [(true, true), (true, false), (false, true)]
            .iter()
            .find_map(|&(sp, ru)| tier.iter().copied().find(|&i| fresh(i, sp, ru)))
            .unwrap_or(tier[0]);
        taken.push(next);
    }
    taken
}

/// The partner's line just before `turns[i]` in the same run, unless it is guarded (then the
/// judge sees none: a flagged line is never quoted as context).
pub fn partner_before(turns: &[Turn], i: usize) -> Option<&Turn> {
    let t = &turns[i];
    turns[..i]
        .iter()
        .rev()
        .take_while(|p| p.run == t.run)
        .find(|p| p.speaker != t.speaker)
        .filter(|p| !p.guarded)
}

/// The labelled turns whose speaker the rules know (`known`): what tune measures.
pub fn labelled(turns: &[Turn], known: &dyn Fn(&str) -> bool) -> Vec<usize> {
    (0..turns.len())
        .filter(|&i| turns[i].label.is_some() && known(&turns[i].speaker))
        .collect()
}

/// The example for `turns[i]`: its text and its partner's line before it, masked.
fn example(turns: &[Turn], i: usize) -> JudgeExample {
    let t = &turns[i];
    let mask = |s: &str| crate::safety::pii::shared().mask(s).masked_text;
    let partner_last = partner_before(turns, i).map(|p| mask(&p.text));
    JudgeExample {
        speaker: t.speaker.clone(),
        partner_last,
        text: mask(&t.text),
        usable: t.label.as_ref().is_some_and(|l| l.usable),
        source: format!("run {} turn {}", t.run, t.turn),
    }
}

/// The folds: labelled turns of known speakers split by run as the rule search splits them;
/// examples from each fold's training runs; at most `max_asked` held-out turns in all, taken
/// evenly. `known` says whether the rules know a speaker.
pub fn plan(
    turns: &[Turn],
    folds: usize,
    rule: &crate::director::ruleset::JudgeRule,
    s: &ExampleSettings,
    known: &dyn Fn(&str) -> bool,
) -> Vec<FoldPlan> {
    let labelled = labelled(turns, known);
    let runs: Vec<&str> = labelled.iter().map(|&i| turns[i].run.as_str()).collect();
    let (fold, k) = folds_by_run(&runs, folds);
    let step = labelled.len().div_ceil(s.max_asked.max(1)).max(1);
    (0..k)
        .map(|f| {
            let train: Vec<usize> = (0..labelled.len())
                .filter(|&j| fold[j] != f)
                .map(|j| labelled[j])
                .collect();
            let held_out = (0..labelled.len())
                .filter(|&j| fold[j] == f && j % step == 0)
                .map(|j| labelled[j])
                .collect();
            FoldPlan {
                examples: choose(turns, &train, rule, s),
                held_out,
            }
        })
        .collect()
}

/// The judge's answers on one fold's held-out turns: (turn index, status without the
/// examples, status with them). An unscored answer is never usable.
pub type Answers = Vec<(usize, Status, Status)>;

/// What asking again showed (the report's `judge_examples`).
#[derive(Debug, Clone, Serialize)]
pub struct ExampleEvidence {
    /// Held-out lines asked (twice each).
    pub asked: usize,
    /// The judge's κ against the labels, mean over folds, without and with examples.
    pub agreement_before: f64,
    pub agreement_after: f64,
    pub fold_before: Vec<f64>,
    pub fold_after: Vec<f64>,
    pub spread: f64,
    pub flipped_right: usize,
    pub flipped_wrong: usize,
    pub p_value: f64,
    pub holds_up: bool,
    /// Folds whose training runs gave no example (nothing to measure there).
    pub folds_without_examples: usize,
}

/// Scores the folds' answers: κ per fold, flips, the sign test; the gain holds up as the rule
/// search's does (mean gain above its spread, sign test under `alpha`).
pub fn score(
    turns: &[Turn],
    plans: &[FoldPlan],
    answers: &[Answers],
    alpha: f64,
) -> ExampleEvidence {
    let (mut fb, mut fa) = (Vec::new(), Vec::new());
    let (mut asked, mut empty) = (0, 0);
    for (p, a) in plans.iter().zip(answers) {
        if p.examples.is_empty() {
            empty += 1;
            continue;
        }
        let label = |i: usize| turns[i].label.as_ref().is_some_and(|l| l.usable);
        fb.push(kappa(a.iter().map(|&(i, b, _)| (usable(b), label(i)))));
        fa.push(kappa(a.iter().map(|&(i, _, x)| (usable(x), label(i)))));
        asked += a.len();
    }
    let (right, wrong) = flips(turns, answers);
    let (right, wrong) = (right.len(), wrong.len());
    let gains: Vec<f64> = fa.iter().zip(&fb).map(|(a, b)| a - b).collect();
    let (gain, spread) = mean_sd(&gains);
    let p_value = sign_test(right, wrong);
    ExampleEvidence {
        asked,
        agreement_before: mean_sd(&fb).0,
        agreement_after: mean_sd(&fa).0,
        fold_before: fb,
        fold_after: fa,
        spread,
        flipped_right: right,
        flipped_wrong: wrong,
        p_value,
        holds_up: !gains.is_empty() && gain > 0.0 && gain > spread && p_value <= alpha,
        folds_without_examples: empty,
    }
}

/// The held-out lines (`run#turn`) the examples flipped toward their label, and away from it.
fn flips(turns: &[Turn], answers: &[Answers]) -> (Vec<String>, Vec<String>) {
    let (mut right, mut wrong) = (Vec::new(), Vec::new());
    for &(i, b, x) in answers.iter().flatten() {
        if usable(b) != usable(x) {
            let id = format!("{}#{}", turns[i].run, turns[i].turn);
            let label = turns[i].label.as_ref().is_some_and(|l| l.usable);
            if usable(x) == label {
                &mut right
            } else {
                &mut wrong
            }
            .push(id);
        }
    }
    (right, wrong)
}

/// The proposal, from all gold labels, when the evidence holds up: the examples to add,
/// supported by the held-out lines they flipped right (and against: flipped wrong).
pub fn proposal(
    turns: &[Turn],
    all: Vec<JudgeExample>,
    now: usize,
    ev: &ExampleEvidence,
    plans: &[FoldPlan],
    answers: &[Answers],
) -> Option<Proposal> {
    if !ev.holds_up || all.is_empty() {
        return None;
    }
    let (support, against) = flips(turns, answers);
    Some(Proposal {
        rule: "judge_examples".into(),
        change: "judge.examples".into(),
        before: format!("{now} examples"),
        after: format!("{} examples", all.len()),
        support,
        against,
        chosen_in_folds: plans.iter().filter(|p| !p.examples.is_empty()).count(),
        examples: all,
    })
}

#[cfg(test)]
#[path = "examples_tests.rs"]
mod tests;
