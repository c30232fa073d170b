//! `kakeai vault context` against the real binary: the JSON contract, each sister's view, bad
//! YAML as file:line:col, a property-style check that level-0 text never leaves the vault, and
//! a live run against a fake endpoint that records every request body.

mod common;

#[path = "llm_fake/mod.rs"]
mod llm_fake;

mod cli_env;
use cli_env::Env;

use std::path::Path;

use llm_fake::{FakeServer, Recorded, Reply, openai_reply, parts, sse_events};

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

fn json(out: &std::process::Output) -> serde_json::Value {
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn context_prints_the_contract_for_each_sister_of_the_bundled_sample() {
    let env = Env::new();
    let yana = json(&env.run(&["vault", "context", "--reader", "yana"]));
    let ayu = json(&env.run(&["vault", "context", "--reader", "ayu"]));
    for v in [&yana, &ayu] {
        let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
        assert_eq!(
            keys,
            [
                "context",
                "forbidden_keywords",
                "hints",
                "prompt",
                "withheld"
            ]
        );
        let wh = v["withheld"].as_object().unwrap();
        let total: u64 = wh.values().map(|n| n.as_u64().unwrap()).sum();
        assert_eq!(
            // 15 items plus FS-001's payoff plan, withheld at level 0.
            total,
            16,
            "every item of the sample is counted once: {wh:?}"
        );
        assert!(
            v["context"]
                .as_array()
                .unwrap()
                .iter()
                .any(|c| c["key"] == "characters/あゆ/基本情報")
        );
    }
    let kw = |v: &serde_json::Value| {
        v["forbidden_keywords"]
            .as_array()
            .unwrap()
            .iter()
            .map(|k| k.as_str().unwrap().to_string())
            .collect::<Vec<_>>()
    };
    assert!(kw(&yana).contains(&"工房".to_string()));
    assert!(!kw(&ayu).contains(&"工房".to_string()));
    assert!(!ayu["prompt"].as_str().unwrap().contains("工房"));
    // text is exactly the prompt of the json form.
    let text = env.run(&["vault", "context", "--reader", "ayu", "--format", "text"]);
    let err = String::from_utf8_lossy(&text.stderr);
    let l0 = ayu["withheld"]["level0"].as_u64().unwrap();
    assert!(
        err.contains(&format!("withheld from ayu: {l0} hidden (level 0)")),
        "{err}"
    );
    assert_eq!(
        String::from_utf8_lossy(&text.stdout).trim_end(),
        ayu["prompt"].as_str().unwrap()
    );
    let bad = env.run(&["vault", "context", "--reader", "mika"]);
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn malformed_yaml_and_bad_levels_exit_2_with_a_location() {
    let env = Env::new();
    let root = env.dir.path().join("v");
    write(
        &root,
        "_ai_control/visibility.yaml",
        "entities:\n  characters:\n    やな:\n      sections: {基本: 3\n",
    );
    let out = env.run(&["vault", "context", "--vault", root.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("_ai_control/visibility.yaml:5:"), "{err}");

    write(
        &root,
        "_ai_control/visibility.yaml",
        "entities:\n  characters:\n    やな:\n      sections:\n        基本: 7\n",
    );
    let out = env.run(&["vault", "context", "--vault", root.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("visibility.yaml:5:")
            && err.contains("characters/やな/基本")
            && err.contains("level 7"),
        "{err}"
    );

    write(&root, "_ai_control/visibility.yaml", "entities: {}\n");
    write(
        &root,
        "characters/やな.md",
        "---\nname: [やな\n---\n## 基本\n姉。\n",
    );
    let out = env.run(&["vault", "context", "--vault", root.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("characters/やな.md:"), "{err}");
}

/// A tiny deterministic generator (no dependency needed for a property-style loop).
use common::seeded::Gen as Lcg;

/// A random vault whose every text carries a unique marker `秘<n>文`; returns the markers that
/// are level 0 for everyone (they must never be printed), by reader.
fn random_vault(root: &Path, seed: u64) -> Vec<(Option<&'static str>, String)> {
    let mut r = Lcg::new(seed);
    let mut hidden = Vec::new();
    let mut n = 0;
    let mut mark = || {
        n += 1;
        format!("秘{n}文")
    };
    let mut vis = format!(
        "default_visibility: {}\nentities:\n  characters:\n",
        r.next(2) * 3
    );
    for who in ["やな", "あゆ"] {
        let mut md = String::from("---\nai_visibility:\n");
        let front_default = r.next(4);
        md.push_str(&format!("  default: {front_default}\n---\n"));
        vis.push_str(&format!("    {who}:\n      sections:\n"));
        let mut secrets = String::new();
        for s in 0..4 {
            let name = format!("節{s}");
            let m = mark();
            let marker = r.next(5); // 4 = no marker
            let yaml = r.next(5); // 4 = no yaml entry
            let reader = r.next(3); // 0 none, 1 yana override, 2 ayu override
            let rl = r.next(4);
            md.push_str(&format!("## {name}\n"));
            if marker < 4 {
                md.push_str(&format!("<!-- ai_visibility: {marker} -->\n"));
            }
            md.push_str(&format!("{m}がここに書いてある。\n\n"));
            let mut common = if marker < 4 { marker } else { front_default };
            if yaml < 4 {
                common = yaml;
                let readers = match reader {
                    1 => format!(", readers: {{yana: {rl}}}"),
                    2 => format!(", readers: {{ayu: {rl}}}"),
                    _ => String::new(),
                };
                vis.push_str(&format!("        {name}: {{level: {yaml}{readers}}}\n"));
            }
            for rd in [None, Some("yana"), Some("ayu")] {
                let lvl = match (yaml < 4, reader, rd) {
                    (true, 1, Some("yana")) | (true, 2, Some("ayu")) => rl,
                    _ => common,
                };
                if lvl == 0 {
                    hidden.push((rd, m.clone()));
                    // Level 0 also hides the section name.
                    hidden.push((rd, format!("{who}／{name}")));
                    hidden.push((rd, format!("{who}の{name}")));
                }
            }
        }
        for k in 0..2 {
            let m = mark();
            let lvl = r.next(4);
            let ov = r.next(4);
            secrets.push_str(&format!(
                "        - id: S{who}{k}\n          content: {m}という秘密\n          visibility: {lvl}\n          readers: {{ayu: {ov}}}\n          forbidden_keywords: [{m}語]\n"
            ));
            for rd in [None, Some("yana"), Some("ayu")] {
                let l = if rd == Some("ayu") { ov } else { lvl };
                if l == 0 {
                    hidden.push((rd, m.clone()));
                }
            }
        }
        vis.push_str("      secrets:\n");
        vis.push_str(&secrets);
        write(root, &format!("characters/{who}.md"), &md);
    }
    write(root, "_ai_control/visibility.yaml", &vis);
    hidden
}

#[test]
fn level_zero_text_never_appears_in_any_output_of_vault_context() {
    let env = Env::new();
    let mut checked = 0;
    for seed in 1..=12u64 {
        let root = env.dir.path().join(format!("v{seed}"));
        let hidden = random_vault(&root, seed);
        for (reader, flag) in [
            (None, vec![]),
            (Some("yana"), vec!["--reader", "yana"]),
            (Some("ayu"), vec!["--reader", "ayu"]),
        ] {
            for format in ["json", "text"] {
                let mut args = vec![
                    "vault",
                    "context",
                    "--vault",
                    root.to_str().unwrap(),
                    "--format",
                    format,
                ];
                args.extend(flag.iter().copied());
                let out = env.run(&args);
                assert_eq!(
                    out.status.code(),
                    Some(0),
                    "{}",
                    String::from_utf8_lossy(&out.stderr)
                );
                let all = format!(
                    "{}{}",
                    String::from_utf8_lossy(&out.stdout),
                    String::from_utf8_lossy(&out.stderr)
                );
                for (rd, m) in hidden.iter().filter(|(rd, _)| *rd == reader) {
                    assert!(
                        !all.contains(m.as_str()),
                        "seed {seed} reader {rd:?}: {m} leaked:\n{all}"
                    );
                    checked += 1;
                }
            }
        }
    }
    assert!(
        checked > 100,
        "the generator must produce hidden items ({checked})"
    );
}

/// An OpenAI-compatible fake that answers every chat with the same harmless line.
async fn server() -> FakeServer {
    FakeServer::with(|req: &Recorded, _| match req.path.as_str() {
        "/v1/models" => Reply::json(
            200,
            r#"{"object":"list","data":[{"id":"tiny-ja","object":"model","owned_by":"llamacpp"}]}"#,
        ),
        "/v1/chat/completions" if req.json()["stream"] == true => Reply::sse(parts(&sse_events(
            "tiny-ja",
            &["ねえ、", "あの坂の", "景色、", "いいよね。"],
            "stop",
            4,
        ))),
        "/v1/chat/completions" => Reply::json(
            200,
            &openai_reply(
                "tiny-ja",
                r#"{"frame":4,"roleplay":4,"connection":4,"density":4,"naturalness":4}"#,
                20,
            ),
        ),
        _ => Reply::json(
            404,
            r#"{"error":{"message":"File Not Found","type":"not_found_error","code":404}}"#,
        ),
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_live_run_never_sends_level_zero_text_and_each_sister_gets_her_view() {
    let server = server().await;
    let env = Env::new();
    let root = env.dir.path().join("vault");
    write(
        &root,
        "_ai_control/visibility.yaml",
        "entities:\n  characters:\n    やな:\n      sections:\n        表: 3\n        裏: 0\n      secrets:\n        - id: S-1\n          content: 灯台守の鍵は姉が持っている\n          visibility: 0\n          readers: {yana: 2}\n          forbidden_keywords: [灯台守]\n",
    );
    write(
        &root,
        "characters/やな.md",
        "## 表\n自転車好きの姉。\n\n## 裏\n机の引き出しに青い封筒を隠している。\n",
    );
    let mut c = env.cmd(&[
        "run",
        "--headless",
        "--topic",
        "坂道",
        "--turns",
        "2",
        "--attempts",
        "1",
        "--endpoint",
        &server.url,
        "--model",
        "tiny-ja",
        "--vault",
        root.to_str().unwrap(),
    ]);
    let out = tokio::task::spawn_blocking(move || c.output().unwrap())
        .await
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bodies: Vec<String> = server
        .recorded()
        .into_iter()
        .filter(|r| r.path == "/v1/chat/completions" && r.json()["stream"] == true)
        .map(|r| r.json().to_string())
        .collect();
    assert_eq!(bodies.len(), 2, "one generation per turn");
    for b in &bodies {
        assert!(b.contains("自転車好きの姉"), "level 3 text is sent: {b}");
        assert!(
            !b.contains("青い封筒") && !b.contains("引き出し") && !b.contains("やな／裏"),
            "level 0 leaked: {b}"
        );
    }
    // やな (turn 1) knows S-1 at level 2; あゆ (turn 2) gets nothing of it.
    assert!(bodies[0].contains("灯台守の鍵"), "{}", bodies[0]);
    assert!(!bodies[1].contains("灯台守"), "{}", bodies[1]);
    // The store and the JSON events never carry the hidden section either.
    let db = std::fs::read(env.data_db()).unwrap_or_default();
    assert!(!String::from_utf8_lossy(&db).contains("青い封筒"));
    assert!(!String::from_utf8_lossy(&out.stdout).contains("青い封筒"));
}

#[test]
fn review_prints_result_and_issues_and_exits_by_result() {
    let env = Env::new();
    // The bundled sample: やな's plan to leave (critical, keywords 工房/海沿い/春から).
    let out = env.run_in(
        &["vault", "review", "--no-embed"],
        "あのね、春から海沿いの工房で働くことになったの。\n",
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["result"], "rejected");
    assert_eq!(v["embeddings"]["status"], "disabled");
    let issues = v["issues"].as_array().unwrap();
    let kw: Vec<&serde_json::Value> = issues
        .iter()
        .filter(|i| i["type"] == "forbidden_keyword")
        .collect();
    assert_eq!(kw.len(), 3, "{issues:?}");
    for i in issues {
        for k in [
            "type",
            "severity",
            "location",
            "detail",
            "suggestion",
            "secret_id",
            "span",
        ] {
            assert!(i.get(k).is_some(), "{k} missing in {i}");
        }
        assert_eq!(i["location"], "第1段落");
        // Never the secret's content in the messages.
        assert!(!i["detail"].as_str().unwrap().contains("働くことが決まって"));
    }
    // 工房 sits at chars 11..13 of the original text.
    assert!(
        kw.iter().any(|i| i["span"] == serde_json::json!([11, 13])),
        "{kw:?}"
    );

    let ok = env.run_in(
        &["vault", "review", "--no-embed"],
        "商店街のコロッケ、今日も揚げたてだね。\n",
    );
    assert_eq!(ok.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&ok.stdout).unwrap();
    // No embeddings: never plain "approved" (issue 27). The sample's keywords carry readings,
    // so the fallback analyzer (no dictionary) leaves nothing unchecked there.
    assert_eq!(v["result"], "approved_without_semantic_check");
    assert_eq!(v["unchecked"], serde_json::json!(["semantic_similarity"]));
    assert_eq!(v["readings"]["status"], "not_needed");
    let says = String::from_utf8_lossy(&ok.stderr);
    assert!(
        says.contains("approved without the semantic check"),
        "{says}"
    );

    // An endpoint but no embedding model: the semantic check did not run, and it says why.
    let no_model = env.run_in(
        &["vault", "review", "--endpoint", "http://127.0.0.1:9"],
        "いい天気だね。\n",
    );
    assert_eq!(no_model.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&no_model.stdout).unwrap();
    assert_eq!(v["result"], "approved_without_semantic_check");
    assert_eq!(v["embeddings"]["status"], "skipped");
    assert!(
        v["embeddings"]["reason"]
            .as_str()
            .unwrap()
            .contains("embed_model")
    );
    assert!(!String::from_utf8_lossy(&no_model.stderr).contains("全項目を実施"));

    // Embeddings asked for but no endpoint answers: said so, never pretended.
    let down = env.run_in(
        &[
            "vault",
            "review",
            "--endpoint",
            "http://127.0.0.1:9",
            "--embed-model",
            "e5-small",
        ],
        "いい天気だね。\n",
    );
    assert_eq!(down.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&down.stdout).unwrap();
    assert_eq!(v["embeddings"]["status"], "skipped");
    assert!(
        v["embeddings"]["reason"]
            .as_str()
            .unwrap()
            .contains("127.0.0.1:9")
    );

    // Bad input: not UTF-8, or a missing file → 2.
    let bin = env.dir.path().join("bin.txt");
    std::fs::write(&bin, [0xff, 0xfe, 0x00]).unwrap();
    assert_eq!(
        env.run(&["vault", "review", "--no-embed", bin.to_str().unwrap()])
            .status
            .code(),
        Some(2)
    );
    assert_eq!(
        env.run(&["vault", "review", "--no-embed", "/nonexistent/x.txt"])
            .status
            .code(),
        Some(2)
    );
}

/// A fake whose first line for やな blurts out her secret, and whose retry does not.
async fn leaky_server() -> FakeServer {
    let calls = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    FakeServer::with(move |req: &Recorded, _| match req.path.as_str() {
        "/v1/models" => Reply::json(
            200,
            r#"{"object":"list","data":[{"id":"tiny-ja","object":"model","owned_by":"llamacpp"}]}"#,
        ),
        "/v1/chat/completions" if req.json()["stream"] == true => {
            let n = calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let words: &[&str] = if n == 0 {
                &["ねえ、", "春から", "工房で", "働くんだ！"]
            } else {
                &["ねえ、", "あの坂の", "景色、", "いいよね！"]
            };
            Reply::sse(parts(&sse_events("tiny-ja", words, "stop", 4)))
        }
        "/v1/chat/completions" => Reply::json(
            200,
            &openai_reply(
                "tiny-ja",
                r#"{"frame":4,"roleplay":4,"connection":4,"density":4,"naturalness":4}"#,
                20,
            ),
        ),
        _ => Reply::json(
            404,
            r#"{"error":{"message":"File Not Found","type":"not_found_error","code":404}}"#,
        ),
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_leaking_attempt_is_retried_by_the_leak_rule() {
    let server = leaky_server().await;
    let env = Env::new();
    let mut c = env.cmd(&[
        "run",
        "--headless",
        "--topic",
        "坂道",
        "--turns",
        "1",
        "--attempts",
        "2",
        "--endpoint",
        &server.url,
        "--model",
        "tiny-ja",
    ]);
    let out = tokio::task::spawn_blocking(move || c.output().unwrap())
        .await
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let ev: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let attempts: Vec<&serde_json::Value> =
        ev.iter().filter(|e| e["event"] == "attempt_done").collect();
    assert_eq!(attempts.len(), 2, "{ev:?}");
    assert_eq!(attempts[0]["verdict"], "RETRY");
    let leak: Vec<&serde_json::Value> = attempts[0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "leak")
        .collect();
    assert!(!leak.is_empty(), "{:?}", attempts[0]);
    // やな knows her own plan (level 2 for her): the guidance may name the keyword.
    assert!(
        leak.iter()
            .any(|f| f["message"].as_str().unwrap().contains("工房")),
        "{leak:?}"
    );
    assert!(
        attempts[1]["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| !f["evidence"]
                .as_str()
                .unwrap_or("")
                .starts_with("coverage "))
            .all(|f| f["rule"] != "leak")
    );
    let commit = ev.iter().find(|e| e["event"] == "turn_commit").unwrap();
    assert_eq!(commit["text"], "ねえ、あの坂の景色、いいよね！");
    // The retry prompt carried the leak guidance.
    let bodies: Vec<String> = server
        .recorded()
        .into_iter()
        .filter(|r| r.path == "/v1/chat/completions" && r.json()["stream"] == true)
        .map(|r| r.json().to_string())
        .collect();
    assert!(
        bodies[1].contains("ディレクターからの指示"),
        "{}",
        bodies[1]
    );
}

#[test]
fn a_warning_review_exits_0_and_the_work_sets_the_result_mapping() {
    let env = Env::new();
    let root = env.dir.path().join("v");
    // This work treats a quotation (high) as a warning: only critical issues reject.
    write(
        &root,
        "_ai_control/visibility.yaml",
        "review:\n  reject_at: critical\n  warn_at: medium\nentities:\n  world_settings:\n    町:\n      sections:\n        商店街: 3\n",
    );
    write(
        &root,
        "world_settings/町.md",
        "---\nname: 町\n---\n## 商店街\n駅前から川沿いまで続く商店街には、古い和菓子屋と新しいパン屋が並んでいる。\n",
    );
    let quoting = "ねえ、駅前から川沿いまで続く商店街には、古い和菓子屋があるんだよ。\n";
    let out = env.run_in(
        &[
            "vault",
            "review",
            "--no-embed",
            "--vault",
            root.to_str().unwrap(),
        ],
        quoting,
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["result"], "warning", "{v}");
    let issues = v["issues"].as_array().unwrap();
    assert!(
        issues
            .iter()
            .any(|i| i["type"] == "direct_quotation" && i["severity"] == "high"),
        "{issues:?}"
    );
    // The default mapping rejects the same text.
    write(
        &root,
        "_ai_control/visibility.yaml",
        "entities:\n  world_settings:\n    町:\n      sections:\n        商店街: 3\n",
    );
    let out = env.run_in(
        &[
            "vault",
            "review",
            "--no-embed",
            "--vault",
            root.to_str().unwrap(),
        ],
        quoting,
    );
    assert_eq!(out.status.code(), Some(1));
}

/// `vault init NAME` makes a first work in one step: it loads as written, gives a character
/// only its level-3 section, its sample secret is kept by the leak review, and nothing that
/// exists is ever overwritten.
#[test]
fn vault_init_makes_a_work_that_loads_and_never_overwrites() {
    let env = Env::new();
    let root = env.dir.path().join("vault");
    let r = root.to_str().unwrap();
    let o = env.run(&["vault", "init", "物語", "--vault", r]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let yaml = root.join("物語/_ai_control/visibility.yaml");
    let before = std::fs::read_to_string(&yaml).unwrap();
    let ctx = env.run(&["vault", "context", "--vault", r, "--work", "物語"]);
    let out = String::from_utf8_lossy(&ctx.stdout);
    assert!(ctx.status.success() && out.contains("基本情報"), "{out}");
    assert!(
        !out.contains("旧家") && !out.contains("どのAIの指示文にも入りません"),
        "{out}"
    );
    let leak = env.run_in(
        &[
            "vault",
            "review",
            "--vault",
            r,
            "--work",
            "物語",
            "--no-embed",
        ],
        "旧家の生まれなんだって",
    );
    assert_eq!(
        leak.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&leak.stdout)
    );
    // Again, or with a name that is a path: exit 2 and the work as it was.
    std::fs::write(&yaml, format!("{before}# edited\n")).unwrap();
    for name in ["物語", "../外", "a/b", ".hidden", "_ai_control", ""] {
        let o = env.run(&["vault", "init", name, "--vault", r]);
        assert_eq!(
            o.status.code(),
            Some(2),
            "{name}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert_eq!(
            String::from_utf8_lossy(&o.stderr).trim().lines().count(),
            1,
            "{name}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(&yaml).unwrap(),
        format!("{before}# edited\n")
    );
    assert!(!env.dir.path().join("外").exists());
}

/// A vault that cannot be read — a folder that does not exist, or a visibility.yaml that is a
/// folder (unreadable for anyone, root included) — gets one line on stderr, a non-zero exit and
/// nothing on stdout, from every command that loads it; a run never starts without it.
#[test]
fn an_unreadable_vault_gets_one_line_and_no_output_from_every_command() {
    let env = Env::new();
    let missing = env.dir.path().join("no-such-vault");
    let broken = env.dir.path().join("broken");
    std::fs::create_dir_all(broken.join("_ai_control/visibility.yaml")).unwrap();
    write(&broken, "characters/やな.md", "## 基本\n姉。\n");
    for vault in [&missing, &broken] {
        let v = vault.to_str().unwrap();
        let commands: Vec<(Vec<&str>, &str)> = vec![
            (vec!["vault", "context", "--vault", v], ""),
            (
                vec!["vault", "review", "--no-embed", "--vault", v],
                "こんにちは。\n",
            ),
            (
                vec![
                    "run",
                    "--headless",
                    "--topic",
                    "夏祭り",
                    "--turns",
                    "1",
                    "--endpoint",
                    "http://127.0.0.1:9",
                    "--vault",
                    v,
                ],
                "",
            ),
        ];
        for (args, stdin) in commands {
            let out = env.run_in(&args, stdin);
            let err = String::from_utf8_lossy(&out.stderr);
            let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
            assert!(
                out.status.code().is_some_and(|c| c != 0),
                "{args:?}: exit {:?}\n{err}",
                out.status.code()
            );
            assert_eq!(lines.len(), 1, "{args:?}: not one line:\n{err}");
            assert!(
                lines[0].contains(vault.file_name().unwrap().to_str().unwrap()),
                "{args:?}: the line does not name the vault: {err}"
            );
            assert!(
                out.stdout.is_empty(),
                "{args:?}: printed {:?}",
                String::from_utf8_lossy(&out.stdout)
            );
        }
    }
}
