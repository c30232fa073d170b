//! Typing never steers the run, in a real terminal (tmux) at 80×24, 100×30 and 140×45: while the
//! demo run plays, chat is opened with each right pane showing and every printable ASCII letter
//! and symbol (plus ｶﾞ, 🇯🇵, a ZWJ family and the word "quiet") is typed into the message. The
//! text lands in the message box, the workbench is still there, the run is still running — not
//! paused, stopped, regenerated or played to its end — and the pane is the one chosen.
//! Skipped (with a note) where tmux is missing, except under CI=true.

use std::process::Command;
use std::time::{Duration, Instant};

fn tmux(sock: &str, args: &[&str]) -> String {
    let o = Command::new("tmux")
        .arg("-L")
        .arg(sock)
        .args(args)
        .output()
        .expect("tmux runs");
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn alive(sock: &str, session: &str) -> bool {
    Command::new("tmux")
        .args(["-L", sock, "has-session", "-t", session])
        .status()
        .is_ok_and(|s| s.success())
}

/// The screen once `pred` holds (polling every 100 ms, up to `secs`).
fn wait_for(sock: &str, session: &str, secs: u64, pred: impl Fn(&str) -> bool) -> String {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        let screen = tmux(sock, &["capture-pane", "-p", "-t", session]);
        if pred(&screen) {
            return screen;
        }
        assert!(alive(sock, session), "the workbench quit:\n{screen}");
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

fn typed_everywhere_at(cols: u16, rows: u16) {
    let sock = format!("kakeai-chat-{}-{cols}", std::process::id());
    let _kill = KillOnDrop(sock.clone());
    let session = "chat";
    let dir = tempfile::tempdir().unwrap();
    let cmd = format!(
        "KAKEAI_DATA_DIR={d}/data KAKEAI_CONFIG_DIR={d}/config KAKEAI_ANALYZER=fallback {bin} --demo --replay-speed 0.05",
        d = dir.path().display(),
        bin = env!("CARGO_BIN_EXE_kakeai"),
    );
    let (x, y) = (cols.to_string(), rows.to_string());
    tmux(
        &sock,
        &["new-session", "-d", "-s", session, "-x", &x, "-y", &y, &cmd],
    );
    wait_for(&sock, session, 60, |s| run_line(s).contains("running"));
    let printable: String = (0x21u8..0x7f).map(char::from).collect();
    // One pane after another: Esc gives the keys back, v shows the next pane, C returns to the
    // message; the panes cycle, so eight turns show each at least once.
    let mut seen_tabs = Vec::new();
    for k in 0..8 {
        if k > 0 {
            tmux(&sock, &["send-keys", "-t", session, "Escape"]);
            tmux(&sock, &["send-keys", "-t", session, "v"]);
        }
        tmux(&sock, &["send-keys", "-t", session, "C"]);
        let prev = seen_tabs.last().cloned();
        let before = wait_for(&sock, session, 10, |s| {
            s.lines().any(|l| l.contains("┌ to ")) && prev.as_deref() != Some(tabs(s).as_str())
        });
        let marker = format!("quiet{k}end");
        let text = format!("{printable} ｶﾞ🇯🇵👨‍👩‍👧 {marker}");
        tmux(&sock, &["send-keys", "-t", session, "-l", &text]);
        let screen = wait_for(&sock, session, 10, |s| s.contains(&marker));
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
    tmux(&sock, &["kill-server"]);
}

#[test]
fn typing_into_chat_never_steers_the_run_at_any_size() {
    if Command::new("tmux").arg("-V").output().is_err() {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "tmux is required under CI"
        );
        eprintln!("tmux not installed: skipping the terminal end-to-end test");
        return;
    }
    for (cols, rows) in [(80, 24), (100, 30), (140, 45)] {
        typed_everywhere_at(cols, rows);
    }
}

/// Ends the test's tmux server however the test ends (a failed assertion too).
struct KillOnDrop(String);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.0, "kill-server"])
            .output();
    }
}
