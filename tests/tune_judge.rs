//! `kakeai tune --judge` end to end: a store of judged lines with a lead's gold labels (the
//! house finds small talk about aliens unusable; the judge, asked cold, passes everything),
//! and a fake OpenAI-compatible server whose judge either reads its few-shot examples (it
//! marks a line like its nearest example) or ignores them. Tune chooses examples from the
//! training runs, asks again on held-out lines, proposes them only when that holds up, never
//! shows a guarded line or personal data as an example, and writes `[judge] examples`.

#[path = "llm_fake/mod.rs"]
mod llm_fake;

mod cli_env;
mod common;

use std::collections::BTreeSet;
use std::process::Output;
use std::time::SystemTime;

use cli_env::Env;
use common::seeded::Gen as Rng;
use kakeai::annotate::{Filter, QueueSpec, adjudicate, db};
use kakeai::director::{RuleSet, Status};
use kakeai::duo::TurnFlags;
use kakeai::store::{AttemptOutcome, NewAttempt, NewRun, Store, TurnCommit};
use llm_fake::{FakeServer, Recorded, Reply, openai_reply};
use serde_json::json;

const GOOD: [&str; 6] = [
    "姉様、坂の上から海が見えますね。",
    "商店街の肉まん、まだ温かいよ！",
    "図書館は午後から静かになります。",
    "夕焼けがきれいだね、写真撮ろう！",
    "雨の日は本を読むのが一番です。",
    "灯台まであと少しだよ、がんばろ！",
];
const BAD: [&str; 6] = [
    "宇宙人ってどこに住んでるのかな宇宙人！",
    "宇宙人の円盤が見えた気がします宇宙人。",
    "宇宙人に会ったら何を話そう宇宙人！",
    "宇宙人は肉まんを食べるのでしょうか宇宙人。",
    "宇宙人が灯台を作ったのかも宇宙人！",
    "宇宙人の言葉を調べてみます宇宙人。",
];
/// A line the leak review spoke on: never an example, whatever its label.
const GUARDED: &str = "合言葉はみかづきの宇宙人だよ！";
/// A line with personal data: shown masked only.
const PHONE: &str = "宇宙人の番号は090-1234-5678だって宇宙人！";

/// Ten runs of twelve judged lines; every line gold-labelled by the house policy.
fn seed(env: &Env) -> usize {
    let mut store = Store::open(&env.data_db()).unwrap();
    let mut rng = Rng::new(7);
    let mut n = 0;
    for r in 0..10 {
        let run = store
            .create_run(&NewRun {
                topic: format!("散歩{r}"),
                model: Some("tiny".into()),
                endpoint: None,
                api: None,
                options: json!({}),
                persona_version: None,
                ruleset_version: None,
            })
            .unwrap();
        for t in 1..=12u32 {
            let speaker = if t % 2 == 1 { "yana" } else { "ayu" };
            let bad = rng.next(3) == 0;
            let (text, guarded) = match (r, t) {
                (_, 5) => (GUARDED.to_string(), true),
                (_, 7) => (PHONE.to_string(), false),
                _ if bad => (rng.pick(&BAD).to_string(), false),
                _ => (rng.pick(&GOOD).to_string(), false),
            };
            commit(&mut store, run, t, speaker, &text, guarded);
            n += 1;
        }
    }
    gold_by_policy(&mut store);
    n
}

fn commit(store: &mut Store, run: i64, turn: u32, speaker: &str, text: &str, guarded: bool) {
    let id = store
        .start_attempt(&NewAttempt {
            run_id: run,
            turn,
            speaker: speaker.into(),
            attempt: 1,
            text: text.into(),
            tokens: 1,
            guidance: None,
            prompt_hash: None,
            started_at: SystemTime::now(),
            first_token_ms: None,
        })
        .unwrap();
    let findings = if guarded {
        json!([{"rule": "leak", "status": "WARN", "message": "秘密に近い", "suggestion": "", "span": null}])
    } else {
        json!([])
    };
    let mut o = AttemptOutcome::done(text);
    o.status = Some(Status::Pass);
    o.verdict = Some(json!({"status": "PASS", "findings": findings}));
    o.judge = Some(json!({"status": "PASS", "scores": {"mean": 4.2}}));
    store.finish_attempt(id, &o).unwrap();
    store
        .commit_turn(&TurnCommit {
            run_id: run,
            turn,
            speaker: speaker.into(),
            attempt_id: Some(id),
            text: text.into(),
            status: Status::Pass,
            flags: TurnFlags::default(),
            hook: None,
            hook_depth: None,
        })
        .unwrap();
}

/// A queue over every turn; the lead's gold label: a line about aliens is unusable.
fn gold_by_policy(store: &mut Store) {
    let spec = QueueSpec {
        name: "main".into(),
        filter: Filter::default(),
        k: 1,
        lease_ms: 60_000,
        overlap: true,
        comparison: None,
    };
    db::create(store, &spec, Some("lead")).unwrap();
    let q = db::get(store.db(), "main").unwrap();
    db::refresh(store.db(), &q).unwrap();
    let runs: Vec<i64> = store.runs(100).unwrap().iter().map(|r| r.id).collect();
    for run in runs {
        for t in store.load_run(run).unwrap().turns {
            let label = if t.text.contains("宇宙人") {
                "not"
            } else {
                "fine"
            };
            adjudicate::decide(store, "main", (run, t.turn), label, "house", "lead").unwrap();
        }
    }
}

/// The judge prompt's few-shot block (empty when there is none) and the line it scores.
fn parts_of(prompt: &str) -> (String, String) {
    let line = prompt
        .split("【評価する発言】")
        .nth(1)
        .and_then(|s| s.lines().next())
        .unwrap_or("")
        .to_string();
    let block = prompt
        .split("【このチームのレビュアーの判定例】")
        .nth(1)
        .and_then(|s| s.split("【評価する発言】").next())
        .unwrap_or("")
        .to_string();
    (block, line)
}

fn bigrams(s: &str) -> BTreeSet<(char, char)> {
    let c: Vec<char> = s.chars().collect();
    c.windows(2).map(|w| (w[0], w[1])).collect()
}

/// A judge that marks a line as its nearest example (bigram overlap), or passes it when it was
/// shown none — in-context learning in miniature. `reads` false: it ignores the examples.
fn judge_reply(prompt: &str, reads: bool) -> String {
    let (block, line) = parts_of(prompt);
    let mut usable = true;
    if reads && !block.is_empty() {
        let me = bigrams(&line);
        let best = block
            .lines()
            .filter_map(|l| {
                let text = l.split_once('「')?.1.split_once('」')?.0;
                let ok = l.ends_with("使える（そのまま採用）");
                Some((me.intersection(&bigrams(text)).count(), ok))
            })
            .max_by_key(|(n, _)| *n);
        if let Some((n, ok)) = best
            && n > 0
        {
            usable = ok;
        }
    }
    let s = if usable { 4 } else { 2 };
    format!(
        r#"{{"frame":{s},"roleplay":{s},"connection":{s},"density":{s},"naturalness":{s},"reason":"発言の中身を見た"}}"#
    )
}

async fn server(reads: bool) -> FakeServer {
    FakeServer::with(move |req: &Recorded, _| match req.path.as_str() {
        "/v1/models" => Reply::json(
            200,
            r#"{"object":"list","data":[{"id":"tiny-ja","object":"model","owned_by":"llamacpp"}]}"#,
        ),
        "/v1/chat/completions" => {
            let prompt = req.json()["messages"][0]["content"]
                .as_str()
                .unwrap_or("")
                .to_string();
            Reply::json(
                200,
                &openai_reply("tiny-ja", &judge_reply(&prompt, reads), 20),
            )
        }
        _ => Reply::json(404, r#"{"error":{"message":"File Not Found","code":404}}"#),
    })
    .await
}

async fn run(env: &Env, args: &[&str]) -> Output {
    let mut c = env.cmd(args);
    tokio::task::spawn_blocking(move || c.output().unwrap())
        .await
        .unwrap()
}

fn tune_args<'a>(url: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut a = vec![
        "tune",
        "--queue",
        "main",
        "--format",
        "json",
        "--judge",
        "--endpoint",
        url,
        "--model",
        "tiny-ja",
        "--api",
        "openai",
    ];
    a.extend_from_slice(extra);
    a
}

fn examples_seen(fake: &FakeServer) -> Vec<String> {
    fake.recorded()
        .iter()
        .filter(|r| r.path == "/v1/chat/completions")
        .map(|r| parts_of(r.json()["messages"][0]["content"].as_str().unwrap_or("")).0)
        .filter(|b| !b.is_empty())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_judge_that_reads_its_examples_gets_them_proposed_with_held_out_evidence() {
    let env = Env::new();
    assert_eq!(seed(&env), 120);
    let fake = server(true).await;
    let overlay = env.dir.path().join("judge.toml");
    let args = tune_args(&fake.url, &["--write", overlay.to_str().unwrap()]);
    let out = run(&env, &args).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let ev = &r["judge_examples"];
    assert!(ev["holds_up"] == true, "{ev}");
    assert!(
        ev["agreement_after"].as_f64().unwrap() >= ev["agreement_before"].as_f64().unwrap() + 0.5,
        "{ev}"
    );
    assert!(ev["asked"].as_u64().unwrap() >= 60, "{ev}");
    let p = r["proposals"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["rule"] == "judge_examples")
        .unwrap_or_else(|| panic!("no judge_examples proposal: {r}"));
    assert_eq!(p["examples"].as_array().unwrap().len(), 4, "{p}");
    assert!(!p["support"].as_array().unwrap().is_empty());

    let mut table_args = tune_args(&fake.url, &[]);
    table_args[4] = "table";
    let table = run(&env, &table_args).await;
    let text = String::from_utf8_lossy(&table.stdout);
    eprintln!("{text}");
    assert!(
        text.contains("judge few-shot examples, asked again on") && text.contains("judge_examples"),
        "{text}"
    );

    // What the model was shown: never the guarded line, never the raw phone number.
    let seen = examples_seen(&fake);
    assert!(!seen.is_empty());
    for block in &seen {
        assert!(
            !block.contains("みかづき"),
            "a guarded line was an example:\n{block}"
        );
        assert!(
            !block.contains("090-1234-5678"),
            "personal data in an example:\n{block}"
        );
    }

    // The overlay loads and the judge's prompt then carries the examples.
    let rules = RuleSet::load(Some(&overlay)).unwrap();
    let ex = &rules.data.judge.examples;
    assert_eq!(ex.len(), 4);
    assert_eq!(ex.iter().filter(|e| e.usable).count(), 2);
    let msgs =
        kakeai::duo::judging::judge_messages(&rules, "散歩", "海辺", "ayu", "こんにちは。", None);
    let (block, _) = parts_of(&msgs[0].content);
    for e in ex {
        assert!(block.contains(&e.text), "{block}");
        assert!(!e.text.contains("みかづき") && !e.text.contains("090-1234-5678"));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_judge_that_ignores_its_examples_gets_nothing_proposed() {
    let env = Env::new();
    seed(&env);
    let fake = server(false).await;
    let out = run(&env, &tune_args(&fake.url, &[])).await;
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["judge_examples"]["holds_up"], false, "{r}");
    assert!(
        !r["proposals"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["rule"] == "judge_examples"),
        "{r}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_judge_that_cannot_be_reached_is_exit_3_and_no_proposal() {
    let env = Env::new();
    seed(&env);
    let out = run(&env, &tune_args("http://127.0.0.1:9", &[])).await;
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stdout.is_empty());
    assert!(String::from_utf8_lossy(&out.stderr).contains("did not answer"));
}
