//! `kakeai db status | migrate` on the SQLite store (issue 24 §1): status reads without
//! changing anything and says what `migrate` would apply; migrate brings an old store to the
//! newest schema, refuses a newer one, and never creates a store unasked.

mod cli_env;
mod common;
use cli_env::Env;

fn user_version(p: &std::path::Path) -> i64 {
    rusqlite::Connection::open(p)
        .unwrap()
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap()
}

fn json(out: &std::process::Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

#[test]
fn status_changes_nothing_and_migrate_brings_an_old_store_up() {
    let env = Env::new();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("old.db");
    // A store from before kakeai's first migration: an empty SQLite file.
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute_batch("PRAGMA user_version = 0; CREATE TABLE notes (x TEXT);")
        .unwrap();
    let d = db.to_str().unwrap();
    let out = env
        .cmd(&["db", "status", "--json", "--db", d])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "pending migrations exit 1");
    let s = json(&out);
    assert_eq!(s["schema_version"], 0);
    let latest = s["latest"].as_i64().unwrap();
    assert_eq!(s["pending"].as_array().unwrap().len() as i64, latest);
    assert_eq!(user_version(&db), 0, "status must not migrate");
    let out = env.cmd(&["db", "migrate", "--db", d]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(&format!("from schema version 0 to {latest}")),
        "{text}"
    );
    assert_eq!(user_version(&db), latest);
    let out = env.cmd(&["db", "status", "--db", d]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("(up to date)") && text.contains("runs"),
        "{text}"
    );
    assert!(
        text.contains("notes"),
        "a table of its own is listed too: {text}"
    );
    // Again: nothing to do.
    let out = env.cmd(&["db", "migrate", "--db", d]).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("already at"));
}

#[test]
fn a_newer_store_is_reported_and_never_downgraded() {
    let env = Env::new();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("new.db");
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute_batch("PRAGMA user_version = 999;")
        .unwrap();
    let d = db.to_str().unwrap();
    let out = env.cmd(&["db", "status", "--db", d]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("newer kakeai"));
    let out = env.cmd(&["db", "migrate", "--db", d]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(user_version(&db), 999);
}

#[test]
fn a_missing_store_is_an_error_and_is_created_only_when_asked() {
    let env = Env::new();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("none.db");
    let d = db.to_str().unwrap();
    for args in [
        vec!["db", "status", "--db", d],
        vec!["db", "migrate", "--db", d],
    ] {
        let out = env.cmd(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(!db.exists(), "{args:?} created the store");
    }
    let out = env
        .cmd(&["db", "migrate", "--create", "--db", d])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(db.exists());
}

/// `db copy`: every run exports the same from the copy; a copy never overwrites, a leftover
/// `.partial` from a killed copy is started over, and a URL is refused.
#[test]
fn a_copy_exports_every_run_the_same_and_never_overwrites() {
    let env = Env::new();
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src.db");
    let s = src.to_str().unwrap();
    let fixture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/duotalk/commentary_small.jsonl"
    );
    let out = env
        .cmd(&["import", "duo-talk", fixture, "--db", s])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let dst = dir.path().join("copy.db");
    // A killed copy left its partial file behind.
    std::fs::write(dir.path().join("copy.partial"), b"half a page").unwrap();
    let d = dst.to_str().unwrap();
    let out = env.cmd(&["db", "copy", s, d]).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("integrity ok"));
    assert!(!dir.path().join("copy.partial").exists());
    let export = |db: &str, run: &str| {
        env.cmd(&["export", "--run", run, "--db", db])
            .output()
            .unwrap()
            .stdout
    };
    for run in ["1", "2"] {
        let a = export(s, run);
        assert!(!a.is_empty(), "run {run} exports something");
        assert_eq!(
            a,
            export(d, run),
            "run {run} exports the same from the copy"
        );
    }
    let again = env.cmd(&["db", "copy", s, d]).output().unwrap();
    assert_eq!(again.status.code(), Some(2), "never overwrites");
    // A PostgreSQL URL is a database (tests/pg_store.rs copies there and back); where none
    // answers, the copy says so (exit 3) and writes nothing anywhere.
    let url = env
        .cmd(&[
            "db",
            "copy",
            s,
            "postgres://kakeai:pw@localhost/kakeai?host=/nonexistent-kakeai-socket",
        ])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(url.status.code(), Some(3));
    assert!(!String::from_utf8_lossy(&url.stderr).contains("pw@"));
    assert!(!dir.path().join("postgres:").exists());
}

/// `db copy` shows a bar of pages with an ETA on a terminal (issue 23 item 14), nothing extra
/// with `--quiet` or piped, and prints the same either way.
#[test]
fn a_copy_shows_a_bar_only_on_a_terminal() {
    let env = Env::new();
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src.db");
    {
        let mut store = kakeai::store::Store::open(&src).unwrap();
        common::stores::committed_runs(
            &mut store,
            3,
            40,
            6,
            &[
                kakeai::director::Status::Pass,
                kakeai::director::Status::Retry,
            ],
        );
    }
    let dst = dir.path().join("copy.db");
    let ways = common::terminal::three_ways(
        |args| env.cmd(args),
        &["db", "copy", src.to_str().unwrap(), dst.to_str().unwrap()],
        || {
            let _ = std::fs::remove_file(&dst);
        },
    );
    // A bar with its total and an ETA (the spinner it was had neither).
    ways.assert_progress_only_on_a_terminal(&["copying [", " pages"]);
    assert!(String::from_utf8_lossy(&ways.piped.stdout).contains("integrity ok"));
}

/// `db backup FILE` (the operator's backup while the bot serves): the default store (the data
/// dir's) copied whole into a new 0600 file in a 0700 dir it creates, under any umask the
/// test runs with; never over an existing file; it names the PII key to keep with it.
#[cfg(unix)]
#[test]
fn a_backup_is_private_whole_and_never_overwrites() {
    use std::os::unix::fs::PermissionsExt;
    let env = Env::new();
    let fixture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/duotalk/commentary_small.jsonl"
    );
    let out = env.run(&["import", "duo-talk", fixture]);
    assert_eq!(out.status.code(), Some(0));
    let db = env.data_db();
    // A store someone made readable by others: the copy is private all the same.
    std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o644)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("backups").join("kakeai-2026-11-28.db");
    let f = file.to_str().unwrap();
    let out = env.run(&["db", "backup", f]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains("integrity ok") && text.contains("pii.key"),
        "{text}"
    );
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&file), 0o600);
    assert_eq!(mode(file.parent().unwrap()), 0o700);
    let export = |db: &str| env.run(&["export", "--run", "1", "--db", db]).stdout;
    let original = export(db.to_str().unwrap());
    assert!(!original.is_empty());
    assert_eq!(original, export(f));
    let before = std::fs::read(&file).unwrap();
    let again = env.run(&["db", "backup", f]);
    assert_eq!(again.status.code(), Some(2), "never overwrites");
    assert_eq!(std::fs::read(&file).unwrap(), before);
    // `db copy` between files is private too.
    let copy = dir.path().join("copy.db");
    let out = env.run(&["db", "copy", f, copy.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(mode(&copy), 0o600);
}
