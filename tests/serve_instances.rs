//! The LINE bot on several instances sharing one PostgreSQL store (issue 24 §3), with the real
//! binary, the fake LINE API and a slow fake model: events are spread over two instances and
//! redelivered to the other one; one instance is killed with `kill -9` while its answers are
//! still being generated. Every event is answered exactly once: the survivor takes the dead
//! instance's messages over once their holds lapse (by push), a redelivery anywhere is a
//! duplicate, nothing is said twice. Skipped with a message when PostgreSQL is not installed
//! (required under CI=true).

mod common;

mod cli_env;
mod line_fake;
#[path = "llm_fake/mod.rs"]
mod llm_fake;
mod serve_common;

use std::collections::HashMap;
use std::time::Duration;

use cli_env::Env;
use common::pg::PgCluster;
use kakeai::p;
use kakeai::store::Store;
use line_fake::FakeLine;
use llm_fake::{FakeServer, Recorded, Reply, parts, sse_events};
use serve_common::*;

/// The model: every reply takes `delay` to start (answers are in flight when an instance dies).
async fn slow_llm(delay: Duration) -> FakeServer {
    FakeServer::with(move |req: &Recorded, _| match req.path.as_str() {
        "/v1/models" => Reply::json(
            200,
            r#"{"object":"list","data":[{"id":"tiny-ja","object":"model","owned_by":"llamacpp"}]}"#,
        ),
        _ if is_pii_pass(req) => pii_nothing(req),
        "/v1/chat/completions" if req.json()["stream"] == true => Reply::sse(parts(&sse_events(
            "tiny-ja",
            &["うん、", "それいいね", "！"],
            "stop",
            3,
        )))
        .delay(delay),
        _ => Reply::json(
            200,
            &llm_fake::openai_reply(
                "tiny-ja",
                r#"{"context_type":"じゃれ合い","confidence":0.9,"reason":"笑いながらのからかい"}"#,
                10,
            ),
        ),
    })
    .await
}

fn user(i: usize) -> String {
    format!("U{i:032x}")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_instances_answer_every_event_once_when_one_is_killed() {
    let Some(cluster) =
        PgCluster::start("two_instances_answer_every_event_once_when_one_is_killed")
    else {
        return;
    };
    let url = cluster.database("bot");
    let line = FakeLine::ok().await;
    let llm = slow_llm(Duration::from_millis(1500)).await;
    let cfg = format!("lease_seconds = 1\nworkers = 8\n{}", fast_config(0.2));
    let args = ["--db", url.as_str()];
    let mut a = Serve::start(Env::new(), &line.url, &llm.url, &cfg, &args);
    // One PII key per store: the second instance gets the first one's key file.
    let env_b = Env::new();
    std::fs::create_dir_all(env_b.dir.path().join("data")).unwrap();
    std::fs::copy(
        a.env.dir.path().join("data").join("pii.key"),
        env_b.dir.path().join("data").join("pii.key"),
    )
    .expect("the first instance's key");
    let b = Serve::start(env_b, &line.url, &llm.url, &cfg, &args);
    let n = 24;
    let mut events = Vec::new();
    for i in 0..n {
        let ev = text(
            &event_id(),
            ("user", &user(i)),
            &format!("m{i}"),
            "今日はなにしてた？",
        );
        let to = if i % 2 == 0 { &a } else { &b };
        assert_eq!(
            to.send(&body(std::slice::from_ref(&ev))).await,
            200,
            "event {i}"
        );
        events.push(ev);
    }
    // LINE redelivers some events, to the other instance.
    for (i, ev) in events.iter().enumerate().take(8) {
        let mut again = ev.clone();
        again["deliveryContext"]["isRedelivery"] = serde_json::json!(true);
        let to = if i % 2 == 0 { &b } else { &a };
        assert_eq!(to.send(&body(&[again])).await, 200, "redelivery {i}");
    }
    // A dies with its answers still being generated.
    let _ = a.child.kill();
    let _ = a.child.wait();
    let delivered = line
        .wait(60, |c| {
            let users: std::collections::HashSet<String> = c
                .iter()
                .filter(|c| c.delivered())
                .filter_map(|c| to_user(c, &events))
                .collect();
            users.len() >= n
        })
        .await;
    let mut per: HashMap<String, usize> = HashMap::new();
    for c in delivered.iter().filter(|c| c.delivered()) {
        *per.entry(to_user(c, &events).expect("a known user"))
            .or_default() += 1;
    }
    let missing: Vec<String> = (0..n).map(user).filter(|u| !per.contains_key(u)).collect();
    let twice: Vec<(&String, &usize)> = per.iter().filter(|(_, k)| **k > 1).collect();
    assert!(
        missing.is_empty(),
        "never answered: {missing:?}; stderr of B: {:?}",
        b.stderr.lock().unwrap()
    );
    assert!(twice.is_empty(), "answered twice: {twice:?}");
    // A's messages went by push, taken over by B (A answered none before it died).
    let pushes = delivered
        .iter()
        .filter(|c| c.delivered() && c.path.ends_with("/push"))
        .count();
    assert!(
        pushes >= n / 2,
        "{pushes} pushes for {} messages of A",
        n / 2
    );
    // The store agrees: one event row per webhookEventId, one sent line per message.
    let store = Store::open_target(std::path::Path::new(&url)).expect("opens");
    let db = store.db();
    let events_stored: i64 = db.one("SELECT COUNT(*) FROM line_events", p![]).unwrap();
    assert_eq!(events_stored, n as i64);
    let sent: Vec<(i64, i64)> = db
        .query_map(
            "SELECT reply_to, COUNT(*) FROM line_messages WHERE role = 'bot' AND state = 'sent'
              GROUP BY reply_to",
            p![],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(sent.len(), n);
    assert!(sent.iter().all(|(_, k)| *k == 1), "{sent:?}");
    let unsettled: i64 = db
        .one(
            "SELECT COUNT(*) FROM line_messages WHERE role = 'user' AND state <> 'answered'",
            p![],
        )
        .unwrap();
    assert_eq!(unsettled, 0);
}

/// The user a delivered call went to: a push names them, a reply's token names the message.
fn to_user(c: &line_fake::Call, events: &[serde_json::Value]) -> Option<String> {
    if let Some(to) = c.body["to"].as_str() {
        return Some(to.to_string());
    }
    let token = c.body["replyToken"].as_str()?;
    events
        .iter()
        .find(|e| e["replyToken"] == token)
        .and_then(|e| e["source"]["userId"].as_str().map(str::to_string))
}
