//! User-message safety (issue 6 §2–§3, seed 000 §4, seed 003 §6): PII masking before anything
//! is stored or sent, the five-layer judgment of user messages, and the world-view check on
//! the sisters' replies.
//!
//! - Layer 1 `layers::NgWords`: static NG words (assets/safety/ng_words.toml).
//! - Layer 2 `contextual::Contextual`: the same word judged by context (contextual.toml).
//! - Layer 3 `layers::Patterns`: compound regex patterns (patterns.toml).
//! - Layer 4 `context_judge`: the LLM's じゃれ合い / 攻撃 / 通常, behind the `ContextLlm` seam.
//! - `pipeline::SafetyJudge` runs 1–4 and explains every step (policy.toml says how).
//! - Layer 5 `worldview::WorldviewChecker`: Director findings `worldview` on replies.
//!
//! All matching runs on `fold::Folded` (NFKC, katakana → hiragana, lower case); spans are char
//! offsets of the original text. Users extend every file from `<config_dir>/safety/*.toml`.
//!
//! Chosen against the bugs of the project this comes from (AI-Vtuber-Project): Layer 4 never
//! overturns a critical hit and runs after any of Layers 1–3 raised something (not only
//! Layer 1); an unreadable or failed Layer 4 says so in the trace instead of posing as a
//! verdict; the message reaches the model as JSON data, not spliced into the instructions;
//! Layer 5 does not flag ordinary words (モデル, データ, システム, ドラマ ⊃ ラマ) or latin
//! letters inside words, and its correction is deterministic.

pub mod context_judge;
pub mod contextual;
pub mod data;
pub mod judgment;
pub mod layers;
mod messages;
pub use kakeai_pii::pii;
pub mod pipeline;
pub mod shared;
pub mod types;
pub use crate::text::{fold, variants};
pub mod words;
pub mod worldview;

use std::path::Path;

pub use context_judge::{ClientLlm, ContextLlm, ContextType, L4CallError, LlmVerdict};
pub use data::L4Mode;
pub use layers::Hit;
pub use pipeline::{Action, Judgment, L4Skip, Policy, Reason, SafetyJudge, StepOutcome, TraceStep};
pub use shared::SharedSafety;
pub use types::{Category, Sister, Tier, UserContext};
pub use worldview::WorldviewChecker;

use crate::config::ConfigError;

/// Layers 1–4 and Layer 5, built from the same data files.
#[derive(Debug, Clone)]
pub struct SafetyRules {
    pub judge: SafetyJudge,
    pub worldview: WorldviewChecker,
    /// The model's second opinion on PII in the workbench's chat mode (policy.toml `[pii]`).
    pub pii: PiiCheck,
}

/// How the workbench's chat mode asks the model for a second opinion on PII (seed 003 §6):
/// the mode and the seconds the check may take.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PiiCheck {
    pub mode: pii::PiiLlmMode,
    pub seconds: f64,
}

impl PiiCheck {
    /// The last source that sets each key wins; seconds must be in (0, 600].
    fn from_sources(sources: &[data::Source]) -> Result<PiiCheck, ConfigError> {
        let mut c = PiiCheck {
            mode: pii::PiiLlmMode::FailClosed,
            seconds: 5.0,
        };
        for src in sources {
            let Some(p) = &src.file.pii else { continue };
            if let Some(s) = p.llm_seconds {
                if !(s > 0.0 && s <= 600.0) {
                    return Err(src.error(
                        "llm_seconds",
                        "[pii] llm_seconds must be above 0 and at most 600".into(),
                    ));
                }
                c.seconds = s;
            }
            c.mode = p.llm.unwrap_or(c.mode);
        }
        Ok(c)
    }
}

impl SafetyRules {
    /// The embedded defaults ⊕ `<config_dir>/safety/*.toml`.
    pub fn load() -> Result<SafetyRules, ConfigError> {
        SafetyRules::load_from(data::user_dir().as_deref())
    }

    /// The embedded defaults ⊕ every `*.toml` in `user_dir` (when it exists).
    pub fn load_from(user_dir: Option<&Path>) -> Result<SafetyRules, ConfigError> {
        let sources = data::load_sources(user_dir)?;
        Ok(SafetyRules {
            judge: SafetyJudge::from_sources(&sources)?,
            worldview: WorldviewChecker::from_sources(&sources)?,
            pii: PiiCheck::from_sources(&sources)?,
        })
    }

    /// Loaded once per process (defaults ⊕ the user's files; the defaults alone when those do
    /// not parse — the workbench and `safety` report such errors where they load them).
    pub fn shared() -> &'static SafetyRules {
        static RULES: std::sync::OnceLock<SafetyRules> = std::sync::OnceLock::new();
        RULES.get_or_init(|| SafetyRules::load().unwrap_or_else(|_| SafetyRules::builtin()))
    }

    /// The embedded defaults only (checked by a test, so this cannot fail in a release).
    pub fn builtin() -> SafetyRules {
        SafetyRules::load_from(None)
            .unwrap_or_else(|e| unreachable!("embedded safety data is invalid: {e}"))
    }
}

#[cfg(test)]
mod kana_tests;

#[cfg(test)]
mod echo_tests;
