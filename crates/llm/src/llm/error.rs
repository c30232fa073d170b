//! Typed LLM client errors, each explained for a user and naming the URL and model involved.

use std::time::Duration;

use super::config::ApiKind;

/// Which wait ran out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeoutPhase {
    /// Opening the TCP connection.
    Connect,
    /// Waiting for the first text of a streamed reply.
    FirstToken,
    /// Silence between two chunks of a stream that had started.
    Idle,
    /// A whole non-streamed call.
    Response,
    /// The model-list probe: the connection opened, no answer came.
    Probe,
    /// Loading a cold model (the preload before the first turn).
    Load,
    /// A server that refused or dropped connections mid-run, waited for to come back.
    Restart,
}

impl TimeoutPhase {
    fn describe(self) -> &'static str {
        match self {
            TimeoutPhase::Connect => "connecting",
            TimeoutPhase::FirstToken => "waiting for the first token",
            TimeoutPhase::Idle => "waiting for the next chunk (the stream stalled)",
            TimeoutPhase::Response => "waiting for the whole response",
            TimeoutPhase::Probe => {
                "waiting for the model list — the server accepted the connection but did not \
                 answer (busy or hung?)"
            }
            TimeoutPhase::Restart => {
                "waiting for the server to come back (it refused or dropped the connection: \
                 stopped or restarting?) — start it again, or raise timeouts.restart_ms"
            }
            TimeoutPhase::Load => {
                "waiting for the model to load — raise timeouts.load_ms (and Ollama's \
                 OLLAMA_LOAD_TIMEOUT) on a slow disk, or use a smaller model"
            }
        }
    }
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LlmError {
    #[error(
        "{kind} ({url}, model {model}): {detail} — is the server running? start it with \
             `ollama serve` or pass --endpoint"
    )]
    Connect {
        url: String,
        model: String,
        /// "connection refused", "connection reset", …
        kind: &'static str,
        detail: String,
    },

    #[error("model `{model}` not found at {url}{}", not_found_hint(.api, .model, .available))]
    ModelNotFound {
        url: String,
        model: String,
        api: ApiKind,
        /// Up to 5 model names the server does have.
        available: Vec<String>,
    },

    #[error("the server rejected the request with HTTP {status} ({url}, model {model}): \
             {message}{}", if *.status == 404 { " — wrong --api for this server?" } else { "" })]
    Rejected {
        status: u16,
        url: String,
        model: String,
        message: String,
    },

    #[error("the server failed with HTTP {status} ({url}, model {model}): {message}")]
    Server {
        status: u16,
        url: String,
        model: String,
        message: String,
    },

    #[error("timed out after {} {} ({url}, model {model})", fmt_duration(.after), .phase.describe())]
    Timeout {
        url: String,
        model: String,
        phase: TimeoutPhase,
        after: Duration,
    },

    #[error("malformed response from {url} (model {model}): expected {expected}, got `{got}`")]
    Malformed {
        url: String,
        model: String,
        expected: &'static str,
        /// The offending line or body, truncated.
        got: String,
    },

    #[error("the server reported an error mid-stream ({url}, model {model}): {message}")]
    StreamError {
        url: String,
        model: String,
        message: String,
    },

    #[error("the stream from {url} (model {model}) ended early: {detail}")]
    Interrupted {
        url: String,
        model: String,
        detail: String,
    },

    #[error(
        "no LLM API found at {url} (model {model}): {detail} — pass --api ollama|openai or \
             fix --endpoint"
    )]
    UnknownApi {
        url: String,
        model: String,
        detail: String,
    },

    #[error("invalid LLM endpoint `{url}`: {detail}")]
    BadEndpoint { url: String, detail: String },

    #[error(
        "the response from {url} (model {model}) passed the size limit of {limit} bytes and was \
         dropped — a broken or hostile server? check what answers at this endpoint"
    )]
    TooLarge {
        url: String,
        model: String,
        limit: usize,
    },
}

/// The served models closest to a mistyped name (by edit distance, ignoring case): at most
/// three, all at the smallest distance, and only within a third of the name's length (at
/// least 2) — "gema2:27b" → gemma2:27b; "llama3" is not a typo of "qwen2".
pub fn closest_models<'a>(model: &str, available: &'a [String]) -> Vec<&'a str> {
    let want = model.to_lowercase();
    let limit = (want.chars().count() / 3).max(2);
    let scored: Vec<(usize, &str)> = available
        .iter()
        .map(|m| (strsim::levenshtein(&want, &m.to_lowercase()), m.as_str()))
        .filter(|(d, _)| *d <= limit)
        .collect();
    let Some(best) = scored.iter().map(|(d, _)| *d).min() else {
        return Vec::new();
    };
    scored
        .into_iter()
        .filter(|(d, _)| *d == best)
        .map(|(_, m)| m)
        .take(3)
        .collect()
}

/// The up to 5 served models a `ModelNotFound` names: the closest to `model` first (so a
/// typo's match is never cut off by a long list), then the others in the server's order.
pub fn shortlist(model: &str, all: &[String]) -> Vec<String> {
    let near: Vec<String> = closest_models(model, all)
        .into_iter()
        .map(str::to_string)
        .collect();
    let rest = all.iter().filter(|m| !near.contains(m)).cloned();
    near.iter().cloned().chain(rest).take(5).collect()
}

fn not_found_hint(api: &ApiKind, model: &str, available: &[String]) -> String {
    let near = closest_models(model, available);
    let guess = if near.is_empty() {
        String::new()
    } else {
        format!(" — did you mean {}?", near.join(" or "))
    };
    guess + &plain_hint(api, model, available)
}

fn plain_hint(api: &ApiKind, model: &str, available: &[String]) -> String {
    match api {
        ApiKind::Ollama if available.is_empty() => {
            format!(" — download it with `ollama pull {model}` or pass --model")
        }
        ApiKind::Ollama => format!(
            " — the server answered and has: {}; download it with `ollama pull {model}` or pass \
             --model",
            available.join(", ")
        ),
        ApiKind::OpenAi if available.is_empty() => " — pass --model with a model the server \
                                                    serves"
            .to_string(),
        ApiKind::OpenAi => format!(
            " — the server answered and has: {}; pass --model",
            available.join(", ")
        ),
    }
}

fn fmt_duration(d: &Duration) -> String {
    if d.as_millis() < 1000 {
        format!("{} ms", d.as_millis())
    } else {
        format!("{:.1} s", d.as_secs_f64())
    }
}

impl LlmError {
    /// The same error without the words the model server wrote (its error message, a body it
    /// sent back — they may quote what it was sent: a user's message, her prompt), shown as
    /// `…`: the kind, the status, the endpoint and the model.
    pub fn without_server_text(&self) -> LlmError {
        let mut e = self.clone();
        match &mut e {
            LlmError::Rejected { message, .. }
            | LlmError::Server { message, .. }
            | LlmError::StreamError { message, .. } => *message = "…".into(),
            LlmError::Malformed { got, .. } => *got = "…".into(),
            _ => {}
        }
        e
    }

    /// Worth one retry after a short pause: rows 1–2 of seed 003 §4's table (`llm::policy`).
    pub fn is_transient(&self) -> bool {
        super::policy::retried(self)
    }

    /// The endpoint cannot serve us (down, missing model, failing, stalling or talking nonsense),
    /// as opposed to a request or configuration the server understood and refused. Callers use
    /// it to pick exit code 3 or a degraded, static-only mode.
    pub fn is_endpoint_failure(&self) -> bool {
        match self {
            LlmError::Rejected { status, .. } => *status == 429,
            LlmError::BadEndpoint { .. } => false,
            _ => true,
        }
    }

    /// The URL the failing request went to.
    pub fn url(&self) -> &str {
        match self {
            LlmError::Connect { url, .. }
            | LlmError::ModelNotFound { url, .. }
            | LlmError::Rejected { url, .. }
            | LlmError::Server { url, .. }
            | LlmError::Timeout { url, .. }
            | LlmError::Malformed { url, .. }
            | LlmError::StreamError { url, .. }
            | LlmError::Interrupted { url, .. }
            | LlmError::UnknownApi { url, .. }
            | LlmError::BadEndpoint { url, .. }
            | LlmError::TooLarge { url, .. } => url,
        }
    }
}

/// At most `max` chars of `s`, with an ellipsis when cut (for quoting server output in errors).
pub fn truncate_chars(s: &str, max: usize) -> String {
    let s = s.trim();
    match s.char_indices().nth(max) {
        None => s.to_string(),
        Some((at, _)) => format!("{}…", s.get(..at).unwrap_or(s)),
    }
}

/// The server's own message from an error body: Ollama `{"error":"…"}`, OpenAI
/// `{"error":{"message":"…"}}`, vLLM/FastAPI `{"message":"…"}` / `{"detail":"…"}`; else the
/// body itself, truncated.
pub fn server_message(body: &str) -> String {
    if let Ok(v) = serde_json::from_str::<serde_json::Value>(body) {
        let candidates = [
            v.get("error").and_then(|e| e.as_str()),
            v.get("error")
                .and_then(|e| e.get("message"))
                .and_then(|m| m.as_str()),
            v.get("message").and_then(|m| m.as_str()),
            v.get("detail").and_then(|m| m.as_str()),
        ];
        if let Some(m) = candidates.into_iter().flatten().next() {
            let m = truncate_chars(m, 300);
            // llama-server's exceed_context_size_error gives the counts as fields (newer
            // builds leave them out of the message): keep them readable for the budget.
            let count = |k: &str| {
                v.get("error")
                    .and_then(|e| e.get(k))
                    .and_then(|n| n.as_u64())
            };
            if let (Some(n), Some(ctx)) = (count("n_prompt_tokens"), count("n_ctx"))
                && !m.contains(" tokens)")
            {
                return format!(
                    "{m} [request ({n} tokens) exceeds the available context size ({ctx} tokens)]"
                );
            }
            return m;
        }
    }
    if body.trim().is_empty() {
        "(empty body)".to_string()
    } else {
        truncate_chars(body, 200)
    }
}

/// Whether a server message says the requested model does not exist (Ollama: `model "x" not
/// found, try pulling it first`; llama-server router: `model 'x' not found`; vLLM: `The model
/// `x` does not exist.`).
pub fn says_model_missing(message: &str) -> bool {
    let m = message.to_lowercase();
    m.contains("model") && (m.contains("not found") || m.contains("does not exist"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extracts_messages_from_each_dialect() {
        assert_eq!(
            server_message(r#"{"error":"model \"x\" not found, try pulling it first"}"#),
            "model \"x\" not found, try pulling it first"
        );
        assert_eq!(
            server_message(
                r#"{"error":{"code":400,"message":"'messages' is required","type":"invalid_request_error"}}"#
            ),
            "'messages' is required"
        );
        assert_eq!(
            server_message(r#"{"object":"error","message":"The model `x` does not exist."}"#),
            "The model `x` does not exist."
        );
        assert_eq!(server_message("<html>oops</html>"), "<html>oops</html>");
        assert_eq!(server_message(""), "(empty body)");
    }

    #[test]
    fn truncates_by_chars() {
        assert_eq!(truncate_chars("あいうえお", 3), "あいう…");
        assert_eq!(truncate_chars("あい", 3), "あい");
    }

    #[test]
    fn transient_classification() {
        let server = |status| LlmError::Server {
            status,
            url: "u".into(),
            model: "m".into(),
            message: String::new(),
        };
        assert!(server(503).is_transient());
        assert!(
            server(500).is_transient(),
            "seed 003 §4: API errors get one retry"
        );
        assert!(!server(501).is_transient());
        assert!(server(500).is_endpoint_failure());
        let rejected = |status| LlmError::Rejected {
            status,
            url: "u".into(),
            model: "m".into(),
            message: String::new(),
        };
        assert!(rejected(429).is_transient());
        assert!(!rejected(400).is_transient());
        assert!(!rejected(400).is_endpoint_failure());
    }

    /// Generated typos (one character changed, dropped, added; two swapped) of a served model
    /// find it among others; a name far from every served one gets no guess.
    #[test]
    fn a_mistyped_model_name_gets_the_closest_served_one() {
        let served: Vec<String> = [
            "gemma2:27b",
            "gemma2:2b",
            "qwen2.5:7b-instruct",
            "llama3.1:8b",
            "hf.co/elyza/Llama-3-ELYZA-JP-8B-GGUF:Q4_K_M",
            "phi3:mini",
            "mistral-nemo:12b",
        ]
        .map(String::from)
        .to_vec();
        let mut r = crate::test_rng::Rng::new(39);
        for round in 0..2_000 {
            let target = &served[r.next(served.len() as u64) as usize];
            let mut c: Vec<char> = target.chars().collect();
            let i = r.next(c.len() as u64) as usize;
            match r.next(4) {
                0 => c[i] = if c[i] == 'x' { 'y' } else { 'x' },
                1 => {
                    c.remove(i);
                }
                2 => c.insert(i, 'z'),
                _ if i + 1 < c.len() => c.swap(i, i + 1),
                _ => c[i] = '-',
            }
            let typo: String = c.into_iter().collect();
            if &typo == target {
                continue;
            }
            let near = closest_models(&typo, &served);
            assert!(
                near.contains(&target.as_str())
                    || near.iter().all(|m| {
                        strsim::levenshtein(&typo.to_lowercase(), &m.to_lowercase())
                            <= strsim::levenshtein(&typo.to_lowercase(), &target.to_lowercase())
                    }),
                "{round}: {typo} -> {near:?}"
            );
            assert!(!near.is_empty(), "{round}: {typo}");
            let list = shortlist(&typo, &served);
            assert!(
                list.len() <= 5
                    && list.starts_with(&near.iter().map(|m| m.to_string()).collect::<Vec<_>>())
            );
        }
        for far in ["stablelm", "x", "command-r-plus:104b"] {
            assert!(closest_models(far, &served).is_empty(), "{far}");
        }
        let e = LlmError::ModelNotFound {
            url: "http://127.0.0.1:11434/api/tags".into(),
            model: "gema2:27b".into(),
            api: ApiKind::Ollama,
            available: shortlist("gema2:27b", &served),
        };
        let m = e.to_string();
        assert!(m.contains("did you mean gemma2:27b?"), "{m}");
        assert!(m.contains("ollama pull gema2:27b"), "{m}");
    }
}
