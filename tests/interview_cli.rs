//! `kakeai interview --headless` against a fake OpenAI-compatible endpoint (llama-server
//! framing): every transition of seed 003 §2, the turn limit, the fallback after a model
//! failure mid-interview, PII masking and config errors.

#[path = "llm_fake/mod.rs"]
mod llm_fake;

use std::process::Output;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use llm_fake::{FakeServer, Recorded, Reply, openai_reply, parts, sse_events};

mod cli_env;
use cli_env::Env;

async fn run(env: &Env, args: Vec<String>) -> Output {
    let mut c = env.cmd(&args.iter().map(String::as_str).collect::<Vec<_>>());
    tokio::task::spawn_blocking(move || c.output().unwrap())
        .await
        .unwrap()
}

const LINE: [&str; 3] = [
    "よくわかりました。",
    "つまり、大変なんですね。",
    "いちばん困るのはどんな時ですか？",
];
/// Two questions in one turn: the interview_question rule's RETRY.
const TWO: [&str; 2] = ["いつですか？", "誰と作りますか？"];

/// Answers every streamed chat with one polite question; a chat request whose conversation
/// contains `fail_on` gets a 500, as llama-server sends on an error (the model is down from
/// that point of the interview on).
async fn server(fail_on: Option<&'static str>) -> FakeServer {
    server_with(fail_on, false).await
}

/// `two_questions`: every first attempt asks two questions.
async fn server_with(fail_on: Option<&'static str>, two_questions: bool) -> FakeServer {
    let chats = Arc::new(AtomicUsize::new(0));
    FakeServer::with(move |req: &Recorded, _| match req.path.as_str() {
        "/v1/models" => Reply::json(
            200,
            r#"{"object":"list","data":[{"id":"tiny-ja","object":"model","owned_by":"llamacpp"}]}"#,
        ),
        "/v1/chat/completions" => {
            chats.fetch_add(1, Ordering::SeqCst);
            if fail_on.is_some_and(|m| req.body.contains(m)) {
                return Reply::json(
                    500,
                    r#"{"error":{"code":500,"message":"model crashed","type":"server_error"}}"#,
                );
            }
            if req.json()["stream"] == true {
                let two = two_questions && !req.body.contains("直すべき点");
                let line: &[&str] = if two { &TWO } else { &LINE };
                Reply::sse(parts(&sse_events("tiny-ja", line, "stop", 3)))
            } else {
                Reply::json(200, &openai_reply("tiny-ja", &LINE.concat(), 3))
            }
        }
        _ => Reply::json(404, r#"{"error":{"message":"File Not Found","code":404}}"#),
    })
    .await
}

fn fast_retries(env: &Env) {
    let dir = env.dir.path().join("config");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("llm.toml"), "retry_backoff_ms = 5\n").unwrap();
}

fn events(out: &Output) -> Vec<serde_json::Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

async fn interview(
    env: &Env,
    url: &str,
    answers: &[&str],
    extra: &[&str],
) -> Vec<serde_json::Value> {
    interview_exit(env, url, answers, extra, 0).await
}

/// Exit 1: the answers ran out first.
async fn interview_exit(
    env: &Env,
    url: &str,
    answers: &[&str],
    extra: &[&str],
    code: i32,
) -> Vec<serde_json::Value> {
    fast_retries(env);
    let script = env.file("answers.txt", &answers.join("\n"));
    let mut args: Vec<String> = ["interview", "sample", "--headless", "--script", &script]
        .iter()
        .map(|s| s.to_string())
        .collect();
    args.extend(["--endpoint", url, "--model", "tiny-ja"].map(String::from));
    args.extend(extra.iter().map(|s| s.to_string()));
    let out = run(env, args).await;
    assert_eq!(
        out.status.code(),
        Some(code),
        "{}\n{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    events(&out)
}

/// The state after each user message.
fn user_states(ev: &[serde_json::Value]) -> Vec<String> {
    ev.iter()
        .filter(|e| e["event"] == "user")
        .map(|e| e["state"].as_str().unwrap().to_string())
        .collect()
}

const WALK: [&str; 8] = [
    "はい",
    "いいですよ",
    "献立を考えること、買い物、洗い物",
    "そうですね",
    "献立を考えることです",
    "毎晩、冷蔵庫の前で悩みます",
    "週末にまとめて決められたら楽です",
    "はい、合っています",
];

async fn walk() -> Vec<serde_json::Value> {
    let s = server(None).await;
    let env = Env::new();
    interview(&env, &s.url, &WALK, &[]).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn intro_stays_on_the_opening_signal() {
    let ev = walk().await;
    assert_eq!(ev[0]["event"], "start");
    assert_eq!(ev[1]["event"], "reply");
    assert_eq!(ev[1]["state"], "intro");
    assert_eq!(user_states(&ev)[0], "intro");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn intro_to_enumerate() {
    assert_eq!(user_states(&walk().await)[1], "enumerate");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn enumerate_to_recommend_at_three_items() {
    assert_eq!(user_states(&walk().await)[2], "recommend");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn enumerate_to_recommend_on_an_ending_word() {
    let s = server(None).await;
    let env = Env::new();
    let ev = interview_exit(
        &env,
        &s.url,
        &["はい", "どうぞ", "献立です", "それだけです"],
        &[],
        1,
    )
    .await;
    assert_eq!(
        ev.last().unwrap()["state"],
        "recommend",
        "unfinished, and says so"
    );
    assert_eq!(
        user_states(&ev),
        ["intro", "enumerate", "enumerate", "recommend"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recommend_to_choose() {
    assert_eq!(user_states(&walk().await)[3], "choose");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn choose_to_deepening() {
    let ev = walk().await;
    assert_eq!(user_states(&ev)[4], "deepening");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deepening_stays_until_max_deep_then_summary_check() {
    let ev = walk().await;
    let st = user_states(&ev);
    assert_eq!(st[5], "deepening");
    assert_eq!(st[6], "summary_check");
    let deep: Vec<u64> = ev
        .iter()
        .filter(|e| e["event"] == "user")
        .map(|e| e["deep"].as_u64().unwrap())
        .collect();
    assert_eq!(&deep[4..7], &[0, 1, 2]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn summary_check_to_done() {
    let ev = walk().await;
    assert_eq!(user_states(&ev)[7], "done");
    let last = ev.last().unwrap();
    assert_eq!(last["event"], "done");
    assert_eq!(last["state"], "done");
    assert_eq!(last["fallback"], false);
    assert_eq!(last["finish"], "completed");
    assert_eq!(last["analysis"], "queued");
    // Model replies were judged: the Director's verdict is on each.
    let replies: Vec<_> = ev
        .iter()
        .filter(|e| e["event"] == "reply" && e["source"] == "model")
        .collect();
    assert_eq!(replies.len(), 8);
    assert!(replies.iter().all(|r| r["verdict"].is_string()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_turn_limit_ends_at_twelve_user_turns() {
    let s = server(None).await;
    let env = Env::new();
    // The opening signal keeps the interview in intro forever; only the limit ends it.
    let answers = ["はい"; 15];
    let ev = interview(&env, &s.url, &answers, &[]).await;
    let users = ev.iter().filter(|e| e["event"] == "user").count();
    assert_eq!(users, 12);
    let last = ev.last().unwrap();
    assert_eq!(
        (&last["state"], &last["finish"], &last["user_turns"]),
        (&"done".into(), &"turn_limit".into(), &12.into())
    );
    let closing = &ev[ev.len() - 2];
    assert_eq!(closing["source"], "closing");
    assert!(
        closing["text"]
            .as_str()
            .unwrap()
            .contains("ありがとうございました")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_failure_mid_interview_finishes_through_the_fallback_questions() {
    // From the third answer on the model is down: the stream, its retry and the non-stream
    // fallback all get a 500.
    let s = server(Some("献立です")).await;
    let env = Env::new();
    let answers = [
        "はい",
        "いいですよ",
        "献立です",
        "毎日の献立",
        "[スキップ]",
        "週末に考えたい",
        "余分",
    ];
    let ev = interview(&env, &s.url, &answers, &[]).await;
    let failed = ev
        .iter()
        .position(|e| e["event"] == "model_failed")
        .expect("a failure");
    assert_eq!(ev[failed]["state"], "fallback");
    assert_eq!(ev[failed]["fallback"], true);
    let fixed: Vec<_> = ev
        .iter()
        .filter(|e| e["event"] == "reply" && e["source"] == "fallback")
        .collect();
    let numbers: Vec<u64> = fixed
        .iter()
        .map(|e| e["question"].as_u64().unwrap())
        .collect();
    assert_eq!(numbers, [1, 2, 3]);
    assert_eq!(
        fixed[0]["text"],
        "ふだんの料理で、いちばん困っていることは何ですか？"
    );
    let last = ev.last().unwrap();
    assert_eq!(last["event"], "done");
    assert_eq!(last["state"], "done");
    assert_eq!(last["fallback"], true);
    assert_eq!(last["finish"], "fallback_done");
    // Three posts after the failure ([スキップ] included) end it; the last answer is unused.
    assert_eq!(ev.iter().filter(|e| e["event"] == "user").count(), 6);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dead_endpoint_from_the_start_still_finishes() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let env = Env::new();
    let url = format!("http://127.0.0.1:{port}");
    let ev = interview(&env, &url, &["献立", "夜", "楽になる"], &[]).await;
    let last = ev.last().unwrap();
    assert_eq!(
        (&last["state"], &last["fallback"]),
        (&"done".into(), &true.into())
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn user_messages_are_masked_before_they_are_printed_or_sent() {
    let s = server(None).await;
    let env = Env::new();
    let ev = interview_exit(
        &env,
        &s.url,
        &["田中と申します。090-1234-5678に電話ください", "夜です"],
        &[],
        1,
    )
    .await;
    assert!(
        s.requests
            .lock()
            .unwrap()
            .iter()
            .any(|r| r.body.contains("[電話番号]"))
    );
    let user = ev.iter().find(|e| e["event"] == "user").unwrap();
    let t = user["text"].as_str().unwrap();
    assert!(
        !t.contains("090-1234-5678") && t.contains("[電話番号]"),
        "{t}"
    );
    let sent = s.requests.lock().unwrap();
    assert!(sent.iter().all(|r| !r.body.contains("1234")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_key_is_reported_at_its_line_and_column() {
    let env = Env::new();
    let dir = env.dir.path().join("config").join("interviews");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("mine.toml"),
        "goal = \"g\"\nfallback_questions = [\"a\", \"b\", \"c\"]\nclosing_message = \"x\"\nmax_turn = 3\n",
    )
    .unwrap();
    let out = env.run(&["interview", "mine", "--headless", "--fallback"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("mine.toml:4:1:") && err.contains("max_turn"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_with_two_questions_is_re_asked_with_the_directors_guidance() {
    let s = server_with(None, true).await;
    let env = Env::new();
    let ev = interview_exit(&env, &s.url, &["はい"], &[], 1).await;
    let replies: Vec<_> = ev.iter().filter(|e| e["event"] == "reply").collect();
    assert_eq!(
        replies[0]["text"],
        LINE.concat(),
        "the re-asked reply is kept"
    );
    assert_ne!(replies[0]["verdict"], "RETRY");
    let sent = s.requests.lock().unwrap();
    let guided = sent
        .iter()
        .filter(|r| r.body.contains("質問は1回の発言で1つにしてください"))
        .count();
    assert_eq!(
        guided, 2,
        "each reply's second attempt carries the guidance"
    );
}

/// Her every attempt says a level-0 secret of the bundled vault (やなの工房, which あゆ may not
/// know): nothing of it is said, stored as her reply, or sent again in a later request — the
/// fixed questions take over — and no re-ask instruction names it. Generated over spellings.
#[tokio::test]
async fn a_reply_the_leak_review_rejects_is_never_said_nor_carried() {
    for leak in [
        "やな姉様は春から工房で働くそうですね？",
        "姉様、海沿いの工房に引っ越しされるのですか？",
        "コウボウのお仕事はいつからですか？",
    ] {
        let s = FakeServer::with(move |req: &Recorded, _| match req.path.as_str() {
            "/v1/models" => Reply::json(
                200,
                r#"{"object":"list","data":[{"id":"tiny-ja","object":"model","owned_by":"llamacpp"}]}"#,
            ),
            "/v1/chat/completions" => Reply::sse(parts(&sse_events("tiny-ja", &[leak], "stop", 3))),
            _ => Reply::json(404, r#"{"error":{"message":"File Not Found","code":404}}"#),
        })
        .await;
        let env = Env::new();
        let ev = interview_exit(&env, &s.url, &["はい", "そうですね"], &[], 1).await;
        let replies: Vec<_> = ev.iter().filter(|e| e["event"] == "reply").collect();
        assert!(!replies.is_empty(), "{ev:?}");
        for r in &replies {
            assert_eq!(r["source"], "fallback", "{leak}: {r}");
        }
        let all = serde_json::to_string(&ev).unwrap();
        for word in ["工房", "コウボウ", "海沿い"] {
            assert!(!all.contains(word), "{leak}: {word} in {all}");
        }
        let sent = s.requests.lock().unwrap();
        assert!(sent.iter().any(|r| r.path == "/v1/chat/completions"));
        for r in sent.iter().filter(|r| r.path == "/v1/chat/completions") {
            for word in ["工房", "コウボウ", "海沿い"] {
                assert!(!r.body.contains(word), "{leak}: a request carries {word}");
            }
        }
        // Nothing of it in the store either.
        let db = std::fs::read(env.data_db()).unwrap_or_default();
        assert!(!String::from_utf8_lossy(&db).contains("工房"));
    }
}
