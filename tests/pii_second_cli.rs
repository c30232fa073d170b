//! The model's second opinion on personal data in the batch commands, through the real binary:
//! `kakeai ingest` and `kakeai export` (jsonl, md, sft) ask it about each text they mask when
//! llm.toml names a model and policy.toml's `[pii] llm` (or `--pii-llm`) is not "off". A fake
//! OpenAI-compatible model masks names the rules miss; a closed port plays a server that is
//! down; a model that answers nonsense plays one whose answer cannot be read.

#[path = "llm_fake/mod.rs"]
mod llm_fake;

mod cli_env;
mod common;

use std::process::Output;
use std::time::SystemTime;

use cli_env::Env;
use common::seeded::Gen;
use kakeai::director::Status;
use kakeai::duo::TurnFlags;
use kakeai::store::{AttemptOutcome, NewAttempt, NewRun, Store, TurnCommit};
use llm_fake::{FakeServer, Recorded, Reply, openai_reply};
use serde_json::{Value, json};

/// Names in hiragana the fake model masks; the rules miss them in [`MISSED`].
const NAMES: [&str; 4] = ["みさき", "はると", "ゆいな", "そうた"];
/// Frames where the rules leave a hiragana name alone (checked by the `off` runs below).
const MISSED: [&str; 3] = [
    "昨日、{}と映画を見た。",
    "{}とカフェ行ったよ",
    "駅で{}を待ってる",
];
/// Frames of any kind, some with a phone number the rules catch.
const FRAMES: [&str; 5] = [
    "{}に聞いてみる",
    "電話は090-1234-5678です。{}にも伝えて",
    "うん、{}も一緒",
    "明日は{}と買い物",
    "{}が来るって言ってた",
];

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The text kakeai's PII second opinion showed the model, or None for any other request.
fn shown_text(req: &Recorded) -> Option<String> {
    let head = kakeai::safety::pii::LLM_SYSTEM_PROMPT.lines().next()?;
    let v: Value = serde_json::from_str(&req.body).ok()?;
    let joined: Vec<&str> = v["messages"]
        .as_array()?
        .iter()
        .filter_map(|m| m["content"].as_str())
        .collect();
    let joined = joined.join("\n");
    if !joined.contains(head) {
        return None;
    }
    let marker = kakeai::safety::pii::llm_user_prompt("");
    Some(joined.rsplit_once(marker.as_str())?.1.to_string())
}

/// How the fake model answers.
#[derive(Clone, Copy, PartialEq)]
enum Model {
    /// Masks every name of [`NAMES`] it is shown.
    Names,
    /// Answers with words that are not the three lines.
    Nonsense,
}

async fn model(kind: Model) -> FakeServer {
    FakeServer::with(move |req: &Recorded, _| {
        let Some(text) = shown_text(req) else {
            return Reply::json(404, r#"{"error":"not found"}"#);
        };
        let answer = match kind {
            Model::Nonsense => "すみません、よく分かりません。".to_string(),
            Model::Names => {
                let masked = NAMES
                    .iter()
                    .fold(text.clone(), |t, n| t.replace(n, "[氏名]"));
                format!(
                    "PII_DETECTED: {}\nMASKED_TEXT: {masked}\nDETECTED_ITEMS: 氏名",
                    masked != text
                )
            }
        };
        Reply::json(200, &openai_reply("tiny-ja", &answer, 20))
    })
    .await
}

/// A URL nobody listens at.
fn down_url() -> String {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    format!("http://{}", l.local_addr().unwrap())
}

/// llm.toml naming the model at `url` (None: no llm.toml), and policy.toml's `[pii] llm`
/// (None: the built-in policy, fail-closed).
fn configure(env: &Env, url: Option<&str>, policy: Option<&str>) {
    let config = env.dir.path().join("config");
    std::fs::create_dir_all(config.join("safety")).unwrap();
    if let Some(url) = url {
        let toml = format!(
            "endpoint = \"{url}/v1\"\nmodel = \"tiny-ja\"\nretry_backoff_ms = 5\n\
             [timeouts]\nconnect_ms = 500\nrequest_ms = 2000\nrestart_ms = 500\n"
        );
        std::fs::write(config.join("llm.toml"), toml).unwrap();
    }
    if let Some(mode) = policy {
        let toml = format!("[pii]\nllm = \"{mode}\"\nllm_seconds = 2\n");
        std::fs::write(config.join("safety").join("policy.toml"), toml).unwrap();
    }
}

async fn run(env: &Env, args: &[&str]) -> Output {
    let mut c = env.cmd(args);
    tokio::task::spawn_blocking(move || c.output().unwrap())
        .await
        .unwrap()
}

/// A generated log: conversations of user and bot lines, user lines naming someone (the first
/// in a frame the rules miss), bot lines too; returns (jsonl, user lines, bot lines).
fn log(seed: u64) -> (String, usize, usize) {
    let mut g = Gen::new(seed);
    let (mut lines, mut users, mut bots) = (Vec::new(), 0, 0);
    let mut t = 1_769_947_200i64;
    for c in 0..1 + g.next(3) {
        for k in 0..2 + g.next(4) {
            let name = *g.pick(&NAMES);
            let user = k % 2 == 0;
            let frame = if users == 0 || g.chance(40) {
                *g.pick(&MISSED)
            } else {
                *g.pick(&FRAMES)
            };
            let text = if user {
                frame.replace("{}", name)
            } else {
                format!("{name}ちゃんによろしくね")
            };
            users += usize::from(user);
            bots += usize::from(!user);
            t += 60;
            lines.push(
                json!({"conversation_id": format!("c{seed}-{c}"), "user_id": format!("u{c}"),
                       "role": if user { "user" } else { "bot" }, "text": text, "timestamp": t})
                .to_string(),
            );
        }
    }
    (lines.join("\n") + "\n", users, bots)
}

/// Every stored message: (role, text, source).
fn stored(env: &Env) -> Vec<(String, String, String)> {
    if !env.data_db().exists() {
        return Vec::new();
    }
    let db = rusqlite::Connection::open(env.data_db()).unwrap();
    let mut q = db
        .prepare("SELECT role, text, source FROM conversation_messages ORDER BY message_id")
        .unwrap();
    q.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

fn has_name(text: &str) -> bool {
    NAMES.iter().any(|n| text.contains(n))
}

/// Generated logs: with a model configured (and the built-in policy, fail-closed) every user
/// line is asked about once, bot lines never, the model sees no phone number the rules
/// caught, and no stored user line keeps a name; with `[pii] llm = "off"` nothing is sent and
/// the names the rules miss are stored as they are (so the model's additions are what masked
/// them).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ingest_stores_what_the_second_opinion_adds_and_off_sends_nothing() {
    for seed in 0..4u64 {
        let server = model(Model::Names).await;
        let (jsonl, users, bots) = log(seed);
        let env = Env::new();
        configure(&env, Some(&server.url), None);
        let file = env.file("chat.jsonl", &jsonl);
        let o = run(&env, &["ingest", &file]).await;
        assert_eq!(o.status.code(), Some(0), "seed {seed}: {}", stderr(&o));
        let rows = stored(&env);
        assert_eq!(rows.len(), users + bots, "seed {seed}");
        for (role, text, _) in &rows {
            if role == "user" {
                assert!(!has_name(text), "seed {seed}: {text}");
            }
        }
        let asked: Vec<String> = server.recorded().iter().filter_map(shown_text).collect();
        assert_eq!(asked.len(), users, "seed {seed}: one request per user line");
        assert!(
            asked.iter().all(|t| !t.contains("ちゃんによろしく")),
            "{asked:?}"
        );
        assert!(asked.iter().all(|t| !t.contains("090-1234")), "{asked:?}");

        let quiet = model(Model::Names).await;
        let env = Env::new();
        configure(&env, Some(&quiet.url), Some("off"));
        let file = env.file("chat.jsonl", &jsonl);
        let o = run(&env, &["ingest", &file]).await;
        assert_eq!(o.status.code(), Some(0), "seed {seed}: {}", stderr(&o));
        assert!(
            quiet.recorded().is_empty(),
            "seed {seed}: off sends nothing"
        );
        let first_user = stored(&env).into_iter().find(|r| r.0 == "user").unwrap();
        assert!(has_name(&first_user.1), "the rules miss it: {first_user:?}");
    }
}

/// The flag decides per run: `--pii-llm off` sends nothing even with a policy that asks, and
/// `--pii-llm fail-closed` asks even with `[pii] llm = "off"`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_flag_overrides_the_policy_for_one_run() {
    let (jsonl, users, _) = log(7);
    let server = model(Model::Names).await;
    let env = Env::new();
    configure(&env, Some(&server.url), Some("fail-closed"));
    let file = env.file("chat.jsonl", &jsonl);
    let o = run(&env, &["ingest", &file, "--pii-llm", "off"]).await;
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(server.recorded().is_empty());
    let env = Env::new();
    configure(&env, Some(&server.url), Some("off"));
    let file = env.file("chat.jsonl", &jsonl);
    let o = run(&env, &["ingest", &file, "--pii-llm", "fail-closed"]).await;
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(server.recorded().len(), users);
}

/// A server that is down, or a model whose answer cannot be read, in fail-closed: nothing is
/// stored, exit 3, stderr names the first user line (file:line) and why. In fail-open the
/// ingest goes on with the rules' masking and says how many lines were not checked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_check_that_cannot_run_stops_ingest_when_fail_closed_and_is_counted_when_open() {
    let nonsense = model(Model::Nonsense).await;
    for (url, why) in [
        (down_url(), None),
        (nonsense.url.clone(), Some("PII_DETECTED")),
    ] {
        for seed in [11u64, 12] {
            let (jsonl, users, bots) = log(seed);
            // The first user line: the file's first line whose role is user.
            let first = jsonl
                .lines()
                .position(|l| l.contains("\"role\":\"user\""))
                .unwrap()
                + 1;
            let env = Env::new();
            configure(&env, Some(&url), Some("fail-closed"));
            let file = env.file("chat.jsonl", &jsonl);
            let o = run(&env, &["ingest", &file]).await;
            let err = stderr(&o);
            assert_eq!(o.status.code(), Some(3), "{err}");
            assert!(err.contains(&format!("chat.jsonl:{first}: ")), "{err}");
            assert!(err.contains("nothing ingested"), "{err}");
            assert!(why.is_none_or(|w| err.contains(w)), "{err}");
            assert!(stored(&env).is_empty(), "nothing stored");

            let env = Env::new();
            configure(&env, Some(&url), Some("fail-open"));
            let file = env.file("chat.jsonl", &jsonl);
            let o = run(&env, &["ingest", &file]).await;
            let err = stderr(&o);
            assert_eq!(o.status.code(), Some(0), "{err}");
            assert!(
                err.contains(&format!("{users} of {users} text(s)")),
                "{err}"
            );
            assert_eq!(stored(&env).len(), users + bots);
        }
    }
}

/// A run in the store whose topic, lines, attempts and stored requests name people in frames
/// the rules miss; each committed line passed the Director (an SFT record each). Returns the
/// run id.
fn named_run(env: &Env, seed: u64) -> i64 {
    std::fs::create_dir_all(env.data_db().parent().unwrap()).unwrap();
    let mut s = Store::open(&env.data_db()).unwrap();
    let mut g = Gen::new(seed);
    let topic = MISSED[0].replace("{}", NAMES[0]);
    let run = s
        .create_run(&NewRun {
            topic: topic.clone(),
            model: Some("tiny".into()),
            endpoint: None,
            api: None,
            options: json!({}),
            persona_version: None,
            ruleset_version: Some("r-1".into()),
        })
        .unwrap();
    for turn in 1..=2 + g.next(3) as u32 {
        let sp = if turn % 2 == 1 { "yana" } else { "ayu" };
        let name = NAMES[g.next(NAMES.len() as u64) as usize];
        let text = g.pick(&MISSED).replace("{}", name);
        let id = s
            .start_attempt(&NewAttempt {
                run_id: run,
                turn,
                speaker: sp.into(),
                attempt: 1,
                text: text.clone(),
                tokens: 1,
                guidance: None,
                prompt_hash: None,
                started_at: SystemTime::now(),
                first_token_ms: Some(1),
            })
            .unwrap();
        let outcome = AttemptOutcome {
            status: Some(Status::Pass),
            verdict: Some(json!({"status": "PASS", "findings": []})),
            tokens: Some(3),
            ..AttemptOutcome::done(text.clone())
        };
        s.finish_attempt(id, &outcome).unwrap();
        let name = NAMES[g.next(NAMES.len() as u64) as usize];
        let asked = g.pick(&MISSED).replace("{}", name);
        let user = format!("【話題】{topic}\n{asked}");
        let req = json!({"messages": [
            {"role": "system", "content": format!("あなたは「{sp}」です。")},
            {"role": "user", "content": user}
        ], "options": {"backend": "live"}});
        s.save_request(id, &req).unwrap();
        s.commit_turn(&TurnCommit {
            run_id: run,
            turn,
            speaker: sp.into(),
            attempt_id: Some(id),
            text,
            status: Status::Pass,
            flags: TurnFlags::default(),
            hook: None,
            hook_depth: None,
        })
        .unwrap();
    }
    run
}

/// The three exports of a generated run, each to its own file: (format, args).
fn exports(env: &Env, run: i64) -> Vec<(&'static str, Vec<String>)> {
    let out = |name: &str| env.dir.path().join(name).display().to_string();
    ["jsonl", "md", "sft"]
        .into_iter()
        .map(|f| {
            let args = vec![
                "export".to_string(),
                "--run".into(),
                run.to_string(),
                "--format".into(),
                f.into(),
                "--out".into(),
                out(&format!("out.{f}")),
            ];
            (f, args)
        })
        .collect()
}

fn written(env: &Env, format: &str) -> Option<String> {
    std::fs::read_to_string(env.dir.path().join(format!("out.{format}"))).ok()
}

/// Generated runs: with a model configured every export writes the names masked (the model's
/// additions) and asks about each distinct text once; with `--pii-llm off` the same exports
/// keep the names the rules miss and send nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exports_write_what_the_second_opinion_adds() {
    for seed in 0..3u64 {
        let server = model(Model::Names).await;
        let env = Env::new();
        let run_id = named_run(&env, seed);
        configure(&env, Some(&server.url), None);
        for (format, args) in exports(&env, run_id) {
            let before = server.recorded().len();
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let o = run(&env, &args).await;
            assert_eq!(o.status.code(), Some(0), "{format}: {}", stderr(&o));
            let text = written(&env, format).unwrap();
            assert!(!has_name(&text), "seed {seed} {format}: {text}");
            assert!(text.contains("[氏名]"), "{format}: {text}");
            let asked: Vec<String> = server.recorded()[before..]
                .iter()
                .filter_map(shown_text)
                .collect();
            let distinct: std::collections::HashSet<&String> = asked.iter().collect();
            assert!(!asked.is_empty(), "{format}");
            assert_eq!(distinct.len(), asked.len(), "{format}: each text once");
        }
        let quiet = model(Model::Names).await;
        configure(&env, Some(&quiet.url), None);
        for (format, mut args) in exports(&env, run_id) {
            args.extend(["--pii-llm".to_string(), "off".to_string()]);
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let o = run(&env, &args).await;
            assert_eq!(o.status.code(), Some(0), "{format}: {}", stderr(&o));
            assert!(has_name(&written(&env, format).unwrap()), "{format}");
        }
        assert!(quiet.recorded().is_empty());
    }
}

/// A server that is down, or an answer that cannot be read, in fail-closed: every export exits
/// 3 naming why and writes no file (nor leaves a partial one), to a file or to stdout; in
/// fail-open it writes the rules' masking and says how many texts went unchecked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exports_refuse_when_fail_closed_and_count_when_open() {
    let nonsense = model(Model::Nonsense).await;
    for url in [down_url(), nonsense.url.clone()] {
        let env = Env::new();
        let run_id = named_run(&env, 5);
        configure(&env, Some(&url), Some("fail-closed"));
        for (format, args) in exports(&env, run_id) {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let o = run(&env, &args).await;
            let err = stderr(&o);
            assert_eq!(o.status.code(), Some(3), "{format}: {err}");
            assert!(err.contains("could not check"), "{err}");
            assert!(err.contains("nothing written"), "{err}");
            assert_eq!(written(&env, format), None, "{format}: no file");
            let left: Vec<_> = std::fs::read_dir(env.dir.path())
                .unwrap()
                .filter_map(|e| e.ok())
                .filter(|e| e.file_name().to_string_lossy().contains("partial"))
                .collect();
            assert!(left.is_empty(), "{format}: {left:?}");
        }
        let id = run_id.to_string();
        let o = run(&env, &["export", "--run", &id]).await;
        assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
        assert!(o.stdout.is_empty(), "nothing on stdout");

        configure(&env, Some(&url), Some("fail-open"));
        for (format, args) in exports(&env, run_id) {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let o = run(&env, &args).await;
            let err = stderr(&o);
            assert_eq!(o.status.code(), Some(0), "{format}: {err}");
            assert!(err.contains("were not checked"), "{err}");
            assert!(written(&env, format).is_some(), "{format}");
        }
    }
}

/// Without llm.toml the policy's fail-closed asks no model: ingest and export work as before.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_configured_model_nothing_is_asked() {
    let env = Env::new();
    configure(&env, None, Some("fail-closed"));
    let (jsonl, users, bots) = log(3);
    let file = env.file("chat.jsonl", &jsonl);
    let o = run(&env, &["ingest", &file]).await;
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stored(&env).len(), users + bots);
    let run_id = named_run(&env, 1);
    for (format, args) in exports(&env, run_id) {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = run(&env, &args).await;
        assert_eq!(o.status.code(), Some(0), "{format}: {}", stderr(&o));
    }
}
