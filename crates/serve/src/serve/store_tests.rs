//! Seed 002's JudgmentCacheRepository table, and the webhook dedup, on a real SQLite store.

use super::*;
use crate::serve::judgment::JudgmentCache;

fn store() -> (tempfile::TempDir, Store) {
    let d = tempfile::tempdir().unwrap();
    let s = Store::open(&d.path().join("k.db")).unwrap();
    (d, s)
}

fn cache(ch: &str, th: Option<&str>, next: Millis, latest: &str) -> JudgmentCache {
    JudgmentCache {
        channel_id: ch.into(),
        thread_ts: th.map(str::to_string),
        should_respond: true,
        confidence: 0.75,
        reason: "誰も答えていない".into(),
        latest_message_ts: latest.into(),
        next_check_at: next,
        created_at: 1_000,
        updated_at: 1_000,
    }
}

#[test]
fn save_new_then_find_by_scope() {
    let (_d, mut s) = store();
    for th in [None, Some("t1")] {
        let c = cache("G1", th, 9_000_000, "m1");
        save_cache(&mut s, &c).unwrap();
        assert_eq!(find_cache(&s, "G1", th).unwrap(), Some(c));
    }
    assert_eq!(all_caches(&s).unwrap().len(), 2);
}

#[test]
fn save_same_scope_updates_the_one_row() {
    let (_d, mut s) = store();
    for th in [None, Some("t1")] {
        save_cache(&mut s, &cache("G1", th, 9_000_000, "m1")).unwrap();
        let mut newer = cache("G1", th, 12_000_000, "m2");
        newer.should_respond = false;
        newer.confidence = 0.95;
        newer.created_at = 5_000;
        newer.updated_at = 5_000;
        save_cache(&mut s, &newer).unwrap();
        let got = find_cache(&s, "G1", th).unwrap().unwrap();
        assert_eq!(got.latest_message_ts, "m2");
        assert_eq!((got.should_respond, got.confidence), (false, 0.95));
        assert_eq!(got.next_check_at, 12_000_000);
        assert_eq!((got.created_at, got.updated_at), (1_000, 5_000));
    }
    let n: i64 = s
        .conn()
        .query_row("SELECT COUNT(*) FROM judgment_caches", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 2, "one row per scope (UNIQUE channel_id, thread_ts)");
}

#[test]
fn find_a_missing_scope_is_none() {
    let (_d, mut s) = store();
    save_cache(&mut s, &cache("G1", None, 9_000_000, "m1")).unwrap();
    assert_eq!(find_cache(&s, "G2", None).unwrap(), None);
    assert_eq!(find_cache(&s, "G1", Some("t")).unwrap(), None);
}

#[test]
fn delete_expired_deletes_only_the_expired() {
    let (_d, mut s) = store();
    let nexts: Vec<Millis> = (0..30).map(|i| 1_000_000 + i * 60_000).collect();
    for (i, n) in nexts.iter().enumerate() {
        save_cache(&mut s, &cache(&format!("G{i}"), None, *n, "m")).unwrap();
    }
    let before = 1_000_000 + 10 * 60_000 + 1;
    let gone = delete_expired(&mut s, before).unwrap();
    assert_eq!(gone, nexts.iter().filter(|n| **n < before).count());
    let left = all_caches(&s).unwrap();
    assert!(left.iter().all(|c| c.next_check_at >= before));
    assert_eq!(left.len(), 30 - gone);
    delete_cache(&mut s, "G29", None).unwrap();
    assert_eq!(find_cache(&s, "G29", None).unwrap(), None);
}

fn text_event(id: &str, msg: &str, quoted: Option<&str>) -> NewEvent {
    NewEvent {
        webhook_event_id: id.into(),
        event_type: "message".into(),
        source_type: "group".into(),
        channel_id: "G1".into(),
        redelivery: false,
        message: Some(NewMessage {
            channel_id: "G1".into(),
            source_type: "group".into(),
            quoted: quoted.map(str::to_string),
            message_id: Some(msg.into()),
            webhook_event_id: Some(id.into()),
            role: "user",
            character: "yana".into(),
            text_masked: "やっほー".into(),
            at_ms: 1,
            state: "pending",
            ..NewMessage::default()
        }),
        malformed: None,
    }
}

#[test]
fn a_replayed_message_id_under_a_new_event_id_is_a_duplicate_and_settled() {
    let (_d, mut s) = store();
    let r = accept(&mut s, &[text_event("E1", "m1", None)]).unwrap();
    assert!(matches!(r[0], Some(Some(_))));
    for i in 0..5 {
        let again = text_event(&format!("E1-replay{i}"), "m1", None);
        assert_eq!(accept(&mut s, &[again]).unwrap(), vec![None]);
    }
    let queued: i64 = s
        .conn()
        .query_row(
            "SELECT COUNT(*) FROM line_events WHERE state = 'queued'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(queued, 1, "only the first event waits for an answer");
    let dup: i64 = s
        .conn()
        .query_row(
            "SELECT COUNT(*) FROM line_events WHERE state = 'duplicate'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(dup, 5);
}

#[test]
fn events_are_deduplicated_and_quotes_join_their_thread() {
    let (_d, mut s) = store();
    let r = accept(
        &mut s,
        &[text_event("E1", "m1", None), text_event("E1", "m1", None)],
    )
    .unwrap();
    assert!(matches!(r[0], Some(Some(_))));
    assert_eq!(r[1], None);
    assert_eq!(
        accept(&mut s, &[text_event("E1", "m1", None)]).unwrap(),
        vec![None]
    );
    // m2 quotes m1 → thread m1; m3 quotes m2 → still thread m1.
    let r = accept(
        &mut s,
        &[
            text_event("E2", "m2", Some("m1")),
            text_event("E3", "m3", Some("m2")),
        ],
    )
    .unwrap();
    let ids: Vec<i64> = r.iter().map(|x| x.unwrap().unwrap()).collect();
    for id in ids {
        let l = user_line_by_id(&s, id).unwrap().unwrap();
        assert_eq!(l.thread_ts.as_deref(), Some("m1"));
    }
    let p = pending_scopes(&s, 10, 0, 1_000).unwrap();
    assert_eq!(p.len(), 2, "{p:?}");
    assert_eq!(
        (p[0].thread_ts.as_deref(), p[0].latest.message_id.as_str()),
        (None, "m1")
    );
    assert_eq!(
        (p[1].thread_ts.as_deref(), p[1].latest.message_id.as_str()),
        (Some("m1"), "m3")
    );
}
