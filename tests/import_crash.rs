//! `kakeai import duo-talk` killed with SIGKILL at seeded moments, 4 times, then re-run to the
//! end: the database is intact and *equal* to a clean import of the same log — the same number
//! of runs, turns, attempts and actions, and the same content digests (no run half-imported,
//! none twice). The log is generated here: 600 runs with retried attempts and feedback.

mod common;

use std::process::{Child, Output, Stdio};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

mod cli_env;
use cli_env::Env;

/// A duo-talk commentary log: `runs` runs of 4 turns; every third turn was retried once
/// (RETRY, then PASS), every fifth run has a feedback line. Words vary with the numbers.
fn log(runs: usize) -> String {
    let places = ["商店街", "港", "坂道", "図書館", "河原", "駅前", "公園"];
    let mut s = String::new();
    for r in 0..runs {
        let id = format!("run_gen_{r:04}");
        let place = places[r % places.len()];
        let ts = |k: usize| {
            format!(
                "2026-03-{:02}T10:{:02}:{:02}.000000",
                1 + r % 28,
                (k / 60) % 60,
                k % 60
            )
        };
        s.push_str(&format!(
            r#"{{"event": "narration_start", "run_id": "{id}", "topic": "{place}で見つけた{r}番目のもの", "maxTurns": 4, "model": "gemma2:27b", "seed": {r}, "timestamp": "{}"}}"#,
            ts(0)
        ));
        s.push('\n');
        let mut k = 1;
        for turn in 0..4 {
            let (sp, name) = if turn % 2 == 0 {
                ("A", "やな")
            } else {
                ("B", "あゆ")
            };
            let attempts = if (r + turn) % 3 == 0 { 2 } else { 1 };
            for a in 1..=attempts {
                let result = if a < attempts { "RETRY" } else { "PASS" };
                for status in ["generating", "reviewing"] {
                    s.push_str(&format!(
                        r#"{{"event": "thought", "run_id": "{id}", "status": "{status}", "speaker": "{sp}", "speaker_name": "{name}", "attempt": {a}, "turn": {turn}, "timestamp": "{}"}}"#,
                        ts(k)
                    ));
                    s.push('\n');
                    k += 1;
                }
                let text = if result == "RETRY" {
                    format!(r#", "text": "{place}の{turn}番。長い。とても長い。まだ続く。""#)
                } else {
                    String::new()
                };
                s.push_str(&format!(
                    r#"{{"event": "thought", "run_id": "{id}", "status": "reviewed", "speaker": "{sp}", "result": "{result}", "reason": "理由{a}"{text}, "attempt": {a}, "turn": {turn}, "timestamp": "{}"}}"#,
                    ts(k)
                ));
                s.push('\n');
                k += 1;
            }
            let line = if sp == "A" {
                format!("ねえ、{place}の{r}番目、{turn}回目も見ようよ！")
            } else {
                format!("{place}の{r}番目ですね。{turn}回目も楽しみです。")
            };
            s.push_str(&format!(
                r#"{{"event": "speak", "run_id": "{id}", "turn": {turn}, "speaker": "{sp}", "text": "{line}", "timestamp": "{}"}}"#,
                ts(k)
            ));
            s.push('\n');
            k += 1;
        }
        if r % 5 == 0 {
            s.push_str(&format!(
                r#"{{"event": "feedback", "run_id": "{id}", "turn": 1, "speaker": "B", "issue_type": "tone_drift", "description": "{r}番の反応が淡白", "suggested_fix": "驚きを一言", "timestamp": "{}"}}"#,
                ts(k)
            ));
            s.push('\n');
        }
    }
    s
}

fn spawn(env: &Env, db: &str, file: &str) -> Child {
    env.cmd(&["import", "duo-talk", file, "--db", db])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn kakeai")
}

fn finish(c: Child) -> Output {
    c.wait_with_output().unwrap()
}

fn conn(db: &str) -> rusqlite::Connection {
    let c = rusqlite::Connection::open(db).unwrap();
    c.busy_timeout(Duration::from_secs(30)).unwrap();
    c
}

/// Row counts and a digest of each table's content (ids and import times left out).
fn snapshot(db: &str) -> Vec<(String, i64, String)> {
    let c = conn(db);
    let ok: String = c
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(ok, "ok");
    let queries = [
        (
            "runs",
            "SELECT source, topic, model, status FROM runs ORDER BY source",
        ),
        (
            "turns",
            "SELECT r.source, t.turn, t.speaker, t.text, t.status, a.attempt
             FROM turns t JOIN runs r ON r.id = t.run_id LEFT JOIN attempts a ON a.id = t.attempt_id
             ORDER BY r.source, t.turn",
        ),
        (
            "attempts",
            "SELECT r.source, a.turn, a.attempt, a.speaker, a.state, a.text, a.status, a.guidance
             FROM attempts a JOIN runs r ON r.id = a.run_id ORDER BY r.source, a.turn, a.attempt",
        ),
        (
            "actions",
            "SELECT r.source, x.turn, x.kind, x.payload, x.source
             FROM actions x JOIN runs r ON r.id = x.run_id ORDER BY x.source",
        ),
    ];
    queries
        .iter()
        .map(|(name, sql)| {
            let mut st = c.prepare(sql).unwrap();
            let cols = st.column_count();
            let mut h = Sha256::new();
            let mut n = 0i64;
            let mut rows = st.query([]).unwrap();
            while let Some(row) = rows.next().unwrap() {
                n += 1;
                for i in 0..cols {
                    let v: rusqlite::types::Value = row.get(i).unwrap();
                    h.update(format!("{v:?}\u{1f}").as_bytes());
                }
                h.update(b"\x1e");
            }
            let hex: String = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
            (name.to_string(), n, hex)
        })
        .collect()
}

#[test]
fn import_killed_four_times_then_rerun_equals_a_clean_import() {
    let env = Env::new();
    let file = env.file("commentary_runs.jsonl", &log(600));
    let clean = env.dir.path().join("clean.db");
    let clean = clean.to_str().unwrap();
    let started = Instant::now();
    let o = finish(spawn(&env, clean, &file));
    // Kill moments are fractions of a clean import's own time, so they land mid-import on a
    // fast machine as on a loaded one.
    let whole = started.elapsed();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let want = snapshot(clean);
    assert_eq!(want[0].1, 600, "{want:?}");

    let db = env.dir.path().join("killed.db");
    let db = db.to_str().unwrap();
    let mut g = common::seeded::Gen::new(0x5eed_1234);
    let mut killed_midway = 0;
    for round in 0..4 {
        let seed = g.next(1000);
        let mut child = spawn(&env, db, &file);
        // 10 %–70 % of a clean import's time.
        let delay = whole.mul_f64(0.1 + 0.6 * (seed % 1000) as f64 / 1000.0);
        let t = Instant::now();
        let mut exited = false;
        while t.elapsed() < delay {
            if child.try_wait().unwrap().is_some() {
                exited = true;
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        if !exited {
            killed_midway += 1;
        }
        // SIGKILL: no destructor, no rollback beyond what SQLite's journal does.
        let _ = child.kill();
        let _ = finish(child);
        let partial = snapshot(db);
        eprintln!("round {round}: killed after {delay:?}: {partial:?}");
        assert!(partial[0].1 <= 600);
    }
    assert!(
        killed_midway >= 1,
        "no kill landed before the import ended: nothing was tested"
    );
    let o = finish(spawn(&env, db, &file));
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(snapshot(db), want, "killed {killed_midway}× mid-way");
    eprintln!(
        "import crash: {killed_midway}/4 kills landed mid-import; the re-run equals a clean import: {want:?}"
    );
}
