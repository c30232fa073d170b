//! `kakeai safety judge` and `kakeai safety check-reply` through the real binary: the JSON
//! Lines contract, exit codes 0 / 1 / 2, per-user history, the user's data files, and Layer 4
//! against a closed port and a fake endpoint.

#[path = "llm_fake/mod.rs"]
mod llm_fake;

mod cli_env;

use std::process::Output;

use cli_env::Env;
use llm_fake::{FakeServer, Reply, openai_reply};

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn lines(o: &Output) -> Vec<serde_json::Value> {
    stdout(o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

#[test]
fn judge_prints_the_contract_per_line() {
    let env = Env::new();
    let input = concat!(
        r#"{"id": "hello", "text": "今日はいい天気だね！", "role": "user", "timestamp": 1}"#,
        "\n\n",
        r#"{"id": 2, "text": "死ね"}"#,
        "\n",
        r#"{"text": "やなってほんとバカだなぁ笑", "returning": true}"#,
        "\n",
    );
    let o = env.run_in(&["safety", "judge", "--no-llm"], input);
    assert_eq!(o.status.code(), Some(1), "stderr: {}", stderr(&o));
    let v = lines(&o);
    assert_eq!(v.len(), 3);
    for line in &v {
        let mut keys: Vec<&str> = line
            .as_object()
            .unwrap()
            .keys()
            .map(|k| k.as_str())
            .collect();
        keys.sort();
        assert_eq!(
            keys,
            ["action", "context_type", "id", "layer", "reason", "trace"]
        );
        let t = line["trace"].as_array().unwrap();
        assert_eq!(t.len(), 4);
        assert_eq!(t[3]["layer"], 4);
        assert_eq!(t[3]["outcome"], "skipped", "{line}");
    }
    assert_eq!(v[0]["id"], "hello");
    assert_eq!(
        (
            &v[0]["action"],
            &v[0]["layer"],
            &v[0]["reason"],
            &v[0]["context_type"]
        ),
        (
            &"respond".into(),
            &serde_json::Value::Null,
            &serde_json::Value::Null,
            &serde_json::Value::Null
        )
    );
    assert_eq!(v[1]["id"], 2);
    assert_eq!(
        (&v[1]["action"], &v[1]["layer"]),
        (&"block".into(), &3.into())
    );
    assert_eq!(v[1]["reason"], "pattern_ng");
    // No id: the line number (blank lines count).
    assert_eq!(v[2]["id"], "4");
    assert_eq!(v[2]["action"], "respond");
    assert_eq!(v[2]["context_type"], "じゃれ合い");
    assert!(
        v[2]["trace"][3]["note"]
            .as_str()
            .unwrap()
            .contains("--no-llm"),
        "{}",
        v[2]["trace"][3]
    );
    // Nothing blocked: exit 0.
    let file = env.file("ok.jsonl", "{\"id\": 1, \"text\": \"おはよう\"}\n");
    let o = env.run(&["safety", "judge", &file, "--no-llm", "--character", "ayu"]);
    assert_eq!(o.status.code(), Some(0), "stderr: {}", stderr(&o));
}

#[test]
fn bad_lines_are_all_reported_and_nothing_is_printed() {
    let env = Env::new();
    let file = env.file(
        "bad.jsonl",
        concat!(
            "{\"id\": 1, \"text\": \"こんにちは\"}\n",
            "ただのテキスト\n",
            "{\"id\": 3, \"txt\": \"typo\"}\n",
            "{\"id\": 4, \"text\": \"やあ\", \"character\": \"mika\"}\n",
            "{\"id\": [5], \"text\": \"やあ\"}\n",
        ),
    );
    let o = env.run(&["safety", "judge", &file, "--no-llm"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(stdout(&o), "");
    let err: Vec<String> = stderr(&o).lines().map(str::to_string).collect();
    assert_eq!(err.len(), 4, "{err:?}");
    assert_eq!(
        err[0],
        format!(
            "kakeai safety: {file}:2:1: expected a JSON object like {{\"id\": 1, \"text\": \"…\"}}"
        )
    );
    assert!(
        err[1].starts_with(&format!("kakeai safety: {file}:3:")),
        "{}",
        err[1]
    );
    assert!(err[1].contains("missing field `text`"), "{}", err[1]);
    assert!(
        err[2].starts_with(&format!("kakeai safety: {file}:4:25: `character`")),
        "{}",
        err[2]
    );
    assert!(
        err[3].starts_with(&format!("kakeai safety: {file}:5:2: expected `id`")),
        "{}",
        err[3]
    );
    let o = env.run(&["safety", "judge", "/no/such/file.jsonl", "--no-llm"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).starts_with("kakeai safety: /no/such/file.jsonl: "));
}

#[test]
fn user_history_builds_from_earlier_lines() {
    let env = Env::new();
    let mut input = String::new();
    for (u, t) in [
        ("regular", "おはよう！"),
        ("regular", "今日は雨だね"),
        ("regular", "傘忘れちゃった"),
        ("regular", "やなってほんとバカだなぁ笑"),
        ("stranger", "やなってほんとバカだなぁ笑"),
        ("troll", "死ね"),
        ("troll", "ぶっ殺す"),
        ("troll", "バカだなぁ笑"),
    ] {
        input.push_str(
            &serde_json::json!({"text": t, "user_id": u, "returning": u == "troll"}).to_string(),
        );
        input.push('\n');
    }
    let o = env.run_in(&["safety", "judge", "--no-llm"], &input);
    let v = lines(&o);
    assert_eq!(v.len(), 8, "stderr: {}", stderr(&o));
    // Three answered messages make a returning user: banter.
    assert_eq!(
        (&v[3]["action"], &v[3]["context_type"]),
        (&"respond".into(), &"じゃれ合い".into())
    );
    // The same words from a stranger are blocked at Layer 2.
    assert_eq!(
        (&v[4]["action"], &v[4]["reason"]),
        (&"block".into(), &"contextual_ng".into())
    );
    // Two recent blocks make an angry context, even for a known user who laughs.
    assert_eq!(v[7]["reason"], "contextual_ng");
    let signals = &v[7]["trace"][1]["signals"];
    assert!(
        signals.as_array().unwrap().contains(&"recent_flags".into()),
        "{signals}"
    );
}

#[test]
fn user_data_files_extend_the_layers_and_errors_name_the_file() {
    let env = Env::new();
    let dir = env.dir.path().join("config").join("safety");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("mine.toml"),
        "[[word]]\ntext = \"ヘタレ\"\ntier = \"critical\"\ncategory = \"insult\"\n",
    )
    .unwrap();
    let o = env.run_in(
        &["safety", "judge", "--no-llm"],
        "{\"id\": 1, \"text\": \"ﾍﾀﾚだなぁ\"}\n",
    );
    let v = lines(&o);
    assert_eq!(
        (&v[0]["layer"], &v[0]["reason"]),
        (&1.into(), &"static_ng".into())
    );
    assert_eq!(v[0]["trace"][0]["hits"][0]["text"], "ﾍﾀﾚ");
    std::fs::write(
        dir.join("zz-broken.toml"),
        "[[word]]\ntext = \"a\"\ntier = critical\n",
    )
    .unwrap();
    let o = env.run_in(
        &["safety", "judge", "--no-llm"],
        "{\"id\": 1, \"text\": \"やあ\"}\n",
    );
    assert_eq!(o.status.code(), Some(2));
    let path = dir.join("zz-broken.toml").display().to_string();
    assert!(
        stderr(&o).starts_with(&format!("kakeai safety: {path}:3:8: ")),
        "{}",
        stderr(&o)
    );
}

#[test]
fn check_reply_reports_worldview_findings() {
    let env = Env::new();
    let input = concat!(
        r#"{"id": 1, "text": "私はAIなので分かりません。でも海はきれいですね。", "character": "ayu"}"#,
        "\n",
        r#"{"id": 2, "text": "モデルルームを見てきたよ！"}"#,
        "\n",
    );
    let o = env.run_in(&["safety", "check-reply"], input);
    assert_eq!(o.status.code(), Some(1), "stderr: {}", stderr(&o));
    let v = lines(&o);
    assert_eq!(v[0]["status"], "RETRY");
    let f = &v[0]["findings"][0];
    assert_eq!(
        (&f["rule"], &f["span"]),
        (&"worldview".into(), &serde_json::json!([2, 4]))
    );
    assert!(f["suggestion"].as_str().unwrap().contains("あゆ"));
    assert!(
        v[0]["correction"]
            .as_str()
            .unwrap()
            .ends_with("でも海はきれいですね。")
    );
    assert_eq!(v[1]["status"], "PASS");
    assert_eq!(v[1]["findings"], serde_json::json!([]));
    assert_eq!(v[1]["correction"], serde_json::Value::Null);
}

/// Runs the binary off the async runtime, which keeps serving the fake endpoint meanwhile.
async fn run_async(env: &Env, args: &[&str], stdin: &str) -> Output {
    use std::io::Write;
    use std::process::Stdio;
    let mut c = env.cmd(args);
    let input = stdin.to_string();
    tokio::task::spawn_blocking(move || {
        let mut child = c
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
        child.wait_with_output().unwrap()
    })
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn layer_four_over_a_fake_endpoint() {
    let server = FakeServer::with(|req, _| match req.path.as_str() {
        "/v1/chat/completions" => {
            let prompt = req.json()["messages"][0]["content"]
                .as_str()
                .unwrap_or("")
                .to_string();
            let label = if prompt.contains("ゲーム") {
                "じゃれ合い"
            } else {
                "攻撃"
            };
            let text = format!(r#"{{"context_type": "{label}", "confidence": 0.9}}"#);
            Reply::json(200, &openai_reply("tiny-ja", &text, 9))
        }
        _ => Reply::json(404, r#"{"error":"no"}"#),
    })
    .await;
    let env = Env::new();
    let url = format!("{}/v1", server.url);
    let input = concat!(
        r#"{"id": 1, "text": "やなってバカ", "returning": true}"#,
        "\n",
        r#"{"id": 2, "text": "ゲームで死ねって言われたｗ"}"#,
        "\n",
        r#"{"id": 3, "text": "おはよう"}"#,
        "\n",
    );
    let o = run_async(
        &env,
        &["safety", "judge", "--endpoint", &url, "--model", "tiny-ja"],
        input,
    )
    .await;
    let v = lines(&o);
    assert_eq!(v.len(), 3, "stderr: {}", stderr(&o));
    assert_eq!(
        (&v[0]["layer"], &v[0]["reason"]),
        (&4.into(), &"attack".into())
    );
    assert_eq!(v[0]["context_type"], "攻撃");
    assert_eq!(
        (&v[1]["action"], &v[1]["context_type"]),
        (&"respond".into(), &"じゃれ合い".into())
    );
    assert_eq!(v[2]["trace"][3]["outcome"], "skipped");
    // Only the two raised messages were sent to the model.
    assert_eq!(server.recorded().len(), 2);
}

/// Issue 16 §2: Layer 4 was sent the raw message. Every text is masked before any layer, so
/// the model sees tokens, never the name or the number, and the output carries none either.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn layer_four_sees_only_the_masked_message() {
    let server = FakeServer::with(|req, _| match req.path.as_str() {
        "/v1/chat/completions" => Reply::json(
            200,
            &openai_reply(
                "tiny-ja",
                r#"{"context_type": "攻撃", "confidence": 0.9}"#,
                9,
            ),
        ),
        _ => Reply::json(404, r#"{"error":"no"}"#),
    })
    .await;
    let env = Env::new();
    let url = format!("{}/v1", server.url);
    let input = concat!(
        r#"{"id": 1, "text": "山田太郎って知ってる？090-1234-5678に電話してバカって言っといて", "returning": true}"#,
        "\n",
        r#"{"id": 2, "text": "佐藤さゆりさんの家は道玄坂2-10-7、カード4111 1111 1111 1111だよバカ", "returning": true}"#,
        "\n",
    );
    let o = run_async(
        &env,
        &[
            "safety",
            "judge",
            "--l4",
            "always",
            "--endpoint",
            &url,
            "--model",
            "tiny-ja",
        ],
        input,
    )
    .await;
    assert_eq!(lines(&o).len(), 2, "stderr: {}", stderr(&o));
    let bodies: Vec<String> = server.recorded().iter().map(|r| r.body.clone()).collect();
    assert_eq!(
        bodies.len(),
        2,
        "both went to Layer 4: {} {}",
        stdout(&o),
        stderr(&o)
    );
    for raw in ["山田", "太郎", "090-1234", "さゆり", "道玄坂", "4111"] {
        assert!(
            bodies.iter().all(|b| !b.contains(raw)),
            "{raw} sent: {bodies:?}"
        );
        assert!(!stdout(&o).contains(raw), "{raw} printed: {}", stdout(&o));
    }
    assert!(
        bodies
            .iter()
            .any(|b| b.contains("[氏名]") && b.contains("[電話番号]"))
    );
}

#[test]
fn a_closed_port_falls_back_once_and_says_so() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let env = Env::new();
    let url = format!("http://127.0.0.1:{port}");
    let input =
        "{\"id\": 1, \"text\": \"暑くて死にたい\"}\n{\"id\": 2, \"text\": \"自殺のニュース\"}\n";
    let o = env.run_in(
        &["safety", "judge", "--endpoint", &url, "--api", "ollama"],
        input,
    );
    assert_eq!(o.status.code(), Some(1), "stderr: {}", stderr(&o));
    let v = lines(&o);
    assert_eq!(v[0]["trace"][3]["outcome"], "failed");
    assert_eq!(
        (&v[0]["action"], &v[0]["layer"]),
        (&"block".into(), &1.into())
    );
    // After the first failure the endpoint is not asked again.
    assert_eq!(v[1]["trace"][3]["outcome"], "skipped");
    assert!(
        v[1]["trace"][3]["note"]
            .as_str()
            .unwrap()
            .contains("接続できない")
    );
    let err = stderr(&o);
    assert_eq!(err.matches("Layer 4 unavailable").count(), 1, "{err}");
    assert!(err.starts_with("kakeai safety: "), "{err}");
}

/// The CLI reads a user's history as chat mode and the bot do (`chat::context`): blocks among
/// the last 10 messages are recent flags, not the last 5.
#[test]
fn recent_flags_use_the_same_window_as_the_bot() {
    let env = Env::new();
    let mut input = String::new();
    let mut lines_in = vec!["死ね", "ぶっ殺す"];
    let clean = [
        "おはよう！",
        "今日は雨だね",
        "傘忘れちゃった",
        "駅まで走った",
        "パン買った",
    ];
    lines_in.extend(clean);
    lines_in.push("やなってほんとバカだなぁ笑");
    for t in &lines_in {
        input.push_str(&serde_json::json!({"text": t, "user_id": "u1"}).to_string());
        input.push('\n');
    }
    let o = env.run_in(&["safety", "judge", "--no-llm"], &input);
    let v = lines(&o);
    assert_eq!(v.len(), lines_in.len(), "stderr: {}", stderr(&o));
    assert_eq!(v[0]["action"], "block");
    assert_eq!(v[1]["action"], "block");
    for r in &v[2..7] {
        assert_eq!(r["action"], "respond", "{r}");
    }
    // Two blocks six messages back still count (window 10): an angry context, blocked.
    let last = &v[7];
    assert_eq!(last["action"], "block", "{last}");
    let signals = &last["trace"][1]["signals"];
    assert!(
        signals.as_array().unwrap().contains(&"recent_flags".into()),
        "{signals}"
    );
}
