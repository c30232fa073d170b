//! The real binary in a real terminal (tmux): `kakeai --demo` plays the bundled run, a 👍 is
//! saved, `q` quits and the terminal is given back. Skipped (with a note) where tmux is missing,
//! except under CI=true, where .ci/run installs it and a missing tmux is a failure.

use std::process::Command;
use std::time::{Duration, Instant};

fn tmux(args: &[&str]) -> Option<String> {
    let o = Command::new("tmux").args(args).output().ok()?;
    Some(String::from_utf8_lossy(&o.stdout).into_owned())
}

fn wait_for(session: &str, what: &str, secs: u64) -> String {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        let screen = tmux(&["capture-pane", "-p", "-t", session]).unwrap_or_default();
        if screen.contains(what) {
            return screen;
        }
        assert!(
            Instant::now() < deadline,
            "no `{what}` on screen:\n{screen}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn demo_plays_in_a_terminal_and_a_thumb_is_saved() {
    if Command::new("tmux").arg("-V").output().is_err() {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "tmux is required under CI"
        );
        eprintln!("tmux not installed: skipping the terminal end-to-end test");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let session = format!("kakeai-e2e-{}", std::process::id());
    let cmd = format!(
        "KAKEAI_DATA_DIR={d}/data KAKEAI_CONFIG_DIR={d}/config KAKEAI_ANALYZER=fallback {bin} --demo --replay-speed 20",
        d = dir.path().display(),
        bin = env!("CARGO_BIN_EXE_kakeai"),
    );
    tmux(&[
        "new-session",
        "-d",
        "-s",
        &session,
        "-x",
        "100",
        "-y",
        "30",
        &cmd,
    ])
    .unwrap();
    let screen = wait_for(&session, "run completed", 60);
    assert!(screen.contains("replay (no model)"), "{screen}");
    assert!(
        screen.contains("やな") && screen.contains("あゆ"),
        "{screen}"
    );
    tmux(&["send-keys", "-t", &session, "+"]);
    wait_for(&session, "saved ✓", 10);
    tmux(&["send-keys", "-t", &session, "q"]);
    let deadline = Instant::now() + Duration::from_secs(10);
    while Command::new("tmux")
        .args(["has-session", "-t", &session])
        .status()
        .is_ok_and(|s| s.success())
    {
        assert!(Instant::now() < deadline, "kakeai did not quit");
        std::thread::sleep(Duration::from_millis(100));
    }
    let db = dir.path().join("data/kakeai.db");
    let store = kakeai::store::Store::open(&db).unwrap();
    let runs = store.runs(10).unwrap();
    assert_eq!(runs.len(), 1);
    let rec = store.load_run(runs[0].id).unwrap();
    assert_eq!(rec.actions.len(), 1);
    assert_eq!(rec.actions[0].kind, kakeai::store::ActionKind::Thumb);
}
