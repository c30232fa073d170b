//! `kakeai doctor` and the workbench's `R` probe: can a run work against this endpoint, and if
//! not, what to change. Each check is ✓ (fine), ! (a run works, with a caveat) or
//! ✗ (a run would fail or could not be checked — a check that could not run never passes).
//! The checks ask the server only what a run asks it, plus one-token measurements.

pub mod budget;
mod checks;

use std::time::{Duration, Instant};

use crate::llm::{ApiKind, Client};

pub use crate::duo::preflight::Setup;
pub use checks::Depth;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    Ok,
    Warn,
    Fail,
}

impl Mark {
    pub fn symbol(self) -> &'static str {
        match self {
            Mark::Ok => "✓",
            Mark::Warn => "!",
            Mark::Fail => "✗",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Check {
    pub name: &'static str,
    pub mark: Mark,
    pub detail: String,
    /// What to do about it (✗ and ! only).
    pub fix: Option<String>,
}

impl Check {
    pub fn ok(name: &'static str, detail: impl Into<String>) -> Check {
        Check {
            name,
            mark: Mark::Ok,
            detail: detail.into(),
            fix: None,
        }
    }
    pub fn warn(name: &'static str, detail: impl Into<String>, fix: impl Into<String>) -> Check {
        Check {
            name,
            mark: Mark::Warn,
            detail: detail.into(),
            fix: Some(fix.into()),
        }
    }
    pub fn fail(name: &'static str, detail: impl Into<String>, fix: impl Into<String>) -> Check {
        Check {
            name,
            mark: Mark::Fail,
            detail: detail.into(),
            fix: Some(fix.into()),
        }
    }

    /// `✓ model      gemma2:27b is there` (+ `  → fix` on the next line).
    pub fn line(&self) -> String {
        let mut s = format!("{} {:<12} {}", self.mark.symbol(), self.name, self.detail);
        if let Some(f) = &self.fix {
            s.push_str(&format!("\n    → {f}"));
        }
        s
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    pub checks: Vec<Check>,
    pub api: Option<ApiKind>,
    pub elapsed: Duration,
}

impl Report {
    /// A run would work: nothing failed (warnings allowed).
    pub fn would_run(&self) -> bool {
        !self.checks.is_empty() && self.checks.iter().all(|c| c.mark != Mark::Fail)
    }

    pub fn first_failure(&self) -> Option<&Check> {
        self.checks.iter().find(|c| c.mark == Mark::Fail)
    }

    /// The model is missing while the server answered (the workbench shows it apart).
    pub fn model_missing(&self) -> bool {
        self.first_failure().is_some_and(|c| c.name == "model")
    }
}

/// Runs the checks in order; `on_step` hears each check's name as it starts ("load" while a
/// cold model loads: `Client::waiting_line` says for how long). The model is loaded once (a
/// preload), and nothing after it asks for a model that would load again. With `setup` (the
/// run's rules, duo config, vault and topic) the budget check fits the run's first turn as the
/// run would. Checks that depend on a failed one are not run and say so.
pub async fn run(
    client: &Client,
    depth: Depth,
    setup: Option<&Setup>,
    on_step: &mut (dyn FnMut(&str) + Send),
) -> Report {
    let started = Instant::now();
    let mut out = Vec::new();
    let api = checks::run_all(client, depth, setup, &mut out, on_step).await;
    Report {
        checks: out,
        api,
        elapsed: started.elapsed(),
    }
}
