//! Field access and validation for one duo-talk event object: typed getters whose errors
//! carry the char column of the offending key and what was expected.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::director::Status;

/// Maps duo-talk speaker codes and names to character ids.
pub fn speaker_id(s: &str) -> Option<&'static str> {
    match s.trim() {
        "A" | "a" | "やな" | "yana" => Some("yana"),
        "B" | "b" | "あゆ" | "ayu" => Some("ayu"),
        _ => None,
    }
}

/// A status as duo-talk writes it (PASS/WARN/RETRY/MODIFY), if it is one.
pub fn status_of(s: &str) -> Option<Status> {
    Status::parse(s).filter(|s| *s != Status::Info)
}

/// Field access on one event object, with errors pointing at the field's column.
pub(super) struct Fields<'a> {
    pub obj: &'a Map<String, Value>,
    pub line: &'a str,
}

impl Fields<'_> {
    pub(super) fn at(&self, key: &str, message: &str) -> (usize, String) {
        let needle = format!("\"{key}\"");
        let col = self
            .line
            .find(&needle)
            .map(|b| char_col(self.line, b))
            .unwrap_or(1);
        (col, message.to_string())
    }

    pub(super) fn event(&self) -> &str {
        self.obj.get("event").and_then(Value::as_str).unwrap_or("?")
    }

    pub(super) fn missing(&self, key: &str, what: &str) -> (usize, String) {
        match self.obj.get(key) {
            None => (
                1,
                format!("expected \"{key}\" ({what}) in a {} event", self.event()),
            ),
            Some(v) => self.at(
                key,
                &format!("expected \"{key}\" to be {what}, found {}", kind(v)),
            ),
        }
    }

    pub(super) fn req_str(&self, key: &str) -> Result<String, (usize, String)> {
        match self.obj.get(key) {
            Some(Value::String(s)) => Ok(s.clone()),
            _ => Err(self.missing(key, "a string")),
        }
    }

    pub(super) fn opt_str(&self, key: &str) -> Option<String> {
        self.obj
            .get(key)
            .and_then(Value::as_str)
            .map(str::to_string)
    }

    pub(super) fn run_id(&self) -> Result<String, (usize, String)> {
        match self.obj.get("run_id") {
            Some(Value::String(s)) if !s.trim().is_empty() => Ok(s.clone()),
            Some(Value::Number(n)) => Ok(n.to_string()),
            _ => Err(self.missing("run_id", "a non-empty string")),
        }
    }

    pub(super) fn uint(&self, key: &str) -> Result<u32, (usize, String)> {
        self.obj
            .get(key)
            .and_then(Value::as_u64)
            .and_then(|n| u32::try_from(n).ok())
            .filter(|n| *n < u32::MAX)
            .ok_or_else(|| self.missing(key, "a non-negative integer"))
    }

    pub(super) fn turn(&self) -> Result<u32, (usize, String)> {
        self.uint("turn")
    }

    pub(super) fn speaker(&self) -> Result<&'static str, (usize, String)> {
        for key in ["speaker", "speaker_name"] {
            if let Some(id) = self
                .obj
                .get(key)
                .and_then(Value::as_str)
                .and_then(speaker_id)
            {
                return Ok(id);
            }
        }
        let key = if self.obj.contains_key("speaker") {
            "speaker"
        } else {
            "speaker_name"
        };
        Err(self.missing(key, "A/B or やな/あゆ"))
    }

    pub(super) fn ts(&self) -> Option<String> {
        self.opt_str("timestamp").or_else(|| self.opt_str("ts"))
    }
}

pub(super) fn char_col(line: &str, byte: usize) -> usize {
    crate::config::line_col(line, byte).1
}

pub(super) fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A stable key for one logged object (serde_json maps are sorted, so key order in the file
/// does not matter).
pub(super) fn content_key(obj: &Map<String, Value>) -> String {
    use sha2::{Digest, Sha256};
    let sorted: BTreeMap<&String, &Value> = obj.iter().collect();
    let canonical = serde_json::to_string(&sorted).unwrap_or_default();
    let digest = Sha256::digest(canonical.as_bytes());
    let hex: String = digest.iter().take(16).map(|b| format!("{b:02x}")).collect();
    format!("duo-talk:feedback:{hex}")
}
