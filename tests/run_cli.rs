//! `kakeai run --headless` against the real binary: the JSON Lines event contract, exit codes
//! 0 / 2 / 3, and the run landing in the store where `export` finds it.

#[path = "llm_fake/mod.rs"]
mod llm_fake;

use std::process::Output;

use llm_fake::{FakeServer, Recorded, Reply, openai_reply, parts, sse_events};

mod cli_env;
mod common;
use cli_env::Env;

/// Runs the binary off the async runtime, which keeps serving the fake endpoint meanwhile.
async fn run(env: &Env, args: &[&str]) -> Output {
    let mut c = env.cmd(args);
    tokio::task::spawn_blocking(move || c.output().unwrap())
        .await
        .unwrap()
}

/// An OpenAI-compatible server (llama-server framing) that always says the same やな-ish line.
async fn openai_server() -> FakeServer {
    FakeServer::with(|req: &Recorded, _| match req.path.as_str() {
        "/v1/models" => Reply::json(
            200,
            r#"{"object":"list","data":[{"id":"tiny-ja","object":"model","owned_by":"llamacpp"}]}"#,
        ),
        "/v1/chat/completions" if req.json()["stream"] == true => Reply::sse(parts(&sse_events(
            "tiny-ja",
            // Not やな's persona example word for word: that would be a prompt echo.
            &["わ！", "この坂、", "風が", "気持ちいい", "じゃん！"],
            "stop",
            5,
        ))),
        "/v1/chat/completions" => Reply::json(
            200,
            &openai_reply(
                "tiny-ja",
                r#"{"frame":4,"roleplay":4,"connection":4,"density":4,"naturalness":4,"reason":"前の発言に答えている"}"#,
                20,
            ),
        ),
        _ => Reply::json(
            404,
            r#"{"error":{"message":"File Not Found","type":"not_found_error","code":404}}"#,
        ),
    })
    .await
}

fn events(stdout: &[u8]) -> Vec<serde_json::Value> {
    String::from_utf8_lossy(stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn headless_run_prints_the_event_stream_and_stores_the_run() {
    let server = openai_server().await;
    let env = Env::new();
    let out = run(
        &env,
        &[
            "run",
            "--headless",
            "--topic",
            "坂の上の景色",
            "--turns",
            "2",
            "--endpoint",
            &server.url,
            "--model",
            "tiny-ja",
            "--tokens",
        ],
    )
    .await;
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let ev = events(&out.stdout);
    let kinds: Vec<&str> = ev.iter().map(|e| e["event"].as_str().unwrap()).collect();
    assert_eq!(kinds[0], "run_start");
    assert_eq!(ev[0]["api"], "openai", "detected from /v1/models");
    assert_eq!(ev[0]["model"], "tiny-ja");
    assert_eq!(kinds[1], "turn_start");
    assert_eq!(kinds.iter().filter(|k| **k == "token").count() % 5, 0);
    assert_eq!(*kinds.last().unwrap(), "run_done");
    let done = ev.last().unwrap();
    assert_eq!(done["status"], "completed");
    assert_eq!(done["turns"], 2);
    let attempts = ev.iter().filter(|e| e["event"] == "attempt_done").count();
    assert_eq!(done["attempts"], attempts);
    // やな's line passes for her; the same words from あゆ fail her tone rules and are retried.
    let commits: Vec<&serde_json::Value> =
        ev.iter().filter(|e| e["event"] == "turn_commit").collect();
    assert_eq!(commits[0]["speaker"], "yana");
    assert_eq!(commits[0]["text"], "わ！この坂、風が気持ちいいじゃん！");
    assert_eq!(commits[1]["speaker"], "ayu");
    let ayu_first = ev
        .iter()
        .find(|e| e["event"] == "attempt_done" && e["speaker"] == "ayu")
        .unwrap();
    assert_eq!(ayu_first["verdict"], "RETRY");
    assert!(
        ayu_first["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["rule"] == "tone")
    );
    assert!(
        ayu_first["judge"].is_null(),
        "judge skipped after a static RETRY"
    );
    let yana = ev.iter().find(|e| e["event"] == "attempt_done").unwrap();
    assert_eq!(yana["judge"]["roleplay"], 4.0);

    let run_id = ev[0]["run_id"].as_i64().unwrap().to_string();
    let exported = run(&env, &["export", "--run", &run_id, "--format", "jsonl"]).await;
    assert_eq!(exported.status.code(), Some(0));
    let records = events(&exported.stdout);
    assert_eq!(records[0]["record"], "export");
    assert_eq!(records[1]["record"], "run");
    // The vault the run was made under is stored with it (issue 23 item 4), so `compare`
    // replays under the same one: here the bundled sample (no vault folder in this env).
    let vault = &records[1]["options"]["vault"];
    assert_eq!(vault["hash"], "bundled-sample", "{}", records[1]);
    assert!(vault["work"].is_string(), "{}", records[1]);
    assert_eq!(
        records.iter().filter(|r| r["record"] == "attempt").count(),
        attempts
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endpoint_that_is_down_exits_3_with_an_explanation() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let env = Env::new();
    let url = format!("http://127.0.0.1:{port}");
    let out = run(
        &env,
        &["run", "--headless", "--topic", "雨の日", "--endpoint", &url],
    )
    .await;
    assert_eq!(out.status.code(), Some(3));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.starts_with("kakeai run: "), "{err}");
    assert!(err.contains(&url), "{err}");
    // One line of error; the leak review's start-up line says whether the semantic check runs.
    let lines: Vec<&str> = err
        .lines()
        .filter(|l| !l.contains("leak review:"))
        .collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(out.stdout.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_model_exits_3_and_usage_errors_exit_2() {
    let server = openai_server().await;
    let env = Env::new();
    let out = run(
        &env,
        &[
            "run",
            "--headless",
            "--topic",
            "雨の日",
            "--endpoint",
            &server.url,
            "--model",
            "gemma2:27b",
        ],
    )
    .await;
    assert_eq!(out.status.code(), Some(3));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("tiny-ja"),
        "names what the server has"
    );

    let out = run(&env, &["run", "--topic", "雨の日"]).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--headless"));
    let out = run(&env, &["run", "--headless", "--topic", "  "]).await;
    assert_eq!(out.status.code(), Some(2));
    let out = run(&env, &["run", "--headless"]).await;
    assert_eq!(out.status.code(), Some(2), "--topic is required");
}

/// Issue 24's reproduction: `kakeai run --db postgresql://…` wrote its turns into an SQLite file
/// under a directory named after the URL. Now the run lands in that PostgreSQL database: the
/// current directory stays empty, `runs` and `export` read it back from the URL, and the
/// export is the same bytes as the same run's would be from anywhere else (its events match).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_with_a_postgresql_url_lands_in_that_database() {
    let Some(cluster) =
        common::pg::PgCluster::start("a_run_with_a_postgresql_url_lands_in_that_database")
    else {
        return;
    };
    let url = cluster.database("runs");
    let server = openai_server().await;
    let env = Env::new();
    let cwd = tempfile::tempdir().unwrap();
    let mut c = env.cmd(&[
        "run",
        "--headless",
        "--topic",
        "坂の上の景色",
        "--turns",
        "2",
        "--endpoint",
        &server.url,
        "--model",
        "tiny-ja",
        "--db",
        &url,
    ]);
    c.current_dir(cwd.path());
    let out = tokio::task::spawn_blocking(move || c.output().unwrap())
        .await
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let ev = events(&out.stdout);
    let commits = ev.iter().filter(|e| e["event"] == "turn_commit").count();
    assert_eq!(commits, 2);
    let left: Vec<_> = std::fs::read_dir(cwd.path()).unwrap().collect();
    assert!(
        left.is_empty(),
        "created in the current directory: {left:?}"
    );
    let listed = run(&env, &["runs", "--db", &url, "--format", "json"]).await;
    assert_eq!(
        listed.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&listed.stderr)
    );
    let runs: serde_json::Value = serde_json::from_slice(&listed.stdout).unwrap();
    assert_eq!(runs[0]["topic"], "坂の上の景色", "{runs}");
    assert_eq!(runs[0]["turns"], 2, "{runs}");
    let run_id = ev[0]["run_id"].as_i64().unwrap().to_string();
    let exported = run(
        &env,
        &[
            "export", "--run", &run_id, "--format", "jsonl", "--db", &url,
        ],
    )
    .await;
    assert_eq!(exported.status.code(), Some(0));
    let records = events(&exported.stdout);
    let turns: Vec<&serde_json::Value> = records.iter().filter(|r| r["record"] == "turn").collect();
    let said: Vec<&serde_json::Value> = ev
        .iter()
        .filter(|e| e["event"] == "turn_commit")
        .map(|e| &e["text"])
        .collect();
    assert_eq!(turns.iter().map(|t| &t["text"]).collect::<Vec<_>>(), said);
}

/// A model every line of which the Director rejects (eight short lines: `lines` RETRY): the
/// run says once, early, that the model may be unsuitable — a `model_unsuitable` event after
/// the eighth rejected attempt in a row, naming doctor — and goes on to its end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_of_rejected_attempts_says_the_model_may_be_unsuitable_once() {
    let server = FakeServer::with(|req: &Recorded, _| match req.path.as_str() {
        "/v1/models" => Reply::json(
            200,
            r#"{"object":"list","data":[{"id":"tiny-ja","object":"model","owned_by":"llamacpp"}]}"#,
        ),
        "/v1/chat/completions" if req.json()["stream"] == true => {
            let lines: Vec<String> = (1..=8).map(|i| format!("うん{i}。\n")).collect();
            let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
            Reply::sse(parts(&sse_events("tiny-ja", &refs, "stop", 8)))
        }
        _ => Reply::json(
            404,
            r#"{"error":{"message":"File Not Found","type":"not_found_error","code":404}}"#,
        ),
    })
    .await;
    let env = Env::new();
    let out = run(
        &env,
        &[
            "run",
            "--headless",
            "--topic",
            "坂道",
            "--turns",
            "4",
            "--attempts",
            "3",
            "--no-judge",
            "--endpoint",
            &server.url,
            "--model",
            "tiny-ja",
        ],
    )
    .await;
    let err = String::from_utf8_lossy(&out.stderr);
    let ev = events(&out.stdout);
    let said: Vec<usize> = ev
        .iter()
        .enumerate()
        .filter(|(_, e)| e["event"] == "model_unsuitable")
        .map(|(i, _)| i)
        .collect();
    assert_eq!(said.len(), 1, "said once: {err}");
    let e = &ev[said[0]];
    assert!(
        e["message"].as_str().unwrap().contains("kakeai doctor"),
        "{e}"
    );
    let rejected_before = ev[..said[0]]
        .iter()
        .filter(|e| e["event"] == "attempt_done")
        .count();
    assert_eq!(rejected_before, 8, "after the eighth rejected attempt: {e}");
    assert!(
        ev.iter()
            .any(|e| e["event"] == "run_end" || e["event"] == "run_done"),
        "the run went on to its end: {:?}",
        ev.last()
    );
}
