//! Response bodies framed the way each real server frames them.

/// Ollama's NDJSON stream lines for `deltas`, then its final `done` line: the bytes of
/// server/routes.go:2097-2144 (one `json.Marshal` + "\n" per chunk, fields in api/types.go:
/// 520-566 order, integer-nanosecond metrics on the done line only).
pub fn ollama_lines(
    model: &str,
    deltas: &[&str],
    done_reason: &str,
    eval_count: u32,
) -> Vec<String> {
    use super::ollama_prompt::chunk;
    let mut out: Vec<String> = deltas
        .iter()
        .map(|d| format!("{}\n", chunk(model, d, None)))
        .collect();
    let metrics = [
        1_200_000_000,
        2_000_000,
        31,
        90_000_000,
        u64::from(eval_count),
        1_000_000_000,
    ];
    out.push(format!(
        "{}\n",
        chunk(model, "", Some((done_reason, metrics)))
    ));
    out
}

/// One SSE content event as llama-server frames it.
pub fn sse_delta(model: &str, delta: &str) -> String {
    format!(
        "data: {}\n\n",
        serde_json::json!({
            "choices": [{"finish_reason": null, "index": 0, "delta": {"content": delta}}],
            "created": 1_750_000_000, "id": "chatcmpl-fake", "model": model,
            "system_fingerprint": "b0-fake", "object": "chat.completion.chunk"
        })
    )
}

/// llama-server's SSE events for `deltas`: role chunk, deltas, finish chunk with timings, [DONE].
pub fn sse_events(model: &str, deltas: &[&str], finish: &str, predicted_n: u32) -> Vec<String> {
    let mut out = vec![format!(
        "data: {}\n\n",
        serde_json::json!({
            "choices": [{"finish_reason": null, "index": 0, "delta": {"role": "assistant", "content": null}}],
            "created": 1_750_000_000, "id": "chatcmpl-fake", "model": model,
            "system_fingerprint": "b0-fake", "object": "chat.completion.chunk"
        })
    )];
    out.extend(deltas.iter().map(|d| sse_delta(model, d)));
    out.push(format!(
        "data: {}\n\n",
        serde_json::json!({
            "choices": [{"finish_reason": finish, "index": 0, "delta": {}}],
            "created": 1_750_000_000, "id": "chatcmpl-fake", "model": model,
            "system_fingerprint": "b0-fake", "object": "chat.completion.chunk",
            "timings": {"prompt_n": 20, "predicted_n": predicted_n}
        })
    ));
    out.push("data: [DONE]\n\n".to_string());
    out
}

/// A non-streamed Ollama /api/chat body (routes.go:2387-2434: the text and all metrics on
/// the last ChatResponse).
pub fn ollama_reply(model: &str, text: &str, eval_count: u32) -> String {
    let metrics = [
        1_200_000_000,
        2_000_000,
        31,
        90_000_000,
        u64::from(eval_count),
        1_000_000_000,
    ];
    super::ollama_prompt::chunk(model, text, Some(("stop", metrics)))
}

/// A non-streamed /v1/chat/completions body.
pub fn openai_reply(model: &str, text: &str, tokens: u32) -> String {
    serde_json::json!({
        "choices": [{"finish_reason": "stop", "index": 0,
                     "message": {"role": "assistant", "content": text}}],
        "created": 1_750_000_000, "model": model, "object": "chat.completion",
        "usage": {"completion_tokens": tokens, "prompt_tokens": 20, "total_tokens": 20 + tokens},
        "id": "chatcmpl-fake"
    })
    .to_string()
}
