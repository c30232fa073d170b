//! The pattern store on both engines (issue 24 §1): every case runs on an SQLite file and on a
//! PostgreSQL database of a throwaway cluster (tests/common/both.rs), through the same
//! `kakeai::patterns` functions — patterns and their UNIQUE rule, the usage log and its
//! outcome recorded once, 👍/👎 counted once, best match and cold start, import/export with the
//! usage history, ingest and live exchanges, dropouts and counterfactual drafts, and the
//! pattern functions inside a caller's transaction and from several connections at once.

mod common;

use common::both::Case;
use kakeai::p;
use kakeai::patterns::counterfactual::{self as cf, Accept, Draft, Drafts};
use kakeai::patterns::dropouts::{dropout, dropouts};
use kakeai::patterns::ingest::{IngestOptions, LogMessage, Role, ingest, log_live, resolve_open};
use kakeai::patterns::{
    self as pat, BestQuery, Character, NewPattern, NewUse, Observation, PatternError, Resolution,
    ResponseType, cold, exchange,
};
use kakeai::store::Store;

const CASES: &[(&str, Case)] = &[
    (
        "patterns_are_created_and_deduplicated",
        patterns_are_created_and_deduplicated,
    ),
    (
        "a_use_is_logged_and_its_outcome_recorded_once",
        a_use_is_logged_and_its_outcome_recorded_once,
    ),
    ("feedback_is_counted_once", feedback_is_counted_once),
    (
        "best_match_follows_the_seed_order",
        best_match_follows_the_seed_order,
    ),
    (
        "a_new_pattern_is_tried_then_dropped",
        a_new_pattern_is_tried_then_dropped,
    ),
    (
        "import_and_export_keep_the_usage_history",
        import_and_export_keep_the_usage_history,
    ),
    (
        "an_ingested_log_resolves_outcomes_and_dropouts",
        an_ingested_log_resolves_outcomes_and_dropouts,
    ),
    (
        "live_exchanges_are_logged_and_resolved",
        live_exchanges_are_logged_and_resolved,
    ),
    (
        "a_dropout_becomes_a_counterfactual_pattern",
        a_dropout_becomes_a_counterfactual_pattern,
    ),
    (
        "pattern_writes_nest_in_a_callers_transaction",
        pattern_writes_nest_in_a_callers_transaction,
    ),
    (
        "uses_and_votes_from_several_connections_lose_nothing",
        uses_and_votes_from_several_connections_lose_nothing,
    ),
];

on_both_engines!(CASES);

const T0: i64 = 1_769_947_200_000; // 2026-02-01T12:00:00Z
const MIN: i64 = 60_000;
const W: i64 = 30 * 60;

/// A known installation secret, so nothing touches the user's data dir.
fn key() {
    kakeai::safety::pii::keyfile::install_key(kakeai::safety::pii::DigestKey::from_bytes(&[7; 32]));
}

fn new(c: Character, kind: &str, example: &str, response: &str) -> NewPattern {
    NewPattern {
        character: Some(c),
        user_message_type: kind.into(),
        user_message_example: example.into(),
        bot_response: response.into(),
        bot_response_type: Some(ResponseType::Uke),
        ..NewPattern::default()
    }
}

fn with_counts(
    mut n: NewPattern,
    success: u32,
    failure: u32,
    like: u32,
    dislike: u32,
) -> NewPattern {
    n.counts.used_count = success + failure;
    n.counts.success_count = success;
    n.counts.failure_count = failure;
    n.counts.like_count = like;
    n.counts.dislike_count = dislike;
    n
}

fn add(store: &Store, n: &NewPattern) -> i64 {
    pat::add(store.db(), n).expect("added").pattern_id
}

fn use_at(store: &Store, pattern_id: i64, at: i64) -> i64 {
    pat::record_use(
        store.db(),
        &NewUse {
            pattern_id,
            conversation_id: Some("conv-1".into()),
            user_id: Some("user-1".into()),
            user_message: Some("やなって寝坊ばっかり".into()),
            at,
            ..NewUse::default()
        },
    )
    .expect("use recorded")
}

fn count(store: &Store, table: &str) -> i64 {
    store
        .db()
        .one(&format!("SELECT COUNT(*) FROM {table}"), p![])
        .expect("count")
}

fn patterns_are_created_and_deduplicated(store: &mut Store, _: &dyn Fn() -> Store) {
    key();
    let n = new(
        Character::Yana,
        "からかい",
        "やなって寝坊ばっかり",
        "寝坊は才能だもん！",
    );
    let p = pat::add(store.db(), &n).unwrap();
    assert_eq!(p.character, Character::Yana);
    assert_eq!((p.used_count, p.success_rate, p.like_rate), (0, 0.0, 0.0));
    assert!(!p.is_counterfactual);
    assert!(p.created_at.is_some());
    assert_eq!(pat::get(store.db(), p.pattern_id).unwrap(), p);
    match pat::add(store.db(), &n) {
        Err(PatternError::Duplicate { existing }) => assert_eq!(existing, p.pattern_id),
        other => panic!("expected a duplicate, got {other:?}"),
    }
    // Another character or another type is another pattern.
    let ayu = add(
        store,
        &new(
            Character::Ayu,
            "からかい",
            "やなって寝坊ばっかり",
            "寝坊は才能だもん！",
        ),
    );
    add(
        store,
        &with_counts(
            new(
                Character::Yana,
                "いじり",
                "やなって寝坊ばっかり",
                "寝坊は才能だもん！",
            ),
            3,
            1,
            1,
            3,
        ),
    );
    assert!(matches!(
        pat::get(store.db(), 9999),
        Err(PatternError::NoSuchPattern(9999))
    ));
    let all = pat::list(store.db(), None).unwrap();
    assert_eq!(all.len(), 3);
    let yana = pat::list(store.db(), Some(Character::Yana)).unwrap();
    assert_eq!(yana.len(), 2);
    assert!(yana.iter().all(|p| p.character == Character::Yana));
    assert_eq!(
        pat::list(store.db(), Some(Character::Ayu)).unwrap()[0].pattern_id,
        ayu
    );
    // The generated rates, as the seed's columns compute them.
    let counted = &yana[1];
    assert_eq!(counted.success_rate, 0.75);
    assert_eq!(counted.like_rate, 0.25);
    let scored = pat::list_scored(store.db(), None, pat::db::SortKey::Score).unwrap();
    assert_eq!(scored.len(), 3);
    assert_eq!(scored[0].pattern.pattern_id, counted.pattern_id);
}

fn a_use_is_logged_and_its_outcome_recorded_once(store: &mut Store, _: &dyn Fn() -> Store) {
    key();
    let id = add(
        store,
        &new(
            Character::Yana,
            "からかい",
            "やなって寝坊ばっかり",
            "寝坊は才能だもん！",
        ),
    );
    let first = use_at(store, id, T0);
    let late = use_at(store, id, T0 + MIN);
    let silent = use_at(store, id, T0 - MIN);
    let p = pat::get(store.db(), id).unwrap();
    assert_eq!(p.used_count, 3);
    // The latest use, whatever the order they were logged in.
    assert_eq!(p.last_used_at.as_deref(), Some("2026-02-01T12:01:00.000Z"));
    assert_eq!(count(store, "prowrestling_usage_log"), 3);
    let reply = |at, continued| Observation::Replied { at, continued };
    assert_eq!(
        pat::resolve_use(store.db(), first, reply(T0 + 90_000, true), W).unwrap(),
        Resolution::Success {
            reaction_time_seconds: 90,
            continued: true
        }
    );
    assert!(matches!(
        pat::resolve_use(store.db(), first, reply(T0 + MIN, false), W),
        Err(PatternError::AlreadyResolved(l)) if l == first
    ));
    assert_eq!(
        pat::resolve_use(store.db(), late, reply(T0 + MIN + 31 * MIN, false), W).unwrap(),
        Resolution::Failure
    );
    let open = Observation::Silent { as_of: T0 };
    assert_eq!(
        pat::resolve_use(store.db(), silent, open, W).unwrap(),
        Resolution::Pending
    );
    assert!(matches!(
        pat::resolve_use(store.db(), 404, open, W),
        Err(PatternError::NoSuchLog(404))
    ));
    let p = pat::get(store.db(), id).unwrap();
    assert_eq!((p.success_count, p.failure_count), (1, 1));
    assert_eq!(p.success_rate, 0.5);
    let s = pat::scored(store.db(), id).unwrap();
    assert_eq!(s.prowrestling_rate, 0.5);
    assert_eq!(s.avg_reaction_time, Some(90.0));
    // A resolved 'replied' use is marked continued once; the counters stay.
    let again = use_at(store, id, T0 + 2 * MIN);
    pat::resolve_use(store.db(), again, reply(T0 + 3 * MIN, false), W).unwrap();
    assert!(pat::mark_continued(store.db(), again).unwrap());
    assert!(!pat::mark_continued(store.db(), again).unwrap());
    assert!(!pat::mark_continued(store.db(), late).unwrap());
    let p = pat::get(store.db(), id).unwrap();
    assert_eq!((p.used_count, p.success_count, p.failure_count), (4, 2, 1));
    let reaction: Option<String> = store
        .db()
        .one(
            "SELECT user_reaction FROM prowrestling_usage_log WHERE log_id = ?1",
            p![again],
        )
        .unwrap();
    assert_eq!(reaction.as_deref(), Some("continued"));
}

fn feedback_is_counted_once(store: &mut Store, _: &dyn Fn() -> Store) {
    key();
    let id = add(
        store,
        &new(
            Character::Ayu,
            "からかい",
            "あゆって真面目すぎ",
            "それは褒め言葉ですね。",
        ),
    );
    let a = use_at(store, id, T0);
    let b = use_at(store, id, T0 + MIN);
    let ch = pat::feedback(store.db(), a, 1).unwrap();
    assert_eq!(ch.previous, None);
    let p = ch.pattern.unwrap();
    assert_eq!((p.like_count, p.dislike_count, p.like_rate), (1, 0, 1.0));
    // The same vote again changes nothing.
    let ch = pat::feedback(store.db(), a, 1).unwrap();
    assert_eq!(ch.previous, Some(1));
    assert_eq!(ch.pattern.unwrap().like_count, 1);
    pat::feedback(store.db(), b, -1).unwrap();
    // The opposite vote moves the row's one vote.
    let moved = pat::feedback(store.db(), a, -1).unwrap().pattern.unwrap();
    assert_eq!((moved.like_count, moved.dislike_count), (0, 2));
    assert_eq!(moved.like_rate, 0.0);
    let back = pat::feedback(store.db(), a, 1).unwrap().pattern.unwrap();
    assert_eq!((back.like_count, back.dislike_count), (1, 1));
    assert_eq!(back.like_rate, 0.5);
    for bad in [0, 2, -2] {
        assert!(matches!(
            pat::feedback(store.db(), a, bad),
            Err(PatternError::BadFeedback(v)) if v == bad
        ));
    }
    assert!(matches!(
        pat::feedback(store.db(), 77, 1),
        Err(PatternError::NoSuchLog(77))
    ));
    let votes: i64 = store
        .db()
        .one(
            "SELECT COUNT(*) FROM prowrestling_usage_log WHERE feedback IS NOT NULL",
            p![],
        )
        .unwrap();
    assert_eq!(votes, 2);
}

fn best_match_follows_the_seed_order(store: &mut Store, _: &dyn Fn() -> Store) {
    key();
    let y = |kind: &str, example: &str, response: &str, s, f, l, d| {
        with_counts(new(Character::Yana, kind, example, response), s, f, l, d)
    };
    // key = success·0.6 + like·0.4
    let _low = add(store, &y("からかい", "寝坊", "低い", 6, 4, 0, 0)); // 0.6: below 0.7
    let _mid = add(store, &y("からかい", "寝坊", "中くらい", 8, 2, 1, 1)); // 0.68
    let top = add(store, &y("からかい", "寝坊ばっかり", "一番", 9, 1, 1, 0)); // 0.94
    let twin = add(store, &y("いじり", "料理できない", "同点", 9, 1, 1, 0)); // 0.94
    add(
        store,
        &with_counts(
            new(Character::Ayu, "からかい", "寝坊", "あゆの"),
            10,
            0,
            1,
            0,
        ),
    );
    let best = |message: &str, kind: Option<&str>, min: f64| {
        let q = BestQuery {
            character: Character::Yana,
            message,
            min_success: min,
            message_type: kind,
        };
        pat::best_match(store.db(), &q)
            .unwrap()
            .map(|m| m.pattern.pattern_id)
    };
    // A tie on the key: the message's bigrams choose, then the lower id.
    assert_eq!(best("やなって寝坊ばっかり", None, 0.7), Some(top));
    assert_eq!(best("料理できないでしょ", None, 0.7), Some(twin));
    assert_eq!(best("", None, 0.7), Some(top.min(twin)));
    // The preferred type first; the others only when none of it qualifies.
    assert_eq!(best("寝坊ばっかり", Some("いじり"), 0.7), Some(twin));
    assert_eq!(best("", Some("自虐"), 0.7), Some(top.min(twin)));
    // The threshold.
    assert_eq!(best("", None, 0.95), None);
    assert_eq!(best("", None, 0.0), Some(top.min(twin)));
    let m = pat::best_match(store.db(), &BestQuery::new(Character::Yana, "寝坊ばっかり"))
        .unwrap()
        .unwrap();
    assert!((m.match_key - 0.94).abs() < 1e-9);
    assert!(m.relevance > 0.0);
    assert!(!m.type_matched);
    assert!(
        pat::best_match(
            store.db(),
            &BestQuery {
                min_success: 1.5,
                ..BestQuery::new(Character::Yana, "")
            }
        )
        .is_err()
    );
}

fn a_new_pattern_is_tried_then_dropped(store: &mut Store, _: &dyn Fn() -> Store) {
    key();
    let proven = add(
        store,
        &with_counts(
            new(Character::Yana, "からかい", "寝坊", "実績あり"),
            18,
            2,
            0,
            0,
        ),
    );
    let fresh = add(
        store,
        &new(
            Character::Yana,
            "からかい",
            "やなって寝坊ばっかり",
            "新しい返し",
        ),
    );
    let q = BestQuery::new(Character::Yana, "やなって寝坊ばっかり");
    let c = cold::choose(store.db(), &q).unwrap().unwrap();
    assert!(c.trial);
    assert_eq!(c.found.pattern.pattern_id, fresh);
    // Two failures and no success: the bound falls below the bar, the seed's rule stands.
    for at in [T0, T0 + MIN] {
        let log = use_at(store, fresh, at);
        let silent = Observation::Silent {
            as_of: at + 31 * MIN,
        };
        assert_eq!(
            pat::resolve_use(store.db(), log, silent, W).unwrap(),
            Resolution::Failure
        );
    }
    let c = cold::choose(store.db(), &q).unwrap().unwrap();
    assert!(!c.trial);
    assert_eq!(c.found.pattern.pattern_id, proven);
    // Nothing of あゆ's: nothing to choose.
    assert!(
        cold::choose(store.db(), &BestQuery::new(Character::Ayu, "x"))
            .unwrap()
            .is_none()
    );
}

fn import_and_export_keep_the_usage_history(store: &mut Store, _: &dyn Fn() -> Store) {
    key();
    let text = std::fs::read_to_string("assets/patterns/starter.jsonl").unwrap();
    let lines = exchange::parse_file(&text).unwrap();
    let r = exchange::import(store.db(), &lines, false).unwrap();
    assert_eq!(r.imported.len(), 13);
    assert!(r.written);
    // The same file again: every line a duplicate, nothing written.
    let again = exchange::import(store.db(), &lines, false).unwrap();
    assert_eq!(again.duplicates.len(), 13);
    assert!(again.imported.is_empty() && !again.written);
    assert_eq!(count(store, "prowrestling_patterns"), 13);
    // History: resolved uses (one continued), a reaction time, and votes.
    let id = r.imported[0];
    let reply = |at, continued| Observation::Replied { at, continued };
    let a = use_at(store, id, T0);
    pat::resolve_use(store.db(), a, reply(T0 + 10_000, true), W).unwrap();
    let b = use_at(store, id, T0 + MIN);
    pat::resolve_use(store.db(), b, reply(T0 + MIN + 15_000, false), W).unwrap();
    let c = use_at(store, id, T0 + 2 * MIN);
    pat::resolve_use(
        store.db(),
        c,
        Observation::Silent {
            as_of: T0 + 40 * MIN,
        },
        W,
    )
    .unwrap();
    pat::feedback(store.db(), a, 1).unwrap();
    pat::feedback(store.db(), c, -1).unwrap();
    let before = pat::list_scored(store.db(), None, pat::db::SortKey::Score).unwrap();
    let exported = exchange::export(store.db()).unwrap();
    let with_history = exported.iter().find(|r| r.usage.is_some()).unwrap();
    let u = with_history.usage.unwrap();
    assert_eq!((u.resolved, u.continued), (3, 1));
    assert_eq!(u.avg_reaction_time, Some(12.5));
    // Into an empty store of the same engine: the same scores and ranks.
    let file: String = exported
        .iter()
        .map(|r| serde_json::to_string(r).unwrap() + "\n")
        .collect();
    let other_lines = exchange::parse_file(&file).unwrap();
    store
        .transact(|db| {
            db.batch("DELETE FROM prowrestling_usage_log; DELETE FROM prowrestling_patterns;")?;
            Ok(())
        })
        .unwrap();
    exchange::import(store.db(), &other_lines, false).unwrap();
    let after = pat::list_scored(store.db(), None, pat::db::SortKey::Score).unwrap();
    assert_eq!(before.len(), after.len());
    for (x, y) in before.iter().zip(&after) {
        assert_eq!(x.pattern.bot_response, y.pattern.bot_response);
        assert_eq!(x.rank, y.rank);
        assert!(
            (x.score - y.score).abs() < 1e-9,
            "{} vs {}",
            x.score,
            y.score
        );
        assert!((x.prowrestling_rate - y.prowrestling_rate).abs() < 1e-12);
        match (x.avg_reaction_time, y.avg_reaction_time) {
            (Some(p), Some(q)) => assert!((p - q).abs() < 1e-9, "{p} vs {q}"),
            (p, q) => assert_eq!(p, q),
        }
    }
}

/// One log line; `secs` after T0.
fn line(conv: &str, role: &str, text: &str, secs: i64, pattern: Option<i64>) -> String {
    let mut v = serde_json::json!({
        "conversation_id": conv, "user_id": format!("user-{conv}"), "role": role,
        "text": text, "timestamp": T0 / 1000 + secs,
    });
    if let Some(p) = pattern {
        v["pattern_id"] = p.into();
    }
    v.to_string()
}

fn opts(as_of_secs: i64) -> IngestOptions {
    IngestOptions {
        window_secs: W,
        as_of: T0 + as_of_secs * 1000,
        source: "test.jsonl".into(),
    }
}

fn an_ingested_log_resolves_outcomes_and_dropouts(store: &mut Store, _: &dyn Fn() -> Store) {
    key();
    let id = add(
        store,
        &new(
            Character::Yana,
            "からかい",
            "やなって寝坊ばっかり",
            "寝坊は才能だもん！",
        ),
    );
    let log = [
        // a: answered at once and the banter went on → success, continued.
        line("a", "user", "やなって寝坊ばっかり", 0, None),
        line("a", "bot", "寝坊は才能だもん！", 5, Some(id)),
        line("a", "user", "才能って笑", 20, None),
        line("a", "user", "ずるい", 40, None),
        // b: silence past the window → failure, and a dropout.
        line("b", "user", "やなって寝坊ばっかり", 0, None),
        line("b", "bot", "寝坊は才能だもん！", 10, Some(id)),
        line("b", "user", "おーい", 10 + 2 * W, None),
    ]
    .join("\n");
    let msgs = kakeai::patterns::ingest::parse_log(&log).unwrap();
    let r = ingest(store.db(), &msgs, &opts(3 * W)).unwrap();
    assert_eq!((r.messages, r.duplicates, r.conversations), (7, 0, 2));
    assert_eq!((r.uses, r.successes, r.failures, r.pending), (2, 1, 1, 0));
    assert_eq!(r.dropouts, 1);
    let p = pat::get(store.db(), id).unwrap();
    assert_eq!((p.used_count, p.success_count, p.failure_count), (2, 1, 1));
    let s = pat::scored(store.db(), id).unwrap();
    assert_eq!(s.prowrestling_rate, 0.5);
    assert_eq!(s.avg_reaction_time, Some(15.0));
    // The same file again adds nothing.
    let again = ingest(store.db(), &msgs, &opts(3 * W)).unwrap();
    assert_eq!((again.messages, again.duplicates, again.uses), (0, 7, 0));
    assert_eq!(pat::get(store.db(), id).unwrap().used_count, 2);
    assert_eq!(count(store, "conversation_messages"), 7);
    let conv: (String, String) = store
        .db()
        .query_row(
            "SELECT first_at, last_at FROM conversations ORDER BY first_at, conversation_id",
            p![],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(conv.0, "2026-02-01T12:00:00.000Z");
    assert_eq!(conv.1, "2026-02-01T12:00:40.000Z");
    let d = dropouts(store.db(), W, T0 + 3 * W * 1000).unwrap();
    assert_eq!(d.len(), 1);
    assert_eq!(d[0].bot_text, "寝坊は才能だもん！");
    assert_eq!(d[0].user_text.as_deref(), Some("やなって寝坊ばっかり"));
    assert_eq!(d[0].returned_after_seconds, Some(2 * W));
    assert_eq!(d[0].pattern_id, Some(id));
    assert_eq!(d[0].character, Some(Character::Yana));
    // A line that is no dropout is named as such.
    assert!(matches!(
        dropout(store.db(), d[0].dropout_id - 1, W, T0 + 3 * W * 1000),
        Err(PatternError::NotADropout(_))
    ));
    assert_eq!(
        dropout(store.db(), d[0].dropout_id, W, T0 + 3 * W * 1000)
            .unwrap()
            .dropout_id,
        d[0].dropout_id
    );
    // A conversation of another user is refused before anything is written.
    let stolen = kakeai::patterns::ingest::parse_log(
        &serde_json::json!({"conversation_id": "a", "user_id": "someone-else", "role": "user",
            "text": "やあ", "timestamp": T0 / 1000 + 99})
        .to_string(),
    )
    .unwrap();
    assert!(ingest(store.db(), &stolen, &opts(3 * W)).is_err());
    assert_eq!(count(store, "conversation_messages"), 7);
}

fn live(conv: &str, role: Role, text: &str, at: i64, pattern_id: Option<i64>) -> LogMessage {
    LogMessage {
        line: 1,
        conversation_id: conv.into(),
        user_id: "chat-user".into(),
        role,
        text: text.into(),
        at,
        pattern_id,
        character: Some(Character::Ayu),
    }
}

fn live_exchanges_are_logged_and_resolved(store: &mut Store, _: &dyn Fn() -> Store) {
    key();
    let id = add(
        store,
        &new(
            Character::Ayu,
            "からかい",
            "あゆって真面目すぎ",
            "それは褒め言葉ですね。",
        ),
    );
    let o = |at: i64| IngestOptions {
        window_secs: W,
        as_of: at,
        source: "chat".into(),
    };
    let (r, log) = log_live(
        store.db(),
        live("chat-1", Role::User, "あゆって真面目すぎ", T0, None),
        &o(T0),
    )
    .unwrap();
    assert_eq!((r.messages, log), (1, None));
    let (r, log) = log_live(
        store.db(),
        live(
            "chat-1",
            Role::Bot,
            "それは褒め言葉ですね。",
            T0 + 2_000,
            Some(id),
        ),
        &o(T0 + 2_000),
    )
    .unwrap();
    let log = log.expect("a pattern line has a usage-log id");
    assert_eq!((r.uses, r.pending), (1, 1));
    // 👍 on the live line goes to the pattern.
    let ch = pat::feedback(store.db(), log, 1).unwrap();
    assert_eq!(ch.pattern.unwrap().like_count, 1);
    let (r, _) = log_live(
        store.db(),
        live("chat-1", Role::User, "褒めてないし", T0 + 12_000, None),
        &o(T0 + 12_000),
    )
    .unwrap();
    assert_eq!(r.successes, 1);
    let p = pat::get(store.db(), id).unwrap();
    assert_eq!((p.used_count, p.success_count, p.like_count), (1, 1, 1));
    // Another chat's pattern line never answered: resolved when the window has closed.
    log_live(
        store.db(),
        live("chat-2", Role::Bot, "それは褒め言葉ですね。", T0, Some(id)),
        &o(T0),
    )
    .unwrap();
    let early = resolve_open(store.db(), &o(T0 + 60_000)).unwrap();
    assert_eq!(
        (early.conversations, early.pending, early.failures),
        (1, 1, 0)
    );
    let late = resolve_open(store.db(), &o(T0 + (W + 1) * 1000)).unwrap();
    assert_eq!((late.conversations, late.failures), (1, 1));
    let done = resolve_open(store.db(), &o(T0 + 10 * W * 1000)).unwrap();
    assert_eq!(done.conversations, 0);
    let p = pat::get(store.db(), id).unwrap();
    assert_eq!((p.used_count, p.success_count, p.failure_count), (2, 1, 1));
}

fn a_dropout_becomes_a_counterfactual_pattern(store: &mut Store, _: &dyn Fn() -> Store) {
    key();
    let mut bot: serde_json::Value =
        serde_json::from_str(&line("k", "bot", "知りません。", 5, None)).unwrap();
    bot["character"] = "ayu".into();
    let log = [
        line("k", "user", "あゆって料理できなさそう", 0, None),
        bot.to_string(),
    ]
    .join("\n");
    let msgs = kakeai::patterns::ingest::parse_log(&log).unwrap();
    ingest(store.db(), &msgs, &opts(9999)).unwrap();
    let as_of = T0 + 9999 * 1000;
    let d = dropouts(store.db(), W, as_of).unwrap();
    assert_eq!(d.len(), 1);
    let id = d[0].dropout_id;
    let accept = |t, text| Accept {
        dropout_id: id,
        bot_response_type: t,
        text,
        character: None,
        user_message_type: None,
        window_secs: W,
        as_of,
    };
    assert!(matches!(
        cf::accept(store.db(), &accept(ResponseType::Uke, None)),
        Err(PatternError::Invalid { field: "text", .. })
    ));
    let drafts = Drafts {
        user_message_type: Some("からかい".into()),
        drafts: ResponseType::ALL
            .iter()
            .zip([
                "卵焼きは毎回スクランブルです。",
                "練習中です。",
                "得意料理は何ですか？",
            ])
            .map(|(t, x)| Draft {
                bot_response_type: *t,
                text: x.into(),
            })
            .collect(),
    };
    cf::save_drafts(store.db(), id, &drafts, Some("tiny-ja")).unwrap();
    let p = cf::accept(store.db(), &accept(ResponseType::Uke, None)).unwrap();
    assert!(p.is_counterfactual);
    assert_eq!(p.character, Character::Ayu);
    assert_eq!(p.user_message_type, "からかい");
    assert_eq!(p.user_message_example, "あゆって料理できなさそう");
    assert_eq!(p.bot_response, "卵焼きは毎回スクランブルです。");
    let edited = cf::accept(
        store.db(),
        &accept(ResponseType::Counter, Some("今度一緒に作りませんか？")),
    )
    .unwrap();
    assert_eq!(edited.bot_response, "今度一緒に作りませんか？");
    assert!(matches!(
        cf::accept(store.db(), &accept(ResponseType::Uke, None)),
        Err(PatternError::Duplicate { .. })
    ));
    // Re-drafting replaces the open draft and keeps the accepted ones.
    let mut again = drafts.clone();
    for d in &mut again.drafts {
        d.text = format!("{}（二回目）", d.text);
    }
    cf::save_drafts(store.db(), id, &again, None).unwrap();
    let stored = cf::stored_drafts(store.db(), id).unwrap();
    assert_eq!(stored.len(), 3);
    assert_eq!(stored[0].pattern_id, Some(p.pattern_id));
    assert_eq!(stored[0].text, "卵焼きは毎回スクランブルです。");
    assert!(stored[1].text.ends_with("（二回目）"));
    assert_eq!(stored[1].model, None);
    assert_eq!(stored[2].text, "今度一緒に作りませんか？");
    let d = dropout(store.db(), id, W, as_of).unwrap();
    assert_eq!((d.drafts, d.accepted), (3, 2));
    let listed = pat::list(store.db(), Some(Character::Ayu)).unwrap();
    assert_eq!(listed.iter().filter(|p| p.is_counterfactual).count(), 2);
}

fn pattern_writes_nest_in_a_callers_transaction(store: &mut Store, _: &dyn Fn() -> Store) {
    key();
    let n = new(Character::Yana, "からかい", "寝坊", "寝坊は才能だもん！");
    let id = add(store, &n);
    // A pattern error inside the transaction is the caller's to handle: what came before and
    // after it is kept.
    let second = store
        .transact(|db| {
            let log = pat::record_use(
                db,
                &NewUse {
                    pattern_id: id,
                    at: T0,
                    ..NewUse::default()
                },
            )
            .map_err(kakeai::store::invalid)?;
            assert!(matches!(
                pat::add(db, &n),
                Err(PatternError::Duplicate { .. })
            ));
            assert!(matches!(
                pat::record_use(
                    db,
                    &NewUse {
                        pattern_id: id,
                        character: Some(Character::Ayu),
                        at: T0,
                        ..NewUse::default()
                    }
                ),
                Err(PatternError::Invalid { .. })
            ));
            pat::feedback(db, log, 1).map_err(kakeai::store::invalid)?;
            Ok(
                pat::add(db, &new(Character::Yana, "いじり", "寝坊", "二つ目"))
                    .map_err(kakeai::store::invalid)?
                    .pattern_id,
            )
        })
        .unwrap();
    let p = pat::get(store.db(), id).unwrap();
    assert_eq!((p.used_count, p.like_count), (1, 1));
    assert!(pat::get(store.db(), second).is_ok());
    // A failed transaction keeps nothing of the pattern writes inside it.
    let failed: Result<(), _> = store.transact(|db| {
        pat::record_use(
            db,
            &NewUse {
                pattern_id: id,
                at: T0,
                ..NewUse::default()
            },
        )
        .map_err(kakeai::store::invalid)?;
        pat::add(db, &new(Character::Ayu, "からかい", "x", "消える"))
            .map_err(kakeai::store::invalid)?;
        Err(kakeai::store::invalid("changed my mind"))
    });
    assert!(failed.is_err());
    assert_eq!(pat::get(store.db(), id).unwrap().used_count, 1);
    assert_eq!(count(store, "prowrestling_patterns"), 2);
    assert_eq!(count(store, "prowrestling_usage_log"), 1);
}

fn uses_and_votes_from_several_connections_lose_nothing(
    store: &mut Store,
    reopen: &dyn Fn() -> Store,
) {
    key();
    let id = add(
        store,
        &new(Character::Yana, "からかい", "寝坊", "寝坊は才能だもん！"),
    );
    let log = use_at(store, id, T0);
    const THREADS: usize = 4;
    const USES: usize = 10;
    let stores: Vec<Store> = (0..THREADS).map(|_| reopen()).collect();
    std::thread::scope(|s| {
        for (t, st) in stores.into_iter().enumerate() {
            s.spawn(move || {
                for i in 0..USES {
                    use_at(&st, id, T0 + (t * USES + i) as i64 * 1000);
                    // Every thread votes on the same row: one vote, whoever wins.
                    let v = if (t + i) % 2 == 0 { 1 } else { -1 };
                    pat::feedback(st.db(), log, v).unwrap();
                }
            });
        }
    });
    let p = pat::get(store.db(), id).unwrap();
    assert_eq!(p.used_count as usize, 1 + THREADS * USES);
    assert_eq!(p.like_count + p.dislike_count, 1);
    assert_eq!(
        count(store, "prowrestling_usage_log") as usize,
        1 + THREADS * USES
    );
}
