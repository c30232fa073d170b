//! The period report's trend: per day (UTC, by when a run started) the number of runs, the
//! attempts each committed turn took, the share of reviewers' labels that say fine (👍 or an
//! override to PASS) and the judge's mean over the lines it scored — one panel each, on its own
//! scale, in one inline SVG. A day without labels or scores has no point there (a gap, never a 0).

use std::collections::BTreeMap;

use super::html::missing;
use super::svg::{self, Series};

/// What one day's runs add up to.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Day {
    pub runs: usize,
    pub turns: usize,
    pub attempts: usize,
    /// Reviewers' labels in force, and how many of them say fine.
    pub labels: usize,
    pub fine: usize,
    /// Sum and count of the judge's mean over the committed lines it scored.
    pub judge_sum: f64,
    pub judged: usize,
}

impl Day {
    pub fn attempts_per_turn(&self) -> Option<f64> {
        (self.turns > 0).then(|| self.attempts as f64 / self.turns as f64)
    }
    pub fn fine_share(&self) -> Option<f64> {
        (self.labels > 0).then(|| self.fine as f64 / self.labels as f64)
    }
    pub fn judge_mean(&self) -> Option<f64> {
        (self.judged > 0).then(|| self.judge_sum / self.judged as f64)
    }
}

/// The day of a stored start time (`2026-11-23T…` → `2026-11-23`).
pub fn day_of(started_at: &str) -> String {
    started_at.get(..10).unwrap_or(started_at).to_string()
}

fn count(v: f64) -> String {
    format!("{}", v.round() as i64)
}
fn two(v: f64) -> String {
    format!("{v:.2}")
}
fn percent(v: f64) -> String {
    format!("{:.0}%", v * 100.0)
}

/// The section: the chart, or why there is none.
pub fn section(days: &BTreeMap<String, Day>) -> String {
    let mut s = String::from("<h2>日ごとの推移</h2>");
    if days.is_empty() {
        return s + &missing("trend", "no run started in this period");
    }
    let names: Vec<String> = days.keys().cloned().collect();
    let col = |f: &dyn Fn(&Day) -> Option<f64>| days.values().map(f).collect::<Vec<_>>();
    let runs = col(&|d| Some(d.runs as f64));
    let apt = col(&|d| d.attempts_per_turn());
    let top = |v: &[Option<f64>], floor: f64| v.iter().flatten().fold(floor, |a, b| a.max(*b));
    let series = [
        Series {
            name: "ラン数".into(),
            class: "s0",
            max: top(&runs, 1.0).ceil(),
            values: runs,
            bars: true,
            fmt: count,
        },
        Series {
            name: "試行/ターン".into(),
            class: "s1",
            max: top(&apt, 1.0).ceil(),
            values: apt,
            bars: false,
            fmt: two,
        },
        Series {
            name: "👍の割合".into(),
            class: "s2",
            values: col(&|d| d.fine_share()),
            max: 1.0,
            bars: false,
            fmt: percent,
        },
        Series {
            name: "審査員平均".into(),
            class: "s3",
            values: col(&|d| d.judge_mean()),
            max: 5.0,
            bars: false,
            fmt: two,
        },
    ];
    s.push_str(&svg::daily(
        "trend",
        "日ごと（UTC）: ラン数 · 1ターンの試行数 · 👍（またはPASSへの上書き）の割合 · 審査員の平均（1–5）",
        &names,
        &series,
    ));
    s
}
