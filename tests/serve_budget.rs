//! Issue 22: Layer 4 shares the answer budget, and one slow chat never delays another. The
//! model hangs on Layer 4 (its non-streamed context question) for a minute; a returning user's
//! 「ほんとバカだなぁ」 must still be settled within the budget (the static result of Layers 1–3
//! stands), and two other chats — chosen to share the old hashed worker lane with it — are
//! answered meanwhile.

mod cli_env;
mod line_fake;
#[path = "llm_fake/mod.rs"]
mod llm_fake;
mod serve_common;

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use cli_env::Env;
use line_fake::FakeLine;
use llm_fake::{FakeServer, Recorded, Reply, openai_reply, parts, sse_events};
use serve_common::*;

/// The lane the old dispatcher put a chat on (`DefaultHasher` of the channel mod `workers`).
fn old_lane(channel: &str, workers: u64) -> u64 {
    let mut h = DefaultHasher::new();
    channel.to_string().hash(&mut h);
    h.finish() % workers
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hanging_layer_4_stays_inside_the_budget_and_other_chats_never_wait() {
    let l4_calls = Arc::new(AtomicUsize::new(0));
    let count = l4_calls.clone();
    let llm = FakeServer::with(move |req: &Recorded, _| match req.path.as_str() {
        _ if serve_common::is_pii_pass(req) => serve_common::pii_nothing(req),
        "/v1/models" => Reply::json(
            200,
            r#"{"object":"list","data":[{"id":"tiny-ja","object":"model","owned_by":"llamacpp"}]}"#,
        ),
        "/v1/chat/completions" if req.json()["stream"] == true => {
            Reply::sse(parts(&sse_events("tiny-ja", &["そっか", "！"], "stop", 2)))
        }
        // Layer 4's question: the model hangs.
        _ => {
            count.fetch_add(1, Ordering::SeqCst);
            Reply::json(
                200,
                &openai_reply(
                    "tiny-ja",
                    r#"{"context_type":"じゃれ合い","confidence":0.9,"reason":"x"}"#,
                    5,
                ),
            )
            .delay(Duration::from_secs(60))
        }
    })
    .await;
    let line = FakeLine::ok().await;
    let cfg = fast_config(60.0).replace(
        "answer_budget_seconds = 20\n",
        "answer_budget_seconds = 2\nworkers = 8\n",
    );
    let s = Serve::start(Env::new(), &line.url, &llm.url, &cfg, &["--no-vault"]);
    let a = "Ubudget000000000000000000000000a";
    let lane = old_lane(a, 8);
    let others: Vec<String> = (0..10_000)
        .map(|i| format!("Ubudget{i:025}"))
        .filter(|c| c != a && old_lane(c, 8) == lane)
        .take(2)
        .collect();
    // A returning user: three earlier messages, answered.
    for i in 0..3 {
        let m = format!("a{i}");
        assert_eq!(
            s.send(&body(&[text(&event_id(), ("user", a), &m, "今日は暑いね")]))
                .await,
            200
        );
        line.wait(10, |c| c.len() > i).await;
    }
    let t = Instant::now();
    assert_eq!(
        s.send(&body(&[text(
            &event_id(),
            ("user", a),
            "a3",
            "ほんとバカだなぁ"
        )]))
        .await,
        200
    );
    tokio::time::sleep(Duration::from_millis(200)).await;
    for (i, o) in others.iter().enumerate() {
        let m = format!("o{i}");
        assert_eq!(
            s.send(&body(&[text(&event_id(), ("user", o), &m, "おはよう")]))
                .await,
            200
        );
    }
    let calls = line.wait(15, |c| c.len() >= 6).await;
    let waited = t.elapsed();
    assert!(
        l4_calls.load(Ordering::SeqCst) >= 1,
        "Layer 4 was never asked"
    );
    let to = |c: &line_fake::Call| c.body["replyToken"].as_str().unwrap_or("").to_string();
    let tokens: Vec<String> = calls.iter().map(to).collect();
    for i in 0..others.len() {
        assert!(
            tokens.contains(&format!("rt-o{i}")),
            "chat {i} waited behind the slow one: {tokens:?}"
        );
    }
    let settled = until(15, || {
        let r = query(
            &s.db(),
            "SELECT state FROM line_messages WHERE message_id = 'a3'",
            |r| r.get::<_, String>(0),
        );
        (r.first()
            .is_some_and(|st| st != "queued" && st != "sending"))
        .then_some(r)
    })
    .await;
    eprintln!("with Layer 4 hanging: all settled {waited:?} after the insult; {settled:?}");
    assert!(
        settled.is_some(),
        "the insult was not settled within 15 s (budget 2 s)"
    );
}

/// The vault's semantic check (an embedding call) shares the answer budget: an embedding server
/// that hangs for a minute makes the check "not run" — named in the stored verdict — and the
/// reply still goes out near the budget, not after the embedding request's own timeout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hanging_embedding_server_costs_the_check_not_the_budget() {
    let embeds = Arc::new(AtomicUsize::new(0));
    let count = embeds.clone();
    let llm = FakeServer::with(move |req: &Recorded, _| match req.path.as_str() {
        _ if serve_common::is_pii_pass(req) => serve_common::pii_nothing(req),
        _ if serve_common::is_leak_judge(req) => serve_common::leak_judge_no(),
        "/v1/models" => Reply::json(
            200,
            r#"{"object":"list","data":[{"id":"tiny-ja","object":"model","owned_by":"llamacpp"}]}"#,
        ),
        "/v1/chat/completions" if req.json()["stream"] == true => Reply::sse(parts(&sse_events(
            "tiny-ja",
            &["そっか、", "雨なんだね！"],
            "stop",
            2,
        ))),
        "/v1/embeddings" => {
            count.fetch_add(1, Ordering::SeqCst);
            Reply::json(200, r#"{"object":"list","data":[]}"#).delay(Duration::from_secs(60))
        }
        _ => Reply::json(
            200,
            &openai_reply(
                "tiny-ja",
                r#"{"context_type":"雑談","confidence":0.9,"reason":"x"}"#,
                5,
            ),
        ),
    })
    .await;
    let line = FakeLine::ok().await;
    let env = Env::new();
    std::fs::create_dir_all(env.dir.path().join("config")).unwrap();
    env.file("config/llm.toml", "embed_model = \"e\"\n");
    let cfg = fast_config(60.0).replace(
        "answer_budget_seconds = 20\n",
        "answer_budget_seconds = 2\n",
    );
    let vault = sample_vault();
    let s = Serve::start(env, &line.url, &llm.url, &cfg, &["--vault", &vault]);
    let t = Instant::now();
    let user = "Uembed00000000000000000000000000";
    assert_eq!(
        s.send(&body(&[text(
            &event_id(),
            ("user", user),
            "e1",
            "今日は雨だね"
        )]))
        .await,
        200
    );
    let calls = line.wait(20, |c| !c.is_empty()).await;
    let waited = t.elapsed();
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert!(
        embeds.load(Ordering::SeqCst) >= 1,
        "the semantic check was never asked"
    );
    eprintln!("with the embedding server hanging: replied after {waited:?} (budget 2 s)");
    assert!(
        waited < Duration::from_secs(12),
        "the reply waited for the embedding server: {waited:?}"
    );
    let verdicts = until(10, || {
        let r = query(
            &s.db(),
            "SELECT verdict FROM line_messages WHERE role = 'bot' AND state = 'sent'",
            |r| r.get::<_, String>(0),
        );
        (!r.is_empty()).then_some(r)
    })
    .await
    .expect("the reply is stored");
    assert!(
        verdicts[0].contains("no answer within the answer budget"),
        "the verdict must say the semantic check did not run: {}",
        verdicts[0]
    );
}
