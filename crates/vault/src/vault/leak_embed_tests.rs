//! The semantic check with hand-built vectors, and what the review says when embeddings are
//! off or the endpoint is down.

use super::super::tests::{CAT, world};
use super::*;
use crate::llm::{ApiKind, LlmConfig};
use crate::vault::leak::{ReviewResult, SEMANTIC_CHECK, Severity, review};

/// A unit vector at `deg` degrees in the plane of the first two axes, padded to 3 dimensions.
fn at(deg: f64) -> Vec<f32> {
    let r = deg.to_radians();
    vec![r.cos() as f32, r.sin() as f32, 0.0]
}

#[test]
fn cosine_basics() {
    assert!((cosine(&[1.0, 0.0], &[2.0, 0.0]) - 1.0).abs() < 1e-9);
    assert!(cosine(&[1.0, 0.0], &[0.0, 3.0]).abs() < 1e-9);
    assert_eq!(cosine(&[1.0, 0.0], &[1.0]), 0.0);
    assert_eq!(cosine(&[0.0, 0.0], &[1.0, 0.0]), 0.0);
    assert_eq!(cosine(&[], &[]), 0.0);
}

#[test]
fn the_plan_embeds_checked_secrets_and_sentences_without_allowed_text() {
    let input = world();
    let reviewer = Reviewer::new(&input, &ReviewConfig::default());
    let text = "おはよう。\n猫の話になると、あゆは少しだけ目をそらした。\n猫の話になると、あゆは少しだけ目をそらした、昔の話だよ。";
    let plan = reviewer.embed_plan(text);
    // SEC-004 is level 3.
    assert_eq!(plan.secrets, vec![0, 1, 2]);
    // The second line is only an allowed expression (and its 。): nothing left to embed.
    let texts: Vec<&str> = plan.sentences.iter().map(|s| s.text.as_str()).collect();
    assert_eq!(texts, vec!["おはよう。", "、昔の話だよ。"]);
    assert_eq!(plan.sentences[1].paragraph, 3);
    assert_eq!(plan.sentences[1].span, [29, 57]);
    let inputs = plan.inputs(&input);
    assert_eq!(inputs.len(), 5);
    assert_eq!(inputs[0], CAT);
    assert_eq!(inputs[3], "おはよう。");
}

#[test]
fn semantic_issues_are_above_the_threshold_only() {
    let input = world();
    let cfg = ReviewConfig::default();
    let plan = EmbedPlan {
        secrets: vec![0, 1],
        sentences: vec![
            SentenceSpan {
                span: [0, 10],
                paragraph: 1,
                text: "一".into(),
            },
            SentenceSpan {
                span: [10, 20],
                paragraph: 2,
                text: "二".into(),
            },
        ],
    };
    // Secret 0 at 0°, secret 1 at 90°; sentence 1 at 40° (cos 0.766 to secret 0, 0.643 to
    // secret 1), sentence 2 at 45° (0.707 to both).
    let vectors = vec![at(0.0), at(90.0), at(40.0), at(45.0)];
    let issues = semantic_issues(&plan, &input, &vectors, &cfg);
    assert_eq!(issues.len(), 1, "{issues:#?}");
    let i = &issues[0];
    assert_eq!(i.kind, IssueKind::SemanticSimilarity);
    assert_eq!(i.severity, Severity::Critical);
    assert_eq!(i.secret_id.as_deref(), Some("SEC-001"));
    assert_eq!((i.span, i.location.as_str()), ([0, 10], "第1段落"));
    assert_eq!(i.score, Some(0.766));
    assert!(
        i.detail
            .contains("言い換えまたは婉曲表現による潜在的な情報漏洩")
    );
    assert!(i.detail.contains("閾値0.75"));

    // A lower threshold also catches the 45° sentence, for both secrets.
    let loose = ReviewConfig {
        embed_threshold: 0.70,
        ..cfg.clone()
    };
    assert_eq!(semantic_issues(&plan, &input, &vectors, &loose).len(), 3);
    // Missing vectors are no evidence.
    assert!(semantic_issues(&plan, &input, &vectors[..2], &cfg).is_empty());
}

#[test]
fn vectors_the_review_cannot_use_are_named() {
    assert!(unusable(&[at(0.0), at(1.0)], 2).is_none());
    assert!(
        unusable(&[at(0.0)], 2)
            .unwrap()
            .contains("1 embeddings for 2")
    );
    assert!(unusable(&[at(0.0), vec![1.0]], 2).is_some());
    assert!(unusable(&[vec![], vec![]], 2).is_some());
}

fn closed_port_client() -> Client {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let mut cfg = LlmConfig {
        endpoint: format!("http://127.0.0.1:{port}"),
        api: Some(ApiKind::Ollama),
        ..LlmConfig::default()
    };
    cfg.timeouts.connect_ms = 1000;
    cfg.retry_backoff_ms = 10;
    Client::new(cfg).unwrap()
}

#[tokio::test]
async fn a_dead_endpoint_is_skipped_not_passed() {
    let input = world();
    let cfg = ReviewConfig::default();
    let text = "音大の話はまた今度ね。";
    let plain = review(text, &input, &cfg);
    let client = closed_port_client();
    let r = review_with_embeddings(text, &input, &cfg, Some(&client)).await;
    match &r.embeddings {
        EmbedStatus::Skipped { reason } => {
            assert!(reason.contains("127.0.0.1"), "{reason}")
        }
        other => panic!("{other:?}"),
    }
    assert_eq!((r.result, &r.issues), (plain.result, &plain.issues));
}

#[tokio::test]
async fn no_client_is_disabled_and_nothing_to_compare_is_skipped() {
    let input = world();
    let cfg = ReviewConfig::default();
    let r = review_with_embeddings("こんにちは。", &input, &cfg, None).await;
    assert_eq!(r.embeddings, EmbedStatus::Disabled);
    assert!(r.unchecked.contains(&SEMANTIC_CHECK.to_string()));
    assert_ne!(r.result, ReviewResult::Approved);
    // Only a level-3 secret: the dead endpoint is never asked.
    let mut open = world();
    open.secrets.retain(|s| s.level == 3);
    let client = closed_port_client();
    let r = review_with_embeddings("こんにちは。", &open, &cfg, Some(&client)).await;
    assert_eq!(
        r.embeddings,
        EmbedStatus::NotNeeded {
            reason: "no secret of level 2 or lower to compare".into()
        }
    );
    // Nothing was needed: not "without the semantic check".
    assert!(!r.unchecked.contains(&SEMANTIC_CHECK.to_string()));
    let r = review_with_embeddings("……", &input, &cfg, Some(&client)).await;
    assert!(
        matches!(r.embeddings, EmbedStatus::NotNeeded { ref reason } if reason.contains("no sentence"))
    );
}
