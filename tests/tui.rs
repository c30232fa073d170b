//! The workbench without a terminal: pane snapshots (TestBackend, two sizes, Japanese text) in
//! the states a user meets, and a key-driven harness from keystrokes to rows in the store.

use std::sync::Arc;
use std::time::Duration;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use kakeai::director::{self, RuleSet, Verdict};
use kakeai::duo::prompt::Prompt;
use kakeai::duo::records::{AttemptRecord, GenStats, TurnFlags, TurnRecord};
use kakeai::duo::topic::DepthStep;
use kakeai::duo::{DuoConfig, Effect};
use kakeai::llm::LlmConfig;
use kakeai::store::{ActionKind, Store, StoreHandle};
use kakeai::text::Analysis;
use kakeai::text::analyzer::fallback::FallbackAnalyzer;
use kakeai::tui::app::{App, Conn, UiMsg};
use kakeai::tui::{Runtime, Services};

mod common;
use common::tui::screen;

fn app(conn: Conn) -> App {
    let h = common::tui::header;
    common::tui::app(h(
        "http://127.0.0.1:11434",
        "gemma2:27b",
        conn,
        "0123456789ab",
        "/tmp/kakeai.db",
    ))
}

fn verdict(speaker: &str, text: &str) -> Verdict {
    let rules = RuleSet::builtin().unwrap();
    let c = rules.character(speaker).unwrap();
    director::judge(&rules, &FallbackAnalyzer, c, &Analysis::new(text), &[])
}

fn fx(app: &mut App, e: Effect) {
    app.on_msg(UiMsg::Effect(Box::new(e)));
}

fn attempt(app: &mut App, turn: usize, speaker: &str, n: usize, text: &str, commit: bool) {
    fx(
        app,
        Effect::Generate {
            turn,
            speaker: speaker.into(),
            attempt: n,
            prompt: Prompt {
                messages: vec![],
                dropped: 0,
                chars: 0,
                hash: String::new(),
            },
            guidance: if n > 1 {
                vec!["前回の案は採用されませんでした。".into()]
            } else {
                vec![]
            },
        },
    );
    let v = verdict(speaker, text);
    fx(
        app,
        Effect::AttemptDone(Box::new(AttemptRecord {
            turn,
            speaker: speaker.into(),
            attempt: n,
            text: text.into(),
            verdict: v.clone(),
            judge: None,
            guidance: vec![],
            prompt_hash: String::new(),
            stats: GenStats::default(),
            keywords: vec![],
            analysis: None,
        })),
    );
    if commit {
        fx(
            app,
            Effect::TurnCommitted(Box::new(TurnRecord {
                turn,
                speaker: speaker.into(),
                attempt: n,
                text: text.into(),
                verdict: v,
                flags: TurnFlags::default(),
                hook: Some("金魚すくい".into()),
                depth: 1,
                step: DepthStep::Surface,
            })),
        );
    }
}

/// A run with a retried turn: あゆ's first try is casual (RETRY), her second passes.
fn with_retry() -> App {
    let mut a = app(Conn::Up {
        api: "ollama".into(),
    });
    a.on_msg(UiMsg::RunStarted {
        run_id: 7,
        topic: "夏祭りの屋台".into(),
    });
    fx(
        &mut a,
        Effect::TurnStarted {
            turn: 1,
            speaker: "yana".into(),
        },
    );
    attempt(
        &mut a,
        1,
        "yana",
        1,
        "わ！金魚すくいの屋台、すっごい人だね！",
        true,
    );
    fx(
        &mut a,
        Effect::TurnStarted {
            turn: 2,
            speaker: "ayu".into(),
        },
    );
    attempt(
        &mut a,
        2,
        "ayu",
        1,
        "うん、いいじゃん！やってみよう～",
        false,
    );
    attempt(
        &mut a,
        2,
        "ayu",
        2,
        "姉様、金魚すくいは紙が破れやすいので、斜めに入れるのがコツですよ。",
        true,
    );
    a
}

#[test]
fn snapshot_empty_and_endpoint_down() {
    let a = app(Conn::Probing);
    insta::assert_snapshot!("empty_100x30", screen(&a, 100, 30));
    insta::assert_snapshot!("empty_140x40", screen(&a, 140, 40));
    let mut a = app(Conn::Probing);
    a.on_msg(UiMsg::Connection(Conn::Down(
        "connection refused (http://127.0.0.1:11434/api/tags, model gemma2:27b): is the server running?".into(),
    )));
    insta::assert_snapshot!("down_100x30", screen(&a, 100, 30));
    insta::assert_snapshot!("down_140x40", screen(&a, 140, 40));
}

#[test]
fn snapshot_retry_with_attempts() {
    let mut a = with_retry();
    insta::assert_snapshot!("retry_100x30", screen(&a, 100, 30));
    insta::assert_snapshot!("retry_140x40", screen(&a, 140, 40));
    // The reviewer looks at the rejected attempt: its findings and highlighted span.
    a.act(kakeai::tui::keymap::Action::PrevAttempt);
    insta::assert_snapshot!("retry_attempt1_140x40", screen(&a, 140, 40));
    insta::assert_snapshot!("retry_attempt1_100x30", screen(&a, 100, 30));
}

#[test]
fn snapshot_streaming() {
    let mut a = with_retry();
    fx(
        &mut a,
        Effect::TurnStarted {
            turn: 3,
            speaker: "yana".into(),
        },
    );
    fx(
        &mut a,
        Effect::Generate {
            turn: 3,
            speaker: "yana".into(),
            attempt: 1,
            prompt: Prompt {
                messages: vec![],
                dropped: 0,
                chars: 0,
                hash: String::new(),
            },
            guidance: vec![],
        },
    );
    for d in ["へぇ", "、斜め", "なんだ", "！"] {
        a.on_msg(UiMsg::Token {
            turn: 3,
            attempt: 1,
            delta: d.into(),
            at: std::time::Instant::now(),
        });
    }
    a.run.refresh_counts();
    let s = screen(&a, 100, 30);
    assert!(s.contains("へぇ、斜めなんだ！▌"), "{s}");
    insta::assert_snapshot!("streaming_100x30", s);
    insta::assert_snapshot!("streaming_140x40", screen(&a, 140, 40));
}

fn key(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE)
}

fn code(k: KeyCode) -> KeyEvent {
    KeyEvent::new(k, KeyModifiers::NONE)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_drive_a_demo_run_and_every_review_lands_in_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let store = StoreHandle::spawn(Store::open(&dir.path().join("k.db")).unwrap());
    let services = Services {
        store: store.clone(),
        rules: RuleSet::builtin().unwrap(),
        duo: DuoConfig::builtin().unwrap(),
        llm: LlmConfig::default(),
        analyzer: Arc::new(FallbackAnalyzer),
        replay_speed: 1000.0,
        vault: None,
        safety: kakeai::safety::SharedSafety::ready(kakeai::safety::SafetyRules::builtin()),
    };
    let (mut rt, mut rx) = Runtime::new(app(Conn::Probing), services);
    let pump = |rt: &mut Runtime,
                rx: &mut tokio::sync::mpsc::UnboundedReceiver<UiMsg>,
                until: &dyn Fn(&App) -> bool| {
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        while !until(&rt.app) {
            assert!(
                std::time::Instant::now() < deadline,
                "timed out; status: {}",
                rt.app.status
            );
            match rx.try_recv() {
                Ok(m) => rt.app.on_msg(m),
                Err(_) => std::thread::sleep(Duration::from_millis(5)),
            }
        }
    };
    for cmd in rt.app.on_key(key('d')) {
        rt.execute(cmd);
    }
    pump(&mut rt, &mut rx, &|a| {
        matches!(a.run.state, kakeai::tui::view::RunState::Done(..))
    });
    let turns = rt.app.run.turns.len();
    assert!(turns >= 1);
    assert!(rt.app.run.turns.iter().all(|t| t.committed.is_some()));

    // 👍 the last turn, then override it with a reason, then a feedback note.
    let mut keys = vec![
        key('+'),
        key('o'),
        code(KeyCode::Right),
        code(KeyCode::Right),
    ];
    keys.extend("口調が硬い".chars().map(key));
    keys.push(code(KeyCode::Enter));
    keys.push(key('f'));
    keys.push(code(KeyCode::Right));
    keys.extend("説明が長い".chars().map(key));
    // The fix goes on the second line (ctrl-j; alt-enter works too).
    keys.push(KeyEvent::new(KeyCode::Char('j'), KeyModifiers::CONTROL));
    keys.extend("一文に".chars().map(key));
    keys.push(KeyEvent::new(KeyCode::Enter, KeyModifiers::ALT));
    keys.extend("まとめる".chars().map(key));
    keys.push(code(KeyCode::Enter));
    for k in keys {
        for cmd in rt.app.on_key(k) {
            rt.execute(cmd);
        }
    }
    pump(&mut rt, &mut rx, &|a| {
        a.run.turns.last().is_some_and(|t| t.review.saved()) && a.status.ends_with("saved ✓")
    });
    let run_id = rt.app.run.run_id.unwrap();
    // Saved means committed: wait for all three acknowledgements.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let actions = loop {
        let rec = store.call(move |s| s.load_run(run_id)).await.unwrap();
        if rec.actions.len() >= 3 || std::time::Instant::now() > deadline {
            break rec;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let kinds: Vec<ActionKind> = actions.actions.iter().map(|a| a.kind).collect();
    assert_eq!(
        kinds,
        [
            ActionKind::Thumb,
            ActionKind::Override,
            ActionKind::Feedback
        ]
    );
    let last_turn = rt.app.run.turns.last().unwrap().turn as u32;
    assert!(actions.actions.iter().all(|a| a.turn == Some(last_turn)));
    assert_eq!(actions.actions[0].payload["up"], true);
    assert_eq!(actions.actions[1].payload["reason"], "口調が硬い");
    assert_eq!(
        actions.actions[2].payload["issue_type"],
        "knowledge_overstep"
    );
    assert_eq!(actions.actions[2].payload["description"], "説明が長い");
    // Every stored feedback used to have "suggested_fix": "".
    assert_eq!(
        actions.actions[2].payload["suggested_fix"],
        "一文に\nまとめる"
    );
    assert_eq!(
        actions.turns.len(),
        turns,
        "every demo turn is in the store"
    );
}

#[test]
fn snapshot_rules_and_stats_panes() {
    use kakeai::tui::keymap::Action;
    let mut a = with_retry();
    a.act(Action::NextPane);
    // lines.warn 6 → 5: nothing in this run has 5 lines, so nothing flips.
    for c in [']', '<'] {
        a.on_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
    }
    let s = screen(&a, 100, 30);
    assert!(s.contains("0 of 2 verdicts flipped"), "{s}");
    insta::assert_snapshot!("rules_100x30", s);
    insta::assert_snapshot!("rules_140x40", screen(&a, 140, 40));
    a.act(Action::NextPane);
    insta::assert_snapshot!("stats_140x40", screen(&a, 140, 40));
    insta::assert_snapshot!("stats_100x30", screen(&a, 100, 30));
}
