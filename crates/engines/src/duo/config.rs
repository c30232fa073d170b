//! How a duo run is set up: turns, attempts, exhaustion policy, world text and prompt budget —
//! embedded defaults (assets/duo/duo.toml) ⊕ the user's duo.toml.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::config::{ConfigError, load_layered};

const DEFAULT: &str = include_str!("../../../../assets/duo/duo.toml");

/// What to commit when every attempt of a turn was RETRY.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Exhaustion {
    /// The least severe attempt, then the highest judge score, then the earliest.
    Best,
    /// The last attempt, as duo-talk did.
    Last,
    /// Pause the run until the reviewer picks an attempt or regenerates.
    Hold,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DuoConfig {
    pub max_turns: usize,
    pub first_speaker: String,
    pub max_attempts: usize,
    pub exhaustion: Exhaustion,
    pub world: String,
    pub prompt_budget_chars: usize,
    pub placeholder_user: String,
    pub reply_guide: String,
}

/// $KAKEAI_CONFIG_DIR/duo.toml or the XDG config dir.
pub fn user_path() -> Option<PathBuf> {
    crate::config::config_dir().map(|d| d.join("duo.toml"))
}

impl DuoConfig {
    pub fn builtin() -> Result<DuoConfig, ConfigError> {
        load_layered("assets/duo/duo.toml", DEFAULT, None)
    }

    /// Defaults ⊕ the user's duo.toml.
    pub fn load() -> Result<DuoConfig, ConfigError> {
        let cfg: DuoConfig = load_layered("assets/duo/duo.toml", DEFAULT, user_path().as_deref())?;
        cfg.validate()
    }

    fn validate(self) -> Result<DuoConfig, ConfigError> {
        let bad = |key: &str, message: &str| ConfigError::Invalid {
            path: user_path().unwrap_or_default(),
            at: None,
            key: Some(key.into()),
            message: message.into(),
        };
        if self.max_attempts == 0 {
            return Err(bad("max_attempts", "must be at least 1"));
        }
        if self.max_turns == 0 {
            return Err(bad("max_turns", "must be at least 1"));
        }
        Ok(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_follow_the_seeds() {
        let c = DuoConfig::builtin().unwrap();
        assert_eq!(c.max_turns, 12);
        assert_eq!(c.max_attempts, 3);
        assert_eq!(c.first_speaker, "yana");
        assert_eq!(c.exhaustion, Exhaustion::Best);
        assert!(c.reply_guide.contains("{name}"));
    }
}
