//! Leak review with embeddings against a fake Ollama endpoint: one /api/embed call carrying the
//! checked secrets then the sentences, semantic issues from the vectors it answers, and an
//! honest `skipped` when the endpoint cannot embed.

// The wire helpers (stream framing) are not needed here.
#[allow(unused_imports)]
mod llm_fake;

use kakeai::llm::{ApiKind, Client};
use kakeai::vault::leak::{
    EmbedStatus, Importance, IssueKind, LeakSecret, ReviewConfig, ReviewInput, ReviewResult,
    review_with_embeddings,
};
use llm_fake::{FakeServer, Reply, config};
use serde_json::{Value, json};

const CAT: &str = "あゆは昔、姉に内緒で猫を拾って隠れて飼っていた";
const OPEN: &str = "あゆは辛い食べ物が苦手で、カレーはいつも甘口を選ぶ";

fn input() -> ReviewInput {
    let secret = |id: &str, content: &str, level| LeakSecret {
        id: id.into(),
        entity: "あゆ".into(),
        content: content.into(),
        level,
        importance: Importance::Critical,
        forbidden_keywords: vec!["子猫".into()],
        allowed_expressions: vec!["あゆは時々、窓の外の塀をじっと見つめる".into()],
        subtlety: 5,
    };
    ReviewInput {
        secrets: vec![secret("SEC-001", CAT, 2), secret("SEC-004", OPEN, 3)],
        settings: vec![],
        ..Default::default()
    }
}

/// A toy embedding model: anything mentioning a small animal kept in secret points one way,
/// everything else another — a paraphrase with none of the secret's words still lands near it.
fn embed_reply(req: &llm_fake::Recorded) -> Reply {
    let body: Value = serde_json::from_str(&req.body).unwrap();
    let vectors: Vec<Value> = body["input"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let s = s.as_str().unwrap();
            if s.contains('猫') || s.contains("小さな家族") {
                json!([1.0, 0.1, 0.0])
            } else {
                json!([0.0, 0.2, 1.0])
            }
        })
        .collect();
    Reply::json(
        200,
        &json!({"model": "e", "embeddings": vectors}).to_string(),
    )
}

#[tokio::test]
async fn one_embed_call_and_a_semantic_issue_for_the_paraphrase() {
    let server = FakeServer::with(|req, _| embed_reply(req)).await;
    let mut cfg = config(&server.url, Some(ApiKind::Ollama));
    cfg.embed_model = Some("nomic-embed-text".into());
    let client = Client::new(cfg).unwrap();
    let text = "おはよう、お姉ちゃん。\nあゆは時々、窓の外の塀をじっと見つめる。\n実はね、物置に小さな家族がいたの。";
    let r = review_with_embeddings(text, &input(), &ReviewConfig::default(), Some(&client)).await;

    assert_eq!(r.embeddings, EmbedStatus::Ran);
    let recorded = server.recorded();
    assert_eq!(recorded.len(), 1);
    assert_eq!(recorded[0].path, "/api/embed");
    let body = recorded[0].json();
    assert_eq!(body["model"], "nomic-embed-text");
    // The level-3 secret is not embedded; the allowed expression is not evidence.
    assert_eq!(
        body["input"],
        json!([
            CAT,
            "おはよう、お姉ちゃん。",
            "実はね、物置に小さな家族がいたの。"
        ])
    );

    let semantic: Vec<_> = r
        .issues
        .iter()
        .filter(|i| i.kind == IssueKind::SemanticSimilarity)
        .collect();
    assert_eq!(semantic.len(), 1, "{:#?}", r.issues);
    assert_eq!(semantic[0].secret_id.as_deref(), Some("SEC-001"));
    assert_eq!(semantic[0].location, "第3段落");
    let start = text.chars().position(|c| c == '実').unwrap();
    assert_eq!(semantic[0].span, [start, text.chars().count()]);
    assert_eq!(r.result, ReviewResult::Rejected);
}

#[tokio::test]
async fn a_server_without_embeddings_is_reported_as_skipped() {
    let server = FakeServer::scripted(vec![Reply::json(
        501,
        r#"{"error":{"code":501,"message":"This server does not support embeddings. Start it with `--embeddings`","type":"not_supported_error"}}"#,
    )])
    .await;
    let client = Client::new(config(&server.url, Some(ApiKind::OpenAi))).unwrap();
    let r = review_with_embeddings(
        "実はね、物置に小さな家族がいたの。",
        &input(),
        &ReviewConfig::default(),
        Some(&client),
    )
    .await;
    match &r.embeddings {
        EmbedStatus::Skipped { reason } => assert!(reason.contains("--embeddings"), "{reason}"),
        other => panic!("{other:?}"),
    }
    // Issue 27: a review whose semantic check did not run is never plain "approved".
    assert_ne!(r.result, ReviewResult::Approved);
    assert!(r.unchecked.iter().any(|c| c == "semantic_similarity"));
    let json = serde_json::to_value(&r).unwrap();
    assert_eq!(json["embeddings"]["status"], "skipped");
}
