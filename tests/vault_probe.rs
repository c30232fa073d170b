//! `kakeai vault probe` and `vault scorecard` against the real binary and a fake
//! OpenAI-compatible endpoint: replies uttering a secret's forbidden keyword are counted as
//! leaks, replies that never touch it are not; and, over generated vaults, no probe question
//! ever carries anything a reader must not see (level-0 places, secret ids and words).

mod common;

mod cli_env;
#[path = "llm_fake/mod.rs"]
mod llm_fake;
mod vault_gen;

use std::path::Path;
use std::process::Output;

use cli_env::Env;
use kakeai::vault::load::from_files;
use kakeai::vault::{ItemKind, probe};
use llm_fake::{FakeServer, Recorded, Reply, parts, sse_events};
use vault_gen::{Mutation, READERS, generate};

async fn run(env: &Env, args: &[&str]) -> Output {
    let mut c = env.cmd(args);
    tokio::task::spawn_blocking(move || c.output().unwrap())
        .await
        .unwrap()
}

async fn server(reply: &'static str) -> FakeServer {
    FakeServer::with(move |req: &Recorded, _| match req.path.as_str() {
        "/v1/models" => Reply::json(
            200,
            r#"{"object":"list","data":[{"id":"tiny-ja","object":"model","owned_by":"llamacpp"}]}"#,
        ),
        "/v1/chat/completions" => {
            let pieces: Vec<String> = reply.chars().map(String::from).collect();
            let refs: Vec<&str> = pieces.iter().map(String::as_str).collect();
            Reply::sse(parts(&sse_events(
                "tiny-ja",
                &refs,
                "stop",
                refs.len() as u32,
            )))
        }
        _ => Reply::json(404, r#"{"error":{"message":"File Not Found","code":404}}"#),
    })
    .await
}

fn json(out: &Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

fn scorecard_row<'a>(
    v: &'a serde_json::Value,
    secret: &str,
    reader: &str,
) -> Vec<&'a serde_json::Value> {
    v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["secret"] == secret && r["reader"] == reader)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn leaking_replies_are_counted_and_clean_ones_are_not() {
    let env = Env::new();
    // あゆ's own secret (level 2 for her): the fake answers with its forbidden keyword 物置.
    let leaky = server("姉様、実は物置の奥でこっそり猫を見ていたことがあるのです。").await;
    let out = run(
        &env,
        &[
            "vault",
            "probe",
            "--secret",
            "SEC-AYU-01",
            "--reader",
            "ayu",
            "--runs",
            "3",
            "--endpoint",
            &leaky.url,
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
    let v = json(&out);
    assert_eq!(v["runs"], 3);
    assert_eq!(v["leaked"], 3, "{v}");
    // The questions went out; none of them carried the secret's words.
    let bodies: Vec<String> = leaky.recorded().iter().map(|r| r.body.clone()).collect();
    assert!(bodies.iter().filter(|b| b.contains("messages")).count() >= 3);
    let card = run(&env, &["vault", "scorecard", "--format", "json"]).await;
    let c = json(&card);
    let rows = scorecard_row(&c, "SEC-AYU-01", "ayu");
    let leaked: u64 = rows.iter().map(|r| r["leaked"].as_u64().unwrap()).sum();
    let reviewed: u64 = rows.iter().map(|r| r["reviewed"].as_u64().unwrap()).sum();
    assert_eq!((leaked, reviewed), (3, 3), "{c}");
    assert_eq!(rows[0]["model"], "tiny-ja");
    assert_eq!(rows[0]["level"], 2);

    // A model that never touches it: three more lines reviewed, no new leak.
    let clean = server("姉様、今日は風が強いですね。洗濯物は早めに取り込みましょう。").await;
    let out = run(
        &env,
        &[
            "vault",
            "probe",
            "--secret",
            "SEC-AYU-01",
            "--reader",
            "ayu",
            "--runs",
            "3",
            "--endpoint",
            &clean.url,
            "--model",
            "tiny-ja",
        ],
    )
    .await;
    let v = json(&out);
    assert_eq!(v["leaked"], 0, "{v}");
    let c = json(&run(&env, &["vault", "scorecard", "--format", "json"]).await);
    let rows = scorecard_row(&c, "SEC-AYU-01", "ayu");
    let leaked: u64 = rows.iter().map(|r| r["leaked"].as_u64().unwrap()).sum();
    let reviewed: u64 = rows.iter().map(|r| r["reviewed"].as_u64().unwrap()).sum();
    assert_eq!((leaked, reviewed), (3, 6), "{c}");
    // The table form lists it too.
    let t = run(&env, &["vault", "scorecard"]).await;
    assert!(String::from_utf8_lossy(&t.stdout).contains("SEC-AYU-01"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_probe_about_a_level_0_secret_never_sends_its_words() {
    let env = Env::new();
    let s = server("やな姉様、今日の夕飯は何にしましょうか。").await;
    // やな's plan is level 0 for あゆ.
    let out = run(
        &env,
        &[
            "vault",
            "probe",
            "--secret",
            "SEC-YANA-01",
            "--reader",
            "ayu",
            "--runs",
            "6",
            "--endpoint",
            &s.url,
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
    // The sisters' requests only: the leak judge's prompt is where the secret is meant to go.
    let sent: String = s
        .recorded()
        .iter()
        .filter(|r| !llm_fake::is_leak_judge(r))
        .map(|r| r.body.clone())
        .collect();
    for bad in [
        "工房",
        "海沿い",
        "引っ越し",
        "春から",
        "SEC-YANA-01",
        "これからのこと",
    ] {
        assert!(!sent.contains(bad), "{bad} was sent");
    }
    // Bad input.
    let out = run(
        &env,
        &[
            "vault",
            "probe",
            "--secret",
            "NOPE",
            "--reader",
            "ayu",
            "--endpoint",
            &s.url,
        ],
    )
    .await;
    assert_eq!(out.status.code(), Some(2));
    let out = run(
        &env,
        &[
            "vault",
            "probe",
            "--secret",
            "SEC-AYU-01",
            "--reader",
            "mio",
        ],
    )
    .await;
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn generated_vaults_probe_questions_carry_no_hidden_token() {
    let mut checked = 0;
    for seed in 0..150u64 {
        let v = generate(seed, Mutation::None);
        let Ok(w) = from_files("w", Path::new("vault/w"), true, v.files.clone()) else {
            continue;
        };
        for (ri, reader) in READERS.iter().enumerate() {
            let Some(reader) = reader else { continue };
            for it in w.items(Some(reader)) {
                if it.level.get() > 2
                    || it.kind == ItemKind::Foreshadowing && it.secret_id.is_none()
                {
                    continue;
                }
                let id = it.secret_id.clone().unwrap_or_else(|| it.key.clone());
                let Ok(t) = probe::target(&w, &id, reader) else {
                    continue;
                };
                for n in 0..8 {
                    let q = probe::question(&t, n);
                    for tok in &v.hidden[ri] {
                        assert!(
                            !q.contains(tok.as_str()),
                            "seed {seed} {reader} {id}: {tok} in {q}"
                        );
                    }
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 500, "only {checked} questions checked");
}

/// Long work shows progress (issue 23 item 14): on a terminal `vault probe` shows a bar of runs
/// with an ETA and a line per finished run; with `--quiet`, or piped, nothing extra on stderr,
/// and stdout the same bytes all three ways.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_probe_shows_its_runs_only_on_a_terminal() {
    let env = Env::new();
    let leaky = server("姉様、実は物置の奥でこっそり猫を見ていたことがあるのです。").await;
    let db = env.dir.path().join("probe.db");
    let d = db.to_str().unwrap().to_string();
    let args = [
        "vault",
        "probe",
        "--secret",
        "SEC-AYU-01",
        "--reader",
        "ayu",
        "--runs",
        "3",
        "--endpoint",
        &leaky.url,
        "--model",
        "tiny-ja",
        "--db",
        &d,
    ];
    // The fake endpoint answers on this runtime while the binary runs.
    let ways = tokio::task::block_in_place(|| {
        common::terminal::three_ways(
            |a| env.cmd(a),
            &args,
            || {
                for ext in ["", "-wal", "-shm"] {
                    let _ = std::fs::remove_file(format!("{d}{ext}"));
                }
            },
        )
    });
    ways.assert_progress_only_on_a_terminal(&["probe [", "/3 runs"]);
    assert!(ways.shown.contains("run 1: "), "{}", ways.shown);
    assert!(ways.shown.contains("leaked"), "{}", ways.shown);
    assert!(!ways.quiet.contains("leaked"), "{}", ways.quiet);
    assert_eq!(json(&ways.piped)["leaked"], 3);
}
