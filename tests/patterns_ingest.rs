//! The learning loop (seed 000 §7): conversation logs in (masked, all or nothing), pattern
//! outcomes from the timing of the user's next message, dropouts, counterfactual review, and
//! pattern files in and out. No raw PII text may reach the database file.

mod common;

use kakeai::patterns::counterfactual::{self as cf, Accept, Draft, Drafts};
use kakeai::patterns::dropouts::{dropout, dropouts};
use kakeai::patterns::exchange;
use kakeai::patterns::ingest::{IngestError, IngestOptions, ingest, parse_log};
use kakeai::patterns::{self as pat, PatternError, ResponseType};
use kakeai::store::Store;
use kakeai::store::sql::Db;
use rusqlite::Connection;

const T0: i64 = 1_769_947_200; // 2026-02-01T12:00:00Z, in unix seconds
const W: i64 = 30 * 60;

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

fn starter(conn: &Connection) {
    let text = std::fs::read_to_string("assets/patterns/starter.jsonl").unwrap();
    let lines = exchange::parse_file(&text).unwrap();
    let r = exchange::import(Db::Sqlite(conn), &lines, false).unwrap();
    assert_eq!(r.imported.len(), 13);
}

/// One log line; `secs` after T0.
fn line(conv: &str, role: &str, text: &str, secs: i64, pattern: Option<i64>) -> String {
    let mut v = serde_json::json!({
        "conversation_id": conv, "user_id": format!("user-{conv}"), "role": role,
        "text": text, "timestamp": T0 + secs,
    });
    if let Some(p) = pattern {
        v["pattern_id"] = p.into();
    }
    v.to_string()
}

fn opts(as_of_secs: i64) -> IngestOptions {
    IngestOptions {
        window_secs: W,
        as_of: (T0 + as_of_secs) * 1000,
        source: "test.jsonl".into(),
    }
}

fn run(
    conn: &Connection,
    lines: &[String],
    as_of_secs: i64,
) -> kakeai::patterns::ingest::IngestReport {
    let msgs = parse_log(&lines.join("\n")).unwrap();
    ingest(Db::Sqlite(conn), &msgs, &opts(as_of_secs)).unwrap()
}

fn count(conn: &Connection, table: &str) -> i64 {
    conn.query_row(&format!("SELECT COUNT(*) FROM {table}"), [], |r| r.get(0))
        .unwrap()
}

fn reaction(conn: &Connection, log: i64) -> (Option<String>, Option<i64>) {
    conn.query_row(
        "SELECT user_reaction, reaction_time_seconds FROM prowrestling_usage_log WHERE log_id = ?1",
        [log],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
    .unwrap()
}

#[test]
fn a_log_becomes_conversations_uses_outcomes_and_dropouts() {
    let (_d, s) = store();
    let c = s.conn();
    starter(c); // pattern 1: yana, 方向音痴 → プロレス受け
    let log = [
        line("a", "user", "やなって地図読めないよね", 0, None),
        line("a", "bot", "そうだよ！地図アプリにまで…", 5, Some(1)),
        line("a", "user", "あはは、認めるんだ", 65, None),
        line("a", "bot", "認めるしかないじゃん！", 70, None),
        line("a", "user", "じゃあ今度案内してあげる", 120, None),
        line("a", "bot", "ほんと？約束だよ！", 125, None),
        // b: the pattern's line goes unanswered for an hour, then the user comes back.
        line("b", "user", "やなって方向音痴", 0, None),
        line("b", "bot", "地図アプリにも呆れられてるもん", 10, Some(1)),
        line("b", "user", "ただいま", 3610, None),
        line("b", "bot", "おかえり！", 3615, None),
    ];
    let r = run(c, &log, 10_000);
    assert_eq!(
        (
            r.messages,
            r.conversations,
            r.uses,
            r.successes,
            r.failures,
            r.pending
        ),
        (10, 2, 2, 1, 1, 0)
    );
    assert_eq!(count(c, "conversation_messages"), 10);
    let p = pat::get(Db::Sqlite(c), 1).unwrap();
    assert_eq!((p.used_count, p.success_count, p.failure_count), (2, 1, 1));
    assert_eq!(reaction(c, 1), (Some("continued".into()), Some(60)));
    assert_eq!(reaction(c, 2), (Some("dropout".into()), None));
    // The usage row holds the user's line the pattern answered, and the bot's actual words.
    let (user_message, bot): (String, String) = c
        .query_row(
            "SELECT user_message, bot_response FROM prowrestling_usage_log WHERE log_id = 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(user_message, "やなって地図読めないよね");
    assert_eq!(bot, "そうだよ！地図アプリにまで…");
    let scored = pat::scored(Db::Sqlite(c), 1).unwrap();
    assert_eq!(scored.prowrestling_rate, 0.5);
    // Dropouts: b's pattern line (the user came back an hour later) and a's last line.
    let d = dropouts(Db::Sqlite(c), W, (T0 + 10_000) * 1000).unwrap();
    let ids: Vec<(String, Option<i64>)> = d
        .iter()
        .map(|x| (x.bot_text.clone(), x.returned_after_seconds))
        .collect();
    assert_eq!(
        ids,
        [
            ("ほんと？約束だよ！".to_string(), None),
            ("地図アプリにも呆れられてるもん".to_string(), Some(3600)),
            ("おかえり！".to_string(), None),
        ]
    );
    assert_eq!(d[1].user_text.as_deref(), Some("やなって方向音痴"));
    assert_eq!(d[1].pattern_id, Some(1));
    assert_eq!(d[1].character, Some(pat::Character::Yana));
    assert_eq!(r.dropouts, 3);
    // Before the window has closed, a conversation's last line is no dropout yet.
    assert_eq!(
        dropouts(Db::Sqlite(c), W, (T0 + 125 + W - 1) * 1000)
            .unwrap()
            .len(),
        1
    );
    assert_eq!(
        dropouts(Db::Sqlite(c), W, (T0 + 3615 + W) * 1000)
            .unwrap()
            .len(),
        3
    );
}

#[test]
fn uses_wait_for_evidence_and_are_resolved_by_a_later_ingest() {
    let (_d, s) = store();
    let c = s.conn();
    starter(c);
    let first = [
        line("c", "user", "あゆって友達少なそう", 0, None),
        line("c", "bot", "では、あなたがその一人に？", 5, Some(10)),
    ];
    let r = run(c, &first, 600);
    assert_eq!((r.uses, r.pending, r.dropouts), (1, 1, 0));
    assert_eq!(reaction(c, 1), (None, None));
    // The user answered 20 minutes after the line: a success; banter not yet shown.
    let second = [line("c", "user", "なってあげてもいいよ", 1205, None)];
    let r = run(c, &second, 1300);
    assert_eq!((r.messages, r.successes), (1, 1));
    assert_eq!(reaction(c, 1), (Some("replied".into()), Some(1200)));
    // They spoke again: the same use now counts as banter that went on, counted once.
    let third = [
        line("c", "bot", "ありがとうございます！", 1210, None),
        line("c", "user", "どういたしまして〜", 1300, None),
    ];
    let r = run(c, &third, 1400);
    assert_eq!((r.successes, r.failures), (0, 0));
    assert_eq!(reaction(c, 1).0.as_deref(), Some("continued"));
    let p = pat::get(Db::Sqlite(c), 10).unwrap();
    assert_eq!((p.used_count, p.success_count), (1, 1));
    // Ingesting the same lines again adds nothing.
    let r = run(c, &first, 9999);
    assert_eq!((r.messages, r.duplicates, r.uses), (0, 2, 0));
    assert_eq!(count(c, "prowrestling_usage_log"), 1);
}

#[test]
fn the_dropout_is_the_last_of_several_bot_lines() {
    let (_d, s) = store();
    let c = s.conn();
    let log = [
        line("d", "user", "ねえ", 0, None),
        line("d", "bot", "なになに？", 5, None),
        line("d", "bot", "おーい、聞いてる？", 2000, None),
    ];
    run(c, &log, 9999);
    let d = dropouts(Db::Sqlite(c), W, (T0 + 9999) * 1000).unwrap();
    assert_eq!(d.len(), 1);
    assert_eq!(d[0].bot_text, "おーい、聞いてる？");
    assert_eq!(d[0].user_text.as_deref(), Some("ねえ"));
    assert!(matches!(
        dropout(Db::Sqlite(c), d[0].dropout_id - 1, W, (T0 + 9999) * 1000),
        Err(PatternError::NotADropout(_))
    ));
}

#[test]
fn bad_lines_are_all_reported_with_their_place() {
    let text = [
        line("e", "user", "こんにちは", 0, None),
        r#"{"conversation_id": "e", "user_id": "u", "role": "assistant", "text": "x", "timestamp": 1}"#.into(),
        r#"{"conversation_id": "e", "user_id": "u", "role": "user", "text": "x", "timestamp": "2026-02-01T12:00:00"}"#.into(),
        r#"{"conversation_id": "e", "user_id": "u", "role": "user", "text": "x", "timestamp": 1, "pattern_id": 3}"#.into(),
        r#"{"conversation_id": "e", "role": "user", "text": "x", "timestamp": 1}"#.into(),
        r#"{"conversation_id": "e", "user_id": "u", "role": "bot", "text": "  ", "timestamp": 1}"#.into(),
        "{\"conversation_id\": \"e\", ".into(),
        String::new(),
        "{\"conversation_id\": \"えええ\", oops}".into(),
    ]
    .join("\n");
    let bad = parse_log(&text).unwrap_err();
    let got: Vec<(usize, Option<usize>)> = bad.iter().map(|b| (b.line, b.col)).collect();
    assert_eq!(
        got,
        [
            (2, Some(42)),
            (3, Some(71)),
            (4, Some(87)),
            (5, Some(1)),
            (6, Some(57)),
            (7, Some(25)),
            (9, Some(28))
        ]
    );
    assert!(
        bad[0].message.contains("\"assistant\""),
        "{}",
        bad[0].message
    );
    assert!(bad[1].message.contains("time zone"), "{}", bad[1].message);
    assert!(
        bad[2].message.contains("only a bot line"),
        "{}",
        bad[2].message
    );
    assert!(bad[3].message.contains("user_id"), "{}", bad[3].message);
    assert_eq!(
        bad[0].render("log.jsonl"),
        format!("log.jsonl:2:42: {}", bad[0].message)
    );
}

#[test]
fn a_problem_found_while_writing_writes_nothing() {
    let (_d, s) = store();
    let c = s.conn();
    starter(c);
    let unknown_pattern = [
        line("f", "user", "やなってさ", 0, None),
        line("f", "bot", "なに？", 5, Some(1)),
        line("f", "bot", "えっ", 9, Some(404)),
    ];
    let msgs = parse_log(&unknown_pattern.join("\n")).unwrap();
    match ingest(Db::Sqlite(c), &msgs, &opts(9999)) {
        Err(IngestError::Line { line, message }) => {
            assert_eq!(line, 3);
            assert!(message.contains("404"), "{message}");
        }
        other => panic!("{other:?}"),
    }
    let mut other_user =
        serde_json::from_str::<serde_json::Value>(&line("f", "user", "別人", 20, None)).unwrap();
    other_user["user_id"] = "someone-else".into();
    let msgs = parse_log(
        &[
            line("f", "user", "やなってさ", 0, None),
            other_user.to_string(),
        ]
        .join("\n"),
    )
    .unwrap();
    assert!(matches!(
        ingest(Db::Sqlite(c), &msgs, &opts(9999)),
        Err(IngestError::Line { line: 2, .. })
    ));
    for t in [
        "conversations",
        "conversation_messages",
        "prowrestling_usage_log",
    ] {
        assert_eq!(count(c, t), 0, "{t}");
    }
    assert_eq!(pat::get(Db::Sqlite(c), 1).unwrap().used_count, 0);
}

#[test]
fn no_raw_personal_data_reaches_the_database_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("kakeai.db");
    let raw = [
        "090-1234-5678",
        "高橋",
        "takahashi.m@example.jp",
        "株式会社ミライ製作所",
    ];
    {
        let s = Store::open(&path).unwrap();
        let c = s.conn();
        let log = [
            line(
                "g",
                "user",
                "私は高橋です。電話は090-1234-5678だよ",
                0,
                None,
            ),
            line("g", "bot", "高橋さん、番号はしまっておいてね！", 5, None),
            line(
                "g",
                "user",
                "メールはtakahashi.m@example.jpで、株式会社ミライ製作所に勤めてる",
                60,
                None,
            ),
        ];
        let mut with_id: serde_json::Value =
            serde_json::from_str(&line("h", "user", "やっほー", 0, None)).unwrap();
        with_id["user_id"] = "takahashi.m@example.jp".into();
        let msgs = parse_log(&[log.join("\n"), with_id.to_string()].join("\n")).unwrap();
        let r = ingest(Db::Sqlite(c), &msgs, &opts(9999)).unwrap();
        assert_eq!(r.masked, 3);
        let stored: Vec<String> = c
            .prepare("SELECT text FROM conversation_messages ORDER BY message_id")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert_eq!(stored[0], "私は[氏名]です。電話は[電話番号]だよ");
        assert_eq!(stored[1], "[氏名]さん、番号はしまっておいてね！");
        assert!(stored[2].contains("[メールアドレス]") && stored[2].contains("[会社名]"));
        let sha: String = c
            .query_row(
                "SELECT original_sha256 FROM conversation_messages WHERE message_id = 1",
                [],
                |r| r.get(0),
            )
            .unwrap();
        // Keyed: the plain SHA-256 of the original is not what is stored.
        let text = "私は高橋です。電話は090-1234-5678だよ";
        assert_eq!(sha, test_key().message_digest(text));
        assert_ne!(sha, kakeai::safety::pii::sha256_hex(text));
    }
    let mut bytes = Vec::new();
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        bytes.extend(std::fs::read(entry.unwrap().path()).unwrap());
    }
    assert!(
        find(&bytes, "[電話番号]".as_bytes()),
        "the masked text is there, so the search can see text"
    );
    for r in raw {
        assert!(
            !find(&bytes, r.as_bytes()),
            "{r} found in the database files"
        );
    }
}

fn find(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

#[test]
fn a_dropout_is_drafted_accepted_and_becomes_a_counterfactual_pattern() {
    let (_d, s) = store();
    let c = s.conn();
    starter(c);
    let mut bot: serde_json::Value =
        serde_json::from_str(&line("k", "bot", "知りません。", 5, None)).unwrap();
    bot["character"] = "ayu".into();
    let log = [
        line("k", "user", "あゆって料理できなさそう", 0, None),
        bot.to_string(),
    ]
    .join("\n");
    ingest(Db::Sqlite(c), &parse_log(&log).unwrap(), &opts(9999)).unwrap();
    let as_of = (T0 + 9999) * 1000;
    let d = dropouts(Db::Sqlite(c), W, as_of).unwrap();
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
    // Nothing drafted yet and no text given: refused.
    assert!(matches!(
        cf::accept(Db::Sqlite(c), &accept(ResponseType::Uke, None)),
        Err(PatternError::Invalid { field: "text", .. })
    ));
    let drafts = Drafts {
        user_message_type: Some("からかい".into()),
        drafts: ResponseType::ALL
            .iter()
            .zip([
                "はい、卵焼きは毎回スクランブルになります。",
                "ふふ、練習中ということにしておいてください。",
                "では、あなたの得意料理を教えていただけますか？",
            ])
            .map(|(t, x)| Draft {
                bot_response_type: *t,
                text: x.into(),
            })
            .collect(),
    };
    cf::save_drafts(Db::Sqlite(c), id, &drafts, Some("tiny-ja")).unwrap();
    let p = cf::accept(Db::Sqlite(c), &accept(ResponseType::Uke, None)).unwrap();
    assert!(p.is_counterfactual);
    assert_eq!(p.character, pat::Character::Ayu);
    assert_eq!(p.user_message_type, "からかい");
    assert_eq!(p.user_message_example, "あゆって料理できなさそう");
    assert_eq!(p.bot_response, "はい、卵焼きは毎回スクランブルになります。");
    assert_eq!(p.used_count, 0);
    let edited = cf::accept(
        Db::Sqlite(c),
        &accept(
            ResponseType::Counter,
            Some("では、今度一緒に作りませんか？"),
        ),
    )
    .unwrap();
    assert_eq!(edited.bot_response, "では、今度一緒に作りませんか？");
    assert!(matches!(
        cf::accept(Db::Sqlite(c), &accept(ResponseType::Uke, None)),
        Err(PatternError::Duplicate { .. })
    ));
    let stored = cf::stored_drafts(Db::Sqlite(c), id).unwrap();
    assert_eq!(stored.len(), 3);
    assert_eq!(stored[0].pattern_id, Some(p.pattern_id));
    assert_eq!(stored[2].text, "では、今度一緒に作りませんか？");
    assert_eq!(stored[1].pattern_id, None);
    // Re-drafting replaces the open draft and keeps the accepted ones.
    let mut again = drafts.clone();
    for d in &mut again.drafts {
        d.text = format!("{}（二回目）", d.text);
    }
    cf::save_drafts(Db::Sqlite(c), id, &again, None).unwrap();
    let stored = cf::stored_drafts(Db::Sqlite(c), id).unwrap();
    assert_eq!(stored[0].text, "はい、卵焼きは毎回スクランブルになります。");
    assert!(stored[1].text.ends_with("（二回目）"));
    let d = dropout(Db::Sqlite(c), id, W, as_of).unwrap();
    assert_eq!((d.drafts, d.accepted), (3, 2));
    // A line that is not a dropout cannot be accepted.
    let not = Accept {
        dropout_id: id - 1,
        ..accept(ResponseType::Nagashi, Some("x"))
    };
    assert!(matches!(
        cf::accept(Db::Sqlite(c), &not),
        Err(PatternError::NotADropout(_))
    ));
}

#[test]
fn pattern_files_round_trip_and_duplicates_change_nothing() {
    let (_d, s) = store();
    let c = s.conn();
    let text = std::fs::read_to_string("assets/patterns/starter.jsonl").unwrap();
    let lines = exchange::parse_file(&text).unwrap();
    assert!((10..=15).contains(&lines.len()));
    for ch in pat::Character::ALL {
        for t in ResponseType::ALL {
            assert!(
                lines
                    .iter()
                    .any(|(_, p, _)| p.character == Some(ch) && p.bot_response_type == Some(t)),
                "{ch} {t}"
            );
        }
    }
    exchange::import(Db::Sqlite(c), &lines, false).unwrap();
    let id = 3;
    let log = pat::record_use(
        Db::Sqlite(c),
        &pat::NewUse {
            pattern_id: id,
            at: T0 * 1000,
            ..Default::default()
        },
    )
    .unwrap();
    pat::feedback(Db::Sqlite(c), log, -1).unwrap();
    let exported = exchange::export(Db::Sqlite(c)).unwrap();
    assert_eq!(exported.len(), lines.len());
    assert_eq!((exported[2].used_count, exported[2].dislike_count), (1, 1));
    let file: String = exported
        .iter()
        .map(|r| serde_json::to_string(r).unwrap() + "\n")
        .collect();
    // Into a fresh database and out again: the same file.
    let (_d2, s2) = store();
    let again = exchange::parse_file(&file).unwrap();
    exchange::import(s2.db(), &again, false).unwrap();
    let file2: String = exchange::export(s2.db())
        .unwrap()
        .iter()
        .map(|r| serde_json::to_string(r).unwrap() + "\n")
        .collect();
    assert_eq!(file, file2);
    // Re-import: every line reported, nothing written.
    let before = exchange::export(Db::Sqlite(c)).unwrap();
    let r = exchange::import(Db::Sqlite(c), &again, false).unwrap();
    assert!(!r.written && r.imported.is_empty());
    assert_eq!(r.duplicates.len(), lines.len());
    assert_eq!(r.duplicates[0], (1, 1));
    assert_eq!(exchange::export(Db::Sqlite(c)).unwrap(), before);
    // A new line among duplicates: nothing, or (skipping) just the new one.
    let mut mixed = again.clone();
    let mut fresh = mixed[0].1.clone();
    fresh.bot_response = "方向音痴じゃなくて冒険家なの！".into();
    mixed.push((99, fresh, None));
    assert!(
        exchange::import(Db::Sqlite(c), &mixed, false)
            .unwrap()
            .imported
            .is_empty()
    );
    assert_eq!(pat::list(Db::Sqlite(c), None).unwrap().len(), lines.len());
    let r = exchange::import(Db::Sqlite(c), &mixed, true).unwrap();
    assert_eq!((r.imported.len(), r.duplicates.len()), (1, lines.len()));
    // Two identical lines in one file: the second is the duplicate.
    let (_d3, s3) = store();
    let twice = vec![(1, again[0].1.clone(), None), (2, again[0].1.clone(), None)];
    let r = exchange::import(s3.db(), &twice, false).unwrap();
    assert_eq!(r.duplicates, [(2, 1)]);
    assert!(pat::list(s3.db(), None).unwrap().is_empty());
}

#[test]
fn bad_pattern_lines_name_their_field() {
    let text = [
        r#"{"character": "mio", "user_message_type": "a", "user_message_example": "b", "bot_response": "c", "bot_response_type": "流し"}"#,
        r#"{"character": "yana", "user_message_type": "a", "user_message_example": "b", "bot_response": "", "bot_response_type": "流し"}"#,
        r#"{"character": "yana", "user_message_type": "a", "user_message_example": "b", "bot_response": "c", "bot_response_type": "ボケ"}"#,
        r#"{"character": "yana", "user_message_type": "a", "user_message_example": "b", "bot_respons": "c", "bot_response_type": "流し"}"#,
        r#"{"character": "ayu", "user_message_type": "a", "user_message_example": "b", "bot_response": "c", "bot_response_type": "流し", "is_counterfactual": 1, "pattern_id": 4, "score": 0.5}"#,
    ]
    .join("\n");
    let bad = exchange::parse_file(&text).unwrap_err();
    let got: Vec<(usize, Option<usize>)> = bad.iter().map(|b| (b.line, b.col)).collect();
    assert_eq!(
        got,
        [(1, Some(2)), (2, Some(78)), (3, Some(99)), (4, Some(90))]
    );
    assert!(bad[0].message.contains("\"mio\""), "{}", bad[0].message);
    assert!(
        bad[1].message.contains("bot_response: must not be empty"),
        "{}",
        bad[1].message
    );
    assert!(
        bad[2].message.contains("プロレス受け, 流し or カウンター"),
        "{}",
        bad[2].message
    );
    assert!(bad[3].message.contains("bot_respons"), "{}", bad[3].message);
    let ok = exchange::parse_line(5, text.lines().nth(4).unwrap())
        .unwrap()
        .unwrap();
    assert!(
        ok.0.is_counterfactual,
        "1 reads as true; derived fields are ignored"
    );
}

#[test]
fn open_uses_become_failures_once_their_window_closes_in_silence() {
    let (_d, s) = store();
    let c = s.conn();
    starter(c);
    let lines = [
        line("quiet", "user", "あゆって友達少なそう", 0, None),
        line("quiet", "bot", "では、あなたがその一人に？", 5, Some(10)),
        line("busy", "user", "やなってほんと寝坊助だよね", 0, None),
        line("busy", "bot", "うっさい、寝る子は育つの！", 5, Some(1)),
        line("busy", "user", "育ってないじゃん笑", 60, None),
    ];
    let r = run(c, &lines, 100);
    assert_eq!((r.uses, r.pending, r.successes), (2, 1, 1));
    // Before the window closes nothing changes.
    let early = pat::ingest::resolve_open(Db::Sqlite(c), &opts(W)).unwrap();
    assert_eq!(
        (early.conversations, early.failures, early.pending),
        (1, 0, 1)
    );
    assert_eq!(reaction(c, 1), (None, None));
    // After it: the silent use is a failure; the answered one is untouched.
    let late = pat::ingest::resolve_open(Db::Sqlite(c), &opts(W + 10)).unwrap();
    assert_eq!((late.conversations, late.failures), (1, 1));
    assert_eq!(reaction(c, 1).0.as_deref(), Some("dropout"));
    assert_eq!(reaction(c, 2).0.as_deref(), Some("replied"));
    assert_eq!(pat::get(Db::Sqlite(c), 10).unwrap().failure_count, 1);
    // Nothing left open.
    let again = pat::ingest::resolve_open(Db::Sqlite(c), &opts(W * 10)).unwrap();
    assert_eq!(again.conversations, 0);
}

/// Issue 16 §4: an S-rank pattern exported and re-imported into a fresh database came back C,
/// because its prowrestling rate and reaction times live only in the usage log. Generated
/// ingested histories for every starter pattern: each score and rank survives the round trip.
#[test]
fn scores_and_ranks_survive_export_and_import() {
    let (_d, s) = store();
    let c = s.conn();
    starter(c);
    let mut g = common::seeded::Gen::new(0x2545_f491);
    let mut rnd = |n: u64| g.next(n);
    let mut log = Vec::new();
    let mut conv = 0;
    for pattern in 1..=13i64 {
        // Pattern 1 is the star: many quick replies that go on. The rest: mixed outcomes.
        let uses = if pattern == 1 { 60 } else { 2 + rnd(20) };
        for _ in 0..uses {
            conv += 1;
            let id = format!("c{conv}");
            let base = (conv as i64) * 10_000;
            log.push(line(&id, "user", "ねえねえ", base, None));
            log.push(line(&id, "bot", "なになに？", base + 5, Some(pattern)));
            let roll = if pattern == 1 { 0 } else { rnd(3) };
            match roll {
                // Quick reply, then the banter goes on.
                0 => {
                    let wait = 3 + rnd(if pattern == 1 { 8 } else { 200 }) as i64;
                    log.push(line(&id, "user", "あはは", base + 5 + wait, None));
                    log.push(line(&id, "bot", "でしょ！", base + 10 + wait, None));
                    log.push(line(&id, "user", "それでさ", base + 60 + wait, None));
                }
                // A reply, and then silence.
                1 => log.push(line(
                    &id,
                    "user",
                    "ふーん",
                    base + 100 + rnd(600) as i64,
                    None,
                )),
                // No answer within the window.
                _ => {}
            }
        }
    }
    let as_of = (conv as i64 + 2) * 10_000;
    run(c, &log, as_of);
    // Likes too, through feedback on some uses.
    let logs: Vec<i64> = {
        let mut st = c
            .prepare("SELECT log_id FROM prowrestling_usage_log WHERE pattern_id = 1")
            .unwrap();
        st.query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    };
    for id in logs {
        pat::feedback(Db::Sqlite(c), id, 1).unwrap();
    }
    let before = pat::list_scored(Db::Sqlite(c), None, pat::db::SortKey::Score).unwrap();
    let star = before.iter().find(|p| p.pattern.pattern_id == 1).unwrap();
    assert_eq!(star.rank, pat::Rank::S, "{star:?}");
    let file: String = exchange::export(Db::Sqlite(c))
        .unwrap()
        .iter()
        .map(|r| serde_json::to_string(r).unwrap() + "\n")
        .collect();
    let (_d2, s2) = store();
    let lines = exchange::parse_file(&file).unwrap();
    exchange::import(s2.db(), &lines, false).unwrap();
    let after = pat::list_scored(s2.db(), None, pat::db::SortKey::Score).unwrap();
    assert_eq!(before.len(), after.len());
    for (b, a) in before.iter().zip(&after) {
        assert_eq!(b.pattern.bot_response, a.pattern.bot_response);
        assert_eq!(b.rank, a.rank, "{b:?} / {a:?}");
        assert!((b.score - a.score).abs() < 1e-9, "{b:?} / {a:?}");
        assert!((b.prowrestling_rate - a.prowrestling_rate).abs() < 1e-12);
        assert_eq!(b.avg_reaction_time.is_some(), a.avg_reaction_time.is_some());
    }
    // The imported history is marked and holds no message text; and no dropouts appear.
    let (rows, texts): (i64, i64) = s2
        .conn()
        .query_row(
            "SELECT COUNT(*), COUNT(user_message) + COUNT(bot_response) FROM prowrestling_usage_log
             WHERE conversation_id = 'kakeai-import'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert!(rows > 0 && texts == 0);
    assert!(dropouts(s2.db(), W, as_of * 1000).unwrap().is_empty());
    // The second export is the first (the mean reaction time to the last bit of a float sum).
    let first = exchange::export(Db::Sqlite(c)).unwrap();
    let second = exchange::export(s2.db()).unwrap();
    for (x, y) in first.iter().zip(&second) {
        let (ux, uy) = (x.usage.unwrap(), y.usage.unwrap());
        assert_eq!((ux.resolved, ux.continued), (uy.resolved, uy.continued));
        let (tx, ty) = (ux.avg_reaction_time.unwrap(), uy.avg_reaction_time.unwrap());
        assert!((tx - ty).abs() < 1e-9, "{tx} {ty}");
        let (mut x, mut y) = (x.clone(), y.clone());
        (x.usage, y.usage) = (None, None);
        assert_eq!(x, y);
    }
}

#[test]
fn a_bad_usage_summary_names_its_field() {
    let good = r#"{"character":"yana","user_message_type":"からかい","user_message_example":"ねえ","bot_response":"なに？","bot_response_type":"流し""#;
    for usage in [
        r#"{"resolved":2,"continued":3}"#,
        r#"{"resolved":0,"continued":0,"avg_reaction_time":4.0}"#,
        r#"{"resolved":2,"continued":1,"avg_reaction_time":-1}"#,
        r#"{"resolved":2,"continued":1,"typo":1}"#,
    ] {
        let line = format!(r#"{good},"usage":{usage}}}"#);
        let e = exchange::parse_line(1, &line).unwrap_err();
        assert!(
            e.message.contains("usage") || e.message.contains("typo"),
            "{}",
            e.message
        );
    }
    let line =
        format!(r#"{good},"usage":{{"resolved":2,"continued":1,"avg_reaction_time":12.5}}}}"#);
    assert!(exchange::parse_line(1, &line).unwrap().unwrap().1.is_some());
}

/// Texts masked beforehand (the model's second opinion's union) are what `ingest_masked`
/// stores, each with its original's keyed digest and its own pii flag, for generated logs;
/// a list of the wrong length writes nothing.
#[test]
fn premasked_texts_are_stored_as_given_and_a_short_list_writes_nothing() {
    use kakeai::patterns::ingest::ingest_masked;
    use kakeai::safety::pii;
    let key = test_key();
    let mut g = common::seeded::Gen::new(44);
    for _ in 0..5 {
        let (_d, s) = store();
        let c = s.conn();
        let n = 1 + g.next(6) as i64;
        let lines: Vec<String> = (0..n)
            .map(|i| {
                let role = if i % 2 == 0 { "user" } else { "bot" };
                line("p", role, &format!("みさき{i}と海へ"), i * 60, None)
            })
            .collect();
        let msgs = parse_log(&lines.join("\n")).unwrap();
        // What a model adding the name would leave: the name as [氏名].
        let masked: Vec<pii::Masked> = msgs
            .iter()
            .map(|m| {
                let rules = pii::shared().mask(&m.text);
                let reply = format!(
                    "PII_DETECTED: true\nMASKED_TEXT: {}\nDETECTED_ITEMS: 氏名",
                    rules.masked_text.replacen("みさき", "[氏名]", 1)
                );
                pii::merge_reply(rules, Ok(&reply)).0
            })
            .collect();
        let short = &masked[..masked.len() - 1];
        let mut none = |_| {};
        assert!(ingest_masked(Db::Sqlite(c), &msgs, short, &opts(0), &mut none).is_err());
        assert_eq!(count(c, "conversation_messages"), 0);
        let r = ingest_masked(Db::Sqlite(c), &msgs, &masked, &opts(0), &mut none).unwrap();
        assert_eq!(r.messages as i64, n);
        assert_eq!(r.masked as i64, n);
        let rows: Vec<(String, String, bool)> = c
            .prepare("SELECT text, original_sha256, pii_detected FROM conversation_messages ORDER BY message_id")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        for ((text, digest, flagged), (m, msg)) in rows.iter().zip(masked.iter().zip(&msgs)) {
            assert_eq!(text, &m.masked_text);
            assert!(!text.contains("みさき"), "{text}");
            assert!(*flagged);
            assert_eq!(digest, &pii::shared().mask(&msg.text).digest(key));
        }
    }
}
