//! What the client sends (system folding, options, formats) and how it finds the server's API
//! and models, checked against the bodies a fake endpoint received.

mod llm_fake;

use kakeai::llm::{ApiKind, ChatRequest, Client, LlmError, Message, ResponseFormat, SystemRole};
use llm_fake::{FakeServer, Reply, config, parts};
use serde_json::json;

fn conversation() -> Vec<Message> {
    vec![
        Message::system("あなたは姉のやな。くだけた口調で話す。"),
        Message::user("あゆ: お姉ちゃん、おはよう。"),
        Message::assistant("おはよー。"),
        Message::user("あゆ: 今日は何をしますか？"),
    ]
}

fn ollama_ok() -> Reply {
    Reply::ndjson(parts(&llm_fake::ollama_lines(
        "gemma2:27b",
        &["うん。"],
        "stop",
        1,
    )))
}

/// A server whose /api/show does not answer (the scripted fake): the template is not known,
/// so a Gemma model folds by its name. (With the template known, see tests/ollama_source.rs.)
#[tokio::test]
async fn gemma_folds_the_system_text_into_the_first_user_message() {
    let server = FakeServer::scripted(vec![ollama_ok()]).await;
    let client = Client::new(config(&server.url, Some(ApiKind::Ollama))).unwrap();
    client
        .stream_chat(&ChatRequest::line(conversation()), &mut |_| {})
        .await
        .unwrap();
    let body = server.recorded()[0].json();
    let messages = body["messages"].as_array().unwrap();
    assert!(messages.iter().all(|m| m["role"] != "system"), "{body}");
    assert_eq!(messages.len(), 3);
    assert_eq!(messages[0]["role"], "user");
    assert_eq!(
        messages[0]["content"],
        "あなたは姉のやな。くだけた口調で話す。\n\nあゆ: お姉ちゃん、おはよう。"
    );
    assert_eq!(messages[1]["role"], "assistant");
    // Ollama options: a constant num_ctx, the stop sequences, the line temperature.
    assert_eq!(body["model"], "gemma2:27b");
    assert_eq!(body["stream"], true);
    assert_eq!(body["options"]["num_ctx"], 8192);
    assert_eq!(body["options"]["num_predict"], 512);
    assert_eq!(
        body["options"]["stop"],
        json!([
            "やな:",
            "あゆ:",
            "やな：",
            "あゆ：",
            "<end_of_turn>",
            "<start_of_turn>"
        ])
    );
    assert_eq!(body["keep_alive"], "1800s");
    assert_eq!(body["options"]["temperature"], 0.7);
    assert!(body.get("format").is_none());
}

#[tokio::test]
async fn native_system_role_is_kept_for_other_models_and_when_configured() {
    let ok = || Reply::sse(parts(&llm_fake::sse_events("m", &["はい。"], "stop", 1)));
    let server = FakeServer::scripted(vec![ok(), ok()]).await;
    let mut cfg = config(&server.url, Some(ApiKind::OpenAi));
    cfg.model = "qwen2.5:7b-instruct".into();
    let client = Client::new(cfg.clone()).unwrap();
    client
        .stream_chat(&ChatRequest::line(conversation()), &mut |_| {})
        .await
        .unwrap();
    cfg.model = "gemma2:27b".into();
    cfg.system_role = Some(SystemRole::Native);
    let client = Client::new(cfg).unwrap();
    client
        .stream_chat(&ChatRequest::line(conversation()), &mut |_| {})
        .await
        .unwrap();
    for r in server.recorded() {
        let body = r.json();
        assert_eq!(body["messages"][0]["role"], "system", "{body}");
        assert_eq!(body["messages"].as_array().unwrap().len(), 4);
    }
}

#[tokio::test]
async fn ollama_judge_call_sends_format_and_judge_temperature() {
    let verdict = r#"{"status":"PASS","score":3}"#;
    let schema =
        json!({"type":"object","properties":{"status":{"type":"string"}},"required":["status"]});
    let server = FakeServer::scripted(vec![
        Reply::json(200, &llm_fake::ollama_reply("gemma2:27b", verdict, 9)),
        Reply::json(200, &llm_fake::ollama_reply("gemma2:27b", verdict, 9)),
    ])
    .await;
    let client = Client::new(config(&server.url, Some(ApiKind::Ollama))).unwrap();
    let judge = ChatRequest::judge(conversation(), ResponseFormat::Json);
    let c = client.chat(&judge).await.unwrap();
    assert_eq!(c.text, verdict);
    assert_eq!(c.first_token, None);
    let mut with_schema =
        ChatRequest::judge(conversation(), ResponseFormat::Schema(schema.clone()));
    with_schema.seed = Some(42);
    client.chat(&with_schema).await.unwrap();
    let rec = server.recorded();
    let (a, b) = (rec[0].json(), rec[1].json());
    assert_eq!(a["format"], "json");
    assert_eq!(a["stream"], false);
    assert_eq!(a["options"]["num_ctx"], 8192);
    assert_eq!(a["options"]["temperature"], 0.2);
    assert!(
        a["options"].get("stop").is_none(),
        "judge calls send no stop sequences"
    );
    assert_eq!(b["format"], schema);
    assert_eq!(b["options"]["seed"], 42);
}

#[tokio::test]
async fn openai_body_carries_response_format_and_sampling() {
    let schema = json!({"type":"object","properties":{"score":{"type":"integer"}}});
    let reply = || Reply::json(200, &llm_fake::openai_reply("m", "{}", 1));
    let server = FakeServer::scripted(vec![reply(), reply(), reply()]).await;
    let client = Client::new(config(&server.url, Some(ApiKind::OpenAi))).unwrap();
    client
        .chat(&ChatRequest::judge(conversation(), ResponseFormat::Json))
        .await
        .unwrap();
    client
        .chat(&ChatRequest::judge(
            conversation(),
            ResponseFormat::Schema(schema.clone()),
        ))
        .await
        .unwrap();
    let mut line = ChatRequest::line(conversation());
    line.temperature = Some(1.1);
    line.max_tokens = Some(120);
    line.seed = Some(7);
    line.stop = Some(vec!["やな:".into()]);
    client.chat(&line).await.unwrap();
    let rec = server.recorded();
    assert!(rec.iter().all(|r| r.path == "/v1/chat/completions"));
    let (a, b, c) = (rec[0].json(), rec[1].json(), rec[2].json());
    assert_eq!(a["response_format"], json!({"type": "json_object"}));
    assert_eq!(b["response_format"]["type"], "json_schema");
    assert_eq!(b["response_format"]["json_schema"]["schema"], schema);
    assert!(c.get("response_format").is_none());
    assert_eq!(c["temperature"], 1.1);
    assert_eq!(c["max_tokens"], 120);
    assert_eq!(c["seed"], 7);
    assert_eq!(c["stop"], json!(["やな:"]));
    assert_eq!(c["stream"], false);
    assert!(
        c.get("options").is_none(),
        "num_ctx is an Ollama option only"
    );
}

fn tags(names: &[&str]) -> Reply {
    let models: Vec<_> = names
        .iter()
        .map(|n| json!({"name": n, "model": n, "modified_at": "2025-05-01T10:00:00Z", "size": 15_628_387_458u64,
                         "digest": "53261bc9c192", "details": {"family": "gemma2", "parameter_size": "27.2B"}}))
        .collect();
    Reply::json(200, &json!({ "models": models }).to_string())
}

const LLAMA_404: &str =
    r#"{"error":{"message":"File Not Found","type":"not_found_error","code":404}}"#;

fn openai_models(ids: &[&str]) -> Reply {
    let data: Vec<_> = ids
        .iter()
        .map(|i| json!({"id": i, "object": "model", "owned_by": "llamacpp"}))
        .collect();
    Reply::json(
        200,
        &json!({"object": "list", "data": data, "models": [{"name": ids[0]}]}).to_string(),
    )
}

#[tokio::test]
async fn detect_finds_ollama_and_the_model() {
    let server = FakeServer::scripted(vec![tags(&["llama3.2:latest", "gemma2:27b"])]).await;
    let client = Client::new(config(&server.url, None)).unwrap();
    let info = client.detect().await.unwrap();
    assert_eq!(info.api, ApiKind::Ollama);
    assert!(info.model_present);
    assert_eq!(info.models, vec!["llama3.2:latest", "gemma2:27b"]);
    assert_eq!(client.api(), Some(ApiKind::Ollama));
    assert_eq!(server.paths(), vec!["GET /api/tags"]);
}

#[tokio::test]
async fn detect_reports_a_missing_ollama_model() {
    let server =
        FakeServer::scripted(vec![tags(&["llama3.2:latest"]), tags(&["llama3.2:latest"])]).await;
    let client = Client::new(config(&server.url, None)).unwrap();
    let info = client.detect().await.unwrap();
    assert!(!info.model_present);
    let e = client.ensure_model().await.unwrap_err();
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
    assert!(e.to_string().contains("ollama pull gemma2:27b"), "{e}");
}

#[tokio::test]
async fn detect_falls_through_to_openai_like_llama_server() {
    let server = FakeServer::with(|r, _| match r.path.as_str() {
        "/v1/models" => openai_models(&["tiny-ja"]),
        _ => Reply::json(404, LLAMA_404),
    })
    .await;
    let mut cfg = config(&server.url, None);
    cfg.model = "tiny-ja".into();
    let info = Client::new(cfg.clone()).unwrap().detect().await.unwrap();
    assert_eq!((info.api, info.model_present), (ApiKind::OpenAi, true));
    assert_eq!(server.paths(), vec!["GET /api/tags", "GET /v1/models"]);

    cfg.model = "gemma2:27b".into();
    let e = Client::new(cfg).unwrap().ensure_model().await.unwrap_err();
    assert!(
        e.to_string()
            .contains("the server answered and has: tiny-ja"),
        "{e}"
    );
}

#[tokio::test]
async fn v1_endpoint_means_openai_without_probing_ollama() {
    let server = FakeServer::scripted(vec![openai_models(&["gemma2:27b"])]).await;
    let client = Client::new(config(&format!("{}/v1/", server.url), None)).unwrap();
    assert_eq!(client.api(), Some(ApiKind::OpenAi));
    let info = client.detect().await.unwrap();
    assert!(info.model_present);
    assert_eq!(server.paths(), vec!["GET /v1/models"]);
}

#[tokio::test]
async fn nothing_recognisable_is_unknown_api() {
    let server = FakeServer::with(|_, _| Reply::json(404, "404 page not found")).await;
    let e = Client::new(config(&server.url, None))
        .unwrap()
        .detect()
        .await
        .unwrap_err();
    assert!(matches!(e, LlmError::UnknownApi { .. }), "{e:?}");
    let msg = e.to_string();
    assert!(
        msg.contains("/api/tags") && msg.contains("/v1/models") && msg.contains("--api"),
        "{msg}"
    );
}

#[tokio::test]
async fn chat_detects_lazily_once() {
    let server = FakeServer::with(|r, _| match r.path.as_str() {
        "/api/tags" => tags(&["gemma2:27b"]),
        _ => ollama_ok(),
    })
    .await;
    let client = Client::new(config(&server.url, None)).unwrap();
    let req = ChatRequest::line(conversation());
    client.stream_chat(&req, &mut |_| {}).await.unwrap();
    client.clone().stream_chat(&req, &mut |_| {}).await.unwrap();
    assert_eq!(
        server.paths(),
        vec!["GET /api/tags", "POST /api/chat", "POST /api/chat"]
    );
}

#[tokio::test]
async fn embeddings_for_both_apis() {
    let server = FakeServer::scripted(vec![Reply::json(
        200,
        r#"{"model":"nomic-embed-text","embeddings":[[0.1,0.2,0.3],[0.4,0.5,0.6]],"total_duration":14143917,"load_duration":1019500,"prompt_eval_count":8}"#,
    )])
    .await;
    let mut cfg = config(&server.url, Some(ApiKind::Ollama));
    cfg.embed_model = Some("nomic-embed-text".into());
    let inputs = vec!["姉".to_string(), "妹".to_string()];
    let v = Client::new(cfg).unwrap().embed(&inputs).await.unwrap();
    assert_eq!(v, vec![vec![0.1, 0.2, 0.3], vec![0.4, 0.5, 0.6]]);
    let body = server.recorded()[0].json();
    assert_eq!(server.recorded()[0].path, "/api/embed");
    assert_eq!(
        body,
        json!({"model": "nomic-embed-text", "input": ["姉", "妹"], "keep_alive": "1800s"})
    );

    // OpenAI returns items that carry their index; order follows it.
    let server = FakeServer::scripted(vec![Reply::json(
        200,
        r#"{"object":"list","data":[{"object":"embedding","index":1,"embedding":[1.0]},{"object":"embedding","index":0,"embedding":[0.5]}],"model":"m","usage":{"prompt_tokens":2,"total_tokens":2}}"#,
    )])
    .await;
    let v = Client::new(config(&server.url, Some(ApiKind::OpenAi)))
        .unwrap()
        .embed(&inputs)
        .await
        .unwrap();
    assert_eq!(v, vec![vec![0.5], vec![1.0]]);
    assert_eq!(server.recorded()[0].path, "/v1/embeddings");

    // llama-server without --embeddings answers 501.
    let server = FakeServer::scripted(vec![Reply::json(
        501,
        r#"{"error":{"code":501,"message":"This server does not support embeddings. Start it with `--embeddings`","type":"not_supported_error"}}"#,
    )])
    .await;
    let e = Client::new(config(&server.url, Some(ApiKind::OpenAi)))
        .unwrap()
        .embed(&inputs)
        .await
        .unwrap_err();
    assert!(
        e.to_string().contains("Start it with `--embeddings`"),
        "{e}"
    );
}
