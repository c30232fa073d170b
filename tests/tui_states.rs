//! Workbench states on a TestBackend: a context overflow is shown as a state with its message
//! (not "failed"); a turn's ✓ waits for every queued save, and a failed save shows NOT saved.

mod common;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use kakeai::director::{self, RuleSet};
use kakeai::duo::prompt::Prompt;
use kakeai::duo::records::{AttemptRecord, GenStats, TurnFlags, TurnRecord};
use kakeai::duo::topic::DepthStep;
use kakeai::duo::{Effect, RunEnd};
use kakeai::text::Analysis;
use kakeai::text::analyzer::fallback::FallbackAnalyzer;
use kakeai::tui::app::{App, Command, Conn, UiMsg};

fn app() -> App {
    let mut a = common::tui::app(common::tui::header(
        "http://127.0.0.1:8080",
        "smollm2",
        Conn::Up {
            api: "openai".into(),
        },
        "0123456789ab",
        "/tmp/kakeai.db",
    ));
    a.on_msg(UiMsg::RunStarted {
        run_id: 1,
        topic: "坂の上の景色".into(),
    });
    a
}

fn screen(app: &App) -> String {
    common::tui::screen(app, 140, 40)
}

fn fx(app: &mut App, e: Effect) {
    app.on_msg(UiMsg::Effect(Box::new(e)));
}

fn generate(app: &mut App, turn: usize, speaker: &str) {
    fx(
        app,
        Effect::TurnStarted {
            turn,
            speaker: speaker.into(),
        },
    );
    fx(
        app,
        Effect::Generate {
            turn,
            speaker: speaker.into(),
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
}

fn committed(app: &mut App, turn: usize, speaker: &str, text: &str) {
    generate(app, turn, speaker);
    let rules = RuleSet::builtin().unwrap();
    let v = director::judge(
        &rules,
        &FallbackAnalyzer,
        rules.character(speaker).unwrap(),
        &Analysis::new(text),
        &[],
    );
    fx(
        app,
        Effect::AttemptDone(Box::new(AttemptRecord {
            turn,
            speaker: speaker.into(),
            attempt: 1,
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
    fx(
        app,
        Effect::TurnCommitted(Box::new(TurnRecord {
            turn,
            speaker: speaker.into(),
            attempt: 1,
            text: text.into(),
            verdict: v,
            flags: TurnFlags::default(),
            hook: None,
            depth: 0,
            step: DepthStep::Surface,
        })),
    );
}

#[test]
fn a_context_overflow_is_a_state_with_its_message() {
    let mut a = app();
    generate(&mut a, 1, "yana");
    let msg = "context overflow: even without any history the prompt is 3000 characters";
    fx(
        &mut a,
        Effect::AttemptFailed {
            turn: 1,
            attempt: 1,
            error: msg.into(),
        },
    );
    fx(
        &mut a,
        Effect::RunDone {
            status: RunEnd::Stopped,
            error: Some(msg.into()),
        },
    );
    let s = screen(&a);
    assert!(s.contains("stopped: context overflow"), "{s}");
    assert!(s.contains("#1 context overflow"), "{s}");
    assert!(!s.contains("failed"), "{s}");
}

fn key(a: &mut App, c: char) -> Vec<Command> {
    a.on_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE))
}

fn ticket(cmds: &[Command]) -> u64 {
    cmds.iter()
        .find_map(|c| match c {
            Command::Save { ticket, .. } => *ticket,
            _ => None,
        })
        .expect("a save with a ticket")
}

fn row(s: &str, turn: &str) -> String {
    s.lines()
        .find(|l| l.contains(turn))
        .unwrap_or_default()
        .to_string()
}

#[test]
fn the_check_mark_waits_for_every_save_and_a_failed_one_says_not_saved() {
    let mut a = app();
    committed(&mut a, 1, "yana", "わ！この坂、風が気持ちいいじゃん！");
    // Two marks queued on turn 1; the second commits first.
    let first = ticket(&key(&mut a, '+'));
    let second = ticket(&key(&mut a, '-'));
    let saved = |a: &mut App, t: u64, r: Result<(), kakeai::tui::error::UiError>| {
        a.on_msg(UiMsg::Saved {
            turn: Some(1),
            ticket: Some(t),
            result: r,
        })
    };
    saved(&mut a, second, Ok(()));
    let s = screen(&a);
    assert!(!row(&s, " 1 やな").contains('✓'), "{s}");
    assert!(row(&s, " 1 やな").contains('…'), "{s}");
    saved(&mut a, first, Ok(()));
    assert!(row(&screen(&a), " 1 やな").contains('✓'));
    // A third mark fails: NOT saved, and it stays so.
    let third = ticket(&key(&mut a, '+'));
    saved(
        &mut a,
        third,
        Err(kakeai::tui::error::UiError::Store(
            "database is locked".into(),
        )),
    );
    let s = screen(&a);
    assert!(row(&s, " 1 やな").contains("NOT saved"), "{s}");
    let fourth = ticket(&key(&mut a, '-'));
    saved(&mut a, fourth, Ok(()));
    let s = screen(&a);
    assert!(
        row(&s, " 1 やな").contains("NOT saved") && !row(&s, " 1 やな").contains('✓'),
        "{s}"
    );
}

/// A turn several reviewers thumbed shows each one's 👍/👎 by name (not only the latest);
/// one reviewer's thumb stays a bare 👍; blind mode shows none of the others'.
#[test]
fn a_row_shows_each_reviewers_thumb_outside_blind_mode() {
    use kakeai::store::ActionKind;
    let mut a = app();
    committed(&mut a, 1, "yana", "えー、まじで？それウケるんだけど");
    committed(&mut a, 2, "ayu", "お姉ちゃん、それは本当ですか？");
    let thumb = |turn: u32, up: bool, who: &str| {
        (
            turn,
            ActionKind::Thumb,
            serde_json::json!({"up": up}),
            Some(who.to_string()),
            String::new(),
        )
    };
    a.review_log = vec![
        thumb(1, true, "taro"),
        thumb(1, false, "花子"),
        thumb(1, true, "jiro"),
        thumb(1, false, "jiro"),
        thumb(2, true, "taro"),
    ];
    let s = screen(&a);
    let one = row(&s, " 1 やな");
    for want in ["👍taro", "👎花子", "👎jiro"] {
        assert!(one.contains(want), "{want}: {one}");
    }
    assert!(!one.contains("👍jiro"), "{one}");
    assert!(!row(&s, " 2 あゆ").contains("👍taro"), "{s}");
    a.blind = true;
    let s = screen(&a);
    assert!(!s.contains("花子") && !s.contains("taro"), "{s}");
}
