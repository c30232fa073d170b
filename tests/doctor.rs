//! `kakeai doctor` against the fake Ollama written from Ollama's source: every check ✓ on a
//! good server (< 2 s once loaded — the figure is printed, not asserted), ✗ with the fix when
//! the model is missing or the server is down, exit 0 only when a run would work.

mod llm_fake;

use std::time::Duration;

use kakeai::doctor::{self, Depth, Mark};
use kakeai::llm::{ApiKind, Client};
use llm_fake::ollama::{FakeOllama, Spec};

async fn report(url: &str, model: &str, depth: Depth) -> doctor::Report {
    let mut cfg = llm_fake::config(url, None);
    cfg.model = model.into();
    cfg.embed_model = Some("nomic-embed-text".into());
    let client = Client::new(cfg).unwrap();
    let t = std::time::Instant::now();
    doctor::run(&client, depth, &mut |s| {
        println!("step {s} at {:?}", t.elapsed())
    })
    .await
}

fn lines(r: &doctor::Report) -> String {
    r.checks
        .iter()
        .map(|c| c.line())
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test]
async fn a_good_server_passes_every_check_quickly_once_loaded() {
    let fake = FakeOllama::start(Spec {
        load: Duration::from_millis(300),
        ..Spec::gemma2()
    })
    .await;
    let cold = report(&fake.url, "gemma2:27b", Depth::Full).await;
    let warm = report(&fake.url, "gemma2:27b", Depth::Full).await;
    println!("{}", lines(&warm));
    println!(
        "FIGURE doctor: cold {:?} (300 ms load), loaded {:?}",
        cold.elapsed, warm.elapsed
    );
    assert!(warm.would_run(), "{}", lines(&warm));
    let names: Vec<&str> = warm.checks.iter().map(|c| c.name).collect();
    for name in [
        "endpoint",
        "api",
        "version",
        "model",
        "context",
        "system",
        "load",
        "tokens/char",
        "embeddings",
        "judge",
        "PII check",
    ] {
        assert!(names.contains(&name), "{name} missing: {names:?}");
    }
    // The PII second opinion is timed against the LINE and chat budgets.
    let pii = warm.checks.iter().find(|c| c.name == "PII check").unwrap();
    assert!(
        pii.mark == Mark::Ok && pii.detail.contains("budgets: LINE 3.0 s, chat 5.0 s"),
        "{}",
        pii.line()
    );
    let ratio = warm
        .checks
        .iter()
        .find(|c| c.name == "tokens/char")
        .unwrap();
    let measured: f64 = ratio.detail.split(' ').next().unwrap().parse().unwrap();
    assert!(
        (0.55..0.65).contains(&measured),
        "the fake's 0.6: {}",
        ratio.detail
    );
    let system = warm.checks.iter().find(|c| c.name == "system").unwrap();
    assert!(
        system.detail.contains("`system` message"),
        "{}",
        system.detail
    );
    assert_eq!(fake.counts().1, 0, "no load aborted");
}

#[tokio::test]
async fn a_missing_model_is_a_failure_with_the_models_and_the_pull() {
    let fake = FakeOllama::start(Spec::gemma2()).await;
    let r = report(&fake.url, "gemma2:9b", Depth::Full).await;
    assert!(!r.would_run());
    assert!(r.model_missing());
    let model = r.first_failure().unwrap();
    assert!(model.detail.contains("gemma2:27b"), "{}", model.line());
    assert!(
        model
            .fix
            .as_deref()
            .unwrap()
            .contains("ollama pull gemma2:9b"),
        "{}",
        model.line()
    );
    // Case does not matter to Ollama, nor to doctor.
    assert!(
        report(&fake.url, "GEMMA2:27b", Depth::Quick)
            .await
            .would_run()
    );
}

#[tokio::test]
async fn a_down_server_fails_and_nothing_after_it_counts_as_passed() {
    let r = report("http://127.0.0.1:9", "gemma2:27b", Depth::Full).await;
    assert!(!r.would_run());
    assert!(
        r.checks.iter().all(|c| c.mark == Mark::Fail),
        "{}",
        lines(&r)
    );
    assert!(r.checks[0].fix.as_deref().unwrap().contains("ollama serve"));
}

#[tokio::test]
async fn an_old_ollama_and_a_capped_num_ctx_are_warnings_with_fixes() {
    let fake = FakeOllama::start(Spec {
        version: "0.12.0",
        ..Spec::gemma2()
    })
    .await;
    let mut cfg = llm_fake::config(&fake.url, Some(ApiKind::Ollama));
    cfg.num_ctx = 16384;
    let client = Client::new(cfg).unwrap();
    let r = doctor::run(&client, Depth::Quick, &mut |_| {}).await;
    let find = |n: &str| r.checks.iter().find(|c| c.name == n).unwrap().clone();
    assert_eq!(find("version").mark, Mark::Warn, "{}", lines(&r));
    let ctx = find("context");
    assert_eq!(ctx.mark, Mark::Warn);
    assert!(ctx.fix.unwrap().contains("num_ctx = 8192"));
    assert!(r.would_run(), "warnings only: {}", lines(&r));
}

/// `kakeai doctor --endpoint URL --model M`, with an empty config dir.
async fn doctor_cli(url: &str, model: &str) -> (Option<i32>, String) {
    let (url, model) = (url.to_string(), model.to_string());
    tokio::task::spawn_blocking(move || {
        let dir = tempfile::tempdir().unwrap();
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_kakeai"))
            .args(["doctor", "--endpoint", &url, "--model", &model])
            .env("KAKEAI_CONFIG_DIR", dir.path())
            .output()
            .unwrap();
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stdout).into_owned(),
        )
    })
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cli_exits_0_only_when_a_run_would_work() {
    let fake = FakeOllama::start(Spec::gemma2()).await;
    let (code, out) = doctor_cli(&fake.url, "gemma2:27b").await;
    assert!(out.contains("✓ model"), "{out}");
    // The chat model cannot embed on this fake: a warning with the fix, not a failure.
    assert!(out.contains("! embeddings"), "{out}");
    assert!(out.contains("nomic-embed-text"), "{out}");
    assert_eq!(code, Some(0), "{out}");
    let (code, out) = doctor_cli(&fake.url, "gemma2:9b").await;
    assert!(out.contains("✗ model"), "{out}");
    assert!(out.contains("ollama pull gemma2:9b"), "{out}");
    assert_eq!(code, Some(1), "{out}");
}
