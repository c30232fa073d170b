//! The harness of the `kakeai serve --line` tests: the real binary on a free port with its own
//! temp dirs, a fake LINE API and the fake model endpoint; webhook bodies in LINE's documented
//! JSON, signed as LINE signs them.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::cli_env::Env;
use crate::llm_fake::{FakeServer, Recorded, Reply, openai_reply, parts, sse_events};

pub const SECRET: &str = "test-channel-secret-0123456789ab";
pub const TOKEN: &str = "test-access-token-abcdef";

pub struct Serve {
    pub env: Env,
    pub child: Child,
    pub url: String,
    /// The monitoring listener (/metrics, /healthz).
    pub metrics_url: String,
    pub stderr: Arc<Mutex<Vec<String>>>,
    /// Set: the reader of the server's stderr goes away after the next line (a closed pipe).
    pub deaf: Arc<std::sync::atomic::AtomicBool>,
}

impl Serve {
    /// Starts `kakeai serve --line` against the fakes, with `config` (TOML) as --config
    /// (`--no-vault` unless `extra` names a vault).
    pub fn start(env: Env, line: &str, llm: &str, config: &str, extra: &[&str]) -> Serve {
        let deaf = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (child, url, metrics_url, stderr) =
            Serve::spawn(&env, line, llm, config, extra, deaf.clone());
        Serve {
            env,
            child,
            url,
            metrics_url,
            stderr,
            deaf,
        }
    }

    /// `kill -9`, then a new server on the same data dir (new ports).
    pub fn kill9_and_restart(&mut self, line: &str, llm: &str, config: &str, extra: &[&str]) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        self.deaf = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (child, url, metrics_url, stderr) =
            Serve::spawn(&self.env, line, llm, config, extra, self.deaf.clone());
        self.child = child;
        self.url = url;
        self.metrics_url = metrics_url;
        self.stderr = stderr;
    }

    fn spawn(
        env: &Env,
        line: &str,
        llm: &str,
        config: &str,
        extra: &[&str],
        deaf: Arc<std::sync::atomic::AtomicBool>,
    ) -> (Child, String, String, Arc<Mutex<Vec<String>>>) {
        let cfg = env.file("serve.toml", config);
        let mut args = vec![
            "serve",
            "--line",
            "--listen",
            "127.0.0.1:0",
            "--metrics-listen",
            "127.0.0.1:0",
            "--config",
            &cfg,
            "--line-api-base",
            line,
            "--endpoint",
            llm,
            "--api",
            "openai",
        ];
        if !extra.contains(&"--model") {
            args.extend_from_slice(&["--model", "tiny-ja"]);
        }
        args.extend_from_slice(extra);
        // The bot never falls back to the bundled sample: a vault or --no-vault is said.
        if !extra.iter().any(|a| *a == "--vault" || *a == "--no-vault") {
            args.push("--no-vault");
        }
        let mut child = env
            .cmd(&args)
            .env("KAKEAI_LINE_CHANNEL_SECRET", SECRET)
            .env("KAKEAI_LINE_ACCESS_TOKEN", TOKEN)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn kakeai serve");
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let (tx, rx) = std::sync::mpsc::channel();
        let err = child.stderr.take().unwrap();
        let keep = stderr.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(err).lines().map_while(Result::ok) {
                for (i, marker) in ["listening on http://", "metrics on http://"]
                    .iter()
                    .enumerate()
                {
                    if let Some(rest) = line.split(marker).nth(1) {
                        let addr = rest.split('/').next().unwrap_or("").to_string();
                        let _ = tx.send((i, addr));
                    }
                }
                keep.lock().unwrap().push(line);
                if deaf.load(Ordering::SeqCst) {
                    return; // the pipe's reading end is dropped here
                }
            }
        });
        let mut addrs = [String::new(), String::new()];
        for _ in 0..2 {
            let (i, a) = rx
                .recv_timeout(Duration::from_secs(60))
                .unwrap_or_else(|_| panic!("serve did not start: {:?}", stderr.lock().unwrap()));
            addrs[i] = a;
        }
        let [addr, metrics] = addrs;
        (
            child,
            format!("http://{addr}"),
            format!("http://{metrics}"),
            stderr,
        )
    }

    pub fn db(&self) -> std::path::PathBuf {
        self.env.data_db()
    }

    /// SIGTERM, then the exit status.
    pub fn terminate(&mut self) -> std::process::ExitStatus {
        let _ = std::process::Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        self.child.wait().unwrap()
    }

    pub async fn post(&self, body: &str, signature: Option<&str>) -> u16 {
        let mut r = reqwest::Client::new()
            .post(format!("{}/webhook", self.url))
            .header("content-type", "application/json")
            .body(body.to_string());
        if let Some(s) = signature {
            r = r.header("x-line-signature", s);
        }
        r.send().await.unwrap().status().as_u16()
    }

    /// Posts `body` signed with the channel secret.
    pub async fn send(&self, body: &str) -> u16 {
        self.post(
            body,
            Some(&kakeai::serve::signature::sign(SECRET, body.as_bytes())),
        )
        .await
    }

    /// As LINE sends: signed, given up after `limit` (then 0, not acknowledged, as for a
    /// connection that could not be made).
    pub async fn send_within(&self, body: &str, limit: Duration) -> u16 {
        let sig = kakeai::serve::signature::sign(SECRET, body.as_bytes());
        let sent = reqwest::Client::new()
            .post(format!("{}/webhook", self.url))
            .header("content-type", "application/json")
            .header("x-line-signature", sig)
            .timeout(limit)
            .body(body.to_string())
            .send()
            .await;
        sent.map(|r| r.status().as_u16()).unwrap_or(0)
    }

    pub async fn metric(&self, name: &str) -> f64 {
        let page = reqwest::get(format!("{}/metrics", self.metrics_url))
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        kakeai::serve::metrics::parse_text(&page)
            .into_iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v)
            .unwrap_or(f64::NAN)
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

static EVENT: AtomicUsize = AtomicUsize::new(0);

/// A fresh webhookEventId (ULID-like, as LINE's).
pub fn event_id() -> String {
    format!("01HSERVETEST{:014}", EVENT.fetch_add(1, Ordering::SeqCst))
}

/// One webhook body holding `events`.
pub fn body(events: &[serde_json::Value]) -> String {
    serde_json::json!({"destination": "Ubot0000000000000000000000000000", "events": events})
        .to_string()
}

/// A text message event as LINE documents it. `source`: ("user", "U…") / ("group", "C…") /
/// ("room", "R…").
pub fn text(id: &str, source: (&str, &str), msg_id: &str, text: &str) -> serde_json::Value {
    let src = match source.0 {
        "group" => {
            serde_json::json!({"type": "group", "groupId": source.1, "userId": "U5f2e0000000000000000000000000001"})
        }
        "room" => {
            serde_json::json!({"type": "room", "roomId": source.1, "userId": "U5f2e0000000000000000000000000001"})
        }
        _ => serde_json::json!({"type": "user", "userId": source.1}),
    };
    serde_json::json!({
        "type": "message",
        "message": {"type": "text", "id": msg_id, "quoteToken": format!("q-{msg_id}"), "text": text},
        "webhookEventId": id,
        "deliveryContext": {"isRedelivery": false},
        "timestamp": kakeai::patterns::stamp::now_ms(),
        "source": src,
        "replyToken": format!("rt-{msg_id}"),
        "mode": "active"
    })
}

/// The fake model: replies stream `line`; judge calls (non-stream) answer per their prompt —
/// seed 002's judgment with `judgment`, the safety L4 with じゃれ合い, the Director's judge
/// with all 4s. Counts seed 002 judgment calls.
pub struct Llm {
    pub server: FakeServer,
    pub judgments: Arc<AtomicUsize>,
}

pub async fn llm(line: &'static [&'static str], judgment: Arc<Mutex<String>>) -> Llm {
    let judgments = Arc::new(AtomicUsize::new(0));
    let count = judgments.clone();
    let server = FakeServer::with(move |req: &Recorded, _| match req.path.as_str() {
        "/v1/models" => Reply::json(
            200,
            r#"{"object":"list","data":[{"id":"tiny-ja","object":"model","owned_by":"llamacpp"}]}"#,
        ),
        _ if is_pii_pass(req) => pii_nothing(req),
        "/v1/chat/completions" if req.json()["stream"] == true => Reply::sse(parts(&sse_events(
            "tiny-ja",
            line,
            "stop",
            line.len() as u32,
        ))),
        "/v1/chat/completions" if req.body.contains("会話への参加判断") => {
            count.fetch_add(1, Ordering::SeqCst);
            Reply::json(200, &openai_reply("tiny-ja", &judgment.lock().unwrap(), 20))
        }
        "/v1/chat/completions" => Reply::json(
            200,
            &openai_reply(
                "tiny-ja",
                r#"{"context_type":"じゃれ合い","confidence":0.9,"reason":"笑いながらのからかい"}"#,
                10,
            ),
        ),
        _ => Reply::json(
            404,
            r#"{"error":{"message":"File Not Found","type":"not_found_error","code":404}}"#,
        ),
    })
    .await;
    Llm { server, judgments }
}

/// Whether `req` is the bot's PII second opinion (its system prompt is kakeai's).
pub fn is_pii_pass(req: &Recorded) -> bool {
    req.path == "/v1/chat/completions"
        && req.json()["messages"][0]["content"] == kakeai::safety::pii::LLM_SYSTEM_PROMPT
}

/// The text the PII second opinion showed the model.
pub fn pii_pass_text(req: &Recorded) -> String {
    let user = req.json()["messages"][1]["content"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    user.split_once('\n')
        .map(|(_, t)| t.to_string())
        .unwrap_or_default()
}

/// The model's answer to the PII second opinion when it finds nothing more: the seed's three
/// lines, the text as it was.
pub fn pii_nothing(req: &Recorded) -> Reply {
    let reply = format!(
        "PII_DETECTED: false\nMASKED_TEXT: {}\nDETECTED_ITEMS: なし",
        pii_pass_text(req)
    );
    Reply::json(200, &openai_reply("tiny-ja", &reply, 12))
}

/// Is this kakeai's leak judge asking (kakeai's own system prompt)?
pub fn is_leak_judge(req: &Recorded) -> bool {
    req.path == "/v1/chat/completions"
        && serde_json::from_str::<serde_json::Value>(&req.body)
            .is_ok_and(|v| v["messages"][0]["content"] == kakeai::vault::judge::SYSTEM)
}

/// The leak judge's answer from a model that sees no leak.
pub fn leak_judge_no() -> Reply {
    Reply::json(200, &openai_reply("tiny-ja", "いいえ", 2))
}

/// A config for tests: a fast checker, no waiting for others.
pub fn fast_config(interval: f64) -> String {
    format!(
        "answer_budget_seconds = 20\n[line_api]\nbackoff_ms = 50\n[response]\ncheck_interval_seconds = {interval}\nmin_wait_seconds = 0\n"
    )
}

pub async fn until<T>(secs: u64, mut f: impl FnMut() -> Option<T>) -> Option<T> {
    let deadline = std::time::Instant::now() + Duration::from_secs(secs);
    loop {
        if let Some(v) = f() {
            return Some(v);
        }
        if std::time::Instant::now() > deadline {
            return None;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// A read-only look at the store while the server runs (WAL allows it).
pub fn query<T>(
    db: &std::path::Path,
    sql: &str,
    f: impl FnMut(&rusqlite::Row) -> rusqlite::Result<T>,
) -> Vec<T> {
    let c = rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
        .unwrap();
    c.busy_timeout(Duration::from_secs(5)).unwrap();
    let mut st = c.prepare(sql).unwrap();
    st.query_map([], f)
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

/// The bundled sample vault's folder in the source tree (a test passes it with --vault).
pub fn sample_vault() -> String {
    format!("{}/assets/vault/sisters", env!("CARGO_MANIFEST_DIR"))
}
