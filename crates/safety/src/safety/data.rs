//! The safety data files: their TOML shape, the embedded defaults (assets/safety/*.toml) and
//! the user's `<config_dir>/safety/*.toml`, read in file-name order after the defaults. Every
//! file may hold any section; how sections merge is said where they are built. Errors are
//! `path:line:col: message`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::types::{Category, Tier};
use crate::config::{ConfigError, line_col, load_toml_table};

/// The embedded defaults, as (name used in messages, text).
pub const BUILTIN: [(&str, &str); 5] = [
    (
        "assets/safety/ng_words.toml",
        include_str!("../../../../assets/safety/ng_words.toml"),
    ),
    (
        "assets/safety/contextual.toml",
        include_str!("../../../../assets/safety/contextual.toml"),
    ),
    (
        "assets/safety/patterns.toml",
        include_str!("../../../../assets/safety/patterns.toml"),
    ),
    (
        "assets/safety/policy.toml",
        include_str!("../../../../assets/safety/policy.toml"),
    ),
    (
        "assets/safety/worldview.toml",
        include_str!("../../../../assets/safety/worldview.toml"),
    ),
];

/// One safety file: every section optional.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SafetyFile {
    #[serde(default)]
    pub word: Vec<WordEntry>,
    #[serde(default)]
    pub pattern: Vec<PatternEntry>,
    #[serde(default)]
    pub placeholders: BTreeMap<String, Vec<String>>,
    #[serde(default)]
    pub contextual: Option<ContextualFile>,
    #[serde(default)]
    pub policy: Option<PolicyFile>,
    #[serde(default)]
    pub worldview: Option<WorldviewFile>,
    #[serde(default)]
    pub pii: Option<PiiFile>,
}

/// The workbench chat's PII second opinion (policy.toml `[pii]`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PiiFile {
    pub llm: Option<super::pii::PiiLlmMode>,
    pub llm_seconds: Option<f64>,
}

/// A Layer 1 word.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WordEntry {
    pub text: String,
    pub tier: Tier,
    pub category: Category,
    /// Match after NFKC only (no kana or case folding).
    #[serde(default)]
    pub exact: bool,
    #[serde(default)]
    pub note: Option<String>,
}

/// A Layer 3 compound pattern.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PatternEntry {
    pub id: String,
    pub tier: Tier,
    pub category: Category,
    pub all: Vec<String>,
    #[serde(default)]
    pub none: Vec<String>,
    #[serde(default)]
    pub note: Option<String>,
}

/// Layer 2 settings; numbers override, lists are merged.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContextualFile {
    pub returning_after: Option<usize>,
    pub angry_after_flags: Option<usize>,
    pub angry_insult_count: Option<usize>,
    pub shout_marks: Option<usize>,
    pub caps_min_letters: Option<usize>,
    #[serde(default)]
    pub laughter: Vec<String>,
    #[serde(default)]
    pub playful: Vec<String>,
    #[serde(default)]
    pub threat: Vec<String>,
    #[serde(default)]
    pub self_target: Vec<String>,
    #[serde(default)]
    pub safe: Vec<String>,
    #[serde(default)]
    pub group: Vec<GroupEntry>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GroupEntry {
    pub name: String,
    pub category: Category,
    pub words: Vec<String>,
    #[serde(default)]
    pub exact: bool,
}

/// When Layer 4 runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum L4Mode {
    Off,
    #[default]
    OnRaise,
    Always,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PolicyFile {
    pub l4: Option<L4Mode>,
    pub min_confidence: Option<f64>,
    pub temperature: Option<f32>,
    pub fail_closed: Option<Vec<Category>>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorldviewFile {
    #[serde(default)]
    pub safe: Vec<String>,
    #[serde(default)]
    pub term: Vec<TermEntry>,
    #[serde(default)]
    pub pattern: Vec<WvPatternEntry>,
    #[serde(default)]
    pub character: BTreeMap<String, WvCharacter>,
}

/// What kind of meta talk a Layer 5 term is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MetaKind {
    Ai,
    Model,
    Vendor,
    Developer,
    Prompt,
    Training,
}

impl MetaKind {
    pub fn label_ja(self) -> &'static str {
        match self {
            MetaKind::Ai => "AI",
            MetaKind::Model => "モデル",
            MetaKind::Vendor => "AIの製品名・会社名",
            MetaKind::Developer => "開発者",
            MetaKind::Prompt => "プロンプト",
            MetaKind::Training => "学習データ",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WvStatus {
    Warn,
    #[default]
    Retry,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TermEntry {
    pub text: String,
    pub kind: MetaKind,
    #[serde(default)]
    pub exact: bool,
    #[serde(default)]
    pub status: WvStatus,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WvPatternEntry {
    pub id: String,
    pub kind: MetaKind,
    pub regex: String,
    #[serde(default)]
    pub status: WvStatus,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WvCharacter {
    pub name: String,
    pub correction: String,
}

/// One parsed file, its text kept to point errors found later at a line.
#[derive(Debug, Clone)]
pub struct Source {
    pub path: PathBuf,
    pub text: String,
    pub file: SafetyFile,
}

impl Source {
    /// Parses one file's text; `path` is only used in messages.
    pub fn parse(path: &Path, text: &str) -> Result<Source, ConfigError> {
        load_toml_table(path, text)?;
        let file = toml::from_str::<SafetyFile>(text).map_err(|e| ConfigError::Invalid {
            path: path.to_path_buf(),
            at: e.span().map(|s| line_col(text, s.start)),
            key: None,
            message: e.message().trim().to_string(),
        })?;
        Ok(Source {
            path: path.to_path_buf(),
            text: text.to_string(),
            file,
        })
    }

    /// An error about this file, at the first line mentioning `needle` when there is one.
    pub fn error(&self, needle: &str, message: String) -> ConfigError {
        let at = self.text.find(needle).map(|b| line_col(&self.text, b));
        ConfigError::Invalid {
            path: self.path.clone(),
            at,
            key: None,
            message,
        }
    }
}

/// `<config_dir>/safety`, whether or not it exists.
pub fn user_dir() -> Option<PathBuf> {
    crate::config::config_dir().map(|d| d.join("safety"))
}

/// The embedded defaults, then every `*.toml` in `user_dir` (sorted by name) when it exists.
pub fn load_sources(user_dir: Option<&Path>) -> Result<Vec<Source>, ConfigError> {
    let mut out = Vec::new();
    for (name, text) in BUILTIN {
        out.push(Source::parse(Path::new(name), text)?);
    }
    let Some(dir) = user_dir.filter(|d| d.is_dir()) else {
        return Ok(out);
    };
    let io = |path: &Path, e: std::io::Error| ConfigError::Io {
        path: path.to_path_buf(),
        message: e.to_string(),
    };
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| io(dir, e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    for path in files {
        let text = crate::limits::read_string(&path).map_err(|e| io(&path, e))?;
        out.push(Source::parse(&path, &text)?);
    }
    Ok(out)
}
