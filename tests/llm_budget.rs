//! The prompt budget in tokens against a fake llama-server that counts 2 tokens per character
//! and enforces a 1,024-token slot the way the real one refuses (HTTP 400
//! exceed_context_size): the refusal's counts teach the ratio and the context, the oldest
//! history is dropped, and the line is generated; a prompt that cannot fit at all is a clear
//! context-overflow message.

mod llm_fake;

use kakeai::duo::backend::fitted_stream;
use kakeai::llm::{ApiKind, Client, Message};
use llm_fake::{FakeServer, Recorded, Reply, parts};

const CTX: usize = 1024;

fn chars(r: &Recorded) -> usize {
    r.json()["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["content"].as_str().unwrap().chars().count())
        .sum()
}

/// The chat requests a fake received (the tokenizer's are counted apart).
fn chats(server: &FakeServer) -> Vec<Recorded> {
    server
        .recorded()
        .into_iter()
        .filter(|r| r.path == "/v1/chat/completions")
        .collect()
}

async fn llama_like() -> FakeServer {
    llama(false).await
}

/// `tokenizer`: whether it serves llama-server's `POST /tokenize {"content"}` →
/// `{"tokens": [...]}` (2 per char, as it counts prompts); without, that path is a 404 (a
/// build or proxy without it).
async fn llama(tokenizer: bool) -> FakeServer {
    FakeServer::with(move |r, _| {
        if r.path == "/tokenize" {
            if !tokenizer {
                return Reply::json(404, r#"{"error":{"code":404,"message":"File Not Found","type":"not_found_error"}}"#);
            }
            let n = r.json()["content"].as_str().unwrap_or("").chars().count() * 2;
            let ids: Vec<u32> = (0..n as u32).map(|i| 1000 + i % 50).collect();
            return Reply::json(200, &serde_json::json!({ "tokens": ids }).to_string());
        }
        let tokens = chars(r) * 2;
        if tokens > CTX {
            return Reply::json(
                400,
                &format!(
                    r#"{{"error":{{"code":400,"message":"request ({tokens} tokens) exceeds the available context size ({CTX} tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":{tokens},"n_ctx":{CTX}}}}}"#
                ),
            );
        }
        let mut events = llm_fake::sse_events("smollm2", &["うん", "、いいね。"], "stop", 3);
        let usage = format!(
            "data: {}\n\n",
            serde_json::json!({"choices": [], "usage": {"completion_tokens": 3, "prompt_tokens": tokens, "total_tokens": tokens + 3}})
        );
        events.insert(events.len() - 1, usage);
        Reply::sse(parts(&events))
    })
    .await
}

fn client(url: &str) -> Client {
    let mut cfg = llm_fake::config(url, Some(ApiKind::OpenAi));
    cfg.model = "smollm2".into();
    cfg.num_ctx = 8192; // what the user believes; the server's slot is smaller
    cfg.max_tokens = 100;
    cfg.tokens_per_char = 1.0;
    Client::new(cfg).unwrap()
}

fn conversation(system_chars: usize, turns: usize) -> Vec<Message> {
    let mut m = vec![Message::system("設".repeat(system_chars))];
    for i in 0..turns {
        let text = format!("{i:02}{}", "話".repeat(58));
        m.push(if i % 2 == 0 {
            Message::user(text)
        } else {
            Message::assistant(text)
        });
    }
    m.push(Message::user("次のやなの発言だけを書いてください。"));
    m
}

#[tokio::test]
async fn a_refused_prompt_teaches_the_budget_and_drops_the_oldest_history() {
    let server = llama_like().await;
    let client = client(&server.url);
    let sent = conversation(200, 20);
    let c = fitted_stream(&client, sent.clone(), &mut |_| {})
        .await
        .unwrap();
    assert_eq!(c.text, "うん、いいね。");
    let rec = chats(&server);
    assert_eq!(rec.len(), 2, "one refusal, one fitted prompt");
    assert!(chars(&rec[1]) * 2 <= CTX);
    let msgs = rec[1].json()["messages"].as_array().unwrap().clone();
    assert_eq!(msgs.first().unwrap()["role"], "system");
    assert_eq!(
        msgs.last().unwrap()["content"],
        sent.last().unwrap().content.as_str()
    );
    // The newest history line survived, the oldest did not.
    let all = rec[1].body.clone();
    assert!(all.contains(&sent[sent.len() - 2].content));
    assert!(!all.contains(&sent[1].content));
    // Learned: 2 tokens per character, the 1,024-token slot.
    assert!((client.ratio().tokens_per_char - 2.0).abs() < 0.01);
    assert_eq!(client.context_tokens(), CTX as u32);
    // The next prompt fits at once.
    fitted_stream(&client, conversation(200, 24), &mut |_| {})
        .await
        .unwrap();
    assert_eq!(chats(&server).len(), 3);
}

#[tokio::test]
async fn a_prompt_that_cannot_fit_is_a_context_overflow_not_a_server_error() {
    let server = llama_like().await;
    let client = client(&server.url);
    let e = fitted_stream(&client, conversation(900, 4), &mut |_| {})
        .await
        .unwrap_err();
    assert!(e.starts_with("context overflow:"), "{e}");
    assert!(e.contains("1024 tokens"), "{e}");
    assert_eq!(
        chats(&server).len(),
        1,
        "only the refused attempt reached the server"
    );
}

/// With llama-server's tokenizer the ratio is known before the first request: with the right
/// num_ctx the first prompt sent already fits (no refusal); without the tokenizer the first
/// guess (1 token/char) sends too much and needs one refusal to learn.
#[tokio::test]
async fn the_tokenizer_endpoint_teaches_the_ratio_before_the_first_request() {
    for tokenizer in [true, false] {
        let server = llama(tokenizer).await;
        let mut cfg = llm_fake::config(&server.url, Some(ApiKind::OpenAi));
        cfg.model = "smollm2".into();
        cfg.num_ctx = CTX as u32; // right this time
        cfg.max_tokens = 100;
        cfg.tokens_per_char = 1.0;
        let client = Client::new(cfg).unwrap();
        fitted_stream(&client, conversation(200, 12), &mut |_| {})
            .await
            .unwrap();
        let asked = server
            .recorded()
            .iter()
            .filter(|r| r.path == "/tokenize")
            .count();
        assert_eq!(asked, 1, "asked once");
        assert!(client.ratio().learned);
        let r = client.ratio().tokens_per_char;
        assert!((1.9..=2.1).contains(&r), "{r}");
        let sent = chats(&server);
        assert!(chars(&sent[0]) * 2 <= CTX || !tokenizer);
        assert_eq!(
            sent.len(),
            if tokenizer { 1 } else { 2 },
            "tokenizer {tokenizer}"
        );
        // Asked once per client, not again.
        fitted_stream(&client, conversation(200, 12), &mut |_| {})
            .await
            .unwrap();
        let asked = server
            .recorded()
            .iter()
            .filter(|r| r.path == "/tokenize")
            .count();
        assert_eq!(asked, 1);
    }
}

/// llama-server's real context per slot is read before any request: `/props`
/// (`default_generation_settings.n_ctx`), else the smallest slot of `/slots`; a server that
/// answers neither keeps the configured context. `doctor` reads it before its context check.
#[tokio::test]
async fn the_slot_context_is_read_from_props_or_slots() {
    let props = r#"{"default_generation_settings":{"n_ctx":1024,"n_predict":-1},"total_slots":8}"#;
    let slots = r#"[{"id":0,"n_ctx":2048},{"id":1,"n_ctx":1536}]"#;
    for (props, slots, want) in [
        (Some(props), None, 1024u32),
        (None, Some(slots), 1536),
        (Some(r#"{"total_slots":2}"#), Some(slots), 1536),
        (None, None, 8192),
        (
            Some(r#"{"default_generation_settings":{"n_ctx":0}}"#),
            None,
            8192,
        ),
    ] {
        let server = FakeServer::with(move |r, _| match (r.path.as_str(), props, slots) {
            ("/props", Some(p), _) => Reply::json(200, p),
            ("/slots", _, Some(s)) => Reply::json(200, s),
            _ => Reply::json(404, r#"{"error":{"code":404,"message":"File Not Found"}}"#),
        })
        .await;
        let client = client(&server.url);
        let read = client.learn_slot_context(ApiKind::OpenAi).await;
        assert_eq!(read.is_some(), want != 8192);
        assert_eq!(client.context_tokens(), want, "{props:?} {slots:?}");
        let asked: Vec<String> = server.recorded().into_iter().map(|r| r.path).collect();
        assert!(
            !asked.iter().any(|p| p.starts_with("/v1/props")),
            "{asked:?}"
        );
    }
}
