//! Progress for long command-line work (`compare`, `vault probe`, `import`, `ingest`, `check`):
//! on a terminal, a bar on stderr with counts, rate and ETA (indicatif) and, where the work has
//! natural items, a line per finished item above the bar. Nothing extra when stderr is not a
//! terminal (a pipe, a log file, CI) or with `--quiet`: results on stdout never change.
//! What an LLM client waits on (a model load, a server coming back) is said with its elapsed
//! seconds wherever stderr goes (`waiting`).

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// `--quiet` for commands that show progress.
#[derive(clap::Args, Debug, Clone, Copy, Default)]
pub struct ProgressArgs {
    /// No progress bar and no per-item lines on stderr (they are never shown off a terminal)
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

impl ProgressArgs {
    /// Whether progress is drawn: stderr is a terminal and `--quiet` was not given.
    pub fn visible(self) -> bool {
        !self.quiet && std::io::stderr().is_terminal()
    }
}

/// What is counted: items with a name ("turns", "runs") or bytes of input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    Items(&'static str),
    Bytes,
}

/// A progress display, hidden when progress is not wanted (every method is then a no-op).
pub struct Progress {
    bar: Option<ProgressBar>,
    unit: Unit,
}

impl Progress {
    /// Starts a display on stderr when `args` allow it. `total` None draws a spinner with the
    /// count and rate instead of a bar.
    pub fn start(what: &str, total: Option<u64>, unit: Unit, args: ProgressArgs) -> Progress {
        if !args.visible() {
            return Progress::hidden();
        }
        Progress::to(what, total, unit, ProgressDrawTarget::stderr())
    }

    /// A display that draws nothing.
    pub fn hidden() -> Progress {
        Progress {
            bar: None,
            unit: Unit::Bytes,
        }
    }

    /// A display drawing to `target` (tests draw into an in-memory terminal).
    pub fn to(what: &str, total: Option<u64>, unit: Unit, target: ProgressDrawTarget) -> Progress {
        let bar = match total {
            Some(n) => ProgressBar::with_draw_target(Some(n), target),
            None => ProgressBar::with_draw_target(None, target),
        };
        bar.set_style(style(total.is_some(), unit));
        bar.set_prefix(what.to_string());
        if total.is_none() {
            bar.enable_steady_tick(Duration::from_millis(200));
        }
        Progress {
            bar: Some(bar),
            unit,
        }
    }

    /// Learns the total late (work that finds its size only once it has begun): the spinner
    /// becomes a bar with counts, rate and ETA.
    pub fn set_total(&self, total: u64) {
        if let Some(b) = &self.bar
            && b.length() != Some(total)
        {
            b.disable_steady_tick();
            b.set_length(total);
            b.set_style(style(true, self.unit));
        }
    }

    pub fn is_visible(&self) -> bool {
        self.bar.is_some()
    }

    /// Counts `n` more items (or bytes).
    pub fn inc(&self, n: u64) {
        if let Some(b) = &self.bar {
            b.inc(n);
        }
    }

    /// Sets the absolute position (for work that reports totals so far).
    pub fn set(&self, pos: u64) {
        if let Some(b) = &self.bar {
            b.set_position(pos);
        }
    }

    /// The short text after the bar (the item in progress).
    pub fn message(&self, text: &str) {
        if let Some(b) = &self.bar {
            b.set_message(crate::text::sanitize::for_terminal(text).into_owned());
        }
    }

    /// A line above the bar (a finished item); made safe for the terminal first.
    pub fn line(&self, text: &str) {
        if let Some(b) = &self.bar {
            b.println(crate::text::sanitize::for_terminal(text));
        }
    }

    /// Removes the bar, leaving the per-item lines.
    pub fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }

    /// Wraps a reader so the bytes read advance the bar (`check`, `ingest`).
    pub fn wrap_read<'a, R: std::io::Read + 'a>(&self, r: R) -> Box<dyn std::io::Read + 'a> {
        match &self.bar {
            Some(b) => Box::new(b.wrap_read(r)),
            None => Box::new(r),
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
    }
}

fn style(bounded: bool, unit: Unit) -> ProgressStyle {
    let template = match (bounded, unit) {
        (true, Unit::Items(name)) => {
            format!(
                "{{prefix}} [{{bar:28}}] {{pos}}/{{len}} {name} · {{per_sec}} · ETA {{eta}} {{wide_msg}}"
            )
        }
        (true, Unit::Bytes) => {
            "{prefix} [{bar:28}] {bytes}/{total_bytes} · {bytes_per_sec} · ETA {eta} {wide_msg}"
                .to_string()
        }
        (false, Unit::Items(name)) => {
            format!(
                "{{prefix}} {{spinner}} {{pos}} {name} · {{per_sec}} · {{elapsed}} {{wide_msg}}"
            )
        }
        (false, Unit::Bytes) => {
            "{prefix} {spinner} {bytes} · {bytes_per_sec} · {elapsed} {wide_msg}".to_string()
        }
    };
    ProgressStyle::with_template(&template)
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> ")
}

/// Says on stderr what `client` waits on (a model load, a server coming back), with the seconds
/// so far, until the task is dropped: on a terminal one line redrawn in place as the seconds
/// tick; elsewhere a line when the wait starts and every `every` while it lasts. A line says
/// when it is over.
pub async fn waiting(client: crate::llm::Client, who: &'static str, every: Duration) {
    let terminal = std::io::stderr().is_terminal();
    let mut last: Option<(String, std::time::Instant)> = None;
    loop {
        tokio::time::sleep(Duration::from_millis(250)).await;
        let now = client.waiting_line();
        match (now, &last) {
            (Some(line), Some((said, _))) if terminal && line != *said => {
                eprint!("\r\x1b[2K{who}: {line}");
                last = Some((line, std::time::Instant::now()));
            }
            (Some(_), Some((_, at))) if terminal || at.elapsed() < every => {}
            (Some(line), _) => {
                if terminal {
                    eprint!("{who}: {line}");
                } else {
                    eprintln!("{who}: {line}");
                }
                last = Some((line, std::time::Instant::now()));
            }
            (None, Some((line, _))) => {
                let what = if line.starts_with("loading") {
                    "loaded"
                } else {
                    "the server is back"
                };
                if terminal {
                    eprint!("\r\x1b[2K");
                }
                eprintln!("{who}: {what}");
                last = None;
            }
            (None, None) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use indicatif::InMemoryTerm;

    fn term() -> (InMemoryTerm, ProgressDrawTarget) {
        let t = InMemoryTerm::new(6, 100);
        let target = ProgressDrawTarget::term_like(Box::new(t.clone()));
        (t, target)
    }

    #[test]
    fn a_bar_shows_counts_and_the_item_lines_stay_above_it() {
        let (t, target) = term();
        let p = Progress::to("compare", Some(7), Unit::Items("turns"), target);
        p.inc(3);
        p.line("turn 3 やな  A PASS → B RETRY");
        p.message("turn 4");
        p.inc(0); // forces a draw with the new message
        let screen = t.contents();
        assert!(screen.contains("compare"), "{screen}");
        assert!(screen.contains("3/7 turns"), "{screen}");
        assert!(screen.contains("ETA"), "{screen}");
        let lines: Vec<&str> = screen.lines().collect();
        let above = lines
            .iter()
            .position(|l| l.contains("B RETRY"))
            .expect(&screen);
        let bar = lines.iter().position(|l| l.contains("3/7")).expect(&screen);
        assert!(above < bar, "{screen}");
        p.finish();
        let after = t.contents();
        assert!(
            after.contains("B RETRY") && !after.contains("3/7"),
            "{after}"
        );
    }

    #[test]
    fn a_total_learnt_late_turns_the_spinner_into_a_bar() {
        let (t, target) = term();
        let p = Progress::to("copying", None, Unit::Items("pages"), target);
        p.set(2);
        p.set_total(9);
        p.set(4);
        let screen = t.contents();
        assert!(screen.contains("4/9 pages"), "{screen}");
        assert!(screen.contains("ETA"), "{screen}");
        // Hidden: a no-op.
        Progress::hidden().set_total(3);
    }

    #[test]
    fn hidden_progress_draws_nothing_and_passes_reads_through() {
        let p = Progress::hidden();
        assert!(!p.is_visible());
        p.inc(5);
        p.line("never shown");
        let mut r = p.wrap_read(std::io::Cursor::new(b"abc".to_vec()));
        let mut s = String::new();
        std::io::Read::read_to_string(&mut r, &mut s).unwrap();
        assert_eq!(s, "abc");
    }

    #[test]
    fn quiet_is_never_visible() {
        assert!(!ProgressArgs { quiet: true }.visible());
    }

    #[test]
    fn control_characters_from_a_model_never_reach_the_terminal() {
        let (t, target) = term();
        let p = Progress::to("probe", Some(2), Unit::Items("runs"), target);
        p.line("before");
        // Unsanitised, ESC[2J would clear the screen and take "before" with it.
        p.line("evil\u{1b}[2Jline");
        let screen = t.contents();
        assert!(screen.contains("before"), "{screen}");
        assert!(screen.contains("evilline"), "{screen}");
    }
}
