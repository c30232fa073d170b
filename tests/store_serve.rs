//! The LINE bot's store on both engines (issue 24 §3), through the conformance harness: events
//! deduplicated by webhookEventId across connections, messages held by the instance that
//! acknowledged them, holds renewed and taken over only once lapsed, her line written at most
//! once per message however many connections race to write it, the judgment cache upserted.

mod common;

use common::both::Case;
use kakeai::p;
use kakeai::serve::judgment::JudgmentCache;
use kakeai::serve::lease::{self, Lease, Taken};
use kakeai::serve::store::{self as line, BotLine, NewEvent, NewMessage};
use kakeai::store::{Store, StoreError};

const CASES: &[(&str, Case)] = &[
    (
        "an_event_is_stored_once_from_any_connection",
        an_event_is_stored_once_from_any_connection,
    ),
    (
        "holds_lapse_and_are_taken_over",
        holds_lapse_and_are_taken_over,
    ),
    (
        "her_line_is_written_once_per_message",
        her_line_is_written_once_per_message,
    ),
    ("racing_writers_answer_once", racing_writers_answer_once),
    (
        "a_line_left_sending_is_taken_over_for_redelivery",
        a_line_left_sending_is_taken_over_for_redelivery,
    ),
    (
        "the_judgment_cache_is_one_row_per_scope",
        the_judgment_cache_is_one_row_per_scope,
    ),
    (
        "the_workbench_reads_the_bots_conversations",
        the_workbench_reads_the_bots_conversations,
    ),
    (
        "a_nul_character_is_stored_by_one_rule_and_fails_nothing",
        a_nul_character_is_stored_by_one_rule_and_fails_nothing,
    ),
    ("forget_deletes_a_users_lines", forget_deletes_a_users_lines),
];

on_both_engines!(CASES);

fn a_nul_character_is_stored_by_one_rule_and_fails_nothing(
    store: &mut Store,
    _: &dyn Fn() -> Store,
) {
    // Generated variants: NUL at the start, the middle, the end, alone, repeated.
    let texts = ["\0あ", "やな\0ちゃん", "おはよう\0", "\0", "a\0\0b"];
    let mut batch = vec![event("EGOOD", "mgood", "Ugood")];
    for (i, t) in texts.iter().enumerate() {
        let mut e = event(
            &format!("ENUL{i}"),
            &format!("mnul{i}"),
            &format!("Unul{i}"),
        );
        if let Some(m) = e.message.as_mut() {
            m.text_masked = (*t).to_string();
        }
        batch.push(e);
    }
    // The good event beside them is never lost with its batch.
    let got = line::accept(store, &batch).expect("the batch is accepted");
    assert!(got.iter().all(|r| matches!(r, Some(Some(_)))), "{got:?}");
    for (i, t) in texts.iter().enumerate() {
        let stored: String = store
            .db()
            .one(
                "SELECT text_masked FROM line_messages WHERE message_id = ?1",
                p![format!("mnul{i}")],
            )
            .expect("stored");
        assert_eq!(stored, t.replace('\0', "\u{FFFD}"), "{t:?}");
        assert!(!stored.contains('\0'));
    }
}

fn forget_deletes_a_users_lines(store: &mut Store, _: &dyn Fn() -> Store) {
    line::accept(
        store,
        &[
            event("EF1", "mf1", "Uforget"),
            event("EF2", "mf2", "Uforget"),
            event("EK1", "mk1", "Ukeep"),
        ],
    )
    .expect("accept");
    let counts = kakeai::cli::serve_ops::forget_in(store, "Uforget").expect("forgets");
    let n = |what: &str| {
        counts
            .iter()
            .find(|(w, _)| w.starts_with(what))
            .map(|c| c.1)
    };
    assert_eq!(n("LINE messages"), Some(2), "{counts:?}");
    assert_eq!(n("webhook events"), Some(2), "{counts:?}");
    let left: Vec<String> = store
        .db()
        .query_map("SELECT channel_id FROM line_messages", p![], |r| r.get(0))
        .expect("reads");
    assert_eq!(left, ["Ukeep"]);
}

fn event(id: &str, msg: &str, user: &str) -> NewEvent {
    NewEvent {
        webhook_event_id: id.into(),
        event_type: "message".into(),
        source_type: "user".into(),
        channel_id: user.into(),
        redelivery: false,
        message: Some(NewMessage {
            channel_id: user.into(),
            source_type: "user".into(),
            message_id: Some(msg.into()),
            webhook_event_id: Some(id.into()),
            role: "user",
            character: "yana".into(),
            text_masked: "今日はなにしてた？".into(),
            original_content_hash: "h".into(),
            at_ms: 1_000,
            state: "queued",
            ..NewMessage::default()
        }),
        malformed: None,
    }
}

fn lease(owner: &str, ms: i64) -> Lease {
    Lease {
        owner: owner.into(),
        ms,
    }
}

fn an_event_is_stored_once_from_any_connection(store: &mut Store, reopen: &dyn Fn() -> Store) {
    let mut other = reopen();
    let first = line::accept_held(store, &[event("E1", "m1", "U1")], Some(&lease("a", 60_000)))
        .expect("accept");
    assert!(matches!(first.as_slice(), [Some(Some(_))]), "{first:?}");
    // A redelivery to another instance: a duplicate, nothing new stored.
    let again = line::accept_held(
        &mut other,
        &[event("E1", "m1", "U1")],
        Some(&lease("b", 60_000)),
    )
    .expect("accept");
    assert_eq!(again, vec![None]);
    // A new event id carrying a message seen before: a replay, settled duplicate.
    let replay = line::accept(&mut other, &[event("E2", "m1", "U1")]).expect("accept");
    assert_eq!(replay, vec![None]);
    let (events, messages, owner): (i64, i64, String) = store
        .db()
        .query_row(
            "SELECT (SELECT COUNT(*) FROM line_events), (SELECT COUNT(*) FROM line_messages),
                    (SELECT lease_owner FROM line_messages WHERE message_id = 'm1')",
            p![],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .expect("counts");
    assert_eq!((events, messages, owner.as_str()), (2, 1, "a"));
}

fn holds_lapse_and_are_taken_over(store: &mut Store, reopen: &dyn Fn() -> Store) {
    let a = lease("a", 1_000);
    let b = lease("b", 1_000);
    let mut other = reopen();
    let ids = line::accept_held(
        store,
        &[event("E1", "m1", "U1"), event("E2", "m2", "U2")],
        Some(&a),
    )
    .expect("accept");
    assert_eq!(ids.len(), 2);
    let now = kakeai::patterns::stamp::now_ms();
    // Held and live: nobody takes them.
    assert_eq!(
        lease::take_over(&mut other, &b, now, false, 10).expect("take"),
        vec![]
    );
    // A renews: still live a little later.
    lease::renew(store, &a, now + 900).expect("renew");
    assert_eq!(
        lease::take_over(&mut other, &b, now + 1_500, false, 10).expect("take"),
        vec![]
    );
    // A stopped renewing: lapsed, B takes both, once.
    let taken = lease::take_over(&mut other, &b, now + 2_000, false, 10).expect("take");
    assert_eq!(taken.len(), 2, "{taken:?}");
    assert!(taken.iter().all(|t| matches!(t, Taken::Queued { .. })));
    assert_eq!(
        lease::take_over(store, &a, now + 2_100, false, 10).expect("take"),
        vec![]
    );
    // Settled messages are nobody's business.
    let id = match &taken[0] {
        Taken::Queued { id, .. } => *id,
        t => panic!("{t:?}"),
    };
    line::save_bot_line(&mut other, &bot(id), "answered").expect("answer");
    let later = lease::take_over(store, &a, now + 60_000, false, 10).expect("take");
    assert_eq!(later.len(), 1, "only the unanswered one: {later:?}");
}

fn bot(reply_to: i64) -> BotLine {
    BotLine {
        reply_to,
        text: "うん、それいいね！".into(),
        state: "sent",
        source: "llm".into(),
        delivery: "reply".into(),
        ..BotLine::default()
    }
}

fn her_line_is_written_once_per_message(store: &mut Store, _: &dyn Fn() -> Store) {
    let id = line::accept(store, &[event("E1", "m1", "U1")]).expect("accept")[0]
        .flatten()
        .expect("id");
    line::save_bot_line(store, &bot(id), "answered").expect("first");
    let again = line::save_bot_line(store, &bot(id), "answered");
    assert!(
        matches!(&again, Err(StoreError::Invalid(m)) if m.contains("not answered twice")),
        "{again:?}"
    );
    let n: i64 = store
        .db()
        .one(
            "SELECT COUNT(*) FROM line_messages WHERE role = 'bot'",
            p![],
        )
        .expect("count");
    assert_eq!(n, 1);
}

/// Three connections write her line for the same messages at once: each message gets exactly
/// one line (SQLite: the write lock; PostgreSQL: SERIALIZABLE).
fn racing_writers_answer_once(store: &mut Store, reopen: &dyn Fn() -> Store) {
    let events: Vec<NewEvent> = (0..20)
        .map(|i| event(&format!("E{i}"), &format!("m{i}"), &format!("U{i}")))
        .collect();
    let ids: Vec<i64> = line::accept(store, &events)
        .expect("accept")
        .into_iter()
        .map(|r| r.flatten().expect("id"))
        .collect();
    let wins = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..3 {
            let mut mine = reopen();
            let (ids, wins) = (&ids, &wins);
            s.spawn(move || {
                for id in ids {
                    match line::save_bot_line(&mut mine, &bot(*id), "answered") {
                        Ok(_) => {
                            wins.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                        }
                        Err(StoreError::Invalid(_)) => {}
                        Err(e) => panic!("{e}"),
                    }
                }
            });
        }
    });
    assert_eq!(wins.into_inner(), ids.len());
    let per: Vec<i64> = store
        .db()
        .query_map(
            "SELECT COUNT(*) FROM line_messages WHERE role = 'bot' GROUP BY reply_to",
            p![],
            |r| r.get(0),
        )
        .expect("per message");
    assert_eq!(per.len(), ids.len());
    assert!(per.iter().all(|n| *n == 1), "{per:?}");
}

fn a_line_left_sending_is_taken_over_for_redelivery(store: &mut Store, reopen: &dyn Fn() -> Store) {
    let a = lease("a", 1_000);
    let id = line::accept_held(store, &[event("E1", "m1", "U1")], Some(&a)).expect("accept")[0]
        .flatten()
        .expect("id");
    let bot_id = kakeai::serve::outbox::mark_sending(store, &bot(id), None).expect("sending");
    let mut other = reopen();
    let now = kakeai::patterns::stamp::now_ms();
    let taken =
        lease::take_over(&mut other, &lease("b", 1_000), now + 5_000, false, 10).expect("take");
    match taken.as_slice() {
        [Taken::Sending(s)] => {
            assert_eq!(
                (s.bot_id, s.reply_to, s.reply_token.clone()),
                (bot_id, id, None)
            );
        }
        t => panic!("{t:?}"),
    }
}

fn the_judgment_cache_is_one_row_per_scope(store: &mut Store, reopen: &dyn Fn() -> Store) {
    let mut other = reopen();
    for (k, th) in [None, Some("t1")].into_iter().enumerate() {
        let c = JudgmentCache {
            channel_id: "G1".into(),
            thread_ts: th.map(str::to_string),
            should_respond: k == 0,
            confidence: 0.75,
            reason: "誰も答えていない".into(),
            latest_message_ts: "m1".into(),
            next_check_at: 9_000_000,
            created_at: 1_000,
            updated_at: 1_000,
        };
        line::save_cache(store, &c).expect("save");
        let newer = JudgmentCache {
            confidence: 0.5,
            updated_at: 2_000,
            ..c.clone()
        };
        line::save_cache(&mut other, &newer).expect("save again");
        let got = line::find_cache(store, "G1", th)
            .expect("find")
            .expect("row");
        assert_eq!(
            (got.confidence, got.created_at, got.updated_at),
            (0.5, 1_000, 2_000)
        );
    }
    assert_eq!(line::all_caches(store).expect("all").len(), 2);
    assert_eq!(line::delete_expired(store, 10_000_000).expect("expired"), 2);
}

/// The workstation's conversations view reads what the bot stored, from the shared store:
/// chats newest first, each reply with the masked user line, and a reviewer's 👍, override
/// and note written back through another connection.
fn the_workbench_reads_the_bots_conversations(store: &mut Store, reopen: &dyn Fn() -> Store) {
    use kakeai::serve::review;
    let mut bot = reopen();
    let mut ids = Vec::new();
    for (k, user) in ["U1", "U2", "U1"].iter().enumerate() {
        let mut e = event(&format!("E{k}"), &format!("m{k}"), user);
        if let Some(m) = e.message.as_mut() {
            m.at_ms = 1_000 + k as i64;
            m.text_masked = format!("［氏名］さん{k}の話");
        }
        let id = line::accept(&mut bot, &[e]).expect("accept")[0]
            .flatten()
            .expect("id");
        ids.push(
            line::save_bot_line(&mut bot, &bot_line_at(id, 2_000 + k as i64), "answered")
                .expect("line"),
        );
    }
    review::thumb(store, ids[2], true).expect("thumb");
    review::set_override(store, ids[2], Some("WARN")).expect("override");
    review::set_note(store, ids[2], "言い過ぎ").expect("note");
    let convs = review::conversations(&reopen(), 10_000, 30 * 60_000, 10).expect("read");
    let chats: Vec<&str> = convs.iter().map(|c| c.channel_id.as_str()).collect();
    assert_eq!(chats, ["U1", "U2"], "newest chat first");
    let u1 = &convs[0];
    assert_eq!(u1.source_type, "user");
    assert_eq!(u1.replies.len(), 2);
    let newest = &u1.replies[0];
    assert_eq!(newest.id, ids[2]);
    assert_eq!(newest.user_text, "［氏名］さん2の話");
    assert_eq!(
        (newest.thumb, newest.verdict.as_str(), newest.overridden),
        (Some(1), "WARN", true)
    );
    assert_eq!(newest.note.as_deref(), Some("言い過ぎ"));
}

fn bot_line_at(reply_to: i64, at_ms: i64) -> BotLine {
    BotLine {
        at_ms,
        ..bot(reply_to)
    }
}
