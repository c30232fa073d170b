//! Unpaired mode (`--topics FILE --variant A --variant B --runs N`): both variants run from
//! scratch on the same topics, N runs each, and their distributions are compared — verdict
//! rates and per-rule rates of committed lines with 95 % Wilson intervals, judge means and mean
//! attempts per turn with 95 % Student-t intervals. Lines of one run are not independent, so the
//! intervals are narrower than a per-run analysis would give; they are a guide, not a gate.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::outcome::Side;
use super::stats::{mean_ci, wilson};

/// A rate with its interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Rate {
    pub hits: usize,
    pub n: usize,
    pub rate: f64,
    pub ci95: [f64; 2],
}

/// A mean with its interval (None when nothing was measured).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Mean {
    pub n: usize,
    pub mean: f64,
    pub ci95: [f64; 2],
}

/// One side's distribution over its committed lines.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Dist {
    pub runs: usize,
    pub lines: usize,
    /// PASS, WARN, RETRY (committed after retries ran out counts as `exhausted` too).
    pub verdicts: BTreeMap<String, Rate>,
    pub rules: BTreeMap<String, Rate>,
    pub judge_mean: Option<Mean>,
    pub attempts: Option<Mean>,
}

fn rate(hits: usize, n: usize) -> Rate {
    let (lo, hi) = wilson(hits, n);
    Rate {
        hits,
        n,
        rate: if n == 0 { 0.0 } else { hits as f64 / n as f64 },
        ci95: [lo, hi],
    }
}

fn mean(xs: &[f64]) -> Option<Mean> {
    mean_ci(xs).map(|(m, lo, hi)| Mean {
        n: xs.len(),
        mean: m,
        ci95: [lo, hi],
    })
}

/// The distribution of `lines` (committed lines of `runs` runs).
pub fn dist(lines: &[Side], runs: usize) -> Dist {
    let n = lines.len();
    let mut verdicts = BTreeMap::new();
    for (name, f) in [
        (
            "PASS",
            &(|s: &Side| s.rank() == 3) as &dyn Fn(&Side) -> bool,
        ),
        ("WARN", &|s: &Side| s.rank() == 2),
        ("RETRY", &|s: &Side| s.rank() <= 1),
        ("exhausted", &|s: &Side| s.exhausted),
    ] {
        verdicts.insert(
            name.to_string(),
            rate(lines.iter().filter(|s| f(s)).count(), n),
        );
    }
    let mut fired: BTreeMap<String, usize> = BTreeMap::new();
    for s in lines {
        for r in s.fired() {
            *fired.entry(r.as_str().to_string()).or_default() += 1;
        }
    }
    let rules = fired.into_iter().map(|(k, h)| (k, rate(h, n))).collect();
    let judge: Vec<f64> = lines.iter().filter_map(|s| s.judge_mean).collect();
    let attempts: Vec<f64> = lines.iter().map(|s| s.attempts as f64).collect();
    Dist {
        runs,
        lines: n,
        verdicts,
        rules,
        judge_mean: mean(&judge),
        attempts: mean(&attempts),
    }
}

/// The unpaired result: A's and B's distributions on the same topics.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Unpaired {
    pub topics: Vec<String>,
    pub runs_per_topic: usize,
    pub a: Dist,
    pub b: Dist,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::director::Status;

    fn s(status: Status, judge: f64) -> Side {
        Side {
            text: String::new(),
            status,
            exhausted: false,
            tone: 0,
            findings: Vec::new(),
            judge: None,
            judge_mean: Some(judge),
            attempts: 1,
        }
    }

    #[test]
    fn rates_and_means_with_intervals() {
        let lines: Vec<Side> = (0..10)
            .map(|i| {
                s(
                    if i < 5 { Status::Pass } else { Status::Warn },
                    3.0 + (i % 2) as f64,
                )
            })
            .collect();
        let d = dist(&lines, 2);
        let pass = &d.verdicts["PASS"];
        assert_eq!((pass.hits, pass.n), (5, 10));
        assert!((pass.ci95[0] - 0.2366).abs() < 1e-3 && (pass.ci95[1] - 0.7634).abs() < 1e-3);
        let j = d.judge_mean.unwrap();
        assert!((j.mean - 3.5).abs() < 1e-12 && j.ci95[0] < 3.5 && j.ci95[1] > 3.5);
        assert_eq!(dist(&[], 0).judge_mean, None);
    }
}
