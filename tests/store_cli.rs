//! `kakeai import duo-talk`, `runs` and `export` through the real binary, with temp dirs.

use std::path::Path;
use std::process::{Command, Output};

mod cli_env;
use cli_env::Env;

fn fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/duotalk")
        .join(name)
        .display()
        .to_string()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn import_into_the_data_dir_then_again_stores_nothing_new() {
    let env = Env::new();
    let file = fixture("commentary_small.jsonl");
    let o = env.run(&["import", "duo-talk", &file]);
    assert_eq!(o.status.code(), Some(0), "stderr: {}", stderr(&o));
    assert!(
        env.data_db().exists(),
        "the default store lives in KAKEAI_DATA_DIR"
    );
    let out = stdout(&o);
    assert!(
        out.contains("stored 2 new runs, 5 turns, 8 attempts, 1 feedback action"),
        "{out}"
    );
    assert!(out.contains("5 malformed lines skipped"), "{out}");
    let err = stderr(&o);
    let listed: Vec<&str> = err.lines().collect();
    assert_eq!(listed.len(), 5, "{err}");
    assert!(listed[0].starts_with(&format!("{file}:27:")), "{err}");
    assert!(listed[4].starts_with(&format!("{file}:35:")), "{err}");

    let o = env.run(&["import", "duo-talk", &file]);
    assert_eq!(o.status.code(), Some(0));
    assert!(
        stdout(&o).contains("nothing new: all 2 runs were already imported"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn the_json_summary_is_exactly_the_contract() {
    let env = Env::new();
    let db = env.dir.path().join("elsewhere").join("my.db");
    let db = db.to_str().unwrap();
    let c = fixture("commentary_small.jsonl");
    let f = fixture("feedback_small.jsonl");
    let o = env.run(&["import", "duo-talk", &c, &f, "--db", db, "--format", "json"]);
    assert_eq!(o.status.code(), Some(0), "stderr: {}", stderr(&o));
    assert_eq!(
        stdout(&o),
        "{\"runs\": 3, \"turns\": 5, \"attempts\": 8, \"feedback\": 2, \"skipped_lines\": 5}\n"
    );
    assert!(Path::new(db).exists());
    assert!(!env.data_db().exists(), "--db overrides the data dir");
    let o = env.run(&["import", "duo-talk", &c, "--db", db, "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(
        v,
        serde_json::json!({"runs": 0, "turns": 0, "attempts": 0, "feedback": 0, "skipped_lines": 5})
    );
}

#[test]
fn more_than_twenty_bad_lines_are_capped_in_the_listing() {
    let env = Env::new();
    let bad: String = (0..25).map(|i| format!("not json {i}\n")).collect();
    let path = env.dir.path().join("bad.jsonl");
    std::fs::write(&path, bad).unwrap();
    let o = env.run(&[
        "import",
        "duo-talk",
        path.to_str().unwrap(),
        "--format",
        "json",
    ]);
    // Nothing valid in the file: listed, summarised, and exit 2 (issue 17).
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 22, "{err}");
    assert_eq!(err.lines().nth(20), Some("and 5 more skipped lines"));
    assert!(
        err.lines()
            .last()
            .is_some_and(|l| l.contains("nothing valid to import")),
        "{err}"
    );
    assert!(stdout(&o).contains("\"skipped_lines\": 25"));
}

#[test]
fn unreadable_files_and_bad_usage_exit_2() {
    let env = Env::new();
    let missing = env.dir.path().join("nope.jsonl");
    let o = env.run(&["import", "duo-talk", missing.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(err.starts_with("kakeai import: "), "{err}");
    assert!(err.contains("nope.jsonl"), "{err}");
    assert_eq!(err.lines().count(), 1);
    assert!(
        !env.data_db().exists(),
        "nothing is created for a failed import"
    );
    let o = env.run(&["import", "duo-talk"]);
    assert_eq!(o.status.code(), Some(2));
    let o = env.run(&["import", "somewhere-else", "x"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn runs_lists_what_was_imported() {
    let env = Env::new();
    let o = env.run(&["runs"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(stdout(&o).starts_with("no runs yet"), "{}", stdout(&o));
    assert!(!env.data_db().exists(), "listing creates no store");

    env.run(&["import", "duo-talk", &fixture("commentary_small.jsonl")]);
    let o = env.run(&["runs"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 3, "{out}");
    assert!(lines[0].contains("topic") && lines[0].contains("source"));
    // Newest first: run_fx_002 started a day later.
    assert!(lines[1].contains("duo-talk:run_fx_002"), "{out}");
    assert!(lines[2].contains("雨上がりの商店街を歩く"), "{out}");
    assert!(lines[2].contains("gemma2:27b") && lines[2].contains("imported"));

    let o = env.run(&["runs", "--format", "json", "--limit", "1"]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let arr = v.as_array().unwrap();
    assert_eq!(arr.len(), 1);
    assert_eq!(arr[0]["source"], "duo-talk:run_fx_002");
    assert_eq!(arr[0]["turns"], 2);
    assert_eq!(arr[0]["status"], "imported");
}

#[test]
fn export_writes_jsonl_and_markdown_and_refuses_unknown_runs() {
    let env = Env::new();
    let db = env.dir.path().join("x.db");
    let db = db.to_str().unwrap();
    env.run(&[
        "import",
        "duo-talk",
        &fixture("commentary_small.jsonl"),
        "--db",
        db,
    ]);
    let o = env.run(&["runs", "--db", db, "--format", "json"]);
    let runs: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let id = runs
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["source"] == "duo-talk:run_fx_001")
        .unwrap()["id"]
        .to_string();

    let o = env.run(&["export", "--run", &id, "--format", "jsonl", "--db", db]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let recs: Vec<serde_json::Value> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // The header says whether personal data was masked (it is, unless --unmasked).
    assert_eq!(recs[0]["record"], "export");
    assert_eq!(recs[0]["pii"], "masked");
    assert_eq!(recs[1]["record"], "run");
    assert_eq!(recs.iter().filter(|r| r["record"] == "attempt").count(), 6);
    assert_eq!(recs.iter().filter(|r| r["record"] == "turn").count(), 3);
    assert_eq!(recs.iter().filter(|r| r["record"] == "action").count(), 1);

    let md = env.dir.path().join("out").join("run.md");
    std::fs::create_dir_all(md.parent().unwrap()).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_kakeai"))
        .args(["export", "--run", &id, "--format", "md", "--out"])
        .arg(&md)
        .env("KAKEAI_DB", db)
        .env("KAKEAI_DATA_DIR", env.dir.path().join("unused"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).is_empty());
    let text = std::fs::read_to_string(&md).unwrap();
    assert!(
        text.contains("**やな**") && text.contains("**あゆ**"),
        "{text}"
    );
    assert!(text.contains("姉様、本当ですね。雲の形まではっきり見えます。"));

    let o = env.run(&["export", "--run", "9999", "--db", db]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o),
        "kakeai export: no run with id 9999 (see `kakeai runs`)\n"
    );
    let o = env.run(&["export", "--run", "1"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("no store at"), "{}", stderr(&o));
}
