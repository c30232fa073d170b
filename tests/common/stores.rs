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
        let run_id = store
            .create_run(&NewRun {
                topic: format!("話題{n}"),
                model: Some("tiny".into()),
                endpoint: None,
                api: None,
                options: json!({}),
                persona_version: None,
                ruleset_version: Some("r-1".into()),
            })
            .expect("run created");
        for t in 1..=turns {
            let speaker = if t % 2 == 1 { "yana" } else { "ayu" };
            let status = *g.pick(statuses);
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
            out.push(((run_id, t), speaker.to_string(), status));
        }
    }
    out
}
