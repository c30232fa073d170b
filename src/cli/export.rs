//! `kakeai export`: one stored run as JSON Lines or a markdown transcript.

use std::io::Write;
use std::path::PathBuf;

use clap::{Args, ValueEnum};

use crate::store::{Store, StoreError, export};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExportFormat {
    Jsonl,
    Md,
}

#[derive(Args, Debug)]
pub struct ExportArgs {
    /// The run id (see `kakeai runs`).
    #[arg(long = "run")]
    pub run: i64,
    #[arg(long, value_enum, default_value = "jsonl")]
    pub format: ExportFormat,
    /// The store file (default: <data dir>/kakeai.db).
    #[arg(long, env = "KAKEAI_DB")]
    pub db: Option<PathBuf>,
    /// Write here instead of stdout.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

pub fn run(args: ExportArgs) -> i32 {
    match export_run(&args) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("kakeai export: {e}");
            2
        }
    }
}

fn export_run(args: &ExportArgs) -> Result<(), String> {
    let path = Store::path_or_default(args.db.as_deref())?;
    if !path.exists() {
        return Err(format!(
            "no store at {} yet (run or import something first)",
            path.display()
        ));
    }
    let store = Store::open(&path).map_err(|e| e.to_string())?;
    let rec = store.load_run(args.run).map_err(|e| match e {
        StoreError::NoSuchRun(id) => format!("no run with id {id} (see `kakeai runs`)"),
        other => other.to_string(),
    })?;
    let mut buf = Vec::new();
    match args.format {
        ExportFormat::Jsonl => export::jsonl(&rec, &mut buf),
        ExportFormat::Md => export::markdown(&rec, &mut buf),
    }
    .map_err(|e| e.to_string())?;
    match &args.out {
        Some(p) => std::fs::write(p, &buf).map_err(|e| format!("{}: {e}", p.display())),
        None => std::io::stdout()
            .lock()
            .write_all(&buf)
            .map_err(|e| e.to_string()),
    }
}
