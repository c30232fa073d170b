//! Writes a parsed duo-talk log into the store inside one transaction. Every insert is keyed
//! (run source, run/turn/attempt, turn, action source), so a second import adds nothing.

use crate::p;
use crate::store::sql::{Db, DbError, Optional};
use serde_json::{Map, Value, json};

use super::ImportCounts;
use super::parse::{AttemptAcc, RunAcc, TurnAcc, status_of};
use crate::store::time::{now_iso, parse_iso_ms};

pub(super) fn write(tx: Db<'_>, runs: &[RunAcc]) -> Result<ImportCounts, DbError> {
    let mut n = ImportCounts::default();
    for run in runs {
        let run_id = upsert_run(tx, run, &mut n)?;
        let run_start = run.started_at.as_deref().or(run.first_ts.as_deref());
        for (&turn0, t) in &run.turns {
            write_turn(tx, run_id, turn0 + 1, t, run_start, &mut n)?;
        }
        for fb in &run.feedback {
            n.feedback += tx.execute(
                "INSERT INTO actions (run_id, turn, kind, payload, created_at, source)
                     VALUES (?1, ?2, 'feedback', ?3, ?4, ?5) ON CONFLICT (source) DO NOTHING",
                p![
                    run_id,
                    fb.turn,
                    fb.payload.to_string(),
                    fb.ts.clone().unwrap_or_else(now_iso),
                    fb.key
                ],
            )?;
        }
    }
    Ok(n)
}

/// The run's id; a run seen before only has its blanks filled in (a feedback file imported
/// first knows no topic or model).
fn upsert_run(tx: Db<'_>, run: &RunAcc, n: &mut ImportCounts) -> Result<i64, DbError> {
    let source = format!("duo-talk:{}", run.run_id);
    let topic = run.topic.clone().unwrap_or_default();
    let started = run
        .started_at
        .clone()
        .or_else(|| run.first_ts.clone())
        .unwrap_or_else(now_iso);
    let options = Value::Object(run.options.clone()).to_string();
    let existing: Option<i64> = tx
        .query_row("SELECT id FROM runs WHERE source = ?1", p![source], |r| {
            r.get(0)
        })
        .optional()?;
    if let Some(id) = existing {
        tx.execute(
            "UPDATE runs SET topic = CASE WHEN topic = '' THEN ?2 ELSE topic END,
                    model = COALESCE(model, ?3), ended_at = COALESCE(ended_at, ?4),
                    options = CASE WHEN options = '{}' THEN ?5 ELSE options END
             WHERE id = ?1",
            p![id, topic, run.model, run.ended_at, options],
        )?;
        return Ok(id);
    }
    let id: i64 = tx.one(
        "INSERT INTO runs (topic, model, options, started_at, ended_at, status, source)
         VALUES (?1, ?2, ?3, ?4, ?5, 'imported', ?6) RETURNING id",
        p![topic, run.model, options, started, run.ended_at, source],
    )?;
    n.runs += 1;
    Ok(id)
}

fn write_turn(
    tx: Db<'_>,
    run_id: i64,
    turn: u32,
    t: &TurnAcc,
    run_start: Option<&str>,
    n: &mut ImportCounts,
) -> Result<(), DbError> {
    let director_status = t
        .director
        .as_ref()
        .and_then(|d| d.get("status"))
        .and_then(Value::as_str)
        .and_then(status_of);
    // The committed attempt: the latest one logged before `speak`, or attempt 1 when the log
    // kept no thoughts for this turn.
    let committed = t.speak.as_ref().map(|_| t.committed_attempt.unwrap_or(1));
    let synthesized = AttemptAcc::default();
    let mut numbers: Vec<u32> = t.attempts.keys().copied().collect();
    if let Some(c) = committed.filter(|c| !t.attempts.contains_key(c)) {
        numbers.push(c);
        numbers.sort_unstable();
    }
    let speak_ts = t.speak.as_ref().and_then(|s| s.ts.as_deref());
    let mut committed_id = None;
    let mut committed_result = None;
    for k in numbers {
        let a = t.attempts.get(&k).unwrap_or(&synthesized);
        let is_committed = committed == Some(k);
        // Without any speaker field, fall back on duo-talk's alternation (turn 0 is やな).
        let speaker = a
            .speaker
            .or(t.speak.as_ref().map(|s| s.speaker))
            .unwrap_or(if turn % 2 == 1 { "yana" } else { "ayu" });
        let text = match (&a.text, &t.speak) {
            (Some(x), _) => Some(x.clone()),
            (None, Some(s)) if is_committed => Some(s.text.clone()),
            _ => None,
        };
        let result = a.result.as_deref().and_then(status_of);
        let status = result.or(if is_committed { director_status } else { None });
        let state = if a.result.is_some() || is_committed {
            "done"
        } else {
            "cancelled"
        };
        let guidance = k
            .checked_sub(1)
            .and_then(|p| t.attempts.get(&p))
            .and_then(|p| p.suggestion.clone());
        let started = a
            .generating_at
            .as_deref()
            .or(a.first_ts.as_deref())
            .or(speak_ts)
            .or(run_start)
            .map(str::to_string)
            .unwrap_or_else(now_iso);
        let latency = match (&a.generating_at, &a.reviewing_at) {
            (Some(g), Some(r)) => parse_iso_ms(r)
                .zip(parse_iso_ms(g))
                .map(|(r, g)| r - g)
                .filter(|d| *d >= 0),
            _ => None,
        };
        let origin = origin(a, t, is_committed, !t.attempts.contains_key(&k));
        let added = tx.execute(
            "INSERT INTO attempts (run_id, turn, speaker, attempt, state, text, status,
                                       guidance, started_at, latency_ms, origin)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)
                 ON CONFLICT (run_id, turn, attempt) DO NOTHING",
            p![
                run_id,
                turn,
                speaker,
                k,
                state,
                text,
                status.map(|s| s.as_str()),
                guidance,
                started,
                latency,
                origin.to_string()
            ],
        )?;
        n.attempts += added;
        if is_committed {
            committed_id = Some(tx.query_row(
                "SELECT id FROM attempts WHERE run_id = ?1 AND turn = ?2 AND attempt = ?3",
                p![run_id, turn, k],
                |r| r.get::<i64>(0),
            )?);
            committed_result = result;
        }
    }
    let Some(speak) = &t.speak else {
        return Ok(());
    };
    let d = t.director.as_ref();
    let status = director_status
        .or(committed_result)
        .unwrap_or(crate::director::Status::Unscored);
    // duo-talk accepts the last attempt as it stands after its retries run out (§1.4).
    let exhausted = committed_result == Some(crate::director::Status::Retry);
    n.turns += tx.execute(
        "INSERT INTO turns (run_id, turn, speaker, attempt_id, text, status, exhausted,
                                hook, hook_depth, committed_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
             ON CONFLICT (run_id, turn) DO NOTHING",
        p![
            run_id,
            turn,
            speak.speaker,
            committed_id,
            speak.text,
            status.as_str(),
            exhausted,
            d.and_then(|d| d.get("hook")).and_then(Value::as_str),
            d.and_then(|d| d.get("hook_depth")).and_then(Value::as_i64),
            speak
                .ts
                .clone()
                .or_else(|| run_start.map(str::to_string))
                .unwrap_or_else(now_iso)
        ],
    )?;
    Ok(())
}

/// What duo-talk logged about an attempt that has no column of its own.
fn origin(a: &AttemptAcc, t: &TurnAcc, committed: bool, synthesized: bool) -> Value {
    let mut o = Map::new();
    o.insert("source".into(), json!("duo-talk"));
    let mut put = |k: &str, v: Option<Value>| {
        if let Some(v) = v.filter(|v| !v.is_null()) {
            o.insert(k.into(), v);
        }
    };
    put("synthesized", synthesized.then_some(json!(true)));
    put("phases", (!a.phases.is_empty()).then(|| json!(a.phases)));
    put("result", a.result.clone().map(Value::from));
    put("reason", a.reason.clone().map(Value::from));
    put("retry_reason", a.retry_reason.clone().map(Value::from));
    put("suggestion", a.suggestion.clone().map(Value::from));
    put("max_retry", a.max_retry.map(Value::from));
    if committed {
        put(
            "beat",
            t.speak
                .as_ref()
                .and_then(|s| s.beat.clone())
                .map(Value::from),
        );
        put("director", t.director.clone().map(Value::Object));
    }
    Value::Object(o)
}
