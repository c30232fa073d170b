//! A tmux server of the test's own (`tmux -L NAME`) for the terminal end-to-end tests, ended
//! however the test ends (a failed assertion too). Where tmux is missing the test is skipped
//! with a note, except under CI=true, where .ci/run installs it and a missing tmux fails.

use std::process::Command;

pub struct Tmux {
    pub sock: String,
}

impl Tmux {
    /// A server named `name` and this process; None (with a note) where tmux is missing.
    pub fn new(name: &str) -> Option<Tmux> {
        if Command::new("tmux").arg("-V").output().is_err() {
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "tmux is required under CI"
            );
            eprintln!("tmux not installed: skipping the terminal end-to-end test");
            return None;
        }
        Some(Tmux {
            sock: format!("kakeai-{name}-{}", std::process::id()),
        })
    }

    /// `tmux -L SOCK ARGS…`, its stdout.
    pub fn run(&self, args: &[&str]) -> String {
        let o = Command::new("tmux")
            .arg("-L")
            .arg(&self.sock)
            .args(args)
            .output()
            .expect("tmux runs");
        String::from_utf8_lossy(&o.stdout).into_owned()
    }

    /// A detached session of `cols`×`rows` running `cmd`.
    pub fn start(&self, session: &str, (cols, rows): (u16, u16), cmd: &str) {
        let (x, y) = (cols.to_string(), rows.to_string());
        self.run(&["new-session", "-d", "-s", session, "-x", &x, "-y", &y, cmd]);
    }

    pub fn alive(&self, session: &str) -> bool {
        Command::new("tmux")
            .args(["-L", &self.sock, "has-session", "-t", session])
            .status()
            .is_ok_and(|s| s.success())
    }

    /// What the session's pane shows now.
    pub fn screen(&self, session: &str) -> String {
        self.run(&["capture-pane", "-p", "-t", session])
    }

    pub fn keys(&self, session: &str, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", session];
        args.extend(keys);
        self.run(&args);
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.sock, "kill-server"])
            .output();
    }
}
