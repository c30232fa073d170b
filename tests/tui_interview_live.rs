//! Interview mode in the workbench chat, through the app and runtime with a fake
//! OpenAI-compatible endpoint: `/interview sample` starts it, the status bar follows the state,
//! the turn count and the deepening count as answers go in, Tab skips, and `/insights` opens
//! the insights view.

mod common;

#[path = "llm_fake/mod.rs"]
mod llm_fake;

use std::sync::Arc;
use std::time::Duration;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use kakeai::director::RuleSet;
use kakeai::duo::DuoConfig;
use kakeai::interview::State;
use kakeai::llm::ApiKind;
use kakeai::store::{Store, StoreHandle};
use kakeai::text::analyzer::fallback::FallbackAnalyzer;
use kakeai::tui::app::{App, Conn, UiMsg};
use kakeai::tui::{Runtime, Services};
use llm_fake::{FakeServer, Recorded, Reply, openai_reply, parts, sse_events};

fn app() -> App {
    kakeai::safety::pii::keyfile::install_key(kakeai::safety::pii::DigestKey::from_bytes(&[7; 32]));
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
        "/v1/models" => Reply::json(
            200,
            r#"{"object":"list","data":[{"id":"tiny-ja","object":"model","owned_by":"llamacpp"}]}"#,
        ),
        "/v1/chat/completions" if req.json()["stream"] == true => Reply::sse(parts(&sse_events(
            "tiny-ja",
            &[
                "よくわかりました。",
                "つまり、大変なんですね。",
                "どんな時ですか？",
            ],
            "stop",
            3,
        ))),
        "/v1/chat/completions" => Reply::json(200, &openai_reply("tiny-ja", "THEME: x", 3)),
        _ => Reply::json(404, r#"{"error":{"message":"File Not Found","code":404}}"#),
    })
    .await
}

fn key(rt: &mut Runtime, code: KeyCode) {
    for cmd in rt.app.on_key(KeyEvent::new(code, KeyModifiers::NONE)) {
        rt.execute(cmd);
    }
}

fn typed(rt: &mut Runtime, text: &str) {
    for c in text.chars() {
        key(rt, KeyCode::Char(c));
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

fn replies(a: &App) -> usize {
    a.interview
        .as_ref()
        .map_or(0, |v| v.lines.iter().filter(|l| l.who != "user").count())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn interview_mode_follows_state_turns_and_deepening_live() {
    let server = server().await;
    let dir = tempfile::tempdir().unwrap();
    let services = Services {
        store: StoreHandle::spawn(Store::open(&dir.path().join("k.db")).unwrap()),
        rules: RuleSet::builtin().unwrap(),
        duo: DuoConfig::builtin().unwrap(),
        llm: llm_fake::config(&server.url, Some(ApiKind::OpenAi)),
        analyzer: Arc::new(FallbackAnalyzer),
        replay_speed: 1.0,
        vault: None,
        safety: kakeai::safety::SharedSafety::ready(kakeai::safety::SafetyRules::builtin()),
    };
    let (mut rt, mut rx) = Runtime::new(app(), services);
    key(&mut rt, KeyCode::Char('C'));
    typed(&mut rt, "/interview sample");
    key(&mut rt, KeyCode::Enter);
    wait_until(&mut rt, &mut rx, |a| replies(a) == 1);
    let answers = [
        ("はい", State::Intro, 0),
        ("いいですよ", State::Enumerate, 0),
        ("献立、買い物、洗い物", State::Recommend, 0),
        ("そうです", State::Choose, 0),
        ("献立です", State::Deepening, 0),
        ("", State::Deepening, 1), // Tab: [スキップ]
        ("週末に決めたい", State::SummaryCheck, 2),
        ("はい", State::Done, 2),
    ];
    for (i, (text, state, deep)) in answers.into_iter().enumerate() {
        if text.is_empty() {
            key(&mut rt, KeyCode::Tab);
        } else {
            typed(&mut rt, text);
            key(&mut rt, KeyCode::Enter);
        }
        wait_until(&mut rt, &mut rx, |a| replies(a) == i + 2);
        let v = rt.app.interview.as_ref().unwrap();
        assert_eq!(
            (v.state, v.user_turns, v.deep),
            (state, i + 1, deep),
            "after {text:?}"
        );
    }
    let v = rt.app.interview.as_ref().unwrap();
    assert!(v.lines.iter().any(|l| l.text == "[スキップ]"));
    assert!(!v.fallback);
    // The queued analysis runs on its own once the interview is done.
    wait_until(&mut rt, &mut rx, |a| {
        a.status.starts_with("interview analysed")
    });
    key(&mut rt, KeyCode::Esc);
    assert!(rt.app.interview.is_none());
    typed(&mut rt, "/insights");
    key(&mut rt, KeyCode::Enter);
    wait_until(&mut rt, &mut rx, |a| a.insights.is_some());
    let cards = rt.app.insights.as_ref().unwrap().cards();
    assert_eq!(cards.len(), 1, "the fake model's one theme");
    assert_eq!(cards[0].theme, "x");
    key(&mut rt, KeyCode::Esc);
    assert!(rt.app.insights.is_none());
}
