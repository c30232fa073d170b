//! Seed 003 §4's retry/fallback table, row by row, each against a fake that fails that way:
//! one retry for API errors and for network failures; a stream that fails at its start or
//! midway falls back to one non-stream call; that call is not retried; refusals are final.
//! Also: any bytes (role chunk, keep-alive comment) count as liveness before the first text.

mod llm_fake;

use std::time::Duration;

use kakeai::llm::{ApiKind, ChatRequest, Client, Completion, LlmError, Message};
use llm_fake::{FakeServer, Part, Reply, config, parts};

fn req() -> ChatRequest {
    ChatRequest::line(vec![Message::user("あゆ、今日はどうする？")])
}

async fn stream(client: &Client) -> Result<Completion, LlmError> {
    client.stream_chat(&req(), &mut |_| {}).await
}

fn openai(server: &FakeServer) -> Client {
    Client::new(config(&server.url, Some(ApiKind::OpenAi))).unwrap()
}

const E500: &str = r#"{"error":{"code":500,"message":"slot unavailable","type":"server_error"}}"#;

fn sse_ok(text: &[&str]) -> Reply {
    Reply::sse(parts(&llm_fake::sse_events("m", text, "stop", 3)))
}

fn whole_ok(text: &str) -> Reply {
    Reply::json(200, &llm_fake::openai_reply("m", text, 4))
}

fn streams(server: &FakeServer) -> Vec<bool> {
    server
        .recorded()
        .iter()
        .map(|r| r.json()["stream"] == true)
        .collect()
}

/// Row 1 at the stream's start: an HTTP 500 is retried once, and the retried stream serves.
#[tokio::test]
async fn api_error_at_stream_start_is_retried_once() {
    let server =
        FakeServer::scripted(vec![Reply::json(500, E500), sse_ok(&["散歩", "しよう"])]).await;
    let c = stream(&openai(&server)).await.unwrap();
    assert_eq!(
        (c.text.as_str(), c.retries, c.fell_back),
        ("散歩しよう", 1, false)
    );
    assert_eq!(streams(&server), vec![true, true]);
}

/// Rows 1 + 3: the stream still fails at its start after its retry → one non-stream call.
/// (Before: HTTP 500 at stream start failed the whole run.)
#[tokio::test]
async fn api_error_twice_at_stream_start_falls_back_to_one_non_stream_call() {
    let server = FakeServer::scripted(vec![
        Reply::json(500, E500),
        Reply::json(500, E500),
        whole_ok("公園に行こうか。"),
    ])
    .await;
    let c = stream(&openai(&server)).await.unwrap();
    assert!(c.fell_back);
    assert_eq!(c.text, "公園に行こうか。");
    let why = c.fallback_reason.unwrap();
    assert!(
        why.contains("HTTP 500") && why.contains("slot unavailable"),
        "{why}"
    );
    assert_eq!(streams(&server), vec![true, true, false]);
}

/// Row 2: the server accepts and hangs up before any status line; retried once.
#[tokio::test]
async fn network_failure_at_stream_start_is_retried_once() {
    let server = FakeServer::scripted(vec![Reply::hang_up(), sse_ok(&["うん"])]).await;
    let c = stream(&openai(&server)).await.unwrap();
    assert_eq!(
        (c.text.as_str(), c.retries, c.fell_back),
        ("うん", 1, false)
    );
}

/// Rows 1–2 for a non-streamed call (the judge's): one retry of the whole call.
#[tokio::test]
async fn non_stream_call_gets_one_retry_for_api_and_network_errors() {
    for first in [
        Reply::json(500, E500),
        Reply::hang_up(),
        Reply::json(200, "<html>proxy</html>"),
    ] {
        let server = FakeServer::scripted(vec![first.clone(), whole_ok("はい。")]).await;
        let c = openai(&server).chat(&req()).await.unwrap();
        assert_eq!((c.text.as_str(), c.retries), ("はい。", 1), "{first:?}");
        // And a second failure is the answer: exactly two requests.
        let server = FakeServer::scripted(vec![first.clone(), first.clone(), whole_ok("x")]).await;
        assert!(openai(&server).chat(&req()).await.is_err(), "{first:?}");
        assert_eq!(server.recorded().len(), 2, "{first:?}");
    }
}

/// Row 3: a stream that breaks midway is not retried: one non-stream call replaces it.
#[tokio::test]
async fn stream_failing_midway_falls_back_without_retry() {
    let events = llm_fake::sse_events("m", &["えっと", "ね"], "stop", 2);
    let mut cut = parts(&events[..2]);
    cut.push(Part::Cut);
    let server = FakeServer::scripted(vec![Reply::sse(cut), whole_ok("えっとね、海。")]).await;
    let c = stream(&openai(&server)).await.unwrap();
    assert!(c.fell_back && c.retries == 0);
    assert!(c.fallback_reason.unwrap().contains("ended early"));
    assert_eq!(streams(&server), vec![true, false]);
}

/// Row 4: the fallback call's failure is reported at once, never retried.
#[tokio::test]
async fn failing_fallback_is_not_retried() {
    let events = llm_fake::sse_events("m", &["えっと"], "stop", 1);
    let mut cut = parts(&events[..2]);
    cut.push(Part::Cut);
    let server = FakeServer::scripted(vec![
        Reply::sse(cut),
        Reply::json(500, E500),
        whole_ok("never"),
    ])
    .await;
    let e = stream(&openai(&server)).await.unwrap_err();
    assert!(matches!(e, LlmError::Server { status: 500, .. }), "{e:?}");
    assert_eq!(streams(&server), vec![true, false]);
}

/// Refusals the server understood are final: no retry, no fallback.
#[tokio::test]
async fn a_refusal_is_neither_retried_nor_replaced() {
    for (status, body) in [
        (
            400,
            r#"{"error":{"code":400,"message":"request (2419 tokens) exceeds the available context size (1024 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":2419,"n_ctx":1024}}"#,
        ),
        (
            401,
            r#"{"error":{"message":"Invalid API Key","type":"authentication_error","code":401}}"#,
        ),
    ] {
        let server = FakeServer::scripted(vec![Reply::json(status, body), whole_ok("never")]).await;
        let e = stream(&openai(&server)).await.unwrap_err();
        assert!(matches!(e, LlmError::Rejected { .. }), "{e:?}");
        assert_eq!(server.recorded().len(), 1, "{status}");
    }
}

/// Before any text: llama-server's role chunk and `:` keep-alive comments keep the stream
/// alive past the first-token limit; only silence longer than the idle limit ends it.
#[tokio::test]
async fn role_chunk_and_keep_alive_comments_count_as_liveness() {
    let events = llm_fake::sse_events("m", &["ちゃんと", "届いた"], "stop", 2);
    let mut slow = parts(&events[..1]); // the role chunk
    for _ in 0..6 {
        slow.push(Part::Sleep(Duration::from_millis(100)));
        slow.push(Part::Bytes(b":\n\n".to_vec()));
    }
    slow.extend(parts(&events[1..]));
    let server = FakeServer::scripted(vec![Reply::sse(slow), whole_ok("never")]).await;
    let mut cfg = config(&server.url, Some(ApiKind::OpenAi));
    cfg.timeouts.first_token_ms = 300; // the pings run to ~600 ms
    cfg.timeouts.idle_ms = 250;
    let client = Client::new(cfg).unwrap();
    let mut seen = String::new();
    let c = client
        .stream_chat(&req(), &mut |t: &str| seen.push_str(t))
        .await
        .unwrap();
    assert!(!c.fell_back, "{:?}", c.fallback_reason);
    assert_eq!(
        (c.text.as_str(), seen.as_str()),
        ("ちゃんと届いた", "ちゃんと届いた")
    );
    assert_eq!(server.recorded().len(), 1);
}

/// The prompt's token count comes back from each dialect (the budget learns from it).
#[tokio::test]
async fn prompt_tokens_are_read_from_usage_timings_and_prompt_eval_count() {
    let usage = format!(
        "data: {}\n\n",
        serde_json::json!({"choices": [], "usage": {"completion_tokens": 2, "prompt_tokens": 812, "total_tokens": 814}})
    );
    let mut events = llm_fake::sse_events("m", &["は", "い"], "stop", 2);
    events.insert(events.len() - 1, usage);
    let server = FakeServer::scripted(vec![Reply::sse(parts(&events))]).await;
    let c = stream(&openai(&server)).await.unwrap();
    assert_eq!(c.prompt_tokens, Some(812));
    assert_eq!(
        server.recorded()[0].json()["stream_options"]["include_usage"],
        true
    );
    // Without usage: llama-server's timings (prompt_n = 20 in the fake).
    let server = FakeServer::scripted(vec![sse_ok(&["は"])]).await;
    assert_eq!(
        stream(&openai(&server)).await.unwrap().prompt_tokens,
        Some(20)
    );
    // Ollama: prompt_eval_count on the final line (31 in the fake).
    let lines = llm_fake::ollama_lines("gemma2:27b", &["はい"], "stop", 1);
    let server = FakeServer::scripted(vec![Reply::ndjson(parts(&lines))]).await;
    let client = Client::new(config(&server.url, Some(ApiKind::Ollama))).unwrap();
    assert_eq!(stream(&client).await.unwrap().prompt_tokens, Some(31));
}
