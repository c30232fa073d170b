//! Chat mode through the app and runtime with a fake OpenAI-compatible endpoint: keystrokes →
//! PII masking → safety → model reply streamed → Director verdict, each step in the trace; the
//! raw personal data never reaches the model, the app state or the database.

mod common;

#[path = "llm_fake/mod.rs"]
mod llm_fake;

use std::sync::Arc;
use std::time::Duration;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use kakeai::director::RuleSet;
use kakeai::duo::DuoConfig;
use kakeai::llm::ApiKind;
use kakeai::store::{Store, StoreHandle};
use kakeai::text::analyzer::fallback::FallbackAnalyzer;
use kakeai::tui::app::{App, Conn, UiMsg};
use kakeai::tui::chat::Source;
use kakeai::tui::{Runtime, Services};
use llm_fake::{FakeServer, Recorded, Reply, openai_reply, parts, sse_events};

/// A known installation secret for this test binary, so no test touches the user's data dir
/// and stored digests can be checked.
fn test_key() -> &'static kakeai::safety::pii::DigestKey {
    kakeai::safety::pii::keyfile::install_key(kakeai::safety::pii::DigestKey::from_bytes(&[9; 32]));
    kakeai::safety::pii::installation_key().expect("installed key")
}

fn app() -> App {
    test_key();
    common::tui::app(common::tui::header(
        "fake",
        "tiny-ja",
        Conn::Probing,
        "0",
        "k.db",
    ))
}

async fn server() -> FakeServer {
    FakeServer::with(|req: &Recorded, _| match req.path.as_str() {
        _ if llm_fake::pii_nothing(req).is_some() => llm_fake::pii_nothing(req).unwrap(),
        "/v1/models" => Reply::json(
            200,
            r#"{"object":"list","data":[{"id":"tiny-ja","object":"model","owned_by":"llamacpp"}]}"#,
        ),
        "/v1/chat/completions" if req.json()["stream"] == true => Reply::sse(parts(&sse_events(
            "tiny-ja",
            &["えー、", "ほんと？", "じゃあ", "一緒に行こうよ！"],
            "stop",
            4,
        ))),
        "/v1/chat/completions" => Reply::json(
            200,
            &openai_reply("tiny-ja", r#"{"context_type":"通常","confidence":0.9}"#, 10),
        ),
        _ => Reply::json(
            404,
            r#"{"error":{"message":"File Not Found","type":"not_found_error","code":404}}"#,
        ),
    })
    .await
}

fn typed(rt: &mut Runtime, text: &str) {
    for c in text.chars() {
        for cmd in rt
            .app
            .on_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE))
        {
            rt.execute(cmd);
        }
    }
}

fn pump(rt: &mut Runtime, rx: &mut tokio::sync::mpsc::UnboundedReceiver<UiMsg>) {
    wait_until(rt, rx, |a| !a.chat.as_ref().is_some_and(|c| c.busy));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chat_message_is_masked_answered_and_judged_and_the_raw_pii_goes_nowhere() {
    let server = server().await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("k.db");
    let services = Services {
        store: StoreHandle::spawn(Store::open(&db).unwrap()),
        rules: RuleSet::builtin().unwrap(),
        duo: DuoConfig::builtin().unwrap(),
        llm: llm_fake::config(&server.url, Some(ApiKind::OpenAi)),
        analyzer: Arc::new(FallbackAnalyzer),
        replay_speed: 1.0,
        vault: Some(kakeai::vault::SharedVault::new(kakeai::vault::sample())),
        safety: kakeai::safety::SharedSafety::ready(kakeai::safety::SafetyRules::builtin()),
    };
    let (mut rt, mut rx) = Runtime::new(app(), services);
    for cmd in rt
        .app
        .on_key(KeyEvent::new(KeyCode::Char('C'), KeyModifiers::NONE))
    {
        rt.execute(cmd);
    }
    assert!(rt.app.chat.is_some());
    typed(&mut rt, "佐藤さんから090-1234-5678に電話がきたよ");
    for cmd in rt
        .app
        .on_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE))
    {
        rt.execute(cmd);
    }
    pump(&mut rt, &mut rx);
    let chat = rt.app.chat.as_ref().unwrap();
    let e = &chat.exchanges[0];
    assert_eq!(e.masked, "[氏名]さんから[電話番号]に電話がきたよ");
    assert_eq!(e.masked_kinds, ["氏名", "電話番号"]);
    assert_eq!(e.reply, "えー、ほんと？じゃあ一緒に行こうよ！");
    assert_eq!(e.source, Source::Llm);
    assert!(e.verdict.is_some(), "{:?}", e.trace);
    assert!(
        e.trace
            .iter()
            .any(|s| s.starts_with("PII: masked 氏名・電話番号")),
        "{:?}",
        e.trace
    );
    assert!(
        e.trace.iter().any(|s| s.starts_with("Director:")),
        "{:?}",
        e.trace
    );
    // The model saw only the masked text, and やな's own view of the vault.
    let bodies: Vec<String> = server
        .recorded()
        .into_iter()
        .filter(|r| r.path == "/v1/chat/completions")
        .map(|r| r.json().to_string())
        .collect();
    assert!(
        bodies
            .iter()
            .any(|b| b.contains("[氏名]さんから[電話番号]"))
    );
    for b in &bodies {
        assert!(!b.contains("佐藤") && !b.contains("090-1234-5678"), "{b}");
    }
    // The banner says what was masked.
    let mut t = ratatui::Terminal::new(ratatui::backend::TestBackend::new(100, 30)).unwrap();
    t.draw(|f| kakeai::tui::render::draw(f, &rt.app)).unwrap();
    let screen = t.backend().to_string();
    assert!(screen.contains("個人情報をマスクしました"), "{screen}");
    assert!(!screen.contains("佐藤"));
}

/// A fake whose every reply talks about being a language model.
async fn meta_server() -> FakeServer {
    FakeServer::with(|req: &Recorded, _| match req.path.as_str() {
        _ if llm_fake::pii_nothing(req).is_some() => llm_fake::pii_nothing(req).unwrap(),
        "/v1/models" => Reply::json(
            200,
            r#"{"object":"list","data":[{"id":"tiny-ja","object":"model","owned_by":"llamacpp"}]}"#,
        ),
        "/v1/chat/completions" if req.json()["stream"] == true => Reply::sse(parts(&sse_events(
            "tiny-ja",
            &[
                "ごめんね、",
                "私はAIの",
                "言語モデルだから",
                "分からないよ。",
            ],
            "stop",
            4,
        ))),
        "/v1/chat/completions" => Reply::json(
            200,
            &openai_reply("tiny-ja", r#"{"context_type":"通常","confidence":0.9}"#, 10),
        ),
        _ => Reply::json(
            404,
            r#"{"error":{"message":"File Not Found","type":"not_found_error","code":404}}"#,
        ),
    })
    .await
}

fn runtime(
    url: &str,
    db: &std::path::Path,
) -> (Runtime, tokio::sync::mpsc::UnboundedReceiver<UiMsg>) {
    let services = Services {
        store: StoreHandle::spawn(Store::open(db).unwrap()),
        rules: RuleSet::builtin().unwrap(),
        duo: DuoConfig::builtin().unwrap(),
        llm: llm_fake::config(url, Some(ApiKind::OpenAi)),
        analyzer: Arc::new(FallbackAnalyzer),
        replay_speed: 1.0,
        vault: None,
        safety: kakeai::safety::SharedSafety::ready(kakeai::safety::SafetyRules::builtin()),
    };
    Runtime::new(app(), services)
}

fn send(rt: &mut Runtime, rx: &mut tokio::sync::mpsc::UnboundedReceiver<UiMsg>, text: &str) {
    if rt.app.chat.is_none() {
        for cmd in rt
            .app
            .on_key(KeyEvent::new(KeyCode::Char('C'), KeyModifiers::NONE))
        {
            rt.execute(cmd);
        }
    }
    typed(rt, text);
    for cmd in rt
        .app
        .on_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE))
    {
        rt.execute(cmd);
    }
    pump(rt, rx);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_critical_message_is_blocked_before_the_model_and_meta_talk_is_a_worldview_retry() {
    let server = meta_server().await;
    let dir = tempfile::tempdir().unwrap();
    let (mut rt, mut rx) = runtime(&server.url, &dir.path().join("k.db"));
    send(&mut rt, &mut rx, "お前なんかぶっ殺す");
    {
        let e = &rt.app.chat.as_ref().unwrap().exchanges[0];
        assert_eq!(e.source, Source::Blocked, "{:?}", e.trace);
        assert!(e.reply.is_empty());
        assert!(
            e.trace.iter().any(|s| s.starts_with("L1 static_ng: Block")),
            "{:?}",
            e.trace
        );
        assert!(
            e.trace
                .iter()
                .any(|s| s.starts_with("safety: blocked at L1")),
            "{:?}",
            e.trace
        );
    }
    // Only the PII second opinion (on the rule-masked text, before the layers) asks the model;
    // a blocked message is never answered nor judged by Layer 4.
    assert!(
        server
            .recorded()
            .iter()
            .all(|r| r.path != "/v1/chat/completions" || llm_fake::pii_nothing(r).is_some()),
        "a blocked message never reaches the model but for the PII check"
    );
    send(&mut rt, &mut rx, "今日の夕飯、なににする？");
    // Meta talk is a worldview RETRY: chosen as the bot chooses (chat::choose), every attempt
    // is rejected and listed, never said; her fallback line is said instead, marked.
    let e = &rt.app.chat.as_ref().unwrap().exchanges[1];
    assert_eq!(e.source, Source::Fallback, "{:?}", e.trace);
    let attempts = kakeai::serve::config::ServeConfig::defaults().max_attempts;
    assert_eq!(e.rejected.len(), attempts, "{:?}", e.trace);
    for (text, v) in &e.rejected {
        assert_eq!(v.status, kakeai::director::Status::Retry);
        assert!(
            v.findings
                .iter()
                .any(|f| f.rule == kakeai::director::RuleId::Worldview),
            "{v:?}"
        );
        assert_ne!(&e.reply, text, "a rejected line was said");
    }
    let fallback = &kakeai::serve::config::ServeConfig::defaults().lines["yana"].fallback;
    assert_eq!(&e.reply, fallback);
    assert!(kakeai::chat::usable(e.verdict.as_ref().unwrap()));
    assert!(
        e.trace
            .iter()
            .any(|s| s.starts_with("L5 worldview:") && s.contains("in character")),
        "{:?}",
        e.trace
    );
}

/// Chat answers carry their target (issue 23): an answer still in flight when chat mode is
/// closed and opened again never lands under the new chat's message; the new chat's own does.
#[test]
fn a_late_chat_answer_lands_on_its_own_exchange_or_nowhere() {
    use kakeai::tui::app::{ChatMsg, Command};
    let mut a = app();
    let send = |a: &mut App, text: &str| {
        for c in text.chars() {
            a.on_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
        }
        match a
            .on_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE))
            .pop()
        {
            Some(Command::ChatSend { to, .. }) => to,
            other => panic!("no ChatSend: {other:?}"),
        }
    };
    let reply = |t: &str| ChatMsg::Reply {
        text: t.into(),
        source: Source::Llm,
    };
    a.act(kakeai::tui::keymap::Action::Chat);
    let old = send(&mut a, "おはよう");
    // Chat closed while the answer is in flight, then opened again with a new message.
    a.chat = None;
    a.act(kakeai::tui::keymap::Action::Chat);
    let fresh = send(&mut a, "こんばんは");
    assert_ne!(fresh.session, old.session);
    assert_eq!(
        fresh.exchange, old.exchange,
        "both are their chat's first exchange"
    );
    a.on_msg(UiMsg::Chat(old, reply("古い返事")));
    let ex = &a.chat.as_ref().unwrap().exchanges;
    assert_eq!(ex.len(), 1);
    assert_eq!(
        ex[0].reply, "",
        "an old chat's answer landed in the new chat"
    );
    a.on_msg(UiMsg::Chat(fresh, reply("こんばんは！")));
    let ex = &a.chat.as_ref().unwrap().exchanges;
    assert_eq!(ex[0].reply, "こんばんは！");
}

/// Judge calls say じゃれ合い; generation says something harmless.
async fn banter_server() -> FakeServer {
    FakeServer::with(|req: &Recorded, _| match req.path.as_str() {
        _ if llm_fake::pii_nothing(req).is_some() => llm_fake::pii_nothing(req).unwrap(),
        "/v1/models" => Reply::json(
            200,
            r#"{"object":"list","data":[{"id":"tiny-ja","object":"model","owned_by":"llamacpp"}]}"#,
        ),
        "/v1/chat/completions" if req.json()["stream"] == true => Reply::sse(parts(&sse_events(
            "tiny-ja",
            &["そうなんだ、", "ふーん！"],
            "stop",
            2,
        ))),
        "/v1/chat/completions" => Reply::json(
            200,
            &openai_reply(
                "tiny-ja",
                r#"{"context_type":"じゃれ合い","confidence":0.9,"reason":"笑いながらのからかい"}"#,
                10,
            ),
        ),
        _ => Reply::json(
            404,
            r#"{"error":{"message":"File Not Found","type":"not_found_error","code":404}}"#,
        ),
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn banter_is_answered_from_the_pattern_db_and_its_outcome_and_thumb_are_recorded() {
    use kakeai::patterns::{self as pat, Character, NewPattern, ResponseType};
    let server = banter_server().await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("k.db");
    {
        let s = Store::open(&db).unwrap();
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
        pat::db::add(s.db(), &p).unwrap();
    }
    let (mut rt, mut rx) = runtime(&server.url, &db);
    // A returning user: three ordinary messages first.
    for m in ["こんにちは", "今日は晴れてるね", "散歩いこうよ"] {
        send(&mut rt, &mut rx, m);
    }
    send(
        &mut rt,
        &mut rx,
        "山田さんが言ってたけど、やなってほんとバカだなぁ笑",
    );
    let e = rt.app.chat.as_ref().unwrap().exchanges[3].clone();
    let Source::Pattern {
        pattern_id,
        usage_id,
        ..
    } = e.source.clone()
    else {
        panic!("expected a pattern reply: {:?} / {:?}", e.source, e.trace);
    };
    assert_eq!(e.reply, "はぁ？バカって言ったほうがバカなんだからね！");
    assert!(
        e.trace.iter().any(|s| s.contains("context じゃれ合い")),
        "{:?}",
        e.trace
    );
    assert!(
        e.trace
            .iter()
            .any(|s| s.starts_with(&format!("pattern #{pattern_id}"))),
        "{:?}",
        e.trace
    );
    assert!(e.verdict.is_some());
    // 👍 on it (keys: leave the input, select it, +).
    rt.app
        .on_key(KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE));
    rt.app.chat.as_mut().unwrap().selected = 3;
    for cmd in rt
        .app
        .on_key(KeyEvent::new(KeyCode::Char('+'), KeyModifiers::NONE))
    {
        rt.execute(cmd);
    }
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !rt.app.status.contains("pattern feedback") {
        assert!(std::time::Instant::now() < deadline, "{}", rt.app.status);
        match rx.try_recv() {
            Ok(m) => rt.app.on_msg(m),
            Err(_) => std::thread::sleep(Duration::from_millis(5)),
        }
    }
    assert!(rt.app.status.contains("saved"), "{}", rt.app.status);
    // The user answers: the pattern's use is a success.
    for cmd in rt
        .app
        .on_key(KeyEvent::new(KeyCode::Char('C'), KeyModifiers::NONE))
    {
        rt.execute(cmd);
    }
    send(&mut rt, &mut rx, "ごめんごめん");
    let last = &rt.app.chat.as_ref().unwrap().exchanges[4];
    assert!(
        last.trace.iter().any(|s| s.contains("1 success")),
        "{:?}",
        last.trace
    );
    // And again: the banter went on after the pattern (prowrestling_rate's evidence).
    send(&mut rt, &mut rx, "でもやっぱりバカだよね笑");
    drop(rt);
    std::thread::sleep(Duration::from_millis(200));
    let mut s = Store::open(&db).unwrap();
    let p = pat::get(s.db(), pattern_id).unwrap();
    // Used twice in this chat (the last banter was answered from it again, still pending).
    assert_eq!((p.used_count, p.success_count, p.like_count), (12, 10, 1));
    let fb: i64 = s
        .connection()
        .query_row(
            "SELECT feedback FROM prowrestling_usage_log WHERE log_id = ?1",
            [usage_id],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(fb, 1);
    let reaction: String = s
        .connection()
        .query_row(
            "SELECT user_reaction FROM prowrestling_usage_log WHERE log_id = ?1",
            [usage_id],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(reaction, "continued");
    let rows: i64 = s
        .connection()
        .query_row("SELECT COUNT(*) FROM chat_exchanges", [], |r| r.get(0))
        .unwrap();
    assert_eq!(rows, 6);
    // The exchange keeps its 👍 and its trace; the chat is in the conversation log too.
    let (thumb, trace): (i64, String) = s
        .connection()
        .query_row(
            "SELECT thumb, trace FROM chat_exchanges WHERE id = 4",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(thumb, 1);
    assert!(trace.contains("context じゃれ合い"), "{trace}");
    let logged: Vec<(String, Option<i64>)> = s
        .connection()
        .prepare("SELECT role, pattern_id FROM conversation_messages ORDER BY at_ms, message_id")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(logged.len(), 12, "{logged:?}");
    assert_eq!(logged[7], ("bot".to_string(), Some(pattern_id)));
    let (masked, hash): (String, String) = s
        .connection()
        .query_row(
            "SELECT user_masked, original_content_hash FROM chat_exchanges WHERE id = 4",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert!(masked.starts_with("[氏名]さんが言ってた"), "{masked}");
    let raw = "山田さんが言ってたけど、やなってほんとバカだなぁ笑";
    assert_eq!(hash, test_key().message_digest(raw));
    assert_ne!(hash, kakeai::safety::pii::sha256_hex(raw));
    drop(s);
    // No raw name anywhere in the database files.
    for f in std::fs::read_dir(dir.path()).unwrap() {
        let bytes = std::fs::read(f.unwrap().path()).unwrap();
        assert!(!String::from_utf8_lossy(&bytes).contains("山田"));
    }
}

fn wait_status(rt: &mut Runtime, rx: &mut tokio::sync::mpsc::UnboundedReceiver<UiMsg>, want: &str) {
    wait_until(rt, rx, |a| a.status.contains(want));
}

fn key(rt: &mut Runtime, c: char) {
    for cmd in rt
        .app
        .on_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE))
    {
        rt.execute(cmd);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reviewed_reply_is_promoted_to_a_pattern_and_shows_in_the_patterns_pane() {
    let server = server().await;
    let dir = tempfile::tempdir().unwrap();
    let (mut rt, mut rx) = runtime(&server.url, &dir.path().join("k.db"));
    send(&mut rt, &mut rx, "週末どこか行こうよ");
    rt.app
        .on_key(KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE));
    key(&mut rt, 'P');
    // ←/→ picks the reply type; Enter promotes with the typed message type (からかい → 誘い).
    rt.app
        .on_key(KeyEvent::new(KeyCode::Right, KeyModifiers::NONE));
    for _ in 0.."からかい".chars().count() {
        rt.app
            .on_key(KeyEvent::new(KeyCode::Backspace, KeyModifiers::NONE));
    }
    for c in "誘い".chars() {
        key(&mut rt, c);
    }
    for cmd in rt
        .app
        .on_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE))
    {
        rt.execute(cmd);
    }
    wait_status(&mut rt, &mut rx, "added");
    assert!(
        rt.app.status.starts_with("pattern #1 added"),
        "{}",
        rt.app.status
    );
    wait_until(&mut rt, &mut rx, |a| !a.rooms.patterns.rows.is_empty());
    let rows = &rt.app.rooms.patterns.rows;
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].user_message_type, "誘い");
    assert_eq!(rows[0].bot_response_type, "流し");
    assert_eq!(rows[0].user_message_example, "週末どこか行こうよ");
    assert_eq!(rows[0].bot_response, "えー、ほんと？じゃあ一緒に行こうよ！");
    // The pane: v four times from detail.
    for _ in 0..4 {
        key(&mut rt, 'v');
    }
    let mut t = ratatui::Terminal::new(ratatui::backend::TestBackend::new(140, 40)).unwrap();
    t.draw(|f| kakeai::tui::render::draw(f, &rt.app)).unwrap();
    let screen = t.backend().to_string();
    assert!(screen.contains("1 patterns · sort score"), "{screen}");
    assert!(screen.contains("#1 誘い → 流し"), "{screen}");
    insta::assert_snapshot!("patterns_140x40", screen);
    let mut t = ratatui::Terminal::new(ratatui::backend::TestBackend::new(100, 30)).unwrap();
    t.draw(|f| kakeai::tui::render::draw(f, &rt.app)).unwrap();
    insta::assert_snapshot!("patterns_100x30", t.backend().to_string());
    // Dropouts: none without ingested logs, said plainly.
    key(&mut rt, 'D');
    wait_until(&mut rt, &mut rx, |a| a.rooms.patterns.review);
    let mut t = ratatui::Terminal::new(ratatui::backend::TestBackend::new(140, 40)).unwrap();
    t.draw(|f| kakeai::tui::render::draw(f, &rt.app)).unwrap();
    assert!(t.backend().to_string().contains("no dropouts"));
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
async fn a_dropouts_draft_is_edited_in_the_pane_and_accepted_as_a_counterfactual() {
    use kakeai::patterns::ingest::{IngestOptions, ingest, parse_log};
    let server = server().await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("k.db");
    {
        // A conversation that ended after やな's line two hours ago: a dropout.
        let s = Store::open(&db).unwrap();
        let t = kakeai::patterns::stamp::now_ms() / 1000 - 7200;
        let log = [
            serde_json::json!({"conversation_id": "c1", "user_id": "u1", "role": "user",
                "text": "やなって料理できるの？", "timestamp": t, "character": "yana"}),
            serde_json::json!({"conversation_id": "c1", "user_id": "u1", "role": "bot",
                "text": "できるよ。", "timestamp": t + 5, "character": "yana"}),
        ]
        .map(|v| v.to_string())
        .join("\n");
        let opts = IngestOptions {
            window_secs: 1800,
            as_of: kakeai::patterns::stamp::now_ms(),
            source: "test".into(),
        };
        let r = ingest(s.db(), &parse_log(&log).unwrap(), &opts).unwrap();
        assert_eq!(r.dropouts, 1);
    }
    let (mut rt, mut rx) = runtime(&server.url, &db);
    for _ in 0..4 {
        key(&mut rt, 'v');
    }
    key(&mut rt, 'D');
    wait_until(&mut rt, &mut rx, |a| a.rooms.patterns.dropouts.len() == 1);
    // Drafts as the model would have sent them (the drafting request is tested elsewhere).
    rt.app.rooms.patterns.dropouts[0].drafts = vec![
        ("プロレス受け".into(), "できるってば、疑うの？".into()),
        ("流し".into(), "まあね、カレーくらいなら。".into()),
        ("カウンター".into(), "そっちこそ作れるの？".into()),
    ];
    rt.app.rooms.patterns.dropouts[0].message_type = Some("疑い".into());
    key(&mut rt, '>');
    key(&mut rt, 'y');
    assert!(matches!(
        rt.app.modal,
        Some(kakeai::tui::app::Modal::Draft { .. })
    ));
    // The reviewer rewrites the ending before accepting.
    for _ in 0.."くらいなら。".chars().count() {
        rt.app
            .on_key(KeyEvent::new(KeyCode::Backspace, KeyModifiers::NONE));
    }
    typed(&mut rt, "は得意だよ、今度作ってあげる。");
    for cmd in rt
        .app
        .on_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE))
    {
        rt.execute(cmd);
    }
    wait_status(&mut rt, &mut rx, "counterfactual");
    assert!(rt.app.status.contains("added"), "{}", rt.app.status);
    drop(rt);
    std::thread::sleep(Duration::from_millis(200));
    let s = Store::open(&db).unwrap();
    let (resp, kind, cf, mtype, example): (String, String, i64, String, String) = s
        .conn()
        .query_row(
            "SELECT bot_response, bot_response_type, is_counterfactual, user_message_type,
                    user_message_example FROM prowrestling_patterns",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
        )
        .unwrap();
    assert_eq!(resp, "まあね、カレーは得意だよ、今度作ってあげる。");
    assert_eq!((kind.as_str(), cf), ("流し", 1));
    assert_eq!(
        (mtype.as_str(), example.as_str()),
        ("疑い", "やなって料理できるの？")
    );
}

/// ctrl-t switches to the other sister's own conversation: her prompt history holds only her
/// exchanges, and every reply stays labelled with the sister who gave it.
#[test]
fn ctrl_t_starts_the_other_sisters_own_history() {
    use kakeai::tui::app::{ChatMsg, Command};
    let mut a = app();
    a.act(kakeai::tui::keymap::Action::Chat);
    let send = |a: &mut App, text: &str| -> (String, Vec<kakeai::chat::Turn>) {
        for c in text.chars() {
            a.on_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
        }
        let cmds = a.on_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
        let Some(Command::ChatSend {
            character,
            history,
            to,
            ..
        }) = cmds.into_iter().next()
        else {
            panic!("no ChatSend")
        };
        a.on_msg(UiMsg::Chat(
            to,
            ChatMsg::Reply {
                text: format!("{character}の返事"),
                source: Source::Llm,
            },
        ));
        a.on_msg(UiMsg::Chat(
            to,
            ChatMsg::Done {
                id: None,
                error: None,
            },
        ));
        (character, history)
    };
    let ctrl_t = KeyEvent::new(KeyCode::Char('t'), KeyModifiers::CONTROL);
    assert_eq!(send(&mut a, "おはよう"), ("yana".into(), vec![]));
    a.on_key(ctrl_t);
    let (who, history) = send(&mut a, "こんにちは");
    assert_eq!(who, "ayu");
    assert!(
        history.is_empty(),
        "やな's replies are not あゆ's: {history:?}"
    );
    a.on_key(ctrl_t);
    let (who, history) = send(&mut a, "また来たよ");
    assert_eq!(who, "yana");
    assert_eq!(history.len(), 1);
    assert_eq!(history[0].reply, "yanaの返事");
    let chat = a.chat.as_ref().unwrap();
    let labels: Vec<&str> = chat
        .exchanges
        .iter()
        .map(|e| e.character.as_str())
        .collect();
    assert_eq!(labels, ["yana", "ayu", "yana"]);
}

/// A fake whose streamed reply is a piece of the system prompt it was sent: `pick` chooses which
/// line of that prompt it reads back (the request decides the reply, as a copying model does).
async fn echo_server(pick: fn(&[&str]) -> String) -> FakeServer {
    FakeServer::with(move |req: &Recorded, _| match req.path.as_str() {
        _ if llm_fake::pii_nothing(req).is_some() => llm_fake::pii_nothing(req).unwrap(),
        "/v1/models" => Reply::json(
            200,
            r#"{"object":"list","data":[{"id":"tiny-ja","object":"model","owned_by":"llamacpp"}]}"#,
        ),
        "/v1/chat/completions" if req.json()["stream"] == true => {
            let body = req.json();
            let system = body["messages"][0]["content"]
                .as_str()
                .unwrap_or("")
                .to_string();
            let lines: Vec<&str> = system.lines().filter(|l| !l.trim().is_empty()).collect();
            let reply = pick(&lines);
            let chars: Vec<char> = reply.chars().collect();
            let pieces: Vec<String> = chars.chunks(7).map(|c| c.iter().collect()).collect();
            let pieces: Vec<&str> = pieces.iter().map(String::as_str).collect();
            Reply::sse(parts(&sse_events("tiny-ja", &pieces, "stop", 9)))
        }
        "/v1/chat/completions" => Reply::json(
            200,
            &openai_reply("tiny-ja", r#"{"context_type":"通常","confidence":0.9}"#, 10),
        ),
        _ => Reply::json(
            404,
            r#"{"error":{"message":"File Not Found","type":"not_found_error","code":404}}"#,
        ),
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chat_reply_that_reads_back_its_system_prompt_is_a_prompt_echo() {
    // Which part of the chat system prompt is read back: the situation line (chat-only
    // wording), the persona's opening line, or the situation with a cheerful lead-in.
    // (Without a system role the prompt travels in the first user message, the user's words
    // after it: the situation line is found by its wording, not its place.)
    fn situation(l: &[&str]) -> String {
        l.iter()
            .find(|s| s.contains("一対一"))
            .map(|s| s.to_string())
            .unwrap_or_default()
    }
    let picks: [fn(&[&str]) -> String; 3] = [
        situation,
        |l| l.first().map(|s| s.to_string()).unwrap_or_default(),
        |l| format!("うん！ {}", situation(l)),
    ];
    for (i, pick) in picks.into_iter().enumerate() {
        let server = echo_server(pick).await;
        let dir = tempfile::tempdir().unwrap();
        let (mut rt, mut rx) = runtime(&server.url, &dir.path().join("k.db"));
        send(&mut rt, &mut rx, "今日の夕飯、なににする？");
        let e = &rt.app.chat.as_ref().unwrap().exchanges[0];
        // The echo is never said: each attempt is rejected and listed, her fallback is said.
        assert_eq!(e.source, Source::Fallback, "pick {i}: {:?}", e.trace);
        assert!(!e.rejected.is_empty(), "pick {i}");
        for (text, v) in &e.rejected {
            assert_eq!(
                v.status,
                kakeai::director::Status::Retry,
                "pick {i}: {text}: {v:?}"
            );
            assert!(
                v.findings
                    .iter()
                    .any(|f| f.rule == kakeai::director::RuleId::PromptEcho),
                "pick {i}: {text}: {v:?}"
            );
        }
        assert!(
            kakeai::chat::usable(e.verdict.as_ref().unwrap()),
            "pick {i}"
        );
    }
    // An answer in her own words is not an echo.
    let server = server().await;
    let dir = tempfile::tempdir().unwrap();
    let (mut rt, mut rx) = runtime(&server.url, &dir.path().join("k.db"));
    send(&mut rt, &mut rx, "今日の夕飯、なににする？");
    let e = &rt.app.chat.as_ref().unwrap().exchanges[0];
    let v = e.verdict.as_ref().unwrap();
    assert!(
        v.findings
            .iter()
            .all(|f| f.rule != kakeai::director::RuleId::PromptEcho),
        "{v:?}"
    );
}

/// The model's second opinion in chat mode (policy.toml `[pii]`, fail-closed by default): what
/// it finds is masked before any other request carries the message; when it cannot be had, the
/// message goes to no model and the exchange says why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_pii_second_opinion_masks_more_and_fails_closed() {
    for fails in [false, true] {
        let server = FakeServer::with(move |req: &Recorded, _| {
            if llm_fake::pii_nothing(req).is_some() {
                if fails {
                    return Reply::json(500, r#"{"error":{"code":500,"message":"x"}}"#);
                }
                assert!(req.body.contains("モッチー"), "{}", req.body);
                let reply =
                    "PII_DETECTED: true\nMASKED_TEXT: きのう[氏名]と駅前のカフェに行ったよ\nDETECTED_ITEMS: 氏名";
                return Reply::json(200, &openai_reply("tiny-ja", reply, 12));
            }
            match req.path.as_str() {
                "/v1/chat/completions" if req.json()["stream"] == true => Reply::sse(parts(
                    &sse_events("tiny-ja", &["えー、", "いいね！"], "stop", 2),
                )),
                _ => Reply::json(
                    200,
                    &openai_reply("tiny-ja", r#"{"context_type":"通常","confidence":0.9}"#, 10),
                ),
            }
        })
        .await;
        let dir = tempfile::tempdir().unwrap();
        let services = common::tui::services(
            &dir.path().join("k.db"),
            llm_fake::config(&server.url, Some(ApiKind::OpenAi)),
            None,
        );
        let (mut rt, mut rx) = Runtime::new(app(), services);
        for cmd in rt
            .app
            .on_key(KeyEvent::new(KeyCode::Char('C'), KeyModifiers::NONE))
        {
            rt.execute(cmd);
        }
        // A shape neither the rules nor the learned labeller tell is a person (behind 会う the
        // rules find the name themselves; ミナミン the labeller now reads as a name).
        typed(&mut rt, "きのうモッチーと駅前のカフェに行ったよ");
        for cmd in rt
            .app
            .on_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE))
        {
            rt.execute(cmd);
        }
        pump(&mut rt, &mut rx);
        let e = &rt.app.chat.as_ref().unwrap().exchanges[0];
        // Only the check itself ever carried the nickname.
        for r in server.recorded() {
            if llm_fake::pii_nothing(&r).is_none() {
                assert!(!r.body.contains("モッチー"), "{}", r.body);
            }
        }
        if fails {
            assert!(
                matches!(&e.source, Source::Failed(why) if why.contains("PII not checked")),
                "{:?} {:?}",
                e.source,
                e.trace
            );
            assert!(
                !server.recorded().iter().any(|r| r.json()["stream"] == true),
                "no reply was generated"
            );
        } else {
            assert_eq!(
                e.masked, "きのう[氏名]と駅前のカフェに行ったよ",
                "{:?}",
                e.trace
            );
            assert_eq!(e.source, Source::Llm, "{:?}", e.trace);
        }
    }
}

/// While the message input is open it owns every printable key, whatever the right pane shows:
/// every letter, digit and symbol (and ｶﾞ, 🇯🇵, a ZWJ family) typed in chat with each pane on
/// the right lands in the message — no quit, no pause, stop or regeneration, no pane change.
#[test]
fn the_chat_input_owns_every_printable_key_in_every_pane() {
    use kakeai::tui::app::Command;
    use kakeai::tui::focus::Pane;
    let printable: String = (0x21u8..0x7f).map(char::from).collect();
    let text = format!("{printable} ｶﾞ🇯🇵👨‍👩‍👧 quiet");
    for pane in Pane::ALL {
        let mut a = app();
        a.act(kakeai::tui::keymap::Action::Chat);
        a.pane = pane;
        for c in text.chars() {
            let cmds = a.on_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
            assert!(
                cmds.iter().all(|c| !matches!(
                    c,
                    Command::StartLive(_) | Command::StartDemo | Command::Control(_)
                )),
                "{pane:?}: {c:?} gave {cmds:?}"
            );
            assert!(!a.quit, "{pane:?}: {c:?} quit the workbench");
            assert_eq!(a.pane, pane, "{pane:?}: {c:?} changed the pane");
        }
        let typed = a.chat.as_ref().unwrap().input.lines().join("\n");
        assert_eq!(typed, text, "{pane:?}");
        let cmds = a.on_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
        assert!(
            matches!(cmds.first(), Some(Command::ChatSend { text: t, .. }) if *t == text),
            "{pane:?}: {cmds:?}"
        );
    }
}

/// Esc then a key, read together, is Alt+key: in the message box that is Esc, then the key —
/// over every letter the panes answer to, never typed into the message.
#[test]
fn an_escape_read_with_the_next_key_is_escape_then_that_key() {
    let mut a = app();
    a.on_key(KeyEvent::new(KeyCode::Char('C'), KeyModifiers::SHIFT));
    assert!(
        a.chat.as_ref().is_some_and(|c| c.typing),
        "C opens the message"
    );
    for round in 0..6 {
        let before = a.pane;
        a.on_key(KeyEvent::new(KeyCode::Char('v'), KeyModifiers::ALT));
        let chat = a.chat.as_ref().expect("chat stays open");
        assert!(!chat.typing, "round {round}: Esc left the message box");
        assert!(
            chat.input.lines().concat().is_empty(),
            "round {round}: v was typed"
        );
        assert_ne!(a.pane, before, "round {round}: v showed the next pane");
        a.on_key(KeyEvent::new(KeyCode::Char('C'), KeyModifiers::SHIFT));
        assert!(
            a.chat.as_ref().is_some_and(|c| c.typing),
            "round {round}: C returns"
        );
    }
}
