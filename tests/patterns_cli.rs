//! `kakeai patterns …` and `kakeai ingest` through the real binary: output shapes, exit codes
//! (0 ok, 1 nothing found / nothing changed, 2 bad input, 3 endpoint failure), all-or-nothing
//! writes, and the counterfactual draft → accept loop against a fake endpoint.

#[path = "llm_fake/mod.rs"]
mod llm_fake;

use std::process::Output;

use llm_fake::{FakeServer, Recorded, Reply, openai_reply};

mod cli_env;
use cli_env::Env;

const STARTER: &str = "assets/patterns/starter.jsonl";

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn json(o: &Output) -> serde_json::Value {
    serde_json::from_str(stdout(o).trim()).unwrap_or_else(|e| panic!("{e}: {}", stdout(o)))
}

fn ok(o: Output) -> Output {
    assert_eq!(o.status.code(), Some(0), "stderr: {}", stderr(&o));
    o
}

fn list(env: &Env) -> Vec<serde_json::Value> {
    let o = ok(env.run(&["patterns", "list", "--format", "json"]));
    json(&o).as_array().unwrap().clone()
}

#[test]
fn import_list_and_reimport() {
    let env = Env::new();
    assert!(list(&env).is_empty(), "no store yet: an empty list");
    assert!(!env.data_db().exists(), "listing does not create the store");
    let o = ok(env.run(&["patterns", "import", STARTER]));
    assert_eq!(stdout(&o), "imported 13 pattern(s)\n");
    assert!(
        env.data_db().exists(),
        "the default store is the data dir's kakeai.db"
    );
    let all = list(&env);
    assert_eq!(all.len(), 13);
    let keys: Vec<&str> = all[0]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    for k in [
        "pattern_id",
        "character",
        "user_message_type",
        "user_message_example",
        "bot_response",
        "bot_response_type",
        "used_count",
        "success_count",
        "failure_count",
        "like_count",
        "dislike_count",
        "is_counterfactual",
        "success_rate",
        "like_rate",
        "score",
        "rank",
    ] {
        assert!(keys.contains(&k), "{k} in {keys:?}");
    }
    assert_eq!(all[0]["rank"], "D");
    let ayu = ok(env.run(&["patterns", "list", "--character", "ayu", "--format", "json"]));
    assert!(
        json(&ayu)
            .as_array()
            .unwrap()
            .iter()
            .all(|p| p["character"] == "ayu")
    );
    // Re-import: each duplicate named by line, nothing written, exit 1.
    let o = env.run(&["patterns", "import", STARTER]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(
        err.contains(&format!("{STARTER}:1: duplicate of pattern 1")),
        "{err}"
    );
    assert!(
        err.contains(&format!("{STARTER}:13: duplicate of pattern 13")),
        "{err}"
    );
    assert!(
        err.lines().all(|l| l.starts_with("kakeai patterns: ")),
        "{err}"
    );
    assert_eq!(list(&env).len(), 13);
    let o = ok(env.run(&[
        "patterns",
        "import",
        STARTER,
        "--skip-duplicates",
        "--format",
        "json",
    ]));
    assert_eq!(json(&o)["imported"], serde_json::json!([]));
}

#[test]
fn a_bad_pattern_file_writes_nothing_and_names_every_line() {
    let env = Env::new();
    let file = env.file(
        "bad.jsonl",
        concat!(
            r#"{"character": "yana", "user_message_type": "からかい", "user_message_example": "やなって寝坊助", "bot_response": "寝坊は才能だもん！", "bot_response_type": "プロレス受け"}"#,
            "\n",
            r#"{"character": "mio", "user_message_type": "からかい", "user_message_example": "x", "bot_response": "y", "bot_response_type": "流し"}"#,
            "\n",
            r#"{"character": "ayu", "user_message_type": "からかい", "user_message_example": "x", "bot_response": " ", "bot_response_type": "流し"}"#,
            "\n",
            r#"{"character": "ayu", "user_message_type": "からかい", "user_message_example": "x", "bot_response": "y", "bot_response_type": "ツッコミ"}"#,
            "\n",
        ),
    );
    let o = env.run(&["patterns", "import", &file]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains(&format!("{file}:2:2: character: unknown character \"mio\"")),
        "{err}"
    );
    assert!(
        err.contains(&format!("{file}:3:")) && err.contains("bot_response: must not be empty"),
        "{err}"
    );
    assert!(
        err.contains(&format!("{file}:4:")) && err.contains("\"ツッコミ\""),
        "{err}"
    );
    assert!(err.contains("nothing imported"), "{err}");
    assert!(!err.contains(&format!("{file}:1:")), "{err}");
    assert!(list(&env).is_empty());
}

#[test]
fn export_round_trips_through_another_store() {
    let env = Env::new();
    ok(env.run(&["patterns", "import", STARTER]));
    let log = ok(env.run(&[
        "patterns",
        "use",
        "--pattern",
        "2",
        "--at",
        "2026-02-01T12:00:00Z",
        "--format",
        "json",
    ]));
    let log_id = json(&log)["log_id"].as_i64().unwrap().to_string();
    ok(env.run(&["patterns", "feedback", "--log", &log_id, "--value", "+1"]));
    let first = stdout(&ok(env.run(&["patterns", "export"])));
    assert_eq!(first.lines().count(), 13);
    let line2: serde_json::Value = serde_json::from_str(first.lines().nth(1).unwrap()).unwrap();
    assert_eq!(
        (line2["used_count"].as_i64(), line2["like_count"].as_i64()),
        (Some(1), Some(1))
    );
    assert!(
        line2.get("pattern_id").is_none(),
        "the file has the seed's columns only"
    );
    let file = env.file("export.jsonl", &first);
    let other = env.dir.path().join("other.db").display().to_string();
    ok(env.run(&["patterns", "import", &file, "--db", &other]));
    let second = stdout(&ok(env.run(&["patterns", "export", "--db", &other])));
    assert_eq!(first, second);
    // KAKEAI_DB names the store as --db does.
    let via_env = env
        .cmd(&["patterns", "export"])
        .env("KAKEAI_DB", &other)
        .output()
        .unwrap();
    assert_eq!(stdout(&via_env), first);
}

#[test]
fn best_use_outcome_and_feedback() {
    let env = Env::new();
    ok(env.run(&["patterns", "import", STARTER]));
    let best = |msg: &str| {
        env.run(&[
            "patterns",
            "best",
            "--character",
            "yana",
            "--message",
            msg,
            "--format",
            "json",
        ])
    };
    // Fresh patterns have no successes: none qualifies.
    let none = best("やなって方向音痴だよね");
    assert_eq!(none.status.code(), Some(1));
    assert_eq!(stdout(&none), "null\n");
    // Pattern 5 answers twice within the window, once the user stays quiet.
    let mut logs = Vec::new();
    for at in [
        "2026-02-01T12:00:00Z",
        "2026-02-01T13:00:00Z",
        "2026-02-01T14:00:00Z",
    ] {
        let o = ok(env.run(&[
            "patterns",
            "use",
            "--pattern",
            "5",
            "--at",
            at,
            "--format",
            "json",
        ]));
        logs.push(json(&o)["log_id"].as_i64().unwrap().to_string());
    }
    let o = ok(env.run(&[
        "patterns",
        "outcome",
        "--log",
        &logs[0],
        "--reply-at",
        "2026-02-01T21:29:00+09:00",
        "--continued",
        "--format",
        "json",
    ]));
    assert_eq!(
        json(&o),
        serde_json::json!({"outcome": "success", "reaction_time_seconds": 1740, "continued": true, "log_id": logs[0].parse::<i64>().unwrap()})
    );
    ok(env.run(&[
        "patterns",
        "outcome",
        "--log",
        &logs[1],
        "--reply-at",
        "2026-02-01T13:00:30Z",
    ]));
    // Silence: pending while the window is open (exit 1), then a failure.
    let pending = env.run(&[
        "patterns",
        "outcome",
        "--log",
        &logs[2],
        "--no-reply",
        "--as-of",
        "2026-02-01T14:10:00Z",
    ]);
    assert_eq!(pending.status.code(), Some(1));
    assert!(
        stderr(&pending).contains("still open"),
        "{}",
        stderr(&pending)
    );
    let o = ok(env.run(&[
        "patterns",
        "outcome",
        "--log",
        &logs[2],
        "--no-reply",
        "--as-of",
        "2026-02-01T14:30:00Z",
        "--format",
        "json",
    ]));
    assert_eq!(json(&o)["outcome"], "failure");
    let again = env.run(&["patterns", "outcome", "--log", &logs[2], "--no-reply"]);
    assert_eq!(again.status.code(), Some(2));
    assert!(
        stderr(&again).contains("already has its outcome"),
        "{}",
        stderr(&again)
    );
    // 2/3 < 0.7: still nothing at the seed's threshold; at 0.6 pattern 5 answers.
    assert_eq!(best("うるさいなあ").status.code(), Some(1));
    let o = ok(env.run(&[
        "patterns",
        "best",
        "--character",
        "yana",
        "--message",
        "やなってほんとうるさい",
        "--min-success",
        "0.6",
        "--format",
        "json",
    ]));
    let chosen = json(&o);
    assert_eq!(chosen["pattern_id"], 5);
    assert_eq!(chosen["used_count"], 3);
    assert!(chosen["relevance"].as_f64().unwrap() > 0.5);
    assert!(chosen["score"].as_f64().unwrap() > 0.0);
    let table = ok(env.run(&[
        "patterns",
        "best",
        "--character",
        "yana",
        "--message",
        "x",
        "--min-success",
        "0.6",
    ]));
    assert!(
        stdout(&table).contains("あはは、よく言われる！"),
        "{}",
        stdout(&table)
    );
    assert_eq!(
        env.run(&[
            "patterns",
            "best",
            "--character",
            "ayu",
            "--message",
            "x",
            "--min-success",
            "0.6"
        ])
        .status
        .code(),
        Some(1)
    );
    // Feedback: 👍 then 👎 on the same row moves the vote; anything else is refused.
    let fb = |v: &str| {
        env.run(&[
            "patterns", "feedback", "--log", &logs[0], "--value", v, "--format", "json",
        ])
    };
    let o = ok(fb("👍"));
    assert_eq!(json(&o)["pattern"]["like_count"], 1);
    let o = ok(fb("-1"));
    let p = &json(&o)["pattern"];
    assert_eq!(
        (p["like_count"].as_i64(), p["dislike_count"].as_i64()),
        (Some(0), Some(1))
    );
    for bad in ["0", "2", "good"] {
        let o = fb(bad);
        assert_eq!(o.status.code(), Some(2), "{bad}");
        assert!(
            stderr(&o).starts_with("kakeai patterns: feedback must be +1 (👍) or -1 (👎)"),
            "{}",
            stderr(&o)
        );
    }
    assert_eq!(fb("1").status.code(), Some(0));
    let unknown = env.run(&["patterns", "feedback", "--log", "999", "--value", "1"]);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(stderr(&unknown).contains("no usage-log row with id 999"));
}

#[test]
fn add_checks_its_input() {
    let env = Env::new();
    let add = |extra: &[&str]| {
        let mut args = vec![
            "patterns",
            "add",
            "--message-type",
            "からかい",
            "--example",
            "やなって食いしん坊",
        ];
        args.extend_from_slice(extra);
        env.run(&args)
    };
    let o = ok(add(&[
        "--character",
        "yana",
        "--type",
        "uke",
        "--response",
        "食べるの大好きだもん！",
        "--format",
        "json",
    ]));
    let p = json(&o);
    assert_eq!(
        (p["pattern_id"].as_i64(), p["bot_response_type"].as_str()),
        (Some(1), Some("プロレス受け"))
    );
    let dup = add(&[
        "--character",
        "yana",
        "--type",
        "流し",
        "--response",
        "食べるの大好きだもん！",
    ]);
    assert_eq!(dup.status.code(), Some(2));
    assert!(
        stderr(&dup).contains("already exists (pattern 1)"),
        "{}",
        stderr(&dup)
    );
    let who = add(&["--character", "mio", "--type", "流し", "--response", "x"]);
    assert_eq!(who.status.code(), Some(2));
    assert!(stderr(&who).contains("use yana or ayu"), "{}", stderr(&who));
    let empty = add(&["--character", "ayu", "--type", "流し", "--response", "  "]);
    assert_eq!(empty.status.code(), Some(2));
    assert!(
        stderr(&empty).contains("bot_response: must not be empty"),
        "{}",
        stderr(&empty)
    );
    let kind = add(&["--character", "ayu", "--type", "ボケ", "--response", "x"]);
    assert_eq!(kind.status.code(), Some(2));
    assert_eq!(list(&env).len(), 1);
}

fn log_line(conv: &str, role: &str, text: &str, at: &str, extra: serde_json::Value) -> String {
    let mut v = serde_json::json!({"conversation_id": conv, "user_id": "u-1", "role": role, "text": text, "timestamp": at});
    if let (Some(o), Some(e)) = (v.as_object_mut(), extra.as_object()) {
        o.extend(e.clone());
    }
    v.to_string()
}

#[test]
fn ingest_reports_bad_lines_and_finds_dropouts() {
    let env = Env::new();
    ok(env.run(&["patterns", "import", STARTER]));
    let bad = env.file(
        "bad.jsonl",
        &[
            log_line(
                "c1",
                "user",
                "やっほー",
                "2026-02-01T21:00:00+09:00",
                serde_json::json!({}),
            ),
            log_line(
                "c1",
                "robot",
                "どうも",
                "2026-02-01T21:00:05+09:00",
                serde_json::json!({}),
            ),
        ]
        .join("\n"),
    );
    let o = env.run(&["ingest", &bad]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).starts_with(&format!("kakeai ingest: {bad}:2:")),
        "{}",
        stderr(&o)
    );
    let empty = ok(env.run(&[
        "patterns",
        "dropouts",
        "--format",
        "json",
        "--as-of",
        "2026-02-02T00:00:00Z",
    ]));
    assert_eq!(json(&empty), serde_json::json!([]));
    let good = env.file(
        "good.jsonl",
        &[
            log_line(
                "c1",
                "user",
                "やなってほんと方向音痴だよね",
                "2026-02-01T21:00:00+09:00",
                serde_json::json!({}),
            ),
            log_line(
                "c1",
                "bot",
                "ちがうもん！",
                "2026-02-01T21:00:05+09:00",
                serde_json::json!({"pattern_id": 1}),
            ),
            log_line(
                "c2",
                "user",
                "私は山本です、よろしく",
                "2026-02-01T22:00:00+09:00",
                serde_json::json!({}),
            ),
            log_line(
                "c2",
                "bot",
                "よろしくね〜",
                "2026-02-01T22:00:04+09:00",
                serde_json::json!({"character": "yana"}),
            ),
        ]
        .join("\n"),
    );
    let o = ok(env.run(&[
        "ingest",
        &good,
        "--as-of",
        "2026-02-02T00:00:00Z",
        "--format",
        "json",
    ]));
    let r = json(&o);
    assert_eq!(
        (
            r["messages"].as_i64(),
            r["uses"].as_i64(),
            r["failures"].as_i64(),
            r["masked"].as_i64()
        ),
        (Some(4), Some(1), Some(1), Some(1))
    );
    let d = ok(env.run(&[
        "patterns",
        "dropouts",
        "--format",
        "json",
        "--as-of",
        "2026-02-02T00:00:00Z",
    ]));
    let d = json(&d);
    let d = d.as_array().unwrap();
    assert_eq!(d.len(), 2);
    assert_eq!(d[0]["bot_text"], "ちがうもん！");
    assert_eq!(d[0]["user_text"], "やなってほんと方向音痴だよね");
    assert_eq!(d[1]["user_text"], "私は[氏名]です、よろしく");
    let table = ok(env.run(&["patterns", "dropouts", "--as-of", "2026-02-02T00:00:00Z"]));
    assert!(
        stdout(&table).contains("ちがうもん！"),
        "{}",
        stdout(&table)
    );
    let p1 = &list(&env)
        .into_iter()
        .find(|p| p["pattern_id"] == 1)
        .unwrap();
    assert_eq!(
        (p1["used_count"].as_i64(), p1["failure_count"].as_i64()),
        (Some(1), Some(1))
    );
}

/// An OpenAI-compatible endpoint whose chat answers are `answers` in turn.
async fn drafting_server(answers: Vec<String>) -> FakeServer {
    FakeServer::with(move |req: &Recorded, _| match req.path.as_str() {
        "/v1/models" => Reply::json(
            200,
            r#"{"object":"list","data":[{"id":"tiny-ja","object":"model"}]}"#,
        ),
        "/v1/chat/completions" => {
            let asked = req.json()["messages"].as_array().map_or(0, Vec::len);
            // The first call has one message; a re-ask has three.
            let i = if asked > 1 { 1 } else { 0 };
            Reply::json(
                200,
                &openai_reply("tiny-ja", &answers[i.min(answers.len() - 1)], 40),
            )
        }
        _ => Reply::json(404, r#"{"error":"not found"}"#),
    })
    .await
}

async fn run(env: &Env, args: &[&str]) -> Output {
    let mut c = env.cmd(args);
    tokio::task::spawn_blocking(move || c.output().unwrap())
        .await
        .unwrap()
}

fn dropout_env() -> (Env, String) {
    let env = Env::new();
    let log = env.file(
        "log.jsonl",
        &[
            log_line(
                "c9",
                "user",
                "あゆって料理へたそう",
                "2026-02-01T12:00:00Z",
                serde_json::json!({}),
            ),
            log_line(
                "c9",
                "bot",
                "そうですか。",
                "2026-02-01T12:00:03Z",
                serde_json::json!({"character": "ayu"}),
            ),
        ]
        .join("\n"),
    );
    ok(env.run(&["ingest", &log, "--as-of", "2026-02-02T00:00:00Z"]));
    let d = ok(env.run(&[
        "patterns",
        "dropouts",
        "--format",
        "json",
        "--as-of",
        "2026-02-02T00:00:00Z",
    ]));
    let id = json(&d)[0]["dropout_id"].as_i64().unwrap().to_string();
    (env, id)
}

const DRAFTS: &str = r#"はい、どうぞ。
```json
{"user_message_type": "からかい", "drafts": [
 {"bot_response_type": "プロレス受け", "text": "はい、目玉焼きが毎回スクランブルになります。"},
 {"bot_response_type": "流し", "text": "ふふ、練習中ということにしておいてください。まだまだ修行中なんです。"},
 {"bot_response_type": "カウンター", "text": "では、あなたの得意料理を教えていただけますか？"}]}
```"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn draft_asks_the_llm_and_accept_keeps_a_counterfactual() {
    let server = drafting_server(vec!["案を考えています…".into(), DRAFTS.into()]).await;
    let (env, id) = dropout_env();
    let o = run(
        &env,
        &[
            "patterns",
            "draft",
            "--dropout",
            &id,
            "--endpoint",
            &server.url,
            "--model",
            "tiny-ja",
            "--as-of",
            "2026-02-02T00:00:00Z",
            "--format",
            "json",
        ],
    )
    .await;
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let d = json(&o);
    assert_eq!(d["character"], "ayu");
    assert_eq!(d["user_message_type"], "からかい");
    assert_eq!(d["drafts"][2]["bot_response_type"], "カウンター");
    // The unreadable first answer was re-asked once; the prompt carried both lines.
    let chats: Vec<Recorded> = server
        .recorded()
        .into_iter()
        .filter(|r| r.path == "/v1/chat/completions")
        .collect();
    assert_eq!(chats.len(), 2);
    let prompt = chats[0].json()["messages"][0]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        prompt.contains("あゆって料理へたそう") && prompt.contains("そうですか。"),
        "{prompt}"
    );
    let listed = ok(env.run(&[
        "patterns",
        "dropouts",
        "--format",
        "json",
        "--as-of",
        "2026-02-02T00:00:00Z",
    ]));
    assert_eq!(json(&listed)[0]["drafts"], 3);
    let o = ok(env.run(&[
        "patterns",
        "accept",
        "--dropout",
        &id,
        "--type",
        "流し",
        "--as-of",
        "2026-02-02T00:00:00Z",
        "--format",
        "json",
    ]));
    let p = json(&o);
    assert_eq!(p["is_counterfactual"], true);
    assert_eq!(p["character"], "ayu");
    assert_eq!(
        p["bot_response"],
        "ふふ、練習中ということにしておいてください。まだまだ修行中なんです。"
    );
    assert_eq!(p["user_message_example"], "あゆって料理へたそう");
    let o = ok(env.run(&[
        "patterns",
        "accept",
        "--dropout",
        &id,
        "--type",
        "カウンター",
        "--text",
        "では、今度一緒に作ってみませんか？きっと楽しいですよ。",
        "--as-of",
        "2026-02-02T00:00:00Z",
    ]));
    assert!(
        stdout(&o).starts_with("added counterfactual pattern 2"),
        "{}",
        stdout(&o)
    );
    let all = list(&env);
    assert_eq!(all.len(), 2);
    assert!(all.iter().all(|p| p["is_counterfactual"] == true));
    let not = env.run(&[
        "patterns",
        "accept",
        "--dropout",
        "1",
        "--type",
        "流し",
        "--text",
        "x",
        "--as-of",
        "2026-02-02T00:00:00Z",
    ]);
    assert_eq!(not.status.code(), Some(2));
    assert!(
        stderr(&not).contains("is not a dropout"),
        "{}",
        stderr(&not)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn draft_exits_3_when_the_endpoint_fails_or_cannot_be_read() {
    let (env, id) = dropout_env();
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let down = format!("http://127.0.0.1:{port}");
    let o = run(
        &env,
        &[
            "patterns",
            "draft",
            "--dropout",
            &id,
            "--endpoint",
            &down,
            "--as-of",
            "2026-02-02T00:00:00Z",
        ],
    )
    .await;
    assert_eq!(o.status.code(), Some(3));
    assert!(
        stderr(&o).starts_with("kakeai patterns: "),
        "{}",
        stderr(&o)
    );
    let server = drafting_server(vec!["すみません、できません。".into()]).await;
    let o = run(
        &env,
        &[
            "patterns",
            "draft",
            "--dropout",
            &id,
            "--endpoint",
            &server.url,
            "--model",
            "tiny-ja",
            "--as-of",
            "2026-02-02T00:00:00Z",
        ],
    )
    .await;
    assert_eq!(o.status.code(), Some(3));
    assert!(
        stderr(&o).contains("could not be read twice"),
        "{}",
        stderr(&o)
    );
    let d = ok(env.run(&[
        "patterns",
        "dropouts",
        "--format",
        "json",
        "--as-of",
        "2026-02-02T00:00:00Z",
    ]));
    assert_eq!(
        json(&d)[0]["drafts"],
        0,
        "nothing stored from a failed draft"
    );
}

/// Issue 27: a reply the bot would never say (the Director or L5 calls it RETRY) is refused by
/// `add`, `import` (at file:line, nothing imported) and `accept`; generated over several rules.
#[test]
fn replies_the_director_rejects_are_refused_by_add_import_and_accept() {
    let bad: &[(&str, &str)] = &[
        ("yana", "あたしAIだから、そういうのは開発者に言って！"),
        ("yana", "姉様、それってほんと？"),
        (
            "yana",
            "ですます調でお答えいたします。よろしくお願いいたします。",
        ),
        ("ayu", "わたしはAIなので、開発者に聞いてくださいね。"),
        ("ayu", "ふふ、練習中ということにしておいてください。"),
    ];
    let env = Env::new();
    for (who, text) in bad {
        let o = env.run(&[
            "patterns",
            "add",
            "--character",
            who,
            "--message-type",
            "からかい",
            "--example",
            "バカだなぁ笑",
            "--type",
            "流し",
            "--response",
            text,
        ]);
        assert_eq!(o.status.code(), Some(2), "{text}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("not added") && stderr(&o).contains("RETRY"),
            "{}",
            stderr(&o)
        );
    }
    assert!(list(&env).is_empty(), "nothing stored");
    let good = r#"{"character": "yana", "user_message_type": "からかい", "user_message_example": "やなってバカだなぁ笑", "bot_response": "はぁ？バカって言ったほうがバカなんだからね！", "bot_response_type": "プロレス受け"}"#;
    for (k, (who, text)) in bad.iter().enumerate() {
        let rec = serde_json::json!({"character": who, "user_message_type": "からかい",
            "user_message_example": "バカだなぁ笑", "bot_response": text, "bot_response_type": "流し"});
        let file = env.file("p.jsonl", &format!("{good}\n{rec}\n"));
        let o = env.run(&["patterns", "import", &file]);
        assert_eq!(o.status.code(), Some(2), "{k}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("p.jsonl:2: bot_response"),
            "{}",
            stderr(&o)
        );
        assert!(list(&env).is_empty(), "nothing imported");
    }
    let (env, id) = dropout_env();
    let o = env.run(&[
        "patterns",
        "accept",
        "--dropout",
        &id,
        "--type",
        "流し",
        "--text",
        "わたしはAIなので、開発者に聞いてくださいね。",
        "--as-of",
        "2026-02-02T00:00:00Z",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("not added"), "{}", stderr(&o));
    assert!(list(&env).is_empty());
}
