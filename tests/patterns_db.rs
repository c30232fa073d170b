//! The pattern DB's SQL semantics (seed 000 §5–§6): the migrated tables, generated columns,
//! UNIQUE, value checks, usage outcomes within the window, 👍/👎 feedback, scores from the
//! usage log, and best match (order, threshold, tie-breaks, relevance, the index it uses).

mod common;

use kakeai::patterns::score::{self, Rank, ScoreInputs};
use kakeai::patterns::{
    self as pat, BestQuery, Character, NewPattern, NewUse, Observation, PatternError, Resolution,
    ResponseType, db::SortKey,
};
use kakeai::store::Store;
use kakeai::store::sql::Db;
use rusqlite::Connection;

const T0: i64 = 1_769_947_200_000; // 2026-02-01T12:00:00Z
const MIN: i64 = 60_000;

/// A known installation secret for this test binary, so no test touches the user's data dir
/// and stored digests can be checked.
fn test_key() -> &'static kakeai::safety::pii::DigestKey {
    kakeai::safety::pii::keyfile::install_key(kakeai::safety::pii::DigestKey::from_bytes(&[9; 32]));
    kakeai::safety::pii::installation_key().expect("installed key")
}

fn store() -> (tempfile::TempDir, Store) {
    test_key();
    let dir = tempfile::tempdir().unwrap();
    let s = Store::open(&dir.path().join("kakeai.db")).unwrap();
    (dir, s)
}

fn new(c: Character, kind: &str, example: &str, response: &str, t: ResponseType) -> NewPattern {
    NewPattern {
        character: Some(c),
        user_message_type: kind.into(),
        user_message_example: example.into(),
        bot_response: response.into(),
        bot_response_type: Some(t),
        ..NewPattern::default()
    }
}

fn yana(conn: &Connection, response: &str) -> i64 {
    pat::add(
        Db::Sqlite(conn),
        &new(
            Character::Yana,
            "からかい",
            "やなって寝坊ばっかり",
            response,
            ResponseType::Uke,
        ),
    )
    .unwrap()
    .pattern_id
}

/// Sets the counters directly, as another writer (or an import) would.
fn set(conn: &Connection, id: i64, success: u32, failure: u32, like: u32, dislike: u32) {
    conn.execute(
        "UPDATE prowrestling_patterns SET used_count = ?2 + ?3, success_count = ?2,
             failure_count = ?3, like_count = ?4, dislike_count = ?5 WHERE pattern_id = ?1",
        rusqlite::params![id, success, failure, like, dislike],
    )
    .unwrap();
}

fn use_at(conn: &Connection, id: i64, at: i64) -> i64 {
    pat::record_use(
        Db::Sqlite(conn),
        &NewUse {
            pattern_id: id,
            conversation_id: Some("c1".into()),
            user_id: Some("u1".into()),
            user_message: Some("寝坊したでしょ".into()),
            at,
            ..NewUse::default()
        },
    )
    .unwrap()
}

#[test]
fn the_migration_creates_the_seed_tables_and_indexes() {
    let (_d, s) = store();
    let c = s.conn();
    // The pattern tables arrive in migration 002; later migrations build on them.
    assert!(Store::schema_version() >= 2);
    let v: i64 = c
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(v, Store::schema_version());
    // table_xinfo lists generated columns too (hidden = 3 for STORED).
    let cols: Vec<(String, i64)> = c
        .prepare("SELECT name, hidden FROM pragma_table_xinfo('prowrestling_patterns')")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let names: Vec<&str> = cols.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "pattern_id",
            "user_message_type",
            "user_message_example",
            "bot_response",
            "bot_response_type",
            "character",
            "used_count",
            "success_count",
            "failure_count",
            "success_rate",
            "like_count",
            "dislike_count",
            "like_rate",
            "is_counterfactual",
            "created_at",
            "last_used_at",
            "updated_at"
        ]
    );
    for generated in ["success_rate", "like_rate"] {
        assert!(cols.contains(&(generated.to_string(), 3)), "{generated}");
    }
    let indexes: Vec<String> = c
        .prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND name LIKE 'idx_%'")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    for want in [
        "idx_character_success_rate",
        "idx_message_type",
        "idx_pattern_reaction",
        "idx_pattern_feedback",
        "idx_pattern_best",
    ] {
        assert!(indexes.iter().any(|i| i == want), "{want} in {indexes:?}");
    }
    let fk: String = c
        .query_row(
            "SELECT \"table\" FROM pragma_foreign_key_list('prowrestling_usage_log')",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(fk, "prowrestling_patterns");
}

#[test]
fn generated_rates_follow_the_counters() {
    let (_d, s) = store();
    let c = s.conn();
    let id = yana(c, "寝坊は才能だもん！");
    let p = pat::get(Db::Sqlite(c), id).unwrap();
    assert_eq!((p.success_rate, p.like_rate), (0.0, 0.0), "no data → 0.0");
    set(c, id, 3, 1, 1, 3);
    let p = pat::get(Db::Sqlite(c), id).unwrap();
    assert_eq!((p.success_rate, p.like_rate), (0.75, 0.25));
    set(c, id, 0, 2, 5, 0);
    let p = pat::get(Db::Sqlite(c), id).unwrap();
    assert_eq!((p.success_rate, p.like_rate), (0.0, 1.0));
}

#[test]
fn the_unique_rule_is_per_message_type_response_and_character() {
    let (_d, s) = store();
    let c = s.conn();
    let first = yana(c, "寝坊は才能だもん！");
    // Through the library: a named duplicate, whatever the example says.
    let mut again = new(
        Character::Yana,
        "からかい",
        "別の例文",
        "寝坊は才能だもん！",
        ResponseType::Nagashi,
    );
    match pat::add(Db::Sqlite(c), &again) {
        Err(PatternError::Duplicate { existing }) => assert_eq!(existing, first),
        other => panic!("{other:?}"),
    }
    // Straight SQL hits the table's own UNIQUE constraint.
    let raw = c.execute(
        "INSERT INTO prowrestling_patterns (user_message_type, user_message_example, bot_response,
             bot_response_type, character) VALUES ('からかい', 'x', '寝坊は才能だもん！', '流し', 'yana')",
        [],
    );
    assert!(raw.unwrap_err().to_string().contains("UNIQUE"));
    // Another character or another message type is another pattern.
    again.character = Some(Character::Ayu);
    assert!(pat::add(Db::Sqlite(c), &again).is_ok());
    again.character = Some(Character::Yana);
    again.user_message_type = "いじり".into();
    assert!(pat::add(Db::Sqlite(c), &again).is_ok());
    assert_eq!(pat::list(Db::Sqlite(c), None).unwrap().len(), 3);
}

#[test]
fn unknown_characters_and_reply_types_are_refused_by_the_library_and_the_database() {
    let (_d, s) = store();
    let c = s.conn();
    let mut p = new(
        Character::Yana,
        "からかい",
        "例",
        "返し",
        ResponseType::Counter,
    );
    p.bot_response = "   ".into();
    assert!(matches!(
        pat::add(Db::Sqlite(c), &p),
        Err(PatternError::Invalid {
            field: "bot_response",
            ..
        })
    ));
    p.bot_response = "返し".into();
    p.character = None;
    assert!(matches!(
        pat::add(Db::Sqlite(c), &p),
        Err(PatternError::Invalid {
            field: "character",
            ..
        })
    ));
    p.character = Some(Character::Ayu);
    p.counts.used_count = 1;
    p.counts.success_count = 2;
    assert!(matches!(
        pat::add(Db::Sqlite(c), &p),
        Err(PatternError::Invalid {
            field: "used_count",
            ..
        })
    ));
    assert!(Character::parse_field("character", "mio").is_err());
    assert!(ResponseType::parse("ボケ").is_none());
    let bad = |sql: &str| {
        let e = c.execute(sql, []).unwrap_err().to_string();
        assert!(e.contains("must be"), "{sql}: {e}");
    };
    bad(
        "INSERT INTO prowrestling_patterns (user_message_type, user_message_example,
             bot_response, bot_response_type, character) VALUES ('a', 'b', 'c', '流し', 'mio')",
    );
    bad(
        "INSERT INTO prowrestling_patterns (user_message_type, user_message_example,
             bot_response, bot_response_type, character) VALUES ('a', 'b', 'c', 'ボケ', 'yana')",
    );
    let id = yana(c, "寝坊は才能だもん！");
    bad(&format!(
        "UPDATE prowrestling_patterns SET character = 'mio' WHERE pattern_id = {id}"
    ));
    bad(&format!(
        "INSERT INTO prowrestling_usage_log (pattern_id, feedback) VALUES ({id}, 2)"
    ));
    assert_eq!(pat::list(Db::Sqlite(c), None).unwrap().len(), 1);
}

#[test]
fn ids_that_look_personal_are_stored_as_keyed_pseudonyms() {
    let (_d, s) = store();
    let c = s.conn();
    let id = yana(c, "寝坊は才能だもん！");
    for (conv, user) in [("taro@example.com", "090-1234-5678"), ("c1", "u1")] {
        let log = pat::record_use(
            Db::Sqlite(c),
            &NewUse {
                pattern_id: id,
                conversation_id: Some(conv.into()),
                user_id: Some(user.into()),
                at: T0,
                ..NewUse::default()
            },
        )
        .unwrap();
        let (sc, su): (String, String) = c
            .query_row(
                "SELECT conversation_id, user_id FROM prowrestling_usage_log WHERE log_id = ?1",
                [log],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap();
        let expect = |raw: &str| {
            if raw.contains('@') || raw.starts_with("090") {
                test_key().pseudonym(raw)
            } else {
                raw.to_string()
            }
        };
        assert_eq!(sc, expect(conv));
        assert_eq!(su, expect(user));
        // The unkeyed hash of the e-mail (linkable by anyone who knows it) is not what is kept.
        let plain = kakeai::safety::pii::sha256_hex(conv);
        assert!(!sc.contains(&plain[..16]), "{sc}");
    }
}

#[test]
fn a_use_is_counted_logged_masked_and_checked() {
    let (_d, s) = store();
    let c = s.conn();
    let id = yana(c, "寝坊は才能だもん！");
    let log = pat::record_use(
        Db::Sqlite(c),
        &NewUse {
            pattern_id: id,
            user_message: Some("佐藤さんに090-8765-4321って伝えて".into()),
            at: T0,
            ..NewUse::default()
        },
    )
    .unwrap();
    use_at(c, id, T0 - 5 * MIN);
    let p = pat::get(Db::Sqlite(c), id).unwrap();
    assert_eq!(p.used_count, 2);
    assert_eq!(p.last_used_at.as_deref(), Some("2026-02-01T12:00:00.000Z"));
    let (msg, resp, ch): (String, String, String) = c
        .query_row(
            "SELECT user_message, bot_response, character FROM prowrestling_usage_log
             WHERE log_id = ?1",
            [log],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap();
    assert_eq!(msg, "[氏名]さんに[電話番号]って伝えて");
    assert_eq!(resp, "寝坊は才能だもん！");
    assert_eq!(ch, "yana");
    let wrong = NewUse {
        pattern_id: id,
        character: Some(Character::Ayu),
        at: T0,
        ..NewUse::default()
    };
    assert!(matches!(
        pat::record_use(Db::Sqlite(c), &wrong),
        Err(PatternError::Invalid {
            field: "character",
            ..
        })
    ));
    let missing = NewUse {
        pattern_id: 99,
        at: T0,
        ..NewUse::default()
    };
    assert!(matches!(
        pat::record_use(Db::Sqlite(c), &missing),
        Err(PatternError::NoSuchPattern(99))
    ));
    assert_eq!(pat::get(Db::Sqlite(c), id).unwrap().used_count, 2);
}

#[test]
fn outcomes_follow_the_window_to_the_second_and_are_recorded_once() {
    let (_d, s) = store();
    let c = s.conn();
    let id = yana(c, "寝坊は才能だもん！");
    let w = pat::DEFAULT_WINDOW_SECS;
    let on_edge = use_at(c, id, T0);
    let late = use_at(c, id, T0);
    let silent = use_at(c, id, T0);
    let reply = |at, continued| Observation::Replied { at, continued };
    assert_eq!(
        pat::resolve_use(Db::Sqlite(c), on_edge, reply(T0 + 30 * MIN, true), w).unwrap(),
        Resolution::Success {
            reaction_time_seconds: 1800,
            continued: true
        }
    );
    assert_eq!(
        pat::resolve_use(Db::Sqlite(c), late, reply(T0 + 30 * MIN + 1000, false), w).unwrap(),
        Resolution::Failure
    );
    // Silence: pending until the window has closed, and pending writes nothing.
    let before = pat::get(Db::Sqlite(c), id).unwrap();
    let open = Observation::Silent {
        as_of: T0 + 30 * MIN - 1000,
    };
    assert_eq!(
        pat::resolve_use(Db::Sqlite(c), silent, open, w).unwrap(),
        Resolution::Pending
    );
    assert_eq!(pat::get(Db::Sqlite(c), id).unwrap(), before);
    let closed = Observation::Silent {
        as_of: T0 + 30 * MIN,
    };
    assert_eq!(
        pat::resolve_use(Db::Sqlite(c), silent, closed, w).unwrap(),
        Resolution::Failure
    );
    let p = pat::get(Db::Sqlite(c), id).unwrap();
    assert_eq!((p.success_count, p.failure_count), (1, 2));
    assert!((p.success_rate - 1.0 / 3.0).abs() < 1e-12);
    // Once only.
    assert!(matches!(
        pat::resolve_use(Db::Sqlite(c), on_edge, reply(T0 + MIN, false), w),
        Err(PatternError::AlreadyResolved(id)) if id == on_edge
    ));
    assert_eq!(pat::get(Db::Sqlite(c), id).unwrap().success_count, 1);
    let row = |log: i64| -> (Option<String>, Option<i64>, Option<bool>) {
        c.query_row(
            "SELECT user_reaction, reaction_time_seconds, next_message_exists
             FROM prowrestling_usage_log WHERE log_id = ?1",
            [log],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap()
    };
    assert_eq!(
        row(on_edge),
        (Some("continued".into()), Some(1800), Some(true))
    );
    assert_eq!(row(late), (Some("dropout".into()), None, Some(false)));
    // A shorter window turns the same timing into a failure; a reply before the use is refused.
    let short = use_at(c, id, T0);
    assert_eq!(
        pat::resolve_use(Db::Sqlite(c), short, reply(T0 + 10 * MIN, false), 5 * 60).unwrap(),
        Resolution::Failure
    );
    let early = use_at(c, id, T0);
    assert!(pat::resolve_use(Db::Sqlite(c), early, reply(T0 - 1000, false), w).is_err());
    assert!(matches!(
        pat::resolve_use(Db::Sqlite(c), 404, reply(T0, false), w),
        Err(PatternError::NoSuchLog(404))
    ));
    // A later mark of continued banter touches no counter.
    let replied = use_at(c, id, T0);
    pat::resolve_use(Db::Sqlite(c), replied, reply(T0 + MIN, false), w).unwrap();
    let before = pat::get(Db::Sqlite(c), id).unwrap();
    assert!(pat::mark_continued(Db::Sqlite(c), replied).unwrap());
    assert!(!pat::mark_continued(Db::Sqlite(c), replied).unwrap());
    assert!(
        !pat::mark_continued(Db::Sqlite(c), late).unwrap(),
        "a dropout stays one"
    );
    assert_eq!(
        pat::get(Db::Sqlite(c), id).unwrap().success_count,
        before.success_count
    );
}

#[test]
fn feedback_is_plus_or_minus_one_and_a_changed_vote_moves() {
    let (_d, s) = store();
    let c = s.conn();
    let id = yana(c, "寝坊は才能だもん！");
    let a = use_at(c, id, T0);
    let b = use_at(c, id, T0 + MIN);
    let counts = || {
        let p = pat::get(Db::Sqlite(c), id).unwrap();
        (p.like_count, p.dislike_count, p.like_rate)
    };
    let ch = pat::feedback(Db::Sqlite(c), a, 1).unwrap();
    assert_eq!((ch.previous, ch.feedback), (None, 1));
    assert_eq!(counts(), (1, 0, 1.0));
    pat::feedback(Db::Sqlite(c), a, 1).unwrap();
    assert_eq!(counts(), (1, 0, 1.0), "the same vote twice counts once");
    pat::feedback(Db::Sqlite(c), b, -1).unwrap();
    assert_eq!(counts(), (1, 1, 0.5));
    let moved = pat::feedback(Db::Sqlite(c), a, -1).unwrap();
    assert_eq!(moved.previous, Some(1));
    assert_eq!(counts(), (0, 2, 0.0), "the vote moved, not added");
    pat::feedback(Db::Sqlite(c), a, 1).unwrap();
    assert_eq!(counts(), (1, 1, 0.5));
    for bad in [0, 2, -2, 5] {
        match pat::feedback(Db::Sqlite(c), a, bad) {
            Err(e @ PatternError::BadFeedback(_)) => {
                assert!(e.to_string().contains("+1 (👍) or -1 (👎)"), "{e}");
            }
            other => panic!("{bad}: {other:?}"),
        }
    }
    assert_eq!(counts(), (1, 1, 0.5));
    assert!(matches!(
        pat::feedback(Db::Sqlite(c), 77, 1),
        Err(PatternError::NoSuchLog(77))
    ));
    let fb: i64 = c
        .query_row(
            "SELECT feedback FROM prowrestling_usage_log WHERE log_id = ?1",
            [a],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(fb, 1);
}

#[test]
fn scores_come_from_the_counters_and_the_usage_log() {
    let (_d, s) = store();
    let c = s.conn();
    let id = yana(c, "寝坊は才能だもん！");
    let w = pat::DEFAULT_WINDOW_SECS;
    for (reply_after, continued) in [
        (Some(30), true),
        (Some(90), true),
        (Some(60), false),
        (None, false),
    ] {
        let log = use_at(c, id, T0);
        let obs = match reply_after {
            Some(secs) => Observation::Replied {
                at: T0 + secs * 1000,
                continued,
            },
            None => Observation::Silent {
                as_of: T0 + 60 * MIN,
            },
        };
        pat::resolve_use(Db::Sqlite(c), log, obs, w).unwrap();
        pat::feedback(Db::Sqlite(c), log, if continued { 1 } else { -1 }).unwrap();
    }
    let got = pat::scored(Db::Sqlite(c), id).unwrap();
    assert_eq!(got.pattern.success_rate, 0.75);
    assert_eq!(got.prowrestling_rate, 0.5, "2 of 4 resolved uses went on");
    assert_eq!(got.avg_reaction_time, Some(60.0));
    assert_eq!(got.pattern.like_rate, 0.5);
    let want = ScoreInputs {
        success_rate: 0.75,
        prowrestling_rate: 0.5,
        like_rate: 0.5,
        avg_reaction_time: Some(60.0),
        observed: 4,
    };
    let expected = (0.75 * 0.45 + 0.5 * 0.25 + 0.5 * 0.20 + 0.8 * 0.10) * 4.0 / 9.0;
    assert!((score::score(&want) - expected).abs() < 1e-12);
    assert!((got.score - expected).abs() < 1e-12);
    assert_eq!(got.rank, Rank::D);
    assert_eq!(got.confidence, 4.0 / 9.0);
    // A long good record reaches S; a pattern with no data stays at 0.
    let strong = yana(c, "そうそう、朝は布団と親友なの！");
    set(c, strong, 95, 0, 95, 0);
    let unused = yana(c, "また言ってる〜");
    let list = pat::list_scored(Db::Sqlite(c), Some(Character::Yana), SortKey::Score).unwrap();
    let ids: Vec<i64> = list.iter().map(|p| p.pattern.pattern_id).collect();
    assert_eq!(ids, [strong, id, unused]);
    // success 1, likes 1, no logged uses: (0.45 + 0.20) × 0.95 = 0.6175 → B.
    assert_eq!(list[0].rank, Rank::B);
    assert_eq!(list[2].score, 0.0);
    assert!(
        pat::list_scored(Db::Sqlite(c), Some(Character::Ayu), SortKey::Score)
            .unwrap()
            .is_empty()
    );
    let by_likes = pat::list_scored(Db::Sqlite(c), None, SortKey::Likes).unwrap();
    assert_eq!(by_likes[0].pattern.pattern_id, strong);
    assert_eq!(by_likes[1].pattern.pattern_id, id);
    let by_rank = pat::list_scored(Db::Sqlite(c), None, SortKey::Rank).unwrap();
    assert_eq!(by_rank[0].pattern.pattern_id, strong);
    assert_eq!(
        by_rank[1].pattern.pattern_id, id,
        "within D, the most used first"
    );
}

fn best(c: &Connection, ch: Character, msg: &str) -> Option<pat::BestMatch> {
    pat::best_match(Db::Sqlite(c), &BestQuery::new(ch, msg)).unwrap()
}

#[test]
fn best_match_follows_the_seed_order_threshold_and_character() {
    let (_d, s) = store();
    let c = s.conn();
    assert!(best(c, Character::Yana, "何か").is_none(), "empty DB");
    let low = yana(c, "a");
    let edge = yana(c, "b");
    let top = yana(c, "c");
    let liked = yana(c, "d");
    set(c, low, 69, 31, 10, 0); // 0.69 < 0.7
    set(c, edge, 7, 3, 0, 1); // exactly 0.7, no likes → 0.42
    set(c, top, 9, 1, 1, 1); // 0.54 + 0.2 = 0.74
    set(c, liked, 8, 2, 3, 0); // 0.48 + 0.4 = 0.88
    assert_eq!(
        best(c, Character::Yana, "").unwrap().pattern.pattern_id,
        liked
    );
    assert!(
        best(c, Character::Ayu, "").is_none(),
        "another character's patterns"
    );
    let strict = BestQuery {
        min_success: 0.85,
        ..BestQuery::new(Character::Yana, "")
    };
    let m = pat::best_match(Db::Sqlite(c), &strict).unwrap().unwrap();
    assert_eq!(m.pattern.pattern_id, top);
    assert!((m.match_key - 0.74).abs() < 1e-12);
    let exact = BestQuery {
        min_success: 0.7,
        ..BestQuery::new(Character::Yana, "")
    };
    set(c, liked, 0, 0, 0, 0);
    set(c, top, 0, 0, 0, 0);
    assert_eq!(
        pat::best_match(Db::Sqlite(c), &exact)
            .unwrap()
            .unwrap()
            .pattern
            .pattern_id,
        edge,
        "success_rate exactly at the threshold qualifies; 0.69 does not"
    );
    set(c, edge, 0, 0, 0, 0);
    assert!(pat::best_match(Db::Sqlite(c), &exact).unwrap().is_none());
    let nonsense = BestQuery {
        min_success: 1.5,
        ..BestQuery::new(Character::Yana, "")
    };
    assert!(pat::best_match(Db::Sqlite(c), &nonsense).is_err());
}

#[test]
fn ties_go_to_relevance_then_the_key_then_the_lower_id() {
    let (_d, s) = store();
    let c = s.conn();
    let mk = |example: &str, response: &str| {
        let p = pat::add(
            Db::Sqlite(c),
            &new(
                Character::Ayu,
                "からかい",
                example,
                response,
                ResponseType::Counter,
            ),
        )
        .unwrap();
        p.pattern_id
    };
    let first = mk(
        "あゆって友達少なそう",
        "では、あなたが一人目になってくださいます？",
    );
    let second = mk("あゆのお弁当いつも茶色いね", "茶色はおいしい色なんですよ。");
    let third = mk(
        "あゆって字がきれいすぎ",
        "ありがとうございます。練習の成果です。",
    );
    for id in [first, second, third] {
        set(c, id, 9, 1, 1, 0); // identical keys: 0.94
    }
    // No message: the lower id.
    assert_eq!(
        best(c, Character::Ayu, "").unwrap().pattern.pattern_id,
        first
    );
    // A message close to the second's example picks it from the tied bucket.
    let m = best(c, Character::Ayu, "今日のお弁当も茶色いね").unwrap();
    assert_eq!(m.pattern.pattern_id, second);
    assert!(m.relevance > 0.3, "{}", m.relevance);
    // A higher bucket wins whatever the message says …
    set(c, third, 19, 1, 1, 0); // 0.57 + 0.4 = 0.97 → bucket 97, alone
    set(c, first, 47, 3, 1, 0); // 0.564 + 0.4 = 0.964 → bucket 96
    set(c, second, 19, 1, 9, 1); // 0.57 + 0.36 = 0.93
    assert_eq!(
        best(c, Character::Ayu, "お弁当茶色い")
            .unwrap()
            .pattern
            .pattern_id,
        third
    );
    // … but within one 0.01 bucket relevance beats a slightly higher key.
    set(c, first, 0, 1, 0, 0);
    set(c, third, 97, 3, 1, 0); // 0.582 + 0.4 = 0.982 → bucket 98
    set(c, second, 97, 3, 399, 1); // 0.582 + 0.399 = 0.981 → bucket 98
    assert_eq!(
        best(c, Character::Ayu, "お弁当茶色い")
            .unwrap()
            .pattern
            .pattern_id,
        second
    );
    assert_eq!(
        best(c, Character::Ayu, "字がきれい")
            .unwrap()
            .pattern
            .pattern_id,
        third
    );
    assert_eq!(
        best(c, Character::Ayu, "").unwrap().pattern.pattern_id,
        third,
        "no relevance either way: the higher key"
    );
}

#[test]
fn a_known_message_type_is_preferred_then_any_type() {
    let (_d, s) = store();
    let c = s.conn();
    let tease = yana(c, "はいはい、寝坊の女王です！");
    let selfdep = pat::add(
        Db::Sqlite(c),
        &new(
            Character::Yana,
            "自虐",
            "どうせ自分なんて",
            "そんなことないって！",
            ResponseType::Nagashi,
        ),
    )
    .unwrap()
    .pattern_id;
    set(c, tease, 10, 0, 5, 0);
    set(c, selfdep, 8, 2, 0, 1);
    let q = |t| BestQuery {
        message_type: Some(t),
        ..BestQuery::new(Character::Yana, "")
    };
    let m = pat::best_match(Db::Sqlite(c), &q("自虐")).unwrap().unwrap();
    assert_eq!((m.pattern.pattern_id, m.type_matched), (selfdep, true));
    let m = pat::best_match(Db::Sqlite(c), &q("悪口")).unwrap().unwrap();
    assert_eq!((m.pattern.pattern_id, m.type_matched), (tease, false));
}

#[test]
fn best_match_walks_the_expression_index_without_sorting() {
    let (_d, s) = store();
    let plan: Vec<String> = s
        .conn()
        .prepare(
            "EXPLAIN QUERY PLAN
             SELECT pattern_id, success_rate * 0.6 + like_rate * 0.4, user_message_example
             FROM prowrestling_patterns INDEXED BY idx_pattern_best
             WHERE character = ?1 AND CAST(?2 AS TEXT) IS NULL AND success_rate >= ?3
             ORDER BY success_rate * 0.6 + like_rate * 0.4 DESC, pattern_id LIMIT ?4",
        )
        .unwrap()
        .query_map(rusqlite::params!["yana", None::<String>, 0.7, 64], |r| {
            r.get(3)
        })
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let plan = plan.join(" | ");
    assert!(plan.contains("idx_pattern_best"), "{plan}");
    assert!(!plan.contains("TEMP B-TREE"), "{plan}");
    assert!(plan.contains("(character=?)"), "{plan}");
}

#[test]
fn many_high_keys_below_the_threshold_still_find_the_qualifying_pattern() {
    let (_d, s) = store();
    let c = s.conn();
    c.execute_batch("BEGIN").unwrap();
    for i in 0..2500 {
        // success 0.5, likes 1.0 → key 0.7: above every qualifying pattern, never qualifying.
        c.execute(
            "INSERT INTO prowrestling_patterns (user_message_type, user_message_example,
                 bot_response, bot_response_type, character, used_count, success_count,
                 failure_count, like_count)
             VALUES ('からかい', '例', ?1, '流し', 'yana', 2, 1, 1, 1)",
            [format!("返し{i}")],
        )
        .unwrap();
    }
    c.execute_batch("COMMIT").unwrap();
    assert!(best(c, Character::Yana, "").is_none());
    let good = yana(c, "寝坊は才能だもん！");
    set(c, good, 7, 3, 0, 0); // key 0.42
    assert_eq!(
        best(c, Character::Yana, "").unwrap().pattern.pattern_id,
        good
    );
}

/// The documented rule, written out over every pattern: filter, top 0.01 bucket (its first 64
/// in the seed's order), then relevance, key, lower id; the message type first when given.
fn reference(all: &[pat::Pattern], q: &BestQuery) -> Option<i64> {
    let key = |p: &pat::Pattern| p.success_rate * 0.6 + p.like_rate * 0.4;
    let bucket = |k: f64| ((k + 1e-9) * 100.0).floor() as i64;
    let pick = |kind: Option<&str>| {
        let mut qual: Vec<&pat::Pattern> = all
            .iter()
            .filter(|p| p.character == q.character && p.success_rate + 1e-12 >= q.min_success)
            .filter(|p| kind.is_none_or(|t| p.user_message_type == t))
            .collect();
        qual.sort_by(|a, b| {
            key(b)
                .total_cmp(&key(a))
                .then(a.pattern_id.cmp(&b.pattern_id))
        });
        let top = bucket(key(qual.first()?));
        qual.iter()
            .take_while(|p| bucket(key(p)) == top)
            .take(64)
            .map(|p| {
                (
                    pat::relevance(q.message, &p.user_message_example),
                    key(p),
                    -p.pattern_id,
                )
            })
            .max_by(|a, b| {
                a.0.total_cmp(&b.0)
                    .then(a.1.total_cmp(&b.1))
                    .then(a.2.cmp(&b.2))
            })
            .map(|(_, _, id)| -id)
    };
    q.message_type
        .and_then(|t| pick(Some(t)))
        .or_else(|| pick(None))
}

#[test]
fn best_match_agrees_with_the_rule_written_out_on_many_patterns() {
    let (_d, s) = store();
    let c = s.conn();
    let kinds = ["からかい", "いじり", "自虐"];
    let examples = [
        "やなって寝坊ばっかり",
        "あゆって真面目すぎ",
        "お弁当が茶色い",
        "絵がジャガイモ",
        "方向音痴だよね",
    ];
    let mut g = common::seeded::Gen::new(0x9e37_79b9);
    let mut next = |n: u32| g.next(u64::from(n)) as u32;
    c.execute_batch("BEGIN").unwrap();
    for i in 0..1500 {
        let (success, failure) = (next(10), next(4));
        c.execute(
            "INSERT INTO prowrestling_patterns (user_message_type, user_message_example,
                 bot_response, bot_response_type, character, used_count, success_count,
                 failure_count, like_count, dislike_count)
             VALUES (?1, ?2, ?3, '流し', ?4, ?5, ?6, ?7, ?8, ?9)",
            rusqlite::params![
                kinds[next(3) as usize],
                examples[next(5) as usize],
                format!("返し{i}"),
                if i % 2 == 0 { "yana" } else { "ayu" },
                success + failure,
                success,
                failure,
                next(3),
                next(3)
            ],
        )
        .unwrap();
    }
    c.execute_batch("COMMIT").unwrap();
    let all = pat::list(Db::Sqlite(c), None).unwrap();
    let mut checked = 0;
    for min in [0.0, 0.5, 0.7, 0.9, 1.0] {
        for message in ["", "お弁当茶色いね", "寝坊ばっかりじゃん", "方向音痴"]
        {
            for kind in [None, Some("自虐"), Some("存在しない種類")] {
                for character in Character::ALL {
                    let q = BestQuery {
                        character,
                        message,
                        min_success: min,
                        message_type: kind,
                    };
                    let got = pat::best_match(Db::Sqlite(c), &q)
                        .unwrap()
                        .map(|m| m.pattern.pattern_id);
                    assert_eq!(got, reference(&all, &q), "{q:?}");
                    checked += usize::from(got.is_some());
                }
            }
        }
    }
    assert!(checked > 100, "most queries find something: {checked}");
    // Both plans were used: many patterns qualify at 0.5, few reach 1.0.
    let at = |m: f64| {
        all.iter()
            .filter(|p| p.character == Character::Yana && p.success_rate >= m)
            .count()
    };
    assert!(at(0.5) > 256 && at(1.0) < 256, "{} {}", at(0.5), at(1.0));
}

#[test]
fn relevance_is_the_bigram_dice_coefficient() {
    assert_eq!(pat::relevance("お弁当", "お弁当"), 1.0);
    assert_eq!(
        pat::relevance("バカ!!", "ﾊﾞｶ"),
        1.0,
        "NFKC, punctuation dropped"
    );
    assert_eq!(pat::relevance("", "何か"), 0.0);
    // {お弁, 弁当} vs {弁当, 当箱}: one shared of four.
    assert_eq!(pat::relevance("お弁当", "弁当箱"), 0.5);
    assert_eq!(pat::relevance("あ", "あ"), 1.0);
}
