//! The OpenAI-compatible dialect (llama-server, vLLM, LM Studio, Ollama's /v1):
//! POST /v1/chat/completions with an SSE stream, GET /v1/models, POST /v1/embeddings.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::{Value, json};

use super::config::ApiKind;
use super::protocol::{Chunk, LineError, Protocol, Reply, Resolved, error_text, finish_from};
use super::types::{Finish, ResponseFormat};

#[derive(Debug, Clone, Copy, Default)]
pub struct OpenAi;

#[derive(Deserialize)]
struct Event<'a> {
    #[serde(borrow, default)]
    choices: Vec<Choice<'a>>,
    #[serde(default)]
    usage: Option<Usage>,
    #[serde(default)]
    timings: Option<Timings>,
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Deserialize)]
struct Choice<'a> {
    #[serde(borrow, default)]
    delta: Option<Content<'a>>,
    #[serde(borrow, default)]
    message: Option<Content<'a>>,
    #[serde(borrow, default)]
    finish_reason: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct Content<'a> {
    #[serde(borrow, default)]
    content: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct Usage {
    #[serde(default)]
    completion_tokens: Option<u32>,
    #[serde(default)]
    prompt_tokens: Option<u32>,
}

/// llama-server's non-standard per-response timings.
#[derive(Deserialize)]
struct Timings {
    #[serde(default)]
    predicted_n: Option<u32>,
    /// Prompt tokens evaluated now; `cache_n` more came from the prompt cache.
    #[serde(default)]
    prompt_n: Option<u32>,
    #[serde(default)]
    cache_n: Option<u32>,
}

const EXPECTED_DATA: &str = "an SSE `data:` line holding a chat.completion.chunk JSON object";

impl Event<'_> {
    fn tokens(&self) -> Option<u32> {
        self.usage
            .as_ref()
            .and_then(|u| u.completion_tokens)
            .or_else(|| self.timings.as_ref().and_then(|t| t.predicted_n))
    }

    fn prompt_tokens(&self) -> Option<u32> {
        self.usage
            .as_ref()
            .and_then(|u| u.prompt_tokens)
            .or_else(|| {
                let t = self.timings.as_ref()?;
                Some(t.prompt_n? + t.cache_n.unwrap_or(0))
            })
    }
}

impl Protocol for OpenAi {
    fn kind(&self) -> ApiKind {
        ApiKind::OpenAi
    }
    fn chat_path(&self) -> &'static str {
        "/chat/completions"
    }
    fn models_path(&self) -> &'static str {
        "/models"
    }
    fn embed_path(&self) -> &'static str {
        "/embeddings"
    }

    fn chat_body(&self, r: &Resolved<'_>) -> Value {
        let messages = r.wire_messages();
        let mut body = json!({
            "model": r.model,
            "messages": messages,
            "stream": r.stream,
            "temperature": r.temperature,
            "max_tokens": r.max_tokens,
        });
        if r.stream {
            // The last event then carries `usage`: the prompt's token count teaches the budget.
            body["stream_options"] = json!({"include_usage": true});
        }
        if !r.stop.is_empty() {
            body["stop"] = json!(r.stop);
        }
        if let Some(seed) = r.seed {
            body["seed"] = json!(seed);
        }
        match r.format {
            ResponseFormat::Text => {}
            ResponseFormat::Json => body["response_format"] = json!({"type": "json_object"}),
            ResponseFormat::Schema(s) => {
                body["response_format"] = json!({
                    "type": "json_schema",
                    "json_schema": {"name": "verdict", "strict": true, "schema": s},
                });
            }
        }
        body
    }

    fn parse_line<'a>(&self, line: &'a str) -> Result<Option<Chunk<'a>>, LineError> {
        let Some(data) = line.strip_prefix("data:") else {
            // Blank lines end events, `:` lines are comments (keep-alive pings) and other
            // fields (event:, id:, retry:) carry nothing we use. A bare JSON line means the
            // server is not speaking SSE at all.
            return if line.trim_start().starts_with(['{', '[']) {
                Err(LineError::Malformed {
                    expected: EXPECTED_DATA,
                })
            } else {
                Ok(None)
            };
        };
        let data = data.strip_prefix(' ').unwrap_or(data);
        if data.trim() == "[DONE]" {
            return Ok(Some(Chunk {
                done: true,
                ..Chunk::default()
            }));
        }
        let ev: Event<'a> = serde_json::from_str(data).map_err(|_| LineError::Malformed {
            expected: EXPECTED_DATA,
        })?;
        if let Some(e) = &ev.error {
            return Err(LineError::Server(error_text(e)));
        }
        let tokens = ev.tokens();
        let mut chunk = Chunk {
            tokens,
            prompt_tokens: ev.prompt_tokens(),
            ..Chunk::default()
        };
        if let Some(choice) = ev.choices.into_iter().next() {
            chunk.finish = choice.finish_reason.as_deref().map(finish_from);
            chunk.delta = choice
                .delta
                .and_then(|d| d.content)
                .filter(|c| !c.is_empty());
        }
        Ok(Some(chunk))
    }

    fn parse_reply(&self, body: &str) -> Result<Reply, LineError> {
        let expected = "a chat.completion JSON object with choices[0].message.content";
        let ev: Event<'_> =
            serde_json::from_str(body.trim()).map_err(|_| LineError::Malformed { expected })?;
        if let Some(e) = &ev.error {
            return Err(LineError::Server(error_text(e)));
        }
        let tokens = ev.tokens();
        let prompt_tokens = ev.prompt_tokens();
        let Some(choice) = ev.choices.into_iter().next() else {
            return Err(LineError::Malformed { expected });
        };
        let Some(msg) = choice.message else {
            return Err(LineError::Malformed { expected });
        };
        Ok(Reply {
            text: msg.content.map(Cow::into_owned).unwrap_or_default(),
            finish: choice
                .finish_reason
                .as_deref()
                .map(finish_from)
                .unwrap_or(Finish::Stop),
            tokens,
            prompt_tokens,
        })
    }

    fn parse_models(&self, body: &str) -> Option<Vec<String>> {
        let v: Value = serde_json::from_str(body).ok()?;
        // Ollama's /v1/models with no model pulled answers `"data": null`
        // (openai/openai.go:208-211): a list, empty — not a malformed body.
        if v.get("object").and_then(Value::as_str) == Some("list")
            && v.get("data").is_some_and(Value::is_null)
        {
            return Some(Vec::new());
        }
        let data = v.get("data")?.as_array()?;
        Some(
            data.iter()
                .filter_map(|m| m.get("id").and_then(|i| i.as_str()))
                .map(str::to_string)
                .collect(),
        )
    }

    fn embed_body(&self, model: &str, inputs: &[String]) -> Value {
        json!({"model": model, "input": inputs})
    }

    fn parse_embeddings(&self, body: &str) -> Result<Vec<Vec<f32>>, LineError> {
        #[derive(Deserialize)]
        struct Item {
            embedding: Vec<f32>,
            #[serde(default)]
            index: usize,
        }
        #[derive(Deserialize)]
        struct List {
            data: Vec<Item>,
        }
        let mut list = serde_json::from_str::<List>(body).map_err(|_| LineError::Malformed {
            expected: "a JSON object with `data[].embedding` number arrays",
        })?;
        list.data.sort_by_key(|i| i.index);
        Ok(list.data.into_iter().map(|i| i.embedding).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_llama_server_events() {
        let p = OpenAi;
        let first = r#"data: {"choices":[{"finish_reason":null,"index":0,"delta":{"role":"assistant","content":null}}],"created":1,"id":"chatcmpl-x","model":"tiny-ja","object":"chat.completion.chunk"}"#;
        let c = p.parse_line(first).unwrap().unwrap();
        assert_eq!((c.delta, c.finish, c.done), (None, None, false));
        let c = p
            .parse_line(
                r#"data: {"choices":[{"finish_reason":null,"index":0,"delta":{"content":"🦀"}}]}"#,
            )
            .unwrap()
            .unwrap();
        assert_eq!(c.delta.as_deref(), Some("🦀"));
        let c = p
            .parse_line(r#"data: {"choices":[{"finish_reason":"length","index":0,"delta":{}}],"timings":{"predicted_n":3}}"#)
            .unwrap()
            .unwrap();
        assert_eq!((c.finish, c.tokens), (Some(Finish::Length), Some(3)));
        let c = p
            .parse_line(r#"data: {"choices":[],"usage":{"completion_tokens":7}}"#)
            .unwrap()
            .unwrap();
        assert_eq!(c.tokens, Some(7));
        assert!(p.parse_line("data: [DONE]").unwrap().unwrap().done);
        assert_eq!(p.parse_line(":"), Ok(None));
        assert_eq!(p.parse_line(": ping"), Ok(None));
        assert_eq!(p.parse_line("event: message"), Ok(None));
        assert_eq!(p.parse_line(""), Ok(None));
        assert_eq!(
            p.parse_line(r#"data: {"error":{"code":500,"message":"boom","type":"server_error"}}"#),
            Err(LineError::Server("boom".into()))
        );
        assert!(matches!(
            p.parse_line(r#"{"choices":[]}"#),
            Err(LineError::Malformed { .. })
        ));
        assert!(matches!(
            p.parse_line("data: {\"choi"),
            Err(LineError::Malformed { .. })
        ));
    }
}
