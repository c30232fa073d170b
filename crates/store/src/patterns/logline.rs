//! Conversation-log lines for `kakeai ingest`, parsed and checked without touching the store.
//!
//! Format: one JSON object per line, `{"conversation_id", "user_id", "role": "user"|"bot",
//! "text", "timestamp" (RFC 3339 with a zone, or unix seconds), "pattern_id"? (bot lines only),
//! "character"? (yana|ayu, bot lines; defaults to the pattern's)}`. Ids may be strings or
//! numbers; other fields are ignored (logs carry more than this).

use serde::Serialize;

use super::Character;
use super::stamp::{self, Millis};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    User,
    Bot,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Bot => "bot",
        }
    }
}

/// One parsed log line (raw text: it is masked when written).
#[derive(Debug, Clone, PartialEq)]
pub struct LogMessage {
    /// 1-based line number in the file.
    pub line: usize,
    pub conversation_id: String,
    pub user_id: String,
    pub role: Role,
    pub text: String,
    pub at: Millis,
    pub pattern_id: Option<i64>,
    pub character: Option<Character>,
}

/// A problem with one line; `col` is 1-based, in characters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineError {
    pub line: usize,
    pub col: Option<usize>,
    pub message: String,
}

impl LineError {
    pub fn render(&self, file: &str) -> String {
        match self.col {
            Some(c) => format!("{file}:{}:{c}: {}", self.line, self.message),
            None => format!("{file}:{}: {}", self.line, self.message),
        }
    }
}

/// The 1-based char column of `"key"` in `line`, where an error about that field points.
pub(crate) fn key_col(line: &str, key: &str) -> Option<usize> {
    let at = line.find(&format!("\"{key}\""))?;
    Some(line.get(..at)?.chars().count() + 1)
}

/// serde_json's message without its own " at line L column C" tail, its byte column turned
/// into a char column.
pub(crate) fn json_error(line_no: usize, line: &str, e: &serde_json::Error) -> LineError {
    let what = e.to_string();
    let what = what.split(" at line ").next().unwrap_or(&what).to_string();
    let byte_col = e.column();
    let col = line
        .char_indices()
        .take_while(|(i, _)| *i < byte_col)
        .count();
    LineError {
        line: line_no,
        col: Some(col.max(1)),
        message: what,
    }
}

/// Parses one line; `Ok(None)` for a blank one.
pub fn parse_line(line_no: usize, line: &str) -> Result<Option<LogMessage>, LineError> {
    let t = line.trim_end_matches(['\r', '\n']);
    if t.trim().is_empty() {
        return Ok(None);
    }
    let obj: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(t).map_err(|e| json_error(line_no, t, &e))?;
    let err = |key: &str, message: String| LineError {
        line: line_no,
        col: key_col(t, key).or(Some(1)),
        message,
    };
    let id = |key: &str| -> Result<String, LineError> {
        match obj.get(key) {
            Some(serde_json::Value::String(s)) if !s.trim().is_empty() => Ok(s.trim().to_string()),
            Some(serde_json::Value::Number(n)) => Ok(n.to_string()),
            Some(_) => Err(err(key, format!("`{key}` must be a non-empty string"))),
            None => Err(err(key, format!("missing `{key}`"))),
        }
    };
    let conversation_id = id("conversation_id")?;
    let user_id = id("user_id")?;
    let role = match obj.get("role").and_then(|v| v.as_str()) {
        Some("user") => Role::User,
        Some("bot") => Role::Bot,
        Some(other) => {
            return Err(err(
                "role",
                format!("role {other:?} is not \"user\" or \"bot\""),
            ));
        }
        None => return Err(err("role", "missing `role` (\"user\" or \"bot\")".into())),
    };
    let text = match obj.get("text") {
        Some(serde_json::Value::String(s)) if !s.trim().is_empty() => s.clone(),
        Some(serde_json::Value::String(_)) => return Err(err("text", "`text` is empty".into())),
        Some(_) => return Err(err("text", "`text` must be a string".into())),
        None => return Err(err("text", "missing `text`".into())),
    };
    let at = match obj.get("timestamp") {
        Some(v) => stamp::from_json(v).map_err(|m| err("timestamp", format!("timestamp: {m}")))?,
        None => return Err(err("timestamp", "missing `timestamp`".into())),
    };
    let pattern_id = match obj.get("pattern_id") {
        None | Some(serde_json::Value::Null) => None,
        Some(v) => match v.as_i64().filter(|n| *n > 0) {
            Some(n) if role == Role::Bot => Some(n),
            Some(_) => {
                return Err(err(
                    "pattern_id",
                    "only a bot line can carry a pattern_id".into(),
                ));
            }
            None => {
                return Err(err(
                    "pattern_id",
                    "`pattern_id` must be a positive integer".into(),
                ));
            }
        },
    };
    let character = match obj.get("character") {
        None | Some(serde_json::Value::Null) => None,
        Some(serde_json::Value::String(s)) => Some(Character::parse(s).ok_or_else(|| {
            err(
                "character",
                format!("unknown character {s:?}; use yana or ayu"),
            )
        })?),
        Some(_) => {
            return Err(err(
                "character",
                "`character` must be \"yana\" or \"ayu\"".into(),
            ));
        }
    };
    Ok(Some(LogMessage {
        line: line_no,
        conversation_id,
        user_id,
        role,
        text,
        at,
        pattern_id,
        character,
    }))
}

/// Parses every line; all bad lines are reported, not just the first.
pub fn parse_log(text: &str) -> Result<Vec<LogMessage>, Vec<LineError>> {
    let mut ok = Vec::new();
    let mut bad = Vec::new();
    for (i, line) in text.lines().enumerate() {
        match parse_line(i + 1, line) {
            Ok(Some(m)) => ok.push(m),
            Ok(None) => {}
            Err(e) => bad.push(e),
        }
    }
    if bad.is_empty() { Ok(ok) } else { Err(bad) }
}
