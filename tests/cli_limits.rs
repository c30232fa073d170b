//! Issue 22: the 16 MiB line limit in every reader — `check`, `ingest`, `import duo-talk`,
//! `serve --config`, `pii mask`, `safety judge`, `vault review` (64 MiB whole inputs) — on `/dev/zero` (an endless line) and on a file whose second line is
//! 17 MiB: exit 2 naming file:line, within a bounded time (a reader that holds the whole line
//! or reads to the end never returns: the test kills it after 120 s and fails). Peak memory
//! is printed (VmHWM, Linux).

mod cli_env;

use std::io::Read;
use std::process::Stdio;
use std::time::{Duration, Instant};

use cli_env::Env;

/// Runs kakeai with a deadline; (exit code, stderr, peak RSS in MB).
fn run(env: &Env, args: &[&str]) -> (Option<i32>, String, u64) {
    let mut child = env
        .cmd(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn kakeai");
    let pid = child.id();
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut peak = 0;
    loop {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        if let Some(kb) = status
            .lines()
            .find(|l| l.starts_with("VmHWM:"))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|k| k.parse::<u64>().ok())
        {
            peak = peak.max(kb / 1024);
        }
        if let Ok(Some(st)) = child.try_wait() {
            let mut err = String::new();
            let _ = child.stderr.take().unwrap().read_to_string(&mut err);
            return (st.code(), err, peak);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("kakeai {args:?} still running after 120 s (peak {peak} MB)");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn every_reader_refuses_an_endless_or_overlong_line_with_exit_2_at_file_line() {
    let env = Env::new();
    let long = format!(
        "{{\"speaker\":\"yana\",\"text\":\"やっほー\"}}\n{}\n",
        "x".repeat(17 * 1024 * 1024)
    );
    let file = env.file("long.jsonl", &long);
    let cases: Vec<(Vec<&str>, String)> = vec![
        (
            vec!["check", "/dev/zero", "--speaker", "yana"],
            "/dev/zero:1".into(),
        ),
        (
            vec!["check", &file, "--speaker", "yana"],
            format!("{file}:2"),
        ),
        (vec!["ingest", "/dev/zero"], "/dev/zero:1".into()),
        (vec!["ingest", &file], format!("{file}:2")),
        (
            vec!["import", "duo-talk", "/dev/zero"],
            "/dev/zero:1".into(),
        ),
        (vec!["import", "duo-talk", &file], format!("{file}:2")),
        (
            vec!["serve", "--line", "--config", "/dev/zero"],
            "/dev/zero".into(),
        ),
        // Whole-input readers stop at the input limit, line readers at the line limit.
        (vec!["pii", "mask", "/dev/zero"], "/dev/zero".into()),
        (
            vec!["pii", "mask", "/dev/zero", "--format", "jsonl"],
            "/dev/zero:1".into(),
        ),
        (
            vec!["pii", "mask", &file, "--format", "jsonl"],
            format!("{file}:2"),
        ),
        (
            vec!["safety", "judge", "/dev/zero", "--no-llm"],
            "/dev/zero:1".into(),
        ),
        (
            vec!["safety", "judge", &file, "--no-llm"],
            format!("{file}:2"),
        ),
        (
            vec!["vault", "review", "--no-embed", "/dev/zero"],
            "/dev/zero".into(),
        ),
    ];
    for (args, at) in cases {
        let t = Instant::now();
        let (code, err, peak) = run(&env, &args);
        eprintln!(
            "{args:?}: exit {code:?} in {:?}, peak {peak} MB",
            t.elapsed()
        );
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert!(
            err.contains(&at) && err.contains("limit"),
            "{args:?}: {err}"
        );
        assert!(err.len() < 2_000, "{args:?}: a {}-byte error", err.len());
    }
}
