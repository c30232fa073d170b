//! Ollama's native dialect: POST /api/chat with an NDJSON stream, GET /api/tags, POST /api/embed.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::{Value, json};

use super::config::ApiKind;
use super::protocol::{
    Chunk, EmbedKeep, LineError, Protocol, Reply, Resolved, error_text, finish_from,
};
use super::types::{Finish, ResponseFormat};

#[derive(Debug, Clone, Copy, Default)]
pub struct Ollama;

#[derive(Deserialize)]
struct Line<'a> {
    #[serde(borrow, default)]
    message: Option<Msg<'a>>,
    #[serde(default)]
    done: bool,
    #[serde(borrow, default)]
    done_reason: Option<Cow<'a, str>>,
    #[serde(default)]
    eval_count: Option<u32>,
    #[serde(default)]
    prompt_eval_count: Option<u32>,
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Deserialize)]
struct Msg<'a> {
    #[serde(borrow, default)]
    content: Option<Cow<'a, str>>,
}

const EXPECTED_LINE: &str = "an NDJSON line like {\"message\":{\"content\":…},\"done\":false}";

impl Protocol for Ollama {
    fn kind(&self) -> ApiKind {
        ApiKind::Ollama
    }
    fn chat_path(&self) -> &'static str {
        "/api/chat"
    }
    fn models_path(&self) -> &'static str {
        "/api/tags"
    }
    fn embed_path(&self) -> &'static str {
        "/api/embed"
    }

    fn chat_body(&self, r: &Resolved<'_>) -> Value {
        let messages = r.wire_messages();
        let mut options = json!({
            "num_ctx": r.num_ctx,
            "temperature": r.temperature,
            "num_predict": r.max_tokens,
        });
        if !r.stop.is_empty() {
            options["stop"] = json!(r.stop);
        }
        if let Some(seed) = r.seed {
            options["seed"] = json!(seed);
        }
        let mut body = json!({
            "model": r.model,
            "messages": messages,
            "stream": r.stream,
            "options": options,
        });
        if let Some(k) = r.keep_alive {
            body["keep_alive"] = json!(k);
        }
        // Ollama ≥ 0.13 (api/types.go:161-167): refuse a prompt longer than the context
        // instead of dropping its first messages (server/prompt.go:35-92), and end a reply
        // that reaches the context with done_reason "length" instead of discarding the start
        // of the prompt (routes.go:2779).
        if r.guard {
            body["truncate"] = json!(false);
            body["shift"] = json!(false);
        }
        match r.format {
            ResponseFormat::Text => {}
            ResponseFormat::Json => body["format"] = json!("json"),
            ResponseFormat::Schema(s) => body["format"] = s.clone(),
        }
        body
    }

    fn parse_line<'a>(&self, line: &'a str) -> Result<Option<Chunk<'a>>, LineError> {
        if line.trim().is_empty() {
            return Ok(None);
        }
        let l: Line<'a> = serde_json::from_str(line).map_err(|_| LineError::Malformed {
            expected: EXPECTED_LINE,
        })?;
        if let Some(e) = l.error {
            return Err(LineError::Server(error_text(&e)));
        }
        if l.message.is_none() && !l.done {
            return Err(LineError::Malformed {
                expected: EXPECTED_LINE,
            });
        }
        Ok(Some(Chunk {
            delta: l.message.and_then(|m| m.content).filter(|c| !c.is_empty()),
            finish: l
                .done
                .then(|| finish_from(l.done_reason.as_deref().unwrap_or("stop"))),
            tokens: l.eval_count,
            prompt_tokens: l.prompt_eval_count,
            done: l.done,
        }))
    }

    fn parse_reply(&self, body: &str) -> Result<Reply, LineError> {
        let expected = "a JSON object with message.content and done: true";
        let l: Line<'_> =
            serde_json::from_str(body.trim()).map_err(|_| LineError::Malformed { expected })?;
        if let Some(e) = l.error {
            return Err(LineError::Server(error_text(&e)));
        }
        let Some(msg) = l.message else {
            return Err(LineError::Malformed { expected });
        };
        Ok(Reply {
            text: msg.content.map(Cow::into_owned).unwrap_or_default(),
            finish: l
                .done_reason
                .as_deref()
                .map(finish_from)
                .unwrap_or(Finish::Stop),
            tokens: l.eval_count,
            prompt_tokens: l.prompt_eval_count,
        })
    }

    fn parse_models(&self, body: &str) -> Option<Vec<String>> {
        let v: Value = serde_json::from_str(body).ok()?;
        let models = v.get("models")?.as_array()?;
        Some(
            models
                .iter()
                .filter_map(|m| m.get("name").or_else(|| m.get("model")))
                .filter_map(|n| n.as_str().map(str::to_string))
                .collect(),
        )
    }

    fn embed_body(&self, model: &str, inputs: &[String]) -> Value {
        json!({"model": model, "input": inputs})
    }

    fn embed_body_with(&self, model: &str, inputs: &[String], keep: &EmbedKeep<'_>) -> Value {
        let mut body = self.embed_body(model, inputs);
        body["keep_alive"] = json!(keep.keep_alive);
        // The chat model embeds with the chat's num_ctx: a runner with other options is
        // reloaded (sched.go:1380-1429).
        if let Some(n) = keep.num_ctx {
            body["options"] = json!({ "num_ctx": n });
        }
        body
    }

    fn parse_embeddings(&self, body: &str) -> Result<Vec<Vec<f32>>, LineError> {
        #[derive(Deserialize)]
        struct Embed {
            embeddings: Vec<Vec<f32>>,
        }
        serde_json::from_str::<Embed>(body)
            .map(|e| e.embeddings)
            .map_err(|_| LineError::Malformed {
                expected: "a JSON object with an `embeddings` array of number arrays",
            })
    }
}

/// Ollama treats a name without a tag as `:latest`, and matches names case-insensitively
/// (server/routes.go:1222-1245).
pub fn same_model(wanted: &str, listed: &str) -> bool {
    let (w, l) = (wanted.to_lowercase(), listed.to_lowercase());
    w == l || (!w.contains(':') && l == format!("{w}:latest"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_stream_lines() {
        let p = Ollama;
        let c = p
            .parse_line(r#"{"model":"gemma2:27b","created_at":"2025-01-01T00:00:00Z","message":{"role":"assistant","content":"姉"},"done":false}"#)
            .unwrap()
            .unwrap();
        assert_eq!(c.delta.as_deref(), Some("姉"));
        assert!(!c.done);
        let c = p
            .parse_line(r#"{"model":"m","message":{"role":"assistant","content":""},"done":true,"done_reason":"length","eval_count":12}"#)
            .unwrap()
            .unwrap();
        assert_eq!(
            (c.delta, c.finish, c.tokens, c.done),
            (None, Some(Finish::Length), Some(12), true)
        );
        assert_eq!(
            p.parse_line(r#"{"error":"an error was encountered while running the model"}"#),
            Err(LineError::Server(
                "an error was encountered while running the model".into()
            ))
        );
        assert!(matches!(
            p.parse_line("data: {}"),
            Err(LineError::Malformed { .. })
        ));
        assert!(matches!(
            p.parse_line(r#"{"foo":1}"#),
            Err(LineError::Malformed { .. })
        ));
        assert_eq!(p.parse_line(""), Ok(None));
    }

    #[test]
    fn tag_defaults_to_latest() {
        assert!(same_model("gemma2", "gemma2:latest"));
        assert!(same_model("gemma2:27b", "gemma2:27b"));
        assert!(!same_model("gemma2:27b", "gemma2:9b"));
        assert!(same_model("Gemma2:27B", "gemma2:27b"));
        assert!(same_model("GEMMA2", "gemma2:latest"));
    }
}
