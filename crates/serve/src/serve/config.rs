//! `kakeai serve` settings: the embedded defaults (assets/serve/serve.toml) under a `--config`
//! file, and the two LINE secrets — from the environment or that file, never the command line.
//! A `Secret` prints as `***`, so it cannot reach a log line or an error by accident.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use super::judgment::SkipConfig;

pub const ENV_SECRET: &str = "KAKEAI_LINE_CHANNEL_SECRET";
pub const ENV_TOKEN: &str = "KAKEAI_LINE_ACCESS_TOKEN";

/// A credential. Debug and Display never show it.
#[derive(Clone, Deserialize, PartialEq)]
#[serde(transparent)]
pub struct Secret(String);

impl Secret {
    pub fn new(s: impl Into<String>) -> Secret {
        Secret(s.into())
    }
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("***")
    }
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LineApiConfig {
    pub retries: u32,
    pub backoff_ms: u64,
    pub max_retry_after_seconds: u64,
    pub timeout_seconds: u64,
}

/// Seed 002's `response` block.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ResponseConfig {
    pub check_interval_seconds: f64,
    pub min_wait_seconds: i64,
    pub message_limit: usize,
    pub max_message_age_seconds: i64,
    pub judgment_skip: SkipConfig,
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Lines {
    pub text_only: String,
    pub fallback: String,
}

/// The webhook listener's limits (see `listen`) and the monitoring address.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct HttpConfig {
    pub max_body_bytes: usize,
    pub header_timeout_seconds: f64,
    pub body_timeout_seconds: f64,
    /// Longest pause between two pieces of a body (LINE sends its small bodies at once).
    pub body_idle_seconds: f64,
    pub max_connections: usize,
    pub max_connection_seconds: f64,
    pub metrics_listen: String,
}

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LineSecrets {
    pub channel_secret: Option<Secret>,
    pub access_token: Option<Secret>,
}

/// `[model]`: the model the bot talks to. Each key overrides llm.toml; a command-line flag
/// (`--endpoint`, `--model`, `--api`) overrides the key.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ModelSettings {
    pub endpoint: Option<String>,
    pub model: Option<String>,
    pub api: Option<crate::llm::ApiKind>,
}

/// The PII second opinion on the bot's path (seed 003 §6): `llm` is `fail-closed` (a message
/// the model could not check is not sent to a model: her fallback line, marked for review),
/// `fail-open` (the rules' result is used silently) or `off`; `llm_seconds` is the share of the
/// answer budget the check may take (at most half of it, whatever is set).
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PiiSettings {
    pub llm: crate::safety::pii::PiiLlmMode,
    pub llm_seconds: f64,
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ServeConfig {
    pub listen: String,
    pub webhook_path: String,
    pub character: String,
    pub api_base: String,
    pub answer_budget_seconds: f64,
    pub max_attempts: usize,
    pub workers: usize,
    pub drain_seconds: f64,
    /// How long an instance holds a message it is answering (see serve.toml).
    pub lease_seconds: f64,
    /// `/healthz` fails once the store has been unreachable this long (see serve.toml).
    pub store_down_seconds: f64,
    pub http: HttpConfig,
    pub line_api: LineApiConfig,
    pub response: ResponseConfig,
    pub pii: PiiSettings,
    pub lines: BTreeMap<String, Lines>,
    #[serde(default)]
    pub line: LineSecrets,
    #[serde(default)]
    pub model: ModelSettings,
}

impl ServeConfig {
    pub fn defaults() -> ServeConfig {
        toml::from_str(include_str!("../../../../assets/serve/serve.toml"))
            .expect("the embedded serve.toml parses")
    }

    /// The defaults with `file`'s keys over them. Errors name the file, line and column.
    pub fn load(file: Option<&Path>) -> Result<ServeConfig, String> {
        let base: toml::Table = toml::from_str(include_str!("../../../../assets/serve/serve.toml"))
            .expect("the embedded serve.toml parses");
        let mut merged = toml::Value::Table(base);
        let mut text = String::new();
        if let Some(p) = file {
            // Size (8 MiB), UTF-8 and depth first: /dev/zero or a huge file is refused, not read.
            text = crate::limits::read_toml(p).map_err(|e| e.to_string())?;
            let over: toml::Table = toml::from_str(&text)
                .map_err(|e| super::config_secrets::scrub(&text, located(p, &text, &e)))?;
            super::config_secrets::check_shape(p, &text, &over)?;
            merge(&mut merged, toml::Value::Table(over));
        }
        let cfg: ServeConfig = merged.try_into().map_err(|e: toml::de::Error| match file {
            // The defaults are valid, so a key the merge made unknown is the file's: at its place.
            Some(p) => super::config_secrets::scrub(
                &text,
                match unknown_key(e.message()).and_then(|k| key_place(&text, k)) {
                    Some((line, col)) => format!("{}:{line}:{col}: {}", p.display(), e.message()),
                    None => format!("{}: {}", p.display(), e.message()),
                },
            ),
            None => e.to_string(),
        })?;
        cfg.check()?;
        if let Some(p) = file {
            super::config_secrets::check_mode(p, &cfg.line)?;
        }
        Ok(cfg)
    }

    pub(crate) fn check(&self) -> Result<(), String> {
        if !["yana", "ayu"].contains(&self.character.as_str()) {
            return Err(format!(
                "character must be yana or ayu, not {:?}",
                self.character
            ));
        }
        if !self.webhook_path.starts_with('/') {
            return Err(format!(
                "webhook_path must start with /: {:?}",
                self.webhook_path
            ));
        }
        for c in ["yana", "ayu"] {
            if !self.lines.contains_key(c) {
                return Err(format!("[lines.{c}] is missing"));
            }
        }
        if self.response.check_interval_seconds <= 0.0
            || self.workers == 0
            || self.max_attempts == 0
        {
            return Err("check_interval_seconds, workers and max_attempts must be positive".into());
        }
        let h = &self.http;
        let times = [
            self.answer_budget_seconds,
            self.drain_seconds,
            self.lease_seconds,
            self.store_down_seconds,
            h.header_timeout_seconds,
            h.body_timeout_seconds,
            h.body_idle_seconds,
            h.max_connection_seconds,
        ];
        if times
            .iter()
            .any(|t| !t.is_finite() || *t <= 0.0 || *t > 86_400.0)
            || h.max_body_bytes == 0
            || h.max_connections == 0
        {
            return Err("answer_budget_seconds, drain_seconds, lease_seconds, store_down_seconds and every [http] limit must be positive (seconds at most a day)".into());
        }
        let p = self.pii.llm_seconds;
        if !p.is_finite() || p <= 0.0 || p > 86_400.0 {
            return Err("[pii] llm_seconds must be positive (seconds at most a day)".into());
        }
        Ok(())
    }

    pub fn lines(&self) -> &Lines {
        &self.lines[&self.character]
    }

    /// The channel secret and access token: the environment first, then the config file.
    /// Missing ones → an error naming what to set.
    pub fn secrets(
        &self,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<(Secret, Secret), String> {
        let pick = |var: &str, file: &Option<Secret>| {
            env(var)
                .filter(|v| !v.trim().is_empty())
                .map(Secret::new)
                .or_else(|| file.clone().filter(|s| !s.expose().trim().is_empty()))
        };
        let secret = pick(ENV_SECRET, &self.line.channel_secret);
        let token = pick(ENV_TOKEN, &self.line.access_token);
        match (secret, token) {
            (Some(s), Some(t)) => Ok((s, t)),
            (s, t) => {
                let missing: Vec<&str> = [(s.is_none(), ENV_SECRET), (t.is_none(), ENV_TOKEN)]
                    .into_iter()
                    .filter(|(m, _)| *m)
                    .map(|(_, v)| v)
                    .collect();
                Err(format!(
                    "no LINE credentials: set {} in the environment (or channel_secret / access_token under [line] in the --config file); they are never read from the command line",
                    missing.join(" and ")
                ))
            }
        }
    }
}

fn merge(base: &mut toml::Value, over: toml::Value) {
    match (base, over) {
        (toml::Value::Table(b), toml::Value::Table(o)) => {
            for (k, v) in o {
                match b.get_mut(&k) {
                    Some(slot) => merge(slot, v),
                    None => {
                        b.insert(k, v);
                    }
                }
            }
        }
        (slot, v) => *slot = v,
    }
}

/// The key of serde's "unknown field `KEY`, expected …".
fn unknown_key(message: &str) -> Option<&str> {
    let rest = message.split("unknown field `").nth(1)?;
    rest.split('`').next().filter(|k| !k.is_empty())
}

/// Where `key` is first written in a TOML text as a key (`key =`, `"key" =`, a dotted
/// `key.x =`, or a table header `[key]`, `[a.key]`, `[[key]]`): (line, column in characters).
fn key_place(text: &str, key: &str) -> Option<(usize, usize)> {
    let forms = [key.to_string(), format!("\"{key}\""), format!("'{key}'")];
    for (n, line) in text.lines().enumerate() {
        let body = line.split('#').next().unwrap_or("");
        let indent = body.len() - body.trim_start().len();
        let t = body.trim_start();
        let (head, path) = if let Some(h) = t.strip_prefix("[[") {
            (true, h.split("]]").next().unwrap_or(""))
        } else if let Some(h) = t.strip_prefix('[') {
            (true, h.split(']').next().unwrap_or(""))
        } else {
            (false, t.split('=').next().unwrap_or(""))
        };
        if !head && !t.contains('=') {
            continue;
        }
        let mut at = indent + (t.len() - t.trim_start_matches('[').len());
        for part in path.split('.') {
            let lead = part.len() - part.trim_start().len();
            if forms.iter().any(|f| part.trim() == f) {
                let col = line[..at + lead].chars().count() + 1;
                return Some((n + 1, col));
            }
            at += part.len() + 1;
        }
    }
    None
}

fn located(p: &Path, text: &str, e: &toml::de::Error) -> String {
    let (line, col) = e.span().map_or((0, 0), |s| {
        let before = &text[..s.start.min(text.len())];
        let line = before.matches('\n').count() + 1;
        let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        (line, col)
    });
    format!("{}:{line}:{col}: {}", p.display(), e.message())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_seed_002s() {
        let c = ServeConfig::defaults();
        assert_eq!(c.response.check_interval_seconds, 60.0);
        assert_eq!(c.response.min_wait_seconds, 300);
        assert_eq!(c.response.message_limit, 20);
        assert_eq!(c.response.max_message_age_seconds, 43_200);
        assert_eq!(c.response.judgment_skip.default_skip_seconds, 600);
    }

    #[test]
    fn secrets_come_from_env_or_file_and_missing_ones_are_named() {
        let c = ServeConfig::defaults();
        let none = |_: &str| None;
        let e = c.secrets(&none).unwrap_err();
        assert!(e.contains(ENV_SECRET) && e.contains(ENV_TOKEN), "{e}");
        let half = |v: &str| (v == ENV_SECRET).then(|| "s3cr3t".to_string());
        let e = c.secrets(&half).unwrap_err();
        assert!(
            !e.contains(ENV_SECRET) && e.contains(ENV_TOKEN) && !e.contains("s3cr3t"),
            "{e}"
        );
        let mut f = c.clone();
        f.line.access_token = Some(Secret::new("tok"));
        let (s, t) = f.secrets(&half).unwrap();
        assert_eq!((s.expose(), t.expose()), ("s3cr3t", "tok"));
        assert_eq!(
            format!("{s:?} {:?}", f.line),
            "*** LineSecrets { channel_secret: None, access_token: Some(***) }"
        );
    }

    #[test]
    fn a_bad_file_is_located() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("serve.toml");
        std::fs::write(&p, "listen = \"x\"\nworkers = \n").unwrap();
        let e = ServeConfig::load(Some(&p)).unwrap_err();
        assert!(e.contains("serve.toml:2:"), "{e}");
        std::fs::write(&p, "[response.judgment_skip]\nenabled = false\n").unwrap();
        let c = ServeConfig::load(Some(&p)).unwrap();
        assert!(!c.response.judgment_skip.enabled);
        assert_eq!(c.response.judgment_skip.thresholds.len(), 2);
    }

    /// An unknown key in the file is reported at its line and column (in characters), in a
    /// table, as a table, dotted, quoted; nothing is loaded.
    #[test]
    fn an_unknown_key_is_reported_at_its_line_and_column() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("serve.toml");
        for (text, key, place) in [
            (
                "character = \"ayu\"\nchracter = \"yana\"\n",
                "chracter",
                "2:1",
            ),
            (
                "# あゆ用\n[response]\n  message_limt = 5\n",
                "message_limt",
                "3:3",
            ),
            (
                "[response]\nmessage_limit = 5\n\n[respnse]\nx = 1\n",
                "respnse",
                "4:2",
            ),
            ("response.mesage_limit = 5\n", "mesage_limit", "1:10"),
            (
                "[response]\n\"check_every\" = 5 # 説明\n",
                "check_every",
                "2:1",
            ),
        ] {
            std::fs::write(&p, text).unwrap();
            let e = ServeConfig::load(Some(&p)).unwrap_err();
            let want = format!("{}:{place}: ", p.display());
            assert!(e.starts_with(&want) && e.contains(key), "{text:?}: {e}");
        }
        assert_eq!(key_place("a = 1\n# b = 2\nあい.b = 3\n", "b"), Some((3, 4)));
        assert_eq!(key_place("a = \"b\"\n", "b"), None);
    }
}
