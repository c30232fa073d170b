//! Nothing acknowledged is lost, in a real terminal (issue 17): the workbench binary (debug
//! build, `--demo`, a temp `--db`) runs in tmux (`-L` its own socket, 100×30); the test gives
//! 👍/👎/feedback on turns, and at seeded moments — in some rounds while another connection
//! holds the store's write lock — reads the screen and kills the process with SIGKILL, then
//! starts it again on the same database. Every turn that showed ✓ before the kill must have its
//! marks in the database: the last 👍/👎 as the latest thumb action of that turn, a 📝 as at
//! least one feedback action. 4 rounds by default; `store_crash_campaign` (ignored) runs 30.
//! Skipped with a note where tmux is missing (not a pass: the note says nothing was tested),
//! except under CI=true, where .ci/run installs tmux and a missing tmux is a failure.

mod common;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

struct Tmux {
    socket: String,
}

impl Tmux {
    fn run(&self, args: &[&str]) -> Option<String> {
        let o = Command::new("tmux")
            .args(["-L", &self.socket])
            .args(args)
            .output()
            .ok()?;
        Some(String::from_utf8_lossy(&o.stdout).into_owned())
    }
    fn screen(&self) -> String {
        self.run(&["capture-pane", "-p", "-t", "crash"])
            .unwrap_or_default()
    }
    fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "crash"];
        args.extend(keys);
        self.run(&args);
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.run(&["kill-server"]);
    }
}

fn tmux_missing() -> bool {
    if Command::new("tmux").arg("-V").output().is_ok() {
        return false;
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "tmux is required under CI"
    );
    eprintln!("SKIPPED, NOT TESTED: tmux is not installed (the crash test needs a terminal)");
    true
}

fn rng(seed: u64) -> impl FnMut(u64) -> u64 {
    let mut g = common::seeded::Gen::new(seed);
    move |n| g.next(n.max(1))
}

/// What one turn row on screen shows: its number and marks.
#[derive(Debug)]
struct Row {
    turn: u32,
    thumb: Option<bool>,
    note: bool,
    saved: bool,
}

/// The conversation pane's turn rows (`12 やな PASS … 👍 📝 ✓`).
fn rows(screen: &str) -> Vec<Row> {
    let mut out = Vec::new();
    for line in screen.lines() {
        // The conversation pane only (the detail pane beside it lists marks too).
        let line = line.split("││").next().unwrap_or(line);
        for who in [" やな ", " あゆ "] {
            let Some(at) = line.find(who) else { continue };
            let digits: String = line[..at]
                .chars()
                .rev()
                .take_while(char::is_ascii_digit)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            let Ok(turn) = digits.parse() else { continue };
            let rest = &line[at..];
            out.push(Row {
                turn,
                thumb: if rest.contains('👍') {
                    Some(true)
                } else if rest.contains('👎') {
                    Some(false)
                } else {
                    None
                },
                note: rest.contains('📝'),
                saved: rest.contains('✓'),
            });
        }
    }
    out
}

fn conn(db: &Path) -> rusqlite::Connection {
    let c = rusqlite::Connection::open(db).unwrap();
    c.busy_timeout(Duration::from_secs(30)).unwrap();
    c
}

/// Rounds of act → (lock) → read the screen → SIGKILL → check; returns (✓ checked, kills
/// under a held lock).
fn campaign(rounds: u64, seed: u64) -> (usize, usize) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("crash.db");
    let mut pick = rng(seed);
    let (mut checked, mut locked_kills) = (0, 0);
    for round in 0..rounds {
        let tmux = Tmux {
            socket: format!("kakeai-crash-{}-{round}", std::process::id()),
        };
        let runs_before: i64 = if db.exists() {
            conn(&db)
                .query_row("SELECT COUNT(*) FROM runs", [], |r| r.get(0))
                .unwrap()
        } else {
            0
        };
        let cmd = format!(
            "exec env KAKEAI_DATA_DIR={d}/data KAKEAI_CONFIG_DIR={d}/config KAKEAI_ANALYZER=fallback {bin} --demo --replay-speed 20 --db {db}",
            d = dir.path().display(),
            bin = env!("CARGO_BIN_EXE_kakeai"),
            db = db.display(),
        );
        tmux.run(&[
            "new-session",
            "-d",
            "-s",
            "crash",
            "-x",
            "100",
            "-y",
            "30",
            &cmd,
        ])
        .unwrap();
        let pid: i32 = tmux
            .run(&["display-message", "-p", "-t", "crash", "#{pane_pid}"])
            .unwrap()
            .trim()
            .parse()
            .expect("pane pid");
        // The first turn on screen.
        let deadline = Instant::now() + Duration::from_secs(60);
        while rows(&tmux.screen()).is_empty() {
            assert!(
                Instant::now() < deadline,
                "no turn on screen:\n{}",
                tmux.screen()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        // Review: seeded keys with seeded pauses; a lock may be taken part-way.
        let actions = 3 + pick(10);
        let lock_at = (round % 2 == 1).then(|| pick(actions));
        let mut lock: Option<rusqlite::Connection> = None;
        for i in 0..actions {
            if lock_at == Some(i) {
                let c = conn(&db);
                c.execute_batch("BEGIN IMMEDIATE").unwrap();
                lock = Some(c);
            }
            match pick(6) {
                0 => tmux.keys(&["+"]),
                1 => tmux.keys(&["-"]),
                2 => {
                    tmux.keys(&["f"]);
                    std::thread::sleep(Duration::from_millis(150));
                    tmux.keys(&["-l", &format!("返事が遅い{i}")]);
                    tmux.keys(&["Enter"]);
                }
                3 => tmux.keys(&["k"]),
                4 => tmux.keys(&["j"]),
                _ => tmux.keys(&["+", "k", "-"]),
            }
            std::thread::sleep(Duration::from_millis(pick(400)));
        }
        std::thread::sleep(Duration::from_millis(pick(1500)));
        // What the screen acknowledged, then the kill.
        let screen = tmux.screen();
        let status = Command::new("kill")
            .args(["-9", &pid.to_string()])
            .status()
            .unwrap();
        assert!(status.success(), "kill -9 {pid}");
        if lock.take().is_some() {
            locked_kills += 1;
        }
        drop(tmux);
        let c = conn(&db);
        let runs: i64 = c
            .query_row("SELECT COUNT(*) FROM runs", [], |r| r.get(0))
            .unwrap();
        let shown = rows(&screen);
        if runs == runs_before {
            assert!(
                shown.iter().all(|r| !r.saved),
                "round {round}: ✓ on screen but no run stored:\n{screen}"
            );
            continue;
        }
        let run_id: i64 = c
            .query_row("SELECT MAX(id) FROM runs", [], |r| r.get(0))
            .unwrap();
        for row in shown.iter().filter(|r| r.saved) {
            let turn = row.turn;
            if let Some(up) = row.thumb {
                let last: Option<String> = c
                    .query_row(
                        "SELECT payload FROM actions WHERE run_id = ?1 AND turn = ?2 AND kind = 'thumb' ORDER BY id DESC LIMIT 1",
                        rusqlite::params![run_id, turn],
                        |r| r.get(0),
                    )
                    .ok();
                let last: serde_json::Value =
                    serde_json::from_str(last.as_deref().unwrap_or("null")).unwrap();
                assert_eq!(
                    last["up"],
                    serde_json::json!(up),
                    "round {round}: turn {turn} showed {} ✓ but the store has {last}:\n{screen}",
                    if up { "👍" } else { "👎" }
                );
            }
            if row.note {
                let n: i64 = c
                    .query_row(
                        "SELECT COUNT(*) FROM actions WHERE run_id = ?1 AND turn = ?2 AND kind = 'feedback'",
                        rusqlite::params![run_id, turn],
                        |r| r.get(0),
                    )
                    .unwrap();
                assert!(
                    n >= 1,
                    "round {round}: turn {turn} showed 📝 ✓, no feedback stored:\n{screen}"
                );
            }
            checked += 1;
        }
        let ok: String = c
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .unwrap();
        assert_eq!(ok, "ok");
    }
    (checked, locked_kills)
}

#[test]
fn every_check_mark_drawn_before_a_kill_is_in_the_store() {
    if tmux_missing() {
        return;
    }
    let (checked, locked) = campaign(4, 17);
    eprintln!(
        "store crash: 4 rounds, {locked} killed under a held write lock, {checked} ✓ rows verified in the store"
    );
}

#[test]
#[ignore = "campaign: 30 rounds (several minutes)"]
fn store_crash_campaign() {
    if tmux_missing() {
        return;
    }
    let (checked, locked) = campaign(30, 4242);
    eprintln!(
        "store crash campaign: 30 rounds, {locked} killed under a held write lock, {checked} ✓ rows verified in the store"
    );
}
