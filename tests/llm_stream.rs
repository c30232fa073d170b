//! Streaming against fake endpoints that reproduce each protocol's real framing: token delivery,
//! split characters and lines, mid-stream failures with their one fallback, stalls and
//! cancellation.

mod llm_fake;

use std::time::Duration;

use kakeai::llm::{ApiKind, ChatRequest, Client, Finish, LlmError, Message, TimeoutPhase};
use llm_fake::{FakeServer, Framing, Part, Reply, config, parts, split_at_bytes};

fn line_request() -> ChatRequest {
    ChatRequest::line(vec![
        Message::system("あなたは姉のやな。"),
        Message::user("あゆ、週末どこ行く？"),
    ])
}

async fn collect(
    client: &Client,
    req: &ChatRequest,
) -> (Result<kakeai::llm::Completion, LlmError>, Vec<String>) {
    let mut seen = Vec::new();
    let r = client
        .stream_chat(req, &mut |t: &str| seen.push(t.to_string()))
        .await;
    (r, seen)
}

#[tokio::test]
async fn ollama_ndjson_stream_delivers_each_delta() {
    let deltas = ["姉", "ちゃん", "、", "海", "に", "行こう", "よ", "！"];
    let lines = llm_fake::ollama_lines("gemma2:27b", &deltas, "stop", 9);
    let server = FakeServer::scripted(vec![Reply::ndjson(parts(&lines))]).await;
    let client = Client::new(config(&server.url, Some(ApiKind::Ollama))).unwrap();
    let (r, seen) = collect(&client, &line_request()).await;
    let c = r.unwrap();
    assert_eq!(seen, deltas);
    assert_eq!(c.text, "姉ちゃん、海に行こうよ！");
    assert_eq!(c.raw, c.text);
    assert_eq!(c.finish, Finish::Stop);
    assert_eq!(c.tokens, 9, "the server's eval_count, not the delta count");
    assert!(c.first_token.is_some());
    assert!(!c.fell_back);
    assert_eq!(c.retries, 0);
    assert_eq!(server.paths(), vec!["POST /api/chat"]);
    assert_eq!(server.recorded()[0].json()["stream"], true);
}

#[tokio::test]
async fn openai_sse_stream_like_llama_server() {
    let deltas = [
        "こんにちは",
        "、",
        "世界",
        "！",
        " This",
        " is",
        "。",
        "🦀",
        " Done",
        "!",
    ];
    let events = llm_fake::sse_events("tiny-ja", &deltas, "stop", 23);
    let server = FakeServer::scripted(vec![Reply::sse(parts(&events))]).await;
    let mut cfg = config(&server.url, Some(ApiKind::OpenAi));
    cfg.model = "tiny-ja".into();
    let client = Client::new(cfg).unwrap();
    let (r, seen) = collect(&client, &line_request()).await;
    let c = r.unwrap();
    assert_eq!(seen, deltas);
    assert_eq!(c.text, "こんにちは、世界！ This is。🦀 Done!");
    assert_eq!(c.finish, Finish::Stop);
    assert_eq!(c.tokens, 23, "llama-server's timings.predicted_n");
    assert_eq!(server.paths(), vec!["POST /v1/chat/completions"]);
}

#[tokio::test]
async fn sse_length_finish_is_reported() {
    let events = llm_fake::sse_events("m", &["こんにちは", "、", "世界"], "length", 3);
    let server = FakeServer::scripted(vec![Reply::sse(parts(&events))]).await;
    let client = Client::new(config(&server.url, Some(ApiKind::OpenAi))).unwrap();
    let c = collect(&client, &line_request()).await.0.unwrap();
    assert_eq!(c.finish, Finish::Length);
    assert_eq!(c.text, "こんにちは、世界");
}

#[tokio::test]
async fn multibyte_character_and_json_line_split_across_writes() {
    // Ollama: cut inside 「姉」 (its first byte only) and again in the middle of the next line.
    let lines = llm_fake::ollama_lines("gemma2:27b", &["「姉", "」って", "呼んで"], "stop", 3);
    let body: String = lines.concat();
    let in_char = body.find('姉').unwrap() + 1;
    let in_line = body.find("」って").unwrap() - 12;
    let server = FakeServer::scripted(vec![Reply::ndjson(split_at_bytes(
        &body,
        &[in_char, in_line],
    ))])
    .await;
    let client = Client::new(config(&server.url, Some(ApiKind::Ollama))).unwrap();
    let (r, seen) = collect(&client, &line_request()).await;
    assert_eq!(r.unwrap().text, "「姉」って呼んで");
    assert_eq!(seen, vec!["「姉", "」って", "呼んで"]);
    assert!(seen.iter().all(|s| !s.contains('\u{fffd}')));

    // OpenAI: the same with every write being 5 bytes, so most characters are split.
    let events = llm_fake::sse_events("m", &["姉", "さん", "🦀"], "stop", 6);
    let body: String = events.concat();
    let cuts: Vec<usize> = (5..body.len()).step_by(5).collect();
    let server = FakeServer::scripted(vec![Reply::sse(split_at_bytes(&body, &cuts))]).await;
    let client = Client::new(config(&server.url, Some(ApiKind::OpenAi))).unwrap();
    let (r, seen) = collect(&client, &line_request()).await;
    assert_eq!(r.unwrap().text, "姉さん🦀");
    assert_eq!(seen, vec!["姉", "さん", "🦀"]);
}

#[tokio::test]
async fn sse_crlf_comments_and_other_fields_are_tolerated() {
    let mut body = String::from(": keep-alive\r\n\r\n");
    for d in ["雨", "だね", "。"] {
        body.push_str("event: message\r\n");
        body.push_str(&llm_fake::sse_delta("m", d).replace('\n', "\r\n"));
        body.push_str(":\r\n\r\n");
    }
    body.push_str("data: [DONE]\r\n\r\n");
    let server = FakeServer::scripted(vec![Reply::sse(split_at_bytes(&body, &[7, 40, 41]))]).await;
    let client = Client::new(config(&server.url, Some(ApiKind::OpenAi))).unwrap();
    let c = collect(&client, &line_request()).await.0.unwrap();
    assert_eq!(c.text, "雨だね。");
    assert_eq!(c.tokens, 3, "no server count: the number of deltas");
}

#[tokio::test]
async fn ndjson_connection_close_body_without_chunking() {
    let lines = llm_fake::ollama_lines("gemma2:27b", &["うん", "、", "いいよ"], "stop", 3);
    let server =
        FakeServer::scripted(vec![Reply::ndjson(parts(&lines)).framing(Framing::Close)]).await;
    let client = Client::new(config(&server.url, Some(ApiKind::Ollama))).unwrap();
    assert_eq!(
        collect(&client, &line_request()).await.0.unwrap().text,
        "うん、いいよ"
    );
}

#[tokio::test]
async fn mid_stream_disconnect_falls_back_to_one_non_stream_call() {
    let lines = llm_fake::ollama_lines("gemma2:27b", &["えっと", "、", "それは"], "stop", 3);
    let mut cut = parts(&lines[..2]);
    cut.push(Part::Cut);
    let server = FakeServer::scripted(vec![
        Reply::ndjson(cut),
        Reply::json(
            200,
            &llm_fake::ollama_reply("gemma2:27b", "それはまた今度ね。", 7),
        ),
    ])
    .await;
    let client = Client::new(config(&server.url, Some(ApiKind::Ollama))).unwrap();
    let (r, seen) = collect(&client, &line_request()).await;
    let c = r.unwrap();
    assert!(c.fell_back);
    assert_eq!(c.text, "それはまた今度ね。");
    assert_eq!(c.tokens, 7);
    assert_eq!(
        seen,
        vec!["えっと", "、"],
        "the fallback's text is not replayed as tokens"
    );
    let rec = server.recorded();
    assert_eq!(rec.len(), 2);
    assert_eq!(rec[0].json()["stream"], true);
    assert_eq!(rec[1].json()["stream"], false);
    assert_eq!(rec[0].json()["messages"], rec[1].json()["messages"]);
}

#[tokio::test]
async fn sse_closed_before_done_falls_back() {
    // A connection-close body that just ends: no finish_reason, no [DONE].
    let events = llm_fake::sse_events("m", &["ねえ", "聞いて"], "stop", 2);
    let server = FakeServer::scripted(vec![
        Reply::sse(parts(&events[..2])).framing(Framing::Close),
        Reply::json(200, &llm_fake::openai_reply("m", "ねえ、聞いてよ。", 5)),
    ])
    .await;
    let client = Client::new(config(&server.url, Some(ApiKind::OpenAi))).unwrap();
    let c = collect(&client, &line_request()).await.0.unwrap();
    assert!(c.fell_back);
    assert_eq!(c.text, "ねえ、聞いてよ。");
}

#[tokio::test]
async fn failed_fallback_reports_its_error_without_further_tries() {
    let lines = llm_fake::ollama_lines("gemma2:27b", &["あ"], "stop", 1);
    let mut cut = parts(&lines[..1]);
    cut.push(Part::Cut);
    let server = FakeServer::scripted(vec![
        Reply::ndjson(cut),
        Reply::json(503, r#"{"error":"server busy"}"#),
        Reply::json(200, &llm_fake::ollama_reply("gemma2:27b", "never used", 1)),
    ])
    .await;
    let client = Client::new(config(&server.url, Some(ApiKind::Ollama))).unwrap();
    let e = collect(&client, &line_request()).await.0.unwrap_err();
    assert!(matches!(e, LlmError::Server { status: 503, .. }), "{e:?}");
    assert_eq!(
        server.recorded().len(),
        2,
        "one stream, one fallback, no retry of the fallback"
    );
}

#[tokio::test]
async fn error_object_in_the_stream_falls_back() {
    let mut lines = llm_fake::ollama_lines("gemma2:27b", &["今日", "は"], "stop", 2);
    lines.truncate(2);
    lines.push("{\"error\":\"an error was encountered while running the model\"}\n".into());
    let server = FakeServer::scripted(vec![
        Reply::ndjson(parts(&lines)),
        Reply::json(
            200,
            &llm_fake::ollama_reply("gemma2:27b", "今日は休みだよ。", 6),
        ),
    ])
    .await;
    let client = Client::new(config(&server.url, Some(ApiKind::Ollama))).unwrap();
    let c = collect(&client, &line_request()).await.0.unwrap();
    assert!(c.fell_back);
    assert_eq!(c.text, "今日は休みだよ。");
}

#[tokio::test]
async fn stall_hits_the_idle_timeout_and_falls_back() {
    let lines = llm_fake::ollama_lines("gemma2:27b", &["ちょっと", "待って"], "stop", 2);
    let mut stalled = parts(&lines[..1]);
    // Far longer than the 200 ms idle limit; the write after it finds the client gone.
    stalled.push(Part::Sleep(Duration::from_secs(1)));
    stalled.extend(parts(&lines[1..]));
    let server = FakeServer::scripted(vec![
        Reply::ndjson(stalled),
        Reply::json(
            200,
            &llm_fake::ollama_reply("gemma2:27b", "待たせてごめん。", 5),
        ),
    ])
    .await;
    let client = Client::new(config(&server.url, Some(ApiKind::Ollama))).unwrap(); // idle 200 ms
    let c = collect(&client, &line_request()).await.0.unwrap();
    assert!(c.fell_back);
    assert_eq!(c.text, "待たせてごめん。");
    assert!(
        server.wait_client_gone().await,
        "the stalled stream's connection was dropped"
    );
}

#[tokio::test]
async fn stall_then_failing_fallback_is_an_error() {
    let lines = llm_fake::ollama_lines("gemma2:27b", &["ちょっと"], "stop", 1);
    let mut stalled = parts(&lines[..1]);
    stalled.push(Part::Sleep(Duration::from_secs(30)));
    let server = FakeServer::scripted(vec![
        Reply::ndjson(stalled),
        Reply::json(200, "").delay(Duration::from_secs(30)),
    ])
    .await;
    let mut cfg = config(&server.url, Some(ApiKind::Ollama));
    cfg.timeouts.request_ms = 300;
    let client = Client::new(cfg).unwrap();
    let e = collect(&client, &line_request()).await.0.unwrap_err();
    assert!(
        matches!(
            e,
            LlmError::Timeout {
                phase: TimeoutPhase::Response,
                ..
            }
        ),
        "{e:?}"
    );
    assert!(e.to_string().contains("300 ms"), "{e}");
}

#[tokio::test]
async fn no_first_token_in_time_is_a_typed_timeout_without_fallback() {
    let lines = llm_fake::ollama_lines("gemma2:27b", &["遅"], "stop", 1);
    let server = FakeServer::scripted(vec![
        Reply::ndjson(parts(&lines)).delay(Duration::from_secs(30)),
    ])
    .await;
    let mut cfg = config(&server.url, Some(ApiKind::Ollama));
    cfg.timeouts.first_token_ms = 300;
    let client = Client::new(cfg).unwrap();
    let e = collect(&client, &line_request()).await.0.unwrap_err();
    assert!(
        matches!(
            e,
            LlmError::Timeout {
                phase: TimeoutPhase::FirstToken,
                ..
            }
        ),
        "{e:?}"
    );
    let msg = e.to_string();
    assert!(
        msg.contains("first token") && msg.contains(&server.url) && msg.contains("gemma2:27b"),
        "{msg}"
    );
    assert_eq!(server.recorded().len(), 1);
}

#[tokio::test]
async fn dropping_the_future_cancels_and_closes_the_connection() {
    let mut body = Vec::new();
    for _ in 0..300 {
        body.extend(parts(&[llm_fake::sse_delta("m", "ね")]));
        body.push(Part::Sleep(Duration::from_millis(20)));
    }
    let server = FakeServer::scripted(vec![Reply::sse(body)]).await;
    let client = Client::new(config(&server.url, Some(ApiKind::OpenAi))).unwrap();
    let req = line_request();
    let mut got = 0usize;
    let mut on_token = |_: &str| got += 1;
    let fut = client.stream_chat(&req, &mut on_token);
    let r = tokio::time::timeout(Duration::from_millis(200), fut).await;
    assert!(r.is_err(), "still streaming when dropped");
    assert!(got > 0);
    assert!(
        server.wait_client_gone().await,
        "the server saw the client leave"
    );
    assert_eq!(
        server.recorded().len(),
        1,
        "no fallback or retry ran after the drop"
    );
}
