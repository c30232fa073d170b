//! `kakeai runs`: list stored runs (newest first) so users can find an ID to export. Also
//! holds how the store subcommands find and open the store.

use std::io::Write;
use std::path::PathBuf;

use clap::{Args, ValueEnum};
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

use crate::store::{RunSummary, Store};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ListFormat {
    Table,
    Json,
}

#[derive(Args, Debug)]
pub struct RunsArgs {
    /// The store file (default: <data dir>/kakeai.db).
    #[arg(long, env = "KAKEAI_DB")]
    pub db: Option<PathBuf>,
    /// Show at most this many runs.
    #[arg(long, default_value_t = 50)]
    pub limit: usize,
    #[arg(long, value_enum, default_value = "table")]
    pub format: ListFormat,
}

pub fn run(args: RunsArgs) -> i32 {
    match list(&args, &mut std::io::stdout().lock()) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("kakeai runs: {e}");
            2
        }
    }
}

fn list(args: &RunsArgs, out: &mut dyn Write) -> Result<(), String> {
    let path = Store::path_or_default(args.db.as_deref())?;
    // A store named with --db that is not there is an error, as for `export`.
    if args.db.is_some() && !path.exists() {
        return Err(format!(
            "no store at {} yet (run or import something first)",
            path.display()
        ));
    }
    // Listing must not create a store as a side effect.
    let runs = if path.exists() {
        Store::open(&path)
            .and_then(|s| s.runs(args.limit))
            .map_err(|e| e.to_string())?
    } else {
        Vec::new()
    };
    let io = |e: std::io::Error| e.to_string();
    match args.format {
        ListFormat::Json => {
            serde_json::to_writer(&mut *out, &runs).map_err(|e| e.to_string())?;
            writeln!(out).map_err(io)
        }
        ListFormat::Table if runs.is_empty() => {
            writeln!(out, "no runs yet in {}", path.display()).map_err(io)
        }
        ListFormat::Table => table(&runs, out).map_err(io),
    }
}

const TOPIC_WIDTH: usize = 32;

fn table(runs: &[RunSummary], out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(
        out,
        "{:>5}  {:<16}  {}  {:<20}  {:>5}  {:<9}  source",
        "id",
        "started",
        pad("topic", TOPIC_WIDTH),
        "model",
        "turns",
        "status"
    )?;
    for r in runs {
        let started: String = r
            .started_at
            .chars()
            .take(16)
            .map(|c| if c == 'T' { ' ' } else { c })
            .collect();
        let topic = r.topic.lines().next().unwrap_or("");
        writeln!(
            out,
            "{:>5}  {:<16}  {}  {}  {:>5}  {:<9}  {}",
            r.id,
            started,
            pad(&clip(topic, TOPIC_WIDTH), TOPIC_WIDTH),
            pad(&clip(r.model.as_deref().unwrap_or("-"), 20), 20),
            r.turns,
            r.status.as_str(),
            match (&r.sample, &r.source) {
                (Some(s), _) => s.as_str(),
                (None, Some(s)) => s.as_str(),
                (None, None) => "-",
            }
        )?;
    }
    Ok(())
}

/// Cuts `s` to at most `width` display columns, marking the cut with `…`.
fn clip(s: &str, width: usize) -> String {
    if s.width() <= width {
        return s.to_string();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in s.chars() {
        let w = c.width().unwrap_or(0);
        if used + w + 1 > width {
            break;
        }
        out.push(c);
        used += w;
    }
    out.push('…');
    out
}

/// Pads to `width` display columns (CJK characters are two columns wide).
fn pad(s: &str, width: usize) -> String {
    let w = s.width();
    format!("{s}{}", " ".repeat(width.saturating_sub(w)))
}
