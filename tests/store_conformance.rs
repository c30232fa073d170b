//! One conformance suite for the store on both engines (issue 24 §1): every case runs on an
//! SQLite file and on a PostgreSQL database of a throwaway cluster (tests/common/pg.rs; skipped
//! with a message when PostgreSQL is not installed, required under CI=true). A case is a
//! function of a fresh store; the engines must give the same answers.

mod common;

use std::time::SystemTime;

use common::both::Case;
use kakeai::director::Status;
use kakeai::p;
use kakeai::store::sql::{DbError, Optional};
use kakeai::store::{
    ActionKind, AttemptOutcome, NewAction, NewAttempt, NewRun, Store, StoreError, TurnCommit,
    TurnFlags,
};

/// Every case, by name.
const CASES: &[(&str, Case)] = &[
    ("values_round_trip", values_round_trip),
    (
        "a_run_is_written_and_read_back",
        a_run_is_written_and_read_back,
    ),
    ("a_turn_commits_once", a_turn_commits_once),
    ("unique_violations_are_named", unique_violations_are_named),
    (
        "sums_of_integers_are_integers",
        sums_of_integers_are_integers,
    ),
    (
        "writers_in_parallel_lose_nothing",
        writers_in_parallel_lose_nothing,
    ),
    (
        "runs_of_a_dead_owner_are_interrupted",
        runs_of_a_dead_owner_are_interrupted,
    ),
    (
        "a_failed_write_leaves_nothing",
        a_failed_write_leaves_nothing,
    ),
];

on_both_engines!(CASES);

fn new_run(store: &mut Store, topic: &str) -> i64 {
    store
        .create_run(&NewRun {
            topic: topic.into(),
            model: Some("gemma2:27b".into()),
            endpoint: None,
            api: Some("ollama".into()),
            options: serde_json::json!({"temperature": 0.7}),
            persona_version: None,
            ruleset_version: None,
        })
        .expect("run")
}

fn attempt(store: &mut Store, run: i64, turn: u32, speaker: &str, n: u32) -> i64 {
    store
        .start_attempt(&NewAttempt {
            run_id: run,
            turn,
            speaker: speaker.into(),
            attempt: n,
            text: "あ".into(),
            tokens: 1,
            guidance: None,
            prompt_hash: Some("h".into()),
            started_at: SystemTime::now(),
            first_token_ms: Some(120),
        })
        .expect("attempt")
}

fn turn(run: i64, turn: u32, speaker: &str, attempt: Option<i64>, text: &str) -> TurnCommit {
    TurnCommit {
        run_id: run,
        turn,
        speaker: speaker.into(),
        attempt_id: attempt,
        text: text.into(),
        status: Status::Pass,
        flags: TurnFlags::default(),
        hook: None,
        hook_depth: None,
    }
}

fn values_round_trip(store: &mut Store, _: &dyn Fn() -> Store) {
    let db = store.db();
    db.batch("CREATE TABLE t (i BIGINT, r DOUBLE PRECISION, s TEXT, b BYTEA, n BIGINT)")
        .or_else(|_| db.batch("CREATE TABLE t (i INTEGER, r REAL, s TEXT, b BLOB, n INTEGER)"))
        .expect("table");
    let texts = ["やな", "ｶﾞ🇯🇵👨‍👩‍👧", "it's ? a '?'", ""];
    for (k, s) in texts.iter().enumerate() {
        let i = [i64::MIN, -1, 0, i64::MAX][k];
        db.execute(
            "INSERT INTO t (i, r, s, b, n) VALUES (?1, ?2, ?3, ?4, ?5)",
            p![i, 0.1 * k as f64, s, vec![0u8, 255, k as u8], None::<i64>],
        )
        .expect("insert");
        let back: (i64, f64, String, Vec<u8>, Option<i64>) = db
            .query_row(
                "SELECT i, r, s, b, n FROM t WHERE s = ? AND i = ?",
                p![s, i],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
            )
            .expect("select");
        assert_eq!(
            back,
            (
                i,
                0.1 * k as f64,
                s.to_string(),
                vec![0, 255, k as u8],
                None
            )
        );
    }
    // A bool binds where an integer column is (SQLite's 0/1), and reads back as one.
    db.execute("UPDATE t SET n = ?1", p![true]).expect("bool");
    let n: bool = db.one("SELECT MIN(n) FROM t", p![]).expect("min");
    assert!(n);
    // A NULL reads only into an Option: a plain read is an error naming the column.
    db.execute("UPDATE t SET n = NULL", p![]).expect("null");
    let e = db.one::<i64>("SELECT n FROM t", p![]).unwrap_err();
    assert!(e.to_string().contains("NULL"), "{e}");
    let missing = db.one::<i64>("SELECT i FROM t WHERE s = 'nope'", p![]);
    assert_eq!(missing.optional().expect("optional"), None);
}

fn a_run_is_written_and_read_back(store: &mut Store, reopen: &dyn Fn() -> Store) {
    let run = new_run(store, "お花見の計画");
    let a1 = attempt(store, run, 1, "yana", 1);
    store
        .update_attempt_text(a1, "ねえあゆ、", 3)
        .expect("text");
    store
        .finish_attempt(a1, &AttemptOutcome::done("ねえあゆ、お花見行こうよ"))
        .expect("finish");
    store
        .commit_turn(&turn(run, 1, "yana", Some(a1), "ねえあゆ、お花見行こうよ"))
        .expect("commit");
    let action = store
        .add_action(&NewAction {
            run_id: run,
            turn: Some(1),
            attempt_id: Some(a1),
            kind: ActionKind::Thumb,
            payload: serde_json::json!({"up": true}),
        })
        .expect("action");
    assert!(action > 0);
    store
        .finish_run(run, kakeai::store::RunStatus::Completed, None)
        .expect("done");
    // Read back through a second connection: committed means visible to others.
    let other = reopen();
    let (topic, status, api): (String, String, String) = other
        .db()
        .query_row(
            "SELECT topic, status, api FROM runs WHERE id = ?1",
            p![run],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .expect("run");
    assert_eq!(
        (topic.as_str(), status.as_str(), api.as_str()),
        ("お花見の計画", "completed", "ollama")
    );
    let (text, state, first): (String, String, i64) = other
        .db()
        .query_row(
            "SELECT text, state, first_token_ms FROM attempts WHERE id = ?1",
            p![a1],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .expect("attempt");
    assert_eq!(
        (text.as_str(), state.as_str(), first),
        ("ねえあゆ、お花見行こうよ", "done", 120)
    );
    assert!(matches!(
        store.finish_run(run + 99, kakeai::store::RunStatus::Completed, None),
        Err(StoreError::NoSuchRun(_))
    ));
}

fn a_turn_commits_once(store: &mut Store, _: &dyn Fn() -> Store) {
    let run = new_run(store, "t");
    let a = attempt(store, run, 1, "ayu", 1);
    store
        .commit_turn(&turn(run, 1, "ayu", Some(a), "はい"))
        .expect("first");
    let again = store.commit_turn(&turn(run, 1, "ayu", Some(a), "いいえ"));
    assert!(
        matches!(again, Err(StoreError::Invalid(ref m)) if m.contains("already committed")),
        "{again:?}"
    );
    // An attempt of another turn is refused; nothing is written.
    let wrong = store.commit_turn(&turn(run, 2, "yana", Some(a), "x"));
    assert!(matches!(wrong, Err(StoreError::Invalid(_))), "{wrong:?}");
    let n: i64 = store
        .db()
        .one("SELECT COUNT(*) FROM turns WHERE run_id = ?1", p![run])
        .expect("count");
    assert_eq!(n, 1);
    assert_eq!(store.truncate_turns(run, 1).expect("truncate"), 1);
}

fn unique_violations_are_named(store: &mut Store, _: &dyn Fn() -> Store) {
    let db = store.db();
    db.batch("CREATE TABLE u (k TEXT PRIMARY KEY)")
        .expect("table");
    db.execute("INSERT INTO u (k) VALUES (?1)", p!["a"])
        .expect("first");
    let e: DbError = db
        .execute("INSERT INTO u (k) VALUES (?1)", p!["a"])
        .unwrap_err();
    assert!(e.is_unique_violation(), "{e:?}");
    assert!(!e.is_busy());
    let n = db
        .execute(
            "INSERT INTO u (k) VALUES (?1) ON CONFLICT DO NOTHING",
            p!["a"],
        )
        .expect("ignored");
    assert_eq!(n, 0);
    let id: Option<String> = db
        .query_row(
            "INSERT INTO u (k) VALUES (?1) ON CONFLICT DO NOTHING RETURNING k",
            p!["a"],
            |r| r.get(0),
        )
        .optional()
        .expect("returning");
    assert_eq!(id, None);
}

fn sums_of_integers_are_integers(store: &mut Store, _: &dyn Fn() -> Store) {
    let run = new_run(store, "s");
    for t in 1..=4 {
        attempt(store, run, t, "yana", 1);
    }
    let db = store.db();
    let sum: i64 = db
        .one(
            "SELECT SUM(tokens) FROM attempts WHERE run_id = ?1",
            p![run],
        )
        .expect("sum");
    assert_eq!(sum, 4);
    let avg: f64 = db
        .one("SELECT AVG(turn) FROM attempts WHERE run_id = ?1", p![run])
        .expect("avg");
    assert!((avg - 2.5).abs() < 1e-9, "{avg}");
    let none: Option<i64> = db
        .one("SELECT SUM(tokens) FROM attempts WHERE run_id = -1", p![])
        .expect("null sum");
    assert_eq!(none, None);
}

/// Two connections add to one counter inside write transactions; none of the increments is
/// lost (SQLite: the write lock; PostgreSQL: SERIALIZABLE and the retry).
fn writers_in_parallel_lose_nothing(store: &mut Store, reopen: &dyn Fn() -> Store) {
    store
        .db()
        .batch("CREATE TABLE c (id INTEGER PRIMARY KEY, n BIGINT NOT NULL)")
        .expect("table");
    store
        .db()
        .execute("INSERT INTO c (id, n) VALUES (1, 0)", p![])
        .expect("row");
    let per = 40;
    std::thread::scope(|s| {
        for _ in 0..3 {
            let mut mine = reopen();
            s.spawn(move || {
                for _ in 0..per {
                    mine.transact(|tx| {
                        let n: i64 = tx.one("SELECT n FROM c WHERE id = 1", p![])?;
                        tx.execute("UPDATE c SET n = ?1 WHERE id = 1", p![n + 1])?;
                        Ok(())
                    })
                    .expect("increment");
                }
            });
        }
    });
    let n: i64 = store
        .db()
        .one("SELECT n FROM c WHERE id = 1", p![])
        .expect("n");
    assert_eq!(n, 3 * per);
}

fn runs_of_a_dead_owner_are_interrupted(store: &mut Store, reopen: &dyn Fn() -> Store) {
    let mut first = reopen();
    let run = new_run(&mut first, "owned");
    attempt(&mut first, run, 1, "yana", 1);
    // While its owner lives, another store's start leaves the run alone.
    let marked = store.mark_interrupted().expect("mark");
    assert!(!marked.contains(&run), "a live owner's run was interrupted");
    drop(first);
    // The owner is gone (its connection or lock file with it): the run is interrupted.
    let mut waited = 0;
    let marked = loop {
        let m = store.mark_interrupted().expect("mark");
        if !m.is_empty() || waited > 50 {
            break m;
        }
        waited += 1;
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    assert_eq!(marked, vec![run]);
    let (status, state): (String, String) = store
        .db()
        .query_row(
            "SELECT r.status, a.state FROM runs r JOIN attempts a ON a.run_id = r.id WHERE r.id = ?1",
            p![run],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .expect("row");
    assert_eq!(
        (status.as_str(), state.as_str()),
        ("interrupted", "cancelled")
    );
}

fn a_failed_write_leaves_nothing(store: &mut Store, _: &dyn Fn() -> Store) {
    let mut inserted = 0;
    let r: Result<(), StoreError> = store.transact(|tx| {
        inserted = tx.execute(
            "INSERT INTO runs (topic, options, started_at, status) VALUES ('x', '{}', ?1, 'running')",
            p![kakeai::store::time::now_iso()],
        )?;
        Err(StoreError::Invalid("changed my mind".into()))
    });
    assert!(matches!(r, Err(StoreError::Invalid(_))), "{r:?}");
    assert_eq!(inserted, 1, "the insert itself worked");
    let n: i64 = store
        .db()
        .one("SELECT COUNT(*) FROM runs", p![])
        .expect("count");
    assert_eq!(n, 0);
}
