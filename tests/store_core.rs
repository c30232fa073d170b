//! The run store: round trip, WAL, migrations, refusal of newer schemas, crash safety.

use std::path::PathBuf;
use std::time::SystemTime;

use kakeai::director::Status;
use kakeai::store::{
    ActionKind, AttemptOutcome, AttemptState, NewAction, NewAttempt, NewRun, RunStatus, Store,
    StoreError, TurnCommit, TurnFlags,
};
use serde_json::json;

fn temp_db() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    // A nested path: open must create the parent dirs.
    let path = dir.path().join("nested").join("data").join("kakeai.db");
    (dir, path)
}

fn new_run(topic: &str) -> NewRun {
    NewRun {
        topic: topic.into(),
        model: Some("gemma2:27b".into()),
        endpoint: Some("http://127.0.0.1:11434".into()),
        api: Some("ollama".into()),
        options: json!({"temperature": 0.7, "num_ctx": 8192, "max_turns": 6, "max_attempts": 3,
                        "exhaustion": "accept", "judge": true}),
        persona_version: Some("p-1".into()),
        ruleset_version: Some("r-abc".into()),
    }
}

fn attempt(run_id: i64, turn: u32, speaker: &str, n: u32, text: &str) -> NewAttempt {
    NewAttempt {
        run_id,
        turn,
        speaker: speaker.into(),
        attempt: n,
        text: text.into(),
        tokens: 1,
        guidance: None,
        prompt_hash: Some("h1".into()),
        started_at: SystemTime::now(),
        first_token_ms: Some(420),
    }
}

fn verdict_json(status: &str, message: &str) -> serde_json::Value {
    json!({"status": status, "findings": [{"rule": "scatter", "status": status,
           "message": message, "suggestion": "2文以内で話してください。", "span": null}]})
}

#[test]
fn a_run_round_trips_through_reopen() {
    let (_dir, path) = temp_db();
    let mut s = Store::open(&path).unwrap();
    assert_eq!(s.path(), path.as_path());
    let run = s.create_run(&new_run("雨上がりの商店街")).unwrap();

    let a1 = s
        .start_attempt(&attempt(run, 1, "yana", 1, "見て"))
        .unwrap();
    s.update_attempt_text(a1, "見て見て、水たまりに", 5)
        .unwrap();
    let mut out =
        AttemptOutcome::done("見て見て、水たまりに空が映ってる。写真撮ろう。あゆも来て。");
    out.status = Some(Status::Retry);
    out.verdict = Some(verdict_json("RETRY", "文が多すぎます"));
    out.judge = Some(json!({"naturalness": 3}));
    out.judge_raw = Some("{\"naturalness\": 3}".into());
    out.latency_ms = Some(2100);
    out.tokens = Some(31);
    s.finish_attempt(a1, &out).unwrap();

    let mut second = attempt(run, 1, "yana", 2, "水たまり");
    second.guidance = Some("2文以内で話してください。".into());
    let a2 = s.start_attempt(&second).unwrap();
    let mut out2 = AttemptOutcome::done("水たまりに空が映ってるじゃん！");
    out2.status = Some(Status::Pass);
    s.finish_attempt(a2, &out2).unwrap();
    s.commit_turn(&TurnCommit {
        run_id: run,
        turn: 1,
        speaker: "yana".into(),
        attempt_id: Some(a2),
        text: "水たまりに空が映ってるじゃん！".into(),
        status: Status::Pass,
        flags: TurnFlags {
            held: true,
            ..TurnFlags::default()
        },
        hook: Some("水たまり".into()),
        hook_depth: Some(1),
    })
    .unwrap();
    let act = s
        .add_action(&NewAction {
            run_id: run,
            turn: Some(1),
            attempt_id: Some(a2),
            kind: ActionKind::Thumb,
            payload: json!({"up": true}),
        })
        .unwrap();
    s.finish_run(run, RunStatus::Completed, None).unwrap();
    drop(s);

    let s = Store::open(&path).unwrap();
    let rec = s.load_run(run).unwrap();
    assert_eq!(rec.run.topic, "雨上がりの商店街");
    assert_eq!(rec.run.status, RunStatus::Completed);
    assert_eq!(rec.run.options["num_ctx"], 8192);
    assert_eq!(rec.run.source, None);
    assert!(rec.run.ended_at.is_some());
    assert!(rec.run.started_at.ends_with('Z'), "{}", rec.run.started_at);

    assert_eq!(rec.attempts.len(), 2);
    let r1 = &rec.attempts[0];
    assert_eq!((r1.turn, r1.attempt, r1.state), (1, 1, AttemptState::Done));
    assert_eq!(r1.status, Some(Status::Retry));
    assert_eq!(
        r1.verdict.as_ref().unwrap()["findings"][0]["message"],
        "文が多すぎます"
    );
    assert_eq!(r1.judge_raw.as_deref(), Some("{\"naturalness\": 3}"));
    assert_eq!(
        (r1.latency_ms, r1.tokens, r1.first_token_ms),
        (Some(2100), Some(31), Some(420))
    );
    assert_eq!(
        rec.attempts[1].guidance.as_deref(),
        Some("2文以内で話してください。")
    );

    assert_eq!(rec.turns.len(), 1);
    let t = &rec.turns[0];
    assert_eq!(t.attempt_id, Some(a2));
    assert!(t.flags.held && !t.flags.exhausted);
    assert_eq!(
        (t.hook.as_deref(), t.hook_depth),
        (Some("水たまり"), Some(1))
    );
    assert_eq!(rec.actions.len(), 1);
    assert_eq!(
        (rec.actions[0].id, rec.actions[0].kind),
        (act, ActionKind::Thumb)
    );
    assert_eq!(rec.actions[0].payload, json!({"up": true}));

    let list = s.runs(10).unwrap();
    assert_eq!(list.len(), 1);
    assert_eq!((list[0].id, list[0].turns), (run, 1));
}

#[test]
fn wal_and_foreign_keys_are_on() {
    let (_dir, path) = temp_db();
    let mut s = Store::open(&path).unwrap();
    let c = s.connection();
    let mode: String = c
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
    let fk: i64 = c
        .query_row("PRAGMA foreign_keys", [], |r| r.get(0))
        .unwrap();
    assert_eq!(fk, 1);
    let sync: i64 = c.query_row("PRAGMA synchronous", [], |r| r.get(0)).unwrap();
    assert_eq!(sync, 1, "NORMAL");
    // A dangling reference is refused by the schema itself.
    let bad = c.execute(
        "INSERT INTO actions (run_id, kind, created_at) VALUES (999, 'note', 'x')",
        [],
    );
    assert!(bad.is_err());
}

#[test]
fn migrations_apply_from_empty_and_reopen_is_idempotent() {
    let (dir, path) = temp_db();
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    // An existing, empty SQLite file (user_version 0) is migrated, not rejected.
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute_batch("CREATE TABLE scratch (x)")
        .unwrap();
    let mut s = Store::open(&path).unwrap();
    let v: i64 = s
        .connection()
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(v, Store::schema_version());
    assert!(v >= 1);
    let run = s.create_run(&new_run("一回目")).unwrap();
    drop(s);
    for _ in 0..2 {
        let mut s = Store::open(&path).unwrap();
        let v2: i64 = s
            .connection()
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap();
        assert_eq!(v2, v);
        assert_eq!(s.load_run(run).unwrap().run.topic, "一回目");
        assert_eq!(s.runs(10).unwrap().len(), 1);
    }
    drop(dir);
}

#[test]
fn a_database_from_a_newer_kakeai_is_refused() {
    let (_dir, path) = temp_db();
    drop(Store::open(&path).unwrap());
    let newer = Store::schema_version() + 1;
    rusqlite::Connection::open(&path)
        .unwrap()
        .pragma_update(None, "user_version", newer)
        .unwrap();
    match Store::open(&path) {
        Err(e @ StoreError::TooNew { .. }) => {
            let StoreError::TooNew {
                found, supported, ..
            } = &e
            else {
                unreachable!()
            };
            assert_eq!((*found, *supported), (newer, Store::schema_version()));
            assert!(e.to_string().contains("newer kakeai"), "{e}");
        }
        Err(e) => panic!("wrong error: {e}"),
        Ok(_) => panic!("a newer schema was opened"),
    }
}

#[test]
fn a_partial_attempt_survives_a_crash() {
    let (_dir, path) = temp_db();
    let mut s = Store::open(&path).unwrap();
    let run = s.create_run(&new_run("クラッシュ")).unwrap();
    let a = s.start_attempt(&attempt(run, 1, "ayu", 1, "姉様")).unwrap();
    s.update_attempt_text(a, "姉様、その看板", 4).unwrap();
    // A crash runs no destructors: the connection is never closed or checkpointed.
    std::mem::forget(s);

    let s = Store::open(&path).unwrap();
    let rec = s.load_run(run).unwrap();
    assert_eq!(rec.run.status, RunStatus::Running);
    assert_eq!(rec.attempts.len(), 1);
    let p = &rec.attempts[0];
    assert_eq!(p.state, AttemptState::Streaming);
    assert_eq!(p.text.as_deref(), Some("姉様、その看板"));
    assert_eq!((p.tokens, p.status), (Some(4), None));
    assert!(rec.turns.is_empty());
}

#[test]
fn bad_writes_are_refused_with_clear_errors() {
    let (_dir, path) = temp_db();
    let mut s = Store::open(&path).unwrap();
    let run = s.create_run(&new_run("検証")).unwrap();
    let e = s
        .start_attempt(&attempt(run, 1, "taro", 1, "x"))
        .unwrap_err();
    assert!(e.to_string().contains("yana or ayu"), "{e}");
    let e = s
        .start_attempt(&attempt(run, 0, "yana", 1, "x"))
        .unwrap_err();
    assert!(matches!(e, StoreError::Invalid(_)), "{e}");
    assert!(matches!(
        s.start_attempt(&attempt(run + 7, 1, "yana", 1, "x")),
        Err(StoreError::NoSuchRun(_))
    ));
    let a = s.start_attempt(&attempt(run, 1, "yana", 1, "x")).unwrap();
    // The same (run, turn, attempt) twice is a caller bug, not a silent overwrite.
    assert!(s.start_attempt(&attempt(run, 1, "yana", 1, "y")).is_err());
    assert!(matches!(
        s.update_attempt_text(a + 100, "x", 1),
        Err(StoreError::NoSuchAttempt(_))
    ));
    let mut info = AttemptOutcome::done("x");
    info.status = Some(Status::Info);
    assert!(matches!(
        s.finish_attempt(a, &info),
        Err(StoreError::Invalid(_))
    ));
    let streaming = AttemptOutcome {
        state: AttemptState::Streaming,
        ..AttemptOutcome::done("x")
    };
    assert!(s.finish_attempt(a, &streaming).is_err());

    let commit = |turn: u32, attempt_id: Option<i64>| TurnCommit {
        run_id: run,
        turn,
        speaker: "yana".into(),
        attempt_id,
        text: "x".into(),
        status: Status::Pass,
        flags: TurnFlags::default(),
        hook: None,
        hook_depth: None,
    };
    let e = s.commit_turn(&commit(2, Some(a))).unwrap_err();
    assert!(e.to_string().contains("does not belong"), "{e}");
    s.commit_turn(&commit(1, Some(a))).unwrap();
    let e = s.commit_turn(&commit(1, Some(a))).unwrap_err();
    assert!(e.to_string().contains("already committed"), "{e}");
    assert!(matches!(
        s.finish_run(run + 9, RunStatus::Failed, Some("x")),
        Err(StoreError::NoSuchRun(_))
    ));
}

#[test]
fn runs_are_listed_newest_first_with_a_limit() {
    let (_dir, path) = temp_db();
    let mut s = Store::open(&path).unwrap();
    let ids: Vec<i64> = (0..3)
        .map(|i| s.create_run(&new_run(&format!("話題{i}"))).unwrap())
        .collect();
    let list = s.runs(2).unwrap();
    assert_eq!(list.len(), 2);
    // Same-millisecond starts fall back to id order.
    assert_eq!(list[0].id, ids[2]);
    assert_eq!(list[1].id, ids[1]);
    assert_eq!(list[0].status, RunStatus::Running);
}

#[test]
fn a_live_run_exports_its_findings_and_its_unfinished_tail() {
    let (_dir, path) = temp_db();
    let mut s = Store::open(&path).unwrap();
    let run = s.create_run(&new_run("看板の話")).unwrap();
    let a1 = s
        .start_attempt(&attempt(run, 1, "yana", 1, "ねえ"))
        .unwrap();
    let mut out = AttemptOutcome::done("ねえ、あの看板見て。逆さま。面白い。写真撮ろう。");
    out.status = Some(Status::Retry);
    out.verdict = Some(verdict_json("RETRY", "文が多すぎます（4文）"));
    s.finish_attempt(a1, &out).unwrap();
    let a2 = s
        .start_attempt(&attempt(run, 1, "yana", 2, "ねえ"))
        .unwrap();
    let mut ok = AttemptOutcome::done("ねえ、あの看板、逆さまに映ってるじゃん！");
    ok.status = Some(Status::Pass);
    s.finish_attempt(a2, &ok).unwrap();
    s.commit_turn(&TurnCommit {
        run_id: run,
        turn: 1,
        speaker: "yana".into(),
        attempt_id: Some(a2),
        text: "ねえ、あの看板、逆さまに映ってるじゃん！".into(),
        status: Status::Pass,
        flags: TurnFlags::default(),
        hook: None,
        hook_depth: None,
    })
    .unwrap();
    s.start_attempt(&attempt(run, 2, "ayu", 1, "姉様、"))
        .unwrap();
    let rec = s.load_run(run).unwrap();

    let mut md = Vec::new();
    kakeai::store::export::markdown(&rec, &mut md).unwrap();
    let md = String::from_utf8(md).unwrap();
    assert!(md.contains("## 1. **やな** `PASS`"), "{md}");
    assert!(
        md.contains("- attempt 1 `RETRY` (done): 文が多すぎます（4文）"),
        "{md}"
    );
    assert!(md.contains("## 2. **あゆ** (not committed)"), "{md}");
    assert!(md.contains("- attempt 1 `not judged` (streaming)"), "{md}");

    let mut jl = Vec::new();
    kakeai::store::export::jsonl(&rec, &mut jl).unwrap();
    let recs: Vec<serde_json::Value> = String::from_utf8(jl)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(
        recs.len(),
        5,
        "run, 2 attempts, turn, the streaming attempt"
    );
    assert_eq!(recs[1]["findings"][0]["message"], "文が多すぎます（4文）");
    assert_eq!(recs[1]["timings"]["first_token_ms"], 420);
    assert_eq!(recs[4]["state"], "streaming");
    assert_eq!(recs[4]["text"], "姉様、");
}
