//! `kakeai serve --line` in groups and rooms: seed 002 over HTTP — the checker, the skip cache
//! counted in model calls, the enabled switch, threads by quotedMessageId, late answers by push.

mod cli_env;
mod line_fake;
#[path = "llm_fake/mod.rs"]
mod llm_fake;
mod serve_common;

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use cli_env::Env;
use line_fake::FakeLine;
use serve_common::*;

const LINE: &[&str] = &["うんうん、", "わかる", "よ！"];

fn judgment(json: &str) -> Arc<Mutex<String>> {
    Arc::new(Mutex::new(json.to_string()))
}

const GROUP: (&str, &str) = ("group", "Ca56f94637cc4347f90a25382909b24b9");

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_group_message_is_judged_once_skipped_in_the_window_and_rejudged_after_a_newer_message() {
    let line = FakeLine::ok().await;
    let llm = llm(
        LINE,
        judgment(
            r#"{"should_respond": false, "reason": "ふたりで盛り上がってる", "confidence": 0.95}"#,
        ),
    )
    .await;
    let s = Serve::start(
        Env::new(),
        &line.url,
        &llm.server.url,
        &fast_config(0.2),
        &[],
    );
    assert_eq!(
        s.send(&body(&[text(&event_id(), GROUP, "g1", "明日どこ行く？")]))
            .await,
        200
    );
    let once = until(10, || {
        (llm.judgments.load(Ordering::SeqCst) >= 1).then_some(())
    })
    .await;
    assert!(once.is_some(), "never judged");
    // Many check intervals later, with no newer message: still one model call.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(llm.judgments.load(Ordering::SeqCst), 1);
    assert!(s.metric("kakeai_line_judgments_saved_total").await >= 3.0);
    let cache = query(
        &s.db(),
        "SELECT channel_id, thread_ts, should_respond, confidence, latest_message_ts, next_check_at, updated_at FROM judgment_caches",
        |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, bool>(2)?,
                r.get::<_, f64>(3)?,
                r.get::<_, String>(4)?,
                r.get::<_, String>(5)?,
                r.get::<_, String>(6)?,
            ))
        },
    );
    assert_eq!(cache.len(), 1);
    let c = &cache[0];
    assert_eq!(
        (c.0.as_str(), c.1.as_str(), c.2, c.3, c.4.as_str()),
        (GROUP.1, "", false, 0.95, "g1")
    );
    // 0.95 ≥ 0.9: twelve hours.
    let next = kakeai::patterns::stamp::from_db(&c.5).unwrap();
    let upd = kakeai::patterns::stamp::from_db(&c.6).unwrap();
    assert_eq!(next - upd, 43_200_000);
    // Nothing was said, nothing was sent.
    assert!(line.calls().is_empty());
    // A newer message invalidates the cache: judged again, once.
    assert_eq!(
        s.send(&body(&[text(&event_id(), GROUP, "g2", "海とか？")]))
            .await,
        200
    );
    let twice = until(10, || {
        (llm.judgments.load(Ordering::SeqCst) >= 2).then_some(())
    })
    .await;
    assert!(twice.is_some());
    tokio::time::sleep(Duration::from_millis(1000)).await;
    assert_eq!(llm.judgments.load(Ordering::SeqCst), 2);
    let latest = query(
        &s.db(),
        "SELECT latest_message_ts FROM judgment_caches",
        |r| r.get::<_, String>(0),
    );
    assert_eq!(latest, vec!["g2".to_string()]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_skip_switched_off_every_check_asks_the_model() {
    let line = FakeLine::ok().await;
    let llm = llm(
        LINE,
        judgment(r#"{"should_respond": false, "reason": "独り言", "confidence": 1.0}"#),
    )
    .await;
    let cfg = format!(
        "{}\n[response.judgment_skip]\nenabled = false\n",
        fast_config(0.2)
    );
    let s = Serve::start(Env::new(), &line.url, &llm.server.url, &cfg, &[]);
    assert_eq!(
        s.send(&body(&[text(&event_id(), GROUP, "h1", "ねむい")]))
            .await,
        200
    );
    let many = until(10, || {
        (llm.judgments.load(Ordering::SeqCst) >= 3).then_some(())
    })
    .await;
    assert!(
        many.is_some(),
        "judged {} times",
        llm.judgments.load(Ordering::SeqCst)
    );
    assert_eq!(
        query(&s.db(), "SELECT COUNT(*) FROM judgment_caches", |r| r
            .get::<_, i64>(0)),
        vec![0]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn when_she_should_speak_the_late_answer_goes_by_push_and_is_judged() {
    let line = FakeLine::ok().await;
    let llm = llm(
        LINE,
        judgment(
            r#"判断: {"should_respond": true, "reason": "誰も返事してない", "confidence": 0.8}"#,
        ),
    )
    .await;
    let s = Serve::start(
        Env::new(),
        &line.url,
        &llm.server.url,
        &fast_config(0.2),
        &[],
    );
    assert_eq!(
        s.send(&body(&[text(
            &event_id(),
            ("room", "Rb9e9b1fd7d03cf7ebbd1e88c42a7e6a1"),
            "r1",
            "誰かいる？"
        )]))
        .await,
        200
    );
    let calls = line.wait(20, |c| !c.is_empty()).await;
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].path, "/v2/bot/message/push");
    assert_eq!(calls[0].body["to"], "Rb9e9b1fd7d03cf7ebbd1e88c42a7e6a1");
    assert!(
        calls[0].retry_key.as_deref().is_some_and(uuid_like),
        "{:?}",
        calls[0].retry_key
    );
    assert_eq!(calls[0].text(), "うんうん、わかるよ！");
    let bot = until(10, || {
        let r = query(
            &s.db(),
            "SELECT delivery, verdict FROM line_messages WHERE role = 'bot'",
            |r| Ok((r.get::<_, String>(0)?, r.get::<_, Option<String>>(1)?)),
        );
        // Settled: the push has returned (the row is written `sending-push` before it).
        r.into_iter()
            .next()
            .filter(|(d, _)| !d.starts_with("sending"))
    })
    .await
    .unwrap();
    assert_eq!(bot.0, "push");
    assert!(bot.1.is_some_and(|v| v.contains("\"status\"")));
    // Answered: no more judgments.
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert_eq!(llm.judgments.load(Ordering::SeqCst), 1);
    let conf = query(
        &s.db(),
        "SELECT confidence, next_check_at, updated_at FROM judgment_caches",
        |r| {
            Ok((
                r.get::<_, f64>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
            ))
        },
    );
    assert_eq!(conf.len(), 1);
    assert_eq!(conf[0].0, 0.8);
    // 0.7 ≤ 0.8 < 0.9: one hour.
    let gap = kakeai::patterns::stamp::from_db(&conf[0].1).unwrap()
        - kakeai::patterns::stamp::from_db(&conf[0].2).unwrap();
    assert_eq!(gap, 3_600_000);
}

fn uuid_like(k: &str) -> bool {
    k.len() == 36 && k.chars().filter(|c| *c == '-').count() == 4
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mentions_are_answered_at_once_and_quotes_open_their_own_thread() {
    let line = FakeLine::ok().await;
    let llm = llm(
        LINE,
        judgment(r#"{"should_respond": false, "reason": "様子見", "confidence": 0.5}"#),
    )
    .await;
    let s = Serve::start(
        Env::new(),
        &line.url,
        &llm.server.url,
        &fast_config(0.2),
        &[],
    );
    // Her name in the text.
    assert_eq!(
        s.send(&body(&[text(&event_id(), GROUP, "q1", "やなはどう思う？")]))
            .await,
        200
    );
    // A LINE mention of the bot.
    let mut tagged = text(&event_id(), GROUP, "q2", "@kakeai おはよ");
    tagged["message"]["mention"] = serde_json::json!({"mentionees": [{"index": 0, "length": 7, "type": "user", "userId": "Ubot", "isSelf": true}]});
    assert_eq!(s.send(&body(&[tagged])).await, 200);
    let calls = line.wait(20, |c| c.len() >= 2).await;
    assert_eq!(calls.len(), 2);
    assert!(calls.iter().all(|c| c.path == "/v2/bot/message/reply"));
    // Not mentioned, quoting q1: its own scope (thread q1); a top-level one: the top scope.
    let mut quoting = text(&event_id(), GROUP, "q3", "それな");
    quoting["message"]["quotedMessageId"] = serde_json::json!("q1");
    assert_eq!(
        s.send(&body(&[
            quoting,
            text(&event_id(), GROUP, "q4", "お腹すいた")
        ]))
        .await,
        200
    );
    let scopes = until(10, || {
        let r = query(
            &s.db(),
            "SELECT thread_ts, latest_message_ts FROM judgment_caches ORDER BY thread_ts",
            |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)),
        );
        (r.len() == 2).then_some(r)
    })
    .await
    .expect("two scopes judged");
    assert_eq!(
        scopes,
        vec![
            ("".to_string(), "q4".to_string()),
            ("q1".to_string(), "q3".to_string())
        ]
    );
    // 0.5: ten minutes.
    let gap = query(
        &s.db(),
        "SELECT next_check_at, updated_at FROM judgment_caches",
        |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)),
    );
    for (n, u) in gap {
        let d = kakeai::patterns::stamp::from_db(&n).unwrap()
            - kakeai::patterns::stamp::from_db(&u).unwrap();
        assert_eq!(d, 600_000);
    }
    assert_eq!(line.calls().len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_cache_is_judged_again_and_updated() {
    let line = FakeLine::ok().await;
    let llm = llm(
        LINE,
        judgment(r#"{"should_respond": false, "reason": "様子見", "confidence": 0.95}"#),
    )
    .await;
    // Every skip one second long.
    let cfg = format!(
        "{}\n[response.judgment_skip]\ndefault_skip_seconds = 1\nthresholds = [{{ min_confidence = 0.9, skip_seconds = 1 }}]\n",
        fast_config(0.2)
    );
    let s = Serve::start(Env::new(), &line.url, &llm.server.url, &cfg, &[]);
    assert_eq!(
        s.send(&body(&[text(&event_id(), GROUP, "e1", "雨やまないね")]))
            .await,
        200
    );
    assert!(
        until(10, || (llm.judgments.load(Ordering::SeqCst) >= 1)
            .then_some(()))
        .await
        .is_some()
    );
    // The model call is counted before its cache row is written: wait for the row.
    let first = until(10, || {
        let rows = query(
            &s.db(),
            "SELECT updated_at, created_at FROM judgment_caches",
            |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)),
        );
        (!rows.is_empty()).then_some(rows)
    })
    .await
    .expect("the first judgment's cache row");
    // Same message, past next_check_at: judged again, the one row updated.
    assert!(
        until(10, || (llm.judgments.load(Ordering::SeqCst) >= 2)
            .then_some(()))
        .await
        .is_some()
    );
    // Wait for the second judgment's write (the count moves before it), then compare.
    let later = until(10, || {
        let rows = query(
            &s.db(),
            "SELECT updated_at, created_at, latest_message_ts FROM judgment_caches",
            |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                ))
            },
        );
        (rows.len() != 1 || rows[0].0 > first[0].0).then_some(rows)
    })
    .await
    .expect("the second judgment's cache write");
    assert_eq!(later.len(), 1);
    assert!(later[0].0 > first[0].0, "{later:?} {first:?}");
    assert_eq!(later[0].1, first[0].1, "created_at is kept");
    assert_eq!(later[0].2, "e1");
    assert!(line.calls().is_empty());
}

/// Issue 27: a group prompt tells speakers apart — each user line carries its speaker's mark,
/// the same person always the same mark, different people different marks; the marks never
/// reach what she is judged against, and `serve forget` removes one person's group lines.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn group_prompts_mark_each_speaker_and_forget_takes_one_persons_lines() {
    let line = FakeLine::ok().await;
    let llm = llm(
        LINE,
        judgment(r#"{"should_respond": false, "reason": "様子見", "confidence": 0.5}"#),
    )
    .await;
    let s = Serve::start(
        Env::new(),
        &line.url,
        &llm.server.url,
        &fast_config(0.2),
        &[],
    );
    // Three people, in a generated order; each message names her so she answers at once.
    let people: Vec<String> = (0..3).map(|i| format!("U7a7a{i:028}")).collect();
    let order = [0usize, 1, 0, 2, 1, 2, 0];
    for (n, &p) in order.iter().enumerate() {
        let mut e = text(
            &event_id(),
            GROUP,
            &format!("g{n}"),
            &format!("やな、{n}番目の話"),
        );
        e["source"]["userId"] = serde_json::json!(people[p]);
        assert_eq!(s.send(&body(&[e])).await, 200);
        line.wait(20, |c| c.len() == n + 1).await;
    }
    // The last reply's prompt: every user line marked, by person.
    let prompts: Vec<serde_json::Value> = llm
        .server
        .recorded()
        .into_iter()
        .filter(|r| r.path == "/v1/chat/completions" && r.json()["stream"] == true)
        .map(|r| r.json())
        .collect();
    let last = prompts.last().expect("her replies were generated");
    let users: Vec<String> = last["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap_or("").to_string())
        .collect();
    let mut mark_of: std::collections::HashMap<usize, String> = Default::default();
    for u in &users {
        let n: usize = u
            .split("やな、")
            .nth(1)
            .and_then(|t| t.split('番').next())
            .and_then(|d| d.parse().ok())
            .unwrap_or_else(|| panic!("not one of the sent lines: {u}"));
        let mark = u.split('】').next().unwrap_or("").to_string() + "】";
        assert!(mark.starts_with('【'), "unmarked: {u}");
        let prev = mark_of.insert(order[n], mark.clone());
        assert!(
            prev.is_none_or(|p| p == mark),
            "one person, two marks: {users:?}"
        );
    }
    let distinct: std::collections::HashSet<&String> = mark_of.values().collect();
    assert_eq!(
        distinct.len(),
        mark_of.len(),
        "two people, one mark: {users:?}"
    );
    assert_eq!(mark_of.len(), 3, "{users:?}");
    // Stored lines stay as said (no marks), with their speaker.
    let stored = query(
        &s.db(),
        "SELECT text_masked, speaker FROM line_messages WHERE role = 'user'",
        |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)),
    );
    assert!(
        stored
            .iter()
            .all(|(t, sp)| !t.contains('【') && people.contains(sp))
    );
    // Forget person 0 (while serving: WAL): their 3 lines and her replies to them go, the
    // others' stay.
    let db = s.db();
    let o = s
        .env
        .run(&["serve", "forget", &people[0], "--db", db.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let left = query(
        &db,
        "SELECT role, speaker, reply_to FROM line_messages ORDER BY id",
        |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, Option<i64>>(2)?,
            ))
        },
    );
    let theirs = order.iter().filter(|&&p| p == 0).count();
    assert_eq!(left.len(), 2 * (order.len() - theirs), "{left:?}");
    assert!(left.iter().all(|(_, sp, _)| sp != &people[0]));
}
