//! The single-writer actor: call order, many tasks, blocking callers, errors and panics, and
//! durability of a write once its call has returned.

use std::path::PathBuf;

use kakeai::store::{ActionKind, NewAction, NewRun, Store, StoreError, StoreHandle};
use serde_json::json;

fn temp_db() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("kakeai.db");
    (dir, path)
}

fn new_run(topic: &str) -> NewRun {
    NewRun {
        topic: topic.into(),
        ..NewRun::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_actor_applies_calls_in_call_order() {
    let (_dir, path) = temp_db();
    let h = StoreHandle::spawn(Store::open(&path).unwrap());
    let run = h.call(|s| s.create_run(&new_run("順序"))).await.unwrap();
    // Queue 40 writes first and await them afterwards, in reverse: the queue order wins.
    let pending: Vec<_> = (0..40)
        .map(|n| {
            h.call(move |s| {
                s.add_action(&NewAction {
                    run_id: run,
                    turn: None,
                    attempt_id: None,
                    kind: ActionKind::Note,
                    payload: json!({ "n": n }),
                })
            })
        })
        .collect();
    let mut ids = Vec::new();
    for f in pending.into_iter().rev() {
        ids.push(f.await.unwrap());
    }
    ids.reverse();
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "{ids:?}");
    let rec = h.call(move |s| s.load_run(run)).await.unwrap();
    let ns: Vec<i64> = rec
        .actions
        .iter()
        .map(|a| a.payload["n"].as_i64().unwrap())
        .collect();
    assert_eq!(ns, (0..40).collect::<Vec<_>>());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_actor_serves_many_tasks_and_blocking_callers() {
    let (_dir, path) = temp_db();
    let h = StoreHandle::spawn(Store::open(&path).unwrap());
    let run = h.call(|s| s.create_run(&new_run("並行"))).await.unwrap();
    let mut tasks = Vec::new();
    for t in 0..4u32 {
        let h = h.clone();
        tasks.push(tokio::spawn(async move {
            for i in 0..10u32 {
                h.call(move |s| {
                    s.add_action(&NewAction {
                        run_id: run,
                        turn: Some(t + 1),
                        attempt_id: None,
                        kind: ActionKind::Feedback,
                        payload: json!({ "i": i }),
                    })
                })
                .await
                .unwrap();
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let h2 = h.clone();
    let count = tokio::task::spawn_blocking(move || {
        h2.call_blocking(move |s| Ok(s.load_run(run)?.actions.len()))
    })
    .await
    .unwrap()
    .unwrap();
    assert_eq!(count, 40);
    // Errors come back as values; a panicking job does not kill the writer.
    let e = h.call(|s| s.load_run(424242)).await.unwrap_err();
    assert!(matches!(e, StoreError::NoSuchRun(424242)));
    let e = h
        .call(|_s| -> Result<(), StoreError> { panic!("boom") })
        .await
        .unwrap_err();
    assert!(
        matches!(e, StoreError::Panicked(ref m) if m == "boom"),
        "{e}"
    );
    let still = h.call(move |s| Ok(s.load_run(run)?.actions.len())).await;
    assert_eq!(still.unwrap(), 40);
}

#[test]
fn the_reply_comes_after_the_commit() {
    let (_dir, path) = temp_db();
    let h = StoreHandle::spawn(Store::open(&path).unwrap());
    let run = h.call_blocking(|s| s.create_run(&new_run("保存"))).unwrap();
    h.call_blocking(move |s| {
        s.add_action(&NewAction {
            run_id: run,
            turn: Some(1),
            attempt_id: None,
            kind: ActionKind::Override,
            payload: json!({"status": "PASS"}),
        })
    })
    .unwrap();
    // A second, independent connection sees the action as soon as the call has returned.
    let other = Store::open(&path).unwrap();
    let rec = other.load_run(run).unwrap();
    assert_eq!(rec.actions.len(), 1);
    assert_eq!(rec.actions[0].kind, ActionKind::Override);
}
