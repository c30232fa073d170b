//! Issue 23 item 12, through the real binary: a closed pipe ends quietly (0 or SIGPIPE's 141,
//! never a panic's 101 or "bad input" 2); a missing run or interview is an error for every
//! command; JSON Lines error columns count characters; `runs` and `export` agree that a store
//! named with --db does not exist.

use std::os::unix::process::ExitStatusExt;
use std::process::{Output, Stdio};

mod cli_env;
use cli_env::Env;

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Runs `args` with stdout a pipe whose reading end is already closed.
fn into_closed_pipe(env: &Env, args: &[&str]) -> Output {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    env.cmd(args)
        .stdin(Stdio::null())
        .stdout(writer)
        .stderr(Stdio::piped())
        .output()
        .expect("run kakeai")
}

#[test]
fn a_closed_pipe_ends_quietly() {
    let env = Env::new();
    let lines: String = (0..50)
        .map(|i| format!("{{\"speaker\":\"yana\",\"text\":\"ねえ、{i}番目の屋台見た？\"}}\n"))
        .collect();
    let input = env.file("lines.jsonl", &lines);
    for args in [vec![], vec!["runs"], vec!["check", input.as_str()]] {
        let o = into_closed_pipe(&env, &args);
        let quiet = o.status.code() == Some(0) || o.status.signal() == Some(13);
        assert!(
            quiet,
            "kakeai {args:?} | head: {:?}\n{}",
            o.status,
            stderr(&o)
        );
        let err = stderr(&o);
        assert!(
            !err.contains("panicked") && !err.contains("Broken pipe"),
            "{args:?}: {err}"
        );
    }
}

#[test]
fn a_missing_run_or_interview_is_an_error_everywhere() {
    let env = Env::new();
    // A store exists (with no run 99 in it).
    let o = env.run(&["import", "duo-talk", &fixture()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    for args in [
        vec!["export", "--run", "99"],
        vec!["analyze", "--run", "99"],
        vec!["analyze", "--interview", "nosuch"],
    ] {
        let o = env.run(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        let err = stderr(&o);
        assert!(
            err.contains("no run with id 99") || err.contains("no finished interviews"),
            "{args:?}: {err}"
        );
    }
}

fn fixture() -> String {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/duotalk/commentary_small.jsonl")
        .display()
        .to_string()
}

#[test]
fn runs_and_export_agree_that_a_named_store_does_not_exist() {
    let env = Env::new();
    let typo = env.dir.path().join("typo.db").display().to_string();
    let runs = env.run(&["runs", "--db", &typo]);
    let export = env.run(&["export", "--run", "1", "--db", &typo]);
    for (what, o) in [("runs", &runs), ("export", &export)] {
        assert_eq!(o.status.code(), Some(2), "{what}: {}", stderr(o));
        assert!(
            stderr(o).contains(&format!("no store at {typo}")),
            "{what}: {}",
            stderr(o)
        );
    }
    assert!(!std::path::Path::new(&typo).exists(), "nothing was created");
}

#[test]
fn json_lines_error_columns_count_characters() {
    let env = Env::new();
    // The stray `x` is the 34th character (the 44th byte).
    let bad = "{\"speaker\":\"yana\",\"text\":\"あいうえお\" x}\n";
    let f = env.file("bad.jsonl", bad);
    let o = env.run(&["check", &f]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("bad.jsonl:1:34:"), "{}", stderr(&o));
    let o = env.run_in(&["check", "-"], bad);
    assert!(stderr(&o).contains("<stdin>:1:34:"), "{}", stderr(&o));
}
