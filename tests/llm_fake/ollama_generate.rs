// Included by ollama.rs: one chat request's prompt handling, generation and reply bytes.

fn refusal(v1: bool, msg: &str) -> Out {
    match v1 {
        // middleware/openai.go:64-78
        true => json_out(
            400,
            json!({"error": {"message": msg, "type": "invalid_request_error",
                              "param": null, "code": null}}),
        ),
        // routes.go:2109-2118: an error before any chunk gets its status and a JSON body.
        false => json_out(400, json!({ "error": msg })),
    }
}

fn generate(
    st: &Mutex<State>,
    spec: &Spec,
    model: &str,
    path: &str,
    body: &Value,
    msgs: &[(String, String)],
    (num_ctx, truncate, shift): (usize, bool, bool),
) -> Out {
    let v1 = path.starts_with("/v1");
    let n = {
        let mut s = st.lock().unwrap();
        s.chats += 1;
        s.chats - 1
    };
    let tok = |t: &str| p::tokenize(t, spec.per_char);
    if !truncate && tok(&spec.template.render(msgs)) > num_ctx {
        // v0.13: runner.go:129,151-152,905-907 → llm/server.go:1544-1550. (At HEAD the
        // prompt goes on to llama-server, whose answer is UNVERIFIED; the same refusal.)
        return refusal(v1, "the input length exceeds the context length");
    }
    let kept = p::chat_prompt(spec.template, msgs, num_ctx, spec.per_char, truncate);
    let dropped = msgs.len() - kept.len();
    let mut prompt = spec.template.render(&kept);
    if tok(&prompt) > num_ctx {
        if !shift {
            // llm/llama_server.go:295-300
            return refusal(
                v1,
                "the prompt is longer than the context length currently available to the model; shorten the prompt, adjust the context length in settings, or use a model with a longer context length",
            );
        }
        prompt = p::head_cut(&prompt, num_ctx, spec.per_char);
    }
    let prompt_tokens = tok(&prompt);
    // A `format` (JSON schema) constrains the output to it (Ollama turns it into a grammar,
    // llm/server.go); the fake answers a fixed object of the judge's shape.
    let mut reply = match body.get("format") {
        Some(f) if !f.is_null() => r#"{"frame":4,"roleplay":4,"connection":5,"density":3,"naturalness":4,"reason":"自然","suggestion":"なし"}"#.to_string(),
        _ => (spec.reply)(n),
    };
    let mut eval_count = tok(&reply) - 1;
    let (mut shifted, mut reason) = (false, "stop");
    if prompt_tokens + eval_count > num_ctx {
        if shift {
            // Context shift (routes.go:2779; runner/ollamarunner/cache.go v0.13.0:274-299;
            // llama-server --context-shift --keep 4): after the first num_keep tokens, half
            // of the rest is discarded — the start of the prompt. done_reason stays "stop".
            shifted = true;
            prompt = p::head_cut(&prompt, num_ctx, spec.per_char);
        } else {
            // shift:false: generation ends at the context with done_reason "length".
            let room = num_ctx.saturating_sub(prompt_tokens);
            let per = spec.per_char.max(0.01);
            let chars = (room as f64 / per).floor() as usize;
            reply = reply.chars().take(chars).collect();
            eval_count = room;
            reason = "length";
        }
    }
    st.lock().unwrap().seen.push(Seen {
        path: path.to_string(),
        body: body.clone(),
        prompt,
        prompt_tokens,
        eval_count,
        dropped,
        shifted,
    });
    let stream = body.get("stream").and_then(Value::as_bool).unwrap_or(!v1);
    let metrics = [
        5_123_456_789,
        61_234_567,
        prompt_tokens as u64,
        812_345_678,
        eval_count as u64,
        4_012_345_678,
    ];
    match (v1, stream) {
        (true, _) => v1_reply(spec, model, body, &reply, reason, n, (prompt_tokens, eval_count)),
        (false, false) => {
            // routes.go:2387-2434: the accumulated text on the last ChatResponse.
            let line = p::chunk(model, &reply, Some((reason, metrics)));
            json_out(200, serde_json::from_str(&line).unwrap())
        }
        (false, true) => {
            // One json.Marshal + "\n" per write; the last piece rides on the done line
            // (llm/llama_server.go:1705-1726).
            let chars: Vec<char> = reply.chars().collect();
            let pieces: Vec<String> = chars.chunks(3).map(|c| c.iter().collect()).collect();
            let (last, rest) = pieces.split_last().map_or(("", &[][..]), |(l, r)| (l.as_str(), r));
            let mut parts: Vec<String> = rest
                .iter()
                .map(|t| format!("{}\n", p::chunk(model, t, None)))
                .collect();
            parts.push(format!("{}\n", p::chunk(model, last, Some((reason, metrics)))));
            Out {
                status: 200,
                ctype: "application/x-ndjson",
                parts,
                chunked: true,
            }
        }
    }
}

/// Ollama's /v1 SSE (middleware/openai.go:80-174): content chunks, a finish chunk, a usage
/// chunk with `choices: []` when asked, `data: [DONE]`. A failure after the first chunk
/// (`Spec.reply` text starting with "ERROR") becomes an empty content chunk, then EOF
/// (middleware/openai.go:176-183).
fn v1_reply(
    _spec: &Spec,
    model: &str,
    body: &Value,
    reply: &str,
    reason: &str,
    n: usize,
    (prompt_tokens, eval): (usize, usize),
) -> Out {
    let chunk = |delta: Value, finish: Value| {
        format!(
            "data: {}\n\n",
            json!({"id": format!("chatcmpl-{n}"), "object": "chat.completion.chunk",
                   "created": 1767225600, "model": model, "system_fingerprint": "fp_ollama",
                   "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
        )
    };
    let mut parts = Vec::new();
    if let Some(rest) = reply.strip_prefix("ERROR") {
        parts.push(chunk(json!({"role": "assistant", "content": rest}), Value::Null));
        parts.push(chunk(json!({"role": "assistant", "content": ""}), Value::Null));
        return Out {
            status: 200,
            ctype: "text/event-stream",
            parts,
            chunked: true,
        };
    }
    let chars: Vec<char> = reply.chars().collect();
    for piece in chars.chunks(3) {
        let t: String = piece.iter().collect();
        parts.push(chunk(json!({"role": "assistant", "content": t}), Value::Null));
    }
    parts.push(chunk(json!({"role": "assistant", "content": ""}), json!(reason)));
    let usage = body
        .pointer("/stream_options/include_usage")
        .and_then(Value::as_bool)
        == Some(true);
    if usage {
        parts.push(format!(
            "data: {}\n\n",
            json!({"id": format!("chatcmpl-{n}"), "object": "chat.completion.chunk",
                   "created": 1767225600, "model": model, "system_fingerprint": "fp_ollama",
                   "choices": [],
                   "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": eval,
                             "total_tokens": prompt_tokens + eval}})
        ));
    }
    parts.push("data: [DONE]\n\n".to_string());
    Out {
        status: 200,
        ctype: "text/event-stream",
        parts,
        chunked: true,
    }
}

async fn write_out(sock: &mut TcpStream, out: Out) {
    let reason = match out.status {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        _ => "Internal Server Error",
    };
    let mut head = format!(
        "HTTP/1.1 {} {reason}\r\nContent-Type: {}\r\nConnection: close\r\n",
        out.status, out.ctype
    );
    if out.chunked {
        head.push_str("Transfer-Encoding: chunked\r\n\r\n");
    } else {
        let len: usize = out.parts.iter().map(String::len).sum();
        head.push_str(&format!("Content-Length: {len}\r\n\r\n"));
    }
    if sock.write_all(head.as_bytes()).await.is_err() {
        return;
    }
    for part in &out.parts {
        let bytes = if out.chunked {
            format!("{:x}\r\n{part}\r\n", part.len())
        } else {
            part.clone()
        };
        if sock.write_all(bytes.as_bytes()).await.is_err() {
            return;
        }
        let _ = sock.flush().await;
    }
    if out.chunked {
        let _ = sock.write_all(b"0\r\n\r\n").await;
    }
    let _ = sock.shutdown().await;
}
