//! The tune loop end to end on the scripted model: headless runs against a fake
//! OpenAI-compatible server (llama-server framing), three reviewers marking the committed turns
//! by a house policy the Director does not know ("やな may end a line with よ; a line of eight
//! lines is unusable"), `kakeai tune` over those runs proposing a change with held-out evidence,
//! and `kakeai compare` proving the accepted overlay on the retry loop: fewer regenerations,
//! no turn worse, judge scores no lower.

#[path = "llm_fake/mod.rs"]
mod llm_fake;

use std::process::Output;

use kakeai::store::{ActionKind, NewAction, Store};
use llm_fake::{FakeServer, Recorded, Reply, openai_reply, parts, sse_events};
use serde_json::json;

mod cli_env;
mod common;
use cli_env::Env;

async fn run(env: &Env, args: &[&str]) -> Output {
    let mut c = env.cmd(args);
    tokio::task::spawn_blocking(move || c.output().unwrap())
        .await
        .unwrap()
}

/// やな's lines end in plain よ / た: the markers rule scores them 0/3 (RETRY), the house
/// reads them as her voice.
const YANA: [&str; 4] = [
    "坂の上まで歩いたよ。",
    "商店街で肉まん買ってきたよ。",
    "窓を開けたら風が入ってきた。",
    "あの本まだ読み終わってないよ。",
];
const AYU: [&str; 3] = [
    "姉様、灯台までは二十分が目安です。途中に展望台もあります。",
    "つまり、帽子は紐で留めるのが一番です。風は午後から強くなります。",
    "要するに、潮の香りが濃いのは満潮だからです。夕方には引いていきます。",
];

/// あゆ's line on every third exchange is eight short lines on every attempt (the house and
/// the `lines` rule agree it is unusable); the rest are fine.
/// The line depends only on who is asked and how long the conversation is, so a regeneration
/// gets the same line again (as a model often does) and A and B meet the same situations.
fn line_for(req: &Recorded) -> String {
    let history = req.json()["messages"].as_array().map_or(0, Vec::len);
    if req.body.contains("あなたは「あゆ」") {
        let base = AYU[(history / 2) % 3];
        if history.is_multiple_of(3) {
            let head: String = base.chars().take(6).collect();
            return (1..=8)
                .map(|i| format!("{head}{i}。"))
                .collect::<Vec<_>>()
                .join("\n");
        }
        return base.to_string();
    }
    YANA[(history / 2) % 4].to_string()
}

async fn server() -> FakeServer {
    FakeServer::with(move |req: &Recorded, _| match req.path.as_str() {
        _ if llm_fake::is_leak_judge(req) => llm_fake::leak_judge_no(req).unwrap(),
        "/v1/models" => Reply::json(
            200,
            r#"{"object":"list","data":[{"id":"tiny-ja","object":"model","owned_by":"llamacpp"}]}"#,
        ),
        "/v1/chat/completions" if req.json()["stream"] == true => {
            let text = line_for(req);
            let pieces: Vec<String> = text.chars().map(String::from).collect();
            let refs: Vec<&str> = pieces.iter().map(String::as_str).collect();
            Reply::sse(parts(&sse_events("tiny-ja", &refs, "stop", pieces.len() as u32)))
        }
        "/v1/chat/completions" => Reply::json(
            200,
            &openai_reply(
                "tiny-ja",
                r#"{"frame":4,"roleplay":4,"connection":4,"density":4,"naturalness":4,"reason":"前の発言に答えている"}"#,
                20,
            ),
        ),
        _ => Reply::json(404, r#"{"error":{"message":"File Not Found","code":404}}"#),
    })
    .await
}

fn ok(out: &Output) -> String {
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Three reviewers mark every committed turn by the house policy.
fn mark_all(env: &Env) -> usize {
    let mut store = Store::open(&env.data_db()).unwrap();
    let ids: Vec<i64> = store.runs(100).unwrap().iter().map(|r| r.id).collect();
    let mut n = 0;
    for id in ids {
        let rec = store.load_run(id).unwrap();
        for t in &rec.turns {
            let usable = t.text.lines().filter(|l| !l.trim().is_empty()).count() < 8;
            for who in ["aoi", "ren", "mio"] {
                store
                    .add_action_by(
                        &NewAction {
                            run_id: id,
                            turn: Some(t.turn),
                            attempt_id: None,
                            kind: ActionKind::Thumb,
                            payload: json!({"up": usable}),
                        },
                        Some(who),
                    )
                    .unwrap();
            }
            n += 1;
        }
    }
    n
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_accepted_proposal_is_proved_by_a_paired_compare() {
    let env = Env::new();
    let a = server().await;
    let topics = [
        "海辺の坂道",
        "商店街",
        "夏の夕方",
        "図書館",
        "雨の日",
        "灯台",
    ];
    let mut first_run = String::new();
    for topic in topics {
        let out = run(
            &env,
            &[
                "run",
                "--headless",
                "--topic",
                topic,
                "--turns",
                "8",
                "--endpoint",
                &a.url,
                "--model",
                "tiny-ja",
            ],
        )
        .await;
        let stdout = ok(&out);
        if first_run.is_empty() {
            let start: serde_json::Value =
                serde_json::from_str(stdout.lines().next().unwrap()).unwrap();
            first_run = start["run_id"].to_string();
        }
    }
    let labels = mark_all(&env);
    assert_eq!(labels, 48);
    let overlay = env.dir.path().join("tuned.toml");
    let out = run(
        &env,
        &[
            "tune",
            "--runs",
            "all",
            "--format",
            "json",
            "--write",
            overlay.to_str().unwrap(),
        ],
    )
    .await;
    let report: serde_json::Value = serde_json::from_str(&ok(&out)).unwrap();
    let (before, after) = (
        report["agreement_before"].as_f64().unwrap(),
        report["agreement_after"].as_f64().unwrap(),
    );
    assert!(
        after > before && after >= 0.8,
        "held-out κ {before} → {after}: {report}"
    );
    let props = report["proposals"].as_array().unwrap();
    assert!(props.iter().any(|p| p["rule"] == "tone"), "{props:?}");
    assert!(
        props.iter().all(|p| p["rule"] != "lines"),
        "the lines rule agrees with the house: {props:?}"
    );
    // The proof: the first run replayed under the accepted overlay.
    let variant = overlay.with_extension("variant.toml");
    let b = server().await;
    let out = run(
        &env,
        &[
            "compare",
            "--run",
            &first_run,
            "--variant",
            variant.to_str().unwrap(),
            "--endpoint",
            &b.url,
            "--model",
            "tiny-ja",
            "--format",
            "json",
        ],
    )
    .await;
    let v: serde_json::Value = serde_json::from_str(&ok(&out)).unwrap();
    let s = &v["summary"];
    let attempts = s["mean_attempts"].as_array().unwrap();
    let (ma, mb) = (attempts[0].as_f64().unwrap(), attempts[1].as_f64().unwrap());
    assert!(mb < ma, "regenerations A {ma} → B {mb}: {s}");
    assert_eq!(s["worse"], 0, "{s}");
    let judge = s["judge_aspects"].as_array().unwrap();
    if let (Some(ja), Some(jb)) = (judge[0].as_array(), judge[1].as_array()) {
        let mean =
            |x: &Vec<serde_json::Value>| x.iter().filter_map(|v| v.as_f64()).sum::<f64>() / 5.0;
        assert!(mean(jb) >= mean(ja) - 1e-9, "{s}");
    }
    // The comparison's report shows the before/after and the overlay it tried, with its
    // provenance.
    let page = env.dir.path().join("cmp.html");
    let id = v["comparison"]["id"].to_string();
    let out = run(
        &env,
        &["report", "--compare", &id, "--out", page.to_str().unwrap()],
    )
    .await;
    ok(&out);
    let html = std::fs::read_to_string(&page).unwrap();
    let ba = &html[html.find("id=\"before-after\"").expect("the before/after")..];
    assert!(
        ba.contains("attempts per turn")
            && ba.contains(&format!("{ma:.2}"))
            && ba.contains(&format!("{mb:.2}")),
        "{ba}"
    );
    let vr = &html[html
        .find("id=\"variant-rules\"")
        .expect("the variant's rules")..];
    assert!(
        vr.contains("kakeai tune") && vr.contains("held-out") && vr.contains("tone"),
        "{vr}"
    );
    eprintln!(
        "tune: κ {before:.3} → {after:.3}; compare: attempts {ma:.2} → {mb:.2}; {}",
        s
    );
}
