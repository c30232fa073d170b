//! The workbench's conversations view of LINE traffic (issue 11 §3): conversations newest
//! first with each reply's verdict, pattern and outcome, the judgment cache per scope; 👍 on a
//! pattern reply reaches the pattern's like count; an override with its note is stored.

use std::sync::Arc;
use std::time::Duration;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use kakeai::director::RuleSet;
use kakeai::duo::DuoConfig;
use kakeai::patterns::{self as pat, Character, NewPattern, ResponseType};
use kakeai::serve::judgment::JudgmentCache;
use kakeai::serve::store::{self as line, BotLine, NewEvent, NewMessage};
use kakeai::store::{Store, StoreHandle};
use kakeai::text::analyzer::fallback::FallbackAnalyzer;
use kakeai::tui::app::{App, Conn, Header, Pane, UiMsg};
use kakeai::tui::keymap::Keymap;
use kakeai::tui::{Runtime, Services, theme};

const T0: i64 = 1_767_225_600_000; // 2026-01-01T00:00:00Z

fn user(s: &mut Store, channel: &str, kind: &str, msg: &str, text: &str, at: i64) -> i64 {
    let e = NewEvent {
        webhook_event_id: format!("E-{msg}"),
        event_type: "message".into(),
        source_type: kind.into(),
        channel_id: channel.into(),
        redelivery: false,
        message: Some(NewMessage {
            channel_id: channel.into(),
            source_type: kind.into(),
            message_id: Some(msg.into()),
            webhook_event_id: Some(format!("E-{msg}")),
            role: "user",
            character: "yana".into(),
            text_masked: text.into(),
            at_ms: at,
            state: "queued",
            ..NewMessage::default()
        }),
        malformed: None,
    };
    line::accept(s, &[e]).unwrap()[0].unwrap().unwrap()
}

fn bot(
    s: &mut Store,
    reply_to: i64,
    text: &str,
    status: &str,
    pattern: Option<(i64, i64)>,
    at: i64,
) -> i64 {
    let b = BotLine {
        reply_to,
        text: text.into(),
        state: "sent",
        source: if pattern.is_some() { "pattern" } else { "llm" }.into(),
        delivery: "reply".into(),
        pattern_id: pattern.map(|p| p.0),
        usage_id: pattern.map(|p| p.1),
        verdict: Some(serde_json::json!({"status": status})),
        attempts: 1,
        at_ms: at,
        ..BotLine::default()
    };
    line::save_bot_line(s, &b, "answered").unwrap()
}

fn seed(db: &std::path::Path) -> (i64, i64) {
    let mut s = Store::open(db).unwrap();
    let p = NewPattern {
        character: Some(Character::Yana),
        user_message_type: "からかい".into(),
        user_message_example: "やなってドジだよね笑".into(),
        bot_response: "ドジじゃないし！ちょっと転んだだけだし！".into(),
        bot_response_type: Some(ResponseType::Uke),
        counts: Default::default(),
        is_counterfactual: false,
    };
    let pid = pat::db::add(s.db(), &p).unwrap().pattern_id;
    let usage = pat::usage::record_use(
        s.db(),
        &pat::NewUse {
            pattern_id: pid,
            ..Default::default()
        },
    )
    .unwrap();
    // A 1:1 chat: a model reply the user answered (replied), then a pattern reply left
    // unanswered (a dropout by now).
    let u1 = user(
        &mut s,
        "U11aa22bb33cc44dd55ee66ff77aa88bb",
        "user",
        "m1",
        "週末ひま？ｶﾗｵｹ行こ🎤",
        T0,
    );
    bot(
        &mut s,
        u1,
        "いいじゃん！何歌うか決めとこ！",
        "PASS",
        None,
        T0 + 5_000,
    );
    let u2 = user(
        &mut s,
        "U11aa22bb33cc44dd55ee66ff77aa88bb",
        "user",
        "m2",
        "やなってドジだよね笑",
        T0 + 60_000,
    );
    let b2 = bot(
        &mut s,
        u2,
        "ドジじゃないし！ちょっと転んだだけだし！",
        "WARN",
        Some((pid, usage)),
        T0 + 65_000,
    );
    // A group that was only judged.
    user(
        &mut s,
        "Cf0e1d2c3b4a5968778695a4b3c2d1e0f",
        "group",
        "g1",
        "明日の集合、９時でいい？",
        T0 + 120_000,
    );
    line::save_cache(
        &mut s,
        &JudgmentCache {
            channel_id: "Cf0e1d2c3b4a5968778695a4b3c2d1e0f".into(),
            thread_ts: None,
            should_respond: false,
            confidence: 0.92,
            reason: "予定の相談で、割り込む場面ではない".into(),
            latest_message_ts: "g1".into(),
            next_check_at: T0 + 120_000 + 43_200_000,
            created_at: T0 + 120_000,
            updated_at: T0 + 120_000,
        },
    )
    .unwrap();
    (pid, b2)
}

fn runtime(db: &std::path::Path) -> (Runtime, tokio::sync::mpsc::UnboundedReceiver<UiMsg>) {
    let header = Header {
        endpoint: "fake".into(),
        model: "tiny-ja".into(),
        conn: Conn::Probing,
        analyzer: "fallback".into(),
        ruleset: "0".into(),
        db: "k.db".into(),
    };
    let app = App::new(header, theme::load_all().0, Keymap::builtin());
    let services = Services {
        store: StoreHandle::spawn(Store::open(db).unwrap()),
        rules: RuleSet::builtin().unwrap(),
        duo: DuoConfig::builtin().unwrap(),
        llm: kakeai::llm::LlmConfig::default(),
        analyzer: Arc::new(FallbackAnalyzer),
        replay_speed: 1.0,
        vault: None,
        safety: kakeai::safety::SharedSafety::ready(kakeai::safety::SafetyRules::builtin()),
    };
    Runtime::new(app, services)
}

fn key(rt: &mut Runtime, code: KeyCode) {
    for cmd in rt.app.on_key(KeyEvent::new(code, KeyModifiers::NONE)) {
        rt.execute(cmd);
    }
}

fn wait_until(
    rt: &mut Runtime,
    rx: &mut tokio::sync::mpsc::UnboundedReceiver<UiMsg>,
    f: impl Fn(&App) -> bool,
) {
    let deadline = std::time::Instant::now() + Duration::from_secs(15);
    while !f(&rt.app) {
        assert!(
            std::time::Instant::now() < deadline,
            "timed out: {}",
            rt.app.status
        );
        match rx.try_recv() {
            Ok(m) => rt.app.on_msg(m),
            Err(_) => std::thread::sleep(Duration::from_millis(5)),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_conversations_view_lists_line_traffic_and_takes_thumbs_and_overrides() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("k.db");
    let (pid, pattern_reply) = seed(&db);
    let (mut rt, mut rx) = runtime(&db);
    for _ in 0..5 {
        key(&mut rt, KeyCode::Char('v'));
    }
    assert_eq!(rt.app.pane, Pane::Conversations);
    wait_until(&mut rt, &mut rx, |a| a.rooms.conversations.loaded);
    let c = &rt.app.rooms.conversations;
    // Newest first: the group (judged only, no replies), then the 1:1 chat.
    assert_eq!(c.conversations.len(), 2);
    assert_eq!(c.conversations[0].source_type, "group");
    let replies = &c.conversations[1].replies;
    assert_eq!(replies.len(), 2);
    assert_eq!(
        (
            replies[0].verdict.as_str(),
            replies[0].outcome.as_str(),
            replies[0].pattern_id
        ),
        ("WARN", "dropout", Some(pid))
    );
    assert_eq!(
        (replies[1].verdict.as_str(), replies[1].outcome.as_str()),
        ("PASS", "replied")
    );
    assert_eq!(c.caches.len(), 1);
    let mut t = ratatui::Terminal::new(ratatui::backend::TestBackend::new(140, 40)).unwrap();
    t.draw(|f| kakeai::tui::render::draw(f, &rt.app)).unwrap();
    let screen = t.backend().to_string();
    assert!(screen.contains("pattern #1 · dropout"), "{screen}");
    assert!(screen.contains("0.92"), "{screen}");
    insta::assert_snapshot!("conversations_140x40", screen);
    // 👍 on the selected reply (the pattern reply, newest): the pattern's like count too.
    assert_eq!(rt.app.rooms.conversations.selected(), Some(pattern_reply));
    key(&mut rt, KeyCode::Char('+'));
    wait_until(&mut rt, &mut rx, |a| a.status.contains("saved"));
    assert!(rt.app.status.contains("like_rate"), "{}", rt.app.status);
    // Override the older reply to RETRY with a note.
    key(&mut rt, KeyCode::Char('j'));
    key(&mut rt, KeyCode::Char('o'));
    key(&mut rt, KeyCode::Right);
    key(&mut rt, KeyCode::Right);
    for ch in "ｶﾗｵｹの誘いに乗りすぎ".chars() {
        key(&mut rt, KeyCode::Char(ch));
    }
    key(&mut rt, KeyCode::Enter);
    wait_until(&mut rt, &mut rx, |a| {
        a.status.contains("override → RETRY saved")
    });
    wait_until(&mut rt, &mut rx, |a| {
        a.rooms
            .conversations
            .conversations
            .get(1)
            .is_some_and(|c| c.replies[1].overridden)
    });
    let s = Store::open(&db).unwrap();
    let likes: i64 = s
        .conn()
        .query_row(
            "SELECT like_count FROM prowrestling_patterns WHERE pattern_id = ?1",
            [pid],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(likes, 1);
    let (thumb, over, note): (Option<i64>, Option<String>, Option<String>) = s
        .conn()
        .query_row("SELECT (SELECT thumb FROM line_messages WHERE id = ?1), verdict_override, note FROM line_messages WHERE role = 'bot' AND id <> ?1", [pattern_reply], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap();
    assert_eq!(thumb, Some(1));
    assert_eq!(over.as_deref(), Some("RETRY"));
    assert_eq!(note.as_deref(), Some("ｶﾗｵｹの誘いに乗りすぎ"));
}
