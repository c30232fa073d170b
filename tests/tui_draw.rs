//! Drawing Japanese right and the command bar (issue 14 part B): snapshots at 80×24 and 140×40
//! of a dialog over wide text, half-width katakana, a 禁則 case, the footer in two panes and the
//! help screen scrolled, and one test per reported bug.

mod common;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use kakeai::director::{self, RuleSet};
use kakeai::duo::prompt::Prompt;
use kakeai::duo::records::{AttemptRecord, GenStats, TurnFlags, TurnRecord};
use kakeai::duo::topic::DepthStep;
use kakeai::duo::{Effect, RunEnd};
use kakeai::text::Analysis;
use kakeai::text::analyzer::fallback::FallbackAnalyzer;
use kakeai::tui::app::{App, Conn, UiMsg};
use kakeai::tui::keymap::{Action, Keymap};
use kakeai::tui::render;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

fn app_with(conn: Conn, keymap: Keymap) -> App {
    let header = common::tui::header(
        "http://127.0.0.1:11434",
        "gemma2:27b",
        conn,
        "0123456789ab",
        "/tmp/kakeai.db",
    );
    common::tui::app_with(header, keymap)
}

fn app() -> App {
    app_with(
        Conn::Up {
            api: "ollama".into(),
        },
        Keymap::builtin(),
    )
}

fn terminal(app: &App, w: u16, h: u16) -> Terminal<TestBackend> {
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| render::draw(f, app)).unwrap();
    t
}

fn screen(app: &App, w: u16, h: u16) -> String {
    terminal(app, w, h).backend().to_string()
}

/// The screen's rows as a terminal shows them (a wide character's hidden half left out).
fn rows(app: &App, w: u16, h: u16) -> Vec<String> {
    let t = terminal(app, w, h);
    let buf = t.backend().buffer();
    (0..h)
        .map(|y| {
            let mut row = String::new();
            let mut x = 0;
            while x < w {
                let sym = buf[(x, y)].symbol();
                row.push_str(sym);
                x += kakeai::text::width::width(sym).max(1) as u16;
            }
            row
        })
        .collect()
}

fn fx(app: &mut App, e: Effect) {
    app.on_msg(UiMsg::Effect(Box::new(e)));
}

fn generate(app: &mut App, turn: usize, speaker: &str, n: usize) {
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
            guidance: vec![],
        },
    );
}

fn turn(app: &mut App, n: usize, speaker: &str, text: &str) {
    fx(
        app,
        Effect::TurnStarted {
            turn: n,
            speaker: speaker.into(),
        },
    );
    generate(app, n, speaker, 1);
    let rules = RuleSet::builtin().unwrap();
    let c = rules.character(speaker).unwrap();
    let v = director::judge(&rules, &FallbackAnalyzer, c, &Analysis::new(text), &[]);
    fx(
        app,
        Effect::AttemptDone(Box::new(AttemptRecord {
            turn: n,
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
            turn: n,
            speaker: speaker.into(),
            attempt: 1,
            text: text.into(),
            verdict: v,
            flags: TurnFlags::default(),
            hook: None,
            depth: 1,
            step: DepthStep::Surface,
        })),
    );
}

fn run(lines: &[(&str, &str)]) -> App {
    let mut a = app();
    a.on_msg(UiMsg::RunStarted {
        run_id: 3,
        topic: "雨の日の過ごし方".into(),
    });
    for (i, (who, text)) in lines.iter().enumerate() {
        turn(&mut a, i + 1, who, text);
    }
    a
}

fn key(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE)
}

/// Long lines of wide text at every alignment (a leading ASCII letter shifts them by one).
fn wide_run() -> App {
    let base = "ねえ、雨の日ってどうしよっか？おうちで映画を観るのもいいし、図書館で本を探すのも楽しそうだよね。";
    let lines: Vec<(&str, String)> = (0..6)
        .map(|i| {
            let who = if i % 2 == 0 { "yana" } else { "ayu" };
            let pre = if i % 2 == 0 { "" } else { "a" };
            (who, format!("{pre}{base}"))
        })
        .collect();
    let refs: Vec<(&str, &str)> = lines.iter().map(|(w, t)| (*w, t.as_str())).collect();
    run(&refs)
}

/// The dialog's left and right borders are on screen on every row it covers — ratatui skips
/// the cell after a wide character, so a character straddling the edge used to hide the border.
#[test]
fn a_dialog_over_wide_text_keeps_its_borders_and_the_text_beside_it() {
    let mut a = wide_run();
    a.on_key(key('f'));
    for (w, h) in [(80u16, 24u16), (140, 40), (100, 30), (101, 30)] {
        let t = terminal(&a, w, h);
        let buf = t.backend().buffer().clone();
        let dw = 76.min(w);
        let x0 = (w - dw) / 2;
        let y0 = (h - 9) / 2;
        for y in y0 + 1..y0 + 9 {
            if x0 > 0 {
                let left = buf[(x0 - 1, y)].symbol().to_string();
                assert!(
                    kakeai::text::width::width(&left) <= 1,
                    "{w}x{h} row {y}: a wide character {left:?} straddles the dialog's edge"
                );
            }
        }
        // What reaches the terminal on the first frame: the dialog's left border on every row
        // (ratatui's diff skips the cell after a wide character).
        let empty = ratatui::buffer::Buffer::empty(buf.area);
        let sent: std::collections::HashSet<(u16, u16)> =
            empty.diff(&buf).iter().map(|(x, y, _)| (*x, *y)).collect();
        for y in y0..y0 + 9 {
            let sym = buf[(x0, y)].symbol();
            assert!(
                sym != " ",
                "{w}x{h} row {y}: no border at the dialog's edge"
            );
            assert!(
                sent.contains(&(x0, y)),
                "{w}x{h} row {y}: the border {sym:?} is never sent"
            );
        }
        let s = t.backend().to_string();
        if (w, h) == (80, 24) || (w, h) == (140, 40) {
            insta::assert_snapshot!(format!("dialog_over_wide_{w}x{h}"), s);
        }
    }
}

#[test]
fn half_width_katakana_draws_without_gaps() {
    let a = run(&[
        ("yana", "ｶﾞﾗｶﾞﾗのｺﾞﾐ箱、ﾊﾟﾝﾊﾟﾝだよ！"),
        ("ayu", "姉様、ｶﾞﾗｶﾞﾗ鳴っているのはﾍﾟｯﾄﾎﾞﾄﾙですね。"),
    ]);
    for (w, h) in [(80u16, 24u16), (140, 40)] {
        let s = screen(&a, w, h);
        assert!(s.contains("ｶﾞﾗｶﾞﾗのｺﾞﾐ箱、ﾊﾟﾝﾊﾟﾝだよ！"), "{s}");
        assert!(!s.contains("ｶﾞ ﾗ"), "{s}");
        insta::assert_snapshot!(format!("katakana_{w}x{h}"), s);
    }
}

/// No row of the conversation starts with 。 or 、, and an English word is not split when it
/// fits on the next row.
#[test]
fn kinsoku_in_the_conversation() {
    let a = run(&[
        (
            "yana",
            "あのね、すごく自然でnaturalな感じの話し方だったよ。ほんとに、ほんとに。",
        ),
        (
            "ayu",
            "「そうですね」と言いました。姉様、それは「ほんとう」ですか？",
        ),
    ]);
    for (w, h) in [(80u16, 24u16), (140, 40)] {
        let s = screen(&a, w, h);
        for row in s.lines() {
            let inner = row.trim_matches('"').trim_start_matches('│').trim_start();
            for bad in ["。", "、", "」", "？"] {
                assert!(!inner.starts_with(bad), "row starts with {bad}: {row}");
            }
            assert!(
                !row.contains("natu│") && !row.trim_end().ends_with("natu"),
                "{row}"
            );
        }
        insta::assert_snapshot!(format!("kinsoku_{w}x{h}"), s);
    }
}

#[test]
fn the_footer_lists_the_focused_panes_keys_from_the_keymap() {
    let mut a = run(&[("yana", "わ！")]);
    a.status.clear();
    let s = screen(&a, 80, 24);
    let foot = s.lines().last().unwrap().to_string();
    assert!(foot.contains("?:help") && foot.contains("n:new"), "{foot}");
    insta::assert_snapshot!("footer_detail_80x24", s);
    a.act(Action::NextPane);
    let s = screen(&a, 140, 40);
    let foot = s.lines().last().unwrap().to_string();
    assert!(
        foot.contains("]:next value") && foot.contains(">:raise"),
        "{foot}"
    );
    assert!(!foot.contains("n:new"), "{foot}");
    insta::assert_snapshot!("footer_rules_140x40", s);
    // Rebinding shows at once: help on F2, raise on "+" in the rules pane only.
    let user = "[keys]\n\"?\" = \"none\"\n\"f1\" = \"none\"\n\"f2\" = \"help\"\n[pane.rules]\n\"+\" = \"raise\"\n";
    let k = Keymap::from_text(Some((std::path::Path::new("k.toml"), user))).unwrap();
    let mut b = app_with(Conn::Probing, k);
    let foot = screen(&b, 140, 40).lines().last().unwrap().to_string();
    assert!(
        foot.contains("f2:help") && !foot.contains("?:help"),
        "{foot}"
    );
    b.act(Action::NextPane);
    let foot = screen(&b, 140, 40).lines().last().unwrap().to_string();
    assert!(foot.contains("+:raise"), "{foot}");
    // A dialog shows its own keys, newline included.
    a.act(Action::NextPane);
    a.act(Action::NextPane);
    a.act(Action::NextPane);
    a.act(Action::NextPane);
    a.on_key(key('f'));
    let s = screen(&a, 80, 24);
    assert!(s.contains("ctrl-j / alt-enter"), "{s}");
}

#[test]
fn status_messages_expire_and_the_footer_comes_back() {
    let mut a = run(&[("yana", "わ！")]);
    let t0 = std::time::Instant::now();
    a.act(Action::NextTheme);
    a.settle_status(t0);
    assert!(
        screen(&a, 80, 24)
            .lines()
            .last()
            .unwrap()
            .contains("theme:")
    );
    a.expire_status(t0 + std::time::Duration::from_secs(30));
    assert!(
        screen(&a, 80, 24)
            .lines()
            .last()
            .unwrap()
            .contains("?:help")
    );
}

#[test]
fn help_is_grouped_scrolls_and_lists_dialog_keys() {
    let mut a = app();
    a.on_key(key('?'));
    let top = screen(&a, 80, 24);
    assert!(top.contains("── global ──"), "{top}");
    for _ in 0..200 {
        a.on_key(KeyEvent::new(KeyCode::Down, KeyModifiers::NONE));
    }
    assert!(a.help, "scrolling keeps the help open");
    let s = screen(&a, 80, 24);
    // The end lists the dialogs' and overlays' own keys.
    assert!(
        s.contains("override: verdict") && s.contains("runs: open"),
        "{s}"
    );
    assert!(s.contains("ctrl-s") && s.contains("Esc"), "{s}");
    insta::assert_snapshot!("help_scrolled_80x24", s);
    let mut b = app();
    b.on_key(key('?'));
    for _ in 0..12 {
        b.on_key(KeyEvent::new(KeyCode::Down, KeyModifiers::NONE));
    }
    insta::assert_snapshot!("help_scrolled_140x40", screen(&b, 140, 40));
    a.on_key(key('x'));
    assert!(!a.help);
}

/// "secret not applied: …/visibility.yaml: in `characters/あゆ/SEC-AYU-01`: entity あゆ," was cut
/// before its cause, and "👍/👎 NOT saved" overwritten by the next message.
#[test]
fn errors_are_shown_whole_until_acknowledged() {
    let mut a = wide_run();
    let cause = "secret not applied: /home/writer/vault/_ai_control/visibility.yaml: in `characters/あゆ/SEC-AYU-01`: entity あゆ, secret SEC-AYU-01: level 7 is not 0–3 (完全秘匿 · 認識のみ · 内容認識 · 使用可能)";
    a.fail(cause);
    a.settle_status(std::time::Instant::now());
    a.status = "theme: light".into();
    a.settle_status(std::time::Instant::now());
    for (w, h) in [(80u16, 24u16), (140, 40)] {
        let s = screen(&a, w, h);
        let flat: String = rows(&a, w, h)
            .iter()
            .map(|l| l.trim_matches('│').replace(' ', ""))
            .collect();
        assert!(flat.contains("level7isnot0–3(完全秘匿"), "{s}");
        assert!(s.contains("Esc dismisses"), "{s}");
        insta::assert_snapshot!(format!("error_whole_{w}x{h}"), s);
    }
    a.on_key(KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE));
    assert!(!screen(&a, 80, 24).contains("Esc dismisses"));
}

#[test]
fn badges_stay_visible_at_80_columns() {
    let mut a = run(&[
        ("yana", "わ！金魚すくいの屋台、すっごい人だね！"),
        (
            "ayu",
            "姉様、紙が破れやすいので、斜めに入れるのがコツですよ。",
        ),
    ]);
    let cmds = a.act(Action::ThumbUp);
    let ticket = cmds.iter().find_map(|c| match c {
        kakeai::tui::app::Command::Save { ticket, .. } => *ticket,
        _ => None,
    });
    a.on_msg(UiMsg::Saved {
        turn: Some(2),
        ticket,
        result: Ok(()),
    });
    a.on_key(key('f'));
    a.on_key(key('x'));
    a.on_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    for w in [80u16, 100, 140] {
        let s = screen(&a, w, 24);
        let head = s.lines().find(|l| l.contains(" 2 あゆ")).unwrap();
        assert!(head.contains("👍") && head.contains("📝"), "{w}: {head}");
        assert!(head.contains('✓') || head.contains('…'), "{w}: {head}");
    }
}

#[test]
fn p_s_i_say_why_with_no_run() {
    for c in ['p', 's', 'i'] {
        let mut a = app();
        a.on_key(key(c));
        assert!(a.status.contains("no run"), "{c}: {:?}", a.status);
        assert!(a.modal.is_none());
    }
}

#[test]
fn a_stopped_turn_loses_its_in_progress_badge() {
    let mut a = run(&[("yana", "わ！")]);
    fx(
        &mut a,
        Effect::TurnStarted {
            turn: 2,
            speaker: "ayu".into(),
        },
    );
    generate(&mut a, 2, "ayu", 1);
    a.on_msg(UiMsg::Token {
        turn: 2,
        attempt: 1,
        delta: "姉様、".into(),
        at: std::time::Instant::now(),
    });
    assert!(screen(&a, 80, 24).contains("[…]"));
    fx(
        &mut a,
        Effect::RunDone {
            status: RunEnd::Stopped,
            error: None,
        },
    );
    let s = screen(&a, 80, 24);
    assert!(!s.contains("[…]") && !s.contains('▌'), "{s}");
    assert!(s.contains("[stopped]"), "{s}");
}

#[test]
fn the_header_says_replay_only_for_a_replay() {
    let mut a = app_with(Conn::Demo, Keymap::builtin());
    a.replay = true;
    a.on_msg(UiMsg::RunStarted {
        run_id: 1,
        topic: "デモ".into(),
    });
    assert!(screen(&a, 140, 40).contains("replay"));
    // A live run after the demo (the runtime clears the flag when it starts one).
    a.replay = false;
    a.header.conn = Conn::Up {
        api: "ollama".into(),
    };
    a.on_msg(UiMsg::RunStarted {
        run_id: 2,
        topic: "本番".into(),
    });
    let s = screen(&a, 140, 40);
    assert!(!s.contains("replay"), "{s}");
}

#[test]
fn high_contrast_marks_findings_and_diffs_with_text() {
    let mut a = run(&[("yana", "わ！")]);
    fx(
        &mut a,
        Effect::TurnStarted {
            turn: 2,
            speaker: "ayu".into(),
        },
    );
    let texts = [
        "姉様、一人暮らしって大変ですよね。",
        "姉様、二人暮らしって楽しいですよね。",
    ];
    let rules = RuleSet::builtin().unwrap();
    let c = rules.character("ayu").unwrap();
    for (i, text) in texts.iter().enumerate() {
        generate(&mut a, 2, "ayu", i + 1);
        let v = director::judge(&rules, &FallbackAnalyzer, c, &Analysis::new(text), &[]);
        fx(
            &mut a,
            Effect::AttemptDone(Box::new(AttemptRecord {
                turn: 2,
                speaker: "ayu".into(),
                attempt: i + 1,
                text: (*text).into(),
                verdict: v,
                judge: None,
                guidance: vec![],
                prompt_hash: String::new(),
                stats: GenStats::default(),
                keywords: vec![],
                analysis: None,
            })),
        );
    }
    let plain = screen(&a, 140, 40);
    assert!(!plain.contains("{+") && !plain.contains("[-"), "{plain}");
    a.theme = a
        .themes
        .iter()
        .position(|t| t.name == "high-contrast")
        .unwrap();
    let s = screen(&a, 140, 40);
    assert!(s.contains("{+") && s.contains("[-"), "{s}");
    a.act(Action::PrevAttempt);
    let s = screen(&a, 140, 40);
    assert!(s.contains('【') && s.contains('】'), "{s}");
}
