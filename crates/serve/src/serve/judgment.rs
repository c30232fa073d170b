//! Seed 002, the pure part: whether to speak in a group. The skip configuration and its
//! thresholds, the `JudgmentCache` entity (scope key, `is_valid`), the skip seconds for a
//! confidence, the judgment prompt in her voice with the current time, and the reply parser.

use serde::Deserialize;

use crate::patterns::stamp::{self, Millis};

/// Seed 002 `JudgmentSkipThreshold`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SkipThreshold {
    pub min_confidence: f64,
    pub skip_seconds: i64,
}

/// Seed 002 `JudgmentSkipConfig` (defaults in assets/serve/serve.toml).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SkipConfig {
    pub enabled: bool,
    pub thresholds: Vec<SkipThreshold>,
    pub default_skip_seconds: i64,
}

impl SkipConfig {
    /// Seed 002 `_calculate_skip_seconds`: the first threshold (highest first) the confidence
    /// reaches, else the default.
    pub fn skip_seconds(&self, confidence: f64) -> i64 {
        let mut sorted = self.thresholds.clone();
        sorted.sort_by(|a, b| b.min_confidence.total_cmp(&a.min_confidence));
        sorted
            .iter()
            .find(|t| confidence >= t.min_confidence)
            .map(|t| t.skip_seconds)
            .unwrap_or(self.default_skip_seconds)
    }
}

/// Seed 002 `JudgmentResult`.
#[derive(Debug, Clone, PartialEq)]
pub struct JudgmentResult {
    pub should_respond: bool,
    pub reason: String,
    pub confidence: f64,
}

/// Seed 002 `JudgmentCache`. `thread_ts` None is the top level.
#[derive(Debug, Clone, PartialEq)]
pub struct JudgmentCache {
    pub channel_id: String,
    pub thread_ts: Option<String>,
    pub should_respond: bool,
    pub confidence: f64,
    pub reason: String,
    pub latest_message_ts: String,
    pub next_check_at: Millis,
    pub created_at: Millis,
    pub updated_at: Millis,
}

impl JudgmentCache {
    /// `channel:thread`, or `channel:top` at the top level.
    pub fn scope_key(&self) -> String {
        scope_key(&self.channel_id, self.thread_ts.as_deref())
    }

    /// Before `next_check_at` and no newer message: the judgment may be skipped.
    pub fn is_valid(&self, now: Millis, current_latest_message_ts: &str) -> bool {
        if now >= self.next_check_at {
            return false;
        }
        current_latest_message_ts == self.latest_message_ts
    }

    /// Seed 002 `_cache_judgment_result`: the cache row a fresh judgment leaves.
    pub fn from_result(
        channel_id: &str,
        thread_ts: Option<&str>,
        latest_message_ts: &str,
        result: &JudgmentResult,
        cfg: &SkipConfig,
        now: Millis,
    ) -> JudgmentCache {
        JudgmentCache {
            channel_id: channel_id.to_string(),
            thread_ts: thread_ts.map(str::to_string),
            should_respond: result.should_respond,
            confidence: result.confidence,
            reason: result.reason.clone(),
            latest_message_ts: latest_message_ts.to_string(),
            next_check_at: now + cfg.skip_seconds(result.confidence) * 1000,
            created_at: now,
            updated_at: now,
        }
    }
}

pub fn scope_key(channel_id: &str, thread_ts: Option<&str>) -> String {
    format!("{channel_id}:{}", thread_ts.unwrap_or("top"))
}

/// Seed 002 `_should_skip_judgment`, given the scope's cache row (if any).
pub fn should_skip(
    cfg: &SkipConfig,
    cache: Option<&JudgmentCache>,
    now: Millis,
    latest_message_ts: &str,
) -> bool {
    cfg.enabled && cache.is_some_and(|c| c.is_valid(now, latest_message_ts))
}

/// Seed 002's system prompt, `persona_name` and the current time filled in.
pub fn system_prompt(persona_name: &str, now: Millis) -> String {
    include_str!("../../../../assets/serve/judgment_prompt.txt")
        .replace("{persona_name}", persona_name)
        .replace("{current_time}", &stamp::iso(now))
}

/// Seed 002 `_parse_response`: the first flat JSON object anywhere in the reply (else the whole
/// reply as JSON); missing should_respond → false, missing confidence → 1.0, clamped to 0–1;
/// anything unreadable → should_respond false with confidence 0.0.
pub fn parse_response(response: &str) -> JudgmentResult {
    match try_parse(response) {
        Ok(r) => r,
        Err(e) => JudgmentResult {
            should_respond: false,
            reason: format!("Failed to parse LLM response: {e}"),
            confidence: 0.0,
        },
    }
}

fn try_parse(response: &str) -> Result<JudgmentResult, String> {
    static FLAT: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let re = FLAT.get_or_init(|| regex::Regex::new(r"\{[^{}]*\}").expect("valid regex"));
    let json = re.find(response).map_or(response, |m| m.as_str());
    let data: serde_json::Value = serde_json::from_str(json).map_err(|e| e.to_string())?;
    let obj = data.as_object().ok_or("not a JSON object")?;
    let should_respond = match obj.get("should_respond") {
        None => false,
        Some(v) => truthy(v),
    };
    let reason = match obj.get("reason") {
        None => String::new(),
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(v) => v.to_string(),
    };
    let confidence = match obj.get("confidence") {
        None => 1.0,
        Some(serde_json::Value::Number(n)) => n.as_f64().ok_or("confidence is not a number")?,
        Some(serde_json::Value::String(s)) => s
            .trim()
            .parse::<f64>()
            .map_err(|e| format!("confidence: {e}"))?,
        Some(v) => return Err(format!("confidence is not a number: {v}")),
    };
    if confidence.is_nan() {
        return Err("confidence is NaN".into());
    }
    Ok(JudgmentResult {
        should_respond,
        reason,
        confidence: confidence.clamp(0.0, 1.0),
    })
}

/// Python's `bool()` of a JSON value, as the seed's `bool(should_respond)`.
fn truthy(v: &serde_json::Value) -> bool {
    match v {
        serde_json::Value::Null => false,
        serde_json::Value::Bool(b) => *b,
        serde_json::Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        serde_json::Value::String(s) => !s.is_empty(),
        serde_json::Value::Array(a) => !a.is_empty(),
        serde_json::Value::Object(o) => !o.is_empty(),
    }
}

#[cfg(test)]
#[path = "judgment_tests.rs"]
mod tests;
