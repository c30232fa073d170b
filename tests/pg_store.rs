//! The store on PostgreSQL (issue 24 §1), against a throwaway cluster started from the system's
//! own binaries (tests/common/pg.rs): the schema conforms to SQLite's table for table and column
//! for column, both engines accept and refuse the same rows, `db status | migrate | copy` work
//! on a URL, a copy there and back is lossless (every run exports the same), a copy killed
//! half-way goes on when run again, and a password is never printed.

mod common;
#[path = "llm_fake/mod.rs"]
mod llm_fake;

use std::collections::BTreeMap;
use std::process::Command;

use common::pg::PgCluster;
use kakeai::director::Status;
use kakeai::store::Store;
use kakeai::store::pg::{Pg, migrate};
use kakeai::store::target::{Target, classify};

fn kakeai() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_kakeai"));
    c.env_remove("KAKEAI_DB").env("NO_COLOR", "1");
    c
}

fn pg(url: &str) -> Pg {
    match classify(std::path::Path::new(url)).expect("a URL") {
        Target::Postgres(u) => Pg::connect(&u).expect("connects"),
        Target::File(_) => panic!("{url} read as a file"),
    }
}

/// Column name → declared type, per table, from an SQLite store at the latest schema.
fn sqlite_schema(path: &std::path::Path) -> BTreeMap<String, BTreeMap<String, String>> {
    let conn = rusqlite::Connection::open(path).unwrap();
    let names: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    names
        .into_iter()
        .map(|t| {
            let cols: BTreeMap<String, String> = conn
                .prepare(&format!("PRAGMA table_xinfo(\"{t}\")"))
                .unwrap()
                .query_map([], |r| Ok((r.get(1)?, r.get::<_, String>(2)?)))
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap();
            (t, cols)
        })
        .collect()
}

fn pg_schema(p: &Pg) -> BTreeMap<String, BTreeMap<String, String>> {
    let rows: Vec<(String, String, String)> = p
        .block(async |c| {
            let rows = c
                .query(
                    "SELECT table_name::text, column_name::text, data_type::text
                     FROM information_schema.columns WHERE table_schema = current_schema()
                       AND table_name NOT LIKE 'kakeai\\_%'",
                    &[],
                )
                .await?;
            Ok(rows
                .iter()
                .map(|r| (r.get(0), r.get(1), r.get(2)))
                .collect())
        })
        .unwrap();
    let mut out: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    for (t, c, ty) in rows {
        out.entry(t).or_default().insert(c, ty);
    }
    out
}

/// SQLite's declared type → the PostgreSQL type that holds the same values.
fn twin(sqlite: &str) -> &'static str {
    match sqlite.to_ascii_uppercase().as_str() {
        "INTEGER" | "BOOLEAN" => "bigint",
        "REAL" => "double precision",
        "BLOB" => "bytea",
        _ => "text",
    }
}

#[test]
fn the_schema_on_postgresql_is_sqlites_table_for_table_and_column_for_column() {
    let Some(cluster) = PgCluster::start("pg schema") else {
        return;
    };
    let url = cluster.database("schema");
    let p = pg(&url);
    assert_eq!(migrate::apply(&p).unwrap(), (0, migrate::latest()));
    // Twice is a no-op.
    assert_eq!(
        migrate::apply(&p).unwrap(),
        (migrate::latest(), migrate::latest())
    );
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("s.db");
    Store::open(&file).unwrap();
    let lite = sqlite_schema(&file);
    let post = pg_schema(&p);
    assert_eq!(
        lite.keys().collect::<Vec<_>>(),
        post.keys().collect::<Vec<_>>(),
        "the same tables"
    );
    for (table, cols) in &lite {
        let pcols = &post[table];
        assert_eq!(
            cols.keys().collect::<Vec<_>>(),
            pcols.keys().collect::<Vec<_>>(),
            "{table}: the same columns"
        );
        for (col, ty) in cols {
            assert_eq!(pcols[col], twin(ty), "{table}.{col} ({ty})");
        }
    }
    // A schema from a newer kakeai is reported and never touched.
    p.block(async |c| {
        c.execute("INSERT INTO kakeai_schema (version) VALUES (99)", &[])
            .await
    })
    .unwrap();
    let out = kakeai()
        .args(["db", "migrate", "--db", &url])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("schema version 99") && err.contains("newer kakeai"),
        "{err}"
    );
    let st = kakeai()
        .args(["db", "status", "--db", &url])
        .output()
        .unwrap();
    assert_eq!(st.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&st.stdout).contains("made by a newer kakeai"));
}

/// Rows both engines must refuse (a CHECK, a trigger, a NOT NULL, a foreign key) or accept.
const ROWS: &[(&str, bool)] = &[
    (
        "INSERT INTO runs (id, topic, started_at, status) VALUES (1, '海', 't', 'running')",
        true,
    ),
    (
        "INSERT INTO runs (topic, started_at, status) VALUES ('x', 't', 'bogus')",
        false,
    ),
    (
        "INSERT INTO runs (topic, started_at, status) VALUES ('x', 't', 'interrupted')",
        true,
    ),
    (
        "INSERT INTO runs (topic, status) VALUES ('x', 'running')",
        false,
    ),
    (
        "INSERT INTO attempts (run_id, turn, speaker, attempt, state, started_at) VALUES (1, 1, 'bob', 1, 'done', 't')",
        false,
    ),
    (
        "INSERT INTO attempts (run_id, turn, speaker, attempt, state, started_at) VALUES (1, 0, 'yana', 1, 'done', 't')",
        false,
    ),
    (
        "INSERT INTO attempts (run_id, turn, speaker, attempt, state, started_at) VALUES (1, 1, 'yana', 1, 'done', 't')",
        true,
    ),
    (
        "INSERT INTO attempts (run_id, turn, speaker, attempt, state, started_at) VALUES (999, 1, 'yana', 1, 'done', 't')",
        false,
    ),
    (
        "INSERT INTO actions (run_id, kind, created_at) VALUES (1, 'undo', 't')",
        true,
    ),
    (
        "INSERT INTO actions (run_id, kind, created_at) VALUES (1, 'erase', 't')",
        false,
    ),
    (
        "INSERT INTO prowrestling_patterns (user_message_type, user_message_example, bot_response, bot_response_type, character) VALUES ('a', 'b', 'c', '流し', 'yana')",
        true,
    ),
    (
        "INSERT INTO prowrestling_patterns (user_message_type, user_message_example, bot_response, bot_response_type, character) VALUES ('a', 'b', 'd', '無視', 'yana')",
        false,
    ),
    (
        "INSERT INTO prowrestling_usage_log (feedback) VALUES (2)",
        false,
    ),
    (
        "INSERT INTO prowrestling_usage_log (feedback, user_reaction) VALUES (-1, 'dropout')",
        true,
    ),
    (
        "INSERT INTO line_messages (channel_id, source_type, role, character, text_masked, at_ms, state, created_at) VALUES ('c', 'user', 'user', 'ayu', 't', 1, 'pending', 't')",
        true,
    ),
    (
        "INSERT INTO line_messages (channel_id, source_type, role, character, text_masked, at_ms, state, created_at) VALUES ('c', 'dm', 'user', 'ayu', 't', 1, 'pending', 't')",
        false,
    ),
    (
        "INSERT INTO review_queues (name, filter, k, lease_ms, created_at) VALUES ('q', '{}', 1, 500, 't')",
        false,
    ),
    (
        "INSERT INTO pairwise_marks (comparison_id, turn, reviewer, choice, created_at) VALUES (1, 1, 'r', 'A', 't')",
        false,
    ),
];

#[test]
fn both_engines_accept_and_refuse_the_same_rows() {
    let Some(cluster) = PgCluster::start("pg constraints") else {
        return;
    };
    let p = pg(&cluster.database("rows"));
    migrate::apply(&p).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("r.db");
    let store = Store::open(&file).unwrap();
    for (sql, ok) in ROWS {
        let lite = store.conn().execute(sql, []);
        let post = p.block(async |c| c.execute(*sql, &[]).await);
        assert_eq!(lite.is_ok(), *ok, "SQLite: {sql}: {lite:?}");
        assert_eq!(post.is_ok(), *ok, "PostgreSQL: {sql}: {post:?}");
    }
    // The generated columns compute the same on both.
    let rate = |sql: &str| {
        store.conn().execute(sql, []).unwrap();
        p.block(async |c| c.execute(sql, &[]).await).unwrap();
    };
    rate("UPDATE prowrestling_patterns SET success_count = 3, failure_count = 1");
    let lite: f64 = store
        .conn()
        .query_row("SELECT success_rate FROM prowrestling_patterns", [], |r| {
            r.get(0)
        })
        .unwrap();
    let post: f64 = p
        .block(async |c| {
            Ok(
                c.query_one("SELECT success_rate FROM prowrestling_patterns", &[])
                    .await?
                    .get(0),
            )
        })
        .unwrap();
    assert_eq!((lite, post), (0.75, 0.75));
}

/// A store with every kind of value: committed runs, and hand-written rows with NULLs, emoji,
/// half-width kana, extreme integers and floats, a self-reference and generated columns.
fn filled(path: &std::path::Path, runs: usize) -> Store {
    let mut store = Store::open(path).unwrap();
    common::stores::committed_runs(
        &mut store,
        7,
        runs,
        6,
        &[Status::Pass, Status::Warn, Status::Retry, Status::Unscored],
    );
    store
        .conn()
        .execute_batch(
            "INSERT INTO prowrestling_patterns (user_message_type, user_message_example, bot_response,
                 bot_response_type, character, used_count, success_count, failure_count, like_count)
             VALUES ('からかい', 'ｶﾞｷﾞ 🇯🇵', 'なによそれ〜👩‍👩‍👧', 'プロレス受け', 'yana', 9223372036854775807, 2, 1, 0);
             INSERT INTO judgment_caches (channel_id, thread_ts, should_respond, confidence, reason,
                 latest_message_ts, next_check_at, created_at, updated_at)
             VALUES ('C1', '', 1, 0.1, '理由', '1', '2', 't', 't'),
                    ('C2', 'x', 0, 1e-300, '', '1', '2', 't', 't');
             INSERT INTO line_messages (id, channel_id, source_type, role, character, text_masked, at_ms, state, created_at)
             VALUES (1, 'C1', 'group', 'user', 'ayu', '[氏名]さん、こんにちは', -5, 'answered', 't');
             INSERT INTO line_messages (id, channel_id, source_type, role, character, text_masked, at_ms, state, reply_to, note, created_at)
             VALUES (2, 'C1', 'group', 'bot', 'ayu', 'はい、姉様。', 7, 'sent', 1, NULL, 't');
             -- Finished runs: opening a store marks a 'running' run interrupted (with the time).
             UPDATE runs SET status = 'completed', ended_at = '2026-11-25T00:00:00.000Z';
             -- Samples: a comparison's run and a vault probe's (listed as such).
             UPDATE runs SET options = '{\"compare\": 5}' WHERE id = 3;
             UPDATE runs SET options = '{\"probe\": true, \"t\": [1]}' WHERE id = 4;
             -- Marks the runs browser counts: 👍 on two turns of run 2, one taken back.
             INSERT INTO actions (run_id, turn, kind, payload, created_at, reviewer) VALUES
                 (2, 1, 'thumb', '{\"up\": true}', 't', '花子'),
                 (2, 2, 'override', '{\"to\": \"WARN\"}', 't', 'taro'),
                 (1, 3, 'thumb', '{\"up\": false}', 't', NULL);",
        )
        .unwrap();
    store
}

/// Every row of every kakeai table, in key order, as text: what "lossless" compares.
fn dump(path: &std::path::Path) -> BTreeMap<String, Vec<String>> {
    let conn = rusqlite::Connection::open(path).unwrap();
    let schema = sqlite_schema(path);
    schema
        .keys()
        .filter(|t| !t.starts_with("kakeai_"))
        .map(|t| {
            let mut st = conn.prepare(&format!("SELECT * FROM \"{t}\"")).unwrap();
            let n = st.column_count();
            let mut rows: Vec<String> = st
                .query_map([], |r| {
                    Ok((0..n)
                        .map(|i| format!("{:?}", r.get_ref(i).unwrap()))
                        .collect::<Vec<_>>()
                        .join("|"))
                })
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap();
            rows.sort();
            (t.clone(), rows)
        })
        .collect()
}

fn export_all(path: &std::path::Path, runs: usize) -> Vec<String> {
    (1..=runs)
        .map(|id| {
            let out = kakeai()
                .args(["export", "--run", &id.to_string(), "--db"])
                .arg(path)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            String::from_utf8(out.stdout).unwrap()
        })
        .collect()
}

#[test]
fn a_copy_to_postgresql_and_back_is_lossless_and_every_run_exports_the_same() {
    let Some(cluster) = PgCluster::start("pg round trip") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.db");
    let b = dir.path().join("b.db");
    drop(filled(&a, 12));
    // A password in the URL is never printed (trust authentication ignores it).
    let url = cluster
        .database("trip")
        .replace("kakeai@", "kakeai:s3cr3t@");
    let out = copy_to(&a, &url, &["--batch", "7"]).output().unwrap();
    let (so, se) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{so}{se}");
    assert!(so.contains("every table checked"), "{so}");
    assert!(!format!("{so}{se}").contains("s3cr3t"), "{so}{se}");
    assert!(so.contains("kakeai:***@"), "{so}");

    let st = kakeai()
        .args(["db", "status", "--json", "--db", &url])
        .output()
        .unwrap();
    assert_eq!(
        st.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&st.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&st.stdout).unwrap();
    assert_eq!(v["engine"], "postgresql");
    assert_eq!(v["schema_version"], migrate::latest());
    assert!(!String::from_utf8_lossy(&st.stdout).contains("s3cr3t"));

    // A second copy into the same database is refused: it holds data now.
    let again = copy_to(&a, &url, &[]).output().unwrap();
    assert_eq!(again.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&again.stderr).contains("already holds kakeai data"));
    // …and left as it was: no bookkeeping table was made for the refused copy.
    assert!(!pg_schema(&pg(&url)).contains_key("kakeai_copy"));
    let bookkeeping = |p: &std::path::Path| sqlite_schema(p).contains_key("kakeai_copy");

    copy_back_and_compare(&url, &a, &b);
    // Back into a store that holds data is refused too, without touching it.
    let before = dump(&a);
    let into = kakeai()
        .args(["db", "copy", &url])
        .arg(&a)
        .output()
        .unwrap();
    assert_eq!(into.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&into.stderr).contains("already holds kakeai data"));
    assert!(dump(&a) == before && !bookkeeping(&a));
    let (ea, eb) = (export_all(&a, 12), export_all(&b, 12));
    assert!(ea.iter().all(|e| e.contains("\"record\":\"turn\"")));
    for (i, (x, y)) in ea.iter().zip(&eb).enumerate() {
        assert!(x == y, "run {} exports differently:\n{x}\n{y}", i + 1);
    }

    // `kakeai runs` lists the same from either engine: order, counts, samples, both formats.
    for format in ["json", "table"] {
        let list = |db: &str| {
            let o = kakeai()
                .args(["runs", "--limit", "100", "--format", format, "--db", db])
                .output()
                .unwrap();
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            String::from_utf8_lossy(&o.stdout).into_owned()
        };
        let (from_file, from_pg) = (list(a.to_str().unwrap()), list(&url));
        assert_eq!(from_file, from_pg, "{format}");
        assert!(from_pg.contains("compare 5 sample") && from_pg.contains("probe"));
        assert!(!from_pg.contains("s3cr3t"));
    }

    // The runs browser reads the same page from either engine: any filter (ASCII case folded,
    // LIKE's own characters taken literally), any page.
    let (file, p) = (Store::open(&a).unwrap(), pg(&url));
    let filters = [
        "",
        " ",
        "1",
        "3",
        "12",
        "completed",
        "COMPLETED",
        "%",
        "_",
        "\\",
        "a%b",
        "sample",
    ];
    let topics: Vec<String> = file
        .browse("", 3, 0)
        .unwrap()
        .rows
        .into_iter()
        .map(|r| r.topic)
        .collect();
    let pieces = topics
        .iter()
        .filter_map(|t| t.chars().nth(1).map(String::from));
    for filter in filters.iter().map(|f| f.to_string()).chain(pieces) {
        for (limit, offset) in [(50, 0), (5, 0), (5, 5), (5, 100)] {
            let want = file.browse(&filter, limit, offset).unwrap();
            let got = kakeai::store::pg::read::browse(&p, &filter, limit, offset).unwrap();
            assert_eq!(want, got, "filter {filter:?} {limit}/{offset}");
        }
    }
    assert!(
        file.browse("", 50, 0)
            .unwrap()
            .rows
            .iter()
            .any(|r| r.reviewed == 2)
    );

    // Ids go on after the copied ones on PostgreSQL.
    let p = pg(&url);
    let next: i64 = p
        .block(async |c| {
            Ok(c.query_one(
                "INSERT INTO runs (topic, started_at, status) VALUES ('次', 't', 'running') RETURNING id",
                &[],
            )
            .await?
            .get(0))
        })
        .unwrap();
    assert_eq!(next, 13);
}

#[test]
fn a_copy_killed_half_way_goes_on_when_run_again() {
    let Some(cluster) = PgCluster::start("pg resume") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("big.db");
    drop(filled(&a, 400));
    let url = cluster.database("resume");
    let mut child = copy_to(&a, &url, &["--batch", "5", "--quiet"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Kill it once some turns are in, before it is whole.
    let p = pg(&url);
    let count = |table: &str| -> i64 {
        let q = format!("SELECT COUNT(*) FROM {table}");
        p.block(async |c| Ok(c.query_one(&q, &[]).await?.get(0)))
            .unwrap_or(0)
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while count("turns") < 50 {
        assert!(
            std::time::Instant::now() < deadline,
            "the copy never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let partial = count("turns");
    assert!(partial > 0 && partial < 2400, "killed at {partial} turns");

    let out = copy_to(&a, &url, &[]).output().unwrap();
    let so = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{so}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        so.contains("went on from an earlier, unfinished copy"),
        "{so}"
    );
    assert_eq!(count("turns"), 2400);
    let b = dir.path().join("back.db");
    copy_back_and_compare(&url, &a, &b);
}

/// `kakeai db copy FILE URL …`.
fn copy_to(file: &std::path::Path, url: &str, extra: &[&str]) -> Command {
    let mut c = kakeai();
    c.args(["db", "copy"]).arg(file).arg(url).args(extra);
    c
}

/// `db copy URL b` into a new file, and every table of `b` the same as in `a`.
fn copy_back_and_compare(url: &str, a: &std::path::Path, b: &std::path::Path) {
    let back = kakeai().args(["db", "copy", url]).arg(b).output().unwrap();
    assert!(
        back.status.success(),
        "{}",
        String::from_utf8_lossy(&back.stderr)
    );
    assert!(dump(a) == dump(b), "the tables differ after the copy back");
}

#[test]
fn an_unreachable_server_or_a_missing_database_is_one_line_naming_the_fix_and_exit_3() {
    let Some(cluster) = PgCluster::start("pg bad input") else {
        return;
    };
    let missing = cluster.url("nowhere").replace("kakeai@", "kakeai:pw@");
    let dead = format!(
        "postgresql://kakeai:pw@localhost/x?host={}&port=1",
        cluster.socket_dir().display()
    );
    for (url, fix) in [(&missing, "createdb"), (&dead, "is the server running")] {
        for args in [
            vec!["db", "status", "--db", url],
            vec!["db", "migrate", "--db", url],
            vec!["runs", "--db", url],
        ] {
            let out = kakeai().args(&args).output().unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(3), "{args:?}: {err}");
            assert_eq!(err.trim().lines().count(), 1, "{err}");
            assert!(err.contains(fix) && err.contains("kakeai:***@"), "{err}");
            assert!(!err.contains(":pw@"), "{err}");
        }
    }
    // A file of that name never appears.
    assert!(!std::path::Path::new("postgresql:").exists());
    // The report and the workbench say the same, with exit 3.
    let html = std::env::temp_dir().join(format!("kakeai-pg-{}.html", std::process::id()));
    for url in [&missing, &dead] {
        let out = kakeai()
            .args([
                "report",
                "--run",
                "1",
                "--out",
                html.to_str().unwrap(),
                "--db",
                url,
            ])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(3), "report: {err}");
        assert!(!err.contains(":pw@") && !html.exists(), "{err}");
        if let Some(code) = workbench_exit(url) {
            assert_eq!(code, 3, "the workbench on {url}");
        }
    }
}

/// The workbench's exit code in a real terminal (tmux), or None where tmux is missing (outside
/// CI).
fn workbench_exit(url: &str) -> Option<i32> {
    if Command::new("tmux").arg("-V").output().is_err() {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "tmux is required under CI"
        );
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    let code = dir.path().join("code");
    let sock = format!("kakeai-pgwb-{}", std::process::id());
    let cmd = format!(
        "KAKEAI_DATA_DIR={d}/data KAKEAI_CONFIG_DIR={d}/config {bin} --db '{url}'; echo $? > {c}",
        d = dir.path().display(),
        bin = env!("CARGO_BIN_EXE_kakeai"),
        c = code.display(),
    );
    let _ = Command::new("tmux")
        .args([
            "-L",
            &sock,
            "new-session",
            "-d",
            "-s",
            "w",
            "-x",
            "100",
            "-y",
            "30",
            &cmd,
        ])
        .status();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let got = loop {
        if let Ok(t) = std::fs::read_to_string(&code)
            && let Ok(n) = t.trim().parse()
        {
            break Some(n);
        }
        if std::time::Instant::now() > deadline {
            break None;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    let _ = Command::new("tmux")
        .args(["-L", &sock, "kill-server"])
        .status();
    Some(got.expect("the workbench ended within 20 s"))
}

/// A database whose own collation orders text unlike bytes (ICU, en-US: a < B < b) copies
/// and checks the same: both engines read keys in byte order.
#[test]
fn a_database_with_a_linguistic_collation_copies_the_same() {
    let Some(cluster) = PgCluster::start("pg collation") else {
        return;
    };
    let admin = pg(&cluster.url("postgres"));
    let made = admin.block(async |c| {
        c.batch_execute(
            "CREATE DATABASE icu TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C'",
        )
        .await
    });
    if let Err(e) = made {
        // A server built without ICU cannot make one; say so rather than pass silently.
        eprintln!("SKIPPED pg collation: this PostgreSQL has no ICU collations ({e})");
        assert_ne!(
            std::env::var("CI").as_deref(),
            Ok("true"),
            "ICU is required under CI: {e}"
        );
        return;
    }
    let url = cluster.url("icu");
    let order: Vec<String> = pg(&url)
        .block(async |c| {
            let rows = c
                .query(
                    "SELECT x FROM (VALUES ('a1'), ('B2'), ('A4'), ('b3')) v(x) ORDER BY x",
                    &[],
                )
                .await?;
            Ok(rows.iter().map(|r| r.get(0)).collect())
        })
        .unwrap();
    assert_ne!(
        order,
        ["A4", "B2", "a1", "b3"],
        "the collation must differ from byte order"
    );
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.db");
    let b = dir.path().join("b.db");
    let store = filled(&a, 3);
    store
        .conn()
        .execute_batch(
            "INSERT INTO line_events (webhook_event_id, event_type, received_at)
             VALUES ('a1', 'message', 't'), ('B2', 'message', 't'), ('A4', 'follow', 't'),
                    ('b3', 'message', 't');",
        )
        .unwrap();
    drop(store);
    let out = copy_to(&a, &url, &["--batch", "2"]).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    copy_back_and_compare(&url, &a, &b);
}

/// `db copy` across engines shows a bar of rows with its total and an ETA on a terminal (the
/// rows of the source's tables counted first; issue 23 item 14), both ways; nothing extra with
/// `--quiet` or piped, and the same report on stdout every way.
#[test]
fn a_copy_across_engines_shows_a_bar_of_rows_only_on_a_terminal() {
    let Some(cluster) = PgCluster::start("pg copy progress") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.db");
    let b = dir.path().join("b.db");
    let rows: i64 = {
        let store = filled(&a, 12);
        kakeai::store::status::status(store.path())
            .unwrap()
            .tables
            .iter()
            .map(|(_, n)| n)
            .sum()
    };
    // SQLite → PostgreSQL: a new database each way.
    let n = std::cell::Cell::new(0);
    let urls = std::cell::RefCell::new(Vec::new());
    let ways = common::terminal::three_ways(
        |args| {
            let mut c = kakeai();
            c.args(args)
                .arg(urls.borrow().last().unwrap_or(&String::new()));
            c
        },
        &["db", "copy", a.to_str().unwrap()],
        || {
            n.set(n.get() + 1);
            urls.borrow_mut()
                .push(cluster.database(&format!("progress{}", n.get())));
        },
    );
    let want = format!("/{rows} rows");
    let shown = &ways.shown;
    assert!(shown.contains(&want), "the bar counts every row: {shown}");
    assert_eq!(ways.piped.status.code(), Some(0));
    assert!(ways.shown.contains("ETA"), "{shown}");
    assert!(ways.piped.stderr.is_empty());
    assert_eq!(
        common::terminal::as_piped(&ways.quiet),
        "",
        "--quiet: nothing"
    );
    // Each way copied into its own database (progress1, 2, 3): stdout otherwise the same.
    let report = |b: &[u8]| {
        let s = String::from_utf8_lossy(b).into_owned();
        (1..=3).fold(s, |s, i| s.replace(&format!("progress{i}"), "progressN"))
    };
    assert!(report(&ways.piped.stdout).contains("every table checked"));
    assert_eq!(report(&ways.shown_stdout), report(&ways.piped.stdout));
    assert_eq!(report(&ways.quiet_stdout), report(&ways.piped.stdout));
    // PostgreSQL → SQLite: the report names the same two stores every way.
    let url = urls.borrow()[0].clone();
    let ways = common::terminal::three_ways(
        |args| {
            let mut c = kakeai();
            c.args(args);
            c
        },
        &["db", "copy", &url, b.to_str().unwrap()],
        || {
            for ext in ["", "-wal", "-shm"] {
                let _ = std::fs::remove_file(format!("{}{ext}", b.display()));
            }
        },
    );
    ways.assert_progress_only_on_a_terminal(&["copying [", &want]);
}

/// A model reply with U+0000 in it (a broken server, a hostile one) is stored by the one rule on
/// both engines — a headless run completes (it used to end `failed`, exit 4, on PostgreSQL) and
/// the committed line reads U+FFFD where the NUL was, the same on SQLite and PostgreSQL.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_reply_with_nul_is_stored_the_same_on_both_engines() {
    let Some(cluster) = PgCluster::start("pg nul reply") else {
        return;
    };
    use llm_fake::{FakeServer, Recorded, Reply, openai_reply, parts, sse_events};
    let server = FakeServer::with(|r: &Recorded, _| match r.path.as_str() {
        "/v1/chat/completions" if r.json()["stream"] == true => Reply::sse(parts(&sse_events(
            "tiny-ja",
            &["うん\u{0}、", "いいね\u{0}！"],
            "stop",
            2,
        ))),
        "/v1/chat/completions" => Reply::json(
            200,
            &openai_reply(
                "tiny-ja",
                r#"{"naturalness":4,"character":4,"flow":4,"relevance":4,"safety":4}"#,
                5,
            ),
        ),
        "/v1/models" => Reply::json(
            200,
            r#"{"object":"list","data":[{"id":"tiny-ja","object":"model","owned_by":"llamacpp"}]}"#,
        ),
        _ => Reply::json(404, r#"{"error":{"message":"File Not Found","code":404}}"#),
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("k.db");
    let url = cluster.database("nul");
    let mut stored = Vec::new();
    for db in [file.to_str().unwrap().to_string(), url.clone()] {
        let mut c = kakeai();
        c.args([
            "run",
            "--headless",
            "--topic",
            "海",
            "--turns",
            "2",
            "--attempts",
            "1",
            "--no-judge",
            "--no-vault",
            "--endpoint",
            &format!("{}/v1", server.url),
            "--model",
            "tiny-ja",
            "--analyzer",
            "fallback",
            "--db",
            &db,
        ])
        .env("KAKEAI_DATA_DIR", dir.path().join("data"))
        .env("KAKEAI_CONFIG_DIR", dir.path().join("config"));
        let out = tokio::task::spawn_blocking(move || c.output().unwrap())
            .await
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{db}: {err}");
        let store = Store::open_target(std::path::Path::new(&db)).unwrap();
        let rec = store.load_run(1).unwrap();
        let lines: Vec<String> = rec.turns.iter().map(|t| t.text.clone()).collect();
        assert!(!lines.is_empty(), "{db}: no turn committed");
        for l in &lines {
            assert!(!l.contains('\0') && l.contains('\u{FFFD}'), "{db}: {l:?}");
        }
        stored.push(lines);
    }
    assert_eq!(stored[0], stored[1], "the same on both engines");
}
