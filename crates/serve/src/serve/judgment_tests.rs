//! Seed 002's tables: the JudgmentCache entity, the confidence parsing, the skip thresholds and
//! the skip decision — each row a test, most over many generated variants.

use super::*;

fn cfg() -> SkipConfig {
    crate::serve::config::ServeConfig::defaults()
        .response
        .judgment_skip
}

fn cache(next: Millis, latest: &str, thread: Option<&str>) -> JudgmentCache {
    JudgmentCache {
        channel_id: "C0123".into(),
        thread_ts: thread.map(str::to_string),
        should_respond: false,
        confidence: 0.85,
        reason: "雑談が盛り上がっている".into(),
        latest_message_ts: latest.into(),
        next_check_at: next,
        created_at: 1_000,
        updated_at: 1_000,
    }
}

#[test]
fn created_with_every_field() {
    let c = cache(5_000, "m1", Some("t9"));
    assert_eq!(c.channel_id, "C0123");
    assert_eq!(c.thread_ts.as_deref(), Some("t9"));
    assert!(!c.should_respond);
    assert_eq!(c.confidence, 0.85);
    assert_eq!(c.reason, "雑談が盛り上がっている");
    assert_eq!(c.latest_message_ts, "m1");
    assert_eq!(
        (c.next_check_at, c.created_at, c.updated_at),
        (5_000, 1_000, 1_000)
    );
}

#[test]
fn scope_key_with_and_without_thread() {
    for (ch, th) in [("C1", "123.456"), ("Rroom", "m-9"), ("Ugroupless", "x")] {
        let mut c = cache(0, "m", Some(th));
        c.channel_id = ch.into();
        assert_eq!(c.scope_key(), format!("{ch}:{th}"));
        c.thread_ts = None;
        assert_eq!(c.scope_key(), format!("{ch}:top"));
    }
}

#[test]
fn is_valid_only_before_next_check_and_with_the_same_latest_message() {
    for next in [1_000i64, 60_000, 43_200_000] {
        let c = cache(next, "m1", None);
        for now in [next - 1_000, next - 1, next, next + 1, next + 99_999] {
            // Before next_check_at with the same message: valid.
            assert_eq!(c.is_valid(now, "m1"), now < next, "now {now} next {next}");
            // A newer message: never valid.
            assert!(!c.is_valid(now, "m2"));
        }
    }
}

#[test]
fn confidence_is_read_defaulted_clamped_and_unreadable_is_zero() {
    let r = parse_response(
        r#"{"should_respond": true, "reason": "誰も返事してない", "confidence": 0.85}"#,
    );
    assert_eq!(
        r,
        JudgmentResult {
            should_respond: true,
            reason: "誰も返事してない".into(),
            confidence: 0.85
        }
    );
    // Anywhere in the reply.
    let r = parse_response(
        "判断です: {\"should_respond\": false, \"reason\": \"独り言\", \"confidence\": 0.4} 以上",
    );
    assert_eq!((r.should_respond, r.confidence), (false, 0.4));
    // Missing confidence → 1.0.
    assert_eq!(
        parse_response(r#"{"should_respond": false, "reason": "x"}"#).confidence,
        1.0
    );
    // Out of range → clamped.
    for (v, want) in [("1.5", 1.0), ("7", 1.0), ("-0.2", 0.0), ("0.3", 0.3)] {
        let r = parse_response(&format!(
            r#"{{"should_respond": true, "reason": "r", "confidence": {v}}}"#
        ));
        assert_eq!(r.confidence, want, "{v}");
    }
    // Unreadable → should_respond false, confidence 0.0.
    for bad in [
        "",
        "はい、応答します",
        "{should_respond: true}",
        "[1,2]",
        r#"{"should_respond": true, "confidence": "高い"}"#,
    ] {
        let r = parse_response(bad);
        assert!(!r.should_respond, "{bad}");
        assert_eq!(r.confidence, 0.0, "{bad}");
        assert!(
            r.reason.starts_with("Failed to parse LLM response"),
            "{bad}: {}",
            r.reason
        );
    }
}

#[test]
fn thresholds_give_twelve_hours_one_hour_or_ten_minutes() {
    let c = cfg();
    assert!(c.enabled);
    for i in 0..=100 {
        let conf = f64::from(i) / 100.0;
        let want = if conf >= 0.9 {
            43_200
        } else if conf >= 0.7 {
            3_600
        } else {
            600
        };
        assert_eq!(c.skip_seconds(conf), want, "{conf}");
    }
    // The seed's three rows.
    assert_eq!(c.skip_seconds(0.9), 43_200);
    assert_eq!(c.skip_seconds(0.8), 3_600);
    assert_eq!(c.skip_seconds(0.5), 600);
    // Thresholds in any order give the same answer.
    let mut rev = c.clone();
    rev.thresholds.reverse();
    for i in 0..=20 {
        let conf = f64::from(i) / 20.0;
        assert_eq!(rev.skip_seconds(conf), c.skip_seconds(conf));
    }
}

#[test]
fn a_fresh_judgment_caches_next_check_from_its_confidence() {
    let c = cfg();
    for (conf, secs) in [(0.95, 43_200), (0.8, 3_600), (0.5, 600)] {
        let r = JudgmentResult {
            should_respond: false,
            reason: "r".into(),
            confidence: conf,
        };
        let row = JudgmentCache::from_result("G1", None, "m7", &r, &c, 10_000);
        assert_eq!(row.next_check_at, 10_000 + secs * 1000);
        assert_eq!(row.latest_message_ts, "m7");
        assert_eq!(row.scope_key(), "G1:top");
    }
}

#[test]
fn skip_decision_follows_the_seed_table() {
    let c = cfg();
    let valid = cache(100_000, "m1", None);
    // No cache: judge.
    assert!(!should_skip(&c, None, 50_000, "m1"));
    // Valid cache, same message: skip.
    assert!(should_skip(&c, Some(&valid), 50_000, "m1"));
    // Expired: judge again.
    assert!(!should_skip(&c, Some(&valid), 100_000, "m1"));
    // A newer message: judge again.
    assert!(!should_skip(&c, Some(&valid), 50_000, "m2"));
    // Disabled: always judge.
    let off = SkipConfig {
        enabled: false,
        ..c
    };
    assert!(!should_skip(&off, Some(&valid), 50_000, "m1"));
}

#[test]
fn the_prompt_names_her_and_the_time() {
    let p = system_prompt("やな", 0);
    assert!(p.contains("やなとして応答すべきか"), "{p}");
    assert!(p.contains("現在時刻: 1970-01-01T00:00:00.000Z"), "{p}");
    assert!(
        p.contains(r#"{"should_respond": true/false, "reason": "理由", "confidence": 0.0-1.0}"#)
    );
}
