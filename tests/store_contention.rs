//! The store under contention and crashes, against the real binary: a live headless run (fake
//! endpoint) while `ingest` and `patterns add` write the same database; `ingest` killed with
//! SIGKILL mid-way and re-run; a killed run marked interrupted, a Ctrl-C'd run stopped. Every
//! acknowledged row (a `turn_commit` on stdout, a finished CLI write) must be stored.

mod common;

#[path = "llm_fake/mod.rs"]
mod llm_fake;

mod cli_env;

use std::process::{Child, Output, Stdio};
use std::time::{Duration, Instant};

use cli_env::Env;
use llm_fake::{FakeServer, Recorded, Reply, openai_reply, parts, sse_events};

async fn server() -> FakeServer {
    FakeServer::with(|req: &Recorded, _| match req.path.as_str() {
        "/v1/models" => Reply::json(
            200,
            r#"{"object":"list","data":[{"id":"tiny-ja","object":"model","owned_by":"llamacpp"}]}"#,
        ),
        "/v1/chat/completions" if req.json()["stream"] == true => Reply::sse(parts(&sse_events(
            "tiny-ja",
            &["ねえ、", "港の", "灯り、", "きれい", "だね！"],
            "stop",
            5,
        ))),
        "/v1/chat/completions" => Reply::json(200, &openai_reply("tiny-ja", "はい。", 3)),
        _ => Reply::json(404, r#"{"error":{"message":"nope"}}"#),
    })
    .await
}

/// A conversation log: `convs` conversations of two user/bot exchanges each.
fn log(convs: usize, seed: u64) -> String {
    let mut s = String::new();
    let mut t = 1_700_000_000u64 + seed * 1_000_000;
    for c in 0..convs {
        for k in 0..2 {
            t += 7;
            s.push_str(&format!(
                "{{\"conversation_id\":\"s{seed}c{c}\",\"user_id\":\"u{}\",\"role\":\"user\",\"text\":\"{k}回目：坂の上から{c}番の船が見えたよ\",\"timestamp\":{t}}}\n",
                c % 37
            ));
            t += 3;
            s.push_str(&format!(
                "{{\"conversation_id\":\"s{seed}c{c}\",\"user_id\":\"u{}\",\"role\":\"bot\",\"text\":\"へえ、いいね！\",\"timestamp\":{t}}}\n",
                c % 37
            ));
        }
    }
    s
}

fn spawn(env: &Env, db: &str, args: &[&str]) -> Child {
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["--db", db]);
    env.cmd(&all)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn kakeai")
}

async fn wait(c: Child) -> Output {
    tokio::task::spawn_blocking(move || c.wait_with_output().unwrap())
        .await
        .unwrap()
}

fn conn(db: &str) -> rusqlite::Connection {
    let c = rusqlite::Connection::open(db).unwrap();
    c.busy_timeout(Duration::from_secs(30)).unwrap();
    c
}

fn count(db: &str, sql: &str) -> i64 {
    conn(db).query_row(sql, [], |r| r.get(0)).unwrap()
}

fn integrity_ok(db: &str) {
    let r: String = conn(db)
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(r, "ok");
}

/// Property over rounds: whatever the overlap, every turn the run printed as committed is in
/// `turns`, every `patterns add` that exited 0 left its pattern, and the ingest is whole. A
/// run whose write finally failed must say so (exit 4), never exit 0 with a missing turn.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_live_run_and_other_writers_lose_nothing_acknowledged() {
    let srv = server().await;
    let env = Env::new();
    let db = env.dir.path().join("c.db");
    let db = db.to_str().unwrap().to_string();
    let (mut acknowledged, mut stored, mut adds_ok) = (0, 0, 0);
    for round in 0..2u64 {
        let file = env.file(&format!("log{round}.jsonl"), &log(400, round));
        let ingest = spawn(&env, &db, &["ingest", &file]);
        let run = spawn(
            &env,
            &db,
            &[
                "run",
                "--headless",
                "--no-judge",
                "--no-vault",
                "--topic",
                "港の灯り",
                "--turns",
                "6",
                "--endpoint",
                &srv.url,
                "--model",
                "tiny-ja",
            ],
        );
        let mut adds = Vec::new();
        for i in 0..6 {
            let text = format!("やるじゃん{round}-{i}！");
            adds.push(spawn(
                &env,
                &db,
                &[
                    "patterns",
                    "add",
                    "--character",
                    "yana",
                    "--type",
                    "uke",
                    "--message-type",
                    "からかい",
                    "--example",
                    "やなって子供っぽいよね",
                    "--response",
                    &text,
                ],
            ));
        }
        let run = wait(run).await;
        let ingest = wait(ingest).await;
        for a in adds {
            let o = wait(a).await;
            assert!(
                matches!(o.status.code(), Some(0 | 4)),
                "{}",
                String::from_utf8_lossy(&o.stderr)
            );
            adds_ok += usize::from(o.status.code() == Some(0));
        }
        assert!(
            matches!(ingest.status.code(), Some(0 | 4)),
            "{}",
            String::from_utf8_lossy(&ingest.stderr)
        );
        let out = String::from_utf8_lossy(&run.stdout).into_owned();
        let events: Vec<serde_json::Value> = out
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        let run_id = events
            .iter()
            .find(|e| e["event"] == "run_start")
            .and_then(|e| e["run_id"].as_i64())
            .unwrap_or_else(|| panic!("no run_start: {out}"));
        let commits: Vec<i64> = events
            .iter()
            .filter(|e| e["event"] == "turn_commit")
            .filter_map(|e| e["turn"].as_i64())
            .collect();
        for t in &commits {
            let n = count(
                &db,
                &format!("SELECT COUNT(*) FROM turns WHERE run_id = {run_id} AND turn = {t}"),
            );
            assert_eq!(n, 1, "turn {t} was printed as committed but is not stored");
        }
        acknowledged += commits.len();
        stored += count(
            &db,
            &format!("SELECT COUNT(*) FROM turns WHERE run_id = {run_id}"),
        );
        match run.status.code() {
            Some(0) => assert_eq!(commits.len(), 6, "{out}"),
            Some(4) => {}
            other => panic!(
                "run exit {other:?}: {}",
                String::from_utf8_lossy(&run.stderr)
            ),
        }
    }
    let patterns = count(&db, "SELECT COUNT(*) FROM prowrestling_patterns");
    assert!(patterns >= adds_ok as i64);
    assert_eq!(stored, acknowledged as i64);
    assert_eq!(count(&db, "SELECT COUNT(*) FROM conversations"), 800);
    integrity_ok(&db);
    eprintln!(
        "contention: {acknowledged} turns acknowledged, {stored} stored, {adds_ok}/12 pattern adds ok"
    );
}

/// `ingest` killed with SIGKILL at seeded moments, then re-run: the database is intact, and
/// after the re-run every message is there exactly once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ingest_killed_midway_then_rerun_duplicates_nothing() {
    let env = Env::new();
    let db = env.dir.path().join("k.db");
    let db = db.to_str().unwrap().to_string();
    let file = env.file("big.jsonl", &log(1500, 9));
    let mut g = common::seeded::Gen::new(0x9e37_79b9);
    for _ in 0..2 {
        let mut child = spawn(&env, &db, &["ingest", &file]);
        let delay = g.between_ms(200, 1400);
        let t = Instant::now();
        while t.elapsed() < delay {
            if child.try_wait().unwrap().is_some() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let _ = child.kill();
        let _ = wait(child).await;
        integrity_ok(&db);
    }
    let o = wait(spawn(&env, &db, &["ingest", &file])).await;
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(
        count(&db, "SELECT COUNT(*) FROM conversation_messages"),
        6000
    );
    assert_eq!(count(&db, "SELECT COUNT(*) FROM conversations"), 1500);
    integrity_ok(&db);
}

/// A run killed with SIGKILL stays `running` only until the store is next opened; `kakeai
/// runs` then lists it as interrupted and its streaming attempt as cancelled.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_run_is_marked_interrupted_on_the_next_start() {
    let srv = server().await;
    let env = Env::new();
    let db = env.dir.path().join("i.db");
    let db = db.to_str().unwrap().to_string();
    let mut run = spawn(
        &env,
        &db,
        &[
            "run",
            "--headless",
            "--no-judge",
            "--no-vault",
            "--topic",
            "港",
            "--turns",
            "400",
            "--endpoint",
            &srv.url,
            "--model",
            "tiny-ja",
        ],
    );
    // Wait for the run's row, then kill it mid-run.
    let t = Instant::now();
    while t.elapsed() < Duration::from_secs(20) {
        if std::path::Path::new(&db).exists()
            && conn(&db)
                .query_row("SELECT COUNT(*) FROM turns", [], |r| r.get::<_, i64>(0))
                .unwrap_or(0)
                > 0
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    run.kill().unwrap();
    let _ = wait(run).await;
    assert_eq!(
        count(&db, "SELECT COUNT(*) FROM runs WHERE status = 'running'"),
        1
    );
    let o = wait(spawn(&env, &db, &["runs", "--format", "json"])).await;
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("\"interrupted\""), "{out}");
    assert_eq!(
        count(&db, "SELECT COUNT(*) FROM runs WHERE status = 'running'"),
        0
    );
    assert_eq!(
        count(
            &db,
            "SELECT COUNT(*) FROM attempts WHERE state = 'streaming'"
        ),
        0
    );
    integrity_ok(&db);
}

/// A turn whose write fails is never printed as committed: the run ends failed, exit 4.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_commit_that_fails_is_not_acknowledged_and_the_run_exits_4() {
    let srv = server().await;
    let env = Env::new();
    let db = env.dir.path().join("f.db");
    let db = db.to_str().unwrap().to_string();
    // Create and migrate the store, then make every turn write fail.
    let o = wait(spawn(
        &env,
        &db,
        &["ingest", &env.file("one.jsonl", &log(1, 1))],
    ))
    .await;
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    conn(&db)
        .execute_batch(
            "CREATE TRIGGER no_turns BEFORE INSERT ON turns BEGIN SELECT RAISE(ABORT, 'disk says no'); END;",
        )
        .unwrap();
    let o = wait(spawn(
        &env,
        &db,
        &[
            "run",
            "--headless",
            "--no-judge",
            "--no-vault",
            "--topic",
            "港",
            "--turns",
            "3",
            "--endpoint",
            &srv.url,
            "--model",
            "tiny-ja",
        ],
    ))
    .await;
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        o.status.code(),
        Some(4),
        "{out}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(!out.contains("turn_commit"), "{out}");
    let done = out.lines().last().unwrap_or_default();
    assert!(
        done.contains("\"run_done\"") && done.contains("\"failed\""),
        "{out}"
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains("disk says no"));
    assert_eq!(
        count(&db, "SELECT COUNT(*) FROM runs WHERE status = 'failed'"),
        1
    );
}
