//! Generated stores for the tests: runs of committed turns with seeded verdicts.

use kakeai::director::Status;
use kakeai::duo::TurnFlags;
use kakeai::store::{NewRun, Store, TurnCommit};
use serde_json::json;

/// `runs` runs of `turns` committed turns (やな on odd turns, あゆ on even), each verdict picked
/// from `statuses` by a generator seeded with `seed`; returns every ((run, turn), speaker,
/// status).
pub fn committed_runs(
    store: &mut Store,
    seed: u64,
    runs: usize,
    turns: u32,
    statuses: &[Status],
) -> Vec<((i64, u32), String, Status)> {
    let mut g = super::seeded::Gen::new(seed);
    let mut out = Vec::new();
    for n in 0..runs {
        let run_id = new_run(store, &format!("話題{n}"), json!({}));
        for t in 1..=turns {
            let status = *g.pick(statuses);
            let speaker = commit(store, run_id, t, status);
            out.push(((run_id, t), speaker.to_string(), status));
        }
    }
    out
}

/// One run of committed turns (やな on odd turns, あゆ on even), turn N's verdict the Nth of
/// `statuses`, with `options` as stored (a comparison's or a probe's sample names them there)
/// and a fixed start time (`started`, `2026-08-01T19:05:00.000Z`), drawn by the runs browser.
pub fn run_with(
    store: &mut Store,
    topic: &str,
    options: serde_json::Value,
    statuses: &[Status],
    started: &str,
) -> i64 {
    let run_id = new_run(store, topic, options);
    for (t, status) in (1..).zip(statuses) {
        commit(store, run_id, t, *status);
    }
    store
        .db()
        .execute(
            "UPDATE runs SET started_at = ?1, status = 'completed' WHERE id = ?2",
            kakeai::p![started, run_id],
        )
        .expect("start time set");
    run_id
}

/// A run of the tiny model with `options` as stored.
fn new_run(store: &mut Store, topic: &str, options: serde_json::Value) -> i64 {
    store
        .create_run(&NewRun {
            topic: topic.into(),
            model: Some("tiny".into()),
            endpoint: None,
            api: None,
            options,
            persona_version: None,
            ruleset_version: Some("r-1".into()),
        })
        .expect("run created")
}

/// Turn `t` committed with `status`: やな on odd turns, あゆ on even; returns the speaker.
fn commit(store: &mut Store, run_id: i64, t: u32, status: Status) -> &'static str {
    let speaker = if t % 2 == 1 { "yana" } else { "ayu" };
    store
        .commit_turn(&TurnCommit {
            run_id,
            turn: t,
            speaker: speaker.into(),
            attempt_id: None,
            text: format!("{speaker}の{t}番目の台詞"),
            status,
            flags: TurnFlags::default(),
            hook: None,
            hook_depth: None,
        })
        .expect("turn committed");
    speaker
}
