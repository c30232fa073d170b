//! The review side of the store on both engines (issue 24 §1): a run read back whole, the runs
//! browser's pages and filter, search, branches, review marks, shared queues with leases and k
//! reviewers (two connections never hold the same item beyond k), pairwise results and their
//! agreement, comparisons, interviews, insight cards and chat exchanges, and the live-marks
//! watcher. Every case runs on an SQLite file and on a PostgreSQL database (tests/common/
//! both.rs); `the_engines_agree_byte_for_byte` builds the same store on both and compares
//! the exports, the browser and the searches; `the_cli_exports_and_queues_on_postgresql` runs
//! `kakeai export` and `kakeai queue` with a PostgreSQL URL in --db.

mod cli_env;
mod common;

use std::path::Path;
use std::time::SystemTime;

use common::both::Case;
use kakeai::annotate::db::{self as qdb, Item};
use kakeai::annotate::pairwise::{self, Choice};
use kakeai::annotate::{Filter, QueueSpec};
use kakeai::director::Status;
use kakeai::p;
use kakeai::store::{
    ActionKind, AttemptOutcome, AttemptState, NewAction, NewAttempt, NewRun, RunStatus, Store,
    TurnCommit, TurnFlags, export,
};
use serde_json::json;

const CASES: &[(&str, Case)] = &[
    ("a_run_reads_back_whole", a_run_reads_back_whole),
    (
        "the_browser_pages_and_filters",
        the_browser_pages_and_filters,
    ),
    ("search_folds_ascii_only", search_folds_ascii_only),
    (
        "branches_keep_what_a_regeneration_set_aside",
        branches_keep_what_a_regeneration_set_aside,
    ),
    ("review_marks_fold_with_undo", review_marks_fold_with_undo),
    (
        "a_leased_item_is_nobody_elses",
        a_leased_item_is_nobody_elses,
    ),
    (
        "k_reviewers_at_once_judge_each_item_k_times",
        k_reviewers_at_once_judge_each_item_k_times,
    ),
    (
        "pairwise_results_tally_and_agree",
        pairwise_results_tally_and_agree,
    ),
    (
        "comparisons_interviews_cards_and_chats_round_trip",
        comparisons_interviews_cards_and_chats_round_trip,
    ),
    (
        "a_watch_sees_other_connections",
        a_watch_sees_other_connections,
    ),
    (
        "a_lapsed_lease_is_no_claim_to_judge",
        a_lapsed_lease_is_no_claim_to_judge,
    ),
    (
        "reviewer_names_are_printable_and_bounded",
        reviewer_names_are_printable_and_bounded,
    ),
    (
        "a_lead_adjudicates_where_reviewers_disagree",
        a_lead_adjudicates_where_reviewers_disagree,
    ),
];

on_both_engines!(CASES);

const STARTED: &str = "2026-08-01T19:05:00.000Z";

fn new_run(store: &mut Store, topic: &str, options: serde_json::Value) -> i64 {
    store
        .create_run(&NewRun {
            topic: topic.into(),
            model: Some("gemma2:27b".into()),
            endpoint: Some("http://localhost:11434".into()),
            api: Some("ollama".into()),
            options,
            persona_version: Some("p-1".into()),
            ruleset_version: Some("r-1".into()),
        })
        .expect("run")
}

fn attempt(store: &mut Store, run: i64, turn: u32, speaker: &str, n: u32) -> i64 {
    store
        .start_attempt(&NewAttempt {
            run_id: run,
            turn,
            speaker: speaker.into(),
            attempt: n,
            text: String::new(),
            tokens: 0,
            guidance: (n > 1).then(|| "もっと短く".to_string()),
            prompt_hash: Some(format!("h{turn}.{n}")),
            started_at: SystemTime::now(),
            first_token_ms: Some(100 + u64::from(n)),
        })
        .expect("attempt")
}

fn judged(text: &str, status: Status, reason: &str) -> AttemptOutcome {
    AttemptOutcome {
        status: Some(status),
        tokens: Some(12),
        latency_ms: Some(900),
        verdict: Some(
            json!({"findings": [{"rule": "length", "status": status.as_str(),
                                            "message": reason}]}),
        ),
        judge: Some(json!({"frame": 4.5, "naturalness": 3.0})),
        judge_raw: Some("FRAME 4.5".into()),
        ..AttemptOutcome::done(text)
    }
}

fn commit(store: &mut Store, run: i64, turn: u32, speaker: &str, attempt: Option<i64>, text: &str) {
    store
        .commit_turn(&TurnCommit {
            run_id: run,
            turn,
            speaker: speaker.into(),
            attempt_id: attempt,
            text: text.into(),
            status: Status::Pass,
            flags: TurnFlags {
                exhausted: turn == 2,
                ..TurnFlags::default()
            },
            hook: (turn == 1).then(|| "花見".to_string()),
            hook_depth: (turn == 1).then_some(1),
        })
        .expect("commit");
}

fn mark(
    store: &mut Store,
    run: i64,
    turn: u32,
    kind: ActionKind,
    payload: serde_json::Value,
    who: Option<&str>,
) -> i64 {
    store
        .add_action_by(
            &NewAction {
                run_id: run,
                turn: Some(turn),
                attempt_id: None,
                kind,
                payload,
            },
            who,
        )
        .expect("action")
}

/// A run with everything the export shows: retried and failed attempts, flags, a hook, marks
/// by named reviewers and an undo, a kept request; every time stamp fixed afterwards so two
/// stores built alike export alike.
fn rich_run(store: &mut Store) -> i64 {
    let run = new_run(
        store,
        "お花見の計画\n二行目は引用に",
        json!({"temperature": 0.7}),
    );
    let a1 = attempt(store, run, 1, "yana", 1);
    store.update_attempt_text(a1, "ねえ", 2).expect("partial");
    store
        .finish_attempt(
            a1,
            &judged(
                "ねえあゆ、お花見行こうよ。ずっと長い台詞",
                Status::Retry,
                "長すぎる",
            ),
        )
        .expect("finish");
    let a2 = attempt(store, run, 1, "yana", 2);
    store
        .finish_attempt(a2, &judged("ねえあゆ、お花見行こうよ", Status::Pass, "ok"))
        .expect("finish");
    store
        .save_request(
            a2,
            &json!({"messages": [{"role": "user", "content": "花見"}]}),
        )
        .expect("request");
    store
        .save_request(
            a2,
            &json!({"messages": [{"role": "user", "content": "お花見"}]}),
        )
        .expect("request replaced");
    commit(store, run, 1, "yana", Some(a2), "ねえあゆ、お花見行こうよ");
    let b1 = attempt(store, run, 2, "ayu", 1);
    store
        .finish_attempt(
            b1,
            &AttemptOutcome {
                state: AttemptState::Failed,
                error: Some("timeout after 30 s".into()),
                fallback: Some("stream stalled".into()),
                ..AttemptOutcome::done("")
            },
        )
        .expect("failed");
    let b2 = attempt(store, run, 2, "ayu", 2);
    store
        .finish_attempt(
            b2,
            &judged("いいね、Tea も持っていこう", Status::Pass, "ok"),
        )
        .expect("finish");
    commit(store, run, 2, "ayu", Some(b2), "いいね、Tea も持っていこう");
    mark(
        store,
        run,
        1,
        ActionKind::Thumb,
        json!({"up": true}),
        Some("mika"),
    );
    mark(
        store,
        run,
        2,
        ActionKind::Override,
        json!({"to": "WARN", "reason": "硬い"}),
        Some("ken"),
    );
    mark(
        store,
        run,
        2,
        ActionKind::Feedback,
        json!({"issue_type": "tone", "description": "硬い"}),
        None,
    );
    mark(
        store,
        run,
        1,
        ActionKind::Thumb,
        json!({"up": false}),
        Some("mika"),
    );
    mark(
        store,
        run,
        1,
        ActionKind::Undo,
        json!({"undo": "thumb"}),
        Some("mika"),
    );
    store
        .add_action(&NewAction {
            run_id: run,
            turn: None,
            attempt_id: None,
            kind: ActionKind::Pause,
            payload: json!({}),
        })
        .expect("pause");
    store
        .finish_run(run, RunStatus::Completed, None)
        .expect("done");
    let db = store.db();
    for sql in [
        "UPDATE runs SET started_at = '2026-08-01T19:05:00.000Z', ended_at = '2026-08-01T19:09:00.000Z' WHERE id = ?1",
        "UPDATE attempts SET started_at = '2026-08-01T19:06:00.000Z' WHERE run_id = ?1",
        "UPDATE turns SET committed_at = '2026-08-01T19:07:00.000Z' WHERE run_id = ?1",
        "UPDATE actions SET created_at = '2026-08-01T19:08:00.000Z' WHERE run_id = ?1",
    ] {
        db.execute(sql, p![run]).expect("fixed time");
    }
    run
}

fn a_run_reads_back_whole(store: &mut Store, reopen: &dyn Fn() -> Store) {
    let run = rich_run(store);
    let other = reopen();
    let rec = other.load_run(run).expect("load");
    assert_eq!(rec.run.topic, "お花見の計画\n二行目は引用に");
    assert_eq!(rec.run.status, RunStatus::Completed);
    assert_eq!(rec.run.options, json!({"temperature": 0.7}));
    assert_eq!(
        rec.run.ended_at.as_deref(),
        Some("2026-08-01T19:09:00.000Z")
    );
    type Turn<'a> = (u32, &'a str, bool, Option<&'a str>, Option<u32>);
    let turns: Vec<Turn> = rec
        .turns
        .iter()
        .map(|t| {
            (
                t.turn,
                t.text.as_str(),
                t.flags.exhausted,
                t.hook.as_deref(),
                t.hook_depth,
            )
        })
        .collect();
    assert_eq!(
        turns,
        vec![
            (1, "ねえあゆ、お花見行こうよ", false, Some("花見"), Some(1)),
            (2, "いいね、Tea も持っていこう", true, None, None),
        ]
    );
    let attempts: Vec<(u32, u32, AttemptState, Option<Status>)> = rec
        .attempts
        .iter()
        .map(|a| (a.turn, a.attempt, a.state, a.status))
        .collect();
    assert_eq!(
        attempts,
        vec![
            (1, 1, AttemptState::Done, Some(Status::Retry)),
            (1, 2, AttemptState::Done, Some(Status::Pass)),
            (2, 1, AttemptState::Failed, None),
            (2, 2, AttemptState::Done, Some(Status::Pass)),
        ]
    );
    let first = &rec.attempts[0];
    assert_eq!(first.first_token_ms, Some(101));
    assert_eq!(first.latency_ms, Some(900));
    assert_eq!(first.judge, Some(json!({"frame": 4.5, "naturalness": 3.0})));
    assert_eq!(rec.attempts[1].guidance.as_deref(), Some("もっと短く"));
    assert_eq!(rec.attempts[2].error.as_deref(), Some("timeout after 30 s"));
    assert_eq!(rec.attempts[2].fallback.as_deref(), Some("stream stalled"));
    let actions: Vec<(Option<u32>, ActionKind, Option<&str>)> = rec
        .actions
        .iter()
        .map(|a| (a.turn, a.kind, a.reviewer.as_deref()))
        .collect();
    assert_eq!(
        actions,
        vec![
            (Some(1), ActionKind::Thumb, Some("mika")),
            (Some(2), ActionKind::Override, Some("ken")),
            (Some(2), ActionKind::Feedback, None),
            (Some(1), ActionKind::Thumb, Some("mika")),
            (Some(1), ActionKind::Undo, Some("mika")),
            (None, ActionKind::Pause, None),
        ]
    );
    let reviewers = other.reviewers(run).expect("reviewers");
    assert_eq!(reviewers.len(), 6);
    assert_eq!(reviewers[1].1.as_deref(), Some("ken"));
    // The kept request (the second save replaced the first), by attempt and by position.
    let want = json!({"messages": [{"role": "user", "content": "お花見"}]});
    assert_eq!(
        other.request_at(run, 1, 2).expect("request"),
        Some(want.clone())
    );
    assert_eq!(other.request_at(run, 1, 1).expect("none kept"), None);
    assert_eq!(other.request_at(run, 9, 1).expect("no attempt"), None);
    assert!(matches!(
        other.load_run(run + 100),
        Err(kakeai::store::StoreError::NoSuchRun(_))
    ));
}

fn the_browser_pages_and_filters(store: &mut Store, _: &dyn Fn() -> Store) {
    use common::stores::run_with;
    let st = [Status::Pass, Status::Retry, Status::Warn];
    // Same start time for the first three: newest first means the higher id first.
    let a = run_with(store, "Hanami の話", json!({}), &st, STARTED);
    let b = run_with(store, "海の話", json!({"compare": 3}), &st[..1], STARTED);
    let c = run_with(store, "山の話", json!({"probe": true}), &st[..2], STARTED);
    let d = run_with(store, "川の話", json!({}), &[], "2026-08-02T08:00:00.000Z");
    let e = run_with(
        store,
        "hanami again",
        json!({}),
        &st,
        "2026-07-30T08:00:00.000Z",
    );
    mark(
        store,
        a,
        1,
        ActionKind::Thumb,
        json!({"up": true}),
        Some("mika"),
    );
    mark(store, a, 2, ActionKind::Note, json!({"text": "いい"}), None);
    mark(store, a, 3, ActionKind::Thumb, json!({"up": true}), None);
    mark(
        store,
        a,
        3,
        ActionKind::Undo,
        json!({"undo": "thumb"}),
        None,
    );

    let page = store.browse("", 3, 0).expect("browse");
    assert_eq!(page.total, 5);
    let ids: Vec<i64> = page.rows.iter().map(|r| r.id).collect();
    assert_eq!(ids, vec![d, c, b]);
    let page2 = store.browse("", 3, 3).expect("browse");
    let ids: Vec<i64> = page2.rows.iter().map(|r| r.id).collect();
    assert_eq!(ids, vec![a, e]);
    assert_eq!(page2.offset, 3);
    let row_a = &page2.rows[0];
    assert_eq!(row_a.strip, st.to_vec());
    assert_eq!(row_a.reviewed, 2, "the undone thumb is not a mark in force");
    assert_eq!(row_a.status, RunStatus::Completed);
    assert_eq!(row_a.model.as_deref(), Some("tiny"));
    let samples: Vec<Option<&str>> = page.rows.iter().map(|r| r.sample.as_deref()).collect();
    assert_eq!(samples, vec![None, Some("probe"), Some("compare 3 sample")]);

    // The filter: ASCII letters in any case, substrings, LIKE's own characters literally.
    let ids = |f: &str| -> Vec<i64> {
        store
            .browse(f, 50, 0)
            .expect("filter")
            .rows
            .iter()
            .map(|r| r.id)
            .collect()
    };
    assert_eq!(ids("HANAMI"), vec![a, e]);
    assert_eq!(ids("  の話 "), vec![d, c, b, a]);
    assert_eq!(ids("TINY"), vec![d, c, b, a, e]);
    assert_eq!(ids("complet"), vec![d, c, b, a, e]);
    assert_eq!(ids(&c.to_string()), vec![c]);
    assert_eq!(ids("%"), Vec::<i64>::new());
    assert_eq!(ids("_"), Vec::<i64>::new());
    assert_eq!(store.browse("海", 50, 0).expect("filter").total, 1);

    // The run list and the latest run to review (samples passed over).
    let runs = store.runs(10).expect("runs");
    let listed: Vec<(i64, u32, Option<&str>)> = runs
        .iter()
        .map(|r| (r.id, r.turns, r.sample.as_deref()))
        .collect();
    assert_eq!(
        listed,
        vec![
            (d, 0, None),
            (c, 2, Some("probe")),
            (b, 1, Some("compare 3 sample")),
            (a, 3, None),
            (e, 3, None),
        ]
    );
    assert_eq!(store.runs(2).expect("runs").len(), 2);
    assert_eq!(store.latest_run_id().expect("latest"), Some(d));
    store
        .db()
        .execute(
            "UPDATE runs SET started_at = ?1 WHERE id = ?2",
            p!["2026-01-01T00:00:00.000Z", d],
        )
        .expect("older");
    assert_eq!(
        store.latest_run_id().expect("latest"),
        Some(a),
        "samples are passed over"
    );
}

fn search_folds_ascii_only(store: &mut Store, _: &dyn Fn() -> Store) {
    let run = rich_run(store);
    let other = new_run(store, "別", json!({}));
    commit(store, other, 1, "yana", None, "ＴＥＡは全角、tea は半角");
    let hits = |s: &Store, run: Option<i64>, needle: &str| -> Vec<(i64, u32, Option<u32>)> {
        s.search_text(run, needle, 50)
            .expect("search")
            .iter()
            .map(|h| (h.run_id, h.turn, h.attempt))
            .collect()
    };
    // ASCII in any case; full-width letters only as typed (SQLite's LIKE folds ASCII only).
    assert_eq!(
        hits(store, None, "TEA"),
        vec![(other, 1, None), (run, 2, None)]
    );
    assert_eq!(hits(store, None, "ｔｅａ"), vec![]);
    assert_eq!(hits(store, None, "ＴＥＡ"), vec![(other, 1, None)]);
    // The committed text first, then the attempts that were not kept (not the kept one, nor
    // one whose text is the committed text).
    assert_eq!(
        hits(store, Some(run), "お花見行こうよ"),
        vec![(run, 1, None), (run, 1, Some(1))]
    );
    assert_eq!(hits(store, Some(run), "100%"), vec![]);
    assert_eq!(store.search_text(None, "、", 1).expect("limit").len(), 1);
}

fn branches_keep_what_a_regeneration_set_aside(store: &mut Store, reopen: &dyn Fn() -> Store) {
    let run = new_run(store, "枝", json!({}));
    for t in 1..=4 {
        let speaker = if t % 2 == 1 { "yana" } else { "ayu" };
        commit(store, run, t, speaker, None, &format!("{t}番目"));
    }
    assert_eq!(store.branch_off(run, 3).expect("branch"), Some(1));
    commit(store, run, 3, "yana", None, "3番目やり直し");
    assert_eq!(store.branch_off(run, 2).expect("branch"), Some(2));
    assert_eq!(store.branch_off(run, 9).expect("nothing"), None);
    assert!(store.branch_off(run + 50, 1).is_err());
    let other = reopen();
    let got: Vec<(u32, u32, String, Status)> = other
        .branches(run)
        .expect("branches")
        .into_iter()
        .map(|b| (b.branch, b.turn, b.text, b.status))
        .collect();
    assert_eq!(
        got,
        vec![
            (1, 3, "3番目".to_string(), Status::Pass),
            (1, 4, "4番目".to_string(), Status::Pass),
            (2, 2, "2番目".to_string(), Status::Pass),
            (2, 3, "3番目やり直し".to_string(), Status::Pass),
        ]
    );
    let left = other.load_run(run).expect("load").turns.len();
    assert_eq!(left, 1);
}

fn review_marks_fold_with_undo(store: &mut Store, reopen: &dyn Fn() -> Store) {
    use kakeai::store::review::{Mark, fold};
    let run = rich_run(store);
    let rec = reopen().load_run(run).expect("load");
    let marks = fold(rec.actions.iter().filter_map(|a| {
        Some(Mark {
            turn: a.turn?,
            kind: a.kind,
            payload: &a.payload,
            reviewer: a.reviewer.as_deref(),
        })
    }));
    // Turn 1: mika's 👍 then 👎, the 👎 undone: the 👍 is in force.
    assert_eq!(marks[&1].thumb, Some(true));
    assert_eq!(marks[&1].reviewer.as_deref(), Some("mika"));
    assert_eq!(marks[&2].override_to, Some(Status::Warn));
    assert_eq!(marks[&2].notes, 1);
    let row = &store.browse("", 5, 0).expect("browse").rows[0];
    assert_eq!(row.reviewed, 2);
}

fn spec(name: &str, k: u32, overlap: bool) -> QueueSpec {
    QueueSpec {
        name: name.into(),
        filter: Filter::default(),
        k,
        lease_ms: 60_000,
        overlap,
        comparison: None,
    }
}

fn thumb(store: &mut Store, item: Item, who: &str, up: bool) {
    mark(
        store,
        item.0,
        item.1,
        ActionKind::Thumb,
        json!({"up": up}),
        Some(who),
    );
}

fn a_leased_item_is_nobody_elses(store: &mut Store, reopen: &dyn Fn() -> Store) {
    let all = common::stores::committed_runs(store, 7, 2, 3, &[Status::Pass, Status::Retry]);
    let filter = Filter {
        sister: Some("yana".into()),
        since: Some("2000-01-01T00:00:00.000Z".into()),
        ..Filter::default()
    };
    qdb::create(
        store,
        &QueueSpec {
            filter,
            ..spec("yana", 1, false)
        },
        Some("lead"),
    )
    .expect("create");
    let ayu = Filter {
        sister: Some("ayu".into()),
        ..Filter::default()
    };
    let two = QueueSpec {
        filter: ayu,
        ..spec("two", 2, false)
    };
    qdb::create(store, &two, None).expect("create");
    assert!(matches!(
        qdb::create(store, &two, None),
        Err(kakeai::annotate::QueueError::Exists(_))
    ));
    let queues: Vec<String> = qdb::list(store.db())
        .expect("list")
        .into_iter()
        .map(|q| q.spec.name)
        .collect();
    assert_eq!(queues, vec!["yana", "two"]);
    let yana: Vec<Item> = all
        .iter()
        .filter(|(_, s, _)| s == "yana")
        .map(|(i, _, _)| *i)
        .collect();
    assert_eq!(
        qdb::progress(store, "yana", 0).expect("progress").items,
        yana.len()
    );

    // k = 1: two connections (two reviewers' processes) never hold the same item.
    let now = 1_000_000;
    let mut a = reopen();
    let mut b = reopen();
    let mut held = Vec::new();
    while let Some(ca) = qdb::claim(&mut a, "yana", "mika", now).expect("claim") {
        // Her own live lease first: asking again gives the same item.
        let again = qdb::claim(&mut a, "yana", "mika", now + 1)
            .expect("claim")
            .expect("same");
        assert_eq!((again.subject, again.turn), (ca.subject, ca.turn));
        assert_eq!(ca.speaker, "yana");
        assert_eq!(ca.until_ms, now + 60_000);
        assert!(
            !held.contains(&(ca.subject, ca.turn)),
            "mika got a judged item"
        );
        held.push((ca.subject, ca.turn));
        // While mika holds hers, ken is handed another one.
        let cb = qdb::claim(&mut b, "yana", "ken", now).expect("claim");
        thumb(&mut a, (ca.subject, ca.turn), "mika", true);
        if let Some(cb) = cb {
            assert!(
                !held.contains(&(cb.subject, cb.turn)),
                "ken got a held or judged item"
            );
            held.push((cb.subject, cb.turn));
            thumb(&mut b, (cb.subject, cb.turn), "ken", false);
        }
    }
    held.sort();
    assert_eq!(held, yana, "every item handed out once");
    assert_eq!(qdb::claim(&mut b, "yana", "ken", now).expect("claim"), None);
    let p = qdb::progress(store, "yana", now).expect("progress");
    assert_eq!(p.done, yana.len());

    // k = 2 (あゆ's turns, nobody judged them yet): an item held by two is nobody else's
    // until a lease expires or is released.
    let c1 = qdb::claim(&mut a, "two", "aoi", now)
        .expect("claim")
        .expect("item");
    let c2 = qdb::claim(&mut b, "two", "sora", now)
        .expect("claim")
        .expect("item");
    assert_eq!(
        (c1.subject, c1.turn),
        (c2.subject, c2.turn),
        "k = 2 hands the item to two"
    );
    let c3 = qdb::claim(store, "two", "riku", now)
        .expect("claim")
        .expect("item");
    assert_ne!((c3.subject, c3.turn), (c1.subject, c1.turn));
    assert!(qdb::release(&mut b, "two", "sora", (c2.subject, c2.turn)).expect("release"));
    assert!(!qdb::release(&mut b, "two", "sora", (c2.subject, c2.turn)).expect("twice"));
    let c4 = qdb::claim(&mut b, "two", "nao", now)
        .expect("claim")
        .expect("item");
    assert_eq!(
        (c4.subject, c4.turn),
        (c1.subject, c1.turn),
        "the released place"
    );
    // Expired leases free their places.
    let later = now + 60_000;
    let c5 = qdb::claim(&mut b, "two", "umi", later)
        .expect("claim")
        .expect("item");
    assert_eq!((c5.subject, c5.turn), (c1.subject, c1.turn));
    let p = qdb::progress(store, "two", later).expect("progress");
    assert_eq!((p.items, p.done, p.held), (2, 0, 1));
    assert!(qdb::has_item(store, "two", (c1.subject, c1.turn)).expect("has"));
    assert!(!qdb::has_item(store, "two", yana[0]).expect("not an あゆ turn"));
    assert!(matches!(
        qdb::claim(store, "nope", "mika", now),
        Err(kakeai::annotate::QueueError::NoSuchQueue(_))
    ));
    // Agreement across the two reviewers of the k = 1 queue: no item has two labels.
    let q = qdb::get(store.db(), "yana").expect("get");
    let alpha = qdb::agreement(store.db(), &q).expect("alpha");
    assert_eq!(alpha.map_or(0, |x| x.units), 0);
}

fn k_reviewers_at_once_judge_each_item_k_times(store: &mut Store, reopen: &dyn Fn() -> Store) {
    common::stores::committed_runs(store, 11, 2, 4, &[Status::Pass]);
    qdb::create(store, &spec("all", 2, false), None).expect("create");
    let judged = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for n in 0..3 {
            let mut mine = reopen();
            let judged = &judged;
            s.spawn(move || {
                let who = format!("reviewer{n}");
                let now = 5_000_000;
                while let Some(c) = qdb::claim(&mut mine, "all", &who, now).expect("claim") {
                    thumb(&mut mine, (c.subject, c.turn), &who, n != 1);
                    judged
                        .lock()
                        .unwrap()
                        .push(((c.subject, c.turn), who.clone()));
                }
            });
        }
    });
    let judged = judged.into_inner().unwrap();
    let mut per: std::collections::BTreeMap<Item, Vec<String>> = Default::default();
    for (item, who) in judged {
        per.entry(item).or_default().push(who);
    }
    assert_eq!(per.len(), 8, "every item judged");
    for (item, who) in &per {
        let mut w = who.clone();
        w.sort();
        w.dedup();
        assert_eq!(w.len(), 2, "{item:?} judged by {who:?}");
        assert_eq!(who.len(), 2, "{item:?} judged by {who:?}");
    }
    let p = qdb::progress(store, "all", 5_000_000).expect("progress");
    assert_eq!((p.items, p.done, p.held), (8, 8, 0));
    assert_eq!(p.per_reviewer.values().sum::<usize>(), 16);
    let q = qdb::get(store.db(), "all").expect("get");
    let alpha = qdb::agreement(store.db(), &q)
        .expect("alpha")
        .expect("units");
    assert_eq!(alpha.units, 8);
}

/// A stored paired comparison of `turns` turns over a fresh baseline run.
fn comparison(store: &mut Store, turns: usize) -> i64 {
    use kakeai::compare::db as cdb;
    use kakeai::compare::outcome::{Change, Side, TurnRow};
    let run = new_run(store, "比較", json!({}));
    let id = cdb::create(
        store,
        &cdb::Header {
            kind: "paired".into(),
            baseline_run: Some(run),
            variant_name: "terse".into(),
            variant_path: None,
            variant_text: "短く".into(),
            variant_hash: "h".into(),
            model: None,
            endpoint: None,
            options: json!({"temperature": 0.2}),
            sample_runs: vec![],
        },
    )
    .expect("comparison");
    let side = |t: &str| Side {
        text: t.into(),
        status: Status::Pass,
        exhausted: false,
        tone: 0,
        findings: vec![],
        judge: None,
        judge_mean: None,
        attempts: 1,
    };
    for t in 1..=turns {
        let row = |b: &str| TurnRow {
            turn: t,
            speaker: if t % 2 == 1 { "yana" } else { "ayu" }.into(),
            a: side(&format!("Aの{t}")),
            b: vec![side(b)],
            change: Change::Same,
            diff: vec![],
        };
        cdb::add_turn(store, id, &row("仮")).expect("turn");
        // A turn stored again replaces its row.
        cdb::add_turn(store, id, &row(&format!("Bの{t}"))).expect("turn again");
    }
    id
}

fn pairwise_results_tally_and_agree(store: &mut Store, reopen: &dyn Fn() -> Store) {
    let id = comparison(store, 4);
    let q = QueueSpec {
        comparison: Some(id),
        ..spec("pair", 2, false)
    };
    qdb::create(store, &q, Some("lead")).expect("pairwise queue");
    let mut other = reopen();
    for (who, choices) in [
        ("mika", [Choice::A, Choice::B, Choice::Tie, Choice::A]),
        ("ken", [Choice::A, Choice::B, Choice::A, Choice::A]),
    ] {
        for (t, c) in (1..).zip(choices) {
            pairwise::judge(&mut other, id, t, who, c, "読みやすい").expect("judge");
        }
    }
    // The latest choice of a reviewer counts.
    pairwise::judge(store, id, 3, "mika", Choice::A, "考え直した").expect("again");
    assert!(pairwise::judge(store, id, 9, "mika", Choice::A, "x").is_err());
    let t = pairwise::tally(store.db(), id).expect("tally");
    assert_eq!((t.a, t.b, t.tie, t.reviewers, t.turns), (6, 2, 0, 2, 4));
    let p = qdb::progress(store, "pair", 0).expect("progress");
    assert_eq!((p.items, p.done), (4, 4));
    let qq = qdb::get(store.db(), "pair").expect("get");
    let alpha = qdb::agreement(store.db(), &qq)
        .expect("alpha")
        .expect("alpha");
    assert_eq!(alpha.units, 4);
    assert_eq!(alpha.alpha, Some(1.0));
    // A pairwise queue needs a paired comparison that exists.
    let bad = QueueSpec {
        comparison: Some(id + 40),
        ..spec("none", 1, false)
    };
    assert!(qdb::create(store, &bad, None).is_err());
    // ayu only: the even turns.
    let ayu = QueueSpec {
        comparison: Some(id),
        filter: Filter {
            sister: Some("ayu".into()),
            ..Filter::default()
        },
        ..spec("pair-ayu", 3, false)
    };
    qdb::create(store, &ayu, None).expect("ayu");
    assert_eq!(
        qdb::progress(store, "pair-ayu", 0).expect("progress").items,
        2
    );
    let c = qdb::claim(store, "pair-ayu", "aoi", 0)
        .expect("claim")
        .expect("item");
    assert!(c.pairwise && c.speaker == "ayu" && c.subject == id);
}

fn comparisons_interviews_cards_and_chats_round_trip(
    store: &mut Store,
    reopen: &dyn Fn() -> Store,
) {
    use kakeai::compare::db as cdb;
    use kakeai::insight::{Card, Deck, Severity};
    use kakeai::interview::store as istore;
    let id = comparison(store, 2);
    cdb::set_sample_runs(store, id, &[4, 5]).expect("samples");
    cdb::set_summary(store, id, &json!({"not": "a summary"})).expect("summary");
    let other = reopen();
    // A summary that does not read is an error naming the comparison, never skipped.
    let e = cdb::load(&other, id).expect_err("bad summary");
    assert!(e.to_string().contains(&format!("comparison {id}")), "{e}");
    other
        .db()
        .execute(
            "UPDATE comparisons SET summary = NULL WHERE id = ?1",
            p![id],
        )
        .expect("reset");
    let s = cdb::load(&other, id).expect("load").expect("stored");
    assert_eq!(s.header.sample_runs, vec![4, 5]);
    assert_eq!(s.header.options, json!({"temperature": 0.2}));
    assert_eq!(s.turns.len(), 2);
    assert_eq!(s.turns[1].b[0].text, "Bの2");
    assert_eq!(cdb::load(&other, id + 9).expect("none"), None);
    let baseline = s.header.baseline_run.expect("baseline");
    assert_eq!(
        cdb::latest_for_run(&other, baseline).expect("latest"),
        Some(id)
    );

    let iv = istore::create(store, "佐藤", "ayu", "tiny", "http://x", "asking").expect("interview");
    for (seq, role, content) in [
        (1, "assistant", "最近どう？"),
        (2, "user", "忙しい"),
        (3, "user", "[スキップ]"),
    ] {
        istore::add_message(
            store,
            &istore::NewMessage {
                interview_id: iv,
                seq,
                role,
                state: "asking".into(),
                content: content.into(),
                original_content_hash: None,
                pii_kinds: vec![],
                source: "llm",
                verdict: None,
            },
            seq == 3,
            2,
        )
        .expect("message");
    }
    istore::finish(store, iv, "user_quit").expect("finish");
    istore::set_analysis(store, iv, "done", None, &json!(["忙しい"])).expect("analysis");
    let rows = istore::finished(&other, Some("佐藤")).expect("finished");
    assert_eq!(rows.len(), 1);
    assert_eq!(
        (
            rows[0].fallback,
            rows[0].user_turns,
            rows[0].analysis.as_str()
        ),
        (true, 2, "done")
    );
    assert_eq!(istore::finished(&other, None).expect("all").len(), 1);
    assert_eq!(
        istore::user_messages(&other, iv).expect("user"),
        vec!["忙しい"]
    );
    assert_eq!(
        istore::name_of(&other, iv).expect("name").as_deref(),
        Some("佐藤")
    );
    assert_eq!(istore::name_of(&other, iv + 1).expect("none"), None);

    let card = |theme: &str, freq| Card {
        theme: theme.into(),
        jtbd: "話を聞いてほしい".into(),
        summary: "要約".into(),
        severity: Severity::High,
        freq,
        quotes: vec!["忙しい".into()],
        sources: vec![format!("interview:{iv}")],
    };
    let deck = Deck::new(vec![card("時間がない", 2), card("Busy", 1)]);
    kakeai::insight::store::save(store, "all", &deck).expect("save");
    kakeai::insight::store::save(store, "Z", &Deck::new(vec![card("z", 1)])).expect("save");
    kakeai::insight::store::save(store, "all", &deck).expect("saved again replaces");
    let back = kakeai::insight::store::load(&other, "all").expect("load");
    assert_eq!(back.cards, deck.cards);
    // Byte order: upper-case letters before lower-case.
    assert_eq!(
        kakeai::insight::store::scopes(&other).expect("scopes"),
        vec!["Z", "all"]
    );
    let notes = kakeai::insight::feedback::notes(&other, None).expect("notes");
    assert!(notes.is_empty());

    let chat = store
        .save_chat(&kakeai::store::chat::NewChat {
            conversation_id: "c1".into(),
            character: "ayu".into(),
            user_masked: "[NAME]です".into(),
            original_content_hash: "hash".into(),
            action: "respond".into(),
            source: "llm".into(),
            reply: "こんにちは".into(),
            ..Default::default()
        })
        .expect("chat");
    store.set_chat_thumb(chat, true).expect("thumb");
    assert!(store.set_chat_thumb(chat + 5, false).is_err());
    let t: i64 = other
        .db()
        .one("SELECT thumb FROM chat_exchanges WHERE id = ?1", p![chat])
        .expect("thumb");
    assert_eq!(t, 1);
}

fn a_watch_sees_other_connections(store: &mut Store, reopen: &dyn Fn() -> Store) {
    use kakeai::store::watch::Watch;
    let mut w = Watch::open(Path::new(store.path())).expect("watch");
    let _ = w.changed();
    new_run(store, "一", json!({}));
    assert!(w.changed().expect("changed"));
    let mut other = reopen();
    let run = new_run(&mut other, "二", json!({}));
    assert!(w.changed().expect("changed"));
    mark(
        &mut other,
        run,
        1,
        ActionKind::Note,
        json!({}),
        Some("mika"),
    );
    assert!(w.changed().expect("a mark"));
    assert!(!w.changed().expect("seen once"));
    // Reads change nothing, on either engine (PostgreSQL: only writes notify).
    let _ = other.runs(10).expect("runs");
    assert!(!w.changed().expect("nothing"));
    // A write rolled back is no change.
    let r: Result<(), kakeai::store::StoreError> = other.transact(|tx| {
        tx.execute("UPDATE runs SET topic = 'x' WHERE id = ?1", p![run])?;
        Err(kakeai::store::StoreError::Invalid("no".into()))
    });
    assert!(r.is_err());
    assert!(!w.changed().expect("rolled back"));
}

/// The same store built on both engines reads, browses, searches and exports byte for byte
/// alike.
#[test]
fn the_engines_agree_byte_for_byte() {
    let Some(cluster) =
        common::pg::PgCluster::start("store_review::the_engines_agree_byte_for_byte")
    else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let mut lite = Store::open(&dir.path().join("k.db")).expect("sqlite");
    let url = cluster.database("agree");
    let mut pg = Store::open_target(Path::new(&url)).expect("postgresql");
    let build = |s: &mut Store| {
        let run = rich_run(s);
        let st = [Status::Pass, Status::Modify, Status::Unscored];
        common::stores::run_with(s, "Zebra", json!({"compare": "2"}), &st, STARTED);
        common::stores::run_with(s, "apple", json!({"probe": 1}), &st[..1], STARTED);
        common::stores::run_with(
            s,
            "Äpfel",
            json!({}),
            &st[1..],
            "2026-08-01T19:05:00.000+09:00",
        );
        common::stores::run_with(s, "ｚｅｂｒａ", json!([1]), &st, "2026-08-01T19:05:00Z");
        s.branch_off(run, 2).expect("branch");
        run
    };
    let (a, b) = (build(&mut lite), build(&mut pg));
    assert_eq!(a, b, "the same ids on both");
    let (ra, rb) = (
        lite.load_run(a).expect("load"),
        pg.load_run(b).expect("load"),
    );
    assert_eq!(ra, rb);
    for md in [false, true] {
        let (mut x, mut y) = (Vec::new(), Vec::new());
        if md {
            export::markdown(&ra, &mut x).expect("md");
            export::markdown(&rb, &mut y).expect("md");
        } else {
            export::jsonl(&ra, &mut x).expect("jsonl");
            export::jsonl(&rb, &mut y).expect("jsonl");
        }
        assert!(!x.is_empty());
        assert_eq!(
            String::from_utf8_lossy(&x),
            String::from_utf8_lossy(&y),
            "md: {md}"
        );
    }
    for f in ["", "ZEBRA", "apple", "äpfel", "tiny", "1", "の"] {
        for (limit, offset) in [(2, 0), (2, 2), (10, 0)] {
            assert_eq!(
                lite.browse(f, limit, offset).expect("browse"),
                pg.browse(f, limit, offset).expect("browse"),
                "filter {f:?} {limit} from {offset}"
            );
        }
    }
    assert_eq!(lite.runs(10).expect("runs"), pg.runs(10).expect("runs"));
    assert_eq!(
        lite.latest_run_id().expect("latest"),
        pg.latest_run_id().expect("latest")
    );
    for needle in ["お花見", "TEA", "番目", "ｚ", "%"] {
        assert_eq!(
            lite.search_text(None, needle, 20).expect("search"),
            pg.search_text(None, needle, 20).expect("search"),
            "{needle}"
        );
    }
    assert_eq!(
        lite.branches(a).expect("branches"),
        pg.branches(b).expect("branches")
    );
}

/// `kakeai export` prints the same bytes from a file and from a PostgreSQL URL, and
/// `kakeai queue` works on PostgreSQL: the second reviewer's `next` skips the item whose last
/// place the first one holds. Dataset exports write the same records from either engine.
#[test]
fn the_cli_exports_and_queues_on_postgresql() {
    let Some(cluster) =
        common::pg::PgCluster::start("store_review::the_cli_exports_and_queues_on_postgresql")
    else {
        return;
    };
    let env = cli_env::Env::new();
    let file = env.dir.path().join("k.db");
    let url = cluster.database("cli");
    let mut lite = Store::open(&file).expect("sqlite");
    let mut pg = Store::open_target(Path::new(&url)).expect("postgresql");
    let run = rich_run(&mut lite);
    assert_eq!(rich_run(&mut pg), run);
    drop((lite, pg));
    let file = file.to_str().expect("utf-8").to_string();
    let run = run.to_string();
    for format in ["jsonl", "md"] {
        let out = |db: &str| {
            let o = env.run(&["export", "--run", &run, "--format", format, "--db", db]);
            assert_eq!(
                o.status.code(),
                Some(0),
                "{}",
                String::from_utf8_lossy(&o.stderr)
            );
            o.stdout
        };
        let (x, y) = (out(&file), out(&url));
        assert!(!x.is_empty());
        assert_eq!(
            String::from_utf8_lossy(&x),
            String::from_utf8_lossy(&y),
            "{format}"
        );
    }
    let missing = env.run(&["export", "--run", "99", "--db", &url]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("no run with id 99"));
    // Dataset exports too: the same records from either engine.
    let mut records = 0;
    for format in ["sft", "dpo", "kto"] {
        let written = |db: &str, name: &str| {
            let out = env.dir.path().join(name);
            let o = env.run(&[
                "export",
                "--format",
                format,
                "--out",
                out.to_str().expect("utf-8"),
                "--db",
                db,
            ]);
            let err = String::from_utf8_lossy(&o.stderr).to_string();
            // A format with no record writes nothing and exits 1, on either engine alike.
            if o.status.code() == Some(1) && err.contains("nothing written") {
                assert!(!out.exists(), "{format}: an empty export wrote a file");
                return String::new();
            }
            assert_eq!(o.status.code(), Some(0), "{format}: {err}");
            std::fs::read_to_string(out).expect("written")
        };
        let a = written(&file, &format!("{format}-a.jsonl"));
        assert_eq!(a, written(&url, &format!("{format}-b.jsonl")), "{format}");
        records += a.lines().count();
    }
    assert!(records > 0, "the run yields dataset records");

    let ok = |args: &[&str]| -> String {
        let mut all = args.to_vec();
        all.extend(["--db", url.as_str()]);
        let o = env.run(&all);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    // k = 2: mika's 👍 is in force on turn 1 and ken's override on turn 2 (one place each).
    ok(&["queue", "create", "q", "--k", "2", "--reviewer", "lead"]);
    assert!(ok(&["queue", "list"]).contains('q'));
    let item = |who: &str| -> serde_json::Value {
        let t = ok(&["queue", "next", "q", "--reviewer", who, "--json"]);
        serde_json::from_str::<serde_json::Value>(&t).expect("json")["item"].clone()
    };
    let (m, k) = (item("aoi"), item("sora"));
    assert_ne!((&m["run_id"], &m["turn"]), (&k["run_id"], &k["turn"]));
    let (r, t) = (m["run_id"].to_string(), m["turn"].to_string());
    ok(&[
        "queue",
        "judge",
        "q",
        "--run",
        &r,
        "--turn",
        &t,
        "--thumb",
        "up",
        "--reviewer",
        "aoi",
    ]);
    let show: serde_json::Value =
        serde_json::from_str(&ok(&["queue", "show", "q", "--json"])).expect("json");
    assert_eq!(show["items"], 2);
    assert_eq!(show["done"], 1);
    assert_eq!(show["per_reviewer"]["aoi"], 1);
    assert_eq!(show["per_reviewer"]["mika"], 1);
}

fn a_lapsed_lease_is_no_claim_to_judge(store: &mut Store, reopen: &dyn Fn() -> Store) {
    common::stores::committed_runs(store, 13, 1, 2, &[Status::Pass]);
    qdb::create(store, &spec("one", 1, false), None).expect("create");
    let t0 = 1_000_000_i64;
    let a = qdb::claim(store, "one", "taro", t0)
        .expect("claim")
        .expect("item");
    let item = (a.subject, a.turn);
    // taro may judge what he holds; nobody else may while he holds it.
    qdb::may_judge(store, "one", "taro", item, t0 + 1).expect("his lease");
    let e = qdb::may_judge(store, "one", "hana", item, t0 + 1).expect_err("held by taro");
    assert!(e.to_string().contains("held by another reviewer"), "{e}");
    // His lease lapses; jiro takes the item and judges it: k = 1 is reached.
    let mut other = reopen();
    let later = a.until_ms + 1;
    let j = qdb::claim(&mut other, "one", "jiro", later)
        .expect("claim")
        .expect("item");
    assert_eq!((j.subject, j.turn), item);
    thumb(&mut other, item, "jiro", true);
    // taro comes back to it: refused, and nothing of his is stored.
    let e = qdb::may_judge(store, "one", "taro", item, later + 1).expect_err("lapsed");
    assert!(e.to_string().contains("lapsed"), "{e}");
    qdb::may_judge(store, "one", "jiro", item, later + 1).expect("his own mark may change");
    // Quitting the workbench gives back what one holds: the other item, free at once.
    let b = qdb::claim(store, "one", "taro", later + 2)
        .expect("claim")
        .expect("item");
    assert_ne!((b.subject, b.turn), item);
    assert_eq!(qdb::release_all(store, "one", "taro").expect("release"), 1);
    let c = qdb::claim(&mut other, "one", "hana", later + 3)
        .expect("claim")
        .expect("item");
    assert_eq!((c.subject, c.turn), (b.subject, b.turn));
}

fn reviewer_names_are_printable_and_bounded(store: &mut Store, _: &dyn Fn() -> Store) {
    common::stores::committed_runs(store, 17, 1, 2, &[Status::Pass]);
    qdb::create(store, &spec("names", 1, true), None).expect("create");
    // Generated variants: each unprintable character inside an ordinary name.
    let bad: Vec<String> = [
        '\u{1b}', '\n', '\r', '\u{7}', '\u{0}', '\u{9b}', '\u{202e}', '\u{2066}', '\t',
    ]
    .iter()
    .flat_map(|c| {
        [
            format!("ta{c}ro"),
            format!("x{c}[2Jtaro"),
            format!("taro{c}x"),
        ]
    })
    .chain([
        "あ".repeat(kakeai::annotate::REVIEWER_MAX_CHARS + 1),
        "x".repeat(10_000),
    ])
    .collect();
    for name in &bad {
        let e = qdb::claim(store, "names", name, 1_000).expect_err(name);
        assert!(
            matches!(e, kakeai::annotate::QueueError::Invalid(_)),
            "{name:?}: {e}"
        );
    }
    let stored: i64 = store
        .db()
        .one("SELECT COUNT(*) FROM queue_leases", p![])
        .expect("count");
    assert_eq!(stored, 0, "nothing stored under a refused name");
    for ok in [
        "taro",
        "花子",
        "Jean-Luc O'Neil",
        &"あ".repeat(kakeai::annotate::REVIEWER_MAX_CHARS),
    ] {
        qdb::claim(store, "names", ok, 1_000)
            .expect(ok)
            .expect("item");
    }
}

fn a_lead_adjudicates_where_reviewers_disagree(store: &mut Store, _: &dyn Fn() -> Store) {
    use kakeai::annotate::adjudicate as adj;
    let all = common::stores::committed_runs(store, 19, 1, 4, &[Status::Pass]);
    qdb::create(store, &spec("gold", 2, true), None).expect("create");
    let items: Vec<Item> = all.iter().map(|(i, _, _)| *i).collect();
    // Generated marks: item i gets taro's up and hana's (i % 2 == 0 ? down : up).
    for (i, item) in items.iter().enumerate() {
        thumb(store, *item, "taro", true);
        thumb(store, *item, "hana", i % 2 != 0);
    }
    let q = qdb::get(store.db(), "gold").expect("get");
    let split = adj::disagreements(store, "gold").expect("list");
    let want: Vec<Item> = items.iter().copied().step_by(2).collect();
    assert_eq!(split.iter().map(|d| d.item).collect::<Vec<_>>(), want);
    assert!(
        split
            .iter()
            .all(|d| d.gold.is_none() && d.labels.len() == 2)
    );
    assert_eq!(split[0].labels["taro"], "fine");
    assert_eq!(split[0].labels["hana"], "not");
    // Refused: a label the queue does not use, no reason, an item not in the queue, a bad lead.
    let first = want[0];
    for (label, reason, item, lead) in [
        ("A", "x", first, "lead"),
        ("fine", "  ", first, "lead"),
        ("fine", "x", (first.0 + 999, first.1), "lead"),
        ("fine", "x", first, "le\u{1b}[2Jad"),
    ] {
        assert!(
            adj::decide(store, "gold", item, label, reason, lead).is_err(),
            "{label} {reason:?} {item:?} {lead:?}"
        );
    }
    assert!(
        adj::golds(store.db(), &q).expect("golds").is_empty(),
        "nothing stored"
    );
    adj::decide(store, "gold", first, "NOT", "語尾が崩れている", "lead").expect("decides");
    adj::decide(store, "gold", first, "fine", "読み直したら自然", "boss").expect("replaces");
    let golds = adj::golds(store.db(), &q).expect("golds");
    assert_eq!(golds.len(), 1);
    let g = &golds[&first];
    assert_eq!(
        (g.label.as_str(), g.reason.as_str(), g.by.as_str()),
        ("fine", "読み直したら自然", "boss")
    );
    let split = adj::disagreements(store, "gold").expect("list");
    assert_eq!(
        split[0].gold.as_ref().map(|g| g.label.as_str()),
        Some("fine")
    );
    assert!(split[1..].iter().all(|d| d.gold.is_none()));
}
