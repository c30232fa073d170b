//! Load on `kakeai serve --line` (issue 11): RATE signed webhook requests per second for SECS
//! seconds (default 200/s × 60 s), open loop, against the real binary with the fake LINE API
//! and the fake model in this process. 1 % of the events are sent again as redeliveries.
//! Checks that every distinct event got exactly one reply (none lost, none duplicated) and
//! prints the acknowledgement latency percentiles (client-side and the server's own).
//!
//!   cargo bench --bench serve_load                 (release)
//!   KAKEAI_LOAD_RATE=200 KAKEAI_LOAD_SECS=60 cargo bench --profile dev --bench serve_load
//!
//! Several instances on one PostgreSQL (issue 24 §3): `KAKEAI_LOAD_INSTANCES=3` starts a
//! throwaway cluster from the system's binaries and N instances on it; requests go round-robin
//! over the live ones (a load balancer); `KAKEAI_LOAD_KILL_AT=30` kills one with `kill -9`
//! after that many seconds — the balancer stops sending to it, and a request it did not
//! acknowledge is sent again to another instance as LINE redelivers it. Exactly once is then
//! read from the fake LINE API (each event's answer delivered once: replies by token, pushes
//! by retry key, a message never reached by both) and from the shared store.
//!
//!   KAKEAI_LOAD_INSTANCES=3 KAKEAI_LOAD_RATE=300 KAKEAI_LOAD_KILL_AT=30 cargo bench --bench serve_load

#[path = "../tests/cli_env/mod.rs"]
mod cli_env;
#[path = "../tests/common/mod.rs"]
#[allow(unused)]
mod common;
#[path = "../tests/line_fake/mod.rs"]
mod line_fake;
#[path = "../tests/llm_fake/mod.rs"]
mod llm_fake;
#[path = "../tests/serve_common/mod.rs"]
mod serve_common;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serve_common::*;

fn env_num(k: &str, d: u64) -> u64 {
    std::env::var(k)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(d)
}

fn main() {
    // `cargo bench` passes --bench; nothing else is accepted.
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(load());
}

async fn load() {
    let rate = env_num("KAKEAI_LOAD_RATE", 200);
    let secs = env_num("KAKEAI_LOAD_SECS", 60);
    let instances = env_num("KAKEAI_LOAD_INSTANCES", 1).max(1) as usize;
    let kill_at = std::env::var("KAKEAI_LOAD_KILL_AT")
        .ok()
        .and_then(|v| v.parse::<u64>().ok());
    let line = line_fake::FakeLine::ok().await;
    let llm = llm(
        &["うん、", "それいいね", "！"],
        Arc::new(Mutex::new("{}".into())),
    )
    .await;
    let cluster = (instances > 1).then(|| {
        common::pg::PgCluster::start("serve_load")
            .expect("several instances share a PostgreSQL store: install PostgreSQL")
    });
    let db_url = cluster.as_ref().map(|c| c.database("load"));
    let mut extra = vec!["--no-vault"];
    if let Some(u) = &db_url {
        extra.extend(["--db", u.as_str()]);
    }
    let cfg = format!("workers = 16\nlease_seconds = 5\n{}", fast_config(60.0));
    let mut servers: Vec<Serve> = (0..instances)
        .map(|_| {
            Serve::start(
                cli_env::Env::new(),
                &line.url,
                &llm.server.url,
                &cfg,
                &extra,
            )
        })
        .collect();
    let urls: Arc<Vec<String>> = Arc::new(
        servers
            .iter()
            .map(|s| format!("{}/webhook", s.url))
            .collect(),
    );
    let alive: Arc<Vec<AtomicBool>> =
        Arc::new((0..instances).map(|_| AtomicBool::new(true)).collect());
    println!(
        "load: {rate} req/s × {secs} s against {instances} instance(s) on {} (load average {})",
        if db_url.is_some() {
            "one PostgreSQL"
        } else {
            "one SQLite file"
        },
        loadavg()
    );
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(256)
        .build()
        .unwrap();
    let total = rate * secs;
    let t0 = Instant::now();
    let mut tasks = Vec::with_capacity(total as usize);
    let mut redelivered = 0u64;
    let mut killed = None;
    for i in 0..total {
        let at = t0 + Duration::from_micros(i * 1_000_000 / rate);
        tokio::time::sleep_until(at.into()).await;
        if let Some(k) = kill_at
            && killed.is_none()
            && instances > 1
            && t0.elapsed() >= Duration::from_secs(k)
        {
            alive[0].store(false, Ordering::SeqCst);
            let _ = servers[0].child.kill();
            let _ = servers[0].child.wait();
            killed = Some(t0.elapsed());
        }
        let user = format!("U{:032x}", i % 500);
        let id = event_id();
        let ev = text(&id, ("user", &user), &format!("L{i}"), "今日はなにしてた？");
        let again = (i % 100 == 7).then(|| {
            let mut e = ev.clone();
            e["deliveryContext"]["isRedelivery"] = serde_json::json!(true);
            e
        });
        redelivered += u64::from(again.is_some());
        let (c, urls, alive) = (client.clone(), urls.clone(), alive.clone());
        tasks.push(tokio::spawn(async move {
            let mut out = Vec::new();
            for (k, e) in std::iter::once(ev).chain(again).enumerate() {
                out.extend(deliver(&c, &urls, &alive, i as usize + k, e).await);
            }
            out
        }));
    }
    let sent_for = t0.elapsed();
    let mut acks = Vec::new();
    let (mut failed, mut resent) = (0, 0);
    for t in tasks {
        for (ok, s, retried) in t.await.unwrap() {
            failed += usize::from(!ok);
            resent += usize::from(retried);
            acks.push(s);
        }
    }
    acks.sort_by(f64::total_cmp);
    let q = |p: f64| kakeai::serve::metrics::quantile(&acks, p) * 1000.0;
    println!(
        "sent {} requests ({} redeliveries) in {:.1} s; not acknowledged in the end: {failed}",
        acks.len(),
        redelivered,
        sent_for.as_secs_f64()
    );
    if let Some(k) = killed {
        println!(
            "instance 1 of {instances} killed with kill -9 at {:.1} s; {resent} request(s) it did not acknowledge were sent again to another instance",
            k.as_secs_f64()
        );
    }
    println!(
        "ack latency (client, acknowledged requests): p50 {:.2} ms, p90 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        q(0.5),
        q(0.9),
        q(0.99),
        q(1.0)
    );
    let live = servers
        .iter()
        .zip(alive.iter())
        .find(|(_, a)| a.load(Ordering::SeqCst))
        .map(|(s, _)| s)
        .unwrap();
    let server_p99 = live
        .metric("kakeai_line_ack_seconds{quantile=\"0.99\"}")
        .await
        * 1000.0;
    println!("ack latency (server, one live instance, last 20,000): p99 {server_p99:.2} ms");
    // Drain: wait until every event is answered, or nothing moves for 60 s.
    let drain0 = Instant::now();
    let mut last = (0, Instant::now());
    loop {
        let n = line.calls().iter().filter(|c| c.delivered()).count();
        if n as u64 >= total || last.1.elapsed() > Duration::from_secs(60) {
            break;
        }
        if n != last.0 {
            last = (n, Instant::now());
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let calls = line.calls();
    let delivered = calls.iter().filter(|c| c.delivered()).count();
    // Each delivered call names its message: a reply by its token (rt-<message id>), a push
    // by its retry key (derived from the chat, the stored row and the message id).
    let pushes = match &db_url {
        Some(u) => retry_keys(u),
        None => HashMap::new(),
    };
    let mut per: HashMap<String, usize> = HashMap::new();
    for c in calls.iter().filter(|c| c.delivered()) {
        let msg = match c.body["replyToken"].as_str() {
            Some(t) => t.trim_start_matches("rt-").to_string(),
            None => c
                .retry_key
                .as_ref()
                .and_then(|k| pushes.get(k).cloned())
                .unwrap_or_else(|| format!("push {:?}", c.retry_key)),
        };
        *per.entry(msg).or_default() += 1;
    }
    let lost = (0..total)
        .filter(|i| !per.contains_key(&format!("L{i}")))
        .count();
    let dup = per.values().filter(|n| **n > 1).count();
    println!(
        "replies delivered: {delivered} for {total} events — lost {lost}, duplicated {dup}; all answered {:.1} s after the last request",
        drain0.elapsed().as_secs_f64()
    );
    let answer_p99 = live
        .metric("kakeai_line_answer_seconds{quantile=\"0.99\"}")
        .await
        * 1000.0;
    let answer_p50 = live
        .metric("kakeai_line_answer_seconds{quantile=\"0.5\"}")
        .await
        * 1000.0;
    println!(
        "answer latency (server, one live instance): p50 {answer_p50:.0} ms, p99 {answer_p99:.0} ms; load average {}",
        loadavg()
    );
    let pass = failed == 0 && lost == 0 && dup == 0 && q(0.99) < 50.0;
    println!(
        "{}",
        if pass {
            "PASS: no lost or duplicated reply, p99 ack < 50 ms"
        } else {
            "FAIL"
        }
    );
    drop(servers);
    if !pass {
        std::process::exit(1);
    }
}

/// Posts one event to the next live instance (round-robin from `n`, as a load balancer); an
/// instance that does not acknowledge it (killed) makes LINE send it again, to another one,
/// marked a redelivery. (ok, seconds of the acknowledged attempt, sent again).
async fn deliver(
    c: &reqwest::Client,
    urls: &[String],
    alive: &[AtomicBool],
    n: usize,
    mut ev: serde_json::Value,
) -> Option<(bool, f64, bool)> {
    let mut retried = false;
    for k in 0..urls.len() * 3 {
        let at = (n + k) % urls.len();
        if !alive[at].load(Ordering::SeqCst) {
            continue;
        }
        let b = body(std::slice::from_ref(&ev));
        let sig = kakeai::serve::signature::sign(SECRET, b.as_bytes());
        let start = Instant::now();
        let r = c
            .post(&urls[at])
            .header("x-line-signature", sig)
            .body(b)
            .send()
            .await;
        if r.map(|r| r.status().as_u16() == 200).unwrap_or(false) {
            return Some((true, start.elapsed().as_secs_f64(), retried));
        }
        retried = true;
        ev["deliveryContext"]["isRedelivery"] = serde_json::json!(true);
    }
    Some((false, 0.0, retried))
}

/// Retry key → LINE message id, for every user message in the shared store (a push carries
/// the key `outbox::retry_key` derives).
fn retry_keys(url: &str) -> HashMap<String, String> {
    let store = kakeai::store::Store::open_target(std::path::Path::new(url)).expect("opens");
    let rows: Vec<(i64, String, String)> = store
        .db()
        .query_map(
            "SELECT id, channel_id, message_id FROM line_messages WHERE role = 'user'",
            kakeai::p![],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .expect("read the store");
    rows.into_iter()
        .map(|(id, ch, m)| (kakeai::serve::outbox::retry_key(&ch, id, &m), m))
        .collect()
}

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}
