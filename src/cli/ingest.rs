//! `kakeai ingest FILE.jsonl`: conversation logs into the store (PII-masked), pattern uses
//! logged and resolved, dropouts found. Any bad line: every one is reported as FILE:LINE:COL,
//! nothing is written, exit 2. Writing goes in short batches (the lock is never held long); a
//! lock that stays held exits 4, and a re-run finishes the work without duplicating anything.

use std::io::{Read, Write};
use std::path::PathBuf;

use clap::Args;

use super::input;
use super::patterns::{Common, Fail, Format, WindowArgs, open, print_json};
use crate::patterns::ingest::{self, IngestError, IngestOptions};

#[derive(Args, Debug)]
pub struct IngestArgs {
    /// JSON Lines, one message per line: {conversation_id, user_id, role: "user"|"bot", text,
    /// timestamp (RFC 3339 or unix seconds), pattern_id?, character?}; `-` reads stdin.
    pub file: PathBuf,
    #[command(flatten)]
    pub common: Common,
    #[command(flatten)]
    pub window: WindowArgs,
}

pub fn run(args: IngestArgs) -> i32 {
    let mut err = |m: &str| eprintln!("kakeai ingest: {m}");
    match ingest_file(&args, &mut std::io::stdout().lock(), &mut err) {
        Ok(code) => code,
        Err(Fail(code, m)) => {
            err(&m);
            code
        }
    }
}

fn ingest_file(
    args: &IngestArgs,
    out: &mut dyn Write,
    err: &mut dyn FnMut(&str),
) -> Result<i32, Fail> {
    let (name, mut reader) = input::open(Some(&args.file)).map_err(|e| Fail(2, e))?;
    let mut bytes = Vec::new();
    reader
        .read_to_end(&mut bytes)
        .map_err(|e| Fail(2, format!("{name}: cannot read: {e}")))?;
    // Invalid UTF-8 is refused at its line:col, before anything is parsed or written.
    let text = crate::limits::utf8(std::path::Path::new(&name), bytes)
        .map_err(|e| Fail(2, format!("{e}; nothing ingested")))?;
    let messages = match ingest::parse_log(&text) {
        Ok(m) => m,
        Err(bad) => {
            for b in &bad {
                err(&b.render(&name));
            }
            return Err(Fail(
                2,
                format!("{name}: {} bad line(s); nothing ingested", bad.len()),
            ));
        }
    };
    let store = open(args.common.db.as_deref())?;
    let opts = IngestOptions {
        window_secs: args.window.secs(),
        as_of: args.window.as_of(),
        // The file's name only: a full path can carry a user's name (/home/…).
        source: args
            .file
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| name.clone()),
    };
    let report = ingest::ingest(store.conn(), &messages, &opts).map_err(|e| match e {
        IngestError::Line { line, message } => {
            Fail(2, format!("{name}:{line}: {message}; nothing ingested"))
        }
        IngestError::Pattern(e) => e.into(),
    })?;
    match args.common.format {
        Format::Json => print_json(out, &report)?,
        Format::Table => {
            writeln!(
                out,
                "{} message(s) in {} conversation(s) ({} already there, {} masked)",
                report.messages, report.conversations, report.duplicates, report.masked
            )?;
            writeln!(
                out,
                "{} pattern use(s): {} success, {} failure, {} pending; {} dropout(s)",
                report.uses, report.successes, report.failures, report.pending, report.dropouts
            )?;
        }
    }
    Ok(0)
}
