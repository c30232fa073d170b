//! `kakeai doctor`: what a new user types first. Prints each check of `crate::doctor` as
//! ✓ / ! / ✗ with its fix, and exits 0 only when a run would work (1 when it would not, 2 on
//! a bad configuration). The run it checks is `kakeai run`'s with the same flags and config
//! (rules, duo.toml, the vault, the topic); a cold model's load shows on stderr with its
//! elapsed seconds while doctor waits for it.

use std::io::Write;
use std::time::Duration;

use clap::Args;

use crate::doctor::{self, Depth};
use crate::llm::{ApiKind, Client, LlmConfig};

#[derive(Args, Debug)]
pub struct DoctorArgs {
    /// LLM endpoint (default: llm.toml's, http://127.0.0.1:11434).
    #[arg(long)]
    pub endpoint: Option<String>,
    /// Model name (default: llm.toml's, gemma2:27b).
    #[arg(long)]
    pub model: Option<String>,
    /// Force the API instead of detecting it.
    #[arg(long, value_enum)]
    pub api: Option<ApiKind>,
    /// Only what needs no generation (the workbench's R probe).
    #[arg(long)]
    pub quick: bool,
    /// The topic of the run to check the budget for (its words are in every prompt).
    #[arg(long, default_value = DEFAULT_TOPIC)]
    pub topic: String,
    /// Extra rules file merged over the defaults and your config, as `run --rules`.
    #[arg(long)]
    pub rules: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub vault: super::vault::VaultArgs,
    /// Check a run without a story vault (`run --no-vault`).
    #[arg(long, conflicts_with_all = ["vault", "work"])]
    pub no_vault: bool,
}

/// A topic of everyday length, when none is given.
const DEFAULT_TOPIC: &str = "週末に行った商店街の福引";

/// How often a wait is said again when stderr is not a terminal.
const WAIT_EVERY: Duration = Duration::from_secs(2);

/// The run `kakeai run` would make with these flags: rules, duo.toml, vault, topic.
fn setup(args: &DoctorArgs) -> Result<doctor::Setup, String> {
    let rules = crate::director::RuleSet::load(args.rules.as_deref()).map_err(|e| e.to_string())?;
    let duo = crate::duo::DuoConfig::load().map_err(|e| e.to_string())?;
    let work = if args.no_vault {
        None
    } else {
        let w = crate::vault::open(args.vault.vault.as_deref(), args.vault.work.as_deref())
            .map_err(|e| e.to_string())?;
        Some(w)
    };
    let topic = args.topic.trim().to_string();
    if topic.is_empty() {
        return Err("--topic must not be empty".into());
    }
    Ok(doctor::Setup {
        rules,
        duo,
        work,
        topic,
    })
}

pub fn run(args: DoctorArgs) -> i32 {
    let setup = match setup(&args) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("kakeai doctor: {e}");
            return 2;
        }
    };
    let cfg = match LlmConfig::load() {
        Ok(c) => c.with_flags(args.endpoint, args.model, args.api),
        Err(e) => {
            eprintln!("kakeai doctor: {e}");
            return 2;
        }
    };
    let client = match Client::new(cfg) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("kakeai doctor: {e}");
            return 2;
        }
    };
    let rt = match crate::duo::driver::runtime() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("kakeai doctor: cannot start the async runtime: {e}");
            return 2;
        }
    };
    let depth = if args.quick {
        Depth::Quick
    } else {
        Depth::Full
    };
    let report = rt.block_on(async {
        // A cold model's load (and a server coming back) shows with its seconds so far.
        let progress = tokio::spawn(super::progress::waiting(
            client.clone(),
            "kakeai doctor",
            WAIT_EVERY,
        ));
        let report = doctor::run(&client, depth, Some(&setup), &mut |_| {}).await;
        progress.abort();
        let _ = progress.await;
        report
    });
    let mut out = std::io::stdout().lock();
    print(&report, client.config(), &mut out);
    if report.would_run() { 0 } else { 1 }
}

fn print(report: &doctor::Report, cfg: &LlmConfig, out: &mut dyn Write) {
    let _ = writeln!(out, "kakeai doctor — {} · {}", cfg.endpoint, cfg.model);
    for c in &report.checks {
        let _ = writeln!(out, "{}", c.line());
    }
    let verdict = if report.would_run() {
        "a run would work"
    } else {
        "a run would not work: fix the ✗ lines"
    };
    let _ = writeln!(out, "{verdict} ({:.2} s)", report.elapsed.as_secs_f64());
}
