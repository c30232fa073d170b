//! Review queues in the workbench (issue 24 §2): with `--queue NAME --reviewer ME`, `m` claims
//! the next item of the shared queue and opens its run at that turn; a 👍 there judges it;
//! two reviewers' workbenches over one store with k = 1 share the items between them (each
//! judged once) and both hear when nothing is left, and the queues pane shows the queue done
//! with each reviewer's count. Generated stores, several seeds.

mod common;

use std::time::{Duration, Instant};

use kakeai::annotate::{Filter, QueueSpec, db};
use kakeai::director::Status;
use kakeai::llm::LlmConfig;
use kakeai::store::Store;
use kakeai::tui::Runtime;
use kakeai::tui::app::{App, Conn, UiMsg};
use kakeai::tui::focus::Pane;
use kakeai::tui::keymap::Action;
use tokio::sync::mpsc::UnboundedReceiver;

fn seed(db: &std::path::Path, seed: u64, runs: usize, turns: u32) -> usize {
    let mut store = Store::open(db).unwrap();
    let statuses = [Status::Pass, Status::Warn, Status::Retry];
    let flagged = common::stores::committed_runs(&mut store, seed, runs, turns, &statuses)
        .iter()
        .filter(|(_, _, s)| *s != Status::Pass)
        .count();
    db::create(
        &mut store,
        &QueueSpec {
            name: "flagged".into(),
            filter: Filter {
                statuses: vec![Status::Retry, Status::Warn],
                ..Filter::default()
            },
            k: 1,
            lease_ms: 60_000,
            overlap: false,
            comparison: None,
        },
        Some("lead"),
    )
    .unwrap();
    flagged
}

fn workbench(db: &std::path::Path, me: &str) -> (Runtime, UnboundedReceiver<UiMsg>) {
    let services = common::tui::services(db, LlmConfig::default(), None);
    let mut app: App = common::tui::app(common::tui::header(
        "http://127.0.0.1:1",
        "m",
        Conn::Down("none".into()),
        "0",
        "k.db",
    ));
    app.reviewer = Some(me.into());
    app.queue = Some("flagged".into());
    Runtime::new(app, services)
}

/// Acts, runs the commands, and feeds messages to the app until `done` holds.
fn step(
    rt: &mut Runtime,
    rx: &mut UnboundedReceiver<UiMsg>,
    action: Action,
    done: impl Fn(&App) -> bool,
) {
    rt.app.status.clear();
    for cmd in rt.app.act(action) {
        rt.execute(cmd);
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    while !done(&rt.app) {
        assert!(Instant::now() < deadline, "status: {}", rt.app.status);
        match rx.try_recv() {
            Ok(m) => {
                rt.app.on_msg(m);
                for cmd in std::mem::take(&mut rt.app.queued) {
                    rt.execute(cmd);
                }
            }
            Err(_) => std::thread::sleep(Duration::from_millis(5)),
        }
    }
}

fn claimed(a: &App) -> bool {
    a.status.contains("queue flagged:")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn m_claims_queue_items_and_two_reviewers_share_them() {
    for s in 1..=3u64 {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("k.db");
        let flagged = seed(&db, s * 104_729, 3, 6);
        assert!(flagged > 2, "seed {s}: too few flagged turns to share");
        let (mut taro, mut taro_rx) = workbench(&db, "taro");
        let (mut hana, mut hana_rx) = workbench(&db, "花子");
        let mut judged: Vec<(i64, usize)> = Vec::new();
        let mut turn_taro = true;
        loop {
            let (rt, rx) = if turn_taro {
                (&mut taro, &mut taro_rx)
            } else {
                (&mut hana, &mut hana_rx)
            };
            turn_taro = !turn_taro;
            step(rt, rx, Action::NextUnreviewed, claimed);
            if rt.app.status.contains("nothing left") {
                break;
            }
            // The claimed run is open at the claimed turn, a flagged one.
            let run = rt.app.run.run_id.expect("a run is open");
            let t = &rt.app.run.turns[rt.app.selected];
            assert!(
                rt.app
                    .status
                    .contains(&format!("run {run} turn {}", t.turn)),
                "{}",
                rt.app.status
            );
            assert_ne!(t.status(), Some(Status::Pass), "seed {s}");
            let item = (run, t.turn);
            assert!(!judged.contains(&item), "{item:?} claimed twice (seed {s})");
            judged.push(item);
            step(rt, rx, Action::ThumbUp, |a| a.status.contains("saved"));
            assert!(judged.len() <= flagged, "seed {s}");
        }
        assert_eq!(judged.len(), flagged, "every flagged turn once (seed {s})");
        // The other reviewer hears it too.
        let (rt, rx) = if turn_taro {
            (&mut taro, &mut taro_rx)
        } else {
            (&mut hana, &mut hana_rx)
        };
        step(rt, rx, Action::NextUnreviewed, claimed);
        assert!(rt.app.status.contains("nothing left"), "{}", rt.app.status);
        // The queues pane shows the queue done and who judged how many.
        while rt.app.pane != Pane::Queues {
            for cmd in rt.app.act(Action::NextPane) {
                rt.execute(cmd);
            }
        }
        step(rt, rx, Action::Probe, |a| {
            a.rooms.queues.rows.iter().any(|q| q.done == flagged)
        });
        let sc = common::tui::screen(&rt.app, 140, 40);
        assert!(
            sc.contains(&format!("flagged  {flagged}/{flagged} done")),
            "{sc}"
        );
        assert!(
            sc.contains("judged:") && sc.contains("taro") && sc.contains("花子"),
            "{sc}"
        );
    }
}

#[test]
fn without_a_reviewer_the_queue_says_what_it_needs() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("k.db");
    seed(&db, 5, 1, 4);
    let rt = tokio::runtime::Runtime::new().unwrap();
    let _g = rt.enter();
    let (mut w, _rx) = workbench(&db, "taro");
    w.app.reviewer = None;
    let cmds = w.app.act(Action::NextUnreviewed);
    assert!(cmds.is_empty());
    assert!(
        w.app.errors.iter().any(|e| e.contains("--reviewer")),
        "{:?}",
        w.app.errors
    );
}
