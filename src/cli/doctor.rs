//! `kakeai doctor`: what a new user types first. Prints each check of `crate::doctor` as
//! ✓ / ! / ✗ with its fix, and exits 0 only when a run would work (1 when it would not, 2 on
//! a bad configuration).

use std::io::Write;

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
}

pub fn run(args: DoctorArgs) -> i32 {
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
        let mut on_step = |step: &str| {
            if step == "load" {
                eprintln!(
                    "kakeai doctor: loading {} (up to timeouts.load_ms)…",
                    client.config().model
                );
            }
        };
        doctor::run(&client, depth, &mut on_step).await
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
