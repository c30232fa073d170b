//! LLM endpoint settings: the embedded default llm.toml merged with the user's, typed and checked.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::config::ConfigError;

const DEFAULT_TOML: &str = include_str!("../../../../assets/config/llm.toml");
const DEFAULT_PATH: &str = "assets/config/llm.toml";

/// Which wire protocol the endpoint speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum ApiKind {
    /// Ollama's native API: /api/chat (NDJSON), /api/tags, /api/embed.
    #[value(name = "ollama")]
    Ollama,
    /// OpenAI-compatible: /v1/chat/completions (SSE), /v1/models, /v1/embeddings.
    #[value(name = "openai")]
    OpenAi,
}

impl ApiKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ApiKind::Ollama => "ollama",
            ApiKind::OpenAi => "openai",
        }
    }
}

impl std::fmt::Display for ApiKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How system messages reach the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SystemRole {
    /// Sent as `system` role messages.
    Native,
    /// Folded into the first user message (models without a system role, e.g. Gemma 2).
    Fold,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Timeouts {
    pub connect_ms: u64,
    pub first_token_ms: u64,
    pub idle_ms: u64,
    pub request_ms: u64,
    /// The model-list probe at start-up (and on R): a server that accepts the connection but
    /// never answers is reported after this, not after first_token_ms.
    #[serde(default = "default_probe_ms")]
    pub probe_ms: u64,
    /// Loading a cold model (Ollama's preload, before the first turn). Ollama's own limit is
    /// OLLAMA_LOAD_TIMEOUT (5 min, envconfig/config.go); the first-token limit starts after it.
    #[serde(default = "default_load_ms")]
    pub load_ms: u64,
    /// A server that stops answering mid-run (refused or reset connections: a restart) is
    /// waited for this long before the run gives up; then the model is loaded again.
    #[serde(default = "default_restart_ms")]
    pub restart_ms: u64,
}

fn default_tokens_per_char() -> f64 {
    1.5
}

fn default_probe_ms() -> u64 {
    3000
}

fn default_load_ms() -> u64 {
    300_000
}

fn default_restart_ms() -> u64 {
    120_000
}

fn default_keep_alive_s() -> u64 {
    1800
}

impl Timeouts {
    pub fn probe(&self) -> Duration {
        Duration::from_millis(self.probe_ms)
    }
    pub fn connect(&self) -> Duration {
        Duration::from_millis(self.connect_ms)
    }
    pub fn restart(&self) -> Duration {
        Duration::from_millis(self.restart_ms)
    }
    pub fn load(&self) -> Duration {
        Duration::from_millis(self.load_ms)
    }
    pub fn first_token(&self) -> Duration {
        Duration::from_millis(self.first_token_ms)
    }
    pub fn idle(&self) -> Duration {
        Duration::from_millis(self.idle_ms)
    }
    pub fn request(&self) -> Duration {
        Duration::from_millis(self.request_ms)
    }
}

/// Settings that apply to one model only.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelOverride {
    pub system_role: Option<SystemRole>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LlmConfig {
    pub endpoint: String,
    pub model: String,
    #[serde(default)]
    pub api: Option<ApiKind>,
    pub num_ctx: u32,
    #[serde(default)]
    pub system_role: Option<SystemRole>,
    pub stop: Vec<String>,
    pub max_chars: usize,
    pub trim_chars: String,
    pub temperature: f32,
    pub judge_temperature: f32,
    pub max_tokens: u32,
    pub timeouts: Timeouts,
    pub retry_backoff_ms: u64,
    /// First guess of prompt tokens per character, until a server's count is seen.
    #[serde(default = "default_tokens_per_char")]
    pub tokens_per_char: f64,
    #[serde(default)]
    pub embed_model: Option<String>,
    /// How long Ollama keeps the model loaded after a call (sent as `keep_alive` on every
    /// Ollama call, and with the preload before the first turn).
    #[serde(default = "default_keep_alive_s")]
    pub keep_alive_s: u64,
    /// Where embeddings are asked for when not at `endpoint` (llama-server serves one model:
    /// an embedding model runs as its own instance with `--embeddings`).
    #[serde(default)]
    pub embed_endpoint: Option<String>,
    #[serde(default)]
    pub models: BTreeMap<String, ModelOverride>,
    /// The leak review's model judge (see `vault::judge`).
    #[serde(default)]
    pub leak_judge: LeakJudgeConfig,
}

/// `[leak_judge]` in llm.toml: the chat model asked whether a line reveals a secret.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LeakJudgeConfig {
    pub enabled: bool,
    /// For all of one line's questions together.
    pub timeout_ms: u64,
    /// The most secrets asked about per line.
    pub max_secrets: usize,
}

impl Default for LeakJudgeConfig {
    fn default() -> LeakJudgeConfig {
        LeakJudgeConfig {
            enabled: true,
            timeout_ms: 20_000,
            max_secrets: 12,
        }
    }
}

impl Default for LlmConfig {
    fn default() -> LlmConfig {
        // The embedded file is checked by a unit test; this cannot fail in a released build.
        LlmConfig::from_toml_str(Path::new(DEFAULT_PATH), "")
            .unwrap_or_else(|e| unreachable!("embedded {DEFAULT_PATH} is invalid: {e}"))
    }
}

impl LlmConfig {
    /// The embedded, commented default file.
    pub fn default_toml() -> &'static str {
        DEFAULT_TOML
    }

    /// `<config_dir>/llm.toml`, whether or not it exists.
    pub fn user_path() -> Option<PathBuf> {
        crate::config::config_dir().map(|d| d.join("llm.toml"))
    }

    /// Defaults ⊕ `<config_dir>/llm.toml` (if present).
    pub fn load() -> Result<LlmConfig, ConfigError> {
        match LlmConfig::user_path().filter(|p| p.exists()) {
            None => LlmConfig::from_toml_str(Path::new(DEFAULT_PATH), ""),
            Some(path) => {
                let text = crate::limits::read_text(&path, crate::limits::MAX_FILE_BYTES)?;
                LlmConfig::from_toml_str(&path, &text)
            }
        }
    }

    /// Defaults ⊕ `text` (the contents of the user's file at `path`, used in error messages).
    /// The command line's `--endpoint`, `--model` and `--api`, over the files.
    pub fn with_flags(
        mut self,
        endpoint: Option<String>,
        model: Option<String>,
        api: Option<ApiKind>,
    ) -> LlmConfig {
        if let Some(e) = endpoint {
            self.endpoint = e;
        }
        if let Some(m) = model {
            self.model = m;
        }
        if api.is_some() {
            self.api = api;
        }
        self
    }

    pub fn from_toml_str(path: &Path, text: &str) -> Result<LlmConfig, ConfigError> {
        let cfg: LlmConfig =
            crate::config::layered_from_str(DEFAULT_PATH, DEFAULT_TOML, Some((path, text)))?;
        cfg.validate(path)
            .map_err(|e| crate::config::relocate(e, path, text))?;
        Ok(cfg)
    }

    fn validate(&self, path: &Path) -> Result<(), ConfigError> {
        let bad = |key: &str, message: String| ConfigError::Invalid {
            path: path.to_path_buf(),
            at: None,
            key: Some(key.to_string()),
            message,
        };
        match reqwest::Url::parse(&self.endpoint) {
            Ok(u) if matches!(u.scheme(), "http" | "https") && u.host().is_some() => {}
            Ok(u) => {
                return Err(bad(
                    "endpoint",
                    format!("`{}` must be an http:// or https:// URL", u.as_str()),
                ));
            }
            Err(e) => {
                return Err(bad(
                    "endpoint",
                    format!("`{}` is not a URL: {e}", self.endpoint),
                ));
            }
        }
        if self.model.trim().is_empty() {
            return Err(bad("model", "must not be empty".into()));
        }
        if self.max_chars == 0 {
            return Err(bad("max_chars", "must be at least 1".into()));
        }
        if self.num_ctx == 0 {
            return Err(bad("num_ctx", "must be at least 1".into()));
        }
        if self.max_tokens == 0 {
            return Err(bad("max_tokens", "must be at least 1".into()));
        }
        for (key, t) in [
            ("temperature", self.temperature),
            ("judge_temperature", self.judge_temperature),
        ] {
            if !(0.0..=5.0).contains(&t) {
                return Err(bad(key, format!("{t} is outside 0.0–5.0")));
            }
        }
        let t = &self.timeouts;
        for (key, ms) in [
            ("timeouts.connect_ms", t.connect_ms),
            ("timeouts.first_token_ms", t.first_token_ms),
            ("timeouts.idle_ms", t.idle_ms),
            ("timeouts.request_ms", t.request_ms),
            ("timeouts.probe_ms", t.probe_ms),
            ("timeouts.load_ms", t.load_ms),
            ("timeouts.restart_ms", t.restart_ms),
        ] {
            if ms == 0 {
                return Err(bad(key, "must be at least 1 ms".into()));
            }
        }
        Ok(())
    }

    /// The system-role handling the user chose: per-model override, then the top-level
    /// setting; `None` when neither is set (the client then asks the server: see `facts.rs`).
    pub fn configured_system_role(&self) -> Option<SystemRole> {
        self.models
            .get(&self.model)
            .and_then(|m| m.system_role)
            .or(self.system_role)
    }

    /// The system-role handling without asking the server: the configured one, else `fold`
    /// for Gemma models (whose own chat templates have no system turn) and `native` for the
    /// rest. Used on OpenAI-compatible servers; on Ollama the model's template decides.
    pub fn effective_system_role(&self) -> SystemRole {
        self.configured_system_role().unwrap_or_else(|| {
            if self.model.to_lowercase().contains("gemma") {
                SystemRole::Fold
            } else {
                SystemRole::Native
            }
        })
    }

    pub fn keep_alive(&self) -> String {
        format!("{}s", self.keep_alive_s)
    }

    /// The model used for embeddings.
    pub fn embed_model(&self) -> &str {
        self.embed_model.as_deref().unwrap_or(&self.model)
    }

    pub fn retry_backoff(&self) -> Duration {
        Duration::from_millis(self.retry_backoff_ms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_defaults_parse() {
        let c = LlmConfig::default();
        assert_eq!(c.endpoint, "http://127.0.0.1:11434");
        assert_eq!(c.model, "gemma2:27b");
        assert_eq!(c.api, None);
        assert_eq!(c.num_ctx, 8192);
        assert_eq!(c.max_chars, 400);
        assert_eq!(c.trim_chars, "。？！");
        assert_eq!(c.stop.len(), 6);
        assert!(c.stop.iter().any(|s| s == "<start_of_turn>"));
        assert_eq!(c.timeouts.load_ms, 300_000);
        assert_eq!(c.timeouts.restart_ms, 120_000);
        assert_eq!(c.effective_system_role(), SystemRole::Fold);
    }

    #[test]
    fn system_role_resolution_order() {
        let mut c = LlmConfig {
            model: "Qwen2.5:7b".into(),
            ..LlmConfig::default()
        };
        assert_eq!(c.effective_system_role(), SystemRole::Native);
        c.model = "GEMMA3:12b".into();
        assert_eq!(c.effective_system_role(), SystemRole::Fold);
        c.system_role = Some(SystemRole::Native);
        assert_eq!(c.effective_system_role(), SystemRole::Native);
        c.models.insert(
            "GEMMA3:12b".into(),
            ModelOverride {
                system_role: Some(SystemRole::Fold),
            },
        );
        assert_eq!(c.effective_system_role(), SystemRole::Fold);
    }
}
