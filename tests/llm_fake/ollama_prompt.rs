//! The prompt side of the Ollama fake, ported from Ollama's source (commit fb30760): the
//! model's template, a deterministic tokenizer, `chatPrompt`'s front-dropping truncation loop,
//! the runner's head cut, and the bytes of its replies.

use serde_json::Value;

/// Which of Ollama's templates the model carries.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Template {
    /// template/gemma-instruct.gotmpl:1-16: system messages are collected and merged into the
    /// next user turn.
    GemmaInstruct,
    /// template/gemma3-instruct.gotmpl:1-13: `$.System` goes only into the message at index 1.
    Gemma3Instruct,
}

impl Template {
    /// The template text as /api/show returns it.
    pub fn source(self) -> &'static str {
        match self {
            Template::GemmaInstruct => {
                "{{- $system := \"\" }}\n{{- range .Messages }}\n{{- if eq .Role \"system\" }}\n{{- if not $system }}{{ $system = .Content }}\n{{- else }}{{ $system = printf \"%s\\n\\n%s\" $system .Content }}\n{{- end }}\n{{- continue }}\n{{- else if eq .Role \"user\" }}<start_of_turn>user\n{{- if $system }}\n{{ $system }}\n{{- $system = \"\" }}\n{{- end }}\n{{- else if eq .Role \"assistant\" }}<start_of_turn>model\n{{- end }}\n{{ .Content }}<end_of_turn>\n{{ end }}<start_of_turn>model\n"
            }
            Template::Gemma3Instruct => {
                "{{- range $i, $_ := .Messages }}\n{{- $last := eq (len (slice $.Messages $i)) 1 }}\n{{- if eq .Role \"user\" }}<start_of_turn>user\n{{- if and (eq $i 1) $.System }}\n{{ $.System }}\n{{ end }}\n{{ .Content }}<end_of_turn>\n{{ else if eq .Role \"assistant\" }}<start_of_turn>model\n{{ .Content }}<end_of_turn>\n{{ end }}\n{{- if $last }}<start_of_turn>model\n{{ end }}\n{{- end }}"
            }
        }
    }

    /// Renders messages the way the Go template does.
    pub fn render(self, msgs: &[(String, String)]) -> String {
        let mut out = String::new();
        match self {
            Template::GemmaInstruct => {
                let mut system = String::new();
                for (role, content) in msgs {
                    match role.as_str() {
                        "system" => {
                            if !system.is_empty() {
                                system.push_str("\n\n");
                            }
                            system.push_str(content);
                            continue;
                        }
                        "user" => {
                            out.push_str("<start_of_turn>user");
                            if !system.is_empty() {
                                out.push('\n');
                                out.push_str(&std::mem::take(&mut system));
                            }
                        }
                        _ => out.push_str("<start_of_turn>model"),
                    }
                    out.push('\n');
                    out.push_str(content);
                    out.push_str("<end_of_turn>\n");
                }
                out.push_str("<start_of_turn>model\n");
            }
            Template::Gemma3Instruct => {
                // template.go collects system messages into .System; they are not rendered
                // as messages of their own.
                let system: Vec<&str> = msgs
                    .iter()
                    .filter(|(r, _)| r == "system")
                    .map(|(_, c)| c.as_str())
                    .collect();
                let system = system.join("\n\n");
                for (i, (role, content)) in msgs.iter().enumerate() {
                    match role.as_str() {
                        "user" => {
                            out.push_str("<start_of_turn>user\n");
                            if i == 1 && !system.is_empty() {
                                out.push_str(&system);
                                out.push('\n');
                            }
                            out.push_str(content);
                            out.push_str("<end_of_turn>\n");
                        }
                        "assistant" => {
                            out.push_str("<start_of_turn>model\n");
                            out.push_str(content);
                            out.push_str("<end_of_turn>\n");
                        }
                        _ => {}
                    }
                }
                out.push_str("<start_of_turn>model\n");
            }
        }
        out
    }
}

/// A deterministic tokenizer: ASCII runs of up to 4 bytes are one token, every other
/// character costs `per_char` tokens (fractional costs accumulate), plus BOS.
pub fn tokenize(text: &str, per_char: f64) -> usize {
    let mut ascii_run = 0;
    let mut tokens = 1usize;
    let mut frac = 0.0f64;
    for c in text.chars() {
        if c.is_ascii() {
            if ascii_run % 4 == 0 {
                tokens += 1;
            }
            ascii_run += 1;
        } else {
            ascii_run = 0;
            frac += per_char;
            let whole = frac.floor();
            tokens += whole as usize;
            frac -= whole;
        }
    }
    tokens + usize::from(frac > 0.0)
}

/// server/prompt.go:35-92 — drops messages from the front until the rendered prompt fits
/// `num_ctx`, re-adding the system-role messages it skipped and always keeping the last one.
/// Returns the messages kept.
pub fn chat_prompt(
    template: Template,
    msgs: &[(String, String)],
    num_ctx: usize,
    per_char: f64,
    truncate: bool,
) -> Vec<(String, String)> {
    if !truncate || msgs.is_empty() {
        return msgs.to_vec();
    }
    let last = msgs.len() - 1;
    for i in 0..=last {
        let mut kept: Vec<(String, String)> = msgs[..i]
            .iter()
            .filter(|(r, _)| r == "system")
            .cloned()
            .collect();
        kept.extend_from_slice(&msgs[i..]);
        if tokenize(&template.render(&kept), per_char) <= num_ctx || i == last {
            return kept;
        }
    }
    msgs.to_vec()
}

/// llm/llama_server.go:279-332 — a prompt still longer than the context keeps its first
/// `num_keep` (4, +1 for BOS: api/types.go:1102) tokens and a tail, `limit` tokens in all,
/// `limit = num_ctx − (num_ctx − keep)/2`. Works on characters (one per token here).
pub fn head_cut(prompt: &str, num_ctx: usize, per_char: f64) -> String {
    let keep = 5usize;
    let limit = num_ctx - ((num_ctx - keep) / 2).max(1);
    let chars: Vec<char> = prompt.chars().collect();
    let per = per_char.max(0.01);
    let keep_chars = (keep as f64 / per).ceil() as usize;
    let tail_chars = ((limit - keep) as f64 / per).floor() as usize;
    if keep_chars + tail_chars >= chars.len() {
        return prompt.to_string();
    }
    let mut out: String = chars[..keep_chars].iter().collect();
    out.extend(&chars[chars.len() - tail_chars..]);
    out
}

/// The request's messages as (role, content).
pub fn messages_of(body: &Value) -> Vec<(String, String)> {
    body.get("messages")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|m| {
                    let s = |k: &str| m.get(k).and_then(Value::as_str).unwrap_or("").to_string();
                    (s("role"), s("content"))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Go's `time.Time` in JSON: RFC 3339 with nanoseconds, trailing zeros dropped.
pub const CREATED_AT: &str = "2026-01-01T00:00:00.123456789Z";

/// One NDJSON chunk, fields in api/types.go:520-566 order, `json.Marshal` + "\n"
/// (server/routes.go:2097-2144). Metrics only on the done line, integer nanoseconds.
pub fn chunk(model: &str, text: &str, done: Option<(&str, [u64; 6])>) -> String {
    let text = serde_json::to_string(text).unwrap_or_default();
    let mut s = format!(
        "{{\"model\":\"{model}\",\"created_at\":\"{CREATED_AT}\",\"message\":{{\"role\":\"assistant\",\"content\":{text}}},\"done\":{}",
        done.is_some()
    );
    if let Some((reason, m)) = done {
        s.push_str(&format!(",\"done_reason\":\"{reason}\""));
        let names = [
            "total_duration",
            "load_duration",
            "prompt_eval_count",
            "prompt_eval_duration",
            "eval_count",
            "eval_duration",
        ];
        for (name, v) in names.iter().zip(m) {
            // `omitempty`: zero values are left out.
            if v != 0 {
                s.push_str(&format!(",\"{name}\":{v}"));
            }
        }
    }
    s.push('}');
    s
}
