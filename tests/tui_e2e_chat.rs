//! Typing never steers the run, in a real terminal (tmux) at 80×24, 100×30 and 140×45: while the
//! demo run plays, chat is opened with each right pane showing and every printable ASCII letter
//! and symbol (plus ｶﾞ, 🇯🇵, a ZWJ family and the word "quiet") is typed into the message. The
//! text lands in the message box, the workbench is still there, the run is still running — not
//! paused, stopped, regenerated or played to its end — and the pane is the one chosen.
//! Skipped (with a note) where tmux is missing, except under CI=true.

mod common;

use std::time::{Duration, Instant};

use common::tmux::Tmux;

/// The screen once `pred` holds (polling every 100 ms, up to `secs`).
fn wait_for(t: &Tmux, session: &str, secs: u64, pred: impl Fn(&str) -> bool) -> String {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        let screen = t.screen(session);
        if pred(&screen) {
            return screen;
        }
        assert!(t.alive(session), "the workbench quit:\n{screen}");
        assert!(Instant::now() < deadline, "waited {secs} s:\n{screen}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The header's run line (the second line of the screen).
fn run_line(screen: &str) -> String {
    screen.lines().nth(1).unwrap_or("").to_string()
}

/// The right pane's title: the tab names with the chosen one drawn widest.
fn tabs(screen: &str) -> String {
    screen
        .lines()
        .nth(2)
        .and_then(|l| l.split('┐').nth(1))
        .unwrap_or("")
        .to_string()
}

fn typed_everywhere_at(t: &Tmux, cols: u16, rows: u16) {
    let session = "chat";
    let dir = tempfile::tempdir().unwrap();
    let cmd = format!(
        "KAKEAI_DATA_DIR={d}/data KAKEAI_CONFIG_DIR={d}/config KAKEAI_ANALYZER=fallback {bin} --demo --replay-speed 0.05",
        d = dir.path().display(),
        bin = env!("CARGO_BIN_EXE_kakeai"),
    );
    t.start(session, (cols, rows), &cmd);
    wait_for(t, session, 60, |s| run_line(s).contains("running"));
    let printable: String = (0x21u8..0x7f).map(char::from).collect();
    // One pane after another: Esc gives the keys back, v shows the next pane, C returns to the
    // message; the panes cycle, so eight turns show each at least once.
    let mut seen_tabs = Vec::new();
    for k in 0..8 {
        if k > 0 {
            t.keys(session, &["Escape"]);
            t.keys(session, &["v"]);
        }
        t.keys(session, &["C"]);
        let prev = seen_tabs.last().cloned();
        let before = wait_for(t, session, 30, |s| {
            s.lines().any(|l| l.contains("┌ to ")) && prev.as_deref() != Some(tabs(s).as_str())
        });
        let marker = format!("quiet{k}end");
        let text = format!("{printable} ｶﾞ🇯🇵👨‍👩‍👧 {marker}");
        t.keys(session, &["-l", &text]);
        let screen = wait_for(t, session, 30, |s| s.contains(&marker));
        let line = run_line(&screen);
        assert!(
            line.contains("running"),
            "{cols}×{rows}, pane {k}: {line}\n{screen}"
        );
        for word in ["paused", "stopped", "completed", "regenerat"] {
            assert!(!line.contains(word), "{cols}×{rows}, pane {k}: {line}");
        }
        assert_eq!(
            tabs(&before),
            tabs(&screen),
            "{cols}×{rows}, pane {k}: typing changed the pane"
        );
        seen_tabs.push(tabs(&screen));
    }
    seen_tabs.dedup();
    assert!(
        seen_tabs.len() >= 5,
        "the panes did not change: {seen_tabs:?}"
    );
    t.run(&["kill-session", "-t", session]);
}

#[test]
fn typing_into_chat_never_steers_the_run_at_any_size() {
    for (cols, rows) in [(80, 24), (100, 30), (140, 45)] {
        let Some(t) = Tmux::new(&format!("chat-{cols}")) else {
            return;
        };
        typed_everywhere_at(&t, cols, rows);
    }
}
