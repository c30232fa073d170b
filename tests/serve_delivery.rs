//! `kakeai serve --line` delivery and lifecycle: LINE API failures (expired reply token → push,
//! 429 Retry-After, 500), non-text messages, start-up without secrets, SIGTERM with an answer in
//! flight, and `kakeai serve status`.

mod cli_env;
mod line_fake;
#[path = "llm_fake/mod.rs"]
mod llm_fake;
mod serve_common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use cli_env::Env;
use line_fake::{Answer, FakeLine};
use serve_common::*;

const LINE: &[&str] = &["うんうん、", "わかる", "よ！"];

fn judgment(json: &str) -> Arc<Mutex<String>> {
    Arc::new(Mutex::new(json.to_string()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_reply_token_falls_back_to_push_and_429_and_500_are_retried() {
    // reply: 400 Invalid reply token. push: 429 (Retry-After 1), then 500, then 200.
    let line = FakeLine::with(|c, n| match (c.path.as_str(), n) {
        ("/v2/bot/message/reply", _) => Answer::InvalidReplyToken,
        (_, 0) => Answer::RateLimited { retry_after: 1 },
        (_, 1) => Answer::ServerError,
        _ => Answer::Ok,
    })
    .await;
    let llm = llm(LINE, judgment("{}")).await;
    let s = Serve::start(
        Env::new(),
        &line.url,
        &llm.server.url,
        &fast_config(60.0),
        &[],
    );
    let t0 = std::time::Instant::now();
    assert_eq!(
        s.send(&body(&[text(
            &event_id(),
            ("user", "U9eeeeeeeeeeeeeeeeeeeeeeeeeeeeeee"),
            "x1",
            "おーい"
        )]))
        .await,
        200
    );
    let calls = line.wait(20, |c| c.len() >= 4).await;
    let paths: Vec<&str> = calls.iter().map(|c| c.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "/v2/bot/message/reply",
            "/v2/bot/message/push",
            "/v2/bot/message/push",
            "/v2/bot/message/push"
        ]
    );
    // Retry-After was honoured (≥ 1 s before the second push).
    assert!(t0.elapsed() >= Duration::from_secs(1));
    // One retry key for every attempt of the push.
    let keys: Vec<_> = calls[1..]
        .iter()
        .map(|c| c.retry_key.clone().unwrap())
        .collect();
    assert!(keys.iter().all(|k| *k == keys[0]));
    assert_eq!(calls[1].body["to"], "U9eeeeeeeeeeeeeeeeeeeeeeeeeeeeeee");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(line.calls().len(), 4);
    assert_eq!(s.metric("kakeai_line_pushes_total").await, 1.0);
    let d = until(10, || {
        query(
            &s.db(),
            "SELECT delivery FROM line_messages WHERE role = 'bot'",
            |r| r.get::<_, String>(0),
        )
        .into_iter()
        .next()
    })
    .await;
    assert_eq!(d.as_deref(), Some("push"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sticker_gets_her_text_only_line_and_follow_is_recorded() {
    let line = FakeLine::ok().await;
    let llm = llm(LINE, judgment("{}")).await;
    let s = Serve::start(
        Env::new(),
        &line.url,
        &llm.server.url,
        &fast_config(60.0),
        &["--character", "ayu"],
    );
    let user = "U7fffffffffffffffffffffffffffffff";
    let sticker = serde_json::json!({
        "type": "message", "mode": "active", "timestamp": 1, "webhookEventId": event_id(),
        "deliveryContext": {"isRedelivery": false}, "replyToken": "rt-s1",
        "source": {"type": "user", "userId": user},
        "message": {"type": "sticker", "id": "s1", "quoteToken": "q", "stickerId": "52002734", "packageId": "11537", "stickerResourceType": "STATIC"}
    });
    let follow = serde_json::json!({
        "type": "follow", "mode": "active", "timestamp": 1, "webhookEventId": event_id(),
        "deliveryContext": {"isRedelivery": false}, "replyToken": "rt-f1",
        "source": {"type": "user", "userId": user}, "follow": {"isUnblocked": false}
    });
    assert_eq!(s.send(&body(&[follow, sticker])).await, 200);
    let calls = line.wait(20, |c| !c.is_empty()).await;
    assert_eq!(calls.len(), 1);
    assert!(
        calls[0].text().contains("文字しか読めない"),
        "{}",
        calls[0].text()
    );
    assert!(
        llm.server.recorded().is_empty(),
        "no model call for a sticker"
    );
    let kinds = query(
        &s.db(),
        "SELECT event_type FROM line_events ORDER BY rowid",
        |r| r.get::<_, String>(0),
    );
    assert_eq!(kinds, ["follow", "message"]);
}

#[test]
fn without_secrets_it_refuses_to_start_and_names_the_variables() {
    let env = Env::new();
    let out = env
        .cmd(&["serve", "--line", "--listen", "127.0.0.1:0"])
        .env_remove("KAKEAI_LINE_CHANNEL_SECRET")
        .env_remove("KAKEAI_LINE_ACCESS_TOKEN")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("KAKEAI_LINE_CHANNEL_SECRET") && err.contains("KAKEAI_LINE_ACCESS_TOKEN"),
        "{err}"
    );
    // One of the two set: the other is named; the value set is never echoed.
    let out = env
        .cmd(&["serve", "--line"])
        .env("KAKEAI_LINE_CHANNEL_SECRET", "shh-do-not-print")
        .env_remove("KAKEAI_LINE_ACCESS_TOKEN")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        err.contains("KAKEAI_LINE_ACCESS_TOKEN") && !err.contains("shh-do-not-print"),
        "{err}"
    );
    // Secrets are not command-line options.
    let out = env
        .cmd(&["serve", "--line", "--channel-secret", "x"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_finishes_in_flight_events_and_status_prints_the_numbers() {
    use llm_fake::{FakeServer, Reply, parts, sse_events};
    let line = FakeLine::ok().await;
    // The model takes a second: the answer is still being written when SIGTERM arrives.
    let slow = FakeServer::with(|req, _| {
        if is_pii_pass(req) {
            return pii_nothing(req);
        }
        Reply::sse(parts(&sse_events("tiny-ja", &["またね", "！"], "stop", 2)))
            .delay(Duration::from_millis(1000))
    })
    .await;
    let mut s = Serve::start(Env::new(), &line.url, &slow.url, &fast_config(60.0), &[]);
    let health = reqwest::get(format!("{}/healthz", s.url)).await.unwrap();
    assert_eq!(health.status().as_u16(), 200);
    assert_eq!(
        s.send(&body(&[text(
            &event_id(),
            ("user", "U8aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"),
            "t1",
            "またね"
        )]))
        .await,
        200
    );
    let out = s
        .env
        .cmd(&["serve", "status", "--url", &s.metrics_url])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(
        text.contains("health: ok")
            && text.contains("events_total")
            && text.contains("ack_seconds"),
        "{text}"
    );
    assert!(
        line.calls().is_empty(),
        "the answer should still be in flight"
    );
    let status = s.terminate();
    assert!(status.success(), "{status:?}");
    // The in-flight answer went out before the process ended, and the store has it.
    assert_eq!(line.calls().len(), 1);
    assert_eq!(line.calls()[0].text(), "またね！");
    let bot = query(
        &s.db(),
        "SELECT state FROM line_messages WHERE role = 'bot'",
        |r| r.get::<_, String>(0),
    );
    assert_eq!(bot, ["sent"]);
}
