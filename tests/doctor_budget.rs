//! doctor's budget verdict is the run's own: over a generated range of contexts (the model's
//! trained context or num_ctx, 768..8192, and the 1,024-token model that once got "a run would
//! work" and then stopped at turn 1), doctor's ✓ / ! / ✗ agrees with what a real one-turn run
//! (driver, client, the fake Ollama) does to its first line and its retry — sent whole, left
//! parts out (the same counts), or stopped on a context overflow — and the num_ctx doctor
//! advises makes both doctor and the run fit whole.
//!
//! The run's retry comes from the leak review (あゆ says やな's secret, the sample vault's 工房),
//! whose instruction is the one doctor plans with. The fake is Ollama 0.12: its prompt counts,
//! lower than kakeai's first guess, are not learned from (an old Ollama may have cut the
//! prompt), so the retry is budgeted at the ratio of the first attempt, as doctor does.

mod llm_fake;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use kakeai::director::RuleSet;
use kakeai::doctor::{self, Depth, Mark, Setup};
use kakeai::duo::backend::Backend;
use kakeai::duo::driver::{Driver, Notice};
use kakeai::duo::fitting::FitReport;
use kakeai::duo::{DuoConfig, Effect, Exhaustion, RunEnd, RunSpec, Session};
use kakeai::llm::{ApiKind, Client, LlmConfig};
use kakeai::store::{NewRun, Store, StoreHandle};
use kakeai::text::analyzer::fallback::FallbackAnalyzer;
use llm_fake::ollama::{FakeOllama, Spec};

const TOPIC: &str = "灯台";

/// あゆ speaks first, under the sample vault.
fn duo() -> DuoConfig {
    DuoConfig {
        first_speaker: "ayu".into(),
        ..DuoConfig::builtin().unwrap()
    }
}

fn setup() -> Setup {
    Setup {
        rules: RuleSet::builtin().unwrap(),
        duo: duo(),
        work: Some(kakeai::vault::load::sample()),
        topic: TOPIC.into(),
    }
}

/// (the model's trained context, num_ctx in llm.toml).
type Case = (usize, u32);

async fn fake((trained, _): Case) -> FakeOllama {
    FakeOllama::start(Spec {
        version: "0.12.0",
        trained_ctx: trained,
        // Every line says やな's secret: the leak review rejects it, and the turn is retried.
        reply: |_| "姉様、春から海沿いの工房で働くそうですね。つまり引っ越しですね。".into(),
        ..Spec::gemma2()
    })
    .await
}

fn config(url: &str, (_, num_ctx): Case) -> LlmConfig {
    let mut cfg = llm_fake::config(url, Some(ApiKind::Ollama));
    cfg.num_ctx = num_ctx;
    cfg
}

/// doctor's budget line (the quick checks: what a run is budgeted with before it learns).
async fn doctor_budget(url: &str, case: Case) -> doctor::Check {
    let client = Client::new(config(url, case)).unwrap();
    let r = doctor::run(&client, Depth::Quick, Some(&setup()), &mut |_| {}).await;
    r.checks
        .iter()
        .find(|c| c.name == "budget")
        .cloned()
        .unwrap_or_else(|| panic!("no budget line: {:?}", r.checks))
}

/// What the run did to its first turn.
#[derive(Debug, Default)]
struct Ran {
    /// Attempt → what fitting left out of its request (absent: sent whole).
    fitted: BTreeMap<usize, FitReport>,
    /// Attempts that went to the server.
    sent: usize,
    overflowed: Option<usize>,
    end: Option<RunEnd>,
}

impl Ran {
    fn mark(&self) -> Mark {
        if self.overflowed.is_some() {
            Mark::Fail
        } else if self.fitted.is_empty() {
            Mark::Ok
        } else {
            Mark::Warn
        }
    }
}

/// One real one-turn run (two attempts) against the fake.
async fn run_turn(url: &str, case: Case) -> Ran {
    let dir = tempfile::tempdir().unwrap();
    let store = StoreHandle::spawn(Store::open(&dir.path().join("k.db")).unwrap());
    let run_id = store
        .call(|s| {
            s.create_run(&NewRun {
                topic: TOPIC.into(),
                ..NewRun::default()
            })
        })
        .await
        .unwrap();
    let driver = Driver {
        backend: Backend::Live(Client::new(config(url, case)).unwrap()),
        store,
        analyzer: Arc::new(FallbackAnalyzer),
        run_id,
        save_every: Duration::ZERO,
        vault: Some(kakeai::vault::SharedVault::new(
            kakeai::vault::load::sample(),
        )),
    };
    let spec = RunSpec {
        topic: TOPIC.into(),
        max_turns: 1,
        max_attempts: 2,
        exhaustion: Exhaustion::Best,
        judge: false,
    };
    let session = Session::new(spec, duo(), RuleSet::builtin().unwrap());
    let mut ran = Ran::default();
    let end = driver
        .drive(session, None, &mut |n| match n {
            Notice::Fitted { attempt, fit, .. } => {
                ran.fitted.insert(attempt, fit.clone());
            }
            Notice::Effect(Effect::AttemptDone(a)) => ran.sent = ran.sent.max(a.attempt),
            Notice::Effect(Effect::AttemptFailed { attempt, error, .. })
                if kakeai::llm::budget::is_overflow(error) =>
            {
                ran.overflowed = Some(*attempt);
            }
            _ => {}
        })
        .await;
    ran.end = Some(end);
    ran
}

/// The num_ctx a fix advises, if it advises one.
fn advised(fix: &str) -> Option<u32> {
    let (_, rest) = fix.split_once("num_ctx = ")?;
    rest.split(|c: char| !c.is_ascii_digit())
        .next()?
        .parse()
        .ok()
}

/// The contexts: the 1,024-token model with num_ctx 8192, then seeded draws from 768..8192
/// alternating between a small trained context and a small num_ctx.
fn cases() -> Vec<Case> {
    let mut rng = fastrand::Rng::with_seed(7);
    let mut out = vec![(1024, 8192), (8192, 1024)];
    for i in 0..22 {
        let c = rng.usize(768..8192);
        out.push(if i % 2 == 0 {
            (c, 8192)
        } else {
            (8192, c as u32)
        });
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doctors_verdict_is_what_the_run_does_and_its_advice_fits() {
    let mut seen = BTreeMap::new();
    for case in cases() {
        let server = fake(case).await;
        let check = doctor_budget(&server.url, case).await;
        let ran = run_turn(&server.url, case).await;
        let what = format!("{case:?}: {}\nrun: {ran:?}", check.line());
        assert_eq!(check.mark, ran.mark(), "{what}");
        *seen.entry(format!("{:?}", check.mark)).or_insert(0) += 1;
        match check.mark {
            Mark::Fail => assert_eq!(ran.end, Some(RunEnd::Stopped), "{what}"),
            // Nothing overflowed: both attempts went out (the retry is checked too).
            _ => assert_eq!(ran.sent, 2, "{what}"),
        }
        // A ! names what the run left out, attempt by attempt, as the run counts it.
        for (attempt, fit) in &ran.fitted {
            let name = if *attempt == 1 { "first line" } else { "retry" };
            let said = format!("{name}: {}", fit.summary());
            assert!(check.detail.contains(&said), "{what}\nmissing: {said}");
        }
        if check.mark == Mark::Ok {
            continue;
        }
        let fix = check.fix.clone().unwrap_or_default();
        let Some(n) = advised(&fix) else {
            // No num_ctx helps only when the model's own context is too small.
            assert!(fix.contains("no context up to the model's"), "{what}");
            continue;
        };
        let better = (case.0, n);
        let again = doctor_budget(&server.url, better).await;
        assert_eq!(
            again.mark,
            Mark::Ok,
            "{what}\nadvised {n}: {}",
            again.line()
        );
        let ran = run_turn(&server.url, better).await;
        assert_eq!(ran.mark(), Mark::Ok, "advised {n}: {ran:?}");
        // The advice is the least that works (to the next multiple of 256).
        let less = doctor_budget(&server.url, (case.0, n.saturating_sub(256).max(1))).await;
        assert_ne!(less.mark, Mark::Ok, "{what}\n{n} − 256 fits too");
    }
    println!("FIGURE doctor budget verdicts: {seen:?}");
    assert!(seen.len() == 3, "the range meets ✓, ! and ✗: {seen:?}");
}

/// The 1,024-token model: doctor says ✗ (not "a run would work"), and nothing it advises is
/// a num_ctx — neither the budget line nor the context line's note on Ollama's cap.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_1024_token_model_is_a_failure_without_a_num_ctx_to_set() {
    let case = (1024, 8192);
    let server = fake(case).await;
    let client = Client::new(config(&server.url, case)).unwrap();
    let r = doctor::run(&client, Depth::Quick, Some(&setup()), &mut |_| {}).await;
    let lines: Vec<String> = r.checks.iter().map(|c| c.line()).collect();
    assert!(!r.would_run(), "{lines:#?}");
    let find = |n: &str| r.checks.iter().find(|c| c.name == n).unwrap();
    assert_eq!(find("budget").mark, Mark::Fail, "{lines:#?}");
    for name in ["budget", "context"] {
        let fix = find(name).fix.clone().unwrap_or_default();
        assert_eq!(advised(&fix), None, "{name}: {fix}");
    }
    assert_eq!(run_turn(&server.url, case).await.end, Some(RunEnd::Stopped));
}
