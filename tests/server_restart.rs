//! A server restarted mid-run is waited for, not a failed run: against the fake Ollama written
//! from its source (a restarted one has nothing loaded and a load longer than the first-token
//! limit), a call made while it is down waits — visibly, `Client::waiting_for_server` — until
//! it listens again, preloads the model the way the first call did, and answers. A server that
//! never comes back ends in a named timeout; one that was never there fails at once.

#[path = "llm_fake/mod.rs"]
mod llm_fake;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use kakeai::llm::{ApiKind, ChatRequest, Client, LlmError, Message, TimeoutPhase};
use llm_fake::ollama::{FakeOllama, Spec};

mod cli_env;

fn spec() -> Spec {
    Spec {
        // Longer than the first-token limit below: only a preload (under load_ms) gets past it.
        load: Duration::from_millis(1500),
        ..Spec::gemma2()
    }
}

fn client(url: &str, restart_ms: u64) -> Client {
    let mut cfg = llm_fake::config(url, Some(ApiKind::Ollama));
    cfg.model = "gemma2:27b".into();
    cfg.timeouts.first_token_ms = 1000;
    cfg.timeouts.load_ms = 10_000;
    cfg.timeouts.restart_ms = restart_ms;
    Client::new(cfg).unwrap()
}

fn line() -> ChatRequest {
    ChatRequest::line(vec![Message::user("灯台の話をしよう")])
}

/// Watches `client.waiting_for_server()`; the longest wait it saw, in ms.
fn watch(client: &Client) -> (Arc<AtomicU64>, tokio::task::JoinHandle<()>) {
    let seen = Arc::new(AtomicU64::new(0));
    let (c, s) = (client.clone(), seen.clone());
    let task = tokio::spawn(async move {
        loop {
            if let Some(d) = c.waiting_for_server() {
                s.fetch_max(d.as_millis() as u64 + 1, Ordering::Relaxed);
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    });
    (seen, task)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_server_is_waited_for_and_the_model_loaded_again() {
    for down_ms in [550u64, 3000] {
        let first = FakeOllama::start(spec()).await;
        let addr = first.url.trim_start_matches("http://").to_string();
        let client = client(&first.url, 20_000);
        let c = client.stream_chat(&line(), &mut |_| {}).await.unwrap();
        assert!(!c.text.is_empty());
        assert_eq!(first.counts().3, 1, "preloaded at start");
        // The restart: refused for a while, then a fresh server with nothing loaded.
        drop(first);
        let back = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(down_ms)).await;
            FakeOllama::start_at(spec(), &addr).await
        });
        let (waited, w) = watch(&client);
        let mut text = String::new();
        let c = client
            .stream_chat(&line(), &mut |t| text.push_str(t))
            .await
            .unwrap_or_else(|e| panic!("down {down_ms} ms: {e}"));
        w.abort();
        let second = back.await.unwrap();
        assert_eq!(c.text, text.trim(), "one stream's text, not two");
        let (started, aborted, done, preloads) = second.counts();
        assert_eq!(
            (started, aborted, done, preloads),
            (1, 0, 1, 1),
            "down {down_ms} ms: loaded again by a preload, never aborted"
        );
        assert!(
            waited.load(Ordering::Relaxed) > 0,
            "the wait was visible while it lasted"
        );
        assert_eq!(client.waiting_for_server(), None);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_never_comes_back_is_a_named_timeout() {
    let first = FakeOllama::start(spec()).await;
    let client = client(&first.url, 1200);
    client.stream_chat(&line(), &mut |_| {}).await.unwrap();
    drop(first);
    let e = client.chat(&line()).await.unwrap_err();
    assert!(
        matches!(
            e,
            LlmError::Timeout {
                phase: TimeoutPhase::Restart,
                ..
            }
        ),
        "{e:?}"
    );
    assert!(e.to_string().contains("restart_ms"), "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_was_never_there_fails_at_once() {
    // A port nobody listens on: the first call fails with the connection error, no wait.
    let gone = FakeOllama::start(spec()).await;
    let url = gone.url.clone();
    drop(gone);
    let client = client(&url, 60_000);
    let (waited, w) = watch(&client);
    let e = client.stream_chat(&line(), &mut |_| {}).await.unwrap_err();
    w.abort();
    assert!(matches!(e, LlmError::Connect { .. }), "{e:?}");
    assert_eq!(waited.load(Ordering::Relaxed), 0, "never waited");
}

/// `kakeai run --headless` shows a model load on stderr with its elapsed time while it lasts
/// (the events on stdout are unchanged).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn headless_shows_the_load_with_its_elapsed_time() {
    let fake = FakeOllama::start(Spec {
        load: Duration::from_millis(5600),
        ..Spec::gemma2()
    })
    .await;
    let env = cli_env::Env::new();
    let mut c = env.cmd(&[
        "run",
        "--headless",
        "--topic",
        "灯台",
        "--turns",
        "1",
        "--no-judge",
        "--endpoint",
        &fake.url,
        "--model",
        "gemma2:27b",
    ]);
    let out = tokio::task::spawn_blocking(move || c.output().unwrap())
        .await
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    // Said when it starts and again every 5 s while it lasts: the seconds go up.
    let at = |s: &str| err.find(s).unwrap_or_else(|| panic!("no `{s}`: {err}"));
    assert!(
        at("loading gemma2:27b… 0 s") < at("loading gemma2:27b… 5 s"),
        "{err}"
    );
    assert_eq!(fake.counts().3, 1, "one preload");
}

/// A duo run whose server restarts after turn 2 goes on from turn 3: every turn committed and
/// stored, the run completed, the model loaded again by a preload.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_goes_on_from_the_same_turn_after_a_restart() {
    use kakeai::duo::backend::Backend;
    use kakeai::duo::driver::{Driver, Notice};
    use kakeai::duo::{DuoConfig, Effect, Exhaustion, RunEnd, RunSpec, Session};
    use kakeai::store::{NewRun, Store, StoreHandle};

    let first = FakeOllama::start(spec()).await;
    let addr = first.url.trim_start_matches("http://").to_string();
    let client = client(&first.url, 20_000);
    let server = Arc::new(std::sync::Mutex::new(Some(first)));
    let restarted = Arc::new(std::sync::Mutex::new(None));
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
        analyzer: Arc::new(kakeai::text::analyzer::fallback::FallbackAnalyzer),
        run_id,
        save_every: Duration::ZERO,
        vault: None,
    };
    let spec_run = RunSpec {
        topic: "灯台".into(),
        max_turns: 4,
        max_attempts: 1,
        exhaustion: Exhaustion::Best,
        judge: false,
    };
    let session = Session::new(
        spec_run,
        DuoConfig::builtin().unwrap(),
        kakeai::director::RuleSet::builtin().unwrap(),
    );
    let (s2, r2) = (server.clone(), restarted.clone());
    let end = driver
        .drive(session, None, &mut move |n| {
            if let Notice::Effect(Effect::TurnCommitted(t)) = n
                && t.turn == 2
            {
                // The restart: down now, back in 1.2 s with nothing loaded.
                drop(s2.lock().unwrap().take());
                let (addr, r2) = (addr.clone(), r2.clone());
                tokio::spawn(async move {
                    tokio::time::sleep(Duration::from_millis(1200)).await;
                    *r2.lock().unwrap() = Some(FakeOllama::start_at(spec(), &addr).await);
                });
            }
        })
        .await;
    assert_eq!(end, RunEnd::Completed);
    let rec = store.call(move |s| s.load_run(run_id)).await.unwrap();
    let turns: Vec<u32> = rec.turns.iter().map(|t| t.turn).collect();
    assert_eq!(turns, [1, 2, 3, 4]);
    let back = restarted.lock().unwrap().take().expect("restarted");
    assert_eq!(back.counts().3, 1, "preloaded again after the restart");
}
