//! What the model saw is what kakeai says it saw: a live duo run with the sample vault
//! against the fake Ollama written from Ollama's source (tests/llm_fake/ollama.rs) and a fake
//! llama-server, at several contexts. Every attempt's stored request is compared, field for
//! field, with the body the fake received (messages with their roles, every option), and its
//! fit report with what the sent prompt really lacks (vault level 3 left out ⇔ the full world
//! is not in the sent text). The run says when it fitted, once per request.

#[path = "llm_fake/mod.rs"]
mod llm_fake;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use kakeai::director::RuleSet;
use kakeai::duo::backend::Backend;
use kakeai::duo::driver::{Driver, Notice};
use kakeai::duo::{DuoConfig, Exhaustion, RunEnd, RunSpec, Session};
use kakeai::llm::{ApiKind, Client};
use kakeai::store::{NewRun, Store, StoreHandle};
use kakeai::text::analyzer::fallback::FallbackAnalyzer;
use llm_fake::ollama::{FakeOllama, Spec};
use llm_fake::{FakeServer, Recorded, Reply, parts, sse_events};
use serde_json::Value;

struct Ran {
    end: RunEnd,
    /// (turn, attempt, stored request) in attempt order.
    stored: Vec<(u32, u32, Value)>,
    /// Fit notices: (turn, attempt, vault sections left out).
    fitted: Vec<(usize, usize, usize)>,
    warnings: Vec<String>,
}

/// A 4-turn live run (one attempt a turn, no judge) with the sample vault.
async fn run(client: Client) -> Ran {
    let dir = tempfile::tempdir().unwrap();
    let store = StoreHandle::spawn(Store::open(&dir.path().join("k.db")).unwrap());
    let run_id = store
        .call(|s| {
            s.create_run(&NewRun {
                topic: "灯台".into(),
                ..NewRun::default()
            })
        })
        .await
        .unwrap();
    let driver = Driver {
        backend: Backend::Live(client),
        store: store.clone(),
        analyzer: Arc::new(FallbackAnalyzer),
        run_id,
        save_every: Duration::ZERO,
        vault: Some(kakeai::vault::SharedVault::new(
            kakeai::vault::load::sample(),
        )),
    };
    let spec = RunSpec {
        topic: "灯台".into(),
        max_turns: 4,
        max_attempts: 1,
        exhaustion: Exhaustion::Best,
        judge: false,
    };
    let session = Session::new(
        spec,
        DuoConfig::builtin().unwrap(),
        RuleSet::builtin().unwrap(),
    );
    let seen = Arc::new(Mutex::new((Vec::new(), Vec::new())));
    let s2 = seen.clone();
    let end = driver
        .drive(session, None, &mut move |n| match n {
            Notice::Fitted { turn, attempt, fit } => {
                let v = fit.vault.values().sum();
                s2.lock().unwrap().0.push((turn, attempt, v));
            }
            Notice::Warning(w) => s2.lock().unwrap().1.push(w),
            Notice::StoreError(e) => panic!("store error: {e}"),
            _ => {}
        })
        .await;
    let rec = store.call(move |s| s.load_run(run_id)).await.unwrap();
    let mut stored = Vec::new();
    for a in &rec.attempts {
        let id = a.id;
        let r = store.call(move |s| s.request_of(id)).await.unwrap();
        stored.push((
            a.turn,
            a.attempt,
            r.expect("every attempt keeps its request"),
        ));
    }
    let (fitted, warnings) = seen.lock().unwrap().clone();
    Ran {
        end,
        stored,
        fitted,
        warnings,
    }
}

/// The stored request is the wire body: the same messages (roles and text), and as options
/// exactly the body's other fields — none missing, none added.
fn assert_same(stored: &Value, wire: &Value, url: &str, what: &str) {
    assert_eq!(stored["messages"], wire["messages"], "{what}: messages");
    let opts = stored["options"].as_object().expect("options object");
    let body = wire.as_object().unwrap();
    for (k, v) in body {
        if k != "messages" {
            assert_eq!(opts.get(k), Some(v), "{what}: field {k}");
        }
    }
    assert_eq!(opts.len(), body.len() - 1, "{what}: no field added");
    assert_eq!(stored["url"], url, "{what}: url");
}

/// The fit report agrees with the sent text: level 3 reported left out exactly when the
/// speaker's full world is absent from what was sent.
fn assert_fit_true(stored: &Value, what: &str) {
    let work = kakeai::vault::load::sample();
    let scene = DuoConfig::builtin().unwrap().world;
    let sent: String = stored["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["content"].as_str().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n");
    let full_in = ["yana", "ayu"].iter().any(|s| {
        let w = kakeai::vault::shared::worlds(&work, &scene, &[s])
            .remove(*s)
            .unwrap();
        sent.contains(&w)
    });
    let l3 = stored["fit"]["vault"]["3"].as_u64().unwrap_or(0);
    assert_eq!(
        l3 > 0,
        !full_in,
        "{what}: fit {} vs sent text",
        stored["fit"]
    );
}

fn ollama_client(url: &str, num_ctx: u32) -> Client {
    let mut cfg = llm_fake::config(url, Some(ApiKind::Ollama));
    cfg.model = "gemma2:27b".into();
    cfg.num_ctx = num_ctx;
    cfg.max_tokens = 128;
    Client::new(cfg).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ollama_stored_requests_are_the_bodies_sent_at_every_context() {
    let mut lost_somewhere = false;
    for num_ctx in [1536u32, 2048, 3072, 8192] {
        let fake = FakeOllama::start(Spec::gemma2()).await;
        let r = run(ollama_client(&fake.url, num_ctx)).await;
        assert_eq!(r.end, RunEnd::Completed, "num_ctx {num_ctx}");
        let wire: Vec<Value> = fake
            .state
            .lock()
            .unwrap()
            .requests
            .iter()
            .filter(|(_, p, b)| {
                p == "/api/chat" && b["messages"].as_array().is_some_and(|m| !m.is_empty())
            })
            .map(|(_, _, b)| b.clone())
            .collect();
        assert_eq!(
            wire.len(),
            r.stored.len(),
            "num_ctx {num_ctx}: one request an attempt"
        );
        for ((turn, attempt, stored), body) in r.stored.iter().zip(&wire) {
            let what = format!("num_ctx {num_ctx} turn {turn}.{attempt}");
            assert_same(stored, body, &format!("{}/api/chat", fake.url), &what);
            assert_eq!(stored["options"]["options"]["num_ctx"], num_ctx);
            assert_fit_true(stored, &what);
            lost_somewhere |= stored["fit"]["vault"]["3"].as_u64().unwrap_or(0) > 0;
        }
        // One notice per request that left something out, and only for those.
        let reported = r
            .stored
            .iter()
            .filter(|(_, _, s)| {
                s["fit"] != serde_json::json!({"history": 0, "vault": {}, "guidance": 0})
            })
            .count();
        assert_eq!(
            r.fitted.len(),
            reported,
            "num_ctx {num_ctx}: {:?}",
            r.fitted
        );
        if num_ctx == 8192 {
            assert!(
                r.fitted.iter().all(|f| f.2 == 0),
                "the whole vault fits 8192"
            );
            assert!(r.warnings.is_empty());
        }
    }
    assert!(
        lost_somewhere,
        "some context is small enough to drop level 3"
    );
}

async fn llama(ctx: usize) -> FakeServer {
    FakeServer::with(move |r: &Recorded, _| match r.path.as_str() {
        "/tokenize" => {
            let n = r.json()["content"].as_str().unwrap_or("").chars().count() * 2;
            let ids: Vec<u32> = (0..n as u32).collect();
            Reply::json(200, &serde_json::json!({ "tokens": ids }).to_string())
        }
        "/v1/chat/completions" => {
            let chars: usize = r.json()["messages"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| m["content"].as_str().unwrap_or("").chars().count())
                .sum();
            let tokens = chars * 2;
            if tokens > ctx {
                return Reply::json(
                    400,
                    &format!(
                        r#"{{"error":{{"code":400,"message":"request ({tokens} tokens) exceeds the available context size ({ctx} tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":{tokens},"n_ctx":{ctx}}}}}"#
                    ),
                );
            }
            Reply::sse(parts(&sse_events(
                "smollm2",
                &["わ！", "この坂、", "風が", "気持ちいい", "じゃん！"],
                "stop",
                5,
            )))
        }
        _ => Reply::json(
            404,
            r#"{"error":{"code":404,"message":"File Not Found","type":"not_found_error"}}"#,
        ),
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openai_compatible_stored_requests_are_the_bodies_sent_and_a_lost_vault_is_said_once() {
    for ctx in [2600usize, 4000, 64_000] {
        let server = llama(ctx).await;
        let mut cfg = llm_fake::config(&server.url, Some(ApiKind::OpenAi));
        cfg.model = "smollm2".into();
        cfg.num_ctx = ctx as u32;
        cfg.max_tokens = 100;
        let r = run(Client::new(cfg).unwrap()).await;
        let wire: Vec<(String, Value)> = server
            .recorded()
            .iter()
            .filter(|q| q.path == "/v1/chat/completions")
            .map(|q| (q.path.clone(), q.json()))
            .collect();
        // A refused request is resent fitted again: the stored one is the last one sent.
        assert!(wire.len() >= r.stored.len());
        for (turn, attempt, stored) in &r.stored {
            let what = format!("ctx {ctx} turn {turn}.{attempt}");
            let body = wire
                .iter()
                .rev()
                .map(|(_, b)| b)
                .find(|b| b["messages"] == stored["messages"])
                .unwrap_or_else(|| panic!("{what}: stored messages were never sent"));
            assert_same(
                stored,
                body,
                &format!("{}/v1/chat/completions", server.url),
                &what,
            );
            assert_fit_true(stored, &what);
        }
        let lost = r
            .stored
            .iter()
            .filter(|(_, _, s)| s["fit"]["vault"]["3"].as_u64().unwrap_or(0) > 0)
            .count();
        if r.end == RunEnd::Completed && lost == r.stored.len() && lost >= 3 {
            assert_eq!(
                r.warnings.len(),
                1,
                "ctx {ctx}: said once: {:?}",
                r.warnings
            );
            assert!(r.warnings[0].contains("num_ctx"));
        } else if lost == 0 {
            assert!(r.warnings.is_empty(), "ctx {ctx}");
        }
    }
}

/// The ratio a line's prompt is budgeted with is learned from line replies only: a judge
/// prompt that tokenizes at another ratio (here 0.5 vs 2 tokens a character) teaches the
/// judge's own ratio and leaves the lines' one as it was.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_judge_ratio_never_steers_the_lines_budget() {
    use kakeai::llm::{ChatRequest, Message, ResponseFormat};
    let server = FakeServer::with(|r: &Recorded, _| {
        let body = r.json();
        let chars: usize = body["messages"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|m| m["content"].as_str().unwrap_or("").chars().count())
                    .sum()
            })
            .unwrap_or(0);
        let judge = body.get("response_format").is_some();
        let prompt = if judge { chars / 2 } else { chars * 2 };
        Reply::json(
            200,
            &serde_json::json!({
                "choices": [{"finish_reason": "stop", "index": 0,
                             "message": {"role": "assistant", "content": "{\"ok\":true}"}}],
                "model": "m", "object": "chat.completion",
                "usage": {"completion_tokens": 3, "prompt_tokens": prompt,
                          "total_tokens": prompt + 3},
            })
            .to_string(),
        )
    })
    .await;
    let client = Client::new(llm_fake::config(&server.url, Some(ApiKind::OpenAi))).unwrap();
    let text = "灯台の話をしよう。".repeat(40);
    client
        .chat(&ChatRequest::line(vec![Message::user(text.clone())]))
        .await
        .unwrap();
    let line = client.ratio().tokens_per_char;
    assert!((line - 2.0).abs() < 0.01, "{line}");
    for _ in 0..3 {
        client
            .chat(&ChatRequest::judge(
                vec![Message::user(text.clone())],
                ResponseFormat::Json,
            ))
            .await
            .unwrap();
    }
    assert_eq!(
        client.ratio().tokens_per_char,
        line,
        "the lines' ratio is untouched"
    );
    let judge = client.judge_ratio();
    assert!(
        judge.learned && (judge.tokens_per_char - 0.5).abs() < 0.01,
        "{judge:?}"
    );
}

mod cli_env;

/// Headless, as a user runs it: at a small context the `fitted` events carry what was left out
/// (history turns, vault sections by level, guidance) once per request that left something out,
/// their counts are the stored request's fit report, and the run's HTML report counts them and
/// warns of the lost vault sections; at a context the whole prompt fits, no event and no warning.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn headless_fitted_events_and_the_report_say_what_was_left_out() {
    for (num_ctx, small) in [(1536u32, true), (8192, false)] {
        let fake = FakeOllama::start(Spec::gemma2()).await;
        let env = cli_env::Env::new();
        let cfg = env.dir.path().join("config");
        std::fs::create_dir_all(&cfg).unwrap();
        std::fs::write(
            cfg.join("llm.toml"),
            format!("num_ctx = {num_ctx}\nmax_tokens = 128\nretry_backoff_ms = 5\n"),
        )
        .unwrap();
        let mut c = env.cmd(&[
            "run",
            "--headless",
            "--topic",
            "灯台",
            "--turns",
            "4",
            "--attempts",
            "1",
            "--no-judge",
            "--endpoint",
            &fake.url,
            "--model",
            "gemma2:27b",
            "--api",
            "ollama",
        ]);
        let out = tokio::task::spawn_blocking(move || c.output().unwrap())
            .await
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{err}");
        let ev: Vec<Value> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        let fitted: Vec<&Value> = ev.iter().filter(|e| e["event"] == "fitted").collect();
        let store = Store::open(&env.data_db()).unwrap();
        let rec = store.load_run(1).unwrap();
        let mut left_out = 0;
        for a in &rec.attempts {
            let fit = store.request_of(a.id).unwrap().unwrap()["fit"].clone();
            if fit == serde_json::json!({"history": 0, "vault": {}, "guidance": 0}) {
                continue;
            }
            left_out += 1;
            let e = fitted
                .iter()
                .find(|e| e["turn"] == a.turn && e["attempt"] == a.attempt)
                .unwrap_or_else(|| panic!("no fitted event for {}.{}: {ev:?}", a.turn, a.attempt));
            for key in ["history", "vault", "guidance"] {
                assert_eq!(
                    e[key], fit[key],
                    "{num_ctx}: {key} of {}.{}",
                    a.turn, a.attempt
                );
            }
        }
        assert_eq!(
            fitted.len(),
            left_out,
            "{num_ctx}: one event per request fitted"
        );
        assert_eq!(left_out > 0, small, "{num_ctx}: {fitted:?}");
        let html = env.dir.path().join("r.html");
        let out = env.run(&["report", "--run", "1", "--out", html.to_str().unwrap()]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let page = std::fs::read_to_string(&html).unwrap();
        let n = rec.attempts.len();
        let said = format!("{left_out} of {n} requests left something out");
        assert!(page.contains(&said), "{num_ctx}: no `{said}` in the report");
        assert_eq!(
            page.contains("were sent without some vault sections"),
            small,
            "{num_ctx}"
        );
    }
}
