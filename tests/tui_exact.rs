//! Exact drawing on a TestBackend (issue 23 item 1): a reply streaming a ZWJ family, flags and
//! half-width kana with voicing marks token by token, drawn frame after frame on one terminal —
//! no cell ever holds a piece of a cluster that a later token changes, and no row is pushed
//! past the pane's border.

mod common;

#[path = "review_fixture/mod.rs"]
mod review_fixture;

use kakeai::duo::Effect;
use kakeai::duo::prompt::Prompt;
use kakeai::tui::app::UiMsg;
use kakeai::tui::render;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

fn fx(app: &mut kakeai::tui::app::App, e: Effect) {
    app.on_msg(UiMsg::Effect(Box::new(e)));
}

/// The rows as a terminal shows them (a wide cell's covered column left out).
fn rows(t: &Terminal<TestBackend>) -> Vec<String> {
    let buf = t.backend().buffer();
    let a = buf.area;
    (0..a.height)
        .map(|y| {
            let mut row = String::new();
            let mut x = 0;
            while x < a.width {
                let sym = buf[(x, y)].symbol();
                row.push_str(sym);
                x += kakeai::text::width::width(sym).max(1) as u16;
            }
            row
        })
        .collect()
}

#[test]
fn a_streaming_zwj_family_never_shows_its_pieces() {
    let reply = "ねえ👩\u{200d}👩\u{200d}👧と🇯🇵のｶﾞｲﾄﾞ、👍\u{1f3fd}です。";
    for (w, h) in [(80u16, 24u16), (100, 30)] {
        let mut a = review_fixture::app();
        fx(
            &mut a,
            Effect::TurnStarted {
                turn: 1,
                speaker: "ayu".into(),
            },
        );
        fx(
            &mut a,
            Effect::Generate {
                turn: 1,
                speaker: "ayu".into(),
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
        let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
        // One char per token: every cut inside every cluster is drawn once.
        for c in reply.chars() {
            a.on_msg(UiMsg::Token {
                turn: 1,
                attempt: 1,
                delta: c.to_string(),
                at: std::time::Instant::now(),
            });
            t.draw(|f| render::draw(f, &a)).unwrap();
            for row in rows(&t) {
                assert!(
                    !row.contains('\u{200d}') && !row.contains('\u{1f3fd}') && !row.contains('👧'),
                    "a piece of a cluster on screen after {c:?} at {w}×{h}: {row}"
                );
                assert_eq!(
                    kakeai::text::width::width(&row),
                    w as usize,
                    "a row pushed out of line after {c:?}: {row}"
                );
                let ri = row
                    .chars()
                    .filter(|c| ('\u{1F1E6}'..='\u{1F1FF}').contains(c))
                    .count();
                assert_eq!(ri % 2, 0, "a lone regional indicator after {c:?}: {row}");
            }
        }
    }
}
