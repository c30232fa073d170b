//! `kakeai db status | migrate`: what the run store is and its schema, read without changing
//! it; the explicit migration. A database URL gets the store's one-line refusal (this kakeai
//! keeps its store in SQLite), never a file of that name.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use crate::store::Store;
use crate::store::status;

#[derive(Subcommand, Debug)]
pub enum DbCommand {
    /// Engine, file, size, schema version and pending migrations, rows per table (changes
    /// nothing)
    Status(DbArgs),
    /// Applies pending schema migrations (each one transaction; a newer store is refused)
    Migrate(MigrateArgs),
    /// Copies a store into a new file (a consistent snapshot, checked, never overwriting)
    Copy(CopyArgs),
}

#[derive(Args, Debug)]
pub struct CopyArgs {
    /// The store to copy (a file)
    pub from: PathBuf,
    /// The new store (a file that does not exist yet)
    pub to: PathBuf,
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
    };
    out.unwrap_or_else(|e| {
        eprintln!("kakeai db: {}", crate::text::sanitize::for_terminal(&e));
        2
    })
}

fn show(a: &DbArgs) -> Result<i32, String> {
    let path = Store::path_or_default(a.db.as_deref())?;
    let s = status::status(&path).map_err(|e| e.to_string())?;
    if a.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&s).map_err(|e| e.to_string())?
        );
    } else {
        println!("{}", s.text());
    }
    // 1: the store needs `db migrate` (or is too new for this kakeai) — a script can tell.
    Ok(if s.pending.is_empty() && !s.too_new {
        0
    } else {
        1
    })
}

fn migrate(a: &MigrateArgs) -> Result<i32, String> {
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

fn copy(a: &CopyArgs) -> Result<i32, String> {
    use super::progress::{Progress, Unit};
    let from = store_file(&a.from, "FROM")?;
    let to = store_file(&a.to, "TO")?;
    let bar = Progress::start("copying", None, Unit::Items("pages"), a.progress);
    let s = status::copy(&from, &to, 256, &mut |done, total| {
        bar.set(done as u64);
        bar.message(&format!("{done}/{total} pages"));
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

/// FROM or TO of `db copy`: a file; a database URL is refused naming the argument.
fn store_file(p: &std::path::Path, what: &str) -> Result<PathBuf, String> {
    use crate::store::target::{Target, classify};
    match classify(p) {
        Ok(Target::File(f)) => Ok(f),
        Ok(Target::Postgres(u)) => Err(format!(
            "{what} {}: a PostgreSQL URL — `db copy` copies SQLite store files only (PostgreSQL stores are not built yet); give a file path",
            u.shown()
        )),
        // classify names the flag it usually reads.
        Err(e) => Err(e.replacen("--db", what, 1)),
    }
}
