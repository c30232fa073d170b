//! Issue 27, "an operator can run it", over real HTTP: /readyz reports the model, the store and
//! the LINE API; the operator's log (blocked + why, rejected lines, send failures; no message
//! text, no full LINE id); SIGHUP reloads the vault (and a vault that makes her fallback
//! unusable means nothing is sent); `serve status --config`; the model set in the config file;
//! `serve forget ID`.

mod cli_env;
mod line_fake;
#[path = "llm_fake/mod.rs"]
mod llm_fake;
mod serve_common;

use std::sync::{Arc, Mutex};

use cli_env::Env;
use line_fake::{Answer, FakeLine};
use serve_common::*;

const OK_LINE: &[&str] = &["えー、", "それ面白い", "じゃん！"];
const RETRY_LINE: &[&str] = &["あたしAIだから、", "そういうのは開発者に言って！"];

fn judgment() -> Arc<Mutex<String>> {
    Arc::new(Mutex::new(String::new()))
}

async fn ready(s: &Serve) -> (u16, serde_json::Value) {
    let r = reqwest::get(format!("{}/readyz", s.metrics_url))
        .await
        .unwrap();
    let code = r.status().as_u16();
    (code, r.json().await.unwrap())
}

fn log_text(s: &Serve) -> String {
    std::fs::read_to_string(s.db().parent().unwrap().join("kakeai-serve.log")).unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readiness_names_the_model_the_store_and_the_line_api() {
    let line = FakeLine::with(|_, _| Answer::ServerError).await;
    let llm = llm(OK_LINE, judgment()).await;
    let s = Serve::start(
        Env::new(),
        &line.url,
        &llm.server.url,
        &fast_config(60.0),
        &[],
    );
    let (code, body) = ready(&s).await;
    assert_eq!(code, 200, "{body}");
    assert_eq!(body["model"]["state"]["ok"], true);
    assert_eq!(body["store"]["ok"], true);
    assert!(body["line_api"]["ok"].is_null());
    let user = "U4bbbbbbbbbbbbbbbbbbbbbbbbbbbb0042";
    s.send(&body_of(user, "r1", "今日は暑いね")).await;
    let failed = until(30, || {
        let st = query(
            &s.db(),
            "SELECT state FROM line_messages WHERE role = 'bot'",
            |r| r.get::<_, String>(0),
        );
        // `sending` first (the outbox), then settled.
        st.first().filter(|s| *s != "sending").cloned()
    })
    .await;
    assert_eq!(failed.as_deref(), Some("failed"));
    let (code, body) = ready(&s).await;
    assert_eq!(code, 503, "{body}");
    assert_eq!(body["line_api"]["ok"], false);
    // The log has the send failure, not the text and not the whole id.
    let log = log_text(&s);
    assert!(
        log.contains("send-failed") && log.contains("U…0042"),
        "{log}"
    );
    assert!(
        !log.contains(user) && !log.contains("今日は暑いね"),
        "{log}"
    );
    // The model gone: not ready, and says so.
    drop(llm);
    let (code, body) = ready(&s).await;
    assert_eq!(code, 503, "{body}");
    assert_eq!(body["model"]["state"]["ok"], false);
    // status --config reads the same.
    let cfg = s.env.file(
        "status.toml",
        &format!(
            "[http]\nmetrics_listen = \"{}\"\n",
            s.metrics_url.trim_start_matches("http://")
        ),
    );
    let o = s.env.run(&["serve", "status", "--config", &cfg]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("ready:") && out.contains("\"ready\":false"),
        "{out}"
    );
    // `serve status | head`: the reader gone before the first line is written ends it
    // quietly with exit 0 (no panic, no "Broken pipe" on stderr).
    for _ in 0..3 {
        let mut child = s
            .env
            .cmd(&["serve", "status", "--config", &cfg])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let o = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(0), "{err}");
        assert!(err.trim().is_empty(), "{err}");
    }
}

/// Whoever read the server's stderr went away (a closed pipe: a terminal closed, a log
/// collector restarted): every later log line fails to write. Each message is still answered
/// (the rejected line's log lines are written after the pipe closed), the log file still gets
/// them, and SIGTERM still ends it with exit 0 — a log line never panics a worker.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_closed_stderr_never_stops_a_worker_or_the_exit() {
    let line = FakeLine::ok().await;
    let llm = llm(RETRY_LINE, judgment()).await;
    let mut s = Serve::start(
        Env::new(),
        &line.url,
        &llm.server.url,
        &fast_config(60.0),
        &[],
    );
    s.deaf.store(true, std::sync::atomic::Ordering::SeqCst);
    let users = [
        "U4cccccccccccccccccccccccccc0001",
        "U4cccccccccccccccccccccccccc0002",
    ];
    for (n, user) in users.iter().enumerate() {
        s.send(&body_of(user, &format!("d{n}"), "こんにちは")).await;
        line.wait(30, |c| c.len() > n).await;
    }
    assert_eq!(line.calls().len(), 2, "{:?}", line.calls());
    let rejected = log_text(&s).matches("rejected").count();
    assert!(rejected >= 2, "{}", log_text(&s));
    let status = s.terminate();
    assert_eq!(status.code(), Some(0), "{status:?}");
}

/// A model server whose error quotes what it was sent (her whole prompt, the user's masked
/// message) with forged log lines in it: the log says the attempt failed with HTTP 500 and
/// nothing of the body — no message text, no extra line; a blocked message's line names its
/// layer and reason without Rust debug text.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_servers_error_body_never_reaches_the_log() {
    use llm_fake::{FakeServer, Recorded, Reply, openai_reply};
    const FORGED: &str = "2026-01-01T00:00:00Z sighup vault NOT reloaded";
    let server = FakeServer::with(|req: &Recorded, _| match req.path.as_str() {
        "/v1/models" => Reply::json(200, r#"{"object":"list","data":[{"id":"tiny-ja"}]}"#),
        _ if is_pii_pass(req) => pii_nothing(req),
        // Her line, streamed or (after a failed stream) not: the quoting error.
        "/v1/chat/completions" if !req.body.contains("context_type") => {
            let quoted = serde_json::json!({"error": {"code": 500, "message":
                format!("cannot process:\n{FORGED}\r\n{}", req.body)}});
            Reply::json(500, &quoted.to_string())
        }
        _ => Reply::json(
            200,
            &openai_reply(
                "tiny-ja",
                r#"{"context_type":"じゃれ合い","confidence":0.9,"reason":"からかい"}"#,
                10,
            ),
        ),
    })
    .await;
    let line = FakeLine::ok().await;
    let s = Serve::start(Env::new(), &line.url, &server.url, &fast_config(60.0), &[]);
    let user = "U4dddddddddddddddddddddddddd0001";
    s.send(&body_of(user, "q1", "今日は商店街で福引したよ"))
        .await;
    s.send(&body_of(user, "q2", "死ね")).await;
    line.wait(30, |c| !c.is_empty()).await;
    let log = until(20, || {
        let l = log_text(&s);
        (l.contains("model-error") && l.contains("blocked")).then_some(l)
    })
    .await
    .unwrap_or_else(|| log_text(&s));
    assert!(log.contains("model failed with HTTP 500"), "{log}");
    for bad in [
        "商店街",
        "福引",
        "cannot process",
        FORGED,
        "Some(",
        "StaticNg",
        "\r",
    ] {
        assert!(!log.contains(bad), "{bad:?} in the log:\n{log}");
    }
    // Every line is one of the server's: time, kind, detail.
    for l in log.lines() {
        assert!(l.starts_with("20") && l.split(' ').count() >= 3, "{l}");
    }
    let blocked = log.lines().find(|l| l.contains(" blocked ")).unwrap();
    assert!(
        blocked.contains("blocked at L1 (static_ng)")
            || blocked.contains("(contextual_ng)")
            || blocked.contains("(pattern_ng)")
            || blocked.contains("(attack)"),
        "{blocked}"
    );
}

fn body_of(user: &str, id: &str, t: &str) -> String {
    body(&[text(&event_id(), ("user", user), id, t)])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn blocked_messages_and_rejected_lines_are_logged_without_their_text() {
    let line = FakeLine::ok().await;
    let llm = llm(RETRY_LINE, judgment()).await;
    let s = Serve::start(
        Env::new(),
        &line.url,
        &llm.server.url,
        &fast_config(60.0),
        &[],
    );
    let user = "U4aaaaaaaaaaaaaaaaaaaaaaaaaaaa0077";
    s.send(&body_of(user, "l1", "死ね")).await;
    s.send(&body_of(user, "l2", "こんにちは")).await;
    line.wait(20, |c| !c.is_empty()).await;
    let log = until(10, || {
        let l = log_text(&s);
        (l.contains("blocked") && l.contains("rejected") && l.contains("fallback")).then_some(l)
    })
    .await
    .unwrap_or_else(|| log_text(&s));
    assert!(
        log.contains("blocked") && log.contains("rejected") && log.contains("fallback"),
        "{log}"
    );
    assert!(!log.contains("死ね") && !log.contains(user), "{log}");
    let err = s.stderr.lock().unwrap().join("\n");
    assert!(err.contains("blocked") && err.contains("U…0077"), "{err}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let p = s.db().parent().unwrap().join("kakeai-serve.log");
        assert_eq!(
            std::fs::metadata(p).unwrap().permissions().mode() & 0o077,
            0
        );
    }
}

fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), dest).unwrap();
        }
    }
}

#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sighup_reloads_the_vault_and_an_unusable_fallback_means_nothing_is_sent() {
    let line = FakeLine::ok().await;
    let llm = llm(RETRY_LINE, judgment()).await;
    let env = Env::new();
    let vault = env.dir.path().join("vault");
    copy_dir(std::path::Path::new(&sample_vault()), &vault);
    let v = vault.to_str().unwrap().to_string();
    let mut s = Serve::start(
        env,
        &line.url,
        &llm.server.url,
        &fast_config(60.0),
        &["--vault", &v],
    );
    // The writer adds a word of her fallback line to a secret's forbidden keywords.
    let yaml = vault.join("_ai_control/visibility.yaml");
    let text = std::fs::read_to_string(&yaml).unwrap();
    std::fs::write(&yaml, {
        let to = text.replace(
            "            - {word: 春から, reading: はるから}\n",
            "            - {word: 春から, reading: はるから}\n            - 考え\n",
        );
        assert_ne!(to, text, "the sample's keyword list changed shape");
        to
    })
    .unwrap();
    let _ = std::process::Command::new("kill")
        .args(["-HUP", &s.child.id().to_string()])
        .status();
    // The reload line comes first, its warning right after it.
    let reloaded = until(10, || {
        let log = log_text(&s);
        (log.contains("vault reloaded") && log.contains("WARNING")).then_some(())
    })
    .await;
    assert!(reloaded.is_some(), "{}", log_text(&s));
    assert!(log_text(&s).contains("WARNING"), "{}", log_text(&s));
    assert!(
        s.child.try_wait().unwrap().is_none(),
        "SIGHUP killed the server"
    );
    s.send(&body_of(
        "U4aaaaaaaaaaaaaaaaaaaaaaaaaaaa0088",
        "h1",
        "こんにちは",
    ))
    .await;
    let state = until(20, || {
        query(
            &s.db(),
            "SELECT state FROM line_messages WHERE role = 'bot'",
            |r| r.get::<_, String>(0),
        )
        .first()
        .cloned()
    })
    .await;
    assert_eq!(state.as_deref(), Some("withheld"));
    assert!(line.calls().is_empty(), "{:?}", line.calls());
    assert_eq!(s.metric("kakeai_line_withheld_total").await, 1.0);
    assert!(s.terminate().success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_model_is_set_in_the_config_file() {
    let line = FakeLine::ok().await;
    let llm = llm(OK_LINE, judgment()).await;
    let env = Env::new();
    let cfg = env.file(
        "serve.toml",
        &format!(
            "{}[model]\nendpoint = \"{}\"\nmodel = \"tiny-ja\"\napi = \"openai\"\n",
            fast_config(60.0),
            llm.server.url
        ),
    );
    let mut child = env
        .cmd(&[
            "serve",
            "--line",
            "--listen",
            "127.0.0.1:0",
            "--config",
            &cfg,
            "--line-api-base",
            &line.url,
            "--no-vault",
        ])
        .env("KAKEAI_LINE_CHANNEL_SECRET", SECRET)
        .env("KAKEAI_LINE_ACCESS_TOKEN", TOKEN)
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let err = child.stderr.take().unwrap();
    let mut lines = std::io::BufRead::lines(std::io::BufReader::new(err));
    let model_line = lines
        .by_ref()
        .map_while(Result::ok)
        .find(|l| l.contains("kakeai serve: model"))
        .unwrap_or_default();
    let _ = child.kill();
    let _ = child.wait();
    assert!(
        model_line.contains("tiny-ja") && model_line.contains(&llm.server.url),
        "{model_line}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forget_deletes_a_users_data() {
    let line = FakeLine::ok().await;
    let llm = llm(OK_LINE, judgment()).await;
    let mut s = Serve::start(
        Env::new(),
        &line.url,
        &llm.server.url,
        &fast_config(60.0),
        &[],
    );
    let gone = "U4aaaaaaaaaaaaaaaaaaaaaaaaaaa0001";
    let kept = "U4aaaaaaaaaaaaaaaaaaaaaaaaaaa0002";
    s.send(&body_of(gone, "f1", "こんにちは")).await;
    s.send(&body_of(kept, "f2", "こんばんは")).await;
    line.wait(20, |c| c.len() == 2).await;
    until(10, || {
        let n = query(
            &s.db(),
            "SELECT COUNT(*) FROM line_messages WHERE role = 'bot'",
            |r| r.get::<_, i64>(0),
        );
        (n[0] == 2).then_some(())
    })
    .await;
    assert!(s.terminate().success());
    let db = s.db();
    let dbs = db.to_str().unwrap();
    let o = s.env.run(&["serve", "forget", gone, "--db", dbs]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let count = |sql: &str| query(&db, sql, |r| r.get::<_, i64>(0))[0];
    assert_eq!(
        count(&format!(
            "SELECT COUNT(*) FROM line_messages WHERE channel_id = '{gone}'"
        )),
        0
    );
    assert_eq!(
        count(&format!(
            "SELECT COUNT(*) FROM line_events WHERE channel_id = '{gone}'"
        )),
        0
    );
    assert_eq!(
        count(&format!(
            "SELECT COUNT(*) FROM conversation_messages WHERE conversation_id = 'line:{gone}'"
        )),
        0
    );
    assert_eq!(
        count(&format!(
            "SELECT COUNT(*) FROM line_messages WHERE channel_id = '{kept}'"
        )),
        2
    );
    assert!(
        count(&format!(
            "SELECT COUNT(*) FROM conversation_messages WHERE conversation_id = 'line:{kept}'"
        )) > 0
    );
    let o = s.env.run(&["serve", "forget", gone, "--db", dbs]);
    assert_eq!(o.status.code(), Some(1));
    let o = s
        .env
        .run(&["serve", "forget", "U'; DROP TABLE x", "--db", dbs]);
    assert_eq!(o.status.code(), Some(2));
    // Not an id as LINE writes them (README: exit 2 "not an id"), the stored one's case
    // changed, one digit short: refused before the store is opened.
    let upper = kept.to_uppercase();
    for word in ["bogus", upper.as_str(), &kept[..32]] {
        let o = s.env.run(&["serve", "forget", word, "--db", dbs]);
        assert_eq!(o.status.code(), Some(2), "{word}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("not a LINE user"), "{err}");
    }
    assert_eq!(
        count(&format!(
            "SELECT COUNT(*) FROM line_messages WHERE channel_id = '{kept}'"
        )),
        2
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_instance_on_the_same_metrics_address_names_the_setting_and_exits_2() {
    let line = FakeLine::ok().await;
    let llm = llm(OK_LINE, judgment()).await;
    let first = Serve::start(
        Env::new(),
        &line.url,
        &llm.server.url,
        &fast_config(60.0),
        &[],
    );
    let taken = first.metrics_url.trim_start_matches("http://").to_string();
    let env = Env::new();
    let cfg = env.file("serve.toml", &fast_config(60.0));
    let out = env
        .cmd(&[
            "serve",
            "--line",
            "--listen",
            "127.0.0.1:0",
            "--metrics-listen",
            &taken,
            "--config",
            &cfg,
            "--line-api-base",
            &line.url,
            "--endpoint",
            &llm.server.url,
            "--api",
            "openai",
            "--model",
            "tiny-ja",
            "--no-vault",
        ])
        .env("KAKEAI_LINE_CHANNEL_SECRET", SECRET)
        .env("KAKEAI_LINE_ACCESS_TOKEN", TOKEN)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!("cannot listen on {taken} (metrics_listen)")),
        "{err}"
    );
    assert!(err.contains("its own `metrics_listen`"), "{err}");
}
