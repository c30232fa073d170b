//! End-to-end tests of the `kakeai pii mask` contract through the real binary.

use std::process::Output;

mod cli_env;
use cli_env::Env;

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn json_lines(o: &Output) -> Vec<serde_json::Value> {
    stdout(o)
        .lines()
        .map(|l| serde_json::from_str(l).expect("stdout line is JSON"))
        .collect()
}

/// `printf %s '田中さんの電話は090-1234-5678' | sha256sum`
const SHA_TANAKA: &str = "723f1b1c9abf6d8b5ff89913a2b6333ad37ddefd82eaf6d062cb9119eaaa8b81";
/// `printf %s '[スキップ]' | sha256sum`
const SHA_SKIP: &str = "37caad62fcc0e4d17959da03a7748d788490a582cb89aa55c4cd521975247582";

/// The installation secret the binary created on first use, read back from the env's data
/// dir (0600), as a key to compute the expected digests with.
fn installed_key(env: &Env) -> kakeai::safety::pii::DigestKey {
    let path = env.dir.path().join("data").join("pii.key");
    let hex = std::fs::read_to_string(&path).expect("the key file was created");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "the key file is private");
    }
    let hex = hex.trim();
    let mut bytes = [0u8; 32];
    for (i, b) in bytes.iter_mut().enumerate() {
        *b = u8::from_str_radix(&hex[i * 2..i * 2 + 2], 16).unwrap();
    }
    kakeai::safety::pii::DigestKey::from_bytes(&bytes)
}

#[test]
fn json_masks_the_whole_input_as_one_text() {
    let env = Env::new();
    let o = env.run_in(&["pii", "mask"], "田中さんの電話は090-1234-5678\n");
    assert_eq!(o.status.code(), Some(0), "stderr: {}", stderr(&o));
    let v = json_lines(&o);
    assert_eq!(v.len(), 1);
    assert_eq!(
        v[0],
        serde_json::json!({
            "pii_detected": true,
            "masked_text": "[氏名]さんの電話は[電話番号]",
            "items": [
                {"kind": "氏名", "span": [0, 2]},
                {"kind": "電話番号", "span": [8, 21]}
            ],
            "original_digest": installed_key(&env).message_digest("田中さんの電話は090-1234-5678"),
            "analyzer": v[0]["analyzer"].clone(),
        })
        .as_object()
        .map(|o| {
            let mut o = o.clone();
            if let Some(n) = v[0].get("analyzer_note") {
                o.insert("analyzer_note".into(), n.clone());
            }
            serde_json::Value::Object(o)
        })
        .unwrap_or_default()
    );
    // The output names the analyzer; without a dictionary it says its recall is lower.
    match v[0]["analyzer"].as_str() {
        Some("fallback") => assert!(
            v[0]["analyzer_note"]
                .as_str()
                .is_some_and(|n| n.contains("lower recall"))
        ),
        Some("lindera-ipadic") => assert!(v[0].get("analyzer_note").is_none()),
        other => panic!("analyzer {other:?}"),
    }
    // The plain SHA-256 would let anyone test guesses: never printed.
    assert!(!stdout(&o).contains(SHA_TANAKA), "{}", stdout(&o));
    assert_ne!(v[0]["original_digest"], SHA_TANAKA);
    assert!(
        stdout(&o).starts_with(r#"{"pii_detected":true,"masked_text":"#),
        "field order is the contract's: {}",
        stdout(&o)
    );
}

#[test]
fn json_reads_a_file_or_dash_and_keeps_inner_newlines() {
    let env = Env::new();
    let text = "はじめまして、佐藤と申します。\n東京都に住んでいます。\n";
    let path = env.file("in.txt", text);
    let from_file = env.run(&["pii", "mask", &path, "--format", "json"]);
    assert_eq!(from_file.status.code(), Some(0), "{}", stderr(&from_file));
    let v = &json_lines(&from_file)[0];
    assert_eq!(
        v["masked_text"],
        "はじめまして、[氏名]と申します。\n東京都に住んでいます。"
    );
    assert_eq!(
        v["items"],
        serde_json::json!([{"kind": "氏名", "span": [7, 9]}])
    );
    let from_dash = env.run_in(&["pii", "mask", "-"], text);
    assert_eq!(stdout(&from_dash), stdout(&from_file));
}

#[test]
fn jsonl_gives_one_object_per_line_with_its_id_first() {
    let env = Env::new();
    let input = concat!(
        r#"{"id": "u1", "text": "田中さんの電話は090-1234-5678"}"#,
        "\n\n",
        r#"{"id": 7, "text": "今日は暑いね"}"#,
        "\n",
        r#"{"text": "[スキップ]", "user": "ignored"}"#,
        "\n",
        r#"{"id": null, "text": "東京都渋谷区神南1-2-3です"}"#,
        "\n",
    );
    let o = env.run_in(&["pii", "mask", "--format", "jsonl"], input);
    assert_eq!(o.status.code(), Some(0), "stderr: {}", stderr(&o));
    let out = stdout(&o);
    assert!(out.lines().all(|l| l.starts_with(r#"{"id":"#)), "{out}");
    let v = json_lines(&o);
    assert_eq!(v.len(), 4, "the blank line is skipped");
    assert_eq!(v[0]["id"], "u1");
    assert_eq!(v[0]["masked_text"], "[氏名]さんの電話は[電話番号]");
    let key = installed_key(&env);
    assert_eq!(
        v[0]["original_digest"],
        key.message_digest("田中さんの電話は090-1234-5678")
    );
    assert_eq!(v[1]["id"], 7);
    assert_eq!(v[1]["pii_detected"], false);
    assert_eq!(v[1]["items"], serde_json::json!([]));
    assert_eq!(v[1]["masked_text"], "今日は暑いね");
    assert_eq!(v[2]["id"], "4", "a record without id gets its line number");
    assert_eq!(v[2]["pii_detected"], false);
    assert_eq!(v[2]["masked_text"], "[スキップ]");
    assert_eq!(v[2]["original_digest"], key.message_digest("[スキップ]"));
    assert!(!stdout(&o).contains(SHA_SKIP));
    assert_eq!(v[3]["id"], serde_json::Value::Null);
    assert_eq!(v[3]["masked_text"], "[住所]です");
    assert_eq!(
        v[3]["items"],
        serde_json::json!([{"kind": "住所", "span": [0, 13]}])
    );
}

#[test]
fn malformed_lines_are_all_reported_and_nothing_is_printed() {
    let env = Env::new();
    let input = concat!(
        r#"{"id": 1, "text": "田中さん"}"#,
        "\n",
        r#"{"id": 2, "text": "途中で切れた"#,
        "\n",
        "ただの文\n",
        r#"{"id": 4}"#,
        "\n",
        r#"{"id": {"x": 1}, "text": "a"}"#,
        "\n",
    );
    let path = env.file("bad.jsonl", input);
    let o = env.run(&["pii", "mask", &path, "--format", "jsonl"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(stdout(&o), "", "nothing half-written");
    let err = stderr(&o);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 4, "{err}");
    assert!(
        lines[0].starts_with(&format!("kakeai pii: {path}:2:")) && lines[0].contains("EOF"),
        "{err}"
    );
    assert_eq!(
        lines[1],
        format!(
            "kakeai pii: {path}:3:1: expected a JSON object like {{\"id\": 1, \"text\": \"…\"}}"
        )
    );
    assert!(
        lines[2].starts_with(&format!("kakeai pii: {path}:4:"))
            && lines[2].contains("missing field `text`"),
        "{err}"
    );
    assert!(
        lines[3].starts_with(&format!("kakeai pii: {path}:5:"))
            && lines[3].contains("string, number, boolean or null"),
        "{err}"
    );
    for l in lines {
        let col = l.splitn(4, ':').nth(3).unwrap_or("").split(':').next();
        assert!(
            col.is_some_and(|c| c.trim().parse::<usize>().is_ok()),
            "FILE:LINE:COL in {l}"
        );
    }
}

#[test]
fn a_missing_file_is_a_usage_error() {
    let env = Env::new();
    let o = env.run(&["pii", "mask", "no-such-file.jsonl"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(stdout(&o), "");
    let err = stderr(&o);
    assert!(err.starts_with("kakeai pii: no-such-file.jsonl: "), "{err}");
    assert_eq!(err.lines().count(), 1);
}

#[path = "llm_fake/mod.rs"]
mod llm_fake;

/// An OpenAI-compatible fake whose chat answer is `answer` (None: a 500 error), recording bodies.
async fn pii_server(answer: Option<&'static str>) -> llm_fake::FakeServer {
    use llm_fake::{Recorded, Reply, openai_reply};
    llm_fake::FakeServer::with(move |req: &Recorded, _| match (req.path.as_str(), answer) {
        ("/v1/chat/completions", Some(a)) => Reply::json(200, &openai_reply("tiny-ja", a, 30)),
        ("/v1/chat/completions", None) => Reply::json(
            500,
            r#"{"error":{"message":"model crashed","type":"server_error"}}"#,
        ),
        _ => Reply::json(404, r#"{"error":"not found"}"#),
    })
    .await
}

async fn mask_with(env: &Env, url: &str, mode: &str, text: &str) -> Output {
    let mut c = env.cmd(&[
        "pii",
        "mask",
        "--llm",
        mode,
        "--endpoint",
        &format!("{url}/v1"),
        "--model",
        "tiny-ja",
    ]);
    let text = text.to_string();
    tokio::task::spawn_blocking(move || {
        use std::io::Write;
        let mut child = c
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(text.as_bytes())
            .unwrap();
        child.wait_with_output().unwrap()
    })
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_llm_pass_adds_what_the_rules_missed_and_never_sees_what_they_caught() {
    let text = "昨日、みさきと映画を見た。電話は090-1234-5678です。";
    let server = pii_server(Some(
        "PII_DETECTED: true\nMASKED_TEXT: 昨日、[氏名]と映画を見た。電話は[電話番号]です。\nDETECTED_ITEMS: 氏名",
    ))
    .await;
    let env = Env::new();
    let o = mask_with(&env, &server.url, "fail-closed", text).await;
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(
        v["masked_text"],
        "昨日、[氏名]と映画を見た。電話は[電話番号]です。"
    );
    let kinds: Vec<&str> = v["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["氏名", "電話番号"]);
    assert!(v.get("review").is_none(), "{v}");
    // The model was shown the rule-masked text: never the phone number.
    let bodies: Vec<String> = server.recorded().iter().map(|r| r.body.clone()).collect();
    assert!(
        bodies.iter().any(|b| b.contains("[電話番号]")),
        "{bodies:?}"
    );
    assert!(bodies.iter().all(|b| !b.contains("090-1234")), "{bodies:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_llm_pass_keeps_the_rules_and_flags_only_when_fail_closed() {
    let text = "電話は090-1234-5678です。";
    let server = pii_server(None).await;
    let env = Env::new();
    let closed = mask_with(&env, &server.url, "fail-closed", text).await;
    // Visibly not clean: exit 3 and a note on stderr, besides "review".
    assert_eq!(closed.status.code(), Some(3), "{}", stderr(&closed));
    assert!(stderr(&closed).contains("not clean"), "{}", stderr(&closed));
    let v: serde_json::Value = serde_json::from_str(stdout(&closed).trim()).unwrap();
    assert_eq!(v["masked_text"], "電話は[電話番号]です。");
    assert!(v["review"].as_str().unwrap().contains("要確認"), "{v}");
    let open = mask_with(&env, &server.url, "fail-open", text).await;
    assert_eq!(open.status.code(), Some(0), "{}", stderr(&open));
    let v: serde_json::Value = serde_json::from_str(stdout(&open).trim()).unwrap();
    assert_eq!(v["masked_text"], "電話は[電話番号]です。");
    assert!(v.get("review").is_none(), "{v}");
}

/// Issue 26 §1 and §4: on a fresh install with MeCab's sources, `pii mask` builds the
/// dictionary on first use, as `check` does, and masks with it (the analyzer's proper nouns
/// are the primary signal); the second run reuses it. `KAKEAI_PII_ANALYZER=fallback` still
/// forces the rules alone, and says so.
#[test]
fn a_fresh_install_masks_with_the_dictionary_built_on_first_use() {
    if !cli_env::has_ipadic_sources("fresh-install") {
        return;
    }
    let env = Env::new();
    let run = |pii_analyzer: Option<&str>| {
        let mut c = env.cmd(&["pii", "mask"]);
        c.env("KAKEAI_ANALYZER", "auto");
        if let Some(a) = pii_analyzer {
            c.env("KAKEAI_PII_ANALYZER", a);
        }
        c.stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let mut child = c.spawn().unwrap();
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all("田中さんの電話は090-1234-5678\n".as_bytes())
            .unwrap();
        let o = child.wait_with_output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        (v, String::from_utf8_lossy(&o.stderr).to_string())
    };
    let (first, stderr) = run(None);
    assert!(
        stderr.contains("building the IPADIC dictionary"),
        "{stderr}"
    );
    assert_eq!(first["analyzer"], "lindera-ipadic", "{first}");
    assert!(first.get("analyzer_note").is_none(), "{first}");
    assert_eq!(first["pii_detected"], true);
    let (second, stderr) = run(None);
    assert!(!stderr.contains("building"), "built once: {stderr}");
    assert_eq!(second["analyzer"], "lindera-ipadic");
    let (rules, _) = run(Some("fallback"));
    assert_eq!(rules["analyzer"], "fallback", "{rules}");
    assert!(
        rules["analyzer_note"]
            .as_str()
            .is_some_and(|n| n.contains("recall"))
    );
}
