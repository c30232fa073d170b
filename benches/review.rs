//! The reviewer's day at scale (issue 14): opening the runs browser on a store of 10,000 runs
//! and 100,000 turns (target < 50 ms), opening a run of 500 turns (target < 30 ms), and one
//! frame with that run open and the κ table in the rules pane (target ≤ 2 ms).

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use kakeai::director::{self, RuleSet};
use kakeai::store::Store;
use kakeai::text::Analysis;
use kakeai::text::analyzer::fallback::FallbackAnalyzer;
use kakeai::tui::app::{App, Conn, Header, Pane, UiMsg};
use kakeai::tui::keymap::{Action, Keymap};
use kakeai::tui::{render, reopen, theme};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

const LINES: [(&str, &str); 2] = [
    (
        "yana",
        "ねえ、川沿いの屋台でたこ焼き買ってこ！熱いうちに食べよ。",
    ),
    (
        "ayu",
        "姉様、あの屋台は七時で閉まるそうです。急ぎましょう。",
    ),
];

fn app() -> App {
    let header = Header {
        endpoint: "http://127.0.0.1:11434".into(),
        model: "gemma2:27b".into(),
        conn: Conn::Probing,
        analyzer: "fallback".into(),
        ruleset: "bench".into(),
        db: "bench.db".into(),
    };
    App::new(header, theme::load_all().0, Keymap::builtin())
}

/// 10,000 runs of 10 turns (one attempt each, with a verdict), one run of 500 turns, and
/// review actions on every other turn of that run; written in one transaction.
fn fill(s: &mut Store) -> i64 {
    let rules = RuleSet::builtin().unwrap();
    let verdicts: Vec<(String, String)> = LINES
        .iter()
        .map(|(sp, text)| {
            let v = director::judge(
                &rules,
                &FallbackAnalyzer,
                rules.character(sp).unwrap(),
                &Analysis::new(text),
                &[],
            );
            (
                v.status.as_str().to_string(),
                serde_json::to_string(&v).unwrap(),
            )
        })
        .collect();
    let tx = s.connection().transaction().unwrap();
    let mut big = 0;
    {
        let mut run = tx
            .prepare(
                "INSERT INTO runs (topic, model, started_at, status) VALUES (?1, 'gemma2:27b',
                 ?2, 'completed')",
            )
            .unwrap();
        let mut att = tx
            .prepare(
                "INSERT INTO attempts (run_id, turn, speaker, attempt, state, text, status,
                 verdict, started_at) VALUES (?1, ?2, ?3, 1, 'done', ?4, ?5, ?6, ?7)",
            )
            .unwrap();
        let mut turn = tx
            .prepare(
                "INSERT INTO turns (run_id, turn, speaker, attempt_id, text, status, committed_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            )
            .unwrap();
        let mut act = tx
            .prepare(
                "INSERT INTO actions (run_id, turn, kind, payload, created_at, reviewer)
                 VALUES (?1, ?2, 'thumb', '{\"up\":true}', ?3, 'mika')",
            )
            .unwrap();
        for r in 0..10_001u32 {
            let at = format!(
                "2026-{:02}-{:02}T10:00:{:02}.000Z",
                1 + r % 12,
                1 + r % 28,
                r % 60
            );
            let topic = format!("夏祭り {r}");
            run.execute(rusqlite::params![topic, at]).unwrap();
            let id = tx.last_insert_rowid();
            let n = if r == 10_000 { 500 } else { 10 };
            for t in 1..=n {
                let k = (t as usize - 1) % 2;
                let (sp, text) = LINES[k];
                let (st, v) = &verdicts[k];
                att.execute(rusqlite::params![id, t, sp, text, st, v, at])
                    .unwrap();
                let aid = tx.last_insert_rowid();
                turn.execute(rusqlite::params![id, t, sp, aid, text, st, at])
                    .unwrap();
                if r == 10_000 && t % 2 == 0 {
                    act.execute(rusqlite::params![id, t, at]).unwrap();
                }
            }
            big = id;
        }
    }
    tx.commit().unwrap();
    big
}

#[path = "../tests/common/pg.rs"]
#[allow(dead_code)]
mod pg_cluster;

// The cluster helper can also start a server inside a network namespace (the partition test).
#[path = "../tests/common/netns.rs"]
#[allow(dead_code)]
mod netns;

/// The same reads from a copy of the store on PostgreSQL (issue 24 §1), when the system has
/// PostgreSQL: a throwaway cluster started as the tests start one (skipped without it). The
/// store is opened as every command opens it (`Store::open_target`, through store::sql).
fn pg_figures(c: &mut Criterion, db: &std::path::Path, big: i64) {
    use kakeai::store::pg::{Pg, copy};
    use kakeai::store::target::{Target, classify};
    let Some(cluster) = pg_cluster::PgCluster::start("bench review (PostgreSQL)") else {
        return;
    };
    let url = cluster.database("bench");
    let Ok(Target::Postgres(u)) = classify(std::path::Path::new(&url)) else {
        panic!("{url} is a PostgreSQL URL");
    };
    let pg = Pg::connect(&u).unwrap();
    copy::sqlite_to_pg(db, &pg, 2000, None, &mut |_, _, _| {}).unwrap();
    drop(pg);
    let mut s = Store::open_target(std::path::Path::new(&url)).unwrap();
    c.bench_function("PostgreSQL: runs browser, a page of 10,000 runs", |b| {
        b.iter(|| black_box(s.browse("", 200, 0).unwrap().total))
    });
    c.bench_function("PostgreSQL: runs browser, filter 10,000 runs", |b| {
        b.iter(|| black_box(s.browse("祭り 99", 200, 0).unwrap().total))
    });
    c.bench_function("PostgreSQL: runs, the newest 50", |b| {
        b.iter(|| black_box(s.runs(50).unwrap().len()))
    });
    c.bench_function("PostgreSQL: open a run of 500 turns (the read)", |b| {
        b.iter(|| black_box(reopen::open(&s, big, None).unwrap().view.turns.len()))
    });
    writes(c, "PostgreSQL", &mut s);
}

/// A streamed-text save (the partial text of an attempt, as each chunk is kept) and a turn
/// commit, on the engine `s` is on.
fn writes(c: &mut Criterion, engine: &str, s: &mut Store) {
    let run = s
        .create_run(&kakeai::store::NewRun {
            topic: "bench".into(),
            model: None,
            endpoint: None,
            api: None,
            options: serde_json::json!({}),
            persona_version: None,
            ruleset_version: None,
        })
        .unwrap();
    let attempt = |s: &mut Store, turn: u32| {
        s.start_attempt(&kakeai::store::NewAttempt {
            run_id: run,
            turn,
            speaker: "yana".into(),
            attempt: 1,
            text: "ねえ".into(),
            tokens: 1,
            guidance: None,
            prompt_hash: None,
            started_at: std::time::SystemTime::now(),
            first_token_ms: Some(100),
        })
        .unwrap()
    };
    let a = attempt(s, 1);
    let mut text = String::from("ねえあゆ、");
    c.bench_function(&format!("{engine}: a streamed-text save"), |b| {
        b.iter(|| {
            text.push('あ');
            s.update_attempt_text(a, &text, text.chars().count() as u32)
                .unwrap()
        })
    });
    let mut turn = 1u32;
    c.bench_function(&format!("{engine}: a turn commit"), |b| {
        b.iter(|| {
            turn += 1;
            s.commit_turn(&kakeai::store::TurnCommit {
                run_id: run,
                turn,
                speaker: "yana".into(),
                attempt_id: None,
                text: "うん、それいいね！".into(),
                status: kakeai::director::Status::Pass,
                flags: Default::default(),
                hook: None,
                hook_depth: None,
            })
            .unwrap()
        })
    });
}

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Store::open(&dir.path().join("bench.db")).unwrap();
    let big = fill(&mut s);
    let mut term = Terminal::new(TestBackend::new(140, 40)).unwrap();

    c.bench_function("runs browser: open on 10,000 runs (page + frame)", |b| {
        b.iter(|| {
            let mut a = app();
            a.act(Action::Runs);
            a.on_msg(UiMsg::Runs {
                filter: String::new(),
                offset: 0,
                page: Ok(s.browse("", 200, 0).unwrap()),
            });
            term.draw(|f| render::draw(f, &a)).unwrap();
            black_box(a.runs.as_ref().map(|r| r.page.rows.len()))
        })
    });
    c.bench_function("runs browser: filter 10,000 runs", |b| {
        b.iter(|| black_box(s.browse("祭り 99", 200, 0).unwrap().total))
    });
    c.bench_function(
        "runs browser: a page of 10,000 runs (the read alone)",
        |b| b.iter(|| black_box(s.browse("", 200, 0).unwrap().total)),
    );
    pg_figures(c, &dir.path().join("bench.db"), big);
    c.bench_function("open a run of 500 turns", |b| {
        b.iter(|| {
            let mut a = app();
            let o = reopen::open(&s, big, None).unwrap();
            a.on_msg(UiMsg::RunOpened {
                ticket: a.tickets.open,
                run: Ok(Box::new(o)),
            });
            black_box(a.run.turns.len())
        })
    });
    let mut a = app();
    a.on_msg(UiMsg::RunOpened {
        ticket: a.tickets.open,
        run: Ok(Box::new(reopen::open(&s, big, None).unwrap())),
    });
    c.bench_function("frame: 500-turn run, detail pane", |b| {
        b.iter(|| term.draw(|f| render::draw(f, &a)).unwrap().area.width)
    });
    a.pane = Pane::Rules;
    c.bench_function("frame: 500-turn run, rules pane with κ", |b| {
        b.iter(|| term.draw(|f| render::draw(f, &a)).unwrap().area.width)
    });
    c.bench_function("search: a word in all 100,000 turns", |b| {
        b.iter(|| black_box(s.search_text(None, "閉まる", 500).unwrap().len()))
    });
    writes(c, "SQLite", &mut s);
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = bench
}
criterion_main!(benches);
