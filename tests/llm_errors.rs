//! Typed, explained errors from fake endpoints: missing models, 4xx/5xx bodies, refused
//! connections, malformed streams, and the one retry of transient failures.

mod llm_fake;

use kakeai::llm::{ApiKind, ChatRequest, Client, LlmError, Message};
use llm_fake::{FakeServer, Reply, config, parts};

fn req() -> ChatRequest {
    ChatRequest::line(vec![Message::user("おはよう")])
}

async fn stream(client: &Client) -> Result<kakeai::llm::Completion, LlmError> {
    client.stream_chat(&req(), &mut |_| {}).await
}

#[tokio::test]
async fn ollama_404_model_not_found_suggests_pull() {
    let server = FakeServer::scripted(vec![Reply::json(
        404,
        r#"{"error":"model \"gemma2:27b\" not found, try pulling it first"}"#,
    )])
    .await;
    let client = Client::new(config(&server.url, Some(ApiKind::Ollama))).unwrap();
    let e = stream(&client).await.unwrap_err();
    assert!(
        matches!(
            e,
            LlmError::ModelNotFound {
                api: ApiKind::Ollama,
                ..
            }
        ),
        "{e:?}"
    );
    let msg = e.to_string();
    assert!(msg.contains("ollama pull gemma2:27b"), "{msg}");
    assert!(msg.contains(&format!("{}/api/chat", server.url)), "{msg}");
    assert!(e.is_endpoint_failure() && !e.is_transient());
    // Then only GET /api/tags, for the list of what the server has (issue 21).
    let chats = server
        .paths()
        .iter()
        .filter(|p| *p == "POST /api/chat")
        .count();
    assert_eq!(chats, 1, "no retry, no fallback: {:?}", server.paths());
}

#[tokio::test]
async fn openai_model_not_found_lists_up_to_five_available_models() {
    let server = FakeServer::with(|r, _| match r.path.as_str() {
        "/v1/chat/completions" => Reply::json(
            404,
            r#"{"object":"error","message":"The model `gemma2:27b` does not exist.","type":"NotFoundError","param":null,"code":404}"#,
        ),
        "/v1/models" => Reply::json(
            200,
            r#"{"object":"list","data":[{"id":"qwen2.5-7b","object":"model"},{"id":"gemma-3-12b"},{"id":"llama-3.1-8b"},{"id":"phi-4"},{"id":"mistral-7b"},{"id":"sixth-model"},{"id":"seventh-model"}]}"#,
        ),
        _ => Reply::json(404, r#"{"error":"nope"}"#),
    })
    .await;
    let client = Client::new(config(&server.url, Some(ApiKind::OpenAi))).unwrap();
    let e = client.chat(&req()).await.unwrap_err();
    match &e {
        LlmError::ModelNotFound { available, .. } => assert_eq!(
            available,
            &[
                "qwen2.5-7b",
                "gemma-3-12b",
                "llama-3.1-8b",
                "phi-4",
                "mistral-7b"
            ]
        ),
        other => panic!("{other:?}"),
    }
    let msg = e.to_string();
    assert!(
        msg.contains("qwen2.5-7b, gemma-3-12b") && !msg.contains("sixth"),
        "{msg}"
    );
    assert!(
        msg.contains("gemma2:27b") && msg.contains("/v1/chat/completions"),
        "{msg}"
    );
}

#[tokio::test]
async fn llama_server_router_400_unknown_model_is_model_not_found() {
    let server = FakeServer::scripted(vec![
        Reply::json(400, r#"{"error":{"code":400,"message":"model 'no-such-model' not found","type":"invalid_request_error"}}"#),
        Reply::json(200, r#"{"object":"list","data":[{"id":"tiny-ja"}]}"#),
    ])
    .await;
    let client = Client::new(config(&server.url, Some(ApiKind::OpenAi))).unwrap();
    let e = stream(&client).await.unwrap_err();
    assert!(
        e.to_string()
            .contains("the server answered and has: tiny-ja"),
        "{e}"
    );
}

#[tokio::test]
async fn server_500_carries_the_servers_message() {
    let body =
        r#"{"error":{"code":500,"message":"failed to load model weights","type":"server_error"}}"#;
    let server = FakeServer::scripted(vec![Reply::json(500, body); 3]).await;
    let client = Client::new(config(&server.url, Some(ApiKind::OpenAi))).unwrap();
    let e = stream(&client).await.unwrap_err();
    assert!(matches!(e, LlmError::Server { status: 500, .. }), "{e:?}");
    let msg = e.to_string();
    assert!(
        msg.contains("HTTP 500") && msg.contains("failed to load model weights"),
        "{msg}"
    );
    assert!(
        msg.contains(&server.url) && msg.contains("gemma2:27b"),
        "{msg}"
    );
    assert!(e.is_transient() && e.is_endpoint_failure());
    // Seed 003 §4: the stream start is retried once, then one non-stream call; all fail.
    assert_eq!(server.recorded().len(), 3);
}

#[tokio::test]
async fn bad_request_400_is_a_rejection_with_the_servers_message() {
    let server = FakeServer::scripted(vec![Reply::json(
        400,
        r#"{"error":{"code":400,"message":"request (2419 tokens) exceeds the available context size (1024 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":2419,"n_ctx":1024}}"#,
    )])
    .await;
    let client = Client::new(config(&server.url, Some(ApiKind::OpenAi))).unwrap();
    let e = stream(&client).await.unwrap_err();
    assert!(matches!(e, LlmError::Rejected { status: 400, .. }), "{e:?}");
    assert!(
        e.to_string().contains("exceeds the available context size"),
        "{e}"
    );
    assert!(!e.is_endpoint_failure());
}

#[tokio::test]
async fn wrong_api_404_hints_at_the_api_flag() {
    let server = FakeServer::scripted(vec![Reply::json(
        404,
        r#"{"error":{"message":"File Not Found","type":"not_found_error","code":404}}"#,
    )])
    .await;
    let client = Client::new(config(&server.url, Some(ApiKind::Ollama))).unwrap();
    let e = stream(&client).await.unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.contains("File Not Found") && msg.contains("--api"),
        "{msg}"
    );
}

#[tokio::test]
async fn connection_refused_names_the_url_and_how_to_start_a_server() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);
    let client = Client::new(config(&url, Some(ApiKind::Ollama))).unwrap();
    let e = stream(&client).await.unwrap_err();
    assert!(
        matches!(
            e,
            LlmError::Connect {
                kind: "connection refused",
                ..
            }
        ),
        "{e:?}"
    );
    let msg = e.to_string();
    assert!(msg.contains(&format!("{url}/api/chat")), "{msg}");
    assert!(
        msg.contains("ollama serve") && msg.contains("--endpoint"),
        "{msg}"
    );
    assert!(e.is_transient() && e.is_endpoint_failure());
    // Detection fails the same way, without probing the second API.
    let auto = Client::new(config(&url, None)).unwrap();
    let e = auto.detect().await.unwrap_err();
    assert!(matches!(e, LlmError::Connect { .. }), "{e:?}");
    assert!(e.to_string().contains("/api/tags"), "{e}");
}

#[tokio::test]
async fn transient_503_then_success_is_retried_once() {
    let lines = llm_fake::ollama_lines("gemma2:27b", &["おはよ", "う！"], "stop", 2);
    let server = FakeServer::scripted(vec![
        Reply::json(503, r#"{"error":"server busy, please try again"}"#),
        Reply::ndjson(parts(&lines)),
    ])
    .await;
    let client = Client::new(config(&server.url, Some(ApiKind::Ollama))).unwrap();
    let c = stream(&client).await.unwrap();
    assert_eq!(c.text, "おはよう！");
    assert_eq!(c.retries, 1);
    assert!(!c.fell_back);
    assert_eq!(server.recorded().len(), 2);
}

#[tokio::test]
async fn non_stream_429_then_success_is_retried_once() {
    let server = FakeServer::scripted(vec![
        Reply::json(
            429,
            r#"{"error":{"message":"too many requests","type":"rate_limit"}}"#,
        ),
        Reply::json(200, &llm_fake::openai_reply("m", "了解です。", 3)),
    ])
    .await;
    let client = Client::new(config(&server.url, Some(ApiKind::OpenAi))).unwrap();
    let c = client.chat(&req()).await.unwrap();
    assert_eq!((c.text.as_str(), c.retries, c.tokens), ("了解です。", 1, 3));
}

#[tokio::test]
async fn a_third_failure_is_reported() {
    // Stream start, its one retry, then the one non-stream fallback.
    let server = FakeServer::scripted(vec![
        Reply::json(502, "<html>bad gateway</html>"),
        Reply::json(503, "<html>busy</html>"),
        Reply::json(504, ""),
        Reply::json(200, &llm_fake::ollama_reply("gemma2:27b", "never", 1)),
    ])
    .await;
    let client = Client::new(config(&server.url, Some(ApiKind::Ollama))).unwrap();
    let e = stream(&client).await.unwrap_err();
    assert!(matches!(e, LlmError::Server { status: 504, .. }), "{e:?}");
    assert!(e.to_string().contains("(empty body)"), "{e}");
    assert_eq!(server.recorded().len(), 3);
}

#[tokio::test]
async fn malformed_stream_and_body_quote_the_offending_text() {
    let garbage = format!("<html><body>{}</body></html>\n", "proxy error ".repeat(30));
    let server = FakeServer::scripted(vec![
        Reply::ndjson(parts(&[garbage.as_str()])),
        Reply::json(200, &garbage),
    ])
    .await;
    let client = Client::new(config(&server.url, Some(ApiKind::Ollama))).unwrap();
    let e = stream(&client).await.unwrap_err();
    assert!(matches!(e, LlmError::Malformed { .. }), "{e:?}");
    let msg = e.to_string();
    assert!(
        msg.contains("expected a JSON object with message.content"),
        "{msg}"
    );
    assert!(
        msg.contains("<html><body>proxy error") && msg.contains('…'),
        "{msg}"
    );
    assert!(msg.chars().count() < 400, "the quote is truncated: {msg}");
}

#[tokio::test]
async fn malformed_line_message_names_the_stream_format() {
    // A non-SSE body on the OpenAI stream: the stream is refused, the fallback (HTTP 500) fails.
    let server = FakeServer::scripted(vec![
        Reply::sse(parts(&["{\"unexpected\":true}\n"])),
        Reply::json(500, r#"{"error":{"message":"boom"}}"#),
    ])
    .await;
    let client = Client::new(config(&server.url, Some(ApiKind::OpenAi))).unwrap();
    let e = stream(&client).await.unwrap_err();
    assert!(matches!(e, LlmError::Server { status: 500, .. }), "{e:?}");
    assert_eq!(server.recorded().len(), 2);
}

/// A mistyped model name gets "did you mean" the served one closest to it, even when the
/// server lists it after five others (the closest come first in the short list).
#[tokio::test]
async fn a_model_typo_gets_did_you_mean_from_the_servers_list() {
    let server = FakeServer::with(|r, _| match r.path.as_str() {
        "/api/chat" => Reply::json(
            404,
            r#"{"error":"model \"gema2:27b\" not found, try pulling it first"}"#,
        ),
        "/api/tags" => Reply::json(
            200,
            r#"{"models":[{"name":"qwen2.5:7b"},{"name":"llama3.1:8b"},{"name":"phi3:mini"},{"name":"mistral:7b"},{"name":"gemma2:2b"},{"name":"tinyllama:1.1b"},{"name":"gemma2:27b"}]}"#,
        ),
        _ => Reply::json(404, r#"{"error":"nope"}"#),
    })
    .await;
    let mut cfg = config(&server.url, Some(ApiKind::Ollama));
    cfg.model = "gema2:27b".into();
    let client = Client::new(cfg).unwrap();
    let msg = stream(&client).await.unwrap_err().to_string();
    assert!(msg.contains("did you mean gemma2:27b?"), "{msg}");
    assert!(msg.contains("ollama pull gema2:27b"), "{msg}");
    assert!(msg.contains("has: gemma2:27b, qwen2.5:7b"), "{msg}");
}
