//! Issue 26 §4 and issue 27 (small items), against the real binary: `vault review` on a fresh
//! install builds the IPADIC dictionary on first use as `check` does and then rejects kana
//! spellings; without a dictionary no line is approved on that basis; `vault scorecard` into a
//! closed pipe ends quietly and lines its columns up by display width.

mod cli_env;

use std::process::{Command, Stdio};

use cli_env::Env;

const KANA: [&str; 4] = [
    "おうけの話",
    "オウケの話",
    "ｲｷﾉｺﾘだって",
    "いきのこりだって",
];

fn vault(env: &Env, keywords: &str) -> String {
    let root = env.dir.path().join("vault");
    std::fs::create_dir_all(root.join("_ai_control")).unwrap();
    std::fs::write(
        root.join("_ai_control/visibility.yaml"),
        format!("default_visibility: 3\nentities:\n  characters:\n    リナ:\n      secrets:\n        - id: SEC-HEIR\n          content: リナは滅びた王家の生き残り\n          visibility: 2\n          forbidden_keywords: {keywords}\n"),
    )
    .unwrap();
    root.display().to_string()
}

fn review(env: &Env, vault: &str, text: &str, analyzer: &str) -> (serde_json::Value, String) {
    let mut c = env.cmd(&["vault", "review", "--no-embed", "--vault", vault]);
    c.env("KAKEAI_ANALYZER", analyzer);
    let mut child = c
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    let v = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {stderr}"));
    (v, stderr)
}

#[test]
fn a_fresh_install_builds_the_dictionary_on_first_use_and_rejects_kana() {
    if !cli_env::has_ipadic_sources("fresh-install") {
        return;
    }
    let env = Env::new();
    let v = vault(&env, "[王家, 生き残り]");
    let (first, stderr) = review(&env, &v, KANA[0], "auto");
    assert!(
        stderr.contains("building the IPADIC dictionary"),
        "{stderr}"
    );
    assert_eq!(first["result"], "rejected", "{first}");
    assert_eq!(first["readings"]["status"], "checked");
    for text in &KANA[1..] {
        let (r, stderr) = review(&env, &v, text, "auto");
        assert!(!stderr.contains("building"), "built once: {stderr}");
        assert_eq!(r["result"], "rejected", "{text}: {r}");
    }
}

#[test]
fn without_a_dictionary_no_line_is_approved_and_writer_readings_work() {
    let env = Env::new();
    let v = vault(&env, "[王家, 生き残り]");
    for text in KANA.iter().chain(&["いい天気だね"]) {
        let (r, stderr) = review(&env, &v, text, "fallback");
        assert_eq!(r["result"], "warning", "{text}: {r}");
        assert!(
            r["unchecked"]
                .as_array()
                .unwrap()
                .iter()
                .any(|c| c == "readings")
        );
        assert!(stderr.contains("かな読みの照合"), "{stderr}");
    }
    let env = Env::new();
    let v = vault(
        &env,
        "[{word: 王家, reading: おうけ}, {word: 生き残り, reading: いきのこり}]",
    );
    for text in KANA {
        let (r, _) = review(&env, &v, text, "fallback");
        assert_eq!(r["result"], "rejected", "{text}: {r}");
    }
}

#[test]
fn the_scorecard_into_a_closed_pipe_does_not_panic() {
    let env = Env::new();
    let bin = env!("CARGO_BIN_EXE_kakeai");
    let d = env.dir.path().display().to_string();
    // `true` never reads and exits at once: the scorecard's writes get EPIPE (old code: rc 101).
    let out = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "set -o pipefail; KAKEAI_DATA_DIR={d}/data KAKEAI_CONFIG_DIR={d}/config KAKEAI_ANALYZER=fallback {bin} vault scorecard | true; echo rc=$?"
        ))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    // A closed pipe ends quietly: 0, or 141 (SIGPIPE, as `kakeai | head` does since issue 23).
    assert!(
        stdout.contains("rc=0") || stdout.contains("rc=141"),
        "{stdout} {stderr}"
    );
}
