//! The operator's log: one line per thing worth knowing — a message blocked and why, a line
//! the Director rejected, her fallback, a turn with nothing sent, a model error, a send failure
//! — to stderr and to `kakeai-serve.log` beside the store (mode 0600). Never a message text:
//! user texts are masked already and still stay out; a LINE id shows only its first letter and
//! last four characters.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

pub struct OpLog {
    path: Option<PathBuf>,
    file: Mutex<Option<std::fs::File>>,
    /// Also to stderr (tests read the server's stderr).
    stderr: bool,
}

/// A LINE user/group/room id shortened so it identifies nobody: `U…a1b2`.
pub fn short_id(id: &str) -> String {
    let chars: Vec<char> = id.chars().collect();
    match chars.as_slice() {
        [] => "-".into(),
        [first, ..] if chars.len() > 5 => {
            let tail: String = chars[chars.len() - 4..].iter().collect();
            format!("{first}…{tail}")
        }
        _ => "…".into(),
    }
}

impl OpLog {
    /// The log in `dir` (`kakeai-serve.log`: beside an SQLite store, in the data dir for a
    /// PostgreSQL one), created 0600; without a usable file, stderr only (and it says so).
    pub fn in_dir(dir: &Path) -> OpLog {
        let path = dir.join("kakeai-serve.log");
        let mut opts = std::fs::OpenOptions::new();
        opts.create(true).append(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            opts.mode(0o600);
        }
        let file = match opts.open(&path) {
            Ok(f) => Some(f),
            Err(e) => {
                crate::say!(
                    "kakeai serve: log {} not writable ({e}); logging to stderr only",
                    path.display()
                );
                None
            }
        };
        OpLog {
            path: Some(path),
            file: Mutex::new(file),
            stderr: true,
        }
    }

    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// One line: time, kind, the rest.
    pub fn write(&self, kind: &str, detail: &str) {
        let line = format!(
            "{} {kind} {detail}",
            crate::patterns::stamp::iso(crate::patterns::stamp::now_ms())
        );
        if self.stderr {
            crate::say!("kakeai serve: {line}");
        }
        if let Ok(mut f) = self.file.lock()
            && let Some(f) = f.as_mut()
        {
            let _ = writeln!(f, "{line}");
        }
    }

    /// The operator's lines for one answered (or not answered) turn, from its trace.
    pub fn turn(&self, row: i64, channel: &str, source: &str, trace: &[String]) {
        let who = format!("msg={row} chat={}", short_id(channel));
        for t in trace {
            let kind = if t.starts_with("safety: blocked") {
                "blocked"
            } else if t.contains("not sent") || t.contains("skipped, marked") {
                "rejected"
            } else if t.contains("model failed") || t.contains("past the") {
                "model-error"
            } else if t.contains("NOTHING is sent") {
                "withheld"
            } else if t.starts_with("no usable attempt") {
                "fallback"
            } else if t.contains("NOT written") {
                "store-error"
            } else {
                continue;
            };
            self.write(kind, &format!("{who} {t}"));
        }
        let _ = source;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_shortened() {
        assert_eq!(short_id("U4af4980629aaaaaaaaaaaaaaaaaaaaa1"), "U…aaa1");
        assert_eq!(short_id("Cあいうえおかきくけこ"), "C…きくけこ");
        assert_eq!(short_id("U12"), "…");
        assert_eq!(short_id(""), "-");
    }
}
