//! `kakeai compare` against the real binary and a fake OpenAI-compatible endpoint (llama-server
//! framing): a stored baseline run, a variant changing やな's persona (paired rows for every
//! turn, a summary, the stored comparison reopened), a variant whose lines are 8 lines long
//! (exit 1 under --fail-on-regression), bad input (2) and a dead endpoint (3).

#[path = "llm_fake/mod.rs"]
mod llm_fake;

use std::process::Output;

use llm_fake::{FakeServer, Recorded, Reply, openai_reply, parts, sse_events};

mod cli_env;
mod common;
use cli_env::Env;

async fn run(env: &Env, args: &[&str]) -> Output {
    let mut c = env.cmd(args);
    tokio::task::spawn_blocking(move || c.output().unwrap())
        .await
        .unwrap()
}

const YANA: [&str; 3] = [
    "わ！坂の上から海がすっごい見えるよね！",
    "ほんと風が強いね、帽子飛んじゃうかも！",
    "そっか、あの灯台まで歩いてみようかな！",
];
const AYU: [&str; 3] = [
    "姉様、灯台までは二十分が目安です。途中に展望台もあります。",
    "つまり、帽子は紐で留めるのが一番です。風は午後から強くなります。",
    "要するに、潮の香りが濃いのは満潮だからです。夕方には引いていきます。",
];

/// A server whose lines depend on who is asked (the persona section names her) and on how many
/// requests came before; `shape` turns a line into what is streamed.
async fn server(shape: fn(&str) -> String) -> FakeServer {
    FakeServer::with(move |req: &Recorded, n| match req.path.as_str() {
        _ if llm_fake::is_leak_judge(req) => llm_fake::leak_judge_no(req).unwrap(),
        "/v1/models" => Reply::json(
            200,
            r#"{"object":"list","data":[{"id":"tiny-ja","object":"model","owned_by":"llamacpp"}]}"#,
        ),
        "/v1/chat/completions" if req.json()["stream"] == true => {
            let ayu = req.body.contains("あなたは「あゆ」");
            let line = if ayu { AYU[n % 3] } else { YANA[n % 3] };
            let text = shape(line);
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

fn same(s: &str) -> String {
    s.to_string()
}

/// Eight short lines: the `lines` rule rejects every one.
fn eight_lines(s: &str) -> String {
    let head: String = s.chars().take(6).collect();
    (1..=8)
        .map(|i| format!("{head}{i}。"))
        .collect::<Vec<_>>()
        .join("\n")
}

async fn baseline(env: &Env, turns: &str) -> serde_json::Value {
    baseline_with(env, turns, &[]).await
}

/// A stored baseline run of `turns` turns, `extra` added to `kakeai run` (e.g. the vault).
async fn baseline_with(env: &Env, turns: &str, extra: &[&str]) -> serde_json::Value {
    let a = server(same).await;
    let mut args = vec![
        "run",
        "--headless",
        "--topic",
        "海辺の坂道",
        "--turns",
        turns,
        "--endpoint",
        &a.url,
        "--model",
        "tiny-ja",
    ];
    args.extend(extra);
    let out = run(env, &args).await;
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let first = String::from_utf8_lossy(&out.stdout)
        .lines()
        .next()
        .unwrap()
        .to_string();
    serde_json::from_str(&first).unwrap()
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

const PERSONA: &str =
    "name = \"yana-terse\"\n[characters.yana]\nspeech_style = \"語尾を伸ばして、ゆったり話す\"\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_persona_variant_gives_paired_rows_for_every_turn() {
    let env = Env::new();
    let start = baseline(&env, "6").await;
    let run_id = start["run_id"].to_string();
    let variant = env.file("terse.toml", PERSONA);
    let b = server(same).await;
    let out = run(
        &env,
        &[
            "compare",
            "--run",
            &run_id,
            "--variant",
            &variant,
            "--endpoint",
            &b.url,
            "--model",
            "tiny-ja",
            "--format",
            "json",
            "--samples",
            "2",
            "--fail-on-regression",
        ],
    )
    .await;
    let v = json(&out);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let turns = v["turns"].as_array().unwrap();
    assert_eq!(turns.len(), 6);
    for (i, t) in turns.iter().enumerate() {
        assert_eq!(t["turn"], i + 1);
        assert_eq!(t["b"].as_array().unwrap().len(), 2, "two samples");
        assert!(t["a"]["text"].as_str().unwrap().chars().count() > 3);
        assert!(["better", "same", "worse"].contains(&t["change"].as_str().unwrap()));
        if t["a"]["status"] != "RETRY" {
            assert!(
                t["a"]["judge_mean"].is_number(),
                "A re-judged by the same judge: {t}"
            );
        }
    }
    let s = &v["summary"];
    assert_eq!(s["turns"], 6);
    let total =
        s["better"].as_u64().unwrap() + s["same"].as_u64().unwrap() + s["worse"].as_u64().unwrap();
    assert_eq!(total, 6);
    assert!(s["p_value"].as_f64().unwrap() <= 1.0);
    assert_eq!(s["regression"], false);
    // The variant reached B's prompts: やな's new speech style was sent, and each later turn's
    // prompt carried the baseline's earlier lines (the rebuilt conversation).
    let gens: Vec<Recorded> = b
        .recorded()
        .into_iter()
        .filter(|r| r.path == "/v1/chat/completions" && r.json()["stream"] == true)
        .collect();
    assert!(
        gens.iter()
            .any(|r| r.body.contains("語尾を伸ばして、ゆったり話す"))
    );
    let a5 = turns[4]["a"]["text"].as_str().unwrap();
    let a4 = turns[3]["a"]["text"].as_str().unwrap();
    assert!(
        gens.iter()
            .any(|r| r.body.contains(a5) && r.body.contains(a4)),
        "turn 6 was generated after A's turns 4 and 5"
    );
    // Reopened from the store: the same rows and summary.
    let id = v["comparison"]["id"].to_string();
    // The runs browser's ctrl-o finds it as the baseline run's newest comparison.
    let store = kakeai::store::Store::open(&env.data_db()).unwrap();
    let run_num: i64 = run_id.parse().unwrap();
    assert_eq!(
        kakeai::compare::db::latest_for_run(&store, run_num).unwrap(),
        Some(id.parse().unwrap())
    );
    assert_eq!(
        kakeai::compare::db::latest_for_run(&store, run_num + 1000).unwrap(),
        None
    );
    drop(store);
    let shown = run(&env, &["compare", "--show", &id, "--format", "json"]).await;
    let w = json(&shown);
    assert_eq!(w["turns"], v["turns"]);
    assert_eq!(w["summary"], v["summary"]);
    // And as a table and markdown.
    let t = run(&env, &["compare", "--show", &id, "--format", "table"]).await;
    assert!(String::from_utf8_lossy(&t.stdout).contains("B better on"));
    // B's attempts live in ordinary stored runs (the scorecard reads them).
    let runs = run(&env, &["runs", "--format", "json"]).await;
    assert!(
        String::from_utf8_lossy(&runs.stdout)
            .matches("海辺の坂道")
            .count()
            >= 3
    );
    // …and they are marked as the comparison's samples (issue 23 item 10): `runs` says so, and
    // the workbench opens the newest run to review — the baseline — not a sample.
    let listed: serde_json::Value = serde_json::from_slice(&runs.stdout).unwrap();
    let samples = listed
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["sample"] == format!("compare {id} sample").as_str())
        .count();
    assert_eq!(samples, 2, "{listed}");
    let table = run(&env, &["runs"]).await;
    assert!(String::from_utf8_lossy(&table.stdout).contains(&format!("compare {id} sample")));
    let store = kakeai::store::Store::open(&env.data_db()).unwrap();
    assert_eq!(store.latest_run_id().unwrap(), Some(run_num));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eight_line_variant_is_a_regression() {
    let env = Env::new();
    let start = baseline(&env, "6").await;
    let run_id = start["run_id"].to_string();
    let variant = env.file(
        "long.toml",
        "name = \"long\"\n[characters.yana]\nspeech_style = \"長く話す\"\n",
    );
    let b = server(eight_lines).await;
    let args = [
        "compare",
        "--run",
        &run_id,
        "--variant",
        &variant,
        "--endpoint",
        &b.url,
        "--model",
        "tiny-ja",
        "--format",
        "json",
    ];
    let mut gated = args.to_vec();
    gated.push("--fail-on-regression");
    let out = run(&env, &gated).await;
    let v = json(&out);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}\n{}",
        String::from_utf8_lossy(&out.stderr),
        v["summary"]
    );
    let s = &v["summary"];
    assert_eq!(s["worse"], 6, "{s}");
    assert_eq!(s["regression"], true);
    assert!(s["rules"]["lines"]["b"].as_u64().unwrap() >= 6);
    assert!(s["p_value"].as_f64().unwrap() < 0.05);
    // Without the gate the same result exits 0.
    let out = run(&env, &args).await;
    assert_eq!(out.status.code(), Some(0));
    // Five turns are not enough for significance (p = 0.0625) …
    let mut five = gated.clone();
    five.extend(["--to-turn", "5"]);
    let out = run(&env, &five).await;
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // … unless `lines` must not regress.
    let strict = env.file(
        "strict.toml",
        "must_not_regress = [\"lines\"]\n[characters.yana]\nspeech_style = \"長く話す\"\n",
    );
    let mut s5 = five.clone();
    let i = s5.iter().position(|a| *a == variant.as_str()).unwrap();
    s5[i] = &strict;
    let out = run(&env, &s5).await;
    assert_eq!(out.status.code(), Some(1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_exits_2_and_a_dead_endpoint_3() {
    let env = Env::new();
    let start = baseline(&env, "2").await;
    let run_id = start["run_id"].to_string();
    let bad = env.file("bad.toml", "name = \"x\"\n[duo]\nmax_atempts = 2\n");
    let out = run(&env, &["compare", "--run", &run_id, "--variant", &bad]).await;
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bad.toml:3:1"), "{err}");
    let ok = env.file("ok.toml", PERSONA);
    let out = run(&env, &["compare", "--run", "999", "--variant", &ok]).await;
    assert_eq!(out.status.code(), Some(2));
    let out = run(
        &env,
        &[
            "compare",
            "--run",
            &run_id,
            "--variant",
            &ok,
            "--to-turn",
            "3",
        ],
    )
    .await;
    assert_eq!(out.status.code(), Some(2));
    let out = run(&env, &["compare", "--show", "42"]).await;
    assert_eq!(out.status.code(), Some(2));
    // Nothing listens on port 9 of localhost.
    let out = run(
        &env,
        &[
            "compare",
            "--run",
            &run_id,
            "--variant",
            &ok,
            "--endpoint",
            "http://127.0.0.1:9",
            "--model",
            "x",
        ],
    )
    .await;
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unpaired_mode_compares_distributions_with_intervals() {
    let env = Env::new();
    let s = server(same).await;
    let long = server(eight_lines).await;
    let topics = env.file("topics.txt", "# topics\n海辺の坂道\n商店街のコロッケ\n");
    let a = env.file("a.toml", "name = \"base\"\n");
    let b = env.file(
        "b.toml",
        &format!("name = \"long\"\n[llm]\nendpoint = \"{}\"\n", long.url),
    );
    let out = run(
        &env,
        &[
            "compare",
            "--topics",
            &topics,
            "--variant",
            &a,
            "--variant",
            &b,
            "--runs",
            "2",
            "--turns",
            "2",
            "--endpoint",
            &s.url,
            "--model",
            "tiny-ja",
            "--format",
            "json",
        ],
    )
    .await;
    // --endpoint overrides both sides: both talk to `s`; B's own endpoint is used without it.
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = json(&out);
    assert_eq!(v["unpaired"]["a"]["runs"], 4);
    assert_eq!(v["unpaired"]["a"]["lines"], 8);
    let dead = env.file("dead.toml", "[llm]\nendpoint = \"http://127.0.0.1:9\"\n");
    let out = run(
        &env,
        &[
            "compare",
            "--topics",
            &topics,
            "--variant",
            &dead,
            "--variant",
            &b,
            "--runs",
            "1",
            "--turns",
            "2",
            "--model",
            "tiny-ja",
            "--format",
            "json",
        ],
    )
    .await;
    // Without --endpoint each side uses its own: nothing listens on A's, exit 3.
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let b_only = env.file(
        "a2.toml",
        &format!("name = \"base\"\n[llm]\nendpoint = \"{}\"\n", s.url),
    );
    let out = run(
        &env,
        &[
            "compare",
            "--topics",
            &topics,
            "--variant",
            &b_only,
            "--variant",
            &b,
            "--runs",
            "1",
            "--turns",
            "2",
            "--model",
            "tiny-ja",
            "--format",
            "json",
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
    let pass_a = &v["unpaired"]["a"]["verdicts"]["PASS"];
    let lines_b = &v["unpaired"]["b"]["rules"]["lines"];
    assert_eq!(lines_b["rate"], 1.0, "{v}");
    assert!(lines_b["ci95"][0].as_f64().unwrap() > pass_a["ci95"][0].as_f64().unwrap() - 1.0);
    assert!(
        v["unpaired"]["b"]["verdicts"]["RETRY"]["rate"]
            .as_f64()
            .unwrap()
            > 0.99
    );
    assert!(pass_a["rate"].as_f64().unwrap() > 0.5, "{v}");
}

/// `kakeai ARGS` under a pseudo-terminal (tests/common/terminal.rs), stderr to the terminal
/// or to `err_file`; returns what the terminal showed.
async fn on_terminal(env: &Env, args: &[&str], err_file: Option<&std::path::Path>) -> String {
    let c = env.cmd(args);
    let err = err_file.map(std::path::Path::to_path_buf);
    tokio::task::spawn_blocking(move || common::terminal::on_terminal(&c, None, err.as_deref()))
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_a_terminal_each_turn_is_named_and_off_it_nothing_extra() {
    let env = Env::new();
    let start = baseline(&env, "4").await;
    let run_id = start["run_id"].to_string();
    let variant = env.file("terse.toml", PERSONA);
    let b = server(same).await;
    let args = [
        "compare",
        "--run",
        &run_id,
        "--variant",
        &variant,
        "--endpoint",
        &b.url,
        "--model",
        "tiny-ja",
    ];
    let shown = on_terminal(&env, &args, None).await;
    for t in 1..=4 {
        let speaker = if t % 2 == 1 { "yana" } else { "ayu" };
        let want = format!("turn {t} {speaker}  A ");
        assert!(shown.contains(&want), "no line for turn {t}:\n{shown}");
    }
    assert!(shown.contains("turns"), "the bar names its unit:\n{shown}");
    // --quiet: the table only.
    let mut quiet = args.to_vec();
    quiet.push("--quiet");
    let shown = on_terminal(&env, &quiet, None).await;
    assert!(!shown.contains("turn 1 yana  A "), "{shown}");
    assert!(
        shown.contains("B better on"),
        "the table still comes: {shown}"
    );
    // stderr to a file: nothing of the progress lands there.
    let err = env.dir.path().join("err.txt");
    let shown = on_terminal(&env, &args, Some(&err)).await;
    let logged = std::fs::read_to_string(&err).unwrap();
    assert!(!logged.contains("turn 1 yana"), "{logged}");
    assert!(!logged.contains("ETA"), "{logged}");
    assert!(!shown.contains("turn 1 yana  A "), "{shown}");
}

/// Every file under `from` copied into `to`.
fn copy_tree(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).unwrap();
        }
    }
}

/// A level-0 secret of this vault alone (the bundled sample has nothing like it): やな's key.
const KEY_SECRET: &str = "        - id: SEC-YANA-09
          content: やなは祖父の金の鍵を井戸の底に隠している
          visibility: 0
          readers: {yana: 2}
          importance: critical
          forbidden_keywords:
            - {word: 金の鍵, reading: きんのかぎ}
          subtlety: 7
          section: これからのこと
";

/// A B whose every line names the key.
fn names_the_key(s: &str) -> String {
    format!("金の鍵、{s}")
}

/// Compare uses the baseline's vault (issue 23 item 4), end to end: a run made with
/// `--vault DIR --work W` is compared under that vault, so B uttering its level-0 secret is a
/// leak and `must_not_regress = ["leak"]` fails the comparison (under the bundled sample the
/// word is no secret and nothing would fire); a vault whose files changed since the run is
/// warned about loudly (and judged as it is now); a vault that is gone is refused (exit 2, no
/// comparison, no falling back to the sample).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compare_replays_under_the_runs_own_vault() {
    let env = Env::new();
    let vaults = env.dir.path().join("vaults");
    let sample = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/vault/sisters");
    // Two works, so the run must name its own with --work.
    copy_tree(std::path::Path::new(sample), &vaults.join("plain"));
    let work = vaults.join("seaside");
    copy_tree(std::path::Path::new(sample), &work);
    let vis = work.join("_ai_control/visibility.yaml");
    let text = std::fs::read_to_string(&vis).unwrap();
    let anchor = "          section: これからのこと\n";
    assert!(text.contains(anchor), "the sample's やな secret ends there");
    std::fs::write(
        &vis,
        text.replacen(anchor, &format!("{anchor}{KEY_SECRET}"), 1),
    )
    .unwrap();
    let v = vaults.display().to_string();
    let start = baseline_with(&env, "4", &["--vault", &v, "--work", "seaside"]).await;
    let run_id = start["run_id"].to_string();
    let strict = env.file(
        "strict.toml",
        "name = \"key\"\nmust_not_regress = [\"leak\"]\n[characters.yana]\nspeech_style = \"鍵の話をする\"\n",
    );
    let b = server(names_the_key).await;
    let args = [
        "compare",
        "--run",
        &run_id,
        "--variant",
        &strict,
        "--endpoint",
        &b.url,
        "--model",
        "tiny-ja",
        "--fail-on-regression",
    ];
    let out = run(&env, &args).await;
    let (so, se) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(1), "{so}\n{se}");
    assert!(
        so.contains("must_not_regress: leak fired in B on turn 1"),
        "{so}"
    );
    assert!(so.contains("REGRESSION"), "{so}");
    assert!(
        se.contains(&format!("under run {run_id}'s vault: {}", work.display()))
            && se.contains("(work seaside)"),
        "{se}"
    );
    assert!(!se.contains("WARNING"), "the vault is as it was: {se}");

    // (b) The vault's files changed since the run: a loud warning, and today's files judge.
    std::fs::write(
        work.join("world_settings/町.md"),
        std::fs::read_to_string(work.join("world_settings/町.md")).unwrap() + "\n追記。\n",
    )
    .unwrap();
    let out = run(&env, &args).await;
    let (so, se) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(1), "{so}\n{se}");
    assert!(
        se.contains("kakeai compare: WARNING: the vault changed since the run was made (")
            && se.contains("leaks are judged against today's files"),
        "{se}"
    );
    assert!(so.contains("must_not_regress: leak fired in B"), "{so}");

    // (c) The vault is gone: a clear refusal naming it, nothing compared, no sample vault.
    std::fs::rename(&vaults, env.dir.path().join("moved")).unwrap();
    let out = run(&env, &args).await;
    let (so, se) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(2), "{so}\n{se}");
    assert!(
        se.contains(&format!(
            "run {run_id} was made under the vault at {}, which is gone; pass --vault DIR",
            work.display()
        )),
        "{se}"
    );
    assert!(!se.contains("panicked"), "{se}");
    assert!(so.is_empty(), "{so}");
    let shown = run(&env, &["compare", "--show", "3"]).await;
    assert_eq!(
        shown.status.code(),
        Some(2),
        "no third comparison was stored"
    );
    assert!(String::from_utf8_lossy(&shown.stderr).contains("no comparison 3"));
    // Told another vault, it compares again (under it: the key is no secret in the sample).
    let mut elsewhere = args.to_vec();
    let moved = env.dir.path().join("moved").display().to_string();
    elsewhere.extend(["--vault", &moved, "--work", "plain"]);
    let out = run(&env, &elsewhere).await;
    let so = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{so}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!so.contains("must_not_regress: leak"), "{so}");
}

/// Every line the variant's model says leaks やな's level-0 plan (工房, 海沿い): the leak review
/// rejects each attempt, so compare commits her fallback line — no stored turn, no comparison
/// row and no later prompt of あゆ (who may not know it) carries the secret's words.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_leak_the_variant_says_is_never_committed_nor_carried() {
    fn leaky(s: &str) -> String {
        format!("実は春から海沿いの工房で働くの。{s}")
    }
    let env = Env::new();
    let start = baseline(&env, "4").await;
    let run_id = start["run_id"].to_string();
    let variant = env.file("v.toml", PERSONA);
    let b = server(leaky).await;
    let out = run(
        &env,
        &[
            "compare",
            "--run",
            &run_id,
            "--variant",
            &variant,
            "--endpoint",
            &b.url,
            "--model",
            "tiny-ja",
            "--format",
            "json",
        ],
    )
    .await;
    let v = json(&out);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The lines compared (every "text"); a finding may name the keyword to the prompt engineer.
    let lines = said(&v);
    assert!(lines.len() >= 8, "both sides' lines: {lines:?}");
    for t in lines {
        assert!(!t.contains("工房"), "a compared line carries the leak: {t}");
    }
    let store = kakeai::store::Store::open(&env.data_db()).unwrap();
    let texts: Vec<String> = store
        .db()
        .query_map("SELECT text FROM turns", kakeai::p![], |r| r.get(0))
        .unwrap();
    assert!(!texts.is_empty());
    for t in &texts {
        assert!(
            !t.contains("工房") && !t.contains("海沿い"),
            "a committed turn: {t}"
        );
    }
    let rows: Vec<String> = store
        .db()
        .query_map("SELECT row FROM comparison_turns", kakeai::p![], |r| {
            r.get(0)
        })
        .unwrap();
    assert!(!rows.is_empty(), "the comparison was stored");
    for r in &rows {
        for t in said(&serde_json::from_str(r).unwrap()) {
            assert!(!t.contains("工房"), "a stored comparison line: {t}");
        }
    }
    let asked_ayu: Vec<String> = b
        .recorded()
        .iter()
        .filter(|r| r.path == "/v1/chat/completions" && r.body.contains("あなたは「あゆ」"))
        .map(|r| r.body.clone())
        .collect();
    assert!(!asked_ayu.is_empty(), "あゆ was asked");
    for body in &asked_ayu {
        assert!(
            !body.contains("工房"),
            "あゆ's prompt carries the leak: {body}"
        );
    }
}

/// Every string under a key named "text", at any depth.
fn said(v: &serde_json::Value) -> Vec<String> {
    match v {
        serde_json::Value::Object(m) => m
            .iter()
            .flat_map(|(k, x)| match (k.as_str(), x.as_str()) {
                ("text", Some(t)) => vec![t.to_string()],
                _ => said(x),
            })
            .collect(),
        serde_json::Value::Array(a) => a.iter().flat_map(said).collect(),
        _ => Vec::new(),
    }
}
