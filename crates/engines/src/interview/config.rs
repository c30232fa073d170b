//! Interview definitions (issue 12 §1): `<config dir>/interviews/<name>.toml`, or the bundled
//! `sample`. Unknown keys and bad values are errors at file:line:col.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::config::{ConfigError, line_col};

/// The bundled example.
pub const SAMPLE: &str = include_str!("../../../../assets/interviews/sample.toml");

/// How the interviewer speaks; the text of each is in assets/interviews/prompts.toml.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Tone {
    #[default]
    PoliteSoft,
    CasualWarm,
    FormalBrief,
}

impl Tone {
    pub fn as_str(self) -> &'static str {
        match self {
            Tone::PoliteSoft => "polite_soft",
            Tone::CasualWarm => "casual_warm",
            Tone::FormalBrief => "formal_brief",
        }
    }
}

fn twelve() -> usize {
    12
}
fn two() -> usize {
    2
}
fn ayu() -> String {
    "ayu".into()
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InterviewConfig {
    /// The file's stem (`sample` for the bundled one); not read from the file.
    #[serde(skip)]
    pub name: String,
    pub goal: String,
    #[serde(default)]
    pub tone: Tone,
    /// User turns ([スキップ] included) after which the conversation ends.
    #[serde(default = "twelve")]
    pub max_turns: usize,
    #[serde(default = "two")]
    pub max_deep: usize,
    #[serde(default)]
    pub must_ask: Vec<String>,
    #[serde(default)]
    pub never_ask: Vec<String>,
    pub fallback_questions: [String; 3],
    pub closing_message: String,
    /// `yana` or `ayu`.
    #[serde(default = "ayu")]
    pub sister: String,
}

impl InterviewConfig {
    /// Parses one interview file; `path` is only used in error messages.
    pub fn parse(name: &str, path: &Path, text: &str) -> Result<InterviewConfig, ConfigError> {
        crate::limits::toml_depth(path, text)?;
        let mut c: InterviewConfig = toml::from_str(text).map_err(|e| {
            let (line, col) = e.span().map(|s| line_col(text, s.start)).unwrap_or((1, 1));
            ConfigError::Syntax {
                path: path.to_path_buf(),
                line,
                col,
                message: e.message().trim().to_string(),
            }
        })?;
        c.name = name.to_string();
        let bad = |key: &str, message: String| {
            let (line, col) = crate::config::locate_key(text, key).unwrap_or((1, 1));
            Err(ConfigError::Syntax {
                path: path.to_path_buf(),
                line,
                col,
                message,
            })
        };
        if !matches!(c.sister.as_str(), "yana" | "ayu") {
            return bad(
                "sister",
                format!("sister must be yana or ayu, not {:?}", c.sister),
            );
        }
        if c.max_turns == 0 {
            return bad("max_turns", "max_turns must be at least 1".into());
        }
        if c.goal.trim().is_empty() {
            return bad("goal", "goal must not be empty".into());
        }
        if c.fallback_questions.iter().any(|q| q.trim().is_empty()) {
            return bad(
                "fallback_questions",
                "fallback questions must not be empty".into(),
            );
        }
        if c.closing_message.trim().is_empty() {
            return bad(
                "closing_message",
                "closing_message must not be empty".into(),
            );
        }
        Ok(c)
    }

    pub fn sample() -> InterviewConfig {
        Self::parse(
            "sample",
            Path::new("<bundled>/interviews/sample.toml"),
            SAMPLE,
        )
        .expect("the bundled sample interview parses")
    }
}

/// `<config dir>/interviews/<name>.toml`.
pub fn user_path(name: &str) -> Option<PathBuf> {
    crate::config::config_dir().map(|d| d.join("interviews").join(format!("{name}.toml")))
}

/// The user's file when it exists, else the bundled `sample` for that name, else an error.
pub fn load(name: &str) -> Result<InterviewConfig, ConfigError> {
    let bad_name = name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '-');
    if bad_name {
        return Err(ConfigError::Io {
            path: PathBuf::from(name),
            message: "an interview name is letters, digits, _ and - only".into(),
        });
    }
    if let Some(p) = user_path(name).filter(|p| p.exists()) {
        let text = crate::limits::read_string(&p).map_err(|e| ConfigError::Io {
            path: p.clone(),
            message: e.to_string(),
        })?;
        return InterviewConfig::parse(name, &p, &text);
    }
    if name == "sample" {
        return Ok(InterviewConfig::sample());
    }
    Err(ConfigError::Io {
        path: user_path(name).unwrap_or_else(|| PathBuf::from(format!("{name}.toml"))),
        message: "no such interview (the bundled one is `sample`)".into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sample_has_the_defaults_and_three_questions() {
        let c = InterviewConfig::sample();
        assert_eq!((c.max_turns, c.max_deep, c.tone), (12, 2, Tone::PoliteSoft));
        assert_eq!(c.sister, "ayu");
        assert!(c.fallback_questions.iter().all(|q| q.ends_with('？')));
    }

    #[test]
    fn defaults_apply_when_keys_are_missing() {
        let t =
            "goal = \"g\"\nfallback_questions = [\"a\", \"b\", \"c\"]\nclosing_message = \"x\"\n";
        let c = InterviewConfig::parse("t", Path::new("t.toml"), t).unwrap();
        assert_eq!((c.max_turns, c.max_deep, c.sister.as_str()), (12, 2, "ayu"));
    }

    #[test]
    fn unknown_keys_and_bad_values_are_located() {
        for (extra, line, col) in [
            ("colour = 1", 4, 1),
            ("tone = \"shouty\"", 4, 8),
            ("sister = \"mio\"", 4, 1),
            ("max_turns = 0", 4, 1),
        ] {
            let t = format!(
                "goal = \"g\"\nfallback_questions = [\"a\", \"b\", \"c\"]\nclosing_message = \"x\"\n{extra}\n"
            );
            let e = InterviewConfig::parse("t", Path::new("t.toml"), &t).unwrap_err();
            let s = e.to_string();
            assert!(
                s.starts_with(&format!("t.toml:{line}:{col}:")),
                "{extra}: {s}"
            );
        }
        let two = "goal = \"g\"\nfallback_questions = [\"a\", \"b\"]\nclosing_message = \"x\"\n";
        assert!(InterviewConfig::parse("t", Path::new("t.toml"), two).is_err());
    }
}
