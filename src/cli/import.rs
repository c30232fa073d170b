//! `kakeai import duo-talk FILE…`: bring duo-talk run logs into the store, read line by line and
//! written in short batches of whole runs, idempotently; skipped lines are listed as
//! FILE:LINE:COL on stderr. Exit 2 when a file holds nothing valid, 4 when the store stays
//! locked.

use std::path::{Path, PathBuf};

use clap::{Args, Subcommand, ValueEnum};

use super::progress::{Progress, ProgressArgs, Unit};
use crate::store::Store;
use crate::store::duotalk::{self, ImportCounts, ImportReport};

/// How many skipped lines are listed before "and N more".
const MAX_LISTED: usize = 20;

#[derive(Subcommand, Debug)]
pub enum ImportCommand {
    /// duo-talk run logs (commentary_runs.jsonl, feedback.jsonl).
    DuoTalk(DuoTalkArgs),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SummaryFormat {
    Text,
    Json,
}

#[derive(Args, Debug)]
pub struct DuoTalkArgs {
    /// One or more duo-talk JSON Lines files.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// The store file (default: <data dir>/kakeai.db).
    #[arg(long, env = "KAKEAI_DB")]
    pub db: Option<PathBuf>,
    #[arg(long, value_enum, default_value = "text")]
    pub format: SummaryFormat,
    #[command(flatten)]
    pub progress: ProgressArgs,
}

pub fn run(cmd: ImportCommand) -> i32 {
    let ImportCommand::DuoTalk(args) = cmd;
    match import(&args) {
        Ok(()) => 0,
        Err((code, e)) => {
            eprintln!("kakeai import: {e}");
            code
        }
    }
}

fn import(args: &DuoTalkArgs) -> Result<(), (i32, String)> {
    // Open everything first: an unreadable second file must not leave the first imported.
    for f in &args.files {
        std::fs::File::open(f).map_err(|e| (2, format!("{}: {e}", f.display())))?;
    }
    let path = Store::target_or_default(args.db.as_deref()).map_err(|e| (2, e))?;
    let store_fail = |e: crate::store::StoreError| {
        let busy = crate::store::write::BusyCheck::is_busy(&e);
        (super::patterns::store_code(busy), e.to_string())
    };
    let mut store = match crate::store::target::classify(&path).map_err(|e| (2, e))? {
        crate::store::target::Target::File(p) => Store::open(&p).map_err(store_fail)?,
        crate::store::target::Target::Postgres(_) => {
            Store::open_existing(Some(&path), true).map_err(|(e, code)| (code, e))?
        }
    };
    let mut reports = Vec::new();
    let size: u64 = args
        .files
        .iter()
        .filter_map(|f| f.metadata().ok())
        .map(|m| m.len())
        .sum();
    let shown = Progress::start("import", Some(size), Unit::Bytes, args.progress);
    for f in &args.files {
        // Read line by line and written in batches of runs; a re-run adds only what is missing.
        let file = std::fs::File::open(f).map_err(|e| (2, format!("{}: {e}", f.display())))?;
        let r =
            duotalk::import_reader(&mut store, f, shown.wrap_read(file)).map_err(|e| match e {
                duotalk::ImportError::Store(e) => store_fail(e),
                e => (2, e.to_string()),
            })?;
        reports.push(r);
    }
    shown.finish();
    list_problems(&reports);
    let mut total = ImportCounts::default();
    for r in &reports {
        total.add(&r.new);
    }
    match args.format {
        // Spaced like the documented contract, so a script may even match it as text.
        SummaryFormat::Json => println!(
            "{{\"runs\": {}, \"turns\": {}, \"attempts\": {}, \"feedback\": {}, \"skipped_lines\": {}}}",
            total.runs, total.turns, total.attempts, total.feedback, total.skipped_lines
        ),
        SummaryFormat::Text => {
            for r in &reports {
                println!("{}", summary_line(r));
            }
            println!("store: {}", path.display());
        }
    }
    // A non-empty file from which nothing at all could be read is bad input, not a success.
    if let Some(r) = reports
        .iter()
        .find(|r| r.runs_seen == 0 && !r.problems.is_empty())
    {
        return Err((
            2,
            format!(
                "{}: nothing valid to import ({} malformed lines)",
                r.path.display(),
                r.problems.len()
            ),
        ));
    }
    Ok(())
}

fn list_problems(reports: &[ImportReport]) {
    let all: Vec<(&Path, &duotalk::Problem)> = reports
        .iter()
        .flat_map(|r| r.problems.iter().map(move |p| (r.path.as_path(), p)))
        .collect();
    for (f, p) in all.iter().take(MAX_LISTED) {
        eprintln!("{}:{}:{}: {}", f.display(), p.line, p.col, p.message);
    }
    if all.len() > MAX_LISTED {
        eprintln!("and {} more skipped lines", all.len() - MAX_LISTED);
    }
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// One line per file: what was newly stored, or that nothing was.
pub fn summary_line(r: &ImportReport) -> String {
    let n = &r.new;
    let head = if r.runs_seen == 0 {
        "nothing to import: no duo-talk runs found".to_string()
    } else if n.is_empty() {
        format!(
            "nothing new: all {} were already imported",
            plural(r.runs_seen, "run", "runs")
        )
    } else {
        format!(
            "stored {}, {}, {}, {} (of {} in the file)",
            plural(n.runs, "new run", "new runs"),
            plural(n.turns, "turn", "turns"),
            plural(n.attempts, "attempt", "attempts"),
            plural(n.feedback, "feedback action", "feedback actions"),
            plural(r.runs_seen, "run", "runs"),
        )
    };
    let mut notes = vec![plural(r.lines, "line", "lines")];
    let ignored: usize = r.ignored.values().sum();
    if ignored > 0 {
        notes.push(format!("{ignored} legacy/auxiliary events ignored"));
    }
    if !r.unknown.is_empty() {
        let names: Vec<String> = r.unknown.iter().map(|(k, v)| format!("{k}×{v}")).collect();
        notes.push(format!("unknown events ignored: {}", names.join(", ")));
    }
    if r.duplicates > 0 {
        notes.push(format!("{} repeated events ignored", r.duplicates));
    }
    if !r.problems.is_empty() {
        notes.push(format!(
            "{} (see above)",
            plural(
                r.problems.len(),
                "malformed line skipped",
                "malformed lines skipped"
            )
        ));
    }
    format!("{}: {head} ({})", r.path.display(), notes.join("; "))
}
