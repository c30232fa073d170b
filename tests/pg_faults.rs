//! A team store that survives its database (loopback only): a server that takes the TCP
//! connection and never answers is "cannot reach" (exit 3) within the connect timeout for every
//! command; a PostgreSQL store keeps working after `pg_ctl stop/start`, a fast restart and a
//! `kill -9` of the server (the connection is made again, LISTEN issued again, a write whose
//! connection was lost runs again once on a new one, never continued half-way); and the LINE
//! bot under load through a restart and a crash: acknowledged again within 5 s after the
//! database is back, no acknowledged event lost, none answered twice; a COMMIT whose answer a
//! crash lost is never taken for the commit of the writer who got its transaction id next. The
//! same for SQLite's disk
//! filling under the bot (a small tmpfs), and a reviewer's mark refused on the full disk. A
//! 30 s network partition (PostgreSQL in its own network namespace over TCP, every packet
//! dropped both ways) under the bot and a reviewer: the same promises, and the reviewer's marks
//! refused during it and saved after. The PostgreSQL tests are skipped with a message when
//! PostgreSQL is not installed, the disk-full one where a tmpfs cannot be mounted, the partition
//! without root, `ip` and nftables (all required under CI=true).

mod common;

mod cli_env;
mod line_fake;
#[path = "llm_fake/mod.rs"]
mod llm_fake;
mod serve_common;

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use cli_env::Env;
use common::pg::PgCluster;
use kakeai::p;
use kakeai::store::sql::Optional;
use kakeai::store::watch::Watch;
use kakeai::store::{Store, StoreError};
use line_fake::FakeLine;
use llm_fake::{FakeServer, Recorded, Reply, parts, sse_events};
use serve_common::*;

/// Accepts TCP connections, keeps them open, never sends a byte.
fn silent_server() -> (u16, Arc<Mutex<Vec<std::net::TcpStream>>>) {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = l.local_addr().expect("addr").port();
    let held = Arc::new(Mutex::new(Vec::new()));
    let keep = held.clone();
    std::thread::spawn(move || {
        for s in l.incoming().flatten() {
            keep.lock().unwrap().push(s);
        }
    });
    (port, held)
}

/// Runs a command with a hard limit (a hang is killed and reported, never waited out).
fn run_bounded(cmd: &mut std::process::Command, limit: Duration) -> (i32, String, Duration) {
    let started = Instant::now();
    let mut child = cmd
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            let mut err = String::new();
            use std::io::Read;
            let _ = child.stderr.take().unwrap().read_to_string(&mut err);
            return (status.code().unwrap_or(-1), err, started.elapsed());
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{cmd:?} still running after {limit:?}: it hangs");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_server_that_never_answers_is_cannot_reach_within_the_timeout() {
    let (port, _held) = silent_server();
    let env = Env::new();
    let base = format!("postgresql://kakeai@127.0.0.1:{port}/kakeai");
    // The URL's connect_timeout, and PGCONNECT_TIMEOUT when the URL says nothing; both as
    // libpq reads them, for every kind of command.
    let cases: Vec<(Vec<String>, Option<&str>)> = vec![
        (
            vec![
                "runs".into(),
                "--db".into(),
                format!("{base}?connect_timeout=2"),
            ],
            None,
        ),
        (
            vec!["db".into(), "status".into(), "--db".into(), base.clone()],
            Some("2"),
        ),
        (
            vec![
                "queue".into(),
                "list".into(),
                "--db".into(),
                format!("{base}?connect_timeout=3"),
            ],
            Some("30"),
        ),
    ];
    for (args, env_timeout) in cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let mut cmd = env.cmd(&args);
        cmd.env_remove("PGCONNECT_TIMEOUT");
        if let Some(t) = env_timeout {
            cmd.env("PGCONNECT_TIMEOUT", t);
        }
        let (code, err, _took) = run_bounded(&mut cmd, Duration::from_secs(40));
        let want = if args.iter().any(|a| a.contains("connect_timeout=3")) {
            "no answer within 3 s"
        } else {
            "no answer within 2 s"
        };
        assert_eq!(code, 3, "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: one line: {err}");
    }
}

fn new_run(store: &mut Store, topic: &str) -> Result<i64, StoreError> {
    store.create_run(&kakeai::store::NewRun {
        topic: topic.into(),
        model: None,
        endpoint: None,
        api: None,
        options: serde_json::json!({}),
        persona_version: None,
        ruleset_version: None,
    })
}

fn count(store: &Store, topic: &str) -> i64 {
    store
        .db()
        .one("SELECT COUNT(*) FROM runs WHERE topic = ?1", p![topic])
        .unwrap()
}

/// Waits out the pause after a failed connection attempt (`PgConn`'s QUIET).
fn after_quiet() {
    std::thread::sleep(kakeai::store::sql::QUIET + Duration::from_millis(100));
}

#[test]
fn a_store_and_its_watcher_come_back_after_restarts_and_a_crash() {
    let Some(cluster) =
        PgCluster::start("a_store_and_its_watcher_come_back_after_restarts_and_a_crash")
    else {
        return;
    };
    let url = cluster.database("team");
    let mut store = Store::open_target(Path::new(&url)).expect("opens");
    let mut other = Store::open_target(Path::new(&url)).expect("opens");
    let mut watch = Watch::open(Path::new(&url)).expect("watches");
    new_run(&mut store, "before").expect("writes");
    assert!(watch.changed().unwrap());
    assert!(!watch.changed().unwrap());

    // Stopped: a write is an error ("cannot reach", exit 3), never a success.
    cluster.stop();
    let e = new_run(&mut store, "during").expect_err("the server is down");
    assert_eq!(e.exit_code(), 3, "{e}");
    assert!(watch.changed().is_err(), "the watcher says it is away");
    cluster.start_again();
    after_quiet();
    new_run(&mut store, "after stop").expect("connects again");
    // The watcher is back: LISTEN again, and its first poll reads everything again.
    after_quiet();
    assert!(
        watch.changed().unwrap(),
        "back after a loss counts as a change"
    );
    assert!(!watch.changed().unwrap());
    new_run(&mut other, "seen").expect("writes");
    assert!(
        watch.changed().unwrap(),
        "notices arrive on the new connection"
    );

    // A fast restart and a crash, each while the connections are idle: the next write works.
    let crash = |c: &PgCluster| {
        c.kill9();
        c.start_again();
    };
    let restart = |c: &PgCluster| {
        c.stop();
        c.start_again();
    };
    for (i, fault) in [restart, crash].iter().enumerate() {
        fault(&cluster);
        let topic = format!("after fault {i}");
        new_run(&mut store, &topic).expect("the next write reconnects");
        assert_eq!(count(&store, &topic), 1);
        new_run(&mut other, "seen again").expect("writes");
        assert!(watch.changed().unwrap());
    }
    assert_eq!(count(&store, "before"), 1);
    assert_eq!(count(&store, "during"), 0);
}

#[test]
fn a_write_whose_connection_is_lost_runs_again_once_and_never_half() {
    let Some(cluster) =
        PgCluster::start("a_write_whose_connection_is_lost_runs_again_once_and_never_half")
    else {
        return;
    };
    let url = cluster.database("team");
    let mut store = Store::open_target(Path::new(&url)).expect("opens");
    for losses in [1usize, 2] {
        let a = format!("a{losses}");
        let b = format!("b{losses}");
        let mut runs = 0usize;
        let r = store.transact(|tx| {
            runs += 1;
            tx.execute(
                "INSERT INTO runs (topic, started_at, status) VALUES (?1, 'x', 'completed')",
                p![a],
            )?;
            if runs <= losses {
                // The connection dies mid-transaction (its server process ends).
                let _ = tx.one::<bool>("SELECT pg_terminate_backend(pg_backend_pid())", p![]);
            }
            // Never continued on a new connection outside the transaction.
            tx.execute(
                "INSERT INTO runs (topic, started_at, status) VALUES (?1, 'x', 'completed')",
                p![b],
            )?;
            Ok(())
        });
        match losses {
            // Lost once: run again on a new connection, committed once.
            1 => {
                r.expect("retried once");
                assert_eq!(runs, 2);
                assert_eq!((count(&store, &a), count(&store, &b)), (1, 1));
            }
            // Lost twice: an error (exit 3), nothing of it committed.
            _ => {
                let e = r.expect_err("retried only once");
                assert_eq!(runs, 2);
                assert_eq!(e.exit_code(), 3, "{e}");
                assert_eq!((count(&store, &a), count(&store, &b)), (0, 0));
            }
        }
    }
    let _ = store
        .db()
        .one::<i64>("SELECT 1", p![])
        .optional()
        .expect("the store is usable after");
}

/// Commits rows of `topic` on `store` until the transaction id reaches `xid`; whether one was
/// given exactly `xid` (handed out again after a crash), and the ids of the rows committed.
fn commit_until(store: &mut Store, xid: i64, topic: &str) -> (bool, Vec<i64>) {
    let mut ids = Vec::new();
    for _ in 0..10_000 {
        let (x, id) = store
            .transact(|tx| {
                let x: i64 = tx.one("SELECT txid_current()", p![])?;
                let id: i64 = tx.one(
                    "INSERT INTO runs (topic, started_at, status) VALUES (?1, 'x', 'completed')
                     RETURNING id",
                    p![topic],
                )?;
                Ok::<_, StoreError>((x, id))
            })
            .expect("another writer commits after the crash");
        ids.push(id);
        if x >= xid {
            return (x == xid, ids);
        }
    }
    panic!("transaction ids never reached {xid}");
}

/// A COMMIT whose answer is lost in a crash that lost the transaction too, after which the
/// server hands its id (and its rows' ids) to another writer: `txid_status` then says
/// "committed" about someone else's commit. The write is not acknowledged, and no id its
/// INSERT returned is handed out (the ingress would answer another user's message, or wait for
/// a row nobody has).
#[test]
fn a_commit_lost_in_a_crash_is_never_taken_for_the_writer_who_got_its_id_next() {
    let Some(cluster) = PgCluster::start(
        "a_commit_lost_in_a_crash_is_never_taken_for_the_writer_who_got_its_id_next",
    ) else {
        return;
    };
    let url = cluster.database("team");
    let mut store = Store::open_target(Path::new(&url)).expect("opens");
    let mut other = Store::open_target(Path::new(&url)).expect("opens");
    // WAL waits in the server's memory (no background flush): the crash loses the transaction.
    store
        .db()
        .execute("ALTER SYSTEM SET wal_writer_delay = '10s'", p![])
        .expect("superuser");
    let _ = store.db().one::<bool>("SELECT pg_reload_conf()", p![]);
    let mut runs = 0;
    let mut reused = None;
    let r = store.transact(|tx| {
        runs += 1;
        let xid: i64 = tx.one("SELECT txid_current()", p![])?;
        let id: i64 = tx.one(
            "INSERT INTO runs (topic, started_at, status) VALUES ('mine', 'x', 'completed')
             RETURNING id",
            p![],
        )?;
        if runs == 1 {
            cluster.kill9();
            cluster.start_again();
            reused = Some(commit_until(&mut other, xid, "theirs"));
        }
        Ok::<_, StoreError>(id)
    });
    let (reused, theirs) = reused.expect("the crash happened");
    assert!(
        reused,
        "the crash lost the transaction and its id was handed out again (the case under test)"
    );
    let topic_of = |id: i64| {
        store
            .db()
            .one::<String>("SELECT topic FROM runs WHERE id = ?1", p![id])
            .optional()
            .unwrap()
    };
    match r {
        Ok(id) => panic!(
            "acknowledged after {runs} run(s) with id {id}, whose row is {:?} (theirs: {theirs:?})",
            topic_of(id)
        ),
        Err(e) => {
            assert_eq!(runs, 1, "an unknown outcome is never run again");
            assert_eq!(e.exit_code(), 3, "{e}");
            assert!(e.to_string().contains("not acknowledged"), "{e}");
        }
    }
    assert_eq!(count(&store, "mine"), 0, "nothing of it survived the crash");
    assert_eq!(count(&store, "theirs"), theirs.len() as i64);
}

/// The model: quick replies.
async fn model() -> FakeServer {
    FakeServer::with(move |req: &Recorded, _| match req.path.as_str() {
        "/v1/models" => Reply::json(
            200,
            r#"{"object":"list","data":[{"id":"tiny-ja","object":"model","owned_by":"llamacpp"}]}"#,
        ),
        _ if is_pii_pass(req) => pii_nothing(req),
        "/v1/chat/completions" if req.json()["stream"] == true => Reply::sse(parts(&sse_events(
            "tiny-ja",
            &["うん、", "それいいね", "！"],
            "stop",
            3,
        ))),
        _ => Reply::json(
            200,
            &llm_fake::openai_reply(
                "tiny-ja",
                r#"{"context_type":"じゃれ合い","confidence":0.9,"reason":"笑いながらのからかい"}"#,
                10,
            ),
        ),
    })
    .await
}

/// A fake LINE, a fake model and the bot on `db` (8 workers, 2 s leases) for the load faults;
/// the fakes are returned to keep them serving.
async fn bot_on(db: &str) -> (FakeLine, FakeServer, Arc<Serve>) {
    let line = FakeLine::ok().await;
    let llm = model().await;
    let cfg = format!("lease_seconds = 2\nworkers = 8\n{}", fast_config(0.2));
    let bot = Arc::new(Serve::start(
        Env::new(),
        &line.url,
        &llm.url,
        &cfg,
        &["--db", db],
    ));
    (line, llm, bot)
}

fn user(i: usize) -> String {
    format!("U{i:032x}")
}

/// One webhook send: (event index, HTTP status, when it was answered).
type Sent = (usize, u16, Instant);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bot_under_load_survives_a_restart_and_a_crash_of_its_database() {
    let Some(cluster) = PgCluster::start("the_bot_under_load_survives_a_restart_and_a_crash")
    else {
        return;
    };
    let cluster = Arc::new(cluster);
    let url = cluster.database("bot");
    let (line, _llm, bot) = bot_on(&url).await;
    // 200 events a second for 9 s, each from its own user; the database is restarted at 2 s
    // and killed -9 at 5.5 s.
    let n = 1800usize;
    let events: Vec<serde_json::Value> = (0..n)
        .map(|i| {
            text(
                &event_id(),
                ("user", &user(i)),
                &format!("m{i}"),
                "今日はなにしてた？",
            )
        })
        .collect();
    let backs: Arc<Mutex<Vec<(&str, Instant)>>> = Arc::default();
    let faults = {
        let (c, backs) = (cluster.clone(), backs.clone());
        tokio::task::spawn_blocking(move || {
            std::thread::sleep(Duration::from_millis(2000));
            c.stop();
            c.start_again();
            backs.lock().unwrap().push(("restart", Instant::now()));
            std::thread::sleep(Duration::from_millis(3500));
            c.kill9();
            c.start_again();
            backs.lock().unwrap().push(("kill -9", Instant::now()));
        })
    };
    let log = load(&bot, &events, 200).await;
    faults.await.unwrap();
    let refused = redeliver_until_acknowledged(&bot, &events, &log).await;
    // Acknowledged again soon after each return of the database.
    for (fault, back) in backs.lock().unwrap().iter() {
        let first = log
            .iter()
            .filter(|(_, c, at)| *c == 200 && *at >= *back)
            .map(|(_, _, at)| at.duration_since(*back))
            .min()
            .expect("acknowledgements after the database is back");
        eprintln!("{fault}: acknowledged again {first:?} after the database was back");
        assert!(
            first <= Duration::from_secs(5),
            "{fault}: first acknowledgement {first:?} after the database was back"
        );
    }
    eprintln!("{refused} of {n} deliveries refused (500) while the database was away");
    assert!(refused > 0, "the faults happened under load");
    answered_once_each(&line, &events, &bot).await;
    let store = Store::open_target(Path::new(&url)).expect("opens");
    let stored: i64 = store
        .db()
        .one("SELECT COUNT(*) FROM line_events", p![])
        .unwrap();
    assert_eq!(stored, n as i64, "every acknowledged event stored once");
    // The outage was said once each way, not once per call.
    let err = bot.stderr.lock().unwrap().join("\n");
    assert!(!err.contains("holds not renewed"), "{err}");
    for l in err
        .lines()
        .filter(|l| l.contains(" store ") || l.contains(" resume "))
    {
        eprintln!("{l}");
    }
}

/// Sends each event once, `per_sec` a second, each request on its own task: what each got.
async fn load(bot: &Arc<Serve>, events: &[serde_json::Value], per_sec: u64) -> Vec<Sent> {
    let at: Vec<Duration> = (0..events.len() as u64)
        .map(|i| Duration::from_micros(i * 1_000_000 / per_sec))
        .collect();
    load_at(bot, events, &at, None).await
}

/// Sends event i at `at[i]` from now, each request on its own task and given up after
/// `limit` when set (as LINE gives a webhook up: 0, not acknowledged): what each got.
async fn load_at(
    bot: &Arc<Serve>,
    events: &[serde_json::Value],
    at: &[Duration],
    limit: Option<Duration>,
) -> Vec<Sent> {
    let sent: Arc<Mutex<Vec<Sent>>> = Arc::default();
    let mut tasks = Vec::new();
    let t0 = tokio::time::Instant::now();
    for (i, (ev, at)) in events.iter().zip(at).enumerate() {
        // On a clock, not after a pause each: the rate holds however long a send takes.
        tokio::time::sleep_until(t0 + *at).await;
        let (bot, sent, b) = (bot.clone(), sent.clone(), body(std::slice::from_ref(ev)));
        tasks.push(tokio::spawn(async move {
            let code = match limit {
                Some(l) => bot.send_within(&b, l).await,
                None => bot.send(&b).await,
            };
            sent.lock().unwrap().push((i, code, Instant::now()));
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let guard = sent.lock().unwrap();
    guard.clone()
}

/// When each event is sent: `fast` a second while any of `busy` (from, to) spans holds the
/// clock, `slow` a second otherwise, for `total`.
fn schedule(total: Duration, busy: &[(Duration, Duration)], fast: u32, slow: u32) -> Vec<Duration> {
    let mut at = Vec::new();
    let mut t = Duration::ZERO;
    while t < total {
        at.push(t);
        let rate = if busy.iter().any(|(a, b)| t >= *a && t < *b) {
            fast
        } else {
            slow
        };
        t += Duration::from_secs(1) / rate;
    }
    at
}

/// As LINE does: what was not acknowledged is delivered again until it is. How many of the
/// first deliveries were refused.
async fn redeliver_until_acknowledged(
    bot: &Serve,
    events: &[serde_json::Value],
    log: &[Sent],
) -> usize {
    let mut acked: HashSet<usize> = log
        .iter()
        .filter(|(_, c, _)| *c == 200)
        .map(|(i, _, _)| *i)
        .collect();
    let refused = events.len() - acked.len();
    let deadline = Instant::now() + Duration::from_secs(60);
    while acked.len() < events.len() && Instant::now() < deadline {
        for (i, ev) in events.iter().enumerate() {
            if acked.contains(&i) {
                continue;
            }
            let mut again = ev.clone();
            again["deliveryContext"]["isRedelivery"] = serde_json::json!(true);
            if bot.send(&body(&[again])).await == 200 {
                acked.insert(i);
            }
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(
        acked.len(),
        events.len(),
        "some events were never acknowledged"
    );
    refused
}

/// Every event's user got exactly one answer (reply or push).
async fn answered_once_each(line: &FakeLine, events: &[serde_json::Value], bot: &Serve) {
    let n = events.len();
    let delivered = line
        .wait(120, |c| {
            let users: HashSet<String> = c
                .iter()
                .filter(|c| c.delivered())
                .filter_map(|c| to_user(c, events))
                .collect();
            users.len() >= n
        })
        .await;
    let mut per: HashMap<String, usize> = HashMap::new();
    for c in delivered.iter().filter(|c| c.delivered()) {
        *per.entry(to_user(c, events).expect("a known user"))
            .or_default() += 1;
    }
    let missing: Vec<String> = (0..n).map(user).filter(|u| !per.contains_key(u)).collect();
    let twice: Vec<(&String, &usize)> = per.iter().filter(|(_, k)| **k > 1).collect();
    assert!(
        missing.is_empty(),
        "{} never answered: {:?}; stderr: {:?}",
        missing.len(),
        &missing[..missing.len().min(5)],
        bot.stderr.lock().unwrap()
    );
    assert!(twice.is_empty(), "answered twice: {twice:?}");
}

/// The user a delivered call went to: a push names them, a reply's token names the message.
fn to_user(c: &line_fake::Call, events: &[serde_json::Value]) -> Option<String> {
    if let Some(to) = c.body["to"].as_str() {
        return Some(to.to_string());
    }
    let token = c.body["replyToken"].as_str()?;
    events
        .iter()
        .find(|e| e["replyToken"] == token)
        .and_then(|e| e["source"]["userId"].as_str().map(str::to_string))
}

#[test]
fn every_command_refuses_the_same_way_unreachable_read_only_and_newer() {
    let Some(cluster) = PgCluster::start("every_command_refuses_the_same_way") else {
        return;
    };
    let env = Env::new();
    let code_err = |args: &[&str]| {
        let out = env.run(args);
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stderr).to_string(),
        )
    };
    // Nobody listens: exit 3 from every kind of command.
    let (port, none) = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        (l.local_addr().unwrap().port(), l)
    };
    drop(none);
    let gone = format!("postgresql://kakeai@127.0.0.1:{port}/kakeai");
    for args in [
        vec!["runs", "--db", &gone],
        vec!["report", "--run", "1", "--db", &gone, "--out", "r.html"],
        vec!["queue", "list", "--db", &gone],
        vec![
            "serve",
            "forget",
            "U0123456789abcdef0123456789abcdef",
            "--db",
            &gone,
        ],
    ] {
        let (code, err) = code_err(&args);
        assert_eq!(code, 3, "{args:?}: {err}");
    }
    // A read-only role: reading works, a write is refused with exit 4.
    let url = cluster.database("team");
    assert_eq!(code_err(&["db", "migrate", "--db", &url]).0, 0);
    let admin = Store::open_target(Path::new(&url)).expect("opens");
    admin
        .db()
        .batch("CREATE ROLE reader LOGIN; GRANT SELECT ON ALL TABLES IN SCHEMA public TO reader;")
        .expect("role");
    let reader = url.replacen("kakeai@", "reader@", 1);
    let (code, err) = code_err(&["queue", "list", "--db", &reader]);
    assert_eq!(code, 0, "{err}");
    let (code, err) = code_err(&[
        "queue",
        "create",
        "q",
        "--db",
        &reader,
        "--reviewer",
        "taro",
    ]);
    assert_eq!(code, 4, "{err}");
    assert!(err.contains("permission denied"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    // A schema from a newer kakeai: refused by every command, the same words.
    admin
        .db()
        .batch("INSERT INTO kakeai_schema (version) VALUES (999)")
        .expect("newer");
    for args in [
        vec!["runs", "--db", url.as_str()],
        vec!["queue", "list", "--db", url.as_str()],
        vec!["db", "copy", url.as_str(), "copy.db"],
        vec!["db", "migrate", "--db", url.as_str()],
    ] {
        let (code, err) = code_err(&args);
        assert_ne!(code, 0, "{args:?}: {err}");
        assert!(err.contains("schema version 999"), "{args:?}: {err}");
        assert!(err.contains("use a newer kakeai"), "{args:?}: {err}");
        assert!(!err.contains("run `kakeai db migrate"), "{args:?}: {err}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_instance_of_one_store_hashes_with_one_pii_key() {
    let Some(cluster) = PgCluster::start("every_instance_of_one_store_hashes_with_one_pii_key")
    else {
        return;
    };
    let url = cluster.database("bot");
    let line = FakeLine::ok().await;
    let llm = model().await;
    let cfg = fast_config(0.2);
    let args = ["--db", url.as_str()];
    let first = Serve::start(Env::new(), &line.url, &llm.url, &cfg, &args);
    // Another instance with a key file of its own: refused before it stores a digest.
    let other = Env::new();
    let cfg_file = other.file("serve.toml", &cfg);
    let out = other
        .cmd(&[
            "serve",
            "--line",
            "--listen",
            "127.0.0.1:0",
            "--metrics-listen",
            "",
            "--config",
            &cfg_file,
            "--line-api-base",
            &line.url,
            "--endpoint",
            &llm.url,
            "--api",
            "openai",
            "--model",
            "tiny-ja",
            "--no-vault",
            "--db",
            &url,
        ])
        .env("KAKEAI_LINE_CHANNEL_SECRET", SECRET)
        .env("KAKEAI_LINE_ACCESS_TOKEN", TOKEN)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("this store's PII key is not the one in"),
        "{err}"
    );
    // The key never enters the database: only its check value, which is not the key.
    let key = std::fs::read_to_string(first.env.dir.path().join("data").join("pii.key"))
        .expect("key file");
    let store = Store::open_target(Path::new(&url)).expect("opens");
    let check: String = store
        .db()
        .one("SELECT check_value FROM pii_key_check", p![])
        .expect("one check value");
    assert_ne!(check.trim(), key.trim());
    assert!(!check.contains(key.trim()));
    // With the first instance's key file it starts.
    let same = Env::new();
    std::fs::create_dir_all(same.dir.path().join("data")).unwrap();
    std::fs::copy(
        first.env.dir.path().join("data").join("pii.key"),
        same.dir.path().join("data").join("pii.key"),
    )
    .unwrap();
    let second = Serve::start(same, &line.url, &llm.url, &cfg, &args);
    let ev = text(&event_id(), ("user", &user(7)), "m7", "こんにちは");
    assert_eq!(second.send(&body(&[ev])).await, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn healthz_fails_once_the_store_is_away_too_long_and_recovers() {
    let Some(cluster) = PgCluster::start("healthz_fails_once_the_store_is_away_too_long") else {
        return;
    };
    let url = cluster.database("bot");
    let line = FakeLine::ok().await;
    let llm = model().await;
    let cfg = format!(
        "lease_seconds = 1\nstore_down_seconds = 2\n{}",
        fast_config(0.2)
    );
    let bot = Serve::start(
        Env::new(),
        &line.url,
        &llm.url,
        &cfg,
        &["--db", url.as_str()],
    );
    let health = || async {
        let r = reqwest::get(format!("{}/healthz", bot.metrics_url))
            .await
            .unwrap();
        (r.status().as_u16(), r.text().await.unwrap())
    };
    assert_eq!(health().await.0, 200);
    cluster.stop();
    let mut seen = (0, String::new());
    for _ in 0..100 {
        seen = health().await;
        if seen.0 == 503 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(seen.0, 503, "{seen:?}");
    assert!(seen.1.contains("unreachable for"), "{seen:?}");
    let ev = text(&event_id(), ("user", &user(1)), "m1", "こんにちは");
    assert_eq!(bot.send(&body(std::slice::from_ref(&ev))).await, 500);
    cluster.start_again();
    let mut back = 0;
    for _ in 0..100 {
        back = health().await.0;
        if back == 200 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(back, 200, "healthy again once the store is back");
    assert_eq!(bot.send(&body(&[ev])).await, 200);
    let err = bot.stderr.lock().unwrap().join("\n");
    assert_eq!(err.matches("the store cannot be used").count(), 1, "{err}");
    assert_eq!(err.matches("the store is back after").count(), 1, "{err}");
}

/// A small tmpfs for the SQLite disk-full fault (root with mount rights, as in CI); None with a
/// note elsewhere. Unmounted when dropped.
struct SmallDisk {
    dir: tempfile::TempDir,
}

impl SmallDisk {
    fn mount(megabytes: u32) -> Option<SmallDisk> {
        let dir = tempfile::tempdir().unwrap();
        let ok = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={megabytes}m"), "tmpfs"])
            .arg(dir.path())
            .output()
            .is_ok_and(|o| o.status.success());
        if !ok {
            let root = std::process::Command::new("id")
                .arg("-u")
                .output()
                .is_ok_and(|o| o.stdout.starts_with(b"0\n"));
            assert!(
                !(root && std::env::var("CI").as_deref() == Ok("true")),
                "CI runs as root and must mount a tmpfs for the disk-full fault"
            );
            eprintln!("cannot mount a tmpfs here: skipping the disk-full fault");
            return None;
        }
        Some(SmallDisk { dir })
    }

    /// Fills what is left with a filler file (64 KiB writes until the disk says no).
    fn fill(&self) {
        use std::io::Write;
        let mut f = std::fs::File::create(self.dir.path().join("filler")).unwrap();
        let chunk = vec![7u8; 64 * 1024];
        while f.write_all(&chunk).and_then(|_| f.flush()).is_ok() {}
        let small = vec![7u8; 512];
        while f.write_all(&small).and_then(|_| f.flush()).is_ok() {}
    }

    fn free(&self) {
        let _ = std::fs::remove_file(self.dir.path().join("filler"));
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(self.dir.path())
            .status();
    }
}

/// SQLite's disk fills under the bot at 200 events a second: what cannot be stored is not
/// acknowledged (500, LINE delivers it again), nothing acknowledged is lost, each user is
/// answered once, and once space is freed webhooks are acknowledged again within 5 s. A
/// workbench's mark on the full disk is refused (not acknowledged) and saved once it is freed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bot_and_a_mark_survive_a_full_disk_under_the_sqlite_store() {
    let Some(disk) = SmallDisk::mount(24) else {
        return;
    };
    let db = disk.dir.path().join("kakeai.db");
    let (line, _llm, bot) = bot_on(db.to_str().unwrap()).await;
    let n = 800usize;
    let events: Vec<serde_json::Value> = (0..n)
        .map(|i| {
            text(
                &event_id(),
                ("user", &user(i)),
                &format!("d{i}"),
                "今日はなにしてた？",
            )
        })
        .collect();
    let disk = Arc::new(disk);
    let freed: Arc<Mutex<Option<Instant>>> = Arc::default();
    let faults = {
        let (d, freed) = (disk.clone(), freed.clone());
        tokio::task::spawn_blocking(move || {
            std::thread::sleep(Duration::from_millis(1000));
            d.fill();
            std::thread::sleep(Duration::from_millis(1500));
            d.free();
            *freed.lock().unwrap() = Some(Instant::now());
        })
    };
    let log = load(&bot, &events, 200).await;
    faults.await.unwrap();
    let back = freed.lock().unwrap().expect("freed");
    let refused = redeliver_until_acknowledged(&bot, &events, &log).await;
    let first = log
        .iter()
        .filter(|(_, c, at)| *c == 200 && *at >= back)
        .map(|(_, _, at)| at.duration_since(back))
        .min();
    eprintln!(
        "{refused} of {n} deliveries refused while the disk was full; acknowledged again {first:?} after it was freed"
    );
    assert!(refused > 0, "the disk filled under load");
    if let Some(first) = first {
        assert!(first <= Duration::from_secs(5), "{first:?}");
    }
    answered_once_each(&line, &events, &bot).await;
    let store = Store::open(&db).expect("opens");
    let stored: i64 = store
        .db()
        .one("SELECT COUNT(*) FROM line_events", p![])
        .unwrap();
    assert_eq!(stored, n as i64, "every acknowledged event stored once");
    drop(store);
    // Reviewers' marks on the full disk: each one acknowledged is stored (SQLite may still
    // have room in its write-ahead log), the first refused leaves nothing, and a mark is saved
    // again once there is room.
    let mut store = Store::open(&db).expect("opens");
    let run = new_run(&mut store, "満杯").expect("a run while there is room");
    let mark = |n: u32| kakeai::store::NewAction {
        run_id: run,
        turn: Some(n),
        attempt_id: None,
        kind: kakeai::store::ActionKind::Note,
        payload: serde_json::json!({"note": "メモ".repeat(400)}),
    };
    disk.fill();
    let mut acked = Vec::new();
    let mut refused = None;
    for n in 0..20_000 {
        match store.add_action(&mark(n)) {
            Ok(_) => acked.push(Some(n)),
            Err(_) => {
                refused = Some(n);
                break;
            }
        }
    }
    let refused = refused.expect("the full disk refused a mark");
    disk.free();
    store
        .add_action(&mark(refused + 1))
        .expect("saved once there is room");
    let turns: Vec<Option<u32>> = store
        .load_run(run)
        .unwrap()
        .actions
        .iter()
        .map(|a| a.turn)
        .collect();
    acked.push(Some(refused + 1));
    assert_eq!(
        turns, acked,
        "acknowledged marks stored, the refused one not"
    );
}

/// One save of a reviewer's mark: when it began and ended, its turn, and why it was refused.
struct Save {
    began: Instant,
    ended: Instant,
    turn: u32,
    refused: Option<String>,
}

/// A reviewer saving a mark (a note on the next turn) every half second on `url` until
/// `stop`, as the workbench does; each save's outcome.
fn reviewer(url: String, run: i64, stop: Arc<std::sync::atomic::AtomicBool>) -> Vec<Save> {
    let mut store = Store::open_target(Path::new(&url)).expect("opens");
    let mut saves = Vec::new();
    let mut turn = 0u32;
    while !stop.load(std::sync::atomic::Ordering::SeqCst) {
        let began = Instant::now();
        let r = store.add_action(&kakeai::store::NewAction {
            run_id: run,
            turn: Some(turn),
            attempt_id: None,
            kind: kakeai::store::ActionKind::Note,
            payload: serde_json::json!({"note": "ここ直したい"}),
        });
        saves.push(Save {
            began,
            ended: Instant::now(),
            turn,
            refused: r.err().map(|e| e.to_string()),
        });
        turn += 1;
        std::thread::sleep(Duration::from_millis(500));
    }
    saves
}

/// A real 30 s network partition between PostgreSQL (in its own network namespace, reached
/// over TCP through a veth pair) and both the bot at 200 webhooks/s and a reviewer saving
/// marks: every packet both ways is dropped, unreported, so only TCP's own timers can tell.
/// Nothing is acknowledged while the link is cut (the partition is real); every acknowledged
/// event is stored once and answered once; webhooks are acknowledged again within 5 s of the
/// link's return; the reviewer sees marks refused (`✗ NOT saved`) during the partition, each
/// acknowledged mark is stored, and marks are saved again after it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bot_and_a_reviewer_survive_a_30_s_network_partition() {
    const TEST: &str = "the_bot_and_a_reviewer_survive_a_30_s_network_partition";
    let Some(net) = common::netns::Netns::new(TEST) else {
        return;
    };
    let Some(cluster) = PgCluster::start_in(TEST, &net) else {
        return;
    };
    cluster.database("bot");
    let url = cluster.tcp_url("bot");
    let (line, _llm, bot) = bot_on(&url).await;
    let run = new_run(
        &mut Store::open_target(Path::new(&url)).expect("opens"),
        "分断",
    )
    .expect("a run before the cut");
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let marks = {
        let (url, stop) = (url.clone(), stop.clone());
        std::thread::spawn(move || reviewer(url, run, stop))
    };
    // The link is cut at 2 s and healed 30 s later. 200 events a second (each from its own
    // user) from the start to 4 s into the cut and from 4 s before the return to 5 s after it,
    // 20 a second in between (the bot answers each one: a sustained 200 a second for 37 s is
    // more answers than this test can wait for).
    let s = Duration::from_secs;
    let at = schedule(s(37), &[(s(0), s(6)), (s(28), s(37))], 200, 20);
    let n = at.len();
    let events: Vec<serde_json::Value> = (0..n)
        .map(|i| {
            text(
                &event_id(),
                ("user", &user(i)),
                &format!("p{i}"),
                "今日はなにしてた？",
            )
        })
        .collect();
    let times: Arc<Mutex<Option<(Instant, Instant)>>> = Arc::default();
    let faults = {
        let times = times.clone();
        tokio::task::spawn_blocking(move || {
            let mut net = net;
            std::thread::sleep(Duration::from_millis(2000));
            net.cut();
            let cut = Instant::now();
            std::thread::sleep(Duration::from_secs(30));
            net.heal();
            *times.lock().unwrap() = Some((cut, Instant::now()));
            net
        })
    };
    // LINE gives a webhook up after a few seconds; one still unanswered then is delivered
    // again later.
    let log = load_at(&bot, &events, &at, Some(Duration::from_secs(5))).await;
    let _net = faults.await.unwrap();
    let (cut, healed) = times.lock().unwrap().expect("cut and healed");
    timeline(&log, cut, healed);
    for l in bot
        .stderr
        .lock()
        .unwrap()
        .iter()
        .filter(|l| l.contains(" store "))
    {
        eprintln!("{l}");
    }
    let refused = redeliver_until_acknowledged(&bot, &events, &log).await;
    // The partition was real: nothing was acknowledged while the link was cut (a commit
    // answered just before the cut may still arrive in its first second).
    let during = log
        .iter()
        .filter(|(_, c, at)| *c == 200 && *at > cut + Duration::from_secs(1) && *at < healed)
        .count();
    assert_eq!(during, 0, "acknowledged while the link was cut");
    let first = log
        .iter()
        .filter(|(_, c, at)| *c == 200 && *at >= healed)
        .map(|(_, _, at)| at.duration_since(healed))
        .min()
        .expect("acknowledgements after the link is back");
    let refused_cut = log
        .iter()
        .filter(|(_, c, at)| *c != 200 && *at > cut && *at < healed)
        .count();
    eprintln!(
        "acknowledged again {first:?} after the link was back; {refused} of {n} deliveries \
         refused, {refused_cut} of them while it was cut"
    );
    assert!(
        first <= Duration::from_secs(5),
        "first acknowledgement {first:?} after the link was back"
    );
    assert!(refused > 0, "the partition happened under load");
    answered_once_each(&line, &events, &bot).await;
    let store = Store::open_target(Path::new(&url)).expect("opens");
    let stored: i64 = store
        .db()
        .one("SELECT COUNT(*) FROM line_events", p![])
        .unwrap();
    assert_eq!(stored, n as i64, "every acknowledged event stored once");
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    let saves = marks.join().unwrap();
    reviewer_saw_the_partition(&store, run, &saves, cut, healed);
    let err = bot.stderr.lock().unwrap().join("\n");
    for l in err
        .lines()
        .filter(|l| l.contains(" store ") || l.contains(" resume "))
    {
        eprintln!("{l}");
    }
}

/// Per second from the cut: how many webhooks were answered 200, refused, or given up.
fn timeline(log: &[Sent], cut: Instant, healed: Instant) {
    let mut per: std::collections::BTreeMap<i64, [usize; 3]> = Default::default();
    for (_, code, at) in log {
        let s = if *at >= cut {
            at.duration_since(cut).as_secs() as i64
        } else {
            -(cut.duration_since(*at).as_secs() as i64) - 1
        };
        let k = match code {
            200 => 0,
            0 => 2,
            _ => 1,
        };
        per.entry(s).or_default()[k] += 1;
    }
    let back = healed.duration_since(cut).as_secs_f64();
    eprintln!(
        "answered per second after the cut (healed at {back:.1} s): [200, refused, given up]"
    );
    for (s, c) in per {
        eprintln!("  {s:>3} s: {c:?}");
    }
}

/// The reviewer's side of the partition: refused (with the reason) while it lasted, never
/// acknowledged then, saved again after it, and every acknowledged mark stored once.
fn reviewer_saw_the_partition(
    store: &Store,
    run: i64,
    saves: &[Save],
    cut: Instant,
    healed: Instant,
) {
    let from_cut = |t: Instant| match t.checked_duration_since(cut) {
        Some(d) => d.as_secs_f64(),
        None => -cut.duration_since(t).as_secs_f64(),
    };
    for s in saves
        .iter()
        .filter(|s| s.ended > cut && s.began < healed + Duration::from_secs(3))
    {
        let (b, e) = (from_cut(s.began), from_cut(s.ended));
        eprintln!(
            "mark {}: {b:.1}–{e:.1} s from the cut: {:?}",
            s.turn, s.refused
        );
    }
    let refused_during: Vec<&Save> = saves
        .iter()
        .filter(|s| s.refused.is_some() && s.ended > cut && s.ended < healed)
        .collect();
    assert!(
        !refused_during.is_empty(),
        "no mark was refused while the link was cut: the reviewer saw no NOT saved"
    );
    for s in &refused_during {
        let why = s.refused.as_deref().unwrap_or("");
        assert!(why.contains("PostgreSQL"), "the reason names it: {why}");
    }
    assert!(
        !saves.iter().any(|s| s.refused.is_none()
            && s.began > cut + Duration::from_secs(1)
            && s.ended < healed),
        "a mark acknowledged while the link was cut"
    );
    let again = saves
        .iter()
        .find(|s| s.refused.is_none() && s.began >= healed)
        .expect("marks are saved again after the partition");
    eprintln!(
        "the reviewer's first mark after the link was back saved {:?} after it; first refused \
         {:?} after the cut",
        again.ended.duration_since(healed),
        refused_during[0].ended.duration_since(cut)
    );
    let stored: Vec<u32> = store
        .load_run(run)
        .unwrap()
        .actions
        .iter()
        .filter_map(|a| a.turn)
        .collect();
    let acked: Vec<u32> = saves
        .iter()
        .filter(|s| s.refused.is_none())
        .map(|s| s.turn)
        .collect();
    // Acknowledged means committed, once; a refused mark is stored only when its commit's
    // outcome was unknown (said so in its reason).
    let unsure: Vec<u32> = saves
        .iter()
        .filter(|s| {
            s.refused
                .as_deref()
                .is_some_and(|r| r.contains("could not be learned"))
        })
        .map(|s| s.turn)
        .collect();
    for t in &acked {
        assert_eq!(stored.iter().filter(|s| *s == t).count(), 1, "mark {t}");
    }
    for t in &stored {
        assert!(
            acked.contains(t) || unsure.contains(t),
            "refused mark {t} stored"
        );
    }
}
