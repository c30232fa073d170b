//! A broken or hostile model server cannot make kakeai read without bound: a streamed reply
//! that never ends (SSE comments or NDJSON chunks without text, which no character cap trips),
//! a whole body larger than the limit (judge / PII call, embeddings, /api/show, /api/tags), a
//! declared length past it, and a stream that drips forever. Each ends in a named error
//! (`TooLarge`, or a timeout) — never an abort — and the one that floods is not retried.

mod llm_fake;

use std::time::Duration;

use kakeai::limits::MAX_RESPONSE_BYTES;
use kakeai::llm::{ApiKind, ChatRequest, Client, LlmError, Message, ResponseFormat};
use llm_fake::{FakeServer, Framing, Part, Recorded, Reply, config, openai_reply};

/// `unit` repeated until just past the response limit, in 1 MiB writes.
fn flood(unit: &str) -> Vec<Part> {
    let per = (1 << 20) / unit.len();
    let chunk = unit.repeat(per).into_bytes();
    let n = MAX_RESPONSE_BYTES / chunk.len() + 2;
    (0..n).map(|_| Part::Bytes(chunk.clone())).collect()
}

/// A 200 JSON body of `parts`, chunked (no length) or with its length declared.
fn body(parts: Vec<Part>, framing: Framing) -> Reply {
    Reply {
        status: 200,
        content_type: "application/json; charset=utf-8",
        framing,
        delay: Duration::ZERO,
        parts,
    }
}

fn not_found() -> Reply {
    Reply::json(404, r#"{"error":"404 page not found"}"#)
}

fn line() -> ChatRequest {
    ChatRequest::line(vec![Message::user("おはよう")])
}

fn too_large(e: &LlmError) -> bool {
    matches!(e, LlmError::TooLarge { limit, .. } if *limit == MAX_RESPONSE_BYTES)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endless_stream_without_text_is_too_large_not_an_abort() {
    for (kind, path, unit) in [
        (ApiKind::OpenAi, "/v1/chat/completions", ": keep-alive\n\n"),
        (
            ApiKind::OpenAi,
            "/v1/chat/completions",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\"}}]}\n\n",
        ),
    ] {
        let server = FakeServer::with(move |r: &Recorded, _| {
            if r.path == path {
                Reply::sse(flood(unit))
            } else {
                not_found()
            }
        })
        .await;
        let client = Client::new(config(&server.url, Some(kind))).unwrap();
        let e = client.stream_chat(&line(), &mut |_| {}).await.unwrap_err();
        assert!(too_large(&e), "{unit:?}: {e:?}");
        assert!(e.to_string().contains("size limit"), "{e}");
        let calls = server.recorded().iter().filter(|q| q.path == path).count();
        assert_eq!(calls, 1, "a flood is not retried nor fallen back on");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn whole_bodies_past_the_limit_are_too_large() {
    // A judge (non-streamed) reply, then embeddings.
    let server = FakeServer::with(|r: &Recorded, _| match r.path.as_str() {
        "/v1/chat/completions" | "/v1/embeddings" => body(flood(" "), Framing::Chunked),
        _ => not_found(),
    })
    .await;
    let client = Client::new(config(&server.url, Some(ApiKind::OpenAi))).unwrap();
    let judge = ChatRequest::judge(vec![Message::user("判定して")], ResponseFormat::Json);
    let e = client.chat(&judge).await.unwrap_err();
    assert!(too_large(&e), "{e:?}");
    let e = client.embed(&["灯台".to_string()]).await.unwrap_err();
    assert!(too_large(&e), "{e:?}");
    // A declared length past the limit is refused before reading.
    let server = FakeServer::with(|r: &Recorded, _| match r.path.as_str() {
        "/v1/chat/completions" => body(flood(" "), Framing::Length),
        _ => not_found(),
    })
    .await;
    let client = Client::new(config(&server.url, Some(ApiKind::OpenAi))).unwrap();
    let e = client.chat(&judge).await.unwrap_err();
    assert!(too_large(&e), "{e:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_model_list_and_show_past_the_limit_are_named_errors() {
    // /api/tags floods: detection ends in an error that names the limit, no abort.
    let server = FakeServer::with(|r: &Recorded, _| match r.path.as_str() {
        "/api/tags" | "/api/show" | "/v1/models" => body(flood(" "), Framing::Chunked),
        _ => not_found(),
    })
    .await;
    let client = Client::new(config(&server.url, None)).unwrap();
    let e = client.stream_chat(&line(), &mut |_| {}).await.unwrap_err();
    assert!(
        too_large(&e) || e.to_string().contains("size limit"),
        "{e:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_that_drips_forever_ends_on_the_whole_stream_limit() {
    let drip: Vec<Part> = std::iter::repeat_n(
        [
            Part::Bytes(b": ping\n\n".to_vec()),
            Part::Sleep(Duration::from_millis(40)),
        ],
        200,
    )
    .flatten()
    .collect();
    let server = FakeServer::with(move |r: &Recorded, _| match r.path.as_str() {
        "/v1/chat/completions" if r.json()["stream"] == true => Reply::sse(drip.clone()),
        "/v1/chat/completions" => Reply::json(200, &openai_reply("m", "うん。", 2)),
        _ => not_found(),
    })
    .await;
    let mut cfg = config(&server.url, Some(ApiKind::OpenAi));
    cfg.timeouts.first_token_ms = 300;
    cfg.timeouts.request_ms = 300;
    let client = Client::new(cfg).unwrap();
    let c = client.stream_chat(&line(), &mut |_| {}).await.unwrap();
    // The stream is cut at first_token + request_ms (0.6 s, not the drip's 8 s), and its one
    // fallback call answers.
    let why = c.fallback_reason.expect("fell back");
    assert!(why.contains("whole response"), "{why}");
    assert_eq!(c.text, "うん。");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endless_ollama_stream_without_text_is_too_large() {
    let unit = "{\"model\":\"gemma2:27b\",\"created_at\":\"2026-11-29T00:00:00Z\",\"message\":{\"role\":\"assistant\",\"content\":\"\"},\"done\":false}\n";
    let server = FakeServer::with(move |r: &Recorded, _| match r.path.as_str() {
        "/api/chat"
            if r.json()["messages"]
                .as_array()
                .is_some_and(|m| !m.is_empty()) =>
        {
            body(flood(unit), Framing::Chunked)
        }
        _ => not_found(),
    })
    .await;
    let client = Client::new(config(&server.url, Some(ApiKind::Ollama))).unwrap();
    let e = client.stream_chat(&line(), &mut |_| {}).await.unwrap_err();
    assert!(too_large(&e), "{e:?}");
}

/// What kakeai reads about a llama-server besides the reply — its context (/props, /slots) and
/// its token counts (/tokenize) — flooding past the limit is read only up to it: the facts stay
/// unknown (the configured context is used) and the reply still comes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_whose_facts_flood_still_answers_with_the_facts_unknown() {
    let server = FakeServer::with(|r: &Recorded, _| match r.path.as_str() {
        "/props" | "/slots" | "/tokenize" => body(flood(" "), Framing::Chunked),
        "/v1/chat/completions" if r.json()["stream"] == true => Reply::sse(llm_fake::parts(
            &llm_fake::sse_events("m", &["うん", "。"], "stop", 2),
        )),
        _ => not_found(),
    })
    .await;
    let client = Client::new(config(&server.url, Some(ApiKind::OpenAi))).unwrap();
    assert_eq!(client.learn_slot_context(ApiKind::OpenAi).await, None);
    let said = client
        .learn_from_tokenizer(&[Message::user("おはよう")])
        .await;
    assert_eq!(said, None);
    let c = client.stream_chat(&line(), &mut |_| {}).await.unwrap();
    assert_eq!(c.text, "うん。");
    let asked: Vec<String> = server.paths();
    for p in ["/props", "/slots", "/tokenize"] {
        assert!(
            asked.iter().any(|a| a.ends_with(p)),
            "{p} was asked: {asked:?}"
        );
    }
}
