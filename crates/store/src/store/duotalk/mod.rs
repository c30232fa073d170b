//! Import of duo-talk run logs (`commentary_runs.jsonl`, `feedback.jsonl`): each duo-talk run
//! becomes one run with source `duo-talk:<run_id>`; see README for the mapping.

mod fields;
mod parse;
mod write;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

pub use parse::{LEGACY_EVENTS, Problem, speaker_id};

use super::{Store, StoreError};

/// What one import newly stored (the `--format json` summary).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct ImportCounts {
    pub runs: usize,
    pub turns: usize,
    pub attempts: usize,
    pub feedback: usize,
    pub skipped_lines: usize,
}

impl ImportCounts {
    pub fn add(&mut self, o: &ImportCounts) {
        self.runs += o.runs;
        self.turns += o.turns;
        self.attempts += o.attempts;
        self.feedback += o.feedback;
        self.skipped_lines += o.skipped_lines;
    }

    /// Nothing at all was stored.
    pub fn is_empty(&self) -> bool {
        self.runs + self.turns + self.attempts + self.feedback == 0
    }
}

#[derive(Debug, Clone)]
pub struct ImportReport {
    pub path: PathBuf,
    /// Last non-blank line number.
    pub lines: usize,
    /// duo-talk runs found in the file (new or already imported).
    pub runs_seen: usize,
    pub new: ImportCounts,
    /// Skipped lines, in file order.
    pub problems: Vec<Problem>,
    /// Recognised but not imported events (legacy shapes, rag_select…), by name.
    pub ignored: BTreeMap<String, usize>,
    /// Events of a kind this importer does not know, by name.
    pub unknown: BTreeMap<String, usize>,
    /// Repeated speak/director events for an already logged turn (the first one is kept).
    pub duplicates: usize,
}

#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error("{}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}:{line}: line longer than the limit of {} bytes; nothing imported from this file", path.display(), crate::limits::MAX_LINE_BYTES)]
    LineTooLong { path: PathBuf, line: usize },
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Imports one file, read line by line, in batches of runs.
pub fn import_file(store: &mut Store, path: &Path) -> Result<ImportReport, ImportError> {
    let read = |source| ImportError::Read {
        path: path.to_path_buf(),
        source,
    };
    let file = std::fs::File::open(path).map_err(read)?;
    import_reader(store, path, file)
}

/// Imports what `reader` yields (a file, or a file wrapped to count progress); `path` labels
/// the report and the errors.
pub fn import_reader(
    store: &mut Store,
    path: &Path,
    reader: impl std::io::Read,
) -> Result<ImportReport, ImportError> {
    let read = |source| ImportError::Read {
        path: path.to_path_buf(),
        source,
    };
    let log = parse::Log::parse_reader(std::io::BufReader::new(reader)).map_err(|e| match e {
        Ok(line) => ImportError::LineTooLong {
            path: path.to_path_buf(),
            line,
        },
        Err(e) => read(e),
    })?;
    Ok(import_log(store, path, log)?)
}

/// Runs per write transaction: the lock is held briefly, and a run is always whole (every
/// insert is keyed, so a re-run after a crash adds only what is missing).
pub const RUNS_PER_BATCH: usize = 50;

/// Imports a log already in memory; `path` only labels the report.
pub fn import_bytes(
    store: &mut Store,
    path: &Path,
    bytes: &[u8],
) -> Result<ImportReport, StoreError> {
    import_log(store, path, parse::Log::parse(bytes))
}

fn import_log(store: &mut Store, path: &Path, log: parse::Log) -> Result<ImportReport, StoreError> {
    let mut new = ImportCounts::default();
    for runs in log.runs.chunks(RUNS_PER_BATCH) {
        new.add(&store.transact(|tx| Ok(write::write(tx, runs)?))?);
    }
    new.skipped_lines = log.problems.len();
    Ok(ImportReport {
        path: path.to_path_buf(),
        lines: log.lines,
        runs_seen: log.runs.len(),
        new,
        problems: log.problems,
        ignored: log.ignored,
        unknown: log.unknown,
        duplicates: log.duplicates,
    })
}
