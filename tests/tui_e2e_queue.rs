//! Quitting the workbench gives back the queue item it holds, in a real terminal (tmux): with
//! `--queue flagged --reviewer taro`, `m` claims an item (a lease in the store), `q` quits, and
//! the lease is gone at once — another reviewer gets that item now, not when the lease lapses.
//! Skipped (with a note) where tmux is missing, except under CI=true.

mod common;

use std::time::{Duration, Instant};

use common::tmux::Tmux;
use kakeai::annotate::{Filter, QueueSpec, db};
use kakeai::director::Status;
use kakeai::p;
use kakeai::store::Store;

fn leases(db: &std::path::Path, who: &str) -> i64 {
    let store = Store::open(db).unwrap();
    store
        .db()
        .one(
            "SELECT COUNT(*) FROM queue_leases WHERE reviewer = ?1",
            p![who],
        )
        .unwrap()
}

#[test]
fn quitting_gives_back_the_item_held() {
    let Some(t) = Tmux::new("queue") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let db_path = dir.path().join("data/kakeai.db");
    std::fs::create_dir_all(db_path.parent().unwrap()).unwrap();
    {
        let mut store = Store::open(&db_path).unwrap();
        let statuses = [Status::Retry, Status::Warn];
        common::stores::committed_runs(&mut store, 7, 2, 4, &statuses);
        let spec = QueueSpec {
            name: "flagged".into(),
            filter: Filter {
                statuses: vec![Status::Retry, Status::Warn],
                ..Filter::default()
            },
            k: 1,
            lease_ms: 600_000,
            overlap: false,
            comparison: None,
        };
        db::create(&mut store, &spec, Some("lead")).unwrap();
    }
    let cmd = format!(
        "KAKEAI_DATA_DIR={d}/data KAKEAI_CONFIG_DIR={d}/config KAKEAI_ANALYZER=fallback \
         {bin} --reviewer taro --queue flagged",
        d = dir.path().display(),
        bin = env!("CARGO_BIN_EXE_kakeai"),
    );
    t.start("q", (100, 30), &cmd);
    let deadline = Instant::now() + Duration::from_secs(30);
    while leases(&db_path, "taro") == 0 {
        assert!(t.alive("q"), "the workbench ended before claiming");
        assert!(Instant::now() < deadline, "m never claimed an item");
        t.keys("q", &["m"]);
        std::thread::sleep(Duration::from_millis(500));
    }
    t.keys("q", &["q"]);
    let deadline = Instant::now() + Duration::from_secs(10);
    while t.alive("q") {
        assert!(Instant::now() < deadline, "kakeai did not quit");
        std::thread::sleep(Duration::from_millis(100));
    }
    drop(t);
    assert_eq!(
        leases(&db_path, "taro"),
        0,
        "the item stayed held after quitting"
    );
}
