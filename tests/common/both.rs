//! The conformance harness (issue 24 §1): a list of cases, each a function of a fresh store
//! (and of a way to open another connection to the same store), run on an SQLite file and on
//! a PostgreSQL database of a throwaway cluster. Every failing case is named with its engine.

use std::path::Path;

use kakeai::store::Store;

use super::pg::PgCluster;

/// A case: the store to work on, and a function opening another connection to it.
pub type Case = fn(&mut Store, &dyn Fn() -> Store);

/// Runs every case on stores `open` gives (one per case), naming each failure.
pub fn run_all(
    engine: &str,
    cases: &[(&str, Case)],
    open: &dyn Fn(&str) -> Box<dyn Fn() -> Store>,
) {
    let mut failed = Vec::new();
    for (name, case) in cases {
        let reopen = open(name);
        let mut store = reopen();
        let r =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| case(&mut store, &*reopen)));
        if r.is_err() {
            failed.push(*name);
        }
    }
    assert!(failed.is_empty(), "{engine}: failed cases {failed:?}");
}

/// Every case on SQLite files in a temporary directory.
pub fn on_sqlite(cases: &[(&str, Case)]) {
    let dir = tempfile::tempdir().expect("tempdir");
    let base = dir.path().to_path_buf();
    run_all("sqlite", cases, &|name| {
        let path = base.join(format!("{name}.db"));
        Box::new(move || Store::open(&path).expect("opens"))
    });
}

/// Every case on PostgreSQL (a database per case in one cluster); skipped with a message when
/// PostgreSQL is not installed, required under CI=true.
pub fn on_postgres(test: &str, cases: &[(&str, Case)]) {
    let Some(cluster) = PgCluster::start(test) else {
        return;
    };
    run_all("postgresql", cases, &|name| {
        let url = cluster.database(name);
        Box::new(move || Store::open_target(Path::new(&url)).expect("opens"))
    });
}

/// The `#[test]`s running `cases` on both engines.
#[macro_export]
macro_rules! on_both_engines {
    ($cases:expr) => {
        #[test]
        fn every_case_on_sqlite() {
            common::both::on_sqlite($cases);
        }

        #[test]
        fn every_case_on_postgresql() {
            common::both::on_postgres(module_path!(), $cases);
        }
    };
}
