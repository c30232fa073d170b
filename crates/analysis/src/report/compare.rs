//! The compare report: the better/same/worse summary and its headline, the reviewers'
//! pairwise tally, A → B on the retry loop, the variant's rules, one row per turn with the
//! Director's outcome beside each reviewer's choice (and the lead's gold label), and A beside B
//! on every turn with the character diff. The diff is taken between the lines as shown — each
//! whole line masked first — so a diff piece is never masked on its own (a fragment can look
//! like a name the whole line does not hold).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::html::{self, badge, esc, missing};
use super::svg::{self, Bar};
use super::{safe_text, sister};
use crate::annotate::pairwise::{Choice, Choices};
use crate::compare::outcome::{Change, Side, TurnRow};
use crate::store::{Store, StoreError};

/// A → B on the retry loop: attempts per turn, each rule's lines, the judge's mean — the
/// before/after of a variant (a tune overlay among them).
fn before_after(s: &crate::compare::outcome::Summary) -> String {
    let mut t = String::from(
        "<h2 id=\"before-after\">A → B</h2><table><tr><th>what</th><th>A</th><th>B</th></tr>",
    );
    let _ = write!(
        t,
        "<tr><td>attempts per turn</td><td>{:.2}</td><td>{:.2}</td></tr>",
        s.mean_attempts[0], s.mean_attempts[1]
    );
    let mean = |x: &Option<[f64; 5]>| {
        x.map_or("—".to_string(), |a| {
            format!("{:.2}", a.iter().sum::<f64>() / 5.0)
        })
    };
    let _ = write!(
        t,
        "<tr><td>judge mean</td><td>{}</td><td>{}</td></tr>",
        mean(&s.judge_aspects[0]),
        mean(&s.judge_aspects[1])
    );
    for (rule, c) in &s.rules {
        let _ = write!(
            t,
            "<tr><td>lines {} fired on</td><td>{}</td><td>{}</td></tr>",
            esc(rule),
            c.a,
            c.b
        );
    }
    t.push_str("</table>");
    t
}

/// The rules the variant changes (`[rules]`, flattened to keys) and, for a tune overlay, the
/// provenance lines at its head.
fn variant_rules(text: &str) -> String {
    let provenance: Vec<&str> = text
        .lines()
        .take_while(|l| l.starts_with('#'))
        .filter(|l| l.contains("kakeai tune") || l.contains("held-out") || l.starts_with("#   "))
        .collect();
    let Ok(v) = toml::from_str::<toml::Table>(text) else {
        return String::new();
    };
    let Some(rules) = v.get("rules").and_then(|r| r.as_table()) else {
        return String::new();
    };
    let mut keys = Vec::new();
    flatten("", rules, &mut keys);
    let mut out = String::from("<h2 id=\"variant-rules\">B のルール</h2>");
    for l in provenance {
        let _ = write!(
            out,
            "<p class=\"meta\">{}</p>",
            esc(l.trim_start_matches('#').trim())
        );
    }
    out.push_str("<table>");
    for (k, val) in keys {
        let _ = write!(out, "<tr><td>{}</td><td>{}</td></tr>", esc(&k), esc(&val));
    }
    out.push_str("</table>");
    out
}

fn flatten(prefix: &str, t: &toml::Table, out: &mut Vec<(String, String)>) {
    for (k, v) in t {
        let key = if prefix.is_empty() {
            k.clone()
        } else {
            format!("{prefix}.{k}")
        };
        match v {
            toml::Value::Table(inner) => flatten(&key, inner, out),
            v => out.push((key, v.to_string())),
        }
    }
}

/// The comparison's runs: the baseline (A) and B's sample runs.
pub fn compare_runs(store: &Store, id: i64) -> Result<Vec<i64>, StoreError> {
    let Some(c) = crate::compare::db::load(store, id)? else {
        return Err(StoreError::Invalid(format!("no comparison {id}")));
    };
    Ok(c.header
        .baseline_run
        .into_iter()
        .chain(c.header.sample_runs.iter().copied())
        .collect())
}

/// The page for one stored comparison.
pub fn compare_report(store: &Store, id: i64) -> Result<String, StoreError> {
    let Some(c) = crate::compare::db::load(store, id)? else {
        return Err(StoreError::Invalid(format!("no comparison {id}")));
    };
    let mut b = String::new();
    let _ = write!(
        b,
        "<h1>比較 {} · {}</h1><p class=\"meta\">{} · baseline run {} · {}</p>",
        c.id,
        esc(&c.header.variant_name),
        esc(&c.header.kind),
        c.header.baseline_run.map_or("—".into(), |r| r.to_string()),
        esc(&c.created_at)
    );
    match &c.summary {
        Some(s) => {
            let rows = vec![Bar {
                label: "B vs A".into(),
                parts: vec![
                    (s.better as f64, "PASS"),
                    (s.same as f64, "other"),
                    (s.worse as f64, "RETRY"),
                ],
            }];
            b.push_str(&svg::bars(
                "change",
                "B の変化（良くなった / 同じ / 悪くなった）",
                &rows,
                None,
            ));
            let _ = write!(b, "<p>{}</p>", esc(&crate::compare::outcome::headline(s)));
        }
        None => b.push_str(&missing("summary", "the comparison did not finish")),
    }
    if let Ok(t) = crate::annotate::pairwise::tally(store.db(), id)
        && t.reviewers > 0
    {
        let _ = write!(b, "<p>{}</p>", esc(&t.line()));
    }
    if let Some(s) = &c.summary {
        b.push_str(&before_after(s));
    }
    b.push_str(&variant_rules(&c.header.variant_text));
    // A store without pairwise marks (or one that cannot read them) shows no choices.
    let choices = crate::annotate::pairwise::choices(store.db(), id).unwrap_or_default();
    let golds = crate::annotate::adjudicate::of_comparison(store.db(), id)?;
    b.push_str(&per_turn(&c.turns, &choices, &golds));
    b.push_str("<h2>ターンごとの A / B</h2>");
    for row in &c.turns {
        b.push_str(&side_by_side(row, choices.get(&(row.turn as u32))));
    }
    Ok(html::page(&format!("kakeai compare report {id}"), &b))
}

/// The Director's outcome on a turn, as the row says it.
fn outcome(c: Change) -> (&'static str, &'static str) {
    match c {
        Change::Better => ("B better", "PASS"),
        Change::Same => ("same", "other"),
        Change::Worse => ("A better", "RETRY"),
    }
}

/// One row per turn: the Director's outcome (B against A, as the comparison computed it),
/// each reviewer's choice, their majority and the lead's gold label.
fn per_turn(
    rows: &[TurnRow],
    choices: &BTreeMap<u32, Choices>,
    golds: &BTreeMap<u32, Vec<String>>,
) -> String {
    let mut s = String::from(
        "<h2 id=\"per-turn\">ターンごとの結果</h2><table id=\"outcomes\"><tr><th class=\"n\">turn</th>\
         <th class=\"who\">姉妹</th><th class=\"v\">Director</th><th>reviewers</th>\
         <th class=\"v\">majority</th><th class=\"v\">gold</th></tr>",
    );
    let (mut gold_n, mut agree) = (0, 0);
    for row in rows {
        let t = row.turn as u32;
        let (what, class) = outcome(row.change);
        let mine = choices.get(&t);
        let names: Vec<String> = mine
            .map(|m| {
                m.iter()
                    .map(|(w, (c, _))| format!("{} {}", esc(w), c.as_str()))
                    .collect()
            })
            .unwrap_or_default();
        let major = mine.and_then(|m| super::gold::majority(m.values().map(|(c, _)| *c)));
        let gold = golds.get(&t).map(|g| g.join(" / "));
        if let Some(g) = golds.get(&t).filter(|g| g.len() == 1) {
            gold_n += 1;
            agree += usize::from(major.is_some_and(|m| m.as_str() == g[0]));
        }
        let _ = write!(
            s,
            "<tr class=\"outcome\"><td class=\"n\">{t}</td><td class=\"who\">{}</td>\
             <td class=\"v\"><span class=\"badge {class}\">{what}</span></td><td>{}</td>\
             <td class=\"v\">{}</td><td class=\"v\">{}</td></tr>",
            sister(&row.speaker),
            if names.is_empty() {
                "—".to_string()
            } else {
                names.join(" · ")
            },
            major.map_or("—", Choice::as_str),
            esc(gold.as_deref().unwrap_or("—"))
        );
    }
    s.push_str("</table>");
    if !golds.is_empty() {
        let _ = write!(
            s,
            "<p class=\"meta\" id=\"gold-counts\">{gold_n} of {} turns have a gold label · {agree} agree with the reviewers' majority</p>",
            rows.len()
        );
    }
    s
}

fn leaked(s: &Side) -> bool {
    s.findings.iter().any(|f| {
        f.rule == crate::director::RuleId::Leak && f.status >= crate::director::Status::Warn
    })
}

/// A turn's A and B as shown (masked whole, or withheld), the diff of those shown lines, and
/// each reviewer's choice with her reason.
fn side_by_side(row: &TurnRow, choices: Option<&Choices>) -> String {
    const WITHHELD: &str = "（秘密に触れたため、この行は表示しません）";
    let a_leak = leaked(&row.a);
    let b_leak = row.b.first().is_some_and(leaked);
    let a = if a_leak {
        WITHHELD.to_string()
    } else {
        safe_text(&row.a.text, None)
    };
    let bt = match row.b.first() {
        Some(_) if b_leak => WITHHELD.to_string(),
        Some(s) => safe_text(&s.text, None),
        None => String::new(),
    };
    let diff: String = if a_leak || b_leak || row.b.is_empty() {
        String::new()
    } else {
        crate::compare::outcome::diff(&a, &bt)
            .iter()
            .map(|p| match p.op.as_str() {
                "delete" => format!("<del>{}</del>", esc(&p.text)),
                "insert" => format!("<ins>{}</ins>", esc(&p.text)),
                _ => esc(&p.text),
            })
            .collect()
    };
    let (what, class) = outcome(row.change);
    let mut s = format!(
        "<h3>turn {} · {} · <span class=\"badge {class}\">{what}</span></h3><div class=\"ab\">\
         <div>A {}<br>{}</div><div>B {}<br>{}</div></div><p class=\"meta diff\">diff: {diff}</p>",
        row.turn,
        sister(&row.speaker),
        badge(row.a.status.as_str()),
        esc(&a),
        row.b
            .first()
            .map(|s| badge(s.status.as_str()))
            .unwrap_or_default(),
        esc(&bt)
    );
    if let Some(c) = choices {
        s.push_str("<ul class=\"choices\">");
        for (who, (choice, reason)) in c {
            let _ = write!(
                s,
                "<li>{}: {}{}</li>",
                esc(who),
                choice.as_str(),
                if reason.trim().is_empty() {
                    String::new()
                } else if a_leak || b_leak {
                    // A reason may quote the line that touched a secret.
                    " (reason not shown: a line of this turn touched a secret)".to_string()
                } else {
                    format!(" 「{}」", esc(&safe_text(reason, None)))
                }
            );
        }
        s.push_str("</ul>");
    }
    s
}
