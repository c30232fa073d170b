//! The real binary under a pseudo-terminal (util-linux `script`), for the tests of what long
//! commands show on a terminal (issue 23 §14): a progress bar on stderr there, nothing extra off
//! it or with `--quiet`, and stdout the same bytes every way.

use std::ffi::OsStr;
use std::path::Path;
use std::process::{Command, Output};

fn quoted(s: &OsStr) -> String {
    format!("'{}'", s.to_string_lossy().replace('\'', r"'\''"))
}

/// Runs `cmd` (its program, arguments and environment, as built for `output()`) under a
/// pseudo-terminal; stdout and stderr go to the terminal unless sent to `out_file` /
/// `err_file`. Returns what the terminal showed.
pub fn on_terminal(cmd: &Command, out_file: Option<&Path>, err_file: Option<&Path>) -> String {
    // `env -u NAME …` first (it takes no option after an assignment), then `NAME=value …`.
    let mut line = String::from("env");
    for (k, _) in cmd.get_envs().filter(|(_, v)| v.is_none()) {
        line.push_str(&format!(" -u {}", k.to_string_lossy()));
    }
    for (k, v) in cmd.get_envs() {
        if let Some(v) = v {
            line.push_str(&format!(" {}={}", k.to_string_lossy(), quoted(v)));
        }
    }
    line.push(' ');
    line.push_str(&quoted(cmd.get_program()));
    for a in cmd.get_args() {
        line.push(' ');
        line.push_str(&quoted(a));
    }
    if let Some(f) = out_file {
        line.push_str(&format!(" >{}", quoted(f.as_os_str())));
    }
    if let Some(f) = err_file {
        line.push_str(&format!(" 2>{}", quoted(f.as_os_str())));
    }
    let mut c = Command::new("script");
    c.args(["-qfec", &line, "/dev/null"])
        .env_remove("KAKEAI_DB")
        .env_remove("CI")
        .env("TERM", "xterm-256color")
        .env("COLUMNS", "120");
    if let Some(d) = cmd.get_current_dir() {
        c.current_dir(d);
    }
    match c.output() {
        Ok(o) => String::from_utf8_lossy(&o.stdout).into_owned(),
        Err(e) => panic!("util-linux `script` is needed for the terminal tests: {e}"),
    }
}

/// One command run three ways, each on fresh state: on a terminal (stdout to a file, so the
/// terminal shows stderr alone), the same with `--quiet`, and piped.
pub struct ThreeWays {
    /// What the terminal showed without `--quiet`.
    pub shown: String,
    pub shown_stdout: Vec<u8>,
    /// What the terminal showed with `--quiet`.
    pub quiet: String,
    pub quiet_stdout: Vec<u8>,
    pub piped: Output,
}

/// Runs `make(args)`, `make(args + --quiet)` under a terminal and `make(args)` piped, calling
/// `fresh` before each so the three start from the same state (the same store, no output file
/// left behind).
pub fn three_ways(make: impl Fn(&[&str]) -> Command, args: &[&str], fresh: impl Fn()) -> ThreeWays {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("stdout");
    fresh();
    let shown = on_terminal(&make(args), Some(&out), None);
    let shown_stdout = std::fs::read(&out).expect("stdout file");
    let mut quiet_args = args.to_vec();
    quiet_args.push("--quiet");
    fresh();
    let quiet = on_terminal(&make(&quiet_args), Some(&out), None);
    let quiet_stdout = std::fs::read(&out).expect("stdout file");
    fresh();
    let piped = make(args)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run piped");
    ThreeWays {
        shown,
        shown_stdout,
        quiet,
        quiet_stdout,
        piped,
    }
}

/// A terminal's bytes with its line ends as a pipe's.
pub fn as_piped(screen: &str) -> String {
    screen.replace("\r\n", "\n")
}

impl ThreeWays {
    /// On a terminal stderr showed each of `wanted` (the bar's counts) and an ETA; with
    /// `--quiet`, or piped, stderr carried nothing beyond what it carries anyway (the quiet
    /// terminal showed exactly the piped stderr); stdout is the same bytes all three ways.
    pub fn assert_progress_only_on_a_terminal(&self, wanted: &[&str]) {
        let piped_err = String::from_utf8_lossy(&self.piped.stderr).into_owned();
        assert_eq!(
            self.piped.status.code(),
            Some(0),
            "{piped_err}\n{}",
            String::from_utf8_lossy(&self.piped.stdout)
        );
        for w in wanted.iter().chain(&["ETA"]) {
            assert!(
                self.shown.contains(w),
                "the terminal shows {w:?}:\n{}",
                self.shown
            );
            assert!(!piped_err.contains(w), "piped stderr: {piped_err}");
        }
        assert_eq!(
            as_piped(&self.quiet),
            piped_err,
            "with --quiet the terminal shows only what stderr carries anyway"
        );
        let stdout = String::from_utf8_lossy(&self.piped.stdout);
        assert!(!stdout.is_empty(), "the command printed its result");
        assert_eq!(
            String::from_utf8_lossy(&self.shown_stdout),
            stdout,
            "stdout is the same with the bar"
        );
        assert_eq!(self.shown_stdout, self.piped.stdout);
        assert_eq!(self.quiet_stdout, self.piped.stdout, "and with --quiet");
    }
}
