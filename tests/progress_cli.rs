//! Long work shows progress (issue 23 item 14) for `import`, `ingest` and `check` of a large
//! file, through the real binary: on a terminal stderr shows a bar with counts and an ETA; with
//! `--quiet`, or piped, stderr carries nothing extra; stdout is the same bytes all three ways.
//! (`compare` is in compare_cli.rs, `vault probe` in vault_probe.rs, `db copy` in db_cli.rs
//! and pg_store.rs.) Inputs are small and generated, so each test runs in seconds.

mod cli_env;
mod common;

use cli_env::Env;
use common::terminal::three_ways;

/// Removes a store and its journal files, so each way starts from an empty one.
fn remove_store(db: &std::path::Path) {
    for ext in ["", "-wal", "-shm"] {
        let mut p = db.as_os_str().to_owned();
        p.push(ext);
        let _ = std::fs::remove_file(p);
    }
}

#[test]
fn import_shows_a_bar_of_bytes_only_on_a_terminal() {
    let env = Env::new();
    // The duo-talk fixture forty times over, each copy its own run.
    let fixture = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/duotalk/commentary_small.jsonl"
    ))
    .unwrap();
    let big: String = (0..40)
        .map(|i| fixture.replace("run_fx_", &format!("run_fx{i:02}_")))
        .collect();
    let file = env.file("big.jsonl", &big);
    let db = env.dir.path().join("imported.db");
    let d = db.to_str().unwrap();
    let ways = three_ways(
        |args| env.cmd(args),
        &["import", "duo-talk", &file, "--db", d],
        || remove_store(&db),
    );
    ways.assert_progress_only_on_a_terminal(&["import", "KiB"]);
    assert!(
        String::from_utf8_lossy(&ways.piped.stdout).contains("new runs"),
        "{}",
        String::from_utf8_lossy(&ways.piped.stdout)
    );
}

#[test]
fn ingest_counts_messages_only_on_a_terminal() {
    let env = Env::new();
    let mut log = String::new();
    for c in 0..300 {
        for (i, (role, text)) in [("user", "こんばんは"), ("bot", "よろしくね〜")]
            .iter()
            .enumerate()
        {
            log.push_str(
                &serde_json::json!({
                    "conversation_id": format!("c{c}"),
                    "user_id": format!("u-{c}"),
                    "role": role,
                    "text": text,
                    "timestamp": 1_770_000_000 + c * 60 + i as i64 * 4,
                })
                .to_string(),
            );
            log.push('\n');
        }
    }
    let file = env.file("log.jsonl", &log);
    let db = env.dir.path().join("patterns.db");
    let d = db.to_str().unwrap();
    let ways = three_ways(
        |args| env.cmd(args),
        &["ingest", &file, "--db", d, "--as-of", "1780000000"],
        || remove_store(&db),
    );
    ways.assert_progress_only_on_a_terminal(&["ingest", "/600 messages"]);
    assert!(
        String::from_utf8_lossy(&ways.piped.stdout).contains("600 message(s)"),
        "{}",
        String::from_utf8_lossy(&ways.piped.stdout)
    );
}

#[test]
fn check_of_a_large_file_shows_a_bar_only_on_a_terminal() {
    let env = Env::new();
    let lines = [
        ("yana", "ほんと？雨が降るかな？"),
        ("ayu", "姉様、傘は玄関にあります。"),
    ];
    let text: String = (0..3000)
        .map(|i| {
            let (s, t) = lines[i % 2];
            format!(
                "{}\n",
                serde_json::json!({"id": format!("t{i}"), "speaker": s, "text": t})
            )
        })
        .collect();
    let file = env.file("large.jsonl", &text);
    let ways = three_ways(
        |args| env.cmd(args),
        &["check", &file, "--fail-on", "never"],
        || {},
    );
    ways.assert_progress_only_on_a_terminal(&["check", "KiB"]);
    assert_eq!(
        String::from_utf8_lossy(&ways.piped.stdout)
            .lines()
            .filter(|l| l.contains("\"t"))
            .count(),
        3000,
        "a verdict for every line"
    );
}
