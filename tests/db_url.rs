//! A URL is never a file name (issue 24): every command that takes `--db` (or `KAKEAI_DB`)
//! uses a `postgresql://` URL (here nothing answers: exit 3, one line naming the URL with its
//! password as `***`), any other scheme is refused (exit 2), and none creates anything in the
//! current directory.

mod cli_env;
use cli_env::Env;

const URLS: [&str; 3] = [
    "postgresql://kakeai:hunter2@localhost/kakeai?host=/run/postgresql&port=5433",
    "postgres://kakeai@db.example:5432/kakeai?password=hunter2&sslmode=require",
    "mysql://root:hunter2@db/kakeai",
];

fn commands(url: &str) -> Vec<Vec<String>> {
    let v = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    vec![
        v(&["run", "--headless", "--topic", "海", "--db", url]),
        v(&["runs", "--db", url]),
        v(&["export", "--run", "1", "--db", url]),
        v(&["compare", "--show", "1", "--db", url]),
        v(&["queue", "list", "--db", url]),
        v(&["patterns", "list", "--db", url]),
        v(&["import", "duo-talk", "/dev/null", "--db", url]),
        v(&["db", "status", "--db", url]),
        v(&["db", "migrate", "--create", "--db", url]),
    ]
}

#[test]
fn a_database_url_is_used_or_refused_by_every_command_and_never_becomes_a_file() {
    let env = Env::new();
    let cwd = tempfile::tempdir().unwrap();
    for url in URLS {
        for args in commands(url) {
            let refs: Vec<&str> = args.iter().map(String::as_str).collect();
            let out = env
                .cmd(&refs)
                .current_dir(cwd.path())
                .stdin(std::process::Stdio::null())
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            // Every command tries a PostgreSQL URL: nothing answers here, exit 3.
            let reaches = url.starts_with("postgres");
            let code = if reaches { 3 } else { 2 };
            assert_eq!(out.status.code(), Some(code), "{args:?}: {err}");
            assert!(
                !err.contains("hunter2"),
                "{args:?} printed the password: {err}"
            );
            assert!(err.contains("***"), "{args:?}: {err}");
            // A PostgreSQL URL is used (issue 24): here nothing answers, and they say so;
            // another scheme is refused.
            let said = if reaches {
                err.contains("cannot use this PostgreSQL database")
            } else {
                err.contains("never taken as a file name") || err.contains("is not a store")
            };
            assert!(said, "{args:?}: {err}");
        }
        // Through the environment too, for a run's export and a dataset export.
        let out = env
            .cmd(&["export", "--run", "1"])
            .env("KAKEAI_DB", url)
            .current_dir(cwd.path())
            .output()
            .unwrap();
        let code = if url.starts_with("postgres") { 3 } else { 2 };
        assert_eq!(out.status.code(), Some(code));
        let out = env
            .cmd(&["export", "--format", "sft", "--out", "x.jsonl"])
            .env("KAKEAI_DB", url)
            .current_dir(cwd.path())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{err}");
        assert!(!err.contains("hunter2"), "{err}");
    }
    let left: Vec<_> = std::fs::read_dir(cwd.path()).unwrap().collect();
    assert!(
        left.is_empty(),
        "created in the current directory: {left:?}"
    );
}
