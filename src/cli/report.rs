//! `kakeai report`: a self-contained HTML page for a stored run or comparison (see
//! [`crate::report`]). Exit 0 written, 2 bad input (a missing run or comparison, no store).

use std::path::PathBuf;

use clap::Args;

use crate::store::{Store, StoreError};

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// The run (see `kakeai runs`)
    #[arg(long, conflicts_with = "compare", required_unless_present = "compare")]
    pub run: Option<i64>,
    /// A stored comparison (see `kakeai compare --show`)
    #[arg(long)]
    pub compare: Option<i64>,
    /// The HTML file to write
    #[arg(long)]
    pub out: PathBuf,
    /// The run store (default: kakeai.db in the data dir)
    #[arg(long, env = "KAKEAI_DB")]
    pub db: Option<PathBuf>,
}

pub fn run(a: ReportArgs) -> i32 {
    match write(&a) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("kakeai report: {}", crate::text::sanitize::for_terminal(&e));
            2
        }
    }
}

fn write(a: &ReportArgs) -> Result<(), String> {
    let path = Store::path_or_default(a.db.as_deref())?;
    if !path.exists() {
        return Err(format!(
            "no store at {} yet (run or import something first)",
            path.display()
        ));
    }
    let store = Store::open(&path).map_err(|e| e.to_string())?;
    let page = match (a.run, a.compare) {
        (Some(r), _) => crate::report::run_report(&store, r).map_err(|e| match e {
            StoreError::NoSuchRun(id) => format!("no run with id {id} (see `kakeai runs`)"),
            e => e.to_string(),
        })?,
        (None, Some(c)) => crate::report::compare_report(&store, c).map_err(|e| e.to_string())?,
        (None, None) => return Err("--run N or --compare ID".into()),
    };
    std::fs::write(&a.out, page).map_err(|e| format!("{}: {e}", a.out.display()))?;
    eprintln!("kakeai report: {}", a.out.display());
    Ok(())
}
