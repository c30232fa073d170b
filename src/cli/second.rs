//! The model's second opinion on personal data for the batch commands (`ingest`, `export`):
//! which mode a run uses (`--pii-llm`, else policy.toml `[pii] llm` when llm.toml exists, else
//! off), and asking it about many texts, two at a time, with "N of M" progress on stderr.
//!
//! Fail closed: in `fail-closed` a text whose check could not run (server down, no answer in
//! `[pii] llm_seconds`, an answer that cannot be read) stops the command before it writes
//! anything, exit 3, naming the text and why; in `fail-open` the rules' masking is used for it
//! and stderr says how many texts went unchecked.

use std::time::Duration;

use clap::{Args, ValueEnum};

use super::progress::{Progress, ProgressArgs, Unit};
use crate::safety::PiiCheck;
use crate::safety::pii::{Masked, PiiLlmMode, second};

/// Exit code when a fail-closed check could not run (nothing written).
pub const EXIT_UNCHECKED: i32 = 3;

/// Requests in flight at once: a local model serves one or two well; more only queue there.
const AT_ONCE: usize = 2;

/// `--pii-llm`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Mode {
    /// No second opinion: the rules alone.
    Off,
    /// A text the model could not check keeps the rules' masking; stderr counts them.
    FailOpen,
    /// A text the model could not check stops the command: nothing written, exit 3.
    FailClosed,
}

#[derive(Args, Debug, Clone, Copy, Default)]
pub struct SecondArgs {
    /// The model's second opinion on personal data in each masked text: off, fail-open or
    /// fail-closed (default: policy.toml [pii] llm when llm.toml exists, else off)
    #[arg(long, value_enum, value_name = "MODE")]
    pub pii_llm: Option<Mode>,
}

/// The check a run makes, or `None` for none: an explicit `flag` wins (its time limit from
/// the policy); without one the policy's mode, only when a model is configured.
pub fn resolve(
    flag: Option<Mode>,
    model_configured: bool,
    policy: &dyn Fn() -> Result<PiiCheck, String>,
) -> Result<Option<PiiCheck>, String> {
    let mode = match flag {
        Some(Mode::Off) => return Ok(None),
        Some(Mode::FailOpen) => Some(PiiLlmMode::FailOpen),
        Some(Mode::FailClosed) => Some(PiiLlmMode::FailClosed),
        None if !model_configured => return Ok(None),
        None => None,
    };
    let mut check = policy()?;
    check.mode = mode.unwrap_or(check.mode);
    Ok((check.mode != PiiLlmMode::Off).then_some(check))
}

/// A client for the configured model, the run's mode and its time limit.
pub struct Second {
    client: crate::llm::Client,
    check: PiiCheck,
    rt: tokio::runtime::Runtime,
}

impl Second {
    /// The second opinion `args` and the configuration ask for; `Err` is a configuration the
    /// command cannot use (exit 2).
    pub fn from_args(args: SecondArgs) -> Result<Option<Second>, String> {
        let configured = crate::llm::LlmConfig::user_path().is_some_and(|p| p.exists());
        let policy = || {
            crate::safety::SafetyRules::load()
                .map(|r| r.pii)
                .map_err(|e| e.to_string())
        };
        let Some(check) = resolve(args.pii_llm, configured, &policy)? else {
            return Ok(None);
        };
        let cfg = crate::llm::LlmConfig::load().map_err(|e| e.to_string())?;
        let client = crate::llm::Client::new(cfg).map_err(|e| e.to_string())?;
        let rt = crate::duo::driver::runtime()
            .map_err(|e| format!("cannot start the async runtime: {e}"))?;
        Ok(Some(Second { client, check, rt }))
    }

    pub fn fail_closed(&self) -> bool {
        self.check.mode == PiiLlmMode::FailClosed
    }

    /// Asks about each of `texts` (rule-masked) in order; in fail-closed mode the answers end
    /// at the first text that could not be checked. Progress ("N of M") on a terminal.
    pub fn check(&self, texts: Vec<Masked>, progress: ProgressArgs) -> Vec<second::Outcome> {
        let shown = Progress::start(
            "PII second opinion",
            Some(texts.len() as u64),
            Unit::Items("texts checked"),
            progress,
        );
        let limit = Duration::from_secs_f64(self.check.seconds);
        let out = self.rt.block_on(second::check_each(
            &self.client,
            texts,
            limit,
            AT_ONCE,
            self.fail_closed(),
            &mut |n| shown.set(n as u64),
        ));
        shown.finish();
        out
    }
}

/// Why a fail-closed command stops at `place` (where the text is), and what would go on.
pub fn refusal(place: &str, why: &str, nothing: &str) -> String {
    format!(
        "{place}: the PII second opinion could not check this text ({why}); {nothing} \
         (fail-closed: `--pii-llm fail-open` would use the rules' masking for it, `--pii-llm \
         off` asks no model)"
    )
}

/// The fail-open note: how many of `total` texts went unchecked.
pub fn unchecked_note(unchecked: usize, total: usize) -> String {
    format!(
        "{unchecked} of {total} text(s) were not checked by the PII second opinion (fail-open): \
         the rules' masking was used for them"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(mode: PiiLlmMode) -> impl Fn() -> Result<PiiCheck, String> {
        move || Ok(PiiCheck { mode, seconds: 7.0 })
    }

    /// Every combination: an explicit flag decides (off never reads the policy), without one
    /// the policy's mode counts only when a model is configured, and "off" is never a check.
    #[test]
    fn the_flag_then_the_policy_decide_and_off_asks_nothing() {
        let modes = [
            PiiLlmMode::Off,
            PiiLlmMode::FailOpen,
            PiiLlmMode::FailClosed,
        ];
        let flags = [
            None,
            Some(Mode::Off),
            Some(Mode::FailOpen),
            Some(Mode::FailClosed),
        ];
        for flag in flags {
            for configured in [false, true] {
                for pm in modes {
                    let got = resolve(flag, configured, &policy(pm)).unwrap();
                    let want = match flag {
                        Some(Mode::Off) => None,
                        Some(Mode::FailOpen) => Some(PiiLlmMode::FailOpen),
                        Some(Mode::FailClosed) => Some(PiiLlmMode::FailClosed),
                        None if configured && pm != PiiLlmMode::Off => Some(pm),
                        None => None,
                    };
                    assert_eq!(got.map(|c| c.mode), want, "{flag:?} {configured} {pm:?}");
                    assert!(got.is_none_or(|c| c.seconds == 7.0));
                }
                let broken = || Err("policy.toml:3:1: bad".to_string());
                let r = resolve(flag, configured, &broken);
                let reads = matches!(flag, Some(Mode::FailOpen | Mode::FailClosed))
                    || (flag.is_none() && configured);
                assert_eq!(r.is_err(), reads, "{flag:?} {configured}");
            }
        }
    }
}
