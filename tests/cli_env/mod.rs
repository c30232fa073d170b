//! Runs the real `kakeai` binary with its own temp config and data dirs, so CLI tests never
//! touch the user's files or each other's.
#![allow(dead_code)]

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

pub struct Env {
    pub dir: tempfile::TempDir,
}

impl Env {
    pub fn new() -> Env {
        Env {
            dir: tempfile::tempdir().expect("tempdir"),
        }
    }

    pub fn data_db(&self) -> PathBuf {
        self.dir.path().join("data").join("kakeai.db")
    }

    pub fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_kakeai"));
        c.args(args)
            .env("KAKEAI_CONFIG_DIR", self.dir.path().join("config"))
            .env("KAKEAI_DATA_DIR", self.dir.path().join("data"))
            .env("KAKEAI_ANALYZER", "fallback")
            .env_remove("KAKEAI_DB")
            .env_remove("CI");
        c
    }

    pub fn run(&self, args: &[&str]) -> Output {
        self.cmd(args)
            .stdin(Stdio::null())
            .output()
            .expect("run kakeai")
    }

    pub fn run_in(&self, args: &[&str], stdin: &str) -> Output {
        let mut child = self
            .cmd(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn kakeai");
        // The binary may exit before reading (e.g. a bad config): a broken pipe is fine.
        let _ = child
            .stdin
            .take()
            .expect("stdin")
            .write_all(stdin.as_bytes());
        child.wait_with_output().expect("wait")
    }

    pub fn file(&self, name: &str, text: &str) -> String {
        let p = self.dir.path().join(name);
        std::fs::write(&p, text).expect("write fixture");
        p.display().to_string()
    }
}

/// The MeCab IPADIC sources this machine has, if any (the places kakeai searches, and
/// `KAKEAI_IPADIC_SRC`).
pub fn ipadic_sources() -> Option<PathBuf> {
    ["/usr/share/mecab/dic/ipadic", "/var/lib/mecab/dic/ipadic"]
        .iter()
        .map(PathBuf::from)
        .chain(std::env::var_os("KAKEAI_IPADIC_SRC").map(Into::into))
        .find(|d| d.join("matrix.def").is_file())
}

/// Whether the machine has MeCab IPADIC sources for the test named `what`; without them the
/// test is skipped with a note — except under CI=true, where they are required (.ci/run
/// installs them).
pub fn has_ipadic_sources(what: &str) -> bool {
    if ipadic_sources().is_some() {
        return true;
    }
    assert_ne!(
        std::env::var("CI").as_deref(),
        Ok("true"),
        "CI needs MeCab IPADIC sources"
    );
    eprintln!("note: no MeCab IPADIC sources; {what} test skipped");
    false
}
