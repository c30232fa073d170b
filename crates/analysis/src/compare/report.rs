//! A comparison printed: JSON (the stable shape: `comparison`, `turns`, `summary`), a terminal
//! table, or markdown.

use serde_json::json;

use super::db::Stored;
use super::outcome::{Change, Piece, Side, Summary, headline};
use crate::text::sanitize::for_terminal;

pub fn json(s: &Stored) -> String {
    let v = json!({
        "comparison": {
            "id": s.id,
            "kind": s.header.kind,
            "baseline_run": s.header.baseline_run,
            "variant": {
                "name": s.header.variant_name,
                "path": s.header.variant_path,
                "hash": s.header.variant_hash,
            },
            "model": s.header.model,
            "endpoint": s.header.endpoint,
            "options": s.header.options,
            "sample_runs": s.header.sample_runs,
            "created_at": s.created_at,
        },
        "turns": s.turns,
        "summary": s.summary,
        "unpaired": s.unpaired,
    });
    serde_json::to_string_pretty(&v).unwrap_or_default()
}

fn badge(a: &Side, b: &[Side]) -> String {
    match b.first() {
        Some(f) => format!("{}→{}", a.status, f.status),
        None => a.status.to_string(),
    }
}

/// `WARN→PASS` style text of a diff: `[-deleted-]{+inserted+}`.
pub fn diff_text(d: &[Piece]) -> String {
    d.iter()
        .map(|p| match p.op.as_str() {
            "delete" => format!("[-{}-]", p.text),
            "insert" => format!("{{+{}+}}", p.text),
            _ => p.text.clone(),
        })
        .collect()
}

fn mean_judge(b: &[Side]) -> String {
    let xs: Vec<f64> = b.iter().filter_map(|s| s.judge_mean).collect();
    if xs.is_empty() {
        return "-".into();
    }
    format!("{:.1}", xs.iter().sum::<f64>() / xs.len() as f64)
}

fn change_word(c: Change) -> &'static str {
    match c {
        Change::Better => "better",
        Change::Same => "same",
        Change::Worse => "WORSE",
    }
}

fn summary_lines(s: &Summary) -> Vec<String> {
    let mut out = vec![headline(s)];
    if let Some(note) = super::outcome::gate_note(s) {
        out.push(note);
    }
    out.push(format!(
        "mean attempts A {:.2}  B {:.2}",
        s.mean_attempts[0], s.mean_attempts[1]
    ));
    for (i, side) in ["A", "B"].iter().enumerate() {
        if let Some(j) = s.judge_aspects[i] {
            out.push(format!(
                "judge {side}: frame {:.2} roleplay {:.2} connection {:.2} density {:.2} naturalness {:.2}",
                j[0], j[1], j[2], j[3], j[4]
            ));
        }
    }
    for (rule, c) in &s.rules {
        out.push(format!("rule {rule}: A {}  B {}", c.a, c.b));
    }
    for r in &s.must_not_regress {
        out.push(format!(
            "must_not_regress: {} fired in B on turn {}",
            r.rule, r.turn
        ));
    }
    out
}

pub fn table(s: &Stored) -> String {
    let mut out = format!(
        "comparison {} · run {} vs {} ({})\n",
        s.id,
        s.header
            .baseline_run
            .map(|r| r.to_string())
            .unwrap_or("-".into()),
        s.header.variant_name,
        s.header.variant_hash
    );
    out.push_str("turn  speaker  A→B          judge A/B  change  diff\n");
    for r in &s.turns {
        out.push_str(&format!(
            "{:>4}  {:<7}  {:<11}  {:>4}/{:<4}  {:<6}  {}\n",
            r.turn,
            r.speaker,
            badge(&r.a, &r.b),
            r.a.judge_mean
                .map(|m| format!("{m:.1}"))
                .unwrap_or("-".into()),
            mean_judge(&r.b),
            change_word(r.change),
            for_terminal(&diff_text(&r.diff).replace('\n', "⏎")),
        ));
    }
    match &s.summary {
        Some(sum) => {
            for l in summary_lines(sum) {
                out.push_str(&l);
                out.push('\n');
            }
        }
        None => out.push_str("(unfinished: no summary)\n"),
    }
    out
}

pub fn markdown(s: &Stored) -> String {
    let mut out = format!(
        "# Comparison {}\n\nBaseline run {}, variant `{}` ({}).\n\n",
        s.id,
        s.header
            .baseline_run
            .map(|r| r.to_string())
            .unwrap_or("-".into()),
        s.header.variant_name,
        s.header.variant_hash
    );
    if let Some(sum) = &s.summary {
        out.push_str(&format!("**{}**\n\n", headline(sum)));
    }
    out.push_str("| turn | speaker | A | B | verdict | change |\n|---|---|---|---|---|---|\n");
    let cell = |t: &str| t.replace('|', "\\|").replace('\n', "<br>");
    for r in &s.turns {
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} |\n",
            r.turn,
            r.speaker,
            cell(&r.a.text),
            cell(r.b.first().map(|b| b.text.as_str()).unwrap_or("")),
            badge(&r.a, &r.b),
            change_word(r.change)
        ));
    }
    if let Some(sum) = &s.summary {
        out.push('\n');
        for l in summary_lines(sum).iter().skip(1) {
            out.push_str(&format!("- {l}\n"));
        }
    }
    out
}
