//! A fake Ollama written from Ollama's SOURCE (github:ollama/ollama at fb30760, v0.33.0-rc2+;
//! older behaviour from the tags named), not from its documentation. File:line references are
//! to that commit. Where a behaviour lives outside the repository (llama.cpp) it says so.
//!
//! State: one model, loaded or not. Routes: /api/version, /api/tags, /api/show, /api/chat
//! (NDJSON stream or one body; preload with no messages), /api/embed, /v1/chat/completions
//! (SSE), /v1/models.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use super::ollama_prompt::{self as p, Template};

/// How the fake Ollama is set up.
#[derive(Clone, Debug)]
pub struct Spec {
    pub version: &'static str,
    pub models: Vec<String>,
    pub template: Template,
    /// `model_info.<arch>.context_length` (gemma2: 8192).
    pub trained_ctx: usize,
    /// The context when a request sets no num_ctx (every /v1 request): 4096 since ≈ v0.6.8,
    /// by VRAM since v0.16 (server/routes.go:2049-2058).
    pub default_ctx: usize,
    /// Tokens per non-ASCII character of the deterministic tokenizer.
    pub per_char: f64,
    /// How long loading a model takes: every request that finds its model not loaded with its
    /// options (num_ctx, shift) waits this long first, sending nothing, as Ollama's
    /// scheduleRunner does (routes.go:2634); a preload included.
    pub load: Duration,
    /// The reply to the n-th chat request (the text streamed back).
    pub reply: fn(usize) -> String,
    pub embeds: bool,
    /// /api/show's model_info carries `<arch>.context_length` (a GGUF may lack it).
    pub show_context: bool,
}

impl Spec {
    pub fn gemma2() -> Spec {
        Spec {
            version: "0.13.5",
            models: vec!["gemma2:27b".into(), "nomic-embed-text:latest".into()],
            template: Template::GemmaInstruct,
            trained_ctx: 8192,
            default_ctx: 4096,
            per_char: 0.6,
            load: Duration::ZERO,
            reply: |n| format!("うん、そうだね。{n}回目の返事だよ。"),
            embeds: false,
            show_context: true,
        }
    }
}

/// What the fake's model actually received for one chat request.
#[derive(Clone, Debug)]
pub struct Seen {
    pub path: String,
    pub body: Value,
    /// The rendered prompt the model evaluated (after truncation and any shift).
    pub prompt: String,
    pub prompt_tokens: usize,
    pub eval_count: usize,
    /// Messages dropped from the front by chatPrompt.
    pub dropped: usize,
    /// The context shifted while generating (the prompt's start was discarded).
    pub shifted: bool,
}

#[derive(Default, Debug)]
pub struct State {
    /// Per model: loaded with these (num_ctx, shift) until then (keep_alive). Several
    /// models stay loaded side by side (OLLAMA_MAX_LOADED_MODELS, envconfig).
    pub loaded: std::collections::HashMap<String, (usize, bool, Instant)>,
    pub loads_started: usize,
    /// Loads started, per model (a chat model and an embedding model load apart).
    pub loads_of: std::collections::HashMap<String, usize>,
    pub loads_aborted: usize,
    pub loads_done: usize,
    pub preloads: usize,
    pub seen: Vec<Seen>,
    pub requests: Vec<(String, String, Value)>,
    pub chats: usize,
}

pub struct FakeOllama {
    pub url: String,
    pub state: Arc<Mutex<State>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for FakeOllama {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl FakeOllama {
    pub async fn start(spec: Spec) -> FakeOllama {
        FakeOllama::start_at(spec, "127.0.0.1:0").await
    }

    /// On a given address: a fake dropped and started again on its address is a restarted
    /// server (nothing loaded; connections refused in between).
    pub async fn start_at(spec: Spec, addr: &str) -> FakeOllama {
        let listener = TcpListener::bind(addr).await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let state = Arc::new(Mutex::new(State::default()));
        let (st, spec) = (state.clone(), Arc::new(spec));
        let task = tokio::spawn(async move {
            while let Ok((sock, _)) = listener.accept().await {
                let (st, spec) = (st.clone(), spec.clone());
                tokio::spawn(async move { serve(sock, st, spec).await });
            }
        });
        FakeOllama { url, state, task }
    }

    pub fn seen(&self) -> Vec<Seen> {
        self.state.lock().unwrap().seen.clone()
    }

    pub fn paths(&self) -> Vec<String> {
        let s = self.state.lock().unwrap();
        s.requests
            .iter()
            .map(|(m, p, _)| format!("{m} {p}"))
            .collect()
    }

    /// How many loads of `model` were started (each one waits `Spec::load`).
    pub fn loads_of(&self, model: &str) -> usize {
        let s = self.state.lock().unwrap();
        s.loads_of.get(model).copied().unwrap_or(0)
    }

    pub fn counts(&self) -> (usize, usize, usize, usize) {
        let s = self.state.lock().unwrap();
        (s.loads_started, s.loads_aborted, s.loads_done, s.preloads)
    }
}

/// An HTTP answer: status, content type, body parts (each one write; chunked when streamed).
struct Out {
    status: u16,
    ctype: &'static str,
    parts: Vec<String>,
    chunked: bool,
}

fn json_out(status: u16, body: Value) -> Out {
    // gin's c.JSON: application/json; charset=utf-8, no trailing newline.
    Out {
        status,
        ctype: "application/json; charset=utf-8",
        parts: vec![body.to_string()],
        chunked: false,
    }
}

/// The model the request names, matched case-insensitively (routes.go:1222-1245).
fn find_model(spec: &Spec, name: &str) -> Option<String> {
    let want = name.to_lowercase();
    let want = if want.contains(':') {
        want
    } else {
        format!("{want}:latest")
    };
    spec.models
        .iter()
        .find(|m| m.to_lowercase() == want)
        .cloned()
}

/// 404 wording: v0.12 and later `model 'x' not found` (routes.go:2481-2486); v0.11 and
/// earlier, and /api/embed at HEAD, `model "x" not found, try pulling it first`
/// (routes.go:3115-3116).
fn not_found(spec: &Spec, name: &str, old_path: bool) -> Out {
    let old = old_path || crate::llm_fake::ollama_version(spec.version) < (0, 12, 0);
    let msg = if old {
        format!("model \"{name}\" not found, try pulling it first")
    } else {
        format!("model '{name}' not found")
    };
    json_out(404, json!({ "error": msg }))
}

async fn serve(mut sock: TcpStream, st: Arc<Mutex<State>>, spec: Arc<Spec>) {
    let _ = sock.set_nodelay(true);
    let Some(req) = super::read_request(&mut sock).await else {
        return;
    };
    let body: Value = serde_json::from_str(&req.body).unwrap_or(Value::Null);
    st.lock()
        .unwrap()
        .requests
        .push((req.method.clone(), req.path.clone(), body.clone()));
    let out = match (req.method.as_str(), req.path.as_str()) {
        // routes.go:1879-1880
        ("GET", "/api/version") => json_out(200, json!({ "version": spec.version })),
        ("GET", "/api/tags") => json_out(200, tags(&spec)),
        ("POST", "/api/show") => show(&spec, &body),
        ("GET", "/v1/models") => json_out(200, v1_models(&spec)),
        ("POST", "/api/chat") | ("POST", "/api/embed") | ("POST", "/v1/chat/completions") => {
            match model_call(&mut sock, &st, &spec, &req.path, &body).await {
                Some(out) => out,
                None => return, // the client left during the load: nothing to write
            }
        }
        // gin's NoRoute: 404 text/plain "404 page not found".
        _ => Out {
            status: 404,
            ctype: "text/plain",
            parts: vec!["404 page not found".into()],
            chunked: false,
        },
    };
    write_out(&mut sock, out).await;
}

fn tags(spec: &Spec) -> Value {
    // api/types.go:797-833; name = model = DisplayShortest (model_list_cache.go:323-324).
    let models: Vec<Value> = spec
        .models
        .iter()
        .map(|m| {
            json!({"name": m, "model": m, "modified_at": p::CREATED_AT, "size": 15_628_387_458u64,
                   "digest": "53261bc9c192c1cb5fcc898dd3aa15da093f5ab6f08e17e48cf838bb1c58abc6",
                   "details": {"parent_model": "", "format": "gguf", "family": "gemma2",
                               "families": ["gemma2"], "parameter_size": "27.2B",
                               "quantization_level": "Q4_0"}})
        })
        .collect();
    json!({ "models": models })
}

fn v1_models(spec: &Spec) -> Value {
    // openai/openai.go:450-470: a nil slice when there are no models → "data": null.
    if spec.models.is_empty() {
        return json!({"object": "list", "data": null});
    }
    let data: Vec<Value> = spec
        .models
        .iter()
        .map(|m| json!({"id": m, "object": "model", "created": 1767225600, "owned_by": "library"}))
        .collect();
    json!({"object": "list", "data": data})
}

fn show(spec: &Spec, body: &Value) -> Out {
    let name = body.get("model").and_then(Value::as_str).unwrap_or("");
    if find_model(spec, name).is_none() {
        return not_found(spec, name, false);
    }
    // ShowResponse, api/types.go:737-755.
    let caps = if spec.embeds {
        json!(["embedding"])
    } else {
        json!(["completion"])
    };
    json_out(
        200,
        json!({
            "modelfile": "# Modelfile generated by \"ollama show\"",
            "parameters": "stop                           \"<start_of_turn>\"\nstop                           \"<end_of_turn>\"",
            "template": spec.template.source(),
            "details": {"format": "gguf", "family": "gemma2", "parameter_size": "27.2B"},
            "model_info": if spec.show_context {
                json!({"general.architecture": "gemma2", "gemma2.context_length": spec.trained_ctx})
            } else {
                json!({"general.architecture": "gemma2"})
            },
            "capabilities": caps,
            "modified_at": p::CREATED_AT
        }),
    )
}

/// Waits for the model to be loaded with `opts`, loading it if needed. A client that
/// disconnects during the load aborts it (llm/llama_server.go:1297-1302): returns false.
async fn ensure_loaded(
    sock: &mut TcpStream,
    st: &Mutex<State>,
    spec: &Spec,
    (model, opts): (&str, (usize, bool)),
    keep: Duration,
) -> bool {
    let resident = {
        let s = st.lock().unwrap();
        matches!(s.loaded.get(model), Some(&(c, sh, until)) if (c, sh) == opts && until > Instant::now())
    };
    if !resident {
        {
            let mut s = st.lock().unwrap();
            s.loads_started += 1;
            *s.loads_of.entry(model.to_string()).or_default() += 1;
        }
        let mut probe = [0u8; 1];
        let left = tokio::select! {
            _ = tokio::time::sleep(spec.load) => false,
            n = sock.read(&mut probe) => matches!(n, Ok(0) | Err(_)),
        };
        if left {
            st.lock().unwrap().loads_aborted += 1;
            return false;
        }
        st.lock().unwrap().loads_done += 1;
    }
    let until = Instant::now() + keep;
    st.lock()
        .unwrap()
        .loaded
        .insert(model.to_string(), (opts.0, opts.1, until));
    true
}

/// keep_alive: a Go duration string or seconds (api/types.go Duration); default 5 min
/// (envconfig/config.go:126-144).
fn keep_alive(body: &Value) -> Duration {
    match body.get("keep_alive") {
        Some(Value::Number(n)) => Duration::from_secs(n.as_u64().unwrap_or(300)),
        Some(Value::String(s)) => {
            let secs = s.trim_end_matches('s').parse::<u64>().unwrap_or(300);
            let mins = s.strip_suffix('m').and_then(|m| m.parse::<u64>().ok());
            Duration::from_secs(mins.map_or(secs, |m| m * 60))
        }
        _ => Duration::from_secs(300),
    }
}

async fn model_call(
    sock: &mut TcpStream,
    st: &Mutex<State>,
    spec: &Spec,
    path: &str,
    body: &Value,
) -> Option<Out> {
    let name = body.get("model").and_then(Value::as_str).unwrap_or("");
    let v1 = path.starts_with("/v1");
    let Some(model) = find_model(spec, name) else {
        return Some(match v1 {
            // middleware/openai.go:64-78 wraps errors as {"error":{"message",…}}.
            true => json_out(
                404,
                json!({"error": {"message": format!("model '{name}' not found"),
                                  "type": "api_error", "param": null, "code": null}}),
            ),
            false => not_found(spec, name, path == "/api/embed"),
        });
    };
    let guard = crate::llm_fake::ollama_version(spec.version) >= (0, 13, 0);
    let opt = |k: &str| body.get("options").and_then(|o| o.get(k));
    // /v1 cannot carry num_ctx (openai/openai.go:640-722); clamp to the trained context
    // (llm/server.go:111-116).
    let asked = opt("num_ctx").and_then(Value::as_u64).map(|n| n as usize);
    let num_ctx = asked
        .filter(|_| !v1)
        .unwrap_or(spec.default_ctx)
        .min(spec.trained_ctx);
    let flag = |k: &str| !guard || body.get(k).and_then(Value::as_bool).unwrap_or(true);
    let (truncate, shift) = (flag("truncate"), flag("shift"));
    // At HEAD `shift` is part of the runner's options (sched.go:1413-1419).
    let opts = (num_ctx, shift);
    if !ensure_loaded(sock, st, spec, (&model, opts), keep_alive(body)).await {
        return None;
    }
    if path == "/api/embed" {
        return Some(embed(spec, &model, body));
    }
    let msgs = p::messages_of(body);
    if msgs.is_empty() && !v1 {
        // routes.go:2645-2653: the preload answer, after the load.
        st.lock().unwrap().preloads += 1;
        let line = p::chunk(&model, "", Some(("load", [0; 6])));
        return Some(json_out(200, serde_json::from_str(&line).unwrap()));
    }
    Some(generate(
        st,
        spec,
        &model,
        path,
        body,
        &msgs,
        (num_ctx, truncate, shift),
    ))
}

fn embed(spec: &Spec, model: &str, body: &Value) -> Out {
    if !spec.embeds && !model.starts_with("nomic-embed") {
        // UNVERIFIED wording: at HEAD a model without pooling_type starts without --embedding
        // (llm/llama_server.go:581-586, 866) and the call fails inside llama.cpp.
        return json_out(
            500,
            json!({"error": "this model does not support embeddings"}),
        );
    }
    let n = body
        .get("input")
        .and_then(Value::as_array)
        .map_or(1, Vec::len);
    // Vectors are L2-normalised (routes.go:795-1023).
    let v = vec![json!([0.6, 0.8, 0.0]); n];
    json_out(
        200,
        json!({"model": model, "embeddings": v, "total_duration": 14_143_917u64,
               "load_duration": 1_019_500u64, "prompt_eval_count": 8}),
    )
}

include!("ollama_generate.rs");
