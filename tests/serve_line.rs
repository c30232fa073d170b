//! `kakeai serve --line` over real HTTP: signed LINE webhook bodies in, the fake LINE API and the
//! fake model behind it (issue 11's done-when cases).

mod cli_env;
mod line_fake;
#[path = "llm_fake/mod.rs"]
mod llm_fake;
mod serve_common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use cli_env::Env;
use line_fake::FakeLine;
use serde_json::json;
use serve_common::*;

const LINE: &[&str] = &["えー、", "それ面白い", "じゃん！"];
const SAID: &str = "えー、それ面白いじゃん！";

fn no_judgment() -> Arc<Mutex<String>> {
    Arc::new(Mutex::new(
        r#"{"should_respond": false, "reason": "会話が続いている", "confidence": 0.95}"#.into(),
    ))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_one_to_one_message_is_answered_through_the_reply_api() {
    let line = FakeLine::ok().await;
    let llm = llm(LINE, no_judgment()).await;
    let s = Serve::start(
        Env::new(),
        &line.url,
        &llm.server.url,
        &fast_config(60.0),
        &[],
    );
    let user = "U4af4980629aaaaaaaaaaaaaaaaaaaaa1";
    assert_eq!(
        s.send(&body(&[text(
            &event_id(),
            ("user", user),
            "m100",
            "今日は暑いね"
        )]))
        .await,
        200
    );
    let calls = line.wait(20, |c| !c.is_empty()).await;
    assert_eq!(calls.len(), 1, "{calls:?}");
    let c = &calls[0];
    assert_eq!(c.path, "/v2/bot/message/reply");
    assert_eq!(c.auth, format!("Bearer {TOKEN}"));
    assert_eq!(c.body["replyToken"], "rt-m100");
    assert_eq!(c.body["messages"][0]["type"], "text");
    assert_eq!(c.text(), SAID);
    let rows = until(10, || {
        let r = query(&s.db(), "SELECT role, state, delivery, source, verdict IS NOT NULL FROM line_messages ORDER BY id", |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get::<_, String>(2)?, r.get::<_, String>(3)?, r.get::<_, bool>(4)?))
        });
        // The reply row is written before the user's row settles from `sending`.
        (r.len() == 2 && r[0].1 != "sending").then_some(r)
    })
    .await
    .expect("both lines stored and settled");
    assert_eq!(rows[0].0, "user");
    assert_eq!(rows[0].1, "answered");
    assert_eq!(
        (
            rows[1].0.as_str(),
            rows[1].1.as_str(),
            rows[1].2.as_str(),
            rows[1].3.as_str(),
            rows[1].4
        ),
        ("bot", "sent", "reply", "llm", true)
    );
    assert_eq!(s.metric("kakeai_line_replies_total").await, 1.0);
    // The token never reaches the store or the log.
    let all = std::fs::read(s.db()).unwrap_or_default();
    assert!(!String::from_utf8_lossy(&all).contains(TOKEN));
    assert!(
        !s.stderr
            .lock()
            .unwrap()
            .iter()
            .any(|l| l.contains(TOKEN) || l.contains(SECRET))
    );
}

fn table_counts(db: &std::path::Path) -> Vec<(String, i64)> {
    let names = query(
        db,
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
        |r| r.get::<_, String>(0),
    );
    names
        .into_iter()
        .map(|n| {
            let c = query(db, &format!("SELECT COUNT(*) FROM \"{n}\""), |r| {
                r.get::<_, i64>(0)
            })[0];
            (n, c)
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_signature_gets_401_and_leaves_the_database_unchanged() {
    let line = FakeLine::ok().await;
    let llm = llm(LINE, no_judgment()).await;
    let s = Serve::start(
        Env::new(),
        &line.url,
        &llm.server.url,
        &fast_config(60.0),
        &[],
    );
    let before = table_counts(&s.db());
    let b = body(&[text(
        &event_id(),
        ("user", "U1aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"),
        "m200",
        "やっほー",
    )]);
    let good = kakeai::serve::signature::sign(SECRET, b.as_bytes());
    let wrong_secret = kakeai::serve::signature::sign("not-the-secret", b.as_bytes());
    let other_body = kakeai::serve::signature::sign(SECRET, b"{}");
    for sig in [
        None,
        Some(""),
        Some("garbage"),
        Some(wrong_secret.as_str()),
        Some(other_body.as_str()),
        Some(&good[..good.len() - 4]),
    ] {
        assert_eq!(s.post(&b, sig).await, 401, "{sig:?}");
    }
    // The right signature over a changed body.
    let tampered = b.replace("やっほー", "やっほ！");
    assert_eq!(s.post(&tampered, Some(&good)).await, 401);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(table_counts(&s.db()), before);
    assert_eq!(s.metric("kakeai_line_bad_signature_total").await, 7.0);
    assert_eq!(s.metric("kakeai_line_events_total").await, 0.0);
    assert!(line.calls().is_empty());
    assert!(llm.server.recorded().is_empty());
    // Nothing but the counter: the log does not mention the requests.
    assert!(
        !s.stderr
            .lock()
            .unwrap()
            .iter()
            .any(|l| l.contains("やっほ"))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redelivered_event_is_answered_once_even_after_a_restart() {
    let line = FakeLine::ok().await;
    let llm = llm(LINE, no_judgment()).await;
    let env = Env::new();
    let id = event_id();
    let first = text(
        &id,
        ("user", "U2bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"),
        "m300",
        "ねえ聞いて",
    );
    let mut again = first.clone();
    again["deliveryContext"]["isRedelivery"] = json!(true);
    let mut s = Serve::start(env, &line.url, &llm.server.url, &fast_config(60.0), &[]);
    assert_eq!(s.send(&body(std::slice::from_ref(&first))).await, 200);
    assert_eq!(s.send(&body(std::slice::from_ref(&again))).await, 200);
    line.wait(20, |c| !c.is_empty()).await;
    assert!(s.terminate().success());
    // A new process on the same store: the redelivery is still known.
    let env = std::mem::replace(&mut s.env, Env::new());
    drop(s);
    let s = Serve::start(env, &line.url, &llm.server.url, &fast_config(60.0), &[]);
    assert_eq!(s.send(&body(&[again])).await, 200);
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert_eq!(line.calls().len(), 1, "{:?}", line.calls());
    assert_eq!(s.metric("kakeai_line_duplicate_events_total").await, 1.0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_phone_number_never_reaches_the_model_or_the_database_raw() {
    let line = FakeLine::ok().await;
    let llm = llm(LINE, no_judgment()).await;
    let mut s = Serve::start(
        Env::new(),
        &line.url,
        &llm.server.url,
        &fast_config(60.0),
        &[],
    );
    let phones = ["090-1234-5678", "08087654321", "03-9876-5432"];
    for (i, p) in phones.iter().enumerate() {
        let t = format!("わたしの番号は{p}だから電話してね");
        assert_eq!(
            s.send(&body(&[text(
                &event_id(),
                ("user", "U3ccccccccccccccccccccccccccccccc"),
                &format!("m40{i}"),
                &t
            )]))
            .await,
            200
        );
    }
    line.wait(30, |c| c.len() == phones.len()).await;
    assert!(s.terminate().success());
    let sent: Vec<String> = llm
        .server
        .recorded()
        .iter()
        .map(|r| r.body.clone())
        .collect();
    assert!(!sent.is_empty());
    let mut stored = Vec::new();
    for ext in ["", "-wal", "-shm"] {
        let p = format!("{}{ext}", s.db().display());
        stored.extend(std::fs::read(p).unwrap_or_default());
    }
    let stored = String::from_utf8_lossy(&stored);
    for p in phones {
        let digits: String = p.chars().filter(char::is_ascii_digit).collect();
        for b in &sent {
            assert!(
                !b.contains(p) && !b.contains(&digits),
                "the model saw {p}: {b}"
            );
        }
        assert!(
            !stored.contains(p) && !stored.contains(&digits),
            "the store holds {p}"
        );
    }
    let masked = query(
        &s.db(),
        "SELECT text_masked, pii_kinds, original_content_hash FROM line_messages WHERE role = 'user'",
        |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
            ))
        },
    );
    assert_eq!(masked.len(), 3);
    for (t, kinds, hash) in masked {
        assert!(
            t.contains("わたしの番号は") && kinds.contains("電話番号"),
            "{t} {kinds}"
        );
        assert!(!hash.is_empty());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_banter_message_is_answered_from_the_pattern_db_and_resolved_by_the_next_message() {
    use kakeai::patterns::{self as pat, Character, NewPattern, ResponseType};
    let line = FakeLine::ok().await;
    let llm = llm(LINE, no_judgment()).await;
    let env = Env::new();
    let pattern_id = {
        let st = kakeai::store::Store::open(&env.data_db()).unwrap();
        let mut p = NewPattern {
            character: Some(Character::Yana),
            user_message_type: "からかい".into(),
            user_message_example: "やなってほんとバカだなぁ笑".into(),
            bot_response: "はぁ？バカって言ったほうがバカなんだからね！".into(),
            bot_response_type: Some(ResponseType::Uke),
            counts: Default::default(),
            is_counterfactual: false,
        };
        p.counts.used_count = 10;
        p.counts.success_count = 9;
        p.counts.failure_count = 1;
        pat::db::add(st.db(), &p).unwrap().pattern_id
    };
    let s = Serve::start(env, &line.url, &llm.server.url, &fast_config(60.0), &[]);
    let user = ("user", "U4ddddddddddddddddddddddddddddddd");
    let mut n = 0;
    let mut say = async |t: &str| {
        n += 1;
        assert_eq!(
            s.send(&body(&[text(&event_id(), user, &format!("m50{n}"), t)]))
                .await,
            200
        );
        line.wait(20, |c| c.len() == n).await
    };
    for m in ["こんにちは", "今日は晴れてるね", "散歩いこうよ"] {
        say(m).await;
    }
    let calls = say("やなってほんとバカだなぁ笑").await;
    assert_eq!(
        calls[3].text(),
        "はぁ？バカって言ったほうがバカなんだからね！"
    );
    // Her line is stored once LINE has it.
    let db = s.db();
    until(10, || {
        let n = query(
            &db,
            "SELECT COUNT(*) FROM line_messages WHERE role = 'bot'",
            |r| r.get::<_, i64>(0),
        );
        (n[0] == 4).then_some(())
    })
    .await
    .expect("four replies stored");
    let row = query(
        &s.db(),
        "SELECT source, pattern_id, usage_id FROM line_messages WHERE role = 'bot' ORDER BY id DESC LIMIT 1",
        |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, Option<i64>>(1)?,
                r.get::<_, Option<i64>>(2)?,
            ))
        },
    );
    assert_eq!(row[0].0, "pattern");
    assert_eq!(row[0].1, Some(pattern_id));
    let usage = row[0].2.expect("the use is logged");
    // The user's next message resolves the use: a success.
    say("ごめんごめん").await;
    let reaction = until(10, || {
        let r = query(
            &s.db(),
            &format!("SELECT user_reaction FROM prowrestling_usage_log WHERE log_id = {usage}"),
            |r| r.get::<_, Option<String>>(0),
        );
        r.into_iter().next().flatten()
    })
    .await;
    assert!(reaction.is_some(), "the use stayed open");
    let counts = query(
        &s.db(),
        &format!(
            "SELECT used_count, success_count FROM prowrestling_patterns WHERE pattern_id = {pattern_id}"
        ),
        |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?)),
    );
    assert_eq!(counts[0], (11, 10));
    assert_eq!(s.metric("kakeai_line_pattern_hits_total").await, 1.0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_line_conversation_left_unanswered_is_a_dropout_for_the_patterns_pane() {
    let line = FakeLine::ok().await;
    let llm = llm(LINE, no_judgment()).await;
    let mut s = Serve::start(
        Env::new(),
        &line.url,
        &llm.server.url,
        &fast_config(60.0),
        &[],
    );
    let user = ("user", "U6fffffffffffffffffffffffffffff01");
    assert_eq!(
        s.send(&body(&[text(
            &event_id(),
            user,
            "d1",
            "ちょっと疲れたなあ"
        )]))
        .await,
        200
    );
    line.wait(20, |c| !c.is_empty()).await;
    assert!(s.terminate().success());
    let st = kakeai::store::Store::open(&s.db()).unwrap();
    let window = 30 * 60;
    let now = kakeai::patterns::stamp::now_ms();
    // Within the window it is not a dropout yet; past it, it is — the same query the patterns
    // pane runs.
    assert!(
        kakeai::patterns::dropouts::dropouts(st.db(), window, now)
            .unwrap()
            .is_empty()
    );
    let later = kakeai::patterns::dropouts::dropouts(st.db(), window, now + 2 * 3_600_000).unwrap();
    assert_eq!(later.len(), 1, "{later:?}");
    assert_eq!(later[0].conversation_id, format!("line:{}", user.1));
    assert_eq!(later[0].bot_text, SAID);
    assert_eq!(later[0].user_text.as_deref(), Some("ちょっと疲れたなあ"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_consoles_verify_request_and_a_signed_non_webhook_body() {
    let line = FakeLine::ok().await;
    let llm = llm(LINE, no_judgment()).await;
    let s = Serve::start(
        Env::new(),
        &line.url,
        &llm.server.url,
        &fast_config(60.0),
        &[],
    );
    // LINE's "Verify" button: a signed body with no events.
    assert_eq!(
        s.send(r#"{"destination":"Ubot0000000000000000000000000000","events":[]}"#)
            .await,
        200
    );
    // Signed but not webhook JSON: refused, counted, nothing stored.
    for b in ["not json", "{}", r#"{"events": "x"}"#] {
        assert_eq!(s.send(b).await, 400, "{b}");
    }
    assert_eq!(s.metric("kakeai_line_bad_body_total").await, 3.0);
    assert_eq!(
        query(&s.db(), "SELECT COUNT(*) FROM line_events", |r| r
            .get::<_, i64>(0)),
        vec![0]
    );
}
