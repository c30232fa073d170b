//! The request and result types shared by both wire protocols, and system-message folding.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::config::{ApiKind, SystemRole};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    System,
    User,
    Assistant,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
    pub content: String,
}

impl Message {
    pub fn system(content: impl Into<String>) -> Message {
        Message {
            role: Role::System,
            content: content.into(),
        }
    }
    pub fn user(content: impl Into<String>) -> Message {
        Message {
            role: Role::User,
            content: content.into(),
        }
    }
    pub fn assistant(content: impl Into<String>) -> Message {
        Message {
            role: Role::Assistant,
            content: content.into(),
        }
    }
}

/// What shape the reply must have.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum ResponseFormat {
    #[default]
    Text,
    /// Any JSON object (Ollama `format: "json"`, OpenAI `{"type":"json_object"}`).
    Json,
    /// JSON matching this schema (Ollama `format: <schema>`, OpenAI `json_schema`).
    Schema(serde_json::Value),
}

#[derive(Debug, Clone, PartialEq)]
pub struct ChatRequest {
    pub messages: Vec<Message>,
    /// `None`: the configured `temperature`, or `judge_temperature` when `cap` is false.
    pub temperature: Option<f32>,
    /// `None`: the configured `max_tokens`.
    pub max_tokens: Option<u32>,
    pub format: ResponseFormat,
    /// `None`: the configured stop sequences; `Some(vec![])` sends none.
    pub stop: Option<Vec<String>>,
    pub seed: Option<u64>,
    /// Apply the character cap (`max_chars`, trimmed to a sentence end). False for judge calls.
    pub cap: bool,
}

impl ChatRequest {
    /// A dialogue line: capped, plain text, configured sampling.
    pub fn line(messages: Vec<Message>) -> ChatRequest {
        ChatRequest {
            messages,
            temperature: None,
            max_tokens: None,
            format: ResponseFormat::Text,
            stop: None,
            seed: None,
            cap: true,
        }
    }

    /// A judge call: uncapped, in `format`, at the configured judge temperature, no stop
    /// sequences (a JSON verdict may quote a speaker tag).
    pub fn judge(messages: Vec<Message>, format: ResponseFormat) -> ChatRequest {
        ChatRequest {
            messages,
            temperature: None,
            max_tokens: None,
            format,
            stop: Some(Vec::new()),
            seed: None,
            cap: false,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Finish {
    /// The model ended its turn or hit a stop sequence.
    Stop,
    /// The token limit (max_tokens / num_predict, or the context) ended it.
    Length,
    /// We cut it at `max_chars` and dropped the rest of the stream.
    Capped,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Completion {
    /// Final text: capped and trimmed when `finish` is `Capped`, whitespace-trimmed always.
    pub text: String,
    /// Everything received, as received.
    pub raw: String,
    pub finish: Finish,
    /// Generated tokens as the server counted them, else the number of streamed deltas (0 for
    /// a non-streamed reply without a count, and a capped stream counts only what it read).
    pub tokens: u32,
    /// Time from the call to the first text, retry pause included (streamed calls only).
    pub first_token: Option<Duration>,
    pub elapsed: Duration,
    /// The stream failed (at its start or mid-way) and a non-streamed call produced this result.
    pub fell_back: bool,
    /// Why the stream was given up, when it was (shown on the attempt).
    pub fallback_reason: Option<String>,
    /// The prompt's size in tokens as the server counted it (usage.prompt_tokens, llama-server
    /// timings, Ollama prompt_eval_count); None when the server did not say.
    pub prompt_tokens: Option<u32>,
    /// How many times a transient failure was retried (0 or 1).
    pub retries: u32,
    /// What the reply's token counts say about the prompt the model saw (see `llm::guard`).
    pub context: ContextCheck,
}

/// What a reply's counts say about the prompt the model actually saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ContextCheck {
    /// The server gave no prompt count.
    #[default]
    NoCount,
    /// The count was believed and the tokens-per-char ratio learned from it.
    Learned,
    /// Smaller than expected beyond the tolerance on a server that may drop messages
    /// silently: not learned from (it may count a truncated prompt).
    CountLow { expected: u32, counted: u32 },
    /// Prompt + reply exceed the context: the server discarded the start of the prompt
    /// (the persona and the vault's rules) while generating.
    Shifted {
        prompt: u32,
        reply: u32,
        context: u32,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub struct ServerInfo {
    pub api: ApiKind,
    pub models: Vec<String>,
    pub model_present: bool,
}

/// Applies the system-role policy. `Fold` moves the leading system messages' text (joined by
/// blank lines) plus a blank line to the start of the first user message, or into a new user
/// message when an assistant message comes first; later system messages become user messages.
pub fn prepare_messages(messages: &[Message], role: SystemRole) -> Vec<Message> {
    if role == SystemRole::Native {
        return messages.to_vec();
    }
    let lead = messages
        .iter()
        .take_while(|m| m.role == Role::System)
        .count();
    let system: Vec<&str> = messages
        .iter()
        .take(lead)
        .map(|m| m.content.as_str())
        .filter(|c| !c.is_empty())
        .collect();
    let mut out: Vec<Message> = messages
        .iter()
        .skip(lead)
        .map(|m| Message {
            role: if m.role == Role::System {
                Role::User
            } else {
                m.role
            },
            content: m.content.clone(),
        })
        .collect();
    if system.is_empty() {
        return out;
    }
    let system = system.join("\n\n");
    let first_user = out.iter().position(|m| m.role == Role::User);
    let first_assistant = out.iter().position(|m| m.role == Role::Assistant);
    match (first_user, first_assistant) {
        (Some(u), a) if a.is_none_or(|a| u < a) => {
            if let Some(m) = out.get_mut(u) {
                m.content = format!("{system}\n\n{}", m.content);
            }
        }
        _ => out.insert(0, Message::user(system)),
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn native_keeps_messages() {
        let m = vec![Message::system("s"), Message::user("u")];
        assert_eq!(prepare_messages(&m, SystemRole::Native), m);
    }

    #[test]
    fn fold_prepends_to_first_user() {
        let m = vec![
            Message::system("あなたはやな。"),
            Message::system("短く話す。"),
            Message::user("今日は晴れだね"),
            Message::assistant("うん"),
        ];
        let got = prepare_messages(&m, SystemRole::Fold);
        assert_eq!(
            got,
            vec![
                Message::user("あなたはやな。\n\n短く話す。\n\n今日は晴れだね"),
                Message::assistant("うん"),
            ]
        );
    }

    #[test]
    fn fold_inserts_user_when_assistant_comes_first() {
        let m = vec![
            Message::system("設定"),
            Message::assistant("姉です"),
            Message::user("妹です"),
        ];
        let got = prepare_messages(&m, SystemRole::Fold);
        assert_eq!(got[0], Message::user("設定"));
        assert_eq!(got[1], Message::assistant("姉です"));
        assert_eq!(got[2], Message::user("妹です"));
        // Only a system message at all.
        assert_eq!(
            prepare_messages(&[Message::system("設定")], SystemRole::Fold),
            vec![Message::user("設定")]
        );
    }

    #[test]
    fn fold_turns_later_system_messages_into_user_ones() {
        let m = vec![
            Message::user("a"),
            Message::assistant("b"),
            Message::system("指示"),
        ];
        let got = prepare_messages(&m, SystemRole::Fold);
        assert!(got.iter().all(|m| m.role != Role::System));
        assert_eq!(got[2], Message::user("指示"));
    }
}
