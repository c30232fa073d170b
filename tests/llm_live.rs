//! Against a real llama-server (../shared/tools/llm-server/start.sh PORT), not run by default:
//!   KAKEAI_LLM_LIVE_URL=http://127.0.0.1:18090 [KAKEAI_LLM_LIVE_MODEL=tiny-ja-slow] cargo test --test llm_live -- --ignored --nocapture
//! The tiny-ja model always answers the same sentence, so the text can be checked exactly.

use std::time::Instant;

use kakeai::llm::{ApiKind, ChatRequest, Client, Finish, LlmConfig, Message};

const ANSWER: &str = "こんにちは、世界！ This is a tiny test model. 日本語のテキストです。🦀 Done!";

fn client() -> Client {
    let url =
        std::env::var("KAKEAI_LLM_LIVE_URL").unwrap_or_else(|_| "http://127.0.0.1:18090".into());
    let cfg = LlmConfig {
        endpoint: url,
        model: std::env::var("KAKEAI_LLM_LIVE_MODEL").unwrap_or_else(|_| "tiny-ja".into()),
        ..LlmConfig::default()
    };
    Client::new(cfg).unwrap()
}

#[tokio::test]
#[ignore = "needs a running llama-server"]
async fn live_llama_server_stream_and_chat() {
    let client = client();
    let t = Instant::now();
    let info = client.ensure_model().await.unwrap();
    println!("detect: {info:?} in {:?}", t.elapsed());
    assert_eq!(info.api, ApiKind::OpenAi);

    let mut req = ChatRequest::line(vec![
        Message::system("あなたは姉のやな。"),
        Message::user("こんにちは"),
    ]);
    req.temperature = Some(0.0);
    let mut deltas: Vec<(f64, String)> = Vec::new();
    let t = Instant::now();
    let c = client
        .stream_chat(&req, &mut |d| {
            deltas.push((t.elapsed().as_secs_f64() * 1000.0, d.to_string()))
        })
        .await
        .unwrap();
    for (ms, d) in &deltas {
        println!("{ms:8.2} ms  {d:?}");
    }
    println!("{c:?}");
    assert_eq!(c.text, ANSWER);
    assert_eq!(c.finish, Finish::Stop);
    assert_eq!(c.tokens, 23);
    assert!(
        deltas.iter().any(|(_, d)| d == "🦀"),
        "the crab arrived as one delta"
    );

    let c = client.chat(&req).await.unwrap();
    println!("non-stream: {c:?}");
    assert_eq!(c.text, ANSWER);

    // A small cap on the real stream: cut at 12 chars, trimmed back to 「！」.
    let mut small = client.config().clone();
    small.max_chars = 12;
    let capped = Client::new(small)
        .unwrap()
        .stream_chat(&req, &mut |_| {})
        .await
        .unwrap();
    println!("capped: {capped:?}");
    assert_eq!(capped.finish, Finish::Capped);
    assert_eq!(capped.text, "こんにちは、世界！");
}

#[tokio::test]
#[ignore = "needs llama-server started with --router"]
async fn live_router_unknown_model() {
    let url = std::env::var("KAKEAI_LLM_LIVE_ROUTER_URL")
        .unwrap_or_else(|_| "http://127.0.0.1:18092".into());
    let cfg = LlmConfig {
        endpoint: url,
        model: "no-such-model".into(),
        ..LlmConfig::default()
    };
    let client = Client::new(cfg).unwrap();
    let req = ChatRequest::line(vec![Message::user("こんにちは")]);
    let e = client.stream_chat(&req, &mut |_| {}).await.unwrap_err();
    println!("{e}");
    assert!(
        matches!(e, kakeai::llm::LlmError::ModelNotFound { .. }),
        "{e:?}"
    );
    assert!(e.to_string().contains("tiny-ja"), "{e}");
}
