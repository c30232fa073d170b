//! Response bodies framed the way each real server frames them.

/// Ollama's NDJSON stream lines for `deltas`, then its final `done` line.
pub fn ollama_lines(
    model: &str,
    deltas: &[&str],
    done_reason: &str,
    eval_count: u32,
) -> Vec<String> {
    let mut out: Vec<String> = deltas
        .iter()
        .map(|d| {
            format!(
                "{}\n",
                serde_json::json!({
                    "model": model,
                    "created_at": "2025-06-01T09:00:00.000000Z",
                    "message": {"role": "assistant", "content": d},
                    "done": false
                })
            )
        })
        .collect();
    out.push(format!(
        "{}\n",
        serde_json::json!({
            "model": model,
            "created_at": "2025-06-01T09:00:01.000000Z",
            "message": {"role": "assistant", "content": ""},
            "done": true,
            "done_reason": done_reason,
            "total_duration": 1_200_000_000u64,
            "load_duration": 2_000_000u64,
            "prompt_eval_count": 31,
            "prompt_eval_duration": 90_000_000u64,
            "eval_count": eval_count,
            "eval_duration": 1_000_000_000u64
        })
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

/// A non-streamed Ollama /api/chat body.
pub fn ollama_reply(model: &str, text: &str, eval_count: u32) -> String {
    serde_json::json!({
        "model": model, "created_at": "2025-06-01T09:00:01Z",
        "message": {"role": "assistant", "content": text},
        "done": true, "done_reason": "stop", "eval_count": eval_count
    })
    .to_string()
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
