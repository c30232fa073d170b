//! Issue 27: the semantic check (seed 004 §5.3) in live runs, compare's re-judging and the bot,
//! against an embeddings endpoint shaped like llama.cpp's llama-server (b11434) over real HTTP;
//! and what every result says when it did not run.
//!
//! The fake follows `tools/server/server-context.cpp` and `server-common.cpp` of llama.cpp
//! b11434 (the source `shared/tools/llm-server` builds):
//! - routes `/v1/embeddings` (OAI) and `/embeddings` (server.cpp:283-284);
//! - 501 `not_supported_error` "This server does not support embeddings. Start it with
//!   `--embeddings`" without `--embeddings` (server-context.cpp:5834-5835; code 501 from
//!   server-common.cpp:60-62);
//! - 400 `"input" or "content" must be provided` (server-context.cpp:5854), 400 `"input" must
//!   not be empty` (5886), 400 "Input content cannot be empty" for an empty string (5893);
//! - the reply of `format_embeddings_response_oaicompat` (server-common.cpp:1494-1535):
//!   `{"model", "object":"list", "usage":{prompt_tokens,total_tokens}, "data":[{"embedding",
//!   "index": i, "object":"embedding"}]}` in input order (results are placed by task index,
//!   server-queue.cpp `wait_for_all`);
//! - vectors L2-normalised (`embd_normalize` defaults to 2, common.h:620; applied in
//!   `send_embedding`, server-context.cpp:2314-2317).
//!
//! Only the model is ours: a deterministic "concept" embedding (royal line, survivor, island,
//! a changed name, living somewhere, plus a constant), so a paraphrase with none of the
//! secret's words lands near it and an unrelated line does not.

#[path = "llm_fake/mod.rs"]
mod llm_fake;

mod cli_env;

use std::process::Output;

use cli_env::Env;
use llm_fake::{FakeServer, Recorded, Reply, parts, sse_events};
use serde_json::{Value, json};

const SECRET: &str = "リナは滅びた王家の生き残りで、北の島で名前を変えて生きている";
const PARAPHRASE: &str = "本当はどこか遠い島で、別の名前を使って暮らしているのかもしれませんね";
const UNRELATED: &str = "今日は商店街でコロッケを買って、坂の上で食べたよ。";

const CONCEPTS: [&[&str]; 5] = [
    &["王", "姫", "血筋"],
    &["生き残", "滅び"],
    &["島"],
    &["名前", "名を"],
    &["生き", "暮らし", "住ん"],
];

/// The toy model: one axis per concept present, plus a constant axis; L2-normalised as
/// llama-server does with the default `embd_normalize` 2.
fn embed(text: &str) -> Vec<f64> {
    let mut v: Vec<f64> = CONCEPTS
        .iter()
        .map(|words| f64::from(u8::from(words.iter().any(|w| text.contains(w)))))
        .collect();
    v.push(0.2);
    let norm = v.iter().map(|x| x * x).sum::<f64>().sqrt();
    v.iter().map(|x| x / norm).collect()
}

fn error(code: u16, kind: &str, message: &str) -> Reply {
    Reply::json(
        code,
        &json!({"error": {"code": code, "message": message, "type": kind}}).to_string(),
    )
}

fn embeddings_reply(req: &Recorded, embeddings_on: bool) -> Reply {
    if !embeddings_on {
        return error(
            501,
            "not_supported_error",
            "This server does not support embeddings. Start it with `--embeddings`",
        );
    }
    let body: Value = serde_json::from_str(&req.body).unwrap_or(Value::Null);
    let inputs: Vec<String> = match &body["input"] {
        Value::String(s) => vec![s.clone()],
        Value::Array(a) => a
            .iter()
            .map(|x| x.as_str().unwrap_or("").to_string())
            .collect(),
        _ => {
            return error(
                400,
                "invalid_request_error",
                "\"input\" or \"content\" must be provided",
            );
        }
    };
    if inputs.is_empty() {
        return error(400, "invalid_request_error", "\"input\" must not be empty");
    }
    if inputs.iter().any(|s| s.is_empty()) {
        return error(
            400,
            "invalid_request_error",
            "Input content cannot be empty",
        );
    }
    let tokens: usize = inputs.iter().map(|s| s.chars().count()).sum();
    let data: Vec<Value> = inputs
        .iter()
        .enumerate()
        .map(|(i, s)| json!({"embedding": embed(s), "index": i, "object": "embedding"}))
        .collect();
    let model = body["model"].as_str().unwrap_or("concept-embed");
    Reply::json(
        200,
        &json!({"model": model, "object": "list",
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens}, "data": data})
        .to_string(),
    )
}

/// One llama-server-shaped endpoint: chat answers with `line`, embeddings as above.
async fn server(line: &'static str, embeddings_on: bool) -> FakeServer {
    FakeServer::with(move |req: &Recorded, _| match req.path.as_str() {
        "/v1/models" => Reply::json(
            200,
            r#"{"object":"list","data":[{"id":"tiny-ja","object":"model","owned_by":"llamacpp"}]}"#,
        ),
        "/v1/embeddings" | "/embeddings" => embeddings_reply(req, embeddings_on),
        "/v1/chat/completions" => Reply::sse(parts(&sse_events("tiny-ja", &[line], "stop", 20))),
        _ => error(404, "not_found_error", "File Not Found"),
    })
    .await
}

fn vault(env: &Env) -> String {
    let root = env.dir.path().join("vault");
    std::fs::create_dir_all(root.join("_ai_control")).unwrap();
    std::fs::create_dir_all(root.join("characters")).unwrap();
    std::fs::write(
        root.join("_ai_control/visibility.yaml"),
        format!(
            "default_visibility: 3\nentities:\n  characters:\n    リナ:\n      secrets:\n        - id: SEC-HEIR\n          content: {SECRET}\n          visibility: 2\n          importance: critical\n          forbidden_keywords: [{{word: 王家, reading: おうけ}}, {{word: 生き残り, reading: いきのこり}}, {{word: 生きている, reading: いきている}}, {{word: 北の島, reading: きたのしま}}]\n"
        ),
    )
    .unwrap();
    std::fs::write(
        root.join("characters/リナ.md"),
        "---\nname: リナ\n---\n## 基本情報\n旅の途中で姉妹と知り合った少女。\n",
    )
    .unwrap();
    root.display().to_string()
}

fn llm_toml(env: &Env, embed_model: Option<&str>) {
    let dir = env.dir.path().join("config");
    std::fs::create_dir_all(&dir).unwrap();
    let body = match embed_model {
        Some(m) => format!("embed_model = \"{m}\"\n"),
        None => String::new(),
    };
    std::fs::write(dir.join("llm.toml"), body).unwrap();
}

async fn run(env: &Env, args: &[&str]) -> Output {
    let mut c = env.cmd(args);
    tokio::task::spawn_blocking(move || c.output().unwrap())
        .await
        .unwrap()
}

async fn live_run(env: &Env, url: &str) -> (Vec<Value>, String) {
    let v = vault(env);
    let out = run(
        env,
        &[
            "run",
            "--headless",
            "--topic",
            "旅の話",
            "--turns",
            "1",
            "--attempts",
            "1",
            "--no-judge",
            "--endpoint",
            url,
            "--model",
            "tiny-ja",
            "--vault",
            &v,
        ],
    )
    .await;
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let events = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    (events, stderr)
}

fn leak_findings(events: &[Value]) -> Vec<Value> {
    let done = events
        .iter()
        .find(|e| e["event"] == "attempt_done")
        .expect("an attempt");
    done["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "leak")
        .cloned()
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_live_run_finds_the_paraphrase_when_an_embedding_model_is_configured() {
    let s = server(PARAPHRASE, true).await;
    let env = Env::new();
    llm_toml(&env, Some("concept-embed"));
    let (events, stderr) = live_run(&env, &s.url).await;
    assert!(stderr.contains("semantic check on"), "{stderr}");
    let leaks = leak_findings(&events);
    let semantic = leaks
        .iter()
        .find(|f| f["evidence"] == "semantic_similarity SEC-HEIR")
        .unwrap_or_else(|| panic!("no semantic finding: {leaks:?}"));
    assert_eq!(semantic["status"], "RETRY");
    let done = events
        .iter()
        .find(|e| e["event"] == "attempt_done")
        .unwrap();
    assert_eq!(done["verdict"], "RETRY");
    // The embedding call carried the secret and the sentence, with the configured model.
    let calls: Vec<Recorded> = s
        .recorded()
        .into_iter()
        .filter(|r| r.path == "/v1/embeddings")
        .collect();
    assert!(!calls.is_empty());
    let body = calls[0].json();
    assert_eq!(body["model"], "concept-embed");
    assert_eq!(body["input"][0], SECRET);
    // The coverage finding says every check ran.
    let cov = leaks
        .iter()
        .find(|f| {
            f["evidence"]
                .as_str()
                .unwrap_or("")
                .starts_with("coverage ")
        })
        .unwrap();
    assert!(
        cov["evidence"].as_str().unwrap().ends_with("unchecked:-"),
        "{cov}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_an_embedding_model_the_run_says_approved_without_the_semantic_check() {
    let s = server(UNRELATED, true).await;
    let env = Env::new();
    llm_toml(&env, None);
    let (events, stderr) = live_run(&env, &s.url).await;
    assert!(stderr.contains("semantic check OFF"), "{stderr}");
    assert!(
        s.recorded().iter().all(|r| r.path != "/v1/embeddings"),
        "no embed_model: the chat model is never asked to embed"
    );
    let leaks = leak_findings(&events);
    let cov = leaks
        .iter()
        .find(|f| {
            f["evidence"]
                .as_str()
                .unwrap_or("")
                .starts_with("coverage ")
        })
        .unwrap_or_else(|| panic!("no coverage finding: {leaks:?}"));
    let message = cov["message"].as_str().unwrap();
    assert!(
        message.contains("approved without the semantic check"),
        "{message}"
    );
    assert!(
        cov["evidence"]
            .as_str()
            .unwrap()
            .contains("semantic_similarity")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_without_embeddings_is_named_in_the_result() {
    let s = server(UNRELATED, false).await;
    let env = Env::new();
    llm_toml(&env, Some("concept-embed"));
    let (events, _) = live_run(&env, &s.url).await;
    let leaks = leak_findings(&events);
    let cov = leaks
        .iter()
        .find(|f| {
            f["evidence"]
                .as_str()
                .unwrap_or("")
                .starts_with("coverage ")
        })
        .unwrap();
    let message = cov["message"].as_str().unwrap();
    assert!(
        message.contains("approved without the semantic check"),
        "{message}"
    );
    assert!(message.contains("--embeddings"), "{message}");
}

/// The function the bot's judge and compare call: the paraphrase gets a finding with
/// embeddings, and only "approved without the semantic check" without.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn amend_adds_the_semantic_finding_for_the_bot_and_compare() {
    use kakeai::director::{Status, Verdict};
    use kakeai::vault::leak::ReviewResult;
    use kakeai::vault::semantic::{Embedder, amend, review};
    let s = server(PARAPHRASE, true).await;
    let env = Env::new();
    let work = kakeai::vault::open(Some(std::path::Path::new(&vault(&env))), None).unwrap();
    let shared = kakeai::vault::SharedVault::new(work);
    let off = review(&shared, "yana", PARAPHRASE).await;
    assert_eq!(off.result, ReviewResult::ApprovedWithoutSemantic);
    let mut cfg = llm_fake::config(&format!("{}/v1", s.url), Some(kakeai::llm::ApiKind::OpenAi));
    cfg.embed_model = Some("concept-embed".into());
    shared.set_embedder(Embedder::from_config(&cfg));
    let on = review(&shared, "yana", PARAPHRASE).await;
    assert_eq!(on.result, ReviewResult::Rejected, "{on:?}");
    let unrelated = review(&shared, "yana", UNRELATED).await;
    assert_eq!(unrelated.result, ReviewResult::Approved, "{unrelated:?}");
    let mut v: Verdict = serde_json::from_value(json!({
        "status": "PASS", "findings": [], "tone": {"marker":0,"vocab":0,"style":0,"score":0},
        "lines": 1, "sentences": 1, "topics": 1, "ruleset": "t", "analyzer": "fallback"
    }))
    .unwrap();
    amend(&mut v, &shared, "yana", PARAPHRASE).await;
    assert_eq!(v.status, Status::Retry);
}

/// `vault review --endpoint EP` on a paraphrase: with no `embed_model` the chat model is
/// never asked to embed, and the result says the semantic check did not run (never
/// "全項目を実施"); with one, the paraphrase is found.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn vault_review_without_an_embedding_model_says_the_semantic_check_did_not_run() {
    let s = server(UNRELATED, true).await;
    let env = Env::new();
    llm_toml(&env, None);
    let v = vault(&env);
    let review = |extra: &'static [&'static str]| {
        let mut args = vec![
            "vault",
            "review",
            "--vault",
            v.as_str(),
            "--endpoint",
            &s.url,
        ];
        args.extend_from_slice(extra);
        env.run_in(&args, PARAPHRASE)
    };
    let out = review(&[]);
    let said = String::from_utf8_lossy(&out.stderr).to_string();
    let r: Value = serde_json::from_slice(&out.stdout).expect(&said);
    assert_ne!(r["result"], "approved", "{r}");
    assert_eq!(r["embeddings"]["status"], "skipped", "{r}");
    assert!(!said.contains("全項目を実施"), "{said}");
    assert!(said.contains("未実施"), "{said}");
    assert!(s.recorded().iter().all(|q| q.path != "/v1/embeddings"));

    let out = review(&["--embed-model", "concept-embed"]);
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["embeddings"]["status"], "ran", "{r}");
    assert_eq!(r["result"], "rejected", "{r}");
    assert_eq!(out.status.code(), Some(1));
}

/// A vault whose secret is hidden (level 0) from both sisters.
fn hidden_vault(env: &Env) -> String {
    let root = vault(env);
    let vis = std::path::Path::new(&root).join("_ai_control/visibility.yaml");
    let text = std::fs::read_to_string(&vis).unwrap();
    std::fs::write(&vis, text.replace("visibility: 2", "visibility: 0")).unwrap();
    root
}

/// A chat model shaped like llama-server: the sisters' streamed line is `line`; the leak
/// judge (non-streamed) answers はい when the line it is shown says something of `tell`, else
/// いいえ; `judge_delay` holds its answer back.
async fn judging_server(line: &'static str, tell: &'static str, judge_delay: u64) -> FakeServer {
    FakeServer::with(move |req: &Recorded, _| match req.path.as_str() {
        _ if llm_fake::is_leak_judge(req) => {
            let user = req.json()["messages"][1]["content"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            let said = user.split("台詞:\n").nth(1).unwrap_or_default();
            let yes = said.contains(tell);
            let answer = if yes { "はい" } else { "いいえ" };
            Reply::json(200, &llm_fake::openai_reply("tiny-ja", answer, 2))
                .delay(std::time::Duration::from_millis(judge_delay))
        }
        "/v1/models" => Reply::json(
            200,
            r#"{"object":"list","data":[{"id":"tiny-ja","object":"model","owned_by":"llamacpp"}]}"#,
        ),
        "/v1/chat/completions" => Reply::sse(parts(&sse_events("tiny-ja", &[line], "stop", 20))),
        _ => error(404, "not_found_error", "File Not Found"),
    })
    .await
}

/// The model judge, on by default: a paraphrase with none of the secret's words is rejected
/// in a live run (its prompt carries the secret; the sisters' prompts never do); an unrelated
/// line is approved with "モデル判定 実施" in its coverage finding.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_model_judge_finds_a_paraphrase_in_a_live_run() {
    for (line, leaks) in [(PARAPHRASE, true), (UNRELATED, false)] {
        let s = judging_server(line, "島", 0).await;
        let env = Env::new();
        llm_toml(&env, None);
        let v = hidden_vault(&env);
        let out = run(
            &env,
            &[
                "run",
                "--headless",
                "--topic",
                "旅の話",
                "--turns",
                "1",
                "--attempts",
                "1",
                "--no-judge",
                "--endpoint",
                &s.url,
                "--model",
                "tiny-ja",
                "--vault",
                &v,
            ],
        )
        .await;
        let stderr = String::from_utf8_lossy(&out.stderr).to_string();
        assert_eq!(out.status.code(), Some(0), "{stderr}");
        assert!(stderr.contains("model judge on"), "{stderr}");
        let events: Vec<Value> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let leaks_found = leak_findings(&events);
        let judged = leaks_found.iter().find(|f| {
            f["evidence"]
                .as_str()
                .unwrap_or("")
                .starts_with("model_judged ")
        });
        assert_eq!(judged.is_some(), leaks, "{leaks_found:?}");
        if leaks {
            assert_eq!(judged.unwrap()["status"], "RETRY");
        } else {
            let cov = leaks_found
                .iter()
                .find(|f| {
                    f["evidence"]
                        .as_str()
                        .unwrap_or("")
                        .starts_with("coverage ")
                })
                .unwrap();
            let m = cov["message"].as_str().unwrap();
            assert!(
                m.contains("approved") && m.contains("モデル判定 実施"),
                "{m}"
            );
            assert!(!m.contains("without"), "{m}");
        }
        let recorded = s.recorded();
        let judge_calls: Vec<&Recorded> = recorded
            .iter()
            .filter(|r| llm_fake::is_leak_judge(r))
            .collect();
        assert_eq!(judge_calls.len(), 1, "one hidden secret, one question");
        assert!(judge_calls[0].body.contains(SECRET));
        for r in recorded.iter().filter(|r| !llm_fake::is_leak_judge(r)) {
            assert!(
                !r.body.contains(SECRET),
                "a sister's prompt carried the secret"
            );
        }
    }
}

/// The bot's path: a judge that does not answer within the answer budget fails closed (RETRY,
/// the line is not sent), and says so; the static review alone would have passed it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_judge_that_cannot_answer_in_time_fails_closed_for_the_bot() {
    use kakeai::director::{Status, Verdict};
    use kakeai::vault::judge::Judge;
    use kakeai::vault::semantic::amend_until;
    let s = judging_server(UNRELATED, "島", 1_000).await;
    let env = Env::new();
    let work = kakeai::vault::open(Some(std::path::Path::new(&hidden_vault(&env))), None).unwrap();
    let shared = kakeai::vault::SharedVault::new(work);
    let cfg = llm_fake::config(&format!("{}/v1", s.url), Some(kakeai::llm::ApiKind::OpenAi));
    let client = kakeai::llm::Client::new(cfg).unwrap();
    shared.set_judge(Judge::with_client(
        client,
        std::time::Duration::from_secs(30),
        6,
    ));
    let fresh = || -> Verdict {
        serde_json::from_value(json!({
            "status": "PASS", "findings": [], "tone": {"marker":0,"vocab":0,"style":0,"score":0},
            "lines": 1, "sentences": 1, "topics": 1, "ruleset": "t", "analyzer": "fallback"
        }))
        .unwrap()
    };
    let mut v = fresh();
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_millis(300);
    amend_until(&mut v, &shared, "yana", UNRELATED, deadline).await;
    assert_eq!(v.status, Status::Retry, "{v:?}");
    assert!(
        v.findings.iter().any(|f| f.message.contains("モデル判定")),
        "{:?}",
        v.findings
    );
    // Given the time, the same line passes.
    let mut v = fresh();
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(20);
    amend_until(&mut v, &shared, "yana", UNRELATED, deadline).await;
    assert_ne!(v.status, Status::Retry, "{v:?}");
}
