//! `kakeai db status | migrate | copy | backup`: what the run store is and its schema, read
//! without changing it; the explicit migration; a copy between stores; the operator's backup
//! (a private copy of the store in use). Each takes an SQLite file or a
//! PostgreSQL URL (issue 24 §1); a URL is never a file name.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use crate::store::Store;
use crate::store::pg::{self, Pg};
use crate::store::status;
use crate::store::target::{Target, classify};

#[derive(Subcommand, Debug)]
pub enum DbCommand {
    /// Engine, file, size, schema version and pending migrations, rows per table (changes
    /// nothing)
    Status(DbArgs),
    /// Applies pending schema migrations (each one transaction; a newer store is refused)
    Migrate(MigrateArgs),
    /// Copies a store into a new file (a consistent snapshot, checked, never overwriting)
    Copy(CopyArgs),
    /// Backs up the store (--db, else the data dir's) into a new file, mode 0600, while the bot
    /// serves: a consistent snapshot, checked, never overwriting; names pii.key to keep with it
    Backup(BackupArgs),
}

#[derive(Args, Debug)]
pub struct BackupArgs {
    /// The backup file: must not exist yet (created 0600)
    pub file: PathBuf,
    /// The store to back up: an SQLite file or a postgresql:// URL (default: kakeai.db in the
    /// data dir)
    #[arg(long, env = "KAKEAI_DB")]
    pub db: Option<PathBuf>,
    #[command(flatten)]
    pub progress: super::progress::ProgressArgs,
}

#[derive(Args, Debug)]
pub struct CopyArgs {
    /// The store to copy: an SQLite file or a postgresql:// URL
    pub from: PathBuf,
    /// The new store: a file that does not exist yet, or an empty PostgreSQL database (a copy
    /// killed half-way goes on when run again)
    pub to: PathBuf,
    /// Rows per committed batch when copying to or from PostgreSQL
    #[arg(long, default_value_t = 500)]
    pub batch: usize,
    #[command(flatten)]
    pub progress: super::progress::ProgressArgs,
}

#[derive(Args, Debug)]
pub struct DbArgs {
    /// The run store (default: kakeai.db in the data dir)
    #[arg(long, env = "KAKEAI_DB")]
    pub db: Option<PathBuf>,
    /// JSON instead of text
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct MigrateArgs {
    #[command(flatten)]
    pub store: DbArgs,
    /// Create the store when it does not exist yet
    #[arg(long)]
    pub create: bool,
}

pub fn run(cmd: DbCommand) -> i32 {
    let out = match cmd {
        DbCommand::Status(a) => show(&a),
        DbCommand::Migrate(a) => migrate(&a),
        DbCommand::Copy(a) => copy(&a),
        DbCommand::Backup(a) => backup(a),
    };
    out.unwrap_or_else(|e| {
        eprintln!(
            "kakeai db: {}",
            crate::text::sanitize::for_terminal(&e.message)
        );
        e.code
    })
}

/// Why a `db` command failed, and its exit code: 3 when the database cannot be reached or used
/// at all ("cannot reach"), 2 for everything else.
#[derive(Debug)]
pub struct Fail {
    code: i32,
    message: String,
}

impl From<String> for Fail {
    fn from(message: String) -> Fail {
        Fail { code: 2, message }
    }
}

impl From<&str> for Fail {
    fn from(message: &str) -> Fail {
        Fail::from(message.to_string())
    }
}

impl From<pg::PgError> for Fail {
    fn from(e: pg::PgError) -> Fail {
        Fail {
            code: e.exit_code(),
            message: e.to_string(),
        }
    }
}

/// A PostgreSQL URL given with --db / KAKEAI_DB, connected; `None` for a file.
fn postgres(db: Option<&std::path::Path>) -> Result<Option<Pg>, Fail> {
    let Some(p) = db else { return Ok(None) };
    match classify(p)? {
        Target::File(_) => Ok(None),
        Target::Postgres(u) => Ok(Some(Pg::connect(&u)?)),
    }
}

fn show(a: &DbArgs) -> Result<i32, Fail> {
    if let Some(pg) = postgres(a.db.as_deref())? {
        let s = pg::status::status(&pg)?;
        return print_status(&s, s.text(), a.json, s.pending.is_empty() && !s.too_new);
    }
    let path = Store::path_or_default(a.db.as_deref())?;
    let s = status::status(&path).map_err(|e| e.to_string())?;
    print_status(&s, s.text(), a.json, s.pending.is_empty() && !s.too_new)
}

/// Prints a store's status (JSON or text); exit 1 when the store needs `db migrate` (or is too
/// new for this kakeai) — a script can tell.
fn print_status(
    s: &impl serde::Serialize,
    text: String,
    json: bool,
    current: bool,
) -> Result<i32, Fail> {
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(s).map_err(|e| e.to_string())?
        );
    } else {
        println!("{text}");
    }
    Ok(if current { 0 } else { 1 })
}

fn migrate(a: &MigrateArgs) -> Result<i32, Fail> {
    if let Some(pg) = postgres(a.store.db.as_deref())? {
        let (from, to) = pg::migrate::apply(&pg)?;
        if a.store.json {
            println!(
                "{}",
                serde_json::json!({"store": pg.shown(), "from": from, "to": to})
            );
        } else if from == to {
            println!("{}: already at schema version {to}", pg.shown());
        } else {
            println!(
                "{}: migrated from schema version {from} to {to}",
                pg.shown()
            );
        }
        return Ok(0);
    }
    let path = Store::path_or_default(a.store.db.as_deref())?;
    let (from, to) = status::migrate(&path, a.create).map_err(|e| e.to_string())?;
    if a.store.json {
        println!(
            "{}",
            serde_json::json!({"store": path, "from": from, "to": to})
        );
    } else if from == to {
        println!("{}: already at schema version {to}", path.display());
    } else {
        println!(
            "{}: migrated from schema version {from} to {to}",
            path.display()
        );
    }
    Ok(0)
}

fn copy(a: &CopyArgs) -> Result<i32, Fail> {
    let named =
        |p: &std::path::Path, what: &str| classify(p).map_err(|e| e.replacen("--db", what, 1));
    match (named(&a.from, "FROM")?, named(&a.to, "TO")?) {
        (Target::File(from), Target::File(to)) => copy_files(&from, &to, a),
        (Target::Postgres(_), Target::Postgres(_)) => Err(
            "FROM and TO are both PostgreSQL URLs: copy through a file (FROM → file → TO), or use pg_dump"
                .into(),
        ),
        (from, to) => copy_across(from, to, a),
    }
}

/// `db backup FILE`: `db copy` from the store in use into a new file (0600), then the PII key
/// the copy's digests need, named (it is never copied: it stays the operator's to keep apart).
fn backup(a: BackupArgs) -> Result<i32, Fail> {
    let from = Store::target_or_default(a.db.as_deref())?;
    if matches!(classify(&a.file)?, Target::Postgres(_)) {
        return Err("a backup is a new SQLite file, not a PostgreSQL URL (use db copy)".into());
    }
    let code = copy(&CopyArgs {
        from,
        to: a.file,
        batch: 500,
        progress: a.progress,
    })?;
    if let Some(key) = crate::safety::pii::keyfile::key_path() {
        println!(
            "keep {} (0600) with it: without it the keyed digests in the copy cannot be checked again",
            key.display()
        );
    }
    Ok(code)
}

/// SQLite ↔ PostgreSQL, resumable, checked table by table.
fn copy_across(from: Target, to: Target, a: &CopyArgs) -> Result<i32, Fail> {
    use super::progress::{Progress, Unit};
    let bar = Progress::start("copying", None, Unit::Items("rows"), a.progress);
    // Rows done so far in each table: the bar counts them all (a copy that goes on from an
    // unfinished one starts where that one stopped).
    let mut done_in = std::collections::BTreeMap::<String, u64>::new();
    let mut on = |table: &str, done: i64, total: i64| {
        done_in.insert(table.to_string(), done.max(0) as u64);
        bar.set(done_in.values().sum());
        bar.message(&format!("{table}: {done}/{total} rows"));
    };
    let batch = a.batch.max(1);
    let (report, shown_from, shown_to) = match (from, to) {
        (Target::File(f), Target::Postgres(u)) => {
            let pg = Pg::connect(&u)?;
            if bar.is_visible() {
                // One COUNT(*) per table of the source, only for the bar's total and ETA.
                bar.set_total(row_total(
                    &status::status(&f).map_err(|e| e.to_string())?.tables,
                ));
            }
            let r = pg::copy::sqlite_to_pg(&f, &pg, batch, None, &mut on);
            (r, f.display().to_string(), u.shown().to_string())
        }
        (Target::Postgres(u), Target::File(t)) => {
            let pg = Pg::connect(&u)?;
            if bar.is_visible() {
                bar.set_total(row_total(&pg::status::status(&pg)?.tables));
            }
            let r = pg::copy::pg_to_sqlite(&pg, &t, batch, None, &mut on);
            (r, u.shown().to_string(), t.display().to_string())
        }
        _ => unreachable!("copy() sends only mixed pairs here"),
    };
    bar.finish();
    let report = report?;
    let rows: i64 = report.tables.iter().map(|(_, n)| n).sum();
    println!(
        "copied {shown_from} → {shown_to}: schema version {}, {} tables, {rows} rows, every table checked{}",
        pg::migrate::latest(),
        report.tables.len(),
        if report.resumed {
            " (went on from an earlier, unfinished copy)"
        } else {
            ""
        }
    );
    Ok(0)
}

/// Rows in all of a store's tables, for the copy's bar.
fn row_total(tables: &[(String, i64)]) -> u64 {
    tables.iter().map(|(_, n)| (*n).max(0) as u64).sum()
}

fn copy_files(from: &std::path::Path, to: &std::path::Path, a: &CopyArgs) -> Result<i32, Fail> {
    use super::progress::{Progress, Unit};
    let (from, to) = (from.to_path_buf(), to.to_path_buf());
    let bar = Progress::start("copying", None, Unit::Items("pages"), a.progress);
    let s = status::copy(&from, &to, 256, &mut |done, total| {
        // The backup learns the page count at its first step: from then on a bar with an ETA.
        bar.set_total(total as u64);
        bar.set(done as u64);
    })
    .map_err(|e| e.to_string())?;
    bar.finish();
    let rows: i64 = s.tables.iter().map(|(_, n)| n).sum();
    println!(
        "copied {} → {}: schema version {}, {} tables, {rows} rows, integrity ok",
        from.display(),
        to.display(),
        s.schema_version,
        s.tables.len()
    );
    Ok(0)
}
