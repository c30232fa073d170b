//! The comparison's data: one judged line per side (`Side`), the per-turn rows and the summary,
//! and the pure functions that rank lines and summarise (no I/O). This is the stable JSON shape
//! `kakeai compare --format json` prints and the `comparisons` table stores.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::stats;
use crate::director::judge::JudgeOutcome;
use crate::director::{RuleId, Status, Verdict};

/// One line as judged: the committed line of a turn, on side A or one sample of side B.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Side {
    pub text: String,
    pub status: Status,
    /// Committed because every attempt was RETRY.
    pub exhausted: bool,
    pub tone: u8,
    pub findings: Vec<Brief>,
    /// The five judge aspects (frame, roleplay, connection, density, naturalness), when scored.
    pub judge: Option<[f64; 5]>,
    pub judge_mean: Option<f64>,
    /// Attempts the turn used (A: as stored; B: this sample's).
    pub attempts: usize,
}

/// A finding, shortened for the report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Brief {
    pub rule: RuleId,
    pub status: Status,
    pub message: String,
}

impl Side {
    pub fn new(
        text: &str,
        verdict: &Verdict,
        judge: Option<&JudgeOutcome>,
        exhausted: bool,
        attempts: usize,
    ) -> Side {
        let scores = judge.and_then(|j| j.scores.as_ref());
        Side {
            text: text.to_string(),
            status: verdict.status,
            exhausted,
            tone: verdict.tone.score,
            findings: verdict
                .reported_findings()
                .filter(|f| f.status != Status::Info)
                .map(|f| Brief {
                    rule: f.rule,
                    status: f.status,
                    message: f.message.clone(),
                })
                .collect(),
            judge: scores.map(|s| s.values()),
            judge_mean: scores.map(|s| s.mean),
            attempts,
        }
    }

    /// PASS 3 > WARN (and UNSCORED, MODIFY) 2 > RETRY 1 > exhausted 0.
    pub fn rank(&self) -> u8 {
        match self.status {
            Status::Retry if self.exhausted => 0,
            Status::Retry => 1,
            Status::Pass | Status::Info => 3,
            _ => 2,
        }
    }

    /// Rules that fired on this line (a finding above PASS), each once.
    pub fn fired(&self) -> Vec<RuleId> {
        let mut r: Vec<RuleId> = self
            .findings
            .iter()
            .filter(|f| f.status > Status::Pass)
            .map(|f| f.rule)
            .collect();
        r.sort();
        r.dedup();
        r
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Change {
    Better,
    Same,
    Worse,
}

/// One diff piece between A's and B's (first sample's) text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Piece {
    pub op: String,
    pub text: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TurnRow {
    pub turn: usize,
    pub speaker: String,
    pub a: Side,
    /// One per sample (`--samples K`).
    pub b: Vec<Side>,
    pub change: Change,
    pub diff: Vec<Piece>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RuleCount {
    /// A's lines it fired on.
    pub a: usize,
    /// B's lines it fired on (over every sample).
    pub b: usize,
}

/// A rule listed in `must_not_regress` that fired in B on a turn where it did not in A.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Regressed {
    pub rule: RuleId,
    pub turn: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub turns: usize,
    pub samples: usize,
    pub better: usize,
    pub same: usize,
    pub worse: usize,
    /// Two-sided exact sign test over the untied turns.
    pub p_value: f64,
    pub significance: f64,
    /// Per rule (only rules that fired on either side): lines it fired on.
    pub rules: BTreeMap<String, RuleCount>,
    pub mean_attempts: [f64; 2],
    /// Mean of each judge aspect over scored lines, A then B; None when nothing was scored.
    pub judge_aspects: [Option<[f64; 5]>; 2],
    pub must_not_regress: Vec<Regressed>,
    /// The rules the variant named in `must_not_regress` (stored comparisons from before this
    /// field read as none).
    #[serde(default)]
    pub guarded: Vec<String>,
    /// The `--fail-on-regression` verdict: worse significantly more often, or a listed rule
    /// regressed.
    pub regression: bool,
}

/// B's outcome on one turn against A's: rank first (mean over samples), then judge mean.
pub fn change(a: &Side, b: &[Side]) -> Change {
    if b.is_empty() {
        return Change::Same;
    }
    let rb = b.iter().map(|s| f64::from(s.rank())).sum::<f64>() / b.len() as f64;
    let ra = f64::from(a.rank());
    if (rb - ra).abs() > 1e-9 {
        return if rb > ra {
            Change::Better
        } else {
            Change::Worse
        };
    }
    let scored: Vec<f64> = b.iter().filter_map(|s| s.judge_mean).collect();
    match (a.judge_mean, scored.is_empty()) {
        (Some(ja), false) => {
            let jb = scored.iter().sum::<f64>() / scored.len() as f64;
            if (jb - ja).abs() < 1e-9 {
                Change::Same
            } else if jb > ja {
                Change::Better
            } else {
                Change::Worse
            }
        }
        _ => Change::Same,
    }
}

/// The character diff of A's text to B's.
pub fn diff(a: &str, b: &str) -> Vec<Piece> {
    let d = similar::TextDiff::from_chars(a, b);
    let mut out: Vec<Piece> = Vec::new();
    for c in d.iter_all_changes() {
        let op = match c.tag() {
            similar::ChangeTag::Equal => "equal",
            similar::ChangeTag::Delete => "delete",
            similar::ChangeTag::Insert => "insert",
        };
        match out.last_mut() {
            Some(p) if p.op == op => p.text.push_str(c.value()),
            _ => out.push(Piece {
                op: op.into(),
                text: c.value().to_string(),
            }),
        }
    }
    out
}

/// The summary of paired rows under the variant's gate settings.
pub fn summarise(rows: &[TurnRow], significance: f64, must_not: &[RuleId]) -> Summary {
    let count = |c: Change| rows.iter().filter(|r| r.change == c).count();
    let (better, same, worse) = (
        count(Change::Better),
        count(Change::Same),
        count(Change::Worse),
    );
    let p_value = stats::sign_test(better, worse);
    let mut rules: BTreeMap<String, RuleCount> = BTreeMap::new();
    let mut regressed = Vec::new();
    for r in rows {
        let fa = r.a.fired();
        for id in &fa {
            rules.entry(id.as_str().into()).or_default().a += 1;
        }
        for s in &r.b {
            let fb = s.fired();
            for id in &fb {
                rules.entry(id.as_str().into()).or_default().b += 1;
                let listed = must_not.contains(id) && !fa.contains(id);
                if listed
                    && !regressed
                        .iter()
                        .any(|x: &Regressed| x.turn == r.turn && x.rule == *id)
                {
                    regressed.push(Regressed {
                        rule: *id,
                        turn: r.turn,
                    });
                }
            }
        }
    }
    let mean = |xs: Vec<f64>| {
        if xs.is_empty() {
            0.0
        } else {
            xs.iter().sum::<f64>() / xs.len() as f64
        }
    };
    let a_att = mean(rows.iter().map(|r| r.a.attempts as f64).collect());
    let b_att = mean(
        rows.iter()
            .flat_map(|r| r.b.iter().map(|s| s.attempts as f64))
            .collect(),
    );
    let aspects = |it: Vec<[f64; 5]>| {
        if it.is_empty() {
            return None;
        }
        let mut m = [0.0; 5];
        for v in &it {
            for (i, x) in v.iter().enumerate() {
                m[i] += x / it.len() as f64;
            }
        }
        Some(m)
    };
    let ja = aspects(rows.iter().filter_map(|r| r.a.judge).collect());
    let jb = aspects(
        rows.iter()
            .flat_map(|r| r.b.iter().filter_map(|s| s.judge))
            .collect(),
    );
    let significant = worse > better && p_value < significance;
    Summary {
        turns: rows.len(),
        samples: rows.iter().map(|r| r.b.len()).max().unwrap_or(0),
        better,
        same,
        worse,
        p_value,
        significance,
        rules,
        mean_attempts: [a_att, b_att],
        judge_aspects: [ja, jb],
        regression: significant || !regressed.is_empty(),
        must_not_regress: regressed,
        guarded: must_not.iter().map(|r| r.as_str().to_string()).collect(),
    }
}

/// Why the regression gate cannot fire on so few pairs, when it cannot: even with every
/// paired turn worse, the two-sided sign test's p = 2·0.5ⁿ stays ≥ the significance level
/// (n < 6 at 0.05). Only a `must_not_regress` rule can fail such a comparison.
pub fn gate_note(s: &Summary) -> Option<String> {
    if stats::sign_test(0, s.turns) < s.significance {
        return None;
    }
    let needed = (1..=64)
        .find(|&n| stats::sign_test(0, n) < s.significance)
        .unwrap_or(64);
    let only = if s.guarded.is_empty() {
        "add turns or name must_not_regress rules".to_string()
    } else {
        format!(
            "only must_not_regress ({}) can fail it; add turns for the rest",
            s.guarded.join(", ")
        )
    };
    Some(format!(
        "the gate cannot fire on {} pairs (the sign test needs ≥ {needed} to reach p < {}); {only}",
        s.turns, s.significance
    ))
}

/// The one-line summary shown on top of the compare view and under the table.
pub fn headline(s: &Summary) -> String {
    let mut worst: Vec<(&String, usize)> = s
        .rules
        .iter()
        .filter(|(_, c)| c.b > c.a)
        .map(|(k, c)| (k, c.b - c.a))
        .collect();
    worst.sort_by(|x, y| y.1.cmp(&x.1).then(x.0.cmp(y.0)));
    let mut line = format!(
        "B better on {} of {} turns, worse on {}",
        s.better, s.turns, s.worse
    );
    if let Some((rule, n)) = worst.first() {
        line.push_str(&format!(" ({rule} ×{n})"));
    }
    line.push_str(&format!(", p = {:.3}", s.p_value));
    if s.regression {
        line.push_str(" — REGRESSION");
    }
    line
}

#[cfg(test)]
#[path = "outcome_tests.rs"]
mod tests;
