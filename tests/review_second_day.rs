//! Issue 23 "a reviewer's second day", items 8, 11 and 13: hints name the key the keymap binds
//! (ctrl-n starts a run; `n` searches), and further small promises of the workbench: status
//! lines that say what happened, searches that open the attempt they matched, `!` saying why a
//! turn is listed, a help screen that wraps and pages, flips that stay with their run, dialogs
//! that name their turn and sister and show their whole key bar.

mod common;

#[path = "review_fixture/mod.rs"]
mod review_fixture;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use kakeai::tui::app::{App, Conn};
use kakeai::tui::keymap::{Action, Keymap};

fn app_with(keymap: Keymap) -> App {
    let up = Conn::Up {
        api: "ollama".into(),
    };
    let h = common::tui::header;
    let header = h(
        "http://127.0.0.1:11434",
        "gemma2:27b",
        up,
        "0123456789ab",
        "/tmp/kakeai.db",
    );
    common::tui::app_with(header, keymap)
}

/// Item 8: the first hints name the key the keymap binds to a new run (ctrl-n by default, the
/// user's own binding when she changed it), never `n`, which searches.
#[test]
fn the_first_hints_name_the_key_that_starts_a_run() {
    let user = "[keys]\n\"ctrl-t\" = \"new_run\"\n\"ctrl-n\" = \"none\"\n";
    let custom = Keymap::from_text(Some((std::path::Path::new("keymap.toml"), user))).unwrap();
    for (keymap, want) in [(Keymap::builtin(), "ctrl-n"), (custom, "ctrl-t")] {
        let mut a = app_with(keymap);
        for (w, h) in [(80, 24), (100, 30)] {
            let s = review_fixture::screen(&a, w, h);
            assert!(s.contains(&format!("No run yet. {want}: new run")), "{s}");
            assert!(!s.contains(" n: new run"), "{s}");
        }
        a.act(Action::Stop);
        assert!(
            a.status
                .starts_with(&format!("no run in progress — {want} starts one")),
            "{}",
            a.status
        );
        a.act(Action::PauseResume);
        assert!(!a.status.contains(" n starts"), "{}", a.status);
    }
    // `n` itself does not start a run.
    let mut a = app_with(Keymap::builtin());
    let cmds = a.on_key(KeyEvent::new(KeyCode::Char('n'), KeyModifiers::NONE));
    assert!(a.modal.is_none() && cmds.is_empty(), "{}", a.status);
}

/// Item 11: scrolling the detail pane stops at its last row — one `k` after many `j`s moves
/// the text back at once (it scrolled into blank space, so `k` showed nothing new).
#[test]
fn the_detail_pane_stops_scrolling_at_its_last_row() {
    let (_d, mut s) = review_fixture::store();
    let run = review_fixture::add_run(&mut s, "駅前のパン屋へ", 4, 1);
    let mut a = review_fixture::opened(&s, run);
    a.act(Action::FirstTurn);
    a.act(Action::NextTurn); // turn 2: two attempts, findings, a diff — more than one screen
    a.on_key(KeyEvent::new(KeyCode::Char('l'), KeyModifiers::NONE));
    let right = |sc: &str| -> String {
        sc.lines()
            .map(|l| l.split("││").nth(1).unwrap_or("").to_string())
            .collect::<Vec<_>>()
            .join("\n")
    };
    let top = right(&review_fixture::screen(&a, 80, 16));
    let mut last = String::new();
    for _ in 0..60 {
        last = right(&review_fixture::screen(&a, 80, 16));
        a.on_key(KeyEvent::new(KeyCode::Char('j'), KeyModifiers::NONE));
    }
    let bottom = right(&review_fixture::screen(&a, 80, 16));
    assert_ne!(top, bottom, "the pane holds more than a screen");
    assert_eq!(bottom, last, "still scrolling after 60 rows");
    assert!(
        bottom
            .chars()
            .any(|c| !c.is_whitespace() && c != '│' && c != '"'),
        "scrolled into blank space:\n{bottom}"
    );
    a.on_key(KeyEvent::new(KeyCode::Char('k'), KeyModifiers::NONE));
    let up = right(&review_fixture::screen(&a, 80, 16));
    assert_ne!(
        up, bottom,
        "k after the end did not move the text:\n{bottom}"
    );
}

/// Item 13: status messages say what happened — "👍 on turn 2", then "· saved ✓" when the
/// store answers; "undid 👍 on turn 2" (not "undid the thumb").
#[test]
fn status_messages_say_what_happened() {
    use kakeai::tui::app::{Command, UiMsg};
    let (_d, mut s) = review_fixture::store();
    let run = review_fixture::add_run(&mut s, "駅前のパン屋へ", 3, 1);
    let mut a = review_fixture::opened(&s, run);
    a.act(Action::FirstTurn);
    a.act(Action::NextTurn);
    let cmds = a.on_key(KeyEvent::new(KeyCode::Char('+'), KeyModifiers::NONE));
    assert_eq!(a.status, "👍 on turn 2");
    let ticket = cmds.iter().find_map(|c| match c {
        Command::Save { ticket, .. } => *ticket,
        _ => None,
    });
    a.on_msg(UiMsg::Saved {
        turn: Some(2),
        ticket,
        result: Ok(()),
    });
    assert_eq!(a.status, "👍 on turn 2 · saved ✓");
    a.on_key(KeyEvent::new(KeyCode::Char('u'), KeyModifiers::NONE));
    assert_eq!(a.status, "undid 👍 on turn 2");
}

/// Item 9: the rules pane at 80×24 shows every value being edited (the labels shorten first,
/// with …), and nothing in it is cut without "…".
#[test]
fn the_rules_pane_at_80_columns_shows_the_values() {
    use kakeai::tui::app::Pane;
    let mut a = app_with(Keymap::builtin());
    a.pane = Pane::Rules;
    let fields = kakeai::tui::tuning::fields();
    let sc = review_fixture::screen(&a, 80, 24);
    for fd in fields.iter().take(10) {
        let value = fd.show(&a.rules.data);
        assert!(
            sc.lines().any(|l| l.split("││").nth(1).is_some_and(|r| r
                .trim_end_matches(['│', '"', ' '])
                .ends_with(value.as_str()))),
            "{}: value {value} not shown\n{sc}",
            fd.key
        );
    }
}

/// Issue 24 §2, live marks: another reviewer's 👎 (another connection, as another process
/// would) makes the store change; the workbench asks to read the run again and shows the mark,
/// keeping the selection and saying who marked.
#[test]
fn another_reviewers_mark_appears_in_the_open_run() {
    use kakeai::store::ActionKind;
    use kakeai::tui::app::{Command, UiMsg};
    let (d, mut s) = review_fixture::store();
    let run = review_fixture::add_run(&mut s, "駅前のパン屋へ", 4, 1);
    let mut a = review_fixture::opened(&s, run);
    a.reviewer = Some("taro".into());
    a.selected = 1;
    let mut watch = kakeai::store::watch::Watch::open(&d.path().join("kakeai.db"))
        .or_else(|_| kakeai::store::watch::Watch::open(s.path()))
        .unwrap();
    let mut other = kakeai::store::Store::open(s.path()).unwrap();
    review_fixture::act(
        &mut other,
        run,
        3,
        ActionKind::Thumb,
        serde_json::json!({"up": false}),
        "花子",
    );
    assert!(
        watch.changed().unwrap(),
        "the watcher sees the other connection's commit"
    );
    a.on_msg(UiMsg::StoreChanged);
    let asked = std::mem::take(&mut a.queued);
    assert!(
        asked
            .iter()
            .any(|c| matches!(c, Command::RefreshMarks { id } if *id == run)),
        "{asked:?}"
    );
    let o = kakeai::tui::reopen::open(&s, run, None).unwrap();
    a.on_msg(UiMsg::MarksRefreshed(Ok(Box::new(o))));
    assert!(
        a.review_log
            .iter()
            .any(|e| e.0 == 3 && e.3.as_deref() == Some("花子"))
    );
    assert_eq!(a.selected, 1, "the selection stays");
    assert!(a.status.contains("花子"), "{}", a.status);
    // A refresh for another run (the reviewer opened another meanwhile) is dropped.
    let other_run = review_fixture::add_run(&mut s, "別の話題", 2, 2);
    let o = kakeai::tui::reopen::open(&s, other_run, None).unwrap();
    let before = a.review_log.len();
    a.on_msg(UiMsg::MarksRefreshed(Ok(Box::new(o))));
    assert_eq!(a.run.run_id, Some(run));
    assert_eq!(a.review_log.len(), before);
}

fn press(a: &mut App, c: KeyCode) -> Vec<kakeai::tui::app::Command> {
    a.on_key(KeyEvent::new(c, KeyModifiers::NONE))
}

/// The store answered a save that names no mark (a pause, stop, instruction, regeneration).
fn saved(a: &mut App) {
    a.on_msg(kakeai::tui::app::UiMsg::Saved {
        turn: None,
        ticket: None,
        result: Ok(()),
    });
}

/// Item 13: steering a run says what happened, and the store's answer does not replace it
/// with a bare "saved ✓" ("pause requested", then "paused" when the run paused; "instruction
/// queued for turn 4"; "stopping the run …"; "regenerating turn 3 …").
#[test]
fn steering_a_run_says_what_happened_never_a_bare_saved() {
    use kakeai::duo::Effect;
    use kakeai::tui::app::UiMsg;
    use kakeai::tui::view::RunState;
    let (_d, mut s) = review_fixture::store();
    let run = review_fixture::add_run(&mut s, "駅前のパン屋へ", 3, 1);
    let mut a = review_fixture::opened(&s, run);
    a.run.state = RunState::Running;
    a.act(Action::PauseResume);
    saved(&mut a);
    assert_eq!(a.status, "pause requested");
    a.on_msg(UiMsg::Effect(Box::new(Effect::Paused)));
    saved(&mut a);
    assert_eq!(a.status, "paused");
    a.act(Action::PauseResume);
    a.on_msg(UiMsg::Effect(Box::new(Effect::Resumed)));
    saved(&mut a);
    assert_eq!(a.status, "resumed");
    a.act(Action::Inject);
    for c in "短くね".chars() {
        press(&mut a, KeyCode::Char(c));
    }
    press(&mut a, KeyCode::Enter);
    saved(&mut a);
    assert_eq!(a.status, "instruction queued for turn 4");
    a.act(Action::Stop);
    press(&mut a, KeyCode::Char('y'));
    saved(&mut a);
    assert_eq!(a.status, "stopping the run …");
    a.run.state = RunState::Idle;
    a.act(Action::Follow);
    // A run no longer in progress has nothing to regenerate with: said, and nothing stored.
    let cmds = a.act(Action::Regenerate);
    assert!(cmds.is_empty(), "{cmds:?}");
    assert!(a.status.starts_with("no run in progress"), "{}", a.status);
}

/// Item 13: a search whose only match in a turn is a rejected attempt opens that attempt (turn
/// 2's first try was rejected; its committed text does not say ええと).
#[test]
fn a_search_match_in_a_rejected_attempt_opens_that_attempt() {
    let (_d, mut s) = review_fixture::store();
    let run = review_fixture::add_run(&mut s, "駅前のパン屋へ", 4, 1);
    let mut a = review_fixture::opened(&s, run);
    a.act(Action::FirstTurn);
    a.act(Action::Search);
    for c in "ええと".chars() {
        press(&mut a, KeyCode::Char(c));
    }
    press(&mut a, KeyCode::Enter);
    let t = &a.run.turns[a.selected];
    assert_eq!(t.turn, 2, "{}", a.status);
    let shown = a.attempt.expect("an attempt is opened");
    assert!(t.attempts[shown].text.contains("ええと"));
    assert_ne!(Some(shown), t.committed);
    assert!(a.status.contains("attempt #1"), "{}", a.status);
    // A match in the committed text shows the committed attempt.
    a.act(Action::Search);
    for c in "メロンパン".chars() {
        press(&mut a, KeyCode::Char(c));
    }
    press(&mut a, KeyCode::Enter);
    assert_eq!(a.run.turns[a.selected].turn, 1);
    assert_eq!(a.attempt, None, "{}", a.status);
}

/// Item 13: `!` says why a turn is listed; a PASS turn is listed because an attempt before it
/// was RETRY, and the status says so.
#[test]
fn the_flagged_key_says_why_a_turn_is_listed() {
    use kakeai::director::Status;
    let (_d, mut s) = review_fixture::store();
    let run = review_fixture::add_run(&mut s, "駅前のパン屋へ", 4, 1);
    let mut a = review_fixture::opened(&s, run);
    // Turn 2: attempt #1 RETRY, then a PASS kept; every other turn PASS.
    for t in &mut a.run.turns {
        for at in &mut t.attempts {
            if let Some(v) = at.verdict.as_mut() {
                v.status = Status::Pass;
            }
        }
    }
    if let Some(v) = a.run.turns[1].attempts[0].verdict.as_mut() {
        v.status = Status::Retry;
    }
    a.act(Action::FirstTurn);
    a.act(Action::NextFlagged);
    assert_eq!(a.run.turns[a.selected].turn, 2);
    assert!(
        a.status.starts_with("turn 2: attempt #1 RETRY before PASS"),
        "{}",
        a.status
    );
    // A turn whose own verdict is WARN says WARN.
    if let Some(v) = a.run.turns[3].attempts[0].verdict.as_mut() {
        v.status = Status::Warn;
    }
    a.act(Action::NextFlagged);
    assert!(a.status.starts_with("turn 4: WARN"), "{}", a.status);
}

/// The title of the help screen: (first row, last row, rows).
fn help_title(sc: &str) -> (usize, usize, usize) {
    let row = sc
        .lines()
        .find(|l| l.contains(" help · rows "))
        .expect("help title");
    let nums: Vec<usize> = row
        .split(|c: char| !c.is_ascii_digit())
        .filter(|n| !n.is_empty())
        .map(|n| n.parse().unwrap())
        .collect();
    (nums[0], nums[1], nums[2])
}

/// Item 11: at 80×24 the help screen wraps its descriptions (every one is there whole, and no
/// row is cut), PgDn/PgUp move a page (the rows on screen), and PgUp after End moves at once.
#[test]
fn help_at_80_columns_wraps_and_pages() {
    let mut a = app_with(Keymap::builtin());
    a.act(Action::Help);
    let mut sc = common::tui::screen(&a, 80, 24);
    let (first, last, rows) = help_title(&sc);
    assert_eq!((first, last), (1, 22), "{sc}");
    let mut text = String::new();
    loop {
        for l in sc.lines().skip(1).take(22) {
            let inner = l.split('"').nth(1).unwrap_or("").trim_matches('│');
            // A continuation row starts under the description, not one space further.
            if inner.starts_with(&" ".repeat(20)) && !inner.trim().is_empty() {
                assert_ne!(inner.chars().nth(20), Some(' '), "{inner:?}");
            }
            text.push_str(inner);
        }
        let (f, l, _) = help_title(&sc);
        if l == rows {
            break;
        }
        press(&mut a, KeyCode::PageDown);
        sc = common::tui::screen(&a, 80, 24);
        let (f2, _, _) = help_title(&sc);
        assert_eq!(f2, (f + 22).min(rows - 21), "PgDn moves a page\n{sc}");
    }
    let flat: String = text.split_whitespace().collect();
    for action in [
        Action::ShowRequest,
        Action::Undo,
        Action::NextFlipped,
        Action::NextBranch,
        Action::FocusRight,
    ] {
        let d: String = action.describe().split_whitespace().collect();
        assert!(flat.contains(&d), "{action:?} not whole: {d}\n{text}");
    }
    press(&mut a, KeyCode::End);
    let sc = common::tui::screen(&a, 80, 24);
    assert_eq!(help_title(&sc).1, rows);
    press(&mut a, KeyCode::PageUp);
    let sc = common::tui::screen(&a, 80, 24);
    assert_eq!(help_title(&sc).0, rows - 21 - 22, "PgUp after End\n{sc}");
    press(&mut a, KeyCode::PageUp);
    press(&mut a, KeyCode::Home);
    let sc = common::tui::screen(&a, 80, 24);
    assert_eq!(help_title(&sc).0, 1);
}

/// Item 11: the rules pane's flips belong to the run they were computed on: after another run
/// opens, the pane does not show them and `F` does not jump to their turn numbers.
#[test]
fn flips_stay_with_the_run_they_were_computed_on() {
    use kakeai::tui::app::{Pane, UiMsg};
    let (_d, mut s) = review_fixture::store();
    let first = review_fixture::add_run(&mut s, "駅前のパン屋へ", 6, 1);
    let second = review_fixture::add_run(&mut s, "別の話題", 6, 2);
    let mut a = review_fixture::opened(&s, first);
    a.pane = Pane::Rules;
    // Change values until a verdict flips.
    'edit: for _ in 0..kakeai::tui::tuning::fields().len() {
        for _ in 0..6 {
            a.on_key(KeyEvent::new(KeyCode::Char('>'), KeyModifiers::NONE));
            if a.rooms
                .rules
                .rejudge
                .as_ref()
                .is_some_and(|r| !r.flipped.is_empty())
            {
                break 'edit;
            }
        }
        a.on_key(KeyEvent::new(KeyCode::Char(']'), KeyModifiers::NONE));
    }
    let flipped = a.rooms.rules.rejudge.clone().expect("re-judged");
    assert!(!flipped.flipped.is_empty(), "no edit flipped a verdict");
    assert!(common::tui::screen(&a, 100, 30).contains("re-judged"));
    let o = kakeai::tui::reopen::open(&s, second, None).unwrap();
    a.on_msg(UiMsg::RunOpened {
        ticket: a.tickets.open,
        run: Ok(Box::new(o)),
    });
    let sc = common::tui::screen(&a, 100, 30);
    assert!(
        !sc.contains("re-judged"),
        "another run's flips shown:\n{sc}"
    );
    a.pane = Pane::Detail;
    a.act(Action::FirstTurn);
    a.act(Action::NextFlipped);
    assert_eq!(a.selected, 0, "F jumped by another run's turn numbers");
    assert_eq!(a.status, "no verdict flipped in the last rule edit");
}

/// Item 11: a dialog has a frame that names its turn and sister, and its whole key bar shows
/// (wrapped to a second row at 80 columns rather than cut before "Esc cancel").
#[test]
fn dialogs_name_turn_and_sister_and_show_their_whole_key_bar() {
    let (_d, mut s) = review_fixture::store();
    let run = review_fixture::add_run(&mut s, "駅前のパン屋へ", 4, 1);
    let mut a = review_fixture::opened(&s, run);
    a.act(Action::FirstTurn);
    a.act(Action::NextTurn); // turn 2, あゆ
    for (open, name) in [
        (Action::Feedback, "feedback"),
        (Action::Override, "override"),
    ] {
        a.act(open);
        for (w, h) in [(80u16, 24u16), (100, 30)] {
            let sc = common::tui::screen(&a, w, h);
            let title = sc
                .lines()
                .find(|l| l.contains(&format!(" {name} · ")))
                .unwrap_or_else(|| panic!("no {name} frame\n{sc}"));
            assert!(title.contains("turn 2 · あゆ"), "{title}");
            assert!(title.contains('┌') && title.contains('┐'), "{title}");
            assert!(sc.contains("Esc cancel"), "{w}x{h}: key bar cut\n{sc}");
            assert!(sc.contains("Enter save"), "{sc}");
        }
        press(&mut a, KeyCode::Esc);
        assert!(a.modal.is_none());
    }
}

/// Item 13: the footer's status line is cut with … at 80 columns, never silently.
#[test]
fn a_long_status_is_cut_with_an_ellipsis() {
    let mut a = app_with(Keymap::builtin());
    a.status = "ruleset 8c1e47dea94c: 12 of 40 verdicts flipped — the rules pane lists them; F jumps to the next one".into();
    let sc = common::tui::screen(&a, 80, 24);
    let last = sc
        .lines()
        .last()
        .unwrap()
        .split('"')
        .nth(1)
        .unwrap()
        .to_string();
    assert!(last.trim_end().ends_with('…'), "{last}");
    assert!(last.starts_with("ruleset 8c1e47dea94c"), "{last}");
}

/// Item 13: the store-wide search finds text in attempts that were not kept, and such a hit
/// opens that attempt — in the open run, and in another run opened for it.
#[test]
fn a_store_wide_hit_in_a_rejected_attempt_opens_that_attempt() {
    use kakeai::tui::app::{Command, UiMsg};
    let (_d, mut s) = review_fixture::store();
    let first = review_fixture::add_run(&mut s, "駅前のパン屋へ", 4, 1);
    let other = review_fixture::add_run(&mut s, "別の話題", 3, 2);
    // Turn 2 of each run: its first try (not kept) says ええと; no committed text does.
    let hits = s.search_text(None, "ええと", 100).unwrap();
    assert_eq!(hits.len(), 2, "{hits:?}");
    assert!(hits.iter().all(|h| h.turn == 2 && h.attempt == Some(1)));
    assert_eq!(hits[0].run_id, other, "newest run first");
    let kept = s.search_text(None, "メロンパン", 100).unwrap();
    assert!(!kept.is_empty() && kept.iter().all(|h| h.attempt.is_none()));
    let mut a = review_fixture::opened(&s, other);
    a.act(Action::FirstTurn);
    a.act(Action::Search);
    press(&mut a, KeyCode::Tab);
    for c in "ええと".chars() {
        press(&mut a, KeyCode::Char(c));
    }
    let cmds = press(&mut a, KeyCode::Enter);
    assert!(cmds.iter().any(|c| matches!(c, Command::SearchAll(_))));
    a.on_msg(UiMsg::Found {
        needle: "ええと".into(),
        hits: Ok(hits),
    });
    let opened = |a: &App| {
        let t = &a.run.turns[a.selected];
        (t.turn, a.attempt.map(|k| t.attempts[k].attempt))
    };
    assert_eq!(opened(&a), (2, Some(1)), "{}", a.status);
    assert!(a.status.contains("attempt #1 (not kept)"), "{}", a.status);
    let cmds = press(&mut a, KeyCode::Char('n'));
    assert!(
        cmds.iter()
            .any(|c| matches!(c, Command::OpenRun { id, turn: Some(2) } if *id == first)),
        "{cmds:?}"
    );
    let o = kakeai::tui::reopen::open(&s, first, Some(2)).unwrap();
    a.on_msg(UiMsg::RunOpened {
        ticket: a.tickets.open,
        run: Ok(Box::new(o)),
    });
    assert_eq!(a.run.run_id, Some(first));
    assert_eq!(opened(&a), (2, Some(1)));
}

/// Item 11: the confirmation before a regeneration is framed on every row (a wide character
/// straddling its left edge hid the border) and names the turn and its sister, at 76–101
/// columns.
#[test]
fn the_regenerate_confirmation_names_turn_and_sister_in_a_whole_frame() {
    use kakeai::tui::view::RunState;
    let (_d, mut s) = review_fixture::store();
    let run = review_fixture::add_run(&mut s, "駅前のパン屋へ", 6, 1);
    let mut a = review_fixture::opened(&s, run);
    a.run.state = RunState::Running;
    a.selected = 2;
    a.act(Action::Regenerate);
    // At every width, so that some put a wide character under the frame's left edge.
    for (w, h) in (76u16..=101).map(|w| (w, 24u16)) {
        let sc = common::tui::screen(&a, w, h);
        let rows: Vec<&str> = sc.lines().filter_map(|l| l.split('"').nth(1)).collect();
        let ask = rows
            .iter()
            .position(|r| r.contains("Regenerate turn 3 · やな?"))
            .unwrap_or_else(|| panic!("{w}x{h}: no turn and sister\n{sc}"));
        // The character drawn at display column `col` of a row.
        let at = |r: &str, col: usize| {
            let mut x = 0;
            r.chars().find(|c| {
                let here = x;
                x += kakeai::text::width::width(&c.to_string());
                here == col
            })
        };
        let top = rows[ask - 1];
        let col = kakeai::text::width::width(&top[..top.find('┌').expect("frame")]);
        for r in &rows[ask..ask + 2] {
            assert_eq!(at(r, col), Some('│'), "{w}x{h}: {r}\n{sc}");
        }
        assert_eq!(at(rows[ask + 2], col), Some('└'), "{sc}");
    }
}
