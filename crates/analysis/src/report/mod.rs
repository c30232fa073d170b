//! `kakeai report`: one self-contained HTML page — inline CSS and SVG, no script, no network —
//! for a run, a period or a comparison, that writers and the operator can open and share. A
//! turn shows each reviewer's marks in force (the store's one fold: a regeneration voids the
//! marks made before it), the verdict overrides put in force, the lead's gold label and every
//! attempt it did not commit (see [`attempts`]); a period adds a trend by day ([`trend`]).
//!
//! What is shown is what the store holds, made safe first: every line goes through the PII
//! masker, and the span of every leak finding (WARN or worse) is blacked out, so a line that
//! leaked a secret never carries it into the page; prompts (where the vault's text lives) are
//! never included. Everything from a model, a user or a file is escaped. A figure that cannot be
//! computed says so.

pub mod attempts;
mod compare;
pub mod gold;
pub mod html;
pub mod queues;
pub mod svg;
pub mod trend;

pub use compare::{compare_report, compare_runs};

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use serde_json::Value;

use crate::annotate::alpha;
use crate::store::review::{Marks, by_reviewer};
use crate::store::{ActionKind, AttemptRow, RunRecord, Store, StoreError};
use html::{badge, esc, missing};
use svg::Bar;

/// The five judge aspects, in the judge's order.
pub const ASPECTS: [&str; 5] = ["frame", "roleplay", "connection", "density", "naturalness"];

/// What replaces a leaked span.
pub const BLACKED: &str = "■■";

/// A line as the page may show it: leak spans blacked out, then PII masked.
pub fn safe_text(text: &str, verdict: Option<&Value>) -> String {
    let mut chars: Vec<char> = text.chars().collect();
    let mut spans: Vec<(usize, usize)> = verdict
        .and_then(|v| v.get("findings"))
        .and_then(Value::as_array)
        .map(|fs| {
            fs.iter()
                .filter(|f| f["rule"] == "leak")
                .filter(|f| matches!(f["status"].as_str(), Some("WARN" | "RETRY" | "MODIFY")))
                .filter_map(|f| {
                    let s = f["span"].as_array()?;
                    Some((s.first()?.as_u64()? as usize, s.get(1)?.as_u64()? as usize))
                })
                .collect()
        })
        .unwrap_or_default();
    let leaked_without_span = verdict
        .and_then(|v| v.get("findings"))
        .and_then(Value::as_array)
        .is_some_and(|fs| {
            fs.iter().any(|f| {
                f["rule"] == "leak"
                    && matches!(f["status"].as_str(), Some("WARN" | "RETRY" | "MODIFY"))
                    && !f["span"].is_array()
            })
        });
    // A leak whose place is unknown, or a span outside the text: the whole line is withheld.
    if leaked_without_span || spans.iter().any(|(a, b)| a >= b || *b > chars.len()) {
        return "（秘密に触れたため、この行は表示しません）".into();
    }
    spans.sort_unstable();
    for (a, b) in spans.into_iter().rev() {
        chars.splice(a..b, BLACKED.chars());
    }
    let blacked: String = chars.into_iter().collect();
    crate::safety::pii::shared().mask(&blacked).masked_text
}

/// One committed turn, read for the page.
struct Turn {
    turn: u32,
    speaker: String,
    /// The Director's verdict on the committed line.
    status: String,
    text: String,
    tone: Option<f64>,
    judge: Option<[f64; 5]>,
    rules: BTreeSet<String>,
    /// Reviewer → fine.
    labels: BTreeMap<String, bool>,
    /// Reviewer → her marks in force (the override's target, reason and from).
    marks: BTreeMap<String, Marks>,
    /// Her fallback line was committed because the leak review rejected the picked attempt.
    withheld: bool,
    /// Every attempt the turn made.
    attempts: usize,
    /// The attempts not committed (and a withheld one), as the page may show them.
    rejected: Vec<attempts::Shown>,
    /// The lead's gold label: Some(Ok(fine)), or Some(Err) when two queues disagree.
    gold: Option<Result<gold::Gold, ()>>,
}

impl Turn {
    /// A never-leak rule spoke on the committed line, or it was withheld: what reviewers wrote
    /// about it (reasons) may quote it and is not shown.
    fn guarded(&self) -> bool {
        self.withheld
            || self.rules.iter().any(|r| {
                crate::director::ruleset::PROTECTED
                    .iter()
                    .any(|p| p.as_str() == r)
            })
    }
}

fn committed_attempt(rec: &RunRecord, id: Option<i64>) -> Option<&AttemptRow> {
    id.and_then(|id| rec.attempts.iter().find(|a| a.id == id))
}

fn judge_scores(a: &AttemptRow) -> Option<[f64; 5]> {
    let j = a.judge.as_ref()?;
    let s = j.get("scores").filter(|s| s.is_object()).unwrap_or(j);
    let mut out = [0.0; 5];
    for (i, k) in ASPECTS.iter().enumerate() {
        out[i] = s.get(*k)?.as_f64()?;
    }
    Some(out)
}

fn turns(store: &Store, rec: &RunRecord) -> Result<Vec<Turn>, StoreError> {
    let mut marks = by_reviewer(&rec.actions);
    let mut golds = gold::of_run(store.db(), rec.run.id)?;
    Ok(rec
        .turns
        .iter()
        .map(|t| {
            let a = committed_attempt(rec, t.attempt_id);
            let verdict = a.and_then(|a| a.verdict.as_ref());
            let rules = verdict
                .and_then(|v| v["findings"].as_array())
                .map(|fs| {
                    fs.iter()
                        .filter(|f| {
                            matches!(f["status"].as_str(), Some("WARN" | "RETRY" | "MODIFY"))
                        })
                        .filter_map(|f| f["rule"].as_str().map(String::from))
                        .collect()
                })
                .unwrap_or_default();
            let all: Vec<&AttemptRow> = rec.attempts_of(t.turn).collect();
            let marks = marks.remove(&t.turn).unwrap_or_default();
            Turn {
                turn: t.turn,
                speaker: t.speaker.clone(),
                status: t.status.as_str().to_string(),
                // A withheld turn's text is her fallback line: the leaked attempt's spans do
                // not apply to it (that text never reaches the page either way).
                text: safe_text(&t.text, verdict.filter(|_| !t.flags.withheld)),
                tone: verdict.and_then(|v| v["tone"]["score"].as_f64()),
                judge: a.and_then(judge_scores),
                rules,
                labels: marks
                    .iter()
                    .filter_map(|(w, m)| Some((w.clone(), m.fine()?)))
                    .collect(),
                marks,
                withheld: t.flags.withheld,
                attempts: all.len(),
                rejected: attempts::shown(&all, t.attempt_id, t.flags.withheld),
                gold: golds.remove(&t.turn),
            }
        })
        .collect())
}

fn sister(id: &str) -> &str {
    crate::store::export::speaker_name(id)
}

/// The page for one stored run.
pub fn run_report(store: &Store, run_id: i64) -> Result<String, StoreError> {
    let rec = store.load_run(run_id)?;
    let ts = turns(store, &rec)?;
    let r = &rec.run;
    let mut b = String::new();
    let _ = write!(
        b,
        "<h1>{}</h1><p class=\"meta\">run {} · {} · {} · ruleset {} · {} · {} turns</p>",
        esc(&r.topic),
        r.id,
        esc(r.model.as_deref().unwrap_or("(model unknown)")),
        esc(&r.started_at),
        esc(r.ruleset_version.as_deref().unwrap_or("?")),
        esc(r.status.as_str()),
        ts.len()
    );
    b.push_str(&fit_section(store, &rec)?);
    b.push_str("<h2>判定（Director）</h2><div class=\"grid2\">");
    b.push_str(&verdict_chart(&ts));
    b.push_str(&rule_chart(&ts));
    b.push_str("</div><h2>口調と審査員の評価</h2><div class=\"grid2\">");
    let tone: Vec<(u32, f64)> = ts
        .iter()
        .filter_map(|t| t.tone.map(|v| (t.turn, v)))
        .collect();
    if tone.is_empty() {
        b.push_str(&missing("口調スコア", "no turn carries a tone score"));
    } else {
        b.push_str(&svg::line("tone", "口調スコア（0–3）の推移", &tone, 3.0));
    }
    b.push_str(&aspect_chart(&ts));
    b.push_str("</div><h2>レビュアーの一致度</h2>");
    b.push_str(&agreement(&ts));
    b.push_str(&gold_section(&ts));
    b.push_str("<h2>会話</h2>");
    b.push_str(&turn_table(&ts));
    Ok(html::page(&format!("kakeai report · {}", r.topic), &b))
}

/// What the run's prompts left out to fit the context, as counts from each stored request's
/// fit report (never the text): said loudly when vault sections were dropped.
fn fit_section(store: &Store, rec: &RunRecord) -> Result<String, StoreError> {
    let (mut known, mut fitted, mut lost, mut history) = (0, 0, 0, 0u64);
    let mut levels: BTreeMap<u64, u64> = BTreeMap::new();
    for a in &rec.attempts {
        let Some(fit) = store.request_of(a.id)?.and_then(|r| r.get("fit").cloned()) else {
            continue;
        };
        known += 1;
        let h = fit["history"].as_u64().unwrap_or(0);
        let vault: Vec<(u64, u64)> = fit["vault"]
            .as_object()
            .map(|o| {
                o.iter()
                    .filter_map(|(k, v)| Some((k.parse().ok()?, v.as_u64()?)))
                    .collect()
            })
            .unwrap_or_default();
        let g = fit["guidance"].as_u64().unwrap_or(0);
        let v: u64 = vault.iter().map(|(_, n)| n).sum();
        fitted += usize::from(h + v + g > 0);
        lost += usize::from(v > 0);
        history += h;
        for (l, n) in vault {
            *levels.entry(l).or_default() += n;
        }
    }
    if known == 0 {
        return Ok(String::new());
    }
    let mut b = format!(
        "<h2>文脈に収めるための省略</h2><p class=\"meta\">{fitted} of {known} requests left \
         something out to fit the context · {history} earlier messages"
    );
    for (l, n) in levels.iter().rev() {
        let _ = write!(b, " · vault L{l} ×{n}");
    }
    b.push_str("</p>");
    if lost > 0 {
        let _ = write!(
            b,
            "<p>{} {lost} of {known} requests were sent without some vault sections: raise \
             num_ctx (and the server's context) or shorten the persona, world or vault \
             context.</p>",
            badge("WARN")
        );
    }
    Ok(b)
}

fn verdict_chart(ts: &[Turn]) -> String {
    let rows: Vec<Bar> = ["yana", "ayu"]
        .iter()
        .map(|sp| {
            let count = |s: &str| {
                ts.iter()
                    .filter(|t| t.speaker == *sp && t.status == s)
                    .count() as f64
            };
            let other = ts
                .iter()
                .filter(|t| {
                    t.speaker == *sp && !matches!(t.status.as_str(), "PASS" | "WARN" | "RETRY")
                })
                .count() as f64;
            Bar {
                label: sister(sp).to_string(),
                parts: vec![
                    (count("PASS"), "PASS"),
                    (count("WARN"), "WARN"),
                    (count("RETRY"), "RETRY"),
                    (other, "other"),
                ],
            }
        })
        .collect();
    svg::bars(
        "verdicts",
        "姉妹ごとの判定（PASS / WARN / RETRY / その他）",
        &rows,
        None,
    )
}

fn rule_chart(ts: &[Turn]) -> String {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for t in ts {
        for r in &t.rules {
            *counts.entry(r.as_str()).or_default() += 1;
        }
    }
    if counts.is_empty() {
        return missing(
            "ルール",
            "no rule fired at WARN or worse on a committed line",
        );
    }
    let rows: Vec<Bar> = counts
        .iter()
        .map(|(r, n)| Bar {
            label: r.to_string(),
            parts: vec![(*n as f64, "plain")],
        })
        .collect();
    svg::bars("rules", "ルールごとの件数（WARN 以上）", &rows, None)
}

fn aspect_chart(ts: &[Turn]) -> String {
    let scored: Vec<[f64; 5]> = ts.iter().filter_map(|t| t.judge).collect();
    if scored.is_empty() {
        return missing("審査員の観点", "no committed line was scored by the judge");
    }
    let rows: Vec<Bar> = ASPECTS
        .iter()
        .enumerate()
        .map(|(i, a)| Bar {
            label: a.to_string(),
            parts: vec![(
                scored.iter().map(|s| s[i]).sum::<f64>() / scored.len() as f64,
                "plain",
            )],
        })
        .collect();
    svg::bars(
        "aspects",
        &format!("審査員の観点（平均、{} 行、1–5）", scored.len()),
        &rows,
        Some(5.0),
    )
}

/// α among reviewers (overall, per sister) and, per rule, α with the Director as one more
/// coder ("this rule fired" = not fine).
fn agreement(ts: &[Turn]) -> String {
    let units = |pick: &dyn Fn(&Turn) -> bool| -> Vec<Vec<bool>> {
        ts.iter()
            .filter(|t| pick(t))
            .map(|t| t.labels.values().copied().collect())
            .collect()
    };
    let mut s = String::from("<table><tr><th>範囲</th><th>Krippendorff α</th></tr>");
    let _ = write!(
        s,
        "<tr><td>レビュアー全員</td><td>{}</td></tr>",
        esc(&alpha::describe(alpha::nominal(&units(&|_| true))))
    );
    for sp in ["yana", "ayu"] {
        let a = alpha::nominal(&units(&|t: &Turn| t.speaker == sp));
        let _ = write!(
            s,
            "<tr><td>{}</td><td>{}</td></tr>",
            sister(sp),
            esc(&alpha::describe(a))
        );
    }
    let rules: BTreeSet<&str> = ts
        .iter()
        .flat_map(|t| t.rules.iter().map(String::as_str))
        .collect();
    for r in rules {
        let u: Vec<Vec<bool>> = ts
            .iter()
            .filter(|t| !t.labels.is_empty())
            .map(|t| {
                let mut v: Vec<bool> = t.labels.values().copied().collect();
                v.push(!t.rules.contains(r));
                v
            })
            .collect();
        let _ = write!(
            s,
            "<tr><td>ルール {} と Director</td><td>{}</td></tr>",
            esc(r),
            esc(&alpha::describe(alpha::nominal(&u)))
        );
    }
    s.push_str("</table>");
    s
}

/// An override as the page says it: `✎` when it changed the Director's verdict, `=` when it
/// confirmed it (the verdict it replaced is the payload's `from`, else the Director's).
fn override_sign(m: &Marks, director: &str) -> &'static str {
    let from = m.override_from.map_or(director, |s| s.as_str());
    if m.override_to.is_some_and(|to| to.as_str() == from) {
        "="
    } else {
        "✎"
    }
}

/// The verdict cell: the Director's badge, then each verdict the reviewers' overrides put in
/// force instead (two when reviewers disagree — both are shown, none is picked).
fn verdict_cell(t: &Turn) -> String {
    let mut s = badge(&t.status);
    let mut seen: Vec<&str> = Vec::new();
    for m in t.marks.values() {
        let Some(to) = m.override_to.map(|s| s.as_str()) else {
            continue;
        };
        if !seen.contains(&to) {
            seen.push(to);
            let _ = write!(
                s,
                "<div class=\"forced\">→ {}{}</div>",
                badge(to),
                override_sign(m, &t.status)
            );
        }
    }
    s
}

/// Each reviewer's marks in force: 👍/👎, the override (from → to, ✎ or =, the reason), notes.
fn marks_line(t: &Turn) -> String {
    let mut parts = Vec::new();
    for (who, m) in &t.marks {
        let mut p = format!("<span class=\"who\">{}</span>", esc(who));
        if let Some(up) = m.thumb {
            p.push_str(if up { " 👍" } else { " 👎" });
        }
        if let Some(to) = m.override_to {
            let from = m.override_from.map_or(t.status.as_str(), |s| s.as_str());
            let _ = write!(
                p,
                " {} {} → {}",
                override_sign(m, &t.status),
                esc(from),
                esc(to.as_str())
            );
            match m.override_reason.as_deref().map(str::trim) {
                // A reason may quote the line that touched a secret.
                Some(r) if !r.is_empty() && t.guarded() => {
                    p.push_str(" (reason not shown: the line touched a secret)")
                }
                Some(r) if !r.is_empty() => {
                    let _ = write!(p, " 「{}」", esc(&safe_text(r, None)));
                }
                _ => p.push_str(" (no reason given)"),
            }
        }
        if m.notes > 0 {
            let _ = write!(p, " 📝{}", m.notes);
        }
        parts.push(p);
    }
    if let Some(g) = &t.gold {
        parts.push(gold::cell(g, t.guarded()));
    }
    if parts.is_empty() {
        return String::new();
    }
    format!("<div class=\"marks\">{}</div>", parts.join(" · "))
}

fn turn_table(ts: &[Turn]) -> String {
    let mut s = String::from(
        "<table id=\"turns\"><tr><th class=\"n\">#</th><th class=\"who\">姉妹</th>\
         <th class=\"v\">判定</th><th>発言</th></tr>",
    );
    for t in ts {
        let withheld = if t.withheld {
            "<p class=\"withheld\">（リーク審査が選ばれた行を止めたため、彼女の代わりの行を載せています）</p>"
        } else {
            ""
        };
        let tried = if t.rejected.is_empty() {
            String::new()
        } else {
            format!(
                "<div class=\"meta\">{} attempt(s) · {} not committed</div>{}",
                t.attempts,
                t.rejected.len(),
                attempts::html(&t.rejected)
            )
        };
        let _ = write!(
            s,
            "<tr><td class=\"n\">{}</td><td class=\"who\">{}</td><td class=\"v\">{}</td>\
             <td class=\"text\"><div class=\"line\">{}</div>{withheld}{}{tried}</td></tr>",
            t.turn,
            sister(&t.speaker),
            verdict_cell(t),
            esc(&t.text),
            marks_line(t)
        );
    }
    s.push_str("</table>");
    s
}

/// The page for every run started in [since, until): verdicts, rules, judge aspects and
/// agreement over all of them, and one row per run.
pub fn period_report(
    store: &Store,
    since: Option<&str>,
    until: Option<&str>,
) -> Result<String, StoreError> {
    let ids = period_runs(store, since, until)?;
    let mut all = Vec::new();
    let mut days: BTreeMap<String, trend::Day> = BTreeMap::new();
    let mut rows = String::from(
        "<table id=\"runs\"><tr><th class=\"n\">run</th><th>話題</th><th class=\"v\">PASS</th></tr>",
    );
    for id in &ids {
        let rec = store.load_run(*id)?;
        let ts = turns(store, &rec)?;
        let pass = ts.iter().filter(|t| t.status == "PASS").count();
        let _ = write!(
            rows,
            "<tr><td class=\"n\">{id}</td><td>{}</td><td class=\"v\">{pass}/{}</td></tr>",
            esc(&safe_text(&rec.run.topic, None)),
            ts.len()
        );
        add_day(
            days.entry(trend::day_of(&rec.run.started_at)).or_default(),
            &ts,
        );
        all.extend(ts);
    }
    rows.push_str("</table>");
    let span = format!("{} – {}", since.unwrap_or("…"), until.unwrap_or("…"));
    let mut b = format!(
        "<h1>期間 {}</h1><p class=\"meta\">{} runs · {} turns</p>",
        esc(&span),
        ids.len(),
        all.len()
    );
    if all.is_empty() {
        b.push_str(&missing(
            "runs",
            "no run with a committed turn started in this period",
        ));
    }
    b.push_str(&trend::section(&days));
    b.push_str("<h2>判定（Director）</h2><div class=\"grid2\">");
    b.push_str(&verdict_chart(&all));
    b.push_str(&rule_chart(&all));
    b.push_str("</div><h2>審査員の評価</h2>");
    b.push_str(&aspect_chart(&all));
    b.push_str("<h2>レビュアーの一致度</h2>");
    b.push_str(&agreement(&all));
    b.push_str(&gold_section(&all));
    b.push_str(&queues::section(store, crate::patterns::stamp::now_ms()));
    b.push_str("<h2>ラン</h2>");
    b.push_str(&rows);
    Ok(html::page(&format!("kakeai report {span}"), &b))
}

/// The runs started in [since, until), by id: the period report's runs.
pub fn period_runs(
    store: &Store,
    since: Option<&str>,
    until: Option<&str>,
) -> Result<Vec<i64>, StoreError> {
    Ok(store.db().query_map(
        "SELECT id FROM runs WHERE (CAST(?1 AS TEXT) IS NULL OR started_at >= ?1)
           AND (CAST(?2 AS TEXT) IS NULL OR started_at < ?2) ORDER BY id",
        crate::p![since, until],
        |r| r.get(0),
    )?)
}

/// Adds one run's turns to its day.
fn add_day(d: &mut trend::Day, ts: &[Turn]) {
    d.runs += 1;
    for t in ts {
        d.turns += 1;
        d.attempts += t.attempts;
        d.labels += t.labels.len();
        d.fine += t.labels.values().filter(|f| **f).count();
        if let Some(j) = t.judge {
            d.judge_sum += j.iter().sum::<f64>() / 5.0;
            d.judged += 1;
        }
    }
}

fn gold_section(ts: &[Turn]) -> String {
    gold::section(&gold::count(
        ts.iter()
            .map(|t| (t.gold.as_ref(), t.labels.values().copied().collect())),
    ))
}

/// The secret-keeping scorecard (per secret and reader) over the report's `runs` runs, as a
/// section: ids and counts only — never a secret's text.
pub fn scorecard_section(rows: &[crate::vault::scorecard::Row], work: &str, runs: usize) -> String {
    let mut s = format!(
        "<h2>秘密の守られ方（{}）</h2><p class=\"meta\">this report's {runs} run(s) only: lines \
         of other runs and chat replies are not counted</p><table id=\"scorecard\"><tr><th>secret</th><th class=\"who\">reader</th>\
         <th class=\"n\">L</th><th>model</th><th class=\"v\">leaked</th><th class=\"v\">warn</th>\
         <th class=\"v\">reviewed</th></tr>",
        esc(work)
    );
    let current: Vec<_> = rows.iter().filter(|r| r.current).collect();
    if current.is_empty() {
        return format!(
            "{s}</table>{}",
            missing(
                "scorecard",
                "no line of these runs was reviewed against this vault as it is now"
            )
        );
    }
    for r in current {
        let _ = write!(
            s,
            "<tr><td>{}</td><td class=\"who\">{}</td><td class=\"n\">{}</td><td>{}</td>\
             <td class=\"v\">{}</td><td class=\"v\">{}</td><td class=\"v\">{}{}</td></tr>",
            esc(&r.secret),
            sister(&r.reader),
            r.level,
            esc(&r.model),
            r.leaked,
            r.warn,
            r.reviewed,
            if r.without_semantic > 0 {
                format!(" ({} without the semantic check)", r.without_semantic)
            } else {
                String::new()
            }
        );
    }
    s.push_str("</table>");
    s
}

/// Kinds of actions the report reads (for documentation and tests).
pub const READ: [ActionKind; 4] = [
    ActionKind::Thumb,
    ActionKind::Override,
    ActionKind::Undo,
    ActionKind::Regenerate,
];
