//! Criterion benchmark for issue 25 §1: 100,000 stored attempts (10,000 runs of 5 turns, a
//! Director RETRY then an accepted line on every turn, every request kept, a reviewer's 👍 on
//! every other turn) → the DPO file, streamed run by run. Target: < 2 s, constant memory.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use kakeai::dataset::{Format, Options, export};
use kakeai::store::Store;
use serde_json::json;

fn build(path: &std::path::Path) -> Store {
    let mut store = Store::open(path).unwrap();
    let tx = store.connection().transaction().unwrap();
    {
        let mut run = tx
            .prepare(
                "INSERT INTO runs (topic, model, options, ruleset_version, started_at, status)
                 VALUES (?1, 'gemma2:27b', '{}', 'r-1', ?2, 'completed')",
            )
            .unwrap();
        let mut att = tx
            .prepare(
                "INSERT INTO attempts (run_id, turn, speaker, attempt, state, text, status,
                                       verdict, started_at)
                 VALUES (?1, ?2, ?3, ?4, 'done', ?5, ?6, ?7, ?8)",
            )
            .unwrap();
        let mut req = tx
            .prepare("INSERT INTO requests (attempt_id, request) VALUES (?1, ?2)")
            .unwrap();
        let mut turn = tx
            .prepare(
                "INSERT INTO turns (run_id, turn, speaker, attempt_id, text, status, committed_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, 'PASS', ?6)",
            )
            .unwrap();
        let mut act = tx
            .prepare(
                "INSERT INTO actions (run_id, turn, kind, payload, created_at, reviewer)
                 VALUES (?1, ?2, 'thumb', '{\"up\":true}', ?3, '花子')",
            )
            .unwrap();
        let at = "2026-11-24T10:00:00.000Z";
        for r in 0..10_000 {
            run.execute(rusqlite::params![format!("話題{r}"), at])
                .unwrap();
            let run_id = tx.last_insert_rowid();
            for t in 1..=5u32 {
                let sp = if t % 2 == 1 { "yana" } else { "ayu" };
                let system = format!(
                    "あなたは「{sp}」です。\n【世界設定】\n港町の工房。\n\n【話題】\n話題{r}"
                );
                let mut last = 0;
                for (n, status) in [(1u32, "RETRY"), (2, "PASS")] {
                    let text = format!("{sp}の{t}番の台詞、試行{n}。");
                    let verdict = json!({"status": status, "findings": []}).to_string();
                    att.execute(rusqlite::params![
                        run_id, t, sp, n, text, status, verdict, at
                    ])
                    .unwrap();
                    last = tx.last_insert_rowid();
                    let request = json!({"messages": [
                        {"role": "system", "content": system},
                        {"role": "user", "content": format!("ターン{t}の相手の発言")}
                    ]});
                    req.execute(rusqlite::params![last, request.to_string()])
                        .unwrap();
                }
                let text = format!("{sp}の{t}番の台詞、試行2。");
                turn.execute(rusqlite::params![run_id, t, sp, last, text, at])
                    .unwrap();
                if t % 2 == 0 {
                    act.execute(rusqlite::params![run_id, t, at]).unwrap();
                }
            }
        }
    }
    tx.commit().unwrap();
    store
}

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let store = build(&dir.path().join("k.db"));
    let n: i64 = store
        .conn()
        .query_row("SELECT COUNT(*) FROM attempts", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 100_000);
    let mut g = c.benchmark_group("dataset");
    g.sample_size(10);
    g.bench_function("dpo_100k_attempts", |b| {
        b.iter(|| {
            let mut sink = std::io::sink();
            let t = export(&store, Format::Dpo, &Options::default(), &mut sink).unwrap();
            assert_eq!(t.total(), 50_000);
            black_box(t)
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
