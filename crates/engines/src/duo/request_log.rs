//! The exact request an attempt sent (issue 14 §4), as JSON for `Store::save_request`: for a
//! live endpoint the body that went over the wire, kept as sent — the messages (after fitting
//! to the context and the system-role policy: roles and text exactly), every option the body
//! carried, the URL, and what fitting gave up (`fit`). The request view shows it and
//! `export --format dpo|kto|sft` builds its prompts from it, so both are what the model saw.

use serde_json::{Value, json};

use super::backend::Sent;
use super::fitting::FitReport;
use crate::llm::Message;

/// A replayed attempt: nothing went over the wire; the messages the session built.
pub fn replay_json(messages: &[Message]) -> Value {
    json!({"messages": messages, "options": {"backend": "replay"}})
}

/// A live attempt's request as sent: `messages` is the body's own list, `options` is the
/// body without it (model, stream, options, keep_alive, format, … exactly as sent).
pub fn sent_json(sent: &Sent, fit: &FitReport) -> Value {
    let mut options = match &sent.body {
        Value::Object(o) => o.clone(),
        _ => serde_json::Map::new(),
    };
    let messages = options.remove("messages").unwrap_or(Value::Null);
    json!({
        "messages": messages,
        "options": options,
        "url": sent.url,
        "backend": "live",
        "fit": fit,
    })
}
