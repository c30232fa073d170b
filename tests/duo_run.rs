//! A whole duo run through the real driver, client and store against a fake Ollama that
//! streams NDJSON like the real one: retries with guidance, the judge (fenced JSON, prose,
//! re-ask), WARN carried to the next turn, state in SQLite, and an endpoint dying mid-run.

#[path = "llm_fake/mod.rs"]
mod llm_fake;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use kakeai::director::{RuleSet, Status};
use kakeai::duo::backend::Backend;
use kakeai::duo::driver::{Driver, Notice};
use kakeai::duo::{DuoConfig, Effect, Event, Exhaustion, RunEnd, RunSpec, Session};
use kakeai::llm::{ApiKind, Client};
use kakeai::store::{AttemptState, NewRun, RunStatus, Store, StoreHandle};
use kakeai::text::analyzer::fallback::FallbackAnalyzer;
use llm_fake::{FakeServer, Recorded, Reply, ollama_lines, ollama_reply, parts};

const MODEL: &str = "gemma2:27b";

/// Lines for the sisters, in request order: やな's first try uses 姉様 (RETRY), then a good
/// line; あゆ answers; やな's third-turn line is scattered (WARN, carried to あゆ).
const LINES: [&str; 5] = [
    "姉様、わかりました。そうですね。",
    "わ！福引の列、すっごい長いね！",
    "福引の一等は温泉旅行だそうですよ。並ぶ価値はありそうですね。",
    "ほんと？温泉かぁ。ガラガラ回したいな。商店街もにぎやかだね。",
    "はい、ガラガラの一等が温泉旅行ですね。当たるといいですね。",
];

/// Judge replies in request order.
const JUDGES: [&str; 5] = [
    "```json\n{\"frame\": 5, \"roleplay\": 4, \"connection\": 4, \"density\": 4, \"naturalness\": 5, \"reason\": \"自然です\"}\n```",
    "とても良い発言だと思います。",
    "採点: 良い",
    "{\"frame\": 4, \"roleplay\": 4, \"connection\": 4, \"density\": 4, \"naturalness\": 4, \"reason\": \"相手の話を受けている\"}",
    "{\"frame\": 4, \"roleplay\": 5, \"connection\": 4, \"density\": 4, \"naturalness\": 4}",
];

struct Script {
    lines: Vec<&'static str>,
    judges: Vec<&'static str>,
    /// After this many chat streams, every request fails with 500.
    die_after: usize,
    /// Attempts per turn.
    attempts: usize,
    /// Chat streams (by index) that end with done_reason "length".
    cut: Vec<usize>,
}

async fn fake_ollama(script: Script) -> FakeServer {
    let (l, j) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    FakeServer::with(move |req: &Recorded, _| {
        if req.path == "/api/tags" {
            return Reply::json(
                200,
                &format!(r#"{{"models":[{{"name":"{MODEL}","model":"{MODEL}"}}]}}"#),
            );
        }
        let body = req.json();
        if body.get("format").is_some() {
            let i = j.fetch_add(1, Ordering::SeqCst);
            let text = script.judges.get(i).copied().unwrap_or("{}");
            return Reply::json(200, &ollama_reply(MODEL, text, 30));
        }
        let i = l.fetch_add(1, Ordering::SeqCst);
        if i >= script.die_after {
            return Reply::json(500, r#"{"error":"llama runner process has terminated"}"#);
        }
        let text = script.lines.get(i).copied().unwrap_or("わ！");
        // Two characters per NDJSON line, each line its own network write.
        let chars: Vec<char> = text.chars().collect();
        let deltas: Vec<String> = chars.chunks(2).map(|c| c.iter().collect()).collect();
        let refs: Vec<&str> = deltas.iter().map(String::as_str).collect();
        let reason = if script.cut.contains(&i) {
            "length"
        } else {
            "stop"
        };
        Reply::ndjson(parts(&ollama_lines(
            MODEL,
            &refs,
            reason,
            refs.len() as u32,
        )))
    })
    .await
}

struct Ran {
    end: RunEnd,
    effects: Vec<String>,
    tokens: usize,
    run_id: i64,
    store: StoreHandle,
    server: FakeServer,
    _dir: tempfile::TempDir,
}

async fn run(script: Script, turns: usize, judge: bool) -> Ran {
    run_with(script, turns, judge, |_, _| {}).await
}

/// A run under the bundled sample vault (its leak review on).
async fn run_in_vault(script: Script, turns: usize) -> Ran {
    run_full(
        script,
        turns,
        false,
        |_, _| {},
        Some(kakeai::vault::SharedVault::new(kakeai::vault::sample())),
    )
    .await
}

/// `control(effect, sender)` may steer the run like a reviewer would.
async fn run_with(
    script: Script,
    turns: usize,
    judge: bool,
    control: impl Fn(&Effect, &tokio::sync::mpsc::UnboundedSender<Event>) + Send + 'static,
) -> Ran {
    run_full(script, turns, judge, control, None).await
}

async fn run_full(
    script: Script,
    turns: usize,
    judge: bool,
    control: impl Fn(&Effect, &tokio::sync::mpsc::UnboundedSender<Event>) + Send + 'static,
    vault: Option<Arc<kakeai::vault::SharedVault>>,
) -> Ran {
    let attempts = script.attempts;
    let server = fake_ollama(script).await;
    let dir = tempfile::tempdir().unwrap();
    let store = StoreHandle::spawn(Store::open(&dir.path().join("kakeai.db")).unwrap());
    let rules = RuleSet::builtin().unwrap();
    let run_id = store
        .call(|s| {
            s.create_run(&NewRun {
                topic: "商店街の福引".into(),
                ..NewRun::default()
            })
        })
        .await
        .unwrap();
    let mut cfg = llm_fake::config(&server.url, Some(ApiKind::Ollama));
    cfg.model = MODEL.into();
    let driver = Driver {
        backend: Backend::Live(Client::new(cfg).unwrap()),
        store: store.clone(),
        analyzer: Arc::new(FallbackAnalyzer),
        run_id,
        save_every: Duration::ZERO,
        vault,
    };
    let spec = RunSpec {
        topic: "商店街の福引".into(),
        max_turns: turns,
        max_attempts: attempts,
        exhaustion: Exhaustion::Best,
        judge,
    };
    let session = Session::new(spec, DuoConfig::builtin().unwrap(), rules);
    let log = Arc::new(Mutex::new((Vec::new(), 0usize)));
    let l2 = log.clone();
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let mut tx = Some(tx);
    let end = driver
        .drive(session, Some(rx), &mut move |n| {
            let mut g = l2.lock().unwrap();
            match n {
                Notice::Token { .. } => g.1 += 1,
                Notice::Effect(e) => {
                    g.0.push(describe(e));
                    if let Some(t) = &tx {
                        control(e, t);
                    }
                    // Closing the control channel lets the driver return once the run is done.
                    if matches!(e, Effect::RunDone { .. }) {
                        tx = None;
                    }
                }
                Notice::StoreError(e) => panic!("store error: {e}"),
                Notice::Fitted { .. } | Notice::Warning(_) => {}
            }
        })
        .await;
    let (effects, tokens) = log.lock().unwrap().clone();
    Ran {
        end,
        effects,
        tokens,
        run_id,
        store,
        server,
        _dir: dir,
    }
}

fn describe(e: &Effect) -> String {
    match e {
        Effect::TurnStarted { turn, speaker } => format!("start {turn} {speaker}"),
        Effect::AttemptDone(a) => format!("done {}.{} {}", a.turn, a.attempt, a.verdict.status),
        Effect::TurnCommitted(t) => format!("commit {}.{} {}", t.turn, t.attempt, t.verdict.status),
        Effect::RunDone { status, .. } => format!("end {}", status.as_str()),
        Effect::AttemptFailed { turn, attempt, .. } => format!("failed {turn}.{attempt}"),
        _ => String::new(),
    }
}

fn significant(effects: &[String]) -> Vec<&str> {
    effects
        .iter()
        .filter(|s| !s.is_empty())
        .map(String::as_str)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_retries_judges_and_stores_every_step() {
    let r = run(
        Script {
            lines: LINES.to_vec(),
            judges: JUDGES.to_vec(),
            die_after: usize::MAX,
            attempts: 3,
            cut: Vec::new(),
        },
        4,
        true,
    )
    .await;
    assert_eq!(r.end, RunEnd::Completed);
    assert_eq!(
        significant(&r.effects),
        [
            "start 1 yana",
            "done 1.1 RETRY",
            "done 1.2 PASS",
            "commit 1.2 PASS",
            "start 2 ayu",
            "done 2.1 UNSCORED",
            "commit 2.1 UNSCORED",
            "start 3 yana",
            "done 3.1 WARN",
            "commit 3.1 WARN",
            "start 4 ayu",
            "done 4.1 PASS",
            "commit 4.1 PASS",
            "end completed",
        ]
    );
    assert!(r.tokens > 20, "tokens were streamed: {}", r.tokens);

    let reqs = r.server.recorded();
    let chats: Vec<serde_json::Value> = reqs
        .iter()
        .filter(|q| q.path == "/api/chat")
        .map(Recorded::json)
        .collect();
    let (lines, judges): (Vec<_>, Vec<_>) = chats.iter().partition(|b| b.get("format").is_none());
    assert_eq!(lines.len(), 5);
    // The static RETRY skipped the judge: 4 judged attempts + 1 re-ask.
    assert_eq!(judges.len(), 5);
    // Gemma has no system role: the persona is folded into the first user message.
    for b in &lines {
        let msgs = b["messages"].as_array().unwrap();
        assert!(msgs.iter().all(|m| m["role"] != "system"));
        assert!(
            msgs[0]["content"]
                .as_str()
                .unwrap()
                .contains("【キャラクター設定】")
        );
        assert_eq!(b["options"]["num_ctx"], 8192);
        assert_eq!(b["stream"], true);
    }
    // The retry carries the reason; the WARN of turn 3 steers turn 4.
    let last_user = |b: &serde_json::Value| {
        b["messages"].as_array().unwrap().last().unwrap()["content"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert!(
        last_user(lines[1]).contains("姉様"),
        "{}",
        last_user(lines[1])
    );
    assert!(!last_user(lines[2]).contains("前回の案は採用されませんでした"));
    // The WARN of turn 3 is a critique of やな's line: it waits for her next turn, not あゆ's.
    assert!(
        !last_user(lines[4]).contains("あなたの前の発言"),
        "{}",
        last_user(lines[4])
    );
    // Judge calls ask for JSON by schema at a low temperature.
    assert!(judges[0]["format"]["properties"]["frame"].is_object());
    assert!(judges[0]["options"]["temperature"].as_f64().unwrap() <= 0.3);

    let rec = r.store.call(move |s| s.load_run(r.run_id)).await.unwrap();
    assert_eq!(rec.run.status, RunStatus::Completed);
    assert_eq!(rec.turns.len(), 4);
    assert_eq!(rec.attempts.len(), 5);
    // Every attempt keeps the request it sent (issue 14 §4): the same last message the server
    // got, and the options.
    for (a, wire) in rec.attempts.iter().zip(&lines) {
        let id = a.id;
        let kept = r
            .store
            .call(move |s| s.request_of(id))
            .await
            .unwrap()
            .expect("request kept");
        assert_eq!(kept["messages"], wire["messages"], "the messages as sent");
        assert_eq!(kept["options"]["options"]["num_ctx"], 8192);
        assert_eq!(kept["options"]["model"], MODEL);
    }
    assert!(rec.attempts.iter().all(|a| a.state == AttemptState::Done));
    let first = &rec.attempts[0];
    assert_eq!(
        (first.turn, first.attempt, first.status),
        (1, 1, Some(Status::Retry))
    );
    assert_eq!(first.text.as_deref(), Some(LINES[0]));
    assert!(first.judge.is_none());
    let second = &rec.attempts[1];
    assert!(second.guidance.as_deref().unwrap().contains("姉様"));
    assert_eq!(second.judge.as_ref().unwrap()["scores"]["frame"], 5.0);
    assert!(second.first_token_ms.is_some());
    // UNSCORED keeps both raw replies for the reviewer.
    let unscored = &rec.attempts[2];
    assert_eq!(unscored.status, Some(Status::Unscored));
    let raw = unscored.judge_raw.as_deref().unwrap();
    assert!(
        raw.contains("とても良い発言") && raw.contains("採点: 良い"),
        "{raw}"
    );
    assert_eq!(rec.turns[0].attempt_id, Some(second.id));
    assert!(rec.turns.iter().all(|t| t.hook_depth.is_some()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endpoint_dying_mid_run_fails_the_run_and_keeps_what_was_committed() {
    let r = run(
        Script {
            lines: LINES[1..].to_vec(),
            judges: Vec::new(),
            die_after: 2,
            attempts: 3,
            cut: Vec::new(),
        },
        4,
        false,
    )
    .await;
    assert_eq!(r.end, RunEnd::Failed);
    assert_eq!(
        significant(&r.effects),
        [
            "start 1 yana",
            "done 1.1 PASS",
            "commit 1.1 PASS",
            "start 2 ayu",
            "done 2.1 PASS",
            "commit 2.1 PASS",
            "start 3 yana",
            "failed 3.1",
            "end failed",
        ]
    );
    let rec = r.store.call(move |s| s.load_run(r.run_id)).await.unwrap();
    assert_eq!(rec.run.status, RunStatus::Failed);
    assert!(
        rec.run.error.as_deref().unwrap().contains("500"),
        "{:?}",
        rec.run.error
    );
    assert_eq!(rec.turns.len(), 2);
    let failed = rec.attempts.last().unwrap();
    assert_eq!((failed.turn, failed.state), (3, AttemptState::Failed));
    assert!(failed.error.as_deref().unwrap().contains("llama runner"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_owner_injects_an_instruction_then_stops_the_run() {
    let r = run_with(
        Script {
            lines: LINES[1..].to_vec(),
            judges: Vec::new(),
            die_after: usize::MAX,
            attempts: 3,
            cut: Vec::new(),
        },
        6,
        false,
        |e, tx| match e {
            Effect::TurnCommitted(t) if t.turn == 1 => tx
                .send(Event::Inject("番号札の話をしてください".into()))
                .unwrap(),
            Effect::TurnCommitted(t) if t.turn == 3 => tx.send(Event::Stop).unwrap(),
            _ => {}
        },
    )
    .await;
    assert_eq!(r.end, RunEnd::Stopped);
    let s = significant(&r.effects);
    assert_eq!(s.last(), Some(&"end stopped"));
    assert!(!s.iter().any(|e| e.starts_with("commit 4")));
    let lines: Vec<serde_json::Value> = r
        .server
        .recorded()
        .iter()
        .filter(|q| q.path == "/api/chat")
        .map(Recorded::json)
        .collect();
    let text = |i: usize| lines[i]["messages"].to_string();
    // Injected once turn 1 was committed, when turn 2 is already under way: the instruction
    // reaches the next turn that starts (turn 3, the third request), and only that one.
    let with: Vec<usize> = (0..lines.len())
        .filter(|&i| text(i).contains("番号札の話"))
        .collect();
    assert_eq!(with, [2]);
    let rec = r.store.call(move |s| s.load_run(r.run_id)).await.unwrap();
    assert_eq!(rec.run.status, RunStatus::Stopped);
    assert_eq!(rec.turns.len(), 3);
}

/// Issue 13 §1 against the real driver and client: やな's tone WARN reaches やな's next prompt and
/// not あゆ's; a RETRY line committed because the attempts ran out leaves hook and depth where
/// they were and is not the context the next line is judged against.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn critiques_reach_their_sister_and_an_exhausted_retry_moves_nothing() {
    let r = run(
        Script {
            lines: vec![
                "うーん、どうだろう。",
                "福引の一等は温泉旅行だそうですよ。並ぶ価値はありそうですね。",
                "わ！福引の列、すっごい長いね！",
                "金閣寺は美しいと思う。",
                "わ！福引の景品、すっごい豪華だね！",
            ],
            judges: Vec::new(),
            die_after: usize::MAX,
            attempts: 1,
            cut: Vec::new(),
        },
        5,
        false,
    )
    .await;
    assert_eq!(r.end, RunEnd::Completed);
    let s = significant(&r.effects);
    assert!(s.contains(&"commit 1.1 WARN"), "{s:?}");
    assert!(s.contains(&"commit 4.1 RETRY"), "{s:?}");
    let bodies: Vec<String> = r
        .server
        .recorded()
        .iter()
        .filter(|q| q.path == "/api/chat")
        .map(|q| q.json()["messages"].to_string())
        .collect();
    assert_eq!(bodies.len(), 5);
    let critique = "あなたの前の発言（ターン1）への指摘";
    assert!(
        !bodies[1].contains(critique),
        "あゆ's turn 2: {}",
        bodies[1]
    );
    assert!(!bodies[1].contains("やならしい"), "{}", bodies[1]);
    assert!(bodies[2].contains(critique), "やな's turn 3: {}", bodies[2]);
    assert!(bodies[2].contains("やならしい"), "{}", bodies[2]);
    let rec = r.store.call(move |s| s.load_run(r.run_id)).await.unwrap();
    let (t3, t4, t5) = (&rec.turns[2], &rec.turns[3], &rec.turns[4]);
    assert_eq!(t4.status, Status::Retry);
    assert!(t4.flags.exhausted);
    assert_eq!((&t4.hook, t4.hook_depth), (&t3.hook, t3.hook_depth));
    assert_ne!(t4.hook.as_deref(), Some("金閣寺"));
    // Turn 5 goes back to 福引: judged against turn 3, not the rejected 金閣寺 line.
    let a5 = rec.attempts.iter().find(|a| a.turn == 5).unwrap();
    let v5 = a5
        .verdict
        .as_ref()
        .map(|v| v.to_string())
        .unwrap_or_default();
    assert!(!v5.contains("early_topic_shift"), "{v5}");
    assert_eq!(t5.hook, t3.hook, "the hook continues from turn 3");
}

/// Issue 13 §4: a line that reads back its prompt's instructions is a RETRY, judged against the
/// prompt that produced it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_line_that_reads_back_its_prompt_is_retried() {
    let r = run(
        Script {
            lines: vec![
                "次のやなの発言だけを書いてください。",
                "わ！福引の列、すっごい長いね！",
            ],
            judges: Vec::new(),
            die_after: usize::MAX,
            attempts: 2,
            cut: Vec::new(),
        },
        1,
        false,
    )
    .await;
    assert_eq!(
        significant(&r.effects),
        [
            "start 1 yana",
            "done 1.1 RETRY",
            "done 1.2 PASS",
            "commit 1.2 PASS",
            "end completed"
        ]
    );
    let rec = r.store.call(move |s| s.load_run(r.run_id)).await.unwrap();
    let v = rec.attempts[0].verdict.as_ref().unwrap().to_string();
    assert!(v.contains("prompt_echo"), "{v}");
    assert!(
        !rec.attempts[1]
            .verdict
            .as_ref()
            .unwrap()
            .to_string()
            .contains("prompt_echo")
    );
}

/// Stopping mid-stream keeps every character that arrived: the cancelled attempt's stored text
/// is what the tokens delivered, never ''.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stopping_mid_stream_keeps_the_streamed_text() {
    let r = run_with(
        Script {
            lines: LINES[1..].to_vec(),
            judges: Vec::new(),
            die_after: usize::MAX,
            attempts: 3,
            cut: Vec::new(),
        },
        4,
        false,
        |e, tx| {
            if let Effect::AttemptStarted { turn: 2, .. } = e {
                tx.send(Event::Stop).unwrap();
            }
        },
    )
    .await;
    assert_eq!(r.end, RunEnd::Stopped);
    let rec = r.store.call(move |s| s.load_run(r.run_id)).await.unwrap();
    let cancelled = rec
        .attempts
        .iter()
        .find(|a| a.state == AttemptState::Cancelled)
        .expect("a cancelled attempt");
    let text = cancelled.text.as_deref().unwrap_or_default();
    assert!(!text.is_empty(), "the streamed text was erased");
    assert!(LINES[2].starts_with(text), "{text}");
}

/// A line the token limit cut is never committed silently: with a finished sentence it is
/// trimmed to it (WARN token_limit); with none it is a RETRY and regenerated.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_line_cut_by_the_token_limit_is_trimmed_or_retried() {
    let r = run(
        Script {
            lines: vec![
                "わ！福引の列、すっごい長いね！それでさ、あの",
                "福引の一等は温泉旅行だそう",
                "姉様、一等は温泉旅行だそうですよ。並んでみましょうか。",
            ],
            judges: Vec::new(),
            die_after: usize::MAX,
            attempts: 3,
            cut: vec![0, 1],
        },
        2,
        false,
    )
    .await;
    assert_eq!(r.end, RunEnd::Completed);
    assert_eq!(
        significant(&r.effects)[..5],
        [
            "start 1 yana",
            "done 1.1 WARN",
            "commit 1.1 WARN",
            "start 2 ayu",
            "done 2.1 RETRY",
        ]
    );
    let s = significant(&r.effects);
    assert!(
        s[5].starts_with("done 2.2") && s[6].starts_with("commit 2.2"),
        "{s:?}"
    );
    let rec = r.store.call(move |s| s.load_run(r.run_id)).await.unwrap();
    assert_eq!(rec.turns[0].text, "わ！福引の列、すっごい長いね！");
    let first = &rec.attempts[0];
    let v = first.verdict.as_ref().unwrap().to_string();
    assert!(
        v.contains("token_limit") && v.contains("それでさ、あの"),
        "{v}"
    );
}

/// あゆ's every attempt of turn 2 says やな's level-0 secret (the sample vault's 工房): the turn
/// is committed as her fallback line (withheld, in the store too), and no later request of
/// either sister carries a word of it — through the real driver, client and store.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rejected_leak_never_reaches_a_later_request_or_the_store() {
    let leaks = [
        "姉様、春から海沿いの工房で働くそうですね。つまり引っ越しですね。",
        "姉様は工房に行かれるのですね。海沿いの町だそうですね。",
    ];
    let script = Script {
        lines: vec![LINES[1], leaks[0], leaks[1], LINES[3], LINES[2], LINES[3]],
        judges: Vec::new(),
        die_after: usize::MAX,
        attempts: 2,
        cut: Vec::new(),
    };
    let ran = run_in_vault(script, 5).await;
    assert_eq!(
        ran.end,
        RunEnd::Completed,
        "{:?}",
        significant(&ran.effects)
    );
    let chats: Vec<String> = ran
        .server
        .requests
        .lock()
        .unwrap()
        .iter()
        .filter(|r| r.path == "/api/chat")
        .map(|r| r.body.clone())
        .collect();
    assert!(chats.len() >= 5, "{}", chats.len());
    // From the regeneration on, no request carries a word of what she said; あゆ's (2: her
    // regeneration, 4: her next turn) carry nothing of the secret at all — やな's own may, in
    // her vault section, since the secret is hers (level 2 for her).
    for (i, body) in chats.iter().enumerate().skip(2) {
        for l in leaks {
            assert!(
                !body.contains(&l.chars().take(10).collect::<String>()),
                "request {i} carries the rejected line"
            );
        }
        if i % 2 == 0 {
            for w in ["工房", "海沿い", "引っ越し"] {
                assert!(!body.contains(w), "あゆ's request {i} carries {w}");
            }
        }
    }
    let id = ran.run_id;
    let rec = ran.store.call(move |s| s.load_run(id)).await.unwrap();
    let t2 = &rec.turns[1];
    assert!(t2.flags.withheld, "{t2:?}");
    let fallback = RuleSet::builtin()
        .unwrap()
        .character("ayu")
        .unwrap()
        .fallback
        .clone();
    assert_eq!(t2.text, fallback);
    assert!(rec.turns.iter().all(|t| !t.text.contains("工房")));
}
