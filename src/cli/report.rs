//! `kakeai report`: a self-contained HTML page for a stored run or comparison (see
//! [`crate::report`]). Exit 0 written, 2 bad input (a missing run or comparison, no store).

use std::path::PathBuf;

use clap::Args;

use crate::store::{Store, StoreError};

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// The run (see `kakeai runs`)
    #[arg(long, conflicts_with_all = ["compare", "since", "until"])]
    pub run: Option<i64>,
    /// A stored comparison (see `kakeai compare --show`)
    #[arg(long, conflicts_with_all = ["since", "until"])]
    pub compare: Option<i64>,
    /// A period: runs started on or after (2026-11-23 or an ISO 8601 time, UTC)
    #[arg(long)]
    pub since: Option<String>,
    /// Runs started before this time; a date alone (2026-11-23) includes that whole day (UTC)
    #[arg(long)]
    pub until: Option<String>,
    /// Add the secret scorecard of this vault (per secret and reader; ids and counts only)
    #[command(flatten)]
    pub vault: super::vault::VaultArgs,
    /// The HTML file to write
    #[arg(long)]
    pub out: PathBuf,
    /// The run store (default: kakeai.db in the data dir)
    #[arg(long, env = "KAKEAI_DB")]
    pub db: Option<PathBuf>,
}

pub fn run(a: ReportArgs) -> i32 {
    // A store that cannot be opened keeps its exit code (3: PostgreSQL cannot be reached).
    let store = match Store::open_existing(a.db.as_deref(), false) {
        Ok(s) => s,
        Err((e, code)) => {
            eprintln!("kakeai report: {}", crate::text::sanitize::for_terminal(&e));
            return code;
        }
    };
    match write(&a, &store) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("kakeai report: {}", crate::text::sanitize::for_terminal(&e));
            2
        }
    }
}

fn write(a: &ReportArgs, store: &Store) -> Result<(), String> {
    let when = |flag: &str, v: &Option<String>| {
        v.as_deref()
            .map(|s| crate::annotate::parse_when(flag, s).map_err(|e| e.to_string()))
            .transpose()
    };
    // The report's runs: the scorecard counts these only.
    let (mut page, runs): (String, Vec<i64>) = match (a.run, a.compare) {
        (Some(r), _) => (
            crate::report::run_report(store, r).map_err(|e| match e {
                StoreError::NoSuchRun(id) => format!("no run with id {id} (see `kakeai runs`)"),
                e => e.to_string(),
            })?,
            vec![r],
        ),
        (None, Some(c)) => (
            crate::report::compare_report(store, c).map_err(|e| e.to_string())?,
            crate::report::compare_runs(store, c).map_err(|e| e.to_string())?,
        ),
        (None, None) if a.since.is_some() || a.until.is_some() => {
            let (since, until) = (when("--since", &a.since)?, when("--until", &a.until)?);
            let (s, u) = (since.as_deref(), until.as_deref());
            (
                crate::report::period_report(store, s, u).map_err(|e| e.to_string())?,
                crate::report::period_runs(store, s, u).map_err(|e| e.to_string())?,
            )
        }
        (None, None) => return Err("--run N, --compare ID or --since/--until".into()),
    };
    if a.vault.vault.is_some() || a.vault.work.is_some() {
        let work = crate::vault::load::open(a.vault.vault.as_deref(), a.vault.work.as_deref())
            .map_err(|e| e.to_string())?;
        let runs: std::collections::BTreeSet<i64> = runs.into_iter().collect();
        let rows = crate::vault::scorecard::scorecard_of(store.db(), &work, Some(&runs))
            .map_err(|e| e.to_string())?;
        let section = crate::report::scorecard_section(&rows, &work.name, runs.len());
        page = page.replacen("\n</body>", &format!("{section}\n</body>"), 1);
    }
    std::fs::write(&a.out, page).map_err(|e| format!("{}: {e}", a.out.display()))?;
    eprintln!("kakeai report: {}", a.out.display());
    if no_japanese_font() {
        eprintln!("{NO_FONT}");
    }
    Ok(())
}

/// Said when fontconfig knows no Japanese font: the page would show boxes on this machine.
const NO_FONT: &str = "kakeai report: no Japanese font found here (fc-list :lang=ja is empty): \
the page asks for Hiragino Sans, Noto Sans CJK JP, Yu Gothic or Meiryo — install one \
(e.g. apt install fonts-noto-cjk) or open the page where one is";

/// Whether fontconfig answers and lists no font for Japanese. A machine without fontconfig
/// (macOS, Windows) is not asked: its own fonts cover Japanese.
fn no_japanese_font() -> bool {
    std::process::Command::new("fc-list")
        .args([":lang=ja", "family"])
        .stderr(std::process::Stdio::null())
        .output()
        .is_ok_and(|o| o.status.success() && o.stdout.iter().all(u8::is_ascii_whitespace))
}
