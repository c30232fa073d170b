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
    let out = &mut std::io::stdout().lock();
    let done = match args.db.as_deref().map(crate::store::target::classify) {
        Some(Ok(crate::store::target::Target::Postgres(url))) => list_pg(&args, &url, out),
        Some(Err(e)) => Err((e, 2)),
        _ => list(&args, out).map_err(|e| (e, 2)),
    };
    match done {
        Ok(()) => 0,
        Err((e, code)) => {
            eprintln!("kakeai runs: {e}");
            code
        }
    }
}

/// The listing from a store on PostgreSQL (exit 3 when it cannot be reached).
fn list_pg(
    args: &RunsArgs,
    url: &crate::store::target::PgUrl,
    out: &mut dyn Write,
) -> Result<(), (String, i32)> {
    use crate::store::pg;
    let fail = |e: pg::PgError| (e.to_string(), e.exit_code());
    let db = pg::Pg::connect(url).map_err(fail)?;
    pg::migrate::known_version(&db).map_err(fail)?;
    let runs = pg::read::runs(&db, args.limit).map_err(fail)?;
    print(args, &runs, db.shown(), out).map_err(|e| (e, 2))
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
    print(args, &runs, &path.display().to_string(), out)
}

/// The listing in the asked format; `store` names where it came from when it is empty.
fn print(
    args: &RunsArgs,
    runs: &[RunSummary],
    store: &str,
    out: &mut dyn Write,
) -> Result<(), String> {
    let io = |e: std::io::Error| e.to_string();
    match args.format {
        ListFormat::Json => {
            serde_json::to_writer(&mut *out, &runs).map_err(|e| e.to_string())?;
            writeln!(out).map_err(io)
        }
        ListFormat::Table if runs.is_empty() => writeln!(out, "no runs yet in {store}").map_err(io),
        ListFormat::Table => table(runs, out).map_err(io),
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
