//! Agreement that counts chance: Cohen's κ next to the raw percentage, Director vs each
//! reviewer and reviewer vs reviewer, over all turns, per sister and per rule. A turn counts
//! when both sides judged it: the Director's shown verdict (PASS = fine, anything else = not),
//! and a reviewer's override (PASS = fine) or else her 👍 (fine) / 👎 (not). Per rule, the
//! Director's side is "this rule found something at WARN or worse". Verdicts are read from the
//! run as re-judged, so the figures move with the thresholds. With two or more reviewers,
//! Krippendorff's α among all of them follows, over all turns, per sister and per rule.
//! Pure functions.

use std::collections::BTreeMap;

use super::queue::LogEntry;
use super::view::TurnView;
use crate::annotate::alpha::{Alpha, nominal};
use crate::director::{RuleId, Status};
use crate::store::review::{Mark, fold};

/// One agreement figure and the number of turns behind it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Agreement {
    /// None when chance agreement is total (both sides used one label only): κ is undefined.
    pub kappa: Option<f64>,
    /// Observed agreement, 0..=1.
    pub raw: f64,
    pub n: usize,
}

/// Cohen's κ over paired labels (each < `k`); None for no pairs.
pub fn cohen(pairs: &[(usize, usize)], k: usize) -> Option<Agreement> {
    let n = pairs.len();
    if n == 0 || k == 0 {
        return None;
    }
    let mut a = vec![0usize; k];
    let mut b = vec![0usize; k];
    let mut same = 0usize;
    for &(x, y) in pairs {
        a[x.min(k - 1)] += 1;
        b[y.min(k - 1)] += 1;
        same += usize::from(x.min(k - 1) == y.min(k - 1));
    }
    let nf = n as f64;
    let po = same as f64 / nf;
    let pe: f64 = (0..k)
        .map(|i| (a[i] as f64 / nf) * (b[i] as f64 / nf))
        .sum();
    let kappa = ((1.0 - pe).abs() > 1e-12).then(|| (po - pe) / (1.0 - pe));
    Some(Agreement { kappa, raw: po, n })
}

/// One line of the agreement table.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub label: String,
    pub agreement: Agreement,
}

fn not_fine(s: Status) -> bool {
    !matches!(s, Status::Pass | Status::Info)
}

/// Each reviewer's judgement per turn (true = not fine); unnamed reviewers are "(unnamed)".
pub fn reviewer_labels(log: &[LogEntry]) -> BTreeMap<String, BTreeMap<u32, bool>> {
    let mut by: BTreeMap<String, Vec<&LogEntry>> = BTreeMap::new();
    for e in log {
        let who = e.3.clone().unwrap_or_else(|| "(unnamed)".into());
        by.entry(who).or_default().push(e);
    }
    by.into_iter()
        .map(|(who, list)| {
            let marks = fold(list.into_iter().map(|(t, k, p, _, _)| Mark {
                turn: *t,
                kind: *k,
                payload: p,
                reviewer: None,
            }));
            let labels = marks
                .into_iter()
                .filter_map(|(t, m)| {
                    let bad = match (m.override_to, m.thumb) {
                        (Some(s), _) => not_fine(s),
                        (None, Some(up)) => !up,
                        (None, None) => return None,
                    };
                    Some((t, bad))
                })
                .collect();
            (who, labels)
        })
        .filter(|(_, l): &(String, BTreeMap<u32, bool>)| !l.is_empty())
        .collect()
}

/// The Director's side of one turn: (speaker, not fine, rules that fired at WARN+).
type Side<'a> = (&'a str, bool, Vec<RuleId>);

/// The Director's shown verdict per turn.
fn director(turns: &[TurnView]) -> BTreeMap<u32, Side<'_>> {
    turns
        .iter()
        .filter_map(|t| {
            let v = t.shown()?.verdict.as_ref()?;
            let rules = v
                .findings
                .iter()
                .filter(|f| not_fine(f.status))
                .map(|f| f.rule)
                .collect();
            Some((
                t.turn as u32,
                (t.speaker.as_str(), not_fine(v.status), rules),
            ))
        })
        .collect()
}

fn pair(a: bool, b: bool) -> (usize, usize) {
    (usize::from(a), usize::from(b))
}

/// The table: per reviewer (Director vs her, then per sister, then per rule that fired in the
/// run), then reviewer vs reviewer.
pub fn table(turns: &[TurnView], log: &[LogEntry]) -> Vec<Row> {
    let d = director(turns);
    let reviewers = reviewer_labels(log);
    let mut rules: Vec<RuleId> = d.values().flat_map(|x| x.2.iter().copied()).collect();
    rules.sort_by_key(|r| r.as_str());
    rules.dedup();
    let mut out = Vec::new();
    let mut push = |label: String, pairs: Vec<(usize, usize)>| {
        if let Some(agreement) = cohen(&pairs, 2) {
            out.push(Row { label, agreement });
        }
    };
    for (who, labels) in &reviewers {
        let both: Vec<(u32, &Side, bool)> = labels
            .iter()
            .filter_map(|(t, bad)| Some((*t, d.get(t)?, *bad)))
            .collect();
        push(
            format!("Director–{who}"),
            both.iter().map(|(_, x, r)| pair(x.1, *r)).collect(),
        );
        for (id, name) in [("yana", "やな"), ("ayu", "あゆ")] {
            push(
                format!("  {name}"),
                both.iter()
                    .filter(|(_, x, _)| x.0 == id)
                    .map(|(_, x, r)| pair(x.1, *r))
                    .collect(),
            );
        }
        for rule in &rules {
            push(
                format!("  rule {}", rule.as_str()),
                both.iter()
                    .map(|(_, x, r)| pair(x.2.contains(rule), *r))
                    .collect(),
            );
        }
    }
    let names: Vec<&String> = reviewers.keys().collect();
    for (i, a) in names.iter().enumerate() {
        for b in &names[i + 1..] {
            let (la, lb) = (&reviewers[*a], &reviewers[*b]);
            push(
                format!("{a}–{b}"),
                la.iter()
                    .filter_map(|(t, x)| Some(pair(*x, *lb.get(t)?)))
                    .collect(),
            );
        }
    }
    out
}

/// Agreement among every reviewer at once (issue 24 §2): Krippendorff's α (nominal, missing
/// data allowed — a turn counts when two or more reviewers judged it) over all turns, per
/// sister and per rule (the turns the rule fired on at WARN+). Empty with fewer than two
/// reviewers: pairwise κ says everything then.
pub fn alpha_table(turns: &[TurnView], log: &[LogEntry]) -> Vec<(String, Alpha)> {
    let reviewers = reviewer_labels(log);
    if reviewers.len() < 2 {
        return Vec::new();
    }
    let d = director(turns);
    let units = |keep: &dyn Fn(&Side) -> bool| -> Vec<Vec<bool>> {
        d.iter()
            .filter(|(_, side)| keep(side))
            .map(|(t, _)| {
                reviewers
                    .values()
                    .filter_map(|l| l.get(t).copied())
                    .collect()
            })
            .collect()
    };
    let mut out = Vec::new();
    let mut push = |label: String, units: Vec<Vec<bool>>| {
        if let Some(a) = nominal(&units) {
            out.push((label, a));
        }
    };
    push(
        format!("all {} reviewers", reviewers.len()),
        units(&|_| true),
    );
    for (id, name) in [("yana", "やな"), ("ayu", "あゆ")] {
        push(format!("  {name}"), units(&|s| s.0 == id));
    }
    let mut rules: Vec<RuleId> = d.values().flat_map(|x| x.2.iter().copied()).collect();
    rules.sort_by_key(|r| r.as_str());
    rules.dedup();
    for rule in rules {
        push(
            format!("  rule {}", rule.as_str()),
            units(&|s| s.2.contains(&rule)),
        );
    }
    out
}

/// "α +0.62      n 21" (α "n/a" when every label was the same).
pub fn describe_alpha(a: &Alpha) -> String {
    let x = match a.alpha {
        Some(x) => format!("{x:+.2}"),
        None => "  n/a".into(),
    };
    format!("α {x}       n {}", a.units)
}

/// "κ +0.62  81% n 21" (κ "n/a" when undefined).
pub fn describe(a: &Agreement) -> String {
    let k = match a.kappa {
        Some(k) => format!("{k:+.2}"),
        None => "  n/a".into(),
    };
    format!("κ {k} {:>4.0}% n {}", a.raw * 100.0, a.n)
}

/// The rules pane's agreement section (empty when no reviewer judged a turn of this run).
pub fn lines(
    turns: &[TurnView],
    log: &[LogEntry],
    t: &super::theme::Theme,
    width: u16,
) -> Vec<ratatui::text::Line<'static>> {
    use ratatui::style::Style;
    use ratatui::text::{Line, Span};
    let rows = table(turns, log);
    if rows.is_empty() {
        return Vec::new();
    }
    let mut out = vec![
        Line::raw(""),
        Line::styled(
            super::runs::pad("agreement (Cohen's κ · raw · judged turns)", width as usize),
            Style::new().fg(t.accent),
        ),
    ];
    // The figures keep their 22 columns; the label gives way on a narrow pane.
    let label_w = (width as usize).saturating_sub(22).clamp(6, 22);
    let color = |x: Option<f64>| match x {
        Some(k) if k >= 0.6 => t.pass,
        Some(k) if k >= 0.2 => t.warn,
        Some(_) => t.retry,
        None => t.dim,
    };
    let row = |label: &str, figures: String, c| {
        Line::from(vec![
            Span::styled(super::runs::pad(label, label_w), Style::new().fg(t.text)),
            Span::styled(figures, Style::new().fg(c)),
        ])
    };
    for r in rows {
        let a = r.agreement;
        out.push(row(&r.label, describe(&a), color(a.kappa)));
    }
    let alphas = alpha_table(turns, log);
    if !alphas.is_empty() {
        out.push(Line::styled(
            super::runs::pad("α among all reviewers (n: turns 2+ judged)", width as usize),
            Style::new().fg(t.accent),
        ));
        for (label, a) in alphas {
            out.push(row(&label, describe_alpha(&a), color(a.alpha)));
        }
    }
    out
}

#[cfg(test)]
#[path = "kappa_tests.rs"]
mod tests;
