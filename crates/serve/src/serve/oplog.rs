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

/// A trace line about a failed model call, in kakeai's own words only: the attempt, and the
/// HTTP status, a timeout or a refused connection when the error names one. The model server's
/// error text never goes in (it may quote what it was sent: the user's message, her prompt);
/// the whole error stays in the turn's trace, in the workbench's conversations view.
pub fn model_error(trace_line: &str) -> String {
    let attempt = trace_line
        .split_once(':')
        .map(|(a, _)| a)
        .filter(|a| a.starts_with("attempt ") && a[8..].chars().all(|c| c.is_ascii_digit()));
    let mut out = match attempt {
        Some(a) => format!("{a}: model failed"),
        None => "model failed".to_string(),
    };
    // "attempt N: past the S s budget": kakeai's own sentence, kept whole.
    if let Some((_, rest)) = trace_line.split_once(": past the ")
        && attempt.is_some()
        && rest.ends_with(" s budget")
        && rest[..rest.len() - 9].chars().all(|c| c.is_ascii_digit())
    {
        return trace_line.to_string();
    }
    let status = trace_line.split("HTTP ").nth(1).and_then(|r| {
        let d: String = r.chars().take_while(char::is_ascii_digit).collect();
        (d.len() == 3).then_some(d)
    });
    if let Some(s) = status {
        out.push_str(&format!(" with HTTP {s}"));
    } else if trace_line.contains("timed out") {
        out.push_str(": timed out");
    } else if trace_line.contains("is the server running?") {
        out.push_str(": no connection");
    }
    out.push_str(" (the server's words are in the turn's trace)");
    out
}

/// The longest detail a log line holds (in characters); longer ones end in `…`.
pub const MAX_DETAIL_CHARS: usize = 400;

/// `text` as one log line: control characters (a newline that would forge a line, a carriage
/// return, escapes, the Unicode line and paragraph separators, bidirectional controls) written
/// as `\u{…}` escapes (`\n` for a newline), at most [`MAX_DETAIL_CHARS`] characters.
pub fn clean(text: &str) -> String {
    let mut out = String::new();
    for (n, c) in text.chars().enumerate() {
        if n == MAX_DETAIL_CHARS {
            out.push('…');
            break;
        }
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push(' '),
            c if c.is_control()
                || matches!(c, '\u{2028}' | '\u{2029}' | '\u{200e}' | '\u{200f}')
                || ('\u{202a}'..='\u{202e}').contains(&c)
                || ('\u{2066}'..='\u{2069}').contains(&c) =>
            {
                out.push_str(&format!("\\u{{{:x}}}", c as u32));
            }
            c => out.push(c),
        }
    }
    out
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

    /// One line: time, kind, the rest — [`clean`]ed: one line, never longer than
    /// [`MAX_DETAIL_CHARS`], whatever a server's error put in it.
    pub fn write(&self, kind: &str, detail: &str) {
        let line = format!(
            "{} {} {}",
            crate::patterns::stamp::iso(crate::patterns::stamp::now_ms()),
            clean(kind),
            clean(detail)
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
            let t = if kind == "model-error" {
                model_error(t)
            } else {
                t.clone()
            };
            self.write(kind, &format!("{who} {t}"));
        }
        let _ = source;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Generated texts with control characters anywhere: one line out, no control char, at
    /// most the cap (plus `…`), and the printable text kept in order.
    #[test]
    fn a_detail_is_one_bounded_line() {
        let mut rng = crate::test_rng::Rng::new(4301);
        let pool = [
            'a', 'あ', '漢', ' ', '\n', '\r', '\u{1b}', '\u{0}', '\u{85}', '\u{2028}', '\u{202e}',
            '\t',
        ];
        for _ in 0..300 {
            let n = rng.below(900);
            let text: String = (0..n).map(|_| rng.pick(&pool)).collect();
            let out = clean(&text);
            assert!(!out.chars().any(|c| c.is_control()), "{out:?}");
            assert!(!out.contains(['\u{2028}', '\u{202e}']), "{out:?}");
            let kept: String = text
                .chars()
                .take(MAX_DETAIL_CHARS)
                .filter(|c| matches!(c, 'a' | 'あ' | '漢'))
                .collect();
            let seen: String = out
                .chars()
                .filter(|c| matches!(c, 'a' | 'あ' | '漢'))
                .collect();
            assert_eq!(seen, kept);
            assert_eq!(out.ends_with('…'), n > MAX_DETAIL_CHARS, "{n}");
        }
        assert_eq!(clean("a\nb"), "a\\nb");
    }

    /// A model server's error body (generated: its words, quoted input, forged lines) never
    /// reaches the log line; the attempt and the status do.
    #[test]
    fn a_model_error_is_logged_in_kakeais_words_only() {
        let mut rng = crate::test_rng::Rng::new(4302);
        let quoted = [
            "今日は暑いね",
            "[氏名]さんに会った",
            "secret vault line",
            "x\n2026 blocked U…0001",
        ];
        for _ in 0..100 {
            let n = 1 + rng.below(4);
            let said = rng.pick(&quoted);
            let status = rng.pick(&[400u16, 500, 503]);
            let e = crate::llm::LlmError::Server {
                status,
                url: "http://127.0.0.1:1/v1/chat/completions".into(),
                model: "m".into(),
                message: format!("bad input: {{\"content\": \"{said}\"}}"),
            };
            // The PII second opinion's reason is the error without the server's words.
            let brief = e.without_server_text().to_string();
            assert!(
                !brief.contains(said) && brief.contains(&format!("HTTP {status}")),
                "{brief}"
            );
            let line = format!("attempt {n}: model failed: {e}");
            let out = model_error(&line);
            assert!(!out.contains(said) && !out.contains("bad input"), "{out}");
            assert!(
                out.starts_with(&format!("attempt {n}: model failed with HTTP {status}")),
                "{out}"
            );
        }
        assert_eq!(
            model_error("attempt 2: past the 8 s budget"),
            "attempt 2: past the 8 s budget"
        );
        let forged =
            model_error("attempt 1: model failed: timed out after 3 s; past the 8 s budget");
        assert_eq!(
            forged,
            "attempt 1: model failed: timed out (the server's words are in the turn's trace)"
        );
    }

    #[test]
    fn ids_are_shortened() {
        assert_eq!(short_id("U4af4980629aaaaaaaaaaaaaaaaaaaaa1"), "U…aaa1");
        assert_eq!(short_id("Cあいうえおかきくけこ"), "C…きくけこ");
        assert_eq!(short_id("U12"), "…");
        assert_eq!(short_id(""), "-");
    }
}
