//! Export of one stored run: JSON Lines (one record per line, for tools) and a markdown
//! transcript (for people).

use std::io::{self, Write};

use serde_json::{Value, json};

use super::{ActionRow, AttemptRow, RunRecord, TurnRow};
use crate::director::Status;

/// Display name of a character id.
pub fn speaker_name(id: &str) -> &str {
    match id {
        "yana" => "やな",
        "ayu" => "あゆ",
        other => other,
    }
}

/// Turn numbers that have a commit or any attempt, ascending.
fn turn_numbers(rec: &RunRecord) -> Vec<u32> {
    let mut t: Vec<u32> = rec
        .turns
        .iter()
        .map(|t| t.turn)
        .chain(rec.attempts.iter().map(|a| a.turn))
        .collect();
    t.sort_unstable();
    t.dedup();
    t
}

fn committed_turn(rec: &RunRecord, turn: u32) -> Option<&TurnRow> {
    if rec.turns.is_sorted_by_key(|t| t.turn) {
        let i = rec.turns.partition_point(|t| t.turn < turn);
        rec.turns.get(i).filter(|t| t.turn == turn)
    } else {
        rec.turns.iter().find(|t| t.turn == turn)
    }
}

/// Writes text with terminal controls (escape sequences, BEL …) removed: what a server sent
/// must not clear or retitle the terminal of whoever `cat`s the export.
struct NoControls<'a>(&'a mut dyn Write);

impl Write for NoControls<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match std::str::from_utf8(buf) {
            Ok(s) => self
                .0
                .write_all(crate::text::sanitize::for_terminal(s).as_bytes())?,
            Err(_) => self.0.write_all(
                crate::text::sanitize::for_terminal(&String::from_utf8_lossy(buf)).as_bytes(),
            )?,
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

/// The findings of an attempt's Director verdict (empty when it was not judged).
fn findings(a: &AttemptRow) -> Value {
    a.verdict
        .as_ref()
        .and_then(|v| v.get("findings"))
        .cloned()
        .unwrap_or_else(|| json!([]))
}

/// `run`, then per turn its `attempt`s and the `turn` commit, then `action`s.
pub fn jsonl(rec: &RunRecord, w: &mut dyn Write) -> io::Result<()> {
    line(w, "run", &to_value(&rec.run)?)?;
    for turn in turn_numbers(rec) {
        let commit = committed_turn(rec, turn);
        for a in rec.attempts_of(turn) {
            let v = json!({
                "id": a.id,
                "turn": a.turn,
                "attempt": a.attempt,
                "speaker": a.speaker,
                "state": a.state,
                "committed": commit.is_some_and(|t| t.attempt_id == Some(a.id)),
                "text": a.text,
                "status": a.status,
                "findings": findings(a),
                "judge": a.judge,
                "judge_raw": a.judge_raw,
                "guidance": a.guidance,
                "prompt_hash": a.prompt_hash,
                "timings": {
                    "started_at": a.started_at,
                    "first_token_ms": a.first_token_ms,
                    "latency_ms": a.latency_ms,
                    "tokens": a.tokens,
                },
                "error": a.error,
                "fallback": a.fallback,
                "origin": a.origin,
            });
            line(w, "attempt", &v)?;
        }
        if let Some(t) = commit {
            line(w, "turn", &to_value(t)?)?;
        }
    }
    for a in &rec.actions {
        line(w, "action", &to_value(a)?)?;
    }
    Ok(())
}

fn to_value(v: &impl serde::Serialize) -> io::Result<Value> {
    serde_json::to_value(v).map_err(io::Error::other)
}

/// Writes `{"record": KIND, ...v}` on one line, the discriminator first for people reading
/// the file (serde_json would otherwise sort it among the fields).
fn line(w: &mut dyn Write, record: &str, v: &Value) -> io::Result<()> {
    let body = serde_json::to_string(v).map_err(io::Error::other)?;
    let rest = body.strip_prefix('{').unwrap_or("}");
    let sep = if rest == "}" { "" } else { "," };
    writeln!(w, "{{\"record\":\"{record}\"{sep}{rest}")
}

/// A readable transcript: heading, each turn with its badge, earlier attempts with their
/// reasons, reviewer actions.
pub fn markdown(rec: &RunRecord, w: &mut dyn Write) -> io::Result<()> {
    let w = &mut NoControls(w);
    heading(rec, w)?;
    let turns = turn_numbers(rec);
    let mut by_turn: std::collections::HashMap<u32, Vec<&ActionRow>> = Default::default();
    for a in &rec.actions {
        if let Some(t) = a.turn {
            by_turn.entry(t).or_default().push(a);
        }
    }
    for &turn in &turns {
        let acts = by_turn.get(&turn).map(Vec::as_slice).unwrap_or_default();
        turn_section(rec, turn, acts, w)?;
    }
    let loose: Vec<&ActionRow> = rec
        .actions
        .iter()
        .filter(|a| a.turn.is_none_or(|t| turns.binary_search(&t).is_err()))
        .collect();
    if !loose.is_empty() {
        writeln!(w, "\n## Reviewer actions\n")?;
        for a in loose {
            action_item(w, a)?;
        }
    }
    Ok(())
}

fn heading(rec: &RunRecord, w: &mut dyn Write) -> io::Result<()> {
    let r = &rec.run;
    let title = if r.topic.trim().is_empty() {
        "(no topic)"
    } else {
        r.topic.lines().next().unwrap_or("")
    };
    writeln!(w, "# {title}\n")?;
    writeln!(w, "- run: {} ({})", r.id, r.status)?;
    writeln!(w, "- model: {}", r.model.as_deref().unwrap_or("unknown"))?;
    writeln!(w, "- started: {}", r.started_at)?;
    if let Some(e) = &r.ended_at {
        writeln!(w, "- ended: {e}")?;
    }
    if let Some(s) = &r.source {
        writeln!(w, "- source: {s}")?;
    }
    if let Some(v) = &r.ruleset_version {
        writeln!(w, "- ruleset: {v}")?;
    }
    if let Some(e) = &r.error {
        writeln!(w, "- error: {e}")?;
    }
    if r.topic.lines().count() > 1 {
        writeln!(w, "\n{}", quote(&r.topic))?;
    }
    Ok(())
}

/// One turn: speaker and badge, the committed line, attempts not kept, reviewer actions.
fn turn_section(
    rec: &RunRecord,
    turn: u32,
    acts: &[&ActionRow],
    w: &mut dyn Write,
) -> io::Result<()> {
    let commit = committed_turn(rec, turn);
    let attempts: Vec<&AttemptRow> = rec.attempts_of(turn).collect();
    let speaker = commit
        .map(|t| t.speaker.as_str())
        .or(attempts.first().map(|a| a.speaker.as_str()))
        .unwrap_or("?");
    write!(w, "\n## {turn}. **{}**", speaker_name(speaker))?;
    match commit {
        Some(t) => {
            write!(w, " `{}`", t.status.as_str())?;
            for (on, name) in [
                (t.flags.exhausted, "exhausted"),
                (t.flags.futile, "futile"),
                (t.flags.held, "held"),
            ] {
                if on {
                    write!(w, " _{name}_")?;
                }
            }
            writeln!(w, "\n\n{}", quote(&t.text))?;
            let kept = attempts.iter().find(|a| t.attempt_id == Some(a.id));
            let why = kept.map(|a| committed_reasons(a)).unwrap_or_default();
            if !why.is_empty() {
                writeln!(w, "\nDirector: {}", why.join("; "))?;
            }
            if let Some(f) = kept.and_then(|a| a.fallback.as_ref()) {
                writeln!(w, "\nstreaming gave up, one non-stream call answered: {f}")?;
            }
            if let Some(h) = &t.hook {
                let depth = t
                    .hook_depth
                    .map(|d| format!(" (depth {d})"))
                    .unwrap_or_default();
                writeln!(w, "\nhook: {h}{depth}")?;
            }
        }
        None => writeln!(w, " (not committed)")?,
    }
    let others: Vec<&&AttemptRow> = attempts
        .iter()
        .filter(|a| commit.is_none_or(|t| t.attempt_id != Some(a.id)))
        .collect();
    if !others.is_empty() {
        writeln!(w, "\nAttempts not kept:\n")?;
        for a in others {
            attempt_item(w, a)?;
        }
    }
    if !acts.is_empty() {
        writeln!(w, "\nReviewer actions:\n")?;
        for a in acts {
            action_item(w, a)?;
        }
    }
    Ok(())
}

fn attempt_item(w: &mut dyn Write, a: &AttemptRow) -> io::Result<()> {
    let badge = a.status.map(Status::as_str).unwrap_or("not judged");
    write!(w, "- attempt {} `{badge}` ({})", a.attempt, a.state)?;
    let reasons = reasons(a);
    if !reasons.is_empty() {
        write!(w, ": {}", reasons.join("; "))?;
    }
    writeln!(w)?;
    if let Some(t) = a.text.as_deref().filter(|t| !t.trim().is_empty()) {
        writeln!(w, "{}", indent(&quote(t)))?;
    }
    if let Some(e) = &a.error {
        writeln!(w, "  - error: {e}")?;
    }
    if let Some(f) = &a.fallback {
        writeln!(
            w,
            "  - streaming gave up, one non-stream call answered: {f}"
        )?;
    }
    Ok(())
}

/// Why the committed line got its badge: the Director's findings, else the imported
/// director event's reason, else what was logged for the attempt.
fn committed_reasons(a: &AttemptRow) -> Vec<String> {
    let director = a
        .origin
        .as_ref()
        .and_then(|o| o.pointer("/director/reason"))
        .and_then(Value::as_str);
    match director {
        Some(r) if findings(a).as_array().is_none_or(|f| f.is_empty()) => vec![r.to_string()],
        _ => reasons(a),
    }
}

/// Why an attempt was judged as it was: its Director findings, else what the source logged.
fn reasons(a: &AttemptRow) -> Vec<String> {
    let from_verdict: Vec<String> = findings(a)
        .as_array()
        .into_iter()
        .flatten()
        .filter(|f| {
            !matches!(
                f.get("status").and_then(Value::as_str),
                Some("PASS" | "INFO")
            )
        })
        .filter_map(|f| f.get("message").and_then(Value::as_str).map(str::to_string))
        .collect();
    if !from_verdict.is_empty() {
        return from_verdict;
    }
    let o = a.origin.as_ref();
    ["reason", "retry_reason"]
        .iter()
        .filter_map(|k| o.and_then(|o| o.get(*k)).and_then(Value::as_str))
        .map(str::to_string)
        .fold(Vec::new(), |mut v, s| {
            if !v.contains(&s) {
                v.push(s);
            }
            v
        })
}

fn action_item(w: &mut dyn Write, a: &ActionRow) -> io::Result<()> {
    let mut parts = Vec::new();
    if let Value::Object(m) = &a.payload {
        for (k, v) in m {
            match v {
                Value::Null => {}
                Value::String(s) => parts.push(format!("{k}: {s}")),
                other => parts.push(format!("{k}: {other}")),
            }
        }
    }
    let by = a
        .reviewer
        .as_deref()
        .map(|r| format!(" by {r}"))
        .unwrap_or_default();
    writeln!(
        w,
        "- {}{by} ({}): {}",
        a.kind,
        a.created_at,
        parts.join(" · ")
    )
}

fn quote(text: &str) -> String {
    text.lines()
        .map(|l| {
            if l.is_empty() {
                ">".to_string()
            } else {
                format!("> {l}")
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn indent(text: &str) -> String {
    text.lines()
        .map(|l| format!("  {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}
