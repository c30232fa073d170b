//! `kakeai export --format dpo|kto|sft` the way its users meet it: a real `kakeai run` against
//! a fake OpenAI-compatible server whose first line of every turn breaks the `lines` rule (the
//! Director's RETRY) and whose regeneration is fine; reviewers' marks; then the files, loaded by
//! Hugging Face `datasets` (`$KAKEAI_PYTHON`, else `python3`; skipped with a message when
//! `datasets` is absent, required under CI=true).

#[path = "llm_fake/mod.rs"]
mod llm_fake;

use std::collections::HashMap;
use std::process::Output;
use std::sync::{Arc, Mutex};

use kakeai::store::{ActionKind, NewAction, Store};
use llm_fake::{FakeServer, Recorded, Reply, openai_reply, parts, sse_events};
use serde_json::{Value, json};

mod cli_env;
use cli_env::Env;

/// The first attempt at each place in the conversation: eight short lines (the `lines` rule:
/// RETRY); the next attempt there: a fine line.
async fn server() -> FakeServer {
    let seen: Arc<Mutex<HashMap<String, usize>>> = Arc::default();
    FakeServer::with(move |req: &Recorded, k| match req.path.as_str() {
        // The leak review's model judge: nothing here reveals a secret.
        _ if llm_fake::is_leak_judge(req) => llm_fake::leak_judge_no(req).unwrap(),
        "/v1/models" => Reply::json(
            200,
            r#"{"object":"list","data":[{"id":"tiny-ja","object":"model","owned_by":"llamacpp"}]}"#,
        ),
        "/v1/chat/completions" if req.json()["stream"] == true => {
            let msgs = req.json()["messages"].clone();
            let last = msgs.as_array().and_then(|m| m.last()).map(|m| m["content"].to_string()).unwrap_or_default();
            // The place in the conversation: the partner's last line (the same for every
            // attempt of a turn), or the start.
            let place = last
                .split("【相手の直前の発言】")
                .nth(1)
                .and_then(|r| r.split("\\n").nth(1))
                .unwrap_or("start")
                .to_string();
            let n = {
                let mut s = seen.lock().unwrap();
                let e = s.entry(place).or_default();
                *e += 1;
                *e
            };
            let ayu = req.body.contains("あなたは「あゆ」");
            let good = if ayu {
                format!("姉様、灯台までは二十分が目安です。途中に展望台もあります{k}。")
            } else {
                format!("わ！坂の上から海がすっごい見えるよね{k}！")
            };
            let text = if n == 1 {
                (1..=8).map(|i| format!("うん{i}。")).collect::<Vec<_>>().join("\n")
            } else {
                good
            };
            let pieces: Vec<String> = text.chars().map(String::from).collect();
            let refs: Vec<&str> = pieces.iter().map(String::as_str).collect();
            Reply::sse(parts(&sse_events("tiny-ja", &refs, "stop", pieces.len() as u32)))
        }
        "/v1/chat/completions" => Reply::json(
            200,
            &openai_reply(
                "tiny-ja",
                r#"{"frame":4,"roleplay":4,"connection":4,"density":4,"naturalness":4,"reason":"ok"}"#,
                20,
            ),
        ),
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

fn read_jsonl(p: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(p)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// A stored run of 4 turns, each a RETRY then a fine line; reviewers mark some turns.
async fn day_of_review(env: &Env) -> i64 {
    let llm = server().await;
    let out = run(
        env,
        &[
            "run",
            "--headless",
            "--topic",
            "海辺の坂道",
            "--turns",
            "4",
            "--endpoint",
            &llm.url,
            "--model",
            "tiny-ja",
        ],
    )
    .await;
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let first: Value =
        serde_json::from_str(String::from_utf8_lossy(&out.stdout).lines().next().unwrap()).unwrap();
    let run_id = first["run_id"].as_i64().unwrap();
    let mut store = Store::open(&env.data_db()).unwrap();
    let mark = |s: &mut Store, turn: u32, who: &str, kind: ActionKind, payload: Value| {
        s.add_action_by(
            &NewAction {
                run_id,
                turn: Some(turn),
                attempt_id: None,
                kind,
                payload,
            },
            Some(who),
        )
        .unwrap();
    };
    mark(
        &mut store,
        1,
        "花子",
        ActionKind::Thumb,
        json!({"up": true}),
    );
    mark(
        &mut store,
        1,
        "taro",
        ActionKind::Thumb,
        json!({"up": true}),
    );
    mark(
        &mut store,
        2,
        "花子",
        ActionKind::Override,
        json!({"to": "RETRY", "reason": "硬い"}),
    );
    mark(
        &mut store,
        3,
        "花子",
        ActionKind::Thumb,
        json!({"up": true}),
    );
    mark(
        &mut store,
        3,
        "taro",
        ActionKind::Thumb,
        json!({"up": false}),
    );
    run_id
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dpo_kto_and_sft_from_a_real_run_and_loaded_by_datasets() {
    let env = Env::new();
    let run_id = day_of_review(&env).await;
    let store = Store::open(&env.data_db()).unwrap();
    let rec = store.load_run(run_id).unwrap();
    assert!(
        rec.attempts
            .iter()
            .any(|a| a.status == Some(kakeai::director::Status::Retry)),
        "precondition: the Director rejected a line"
    );
    let dir = env.dir.path().join("out");
    std::fs::create_dir_all(&dir).unwrap();
    let mut files = Vec::new();
    for f in ["dpo", "kto", "sft"] {
        let path = dir.join(format!("{f}.jsonl"));
        let out = run(
            &env,
            &["export", "--format", f, "--out", path.to_str().unwrap()],
        )
        .await;
        assert_eq!(
            out.status.code(),
            Some(0),
            "{f}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        // The card beside the file describes this export.
        let card = std::fs::read_to_string(dir.join(format!("README.{f}.md"))).unwrap();
        assert!(
            card.contains(&format!("`{f}.jsonl` ({})", f.to_uppercase())),
            "{card}"
        );
        if f == "dpo" {
            assert!(card.contains("director · yana"), "{card}");
        }
        files.push((f, path));
    }
    let dpo = read_jsonl(&files[0].1);
    let seen: Vec<_> = rec
        .attempts
        .iter()
        .map(|a| {
            (
                a.turn,
                a.attempt,
                a.status,
                a.text.clone().unwrap_or_default(),
            )
        })
        .collect();
    assert!(
        dpo.len() >= 3,
        "a director pair on turns 1, 3 and 4: {} {seen:?}",
        dpo.len()
    );
    for r in &dpo {
        let rejected = r["metadata"]["rejected_attempt"].as_i64().unwrap();
        let req = store
            .request_of(rejected)
            .unwrap()
            .expect("the stored request");
        let msgs: Vec<Value> = req["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| json!({"role": m["role"], "content": m["content"]}))
            .collect();
        assert_eq!(r["prompt"], json!(msgs), "the exact stored request");
        assert_ne!(r["chosen"], r["rejected"]);
    }
    // Turn 2: 花子 overrode the accepted line to RETRY, so no director pair teaches it.
    assert!(
        !dpo.iter()
            .any(|r| r["metadata"]["turn"] == 2 && r["metadata"]["source"] == "director")
    );
    let kto = read_jsonl(&files[1].1);
    let by_turn = |t: u64| {
        kto.iter()
            .filter(|r| r["metadata"]["turn"] == t && r["metadata"]["source"] == "reviewers")
            .collect::<Vec<_>>()
    };
    assert_eq!(by_turn(1)[0]["label"], true);
    assert_eq!(by_turn(2)[0]["label"], false);
    assert!(by_turn(3).is_empty(), "a tie between reviewers is dropped");
    let sft = read_jsonl(&files[2].1);
    assert!(
        sft.iter()
            .all(|r| r["metadata"]["turn"] != 2 && r["metadata"]["turn"] != 3),
        "{sft:?}"
    );
    // --redact-vault: the world section is gone from every prompt.
    let red = dir.join("red.jsonl");
    let out = run(
        &env,
        &[
            "export",
            "--format",
            "dpo",
            "--redact-vault",
            "--out",
            red.to_str().unwrap(),
        ],
    )
    .await;
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for r in read_jsonl(&red) {
        assert!(r["prompt"].to_string().contains("伏せています"), "{r}");
    }
    // Bad input: no --out, a missing run, contradictory filters.
    for (args, why) in [
        (vec!["export", "--format", "dpo"], "--out"),
        (
            vec![
                "export",
                "--format",
                "dpo",
                "--run",
                "999",
                "--out",
                "/tmp/x.jsonl",
            ],
            "no run with id 999",
        ),
        (
            vec![
                "export",
                "--format",
                "kto",
                "--director-only",
                "--reviewers-only",
                "--out",
                "/tmp/x.jsonl",
            ],
            "exclude each other",
        ),
    ] {
        let out = run(&env, &args).await;
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(why),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    load_with_datasets(&files);
}

/// Loads each file with `datasets.load_dataset("json", …)` and checks the column types.
fn load_with_datasets(files: &[(&str, std::path::PathBuf)]) {
    let python = std::env::var("KAKEAI_PYTHON").unwrap_or_else(|_| "python3".into());
    let has = std::process::Command::new(&python)
        .args(["-c", "import datasets"])
        .output();
    let ok = has.as_ref().is_ok_and(|o| o.status.success());
    if !ok {
        let msg = format!(
            "Python `datasets` not importable with {python} (set KAKEAI_PYTHON to a venv's python)"
        );
        if std::env::var("CI").is_ok_and(|v| v == "true") {
            panic!("{msg}: required under CI=true");
        }
        eprintln!("SKIPPED the datasets check: {msg}");
        return;
    }
    let script = r#"
import json, sys, datasets
kind, path = sys.argv[1], sys.argv[2]
ds = datasets.load_dataset("json", data_files=path, split="train")
f = ds.features
def msgs(x):
    inner = x.feature if hasattr(x, "feature") else x[0]
    return sorted(inner.keys()) == ["content", "role"] and all(inner[k].dtype == "string" for k in inner)
if kind == "dpo":
    ok = msgs(f["prompt"]) and msgs(f["chosen"]) and msgs(f["rejected"])
elif kind == "kto":
    ok = msgs(f["prompt"]) and msgs(f["completion"]) and f["label"].dtype == "bool"
else:
    ok = msgs(f["messages"])
ok = ok and "run" in f["metadata"] and "turn" in f["metadata"]
print(json.dumps({"rows": ds.num_rows, "ok": bool(ok), "features": str(f)}))
"#;
    for (kind, path) in files {
        let out = std::process::Command::new(&python)
            .args(["-c", script, kind, path.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{kind}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: Value =
            serde_json::from_str(String::from_utf8_lossy(&out.stdout).lines().last().unwrap())
                .unwrap();
        assert_eq!(v["ok"], true, "{kind}: {v}");
        assert!(v["rows"].as_u64().unwrap() > 0, "{kind}: {v}");
    }
}
