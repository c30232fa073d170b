//! The workbench's endpoint probe: a server that accepts the connection but never answers is
//! reported within the short probe limit (not after the 60 s first-token limit), `n` does not
//! start a run that could only fail, R probes again, and a missing model says the server
//! answered and lists its models.

#[path = "llm_fake/mod.rs"]
#[allow(unused_imports)]
mod llm_fake;

use std::sync::Arc;
use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use kakeai::director::RuleSet;
use kakeai::duo::DuoConfig;
use kakeai::llm::{ApiKind, LlmConfig};
use kakeai::store::{Store, StoreHandle};
use kakeai::text::analyzer::fallback::FallbackAnalyzer;
use kakeai::tui::app::{App, Command, Conn, UiMsg};
use kakeai::tui::{Runtime, Services};
use llm_fake::{FakeServer, Reply};

mod common;

fn app(conn: Conn) -> App {
    let h = common::tui::header;
    common::tui::app(h(
        "http://127.0.0.1:9",
        "gemma2:27b",
        conn,
        "0123456789ab",
        "/tmp/kakeai.db",
    ))
}

fn key(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE)
}

/// The new-run key (ctrl-n since issue 14: `n` steps through search matches).
fn new_run() -> KeyEvent {
    KeyEvent::new(KeyCode::Char('n'), KeyModifiers::CONTROL)
}

/// Probes `llm` through the runtime and returns the header's answer and how long it took.
async fn probe(llm: LlmConfig) -> (Conn, Duration) {
    let dir = tempfile::tempdir().unwrap();
    let services = Services {
        store: StoreHandle::spawn(Store::open(&dir.path().join("k.db")).unwrap()),
        rules: RuleSet::builtin().unwrap(),
        duo: DuoConfig::builtin().unwrap(),
        llm,
        analyzer: Arc::new(FallbackAnalyzer),
        replay_speed: 1000.0,
        vault: None,
        safety: kakeai::safety::SharedSafety::ready(kakeai::safety::SafetyRules::builtin()),
    };
    let (mut rt, mut rx) = Runtime::new(app(Conn::Probing), services);
    let started = Instant::now();
    rt.probe();
    loop {
        let msg = tokio::time::timeout(Duration::from_secs(10), rx.recv())
            .await
            .expect("the probe answers within 10 s")
            .unwrap();
        rt.app.on_msg(msg);
        if rt.app.header.conn != Conn::Probing {
            return (rt.app.header.conn.clone(), started.elapsed());
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_server_is_reported_after_the_probe_limit() {
    // Accepts, reads the request, and answers only after a minute.
    let server =
        FakeServer::with(|_, _| Reply::json(200, "{}").delay(Duration::from_secs(60))).await;
    let mut cfg = llm_fake::config(&server.url, None);
    cfg.timeouts.first_token_ms = 60_000;
    cfg.timeouts.probe_ms = 400;
    let (conn, took) = probe(cfg).await;
    let Conn::Down(why) = conn else {
        panic!("{conn:?}")
    };
    assert!(
        why.contains("accepted the connection but did not answer"),
        "{why}"
    );
    assert!(why.contains("/api/tags"), "{why}");
    assert!(took < Duration::from_secs(5), "{took:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_model_says_the_server_answered_and_lists_its_models() {
    for api in [ApiKind::Ollama, ApiKind::OpenAi] {
        let server = FakeServer::with(|r, _| match r.path.as_str() {
            "/api/tags" => Reply::json(
                200,
                r#"{"models":[{"name":"qwen2.5:7b","model":"qwen2.5:7b"},{"name":"llama3.2:3b","model":"llama3.2:3b"}]}"#,
            ),
            "/v1/models" => Reply::json(
                200,
                r#"{"object":"list","data":[{"id":"qwen2.5:7b"},{"id":"llama3.2:3b"}]}"#,
            ),
            _ => Reply::json(404, r#"{"error":"not found"}"#),
        })
        .await;
        let (conn, _) = probe(llm_fake::config(&server.url, Some(api))).await;
        let Conn::Answered(why) = conn else {
            panic!("{api}: {conn:?}")
        };
        assert!(
            why.contains("the server answered and has: qwen2.5:7b, llama3.2:3b"),
            "{why}"
        );
        assert!(why.contains("gemma2:27b"), "{why}");
    }
}

#[test]
fn n_does_not_start_a_run_while_the_endpoint_is_not_answering_and_r_probes_again() {
    for conn in [
        Conn::Probing,
        Conn::Down("timed out after 3.0 s waiting for the model list".into()),
        Conn::Answered("model `gemma2:27b` not found".into()),
    ] {
        let mut a = app(conn.clone());
        let cmds = a.on_key(new_run());
        assert!(cmds.is_empty(), "{conn:?}: {cmds:?}");
        assert!(a.modal.is_none(), "{conn:?}: no topic prompt");
        assert!(
            a.status.contains("probing") || a.status.contains("R probes again"),
            "{}",
            a.status
        );
        let cmds = a.on_key(key('R'));
        assert!(matches!(cmds.as_slice(), [Command::Probe]), "{cmds:?}");
        assert_eq!(a.header.conn, Conn::Probing);
    }
    // Connected: n opens the topic prompt.
    let mut a = app(Conn::Up {
        api: "ollama".into(),
    });
    assert!(a.on_key(new_run()).is_empty());
    assert!(a.modal.is_some());
    // After the demo the state is unknown: n probes first.
    let mut a = app(Conn::Demo);
    assert!(matches!(a.on_key(new_run()).as_slice(), [Command::Probe]));
    a.on_msg(UiMsg::Connection(Conn::Up {
        api: "openai".into(),
    }));
    a.on_key(new_run());
    assert!(a.modal.is_some());
}

/// Issue 21: a cold model is a state — the header says "loading gemma2:27b… N s" while the
/// preload waits (the UI task is never blocked: the probe runs on its own task), then
/// connected; the load is never cut short.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cold_model_shows_loading_then_connected() {
    use llm_fake::ollama::{FakeOllama, Spec};
    let fake = FakeOllama::start(Spec {
        load: Duration::from_millis(1500),
        ..Spec::gemma2()
    })
    .await;
    let mut cfg = llm_fake::config(&fake.url, None);
    cfg.timeouts.first_token_ms = 500;
    let dir = tempfile::tempdir().unwrap();
    let services = Services {
        store: StoreHandle::spawn(Store::open(&dir.path().join("k.db")).unwrap()),
        rules: RuleSet::builtin().unwrap(),
        duo: DuoConfig::builtin().unwrap(),
        llm: cfg,
        analyzer: Arc::new(FallbackAnalyzer),
        replay_speed: 1000.0,
        vault: None,
        safety: kakeai::safety::SharedSafety::ready(kakeai::safety::SafetyRules::builtin()),
    };
    let (mut rt, mut rx) = Runtime::new(app(Conn::Probing), services);
    rt.probe();
    let mut saw_loading = false;
    loop {
        let msg = tokio::time::timeout(Duration::from_secs(10), rx.recv())
            .await
            .expect("the probe answers")
            .unwrap();
        rt.app.on_msg(msg);
        match &rt.app.header.conn {
            Conn::Loading { .. } => {
                saw_loading = true;
                // The header while loading, drawn like any frame.
                let backend = ratatui::backend::TestBackend::new(120, 30);
                let mut term = ratatui::Terminal::new(backend).unwrap();
                term.draw(|f| kakeai::tui::render::draw(f, &rt.app))
                    .unwrap();
                let text = term.backend().to_string();
                assert!(text.contains("loading gemma2:27b… 0 s"), "header: {text}");
            }
            Conn::Probing => {}
            other => {
                assert!(matches!(other, Conn::Up { .. }), "{other:?}");
                break;
            }
        }
    }
    assert!(saw_loading);
    let (started, aborted, done, _) = fake.counts();
    assert_eq!((started, aborted, done), (1, 0, 1));
}

/// A vault of two works opened with no `--work` does not load; the workbench then refuses a
/// live run, a chat message and an interview with why and the fix — never a run silently
/// without its leak review — and no request reaches the model.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_run_starts_when_the_vault_did_not_load() {
    let root = tempfile::tempdir().unwrap();
    for w in ["alpha", "beta"] {
        let d = root.path().join(w).join("_ai_control");
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(
            d.join("visibility.yaml"),
            "version: \"1.0\"\ndefault_visibility: 0\n",
        )
        .unwrap();
    }
    let err = kakeai::vault::open(Some(root.path()), None)
        .expect_err("two works and no --work do not load")
        .to_string();
    let server = FakeServer::with(|_, _| Reply::json(200, "{}")).await;
    let dir = tempfile::tempdir().unwrap();
    let services = common::tui::services(
        &dir.path().join("k.db"),
        llm_fake::config(&server.url, Some(ApiKind::Ollama)),
        None,
    );
    let commands = [
        Command::StartLive("川沿いの桜".into()),
        Command::InterviewStart("sample".into()),
    ];
    for cmd in commands {
        let (mut rt, _rx) = Runtime::new(app(Conn::Probing), services_clone(&services));
        rt.app.vault_error = Some(err.clone());
        rt.execute(cmd);
        let said = rt.app.errors.join("\n");
        assert!(said.contains("not started"), "{said}");
        assert!(said.contains("several works"), "{said}");
        assert!(said.contains("--work"), "{said}");
        assert_eq!(rt.app.run.run_id, None);
    }
    // A chat message is refused the same way: typed and sent, it never reaches her.
    let (mut rt, _rx) = Runtime::new(app(Conn::Probing), services_clone(&services));
    rt.app.vault_error = Some(err.clone());
    rt.app.act(kakeai::tui::keymap::Action::Chat);
    for c in "こんにちは".chars() {
        rt.app
            .on_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
    }
    let cmds = rt
        .app
        .on_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    assert!(
        cmds.iter().any(|c| matches!(c, Command::ChatSend { .. })),
        "{cmds:?}"
    );
    for cmd in cmds {
        rt.execute(cmd);
    }
    let said = rt.app.errors.join("\n");
    assert!(
        said.contains("several works") && said.contains("--work"),
        "{said}"
    );
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(
        server
            .requests
            .lock()
            .unwrap()
            .iter()
            .all(|r| !r.path.contains("chat")),
        "no request reached the model"
    );
}

fn services_clone(s: &Services) -> Services {
    Services {
        store: s.store.clone(),
        rules: s.rules.clone(),
        duo: s.duo.clone(),
        llm: s.llm.clone(),
        analyzer: s.analyzer.clone(),
        replay_speed: s.replay_speed,
        vault: s.vault.clone(),
        safety: s.safety.clone(),
    }
}
