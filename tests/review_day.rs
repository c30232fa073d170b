//! The reviewer's day (issue 14, part A): stored runs reopened exactly as reviewed, the runs
//! browser (paged, filtered), search and the review queue, undo stored as an action, the
//! reviewer's name on every action, Cohen's κ in the rules pane, and replays of imported runs
//! that start late or lack text. Snapshots at 80×24 and 140×40.

mod common;

use crossterm::event::KeyCode;
use kakeai::store::ActionKind;
use kakeai::tui::app::{Pane, UiMsg};
use kakeai::tui::keymap::Action;
use kakeai::tui::reopen;
use serde_json::json;

mod review_fixture;
use review_fixture::*;

#[test]
fn a_stored_run_reopens_exactly_as_reviewed() {
    let (_d, mut s) = store();
    let run = add_run(&mut s, "駅前のパン屋へ", 6, 1);
    act(
        &mut s,
        run,
        1,
        ActionKind::Thumb,
        json!({"up": true}),
        "mika",
    );
    act(
        &mut s,
        run,
        2,
        ActionKind::Override,
        json!({"to": "RETRY"}),
        "mika",
    );
    act(
        &mut s,
        run,
        3,
        ActionKind::Feedback,
        json!({"issue_type": "other"}),
        "mika",
    );
    act(
        &mut s,
        run,
        4,
        ActionKind::Thumb,
        json!({"up": false}),
        "mika",
    );
    act(
        &mut s,
        run,
        4,
        ActionKind::Undo,
        json!({"undo": "thumb"}),
        "mika",
    );
    let o = reopen::open(&s, run, None).unwrap();
    let v = &o.view;
    assert_eq!(v.run_id, Some(run));
    assert_eq!(v.turns.len(), 6);
    // Every attempt is back, the committed one marked.
    assert_eq!(v.turns[1].attempts.len(), 2);
    assert_eq!(v.turns[1].committed, Some(1));
    assert!(v.turns[1].attempts[0].verdict.is_some());
    assert_eq!(v.turns[0].review.thumb, Some(true));
    assert_eq!(
        v.turns[1].review.override_to,
        Some(kakeai::director::Status::Retry)
    );
    assert_eq!(v.turns[2].review.notes, 1);
    assert_eq!(v.turns[3].review.thumb, None, "the undo is applied");
    assert_eq!(o.log.len(), 5);
    assert!(o.log.iter().all(|e| e.3.as_deref() == Some("mika")));
}

#[test]
fn browser_pages_filters_and_counts_reviews() {
    let (_d, mut s) = store();
    let mut ids = Vec::new();
    for i in 0..25u32 {
        let topic = if i % 5 == 0 {
            "花火大会の帰り道"
        } else {
            "駅前のパン屋へ"
        };
        ids.push(add_run(&mut s, topic, 1 + i % 4, i));
    }
    act(
        &mut s,
        ids[24],
        1,
        ActionKind::Thumb,
        json!({"up": true}),
        "mika",
    );
    let p = s.browse("", 10, 0).unwrap();
    assert_eq!((p.total, p.rows.len()), (25, 10));
    assert_eq!(p.rows[0].id, ids[24], "newest first");
    assert_eq!(p.rows[0].reviewed, 1);
    assert_eq!(p.rows[0].strip.len(), 1, "run 24 has 1 + 24 % 4 turns");
    let p2 = s.browse("", 10, 20).unwrap();
    assert_eq!(p2.rows.len(), 5);
    assert_eq!(p2.rows.last().unwrap().id, ids[0]);
    let f = s.browse("花火", 100, 0).unwrap();
    assert_eq!(f.total, 5);
    assert!(f.rows.iter().all(|r| r.topic.contains("花火")));
    // LIKE wildcards in the filter are taken literally.
    assert_eq!(s.browse("%", 100, 0).unwrap().total, 0);
    assert_eq!(
        s.browse(&ids[3].to_string(), 100, 0).unwrap().rows[0].id,
        ids[3]
    );
    assert_eq!(s.latest_run_id().unwrap(), Some(ids[24]));
    let hits = s.search_text(None, "メロンパン", 100).unwrap();
    assert_eq!(hits.len(), 25, "turn 1 of every run");
    assert!(
        s.search_text(Some(ids[0]), "半分こ", 10)
            .unwrap()
            .is_empty()
    );
}

#[test]
fn queue_search_and_undo() {
    let (_d, mut s) = store();
    let run = add_run(&mut s, "駅前のパン屋へ", 6, 1);
    act(
        &mut s,
        run,
        1,
        ActionKind::Thumb,
        json!({"up": true}),
        "mika",
    );
    let mut a = opened(&s, run);
    a.reviewer = Some("mika".into());
    a.act(Action::FirstTurn);
    // The queue key jumps to the first unreviewed turn.
    a.act(Action::NextUnreviewed);
    assert_eq!(a.run.turns[a.selected].turn, 2);
    // `/` finds a word of turn 3.
    a.act(Action::Search);
    for c in "ｶﾞﾗｶﾞﾗ".chars() {
        a.on_key(key(KeyCode::Char(c)));
    }
    insta::assert_snapshot!("queue_search_80x24", screen(&a, 80, 24));
    a.on_key(key(KeyCode::Enter));
    assert_eq!(a.run.turns[a.selected].turn, 3);
    insta::assert_snapshot!("queue_found_140x40", screen(&a, 140, 40));
    // n wraps to the same single match.
    a.act(Action::SearchNext);
    assert_eq!(a.run.turns[a.selected].turn, 3);
    // From turn 1 the flagged key lands on the first RETRY/WARN/UNSCORED turn after it.
    a.act(Action::FirstTurn);
    a.act(Action::NextFlagged);
    let at = a.selected;
    assert!(at > 0);
    assert!(kakeai::tui::queue::flagged(&a.run.turns[at]));
    assert!(
        a.run.turns[1..at]
            .iter()
            .all(|t| !kakeai::tui::queue::flagged(t))
    );
    // 👍 turn 5 through the keymap, then undo: the 👍 goes, and the undo is a stored action.
    a.act(Action::FirstTurn);
    for _ in 0..4 {
        a.act(Action::NextTurn);
    }
    let cmds = a.on_key(key(KeyCode::Char('+')));
    assert_eq!(cmds.len(), 1);
    assert_eq!(a.run.turns[4].review.thumb, Some(true));
    let undo = a.on_key(key(KeyCode::Char('u')));
    assert_eq!(a.run.turns[4].review.thumb, None);
    match &undo[..] {
        [
            kakeai::tui::app::Command::Save {
                turn,
                kind,
                payload,
                ..
            },
        ] => {
            assert_eq!((*turn, *kind), (Some(5), ActionKind::Undo));
            assert_eq!(payload["undo"], "thumb");
        }
        other => panic!("{other:?}"),
    }
    // The next undo takes back the stored 👍 of turn 1; then there is nothing left.
    a.on_key(key(KeyCode::Char('u')));
    assert_eq!(a.run.turns[0].review.thumb, None);
    assert!(a.on_key(key(KeyCode::Char('u'))).is_empty());
}

#[test]
fn snapshot_runs_browser() {
    let (_d, mut s) = store();
    let topics = [
        "駅前のパン屋へ",
        "花火大会の帰り道",
        "ｶﾞﾗｶﾞﾗの商店街で福引き 🎯",
    ];
    let mut last = 0;
    for i in 0..7u32 {
        last = add_run(&mut s, topics[i as usize % 3], 2 + i % 5, i);
    }
    act(
        &mut s,
        last,
        1,
        ActionKind::Thumb,
        json!({"up": true}),
        "mika",
    );
    act(
        &mut s,
        last,
        2,
        ActionKind::Override,
        json!({"to": "PASS"}),
        "ken",
    );
    let mut a = opened(&s, last);
    a.act(Action::Runs);
    a.on_msg(UiMsg::Runs {
        filter: String::new(),
        offset: 0,
        page: Ok(s.browse("", 200, 0).unwrap()),
    });
    insta::assert_snapshot!("runs_browser_80x24", screen(&a, 80, 24));
    insta::assert_snapshot!("runs_browser_140x40", screen(&a, 140, 40));
    // Typing filters (the page is read again for the filter).
    let cmds = a.on_key(key(KeyCode::Char('花')));
    assert!(matches!(
        &cmds[..],
        [kakeai::tui::app::Command::BrowseRuns { filter, offset: 0 }] if filter == "花"
    ));
    a.on_msg(UiMsg::Runs {
        filter: "花".into(),
        offset: 0,
        page: Ok(s.browse("花", 200, 0).unwrap()),
    });
    // A page for the filter before, answered late, is dropped: the newest request wins.
    a.on_msg(UiMsg::Runs {
        filter: String::new(),
        offset: 0,
        page: Ok(s.browse("", 200, 0).unwrap()),
    });
    assert!(
        a.runs
            .as_ref()
            .unwrap()
            .page
            .rows
            .iter()
            .all(|r| r.topic.contains('花'))
    );
    // Enter opens the selected run.
    let cmds = a.on_key(key(KeyCode::Enter));
    assert!(matches!(
        &cmds[..],
        [kakeai::tui::app::Command::OpenRun { .. }]
    ));
    assert!(a.runs.is_none());
}

/// Async answers carry their target (issue 23): a page for another offset, a run opened for an
/// older request and a comparison asked for before the newest one are all dropped.
#[test]
fn late_answers_never_land_in_place_of_the_newest_request() {
    let (_d, mut s) = store();
    let first = add_run(&mut s, "駅前のパン屋へ", 6, 1);
    let second = add_run(&mut s, "花火の帰り道", 4, 2);
    let mut a = opened(&s, first);
    // The runs browser asks for the second page; the first page arriving late is dropped.
    a.act(Action::Runs);
    let (total, page) = (s.browse("", 1, 0).unwrap(), s.browse("", 1, 1).unwrap());
    a.runs.as_mut().unwrap().asked = 1;
    a.on_msg(UiMsg::Runs {
        filter: String::new(),
        offset: 1,
        page: Ok(page.clone()),
    });
    a.on_msg(UiMsg::Runs {
        filter: String::new(),
        offset: 0,
        page: Ok(total),
    });
    assert_eq!(
        a.runs.as_ref().unwrap().page,
        page,
        "the older page replaced the newer"
    );
    a.runs = None;
    // Two runs asked for in a row: the first answer (older ticket) arrives last and is dropped.
    let (older, newer) = (a.tickets.next_open(), a.tickets.next_open());
    let read = |id| Ok(Box::new(reopen::open(&s, id, None).unwrap()));
    a.on_msg(UiMsg::RunOpened {
        ticket: newer,
        run: read(second),
    });
    a.on_msg(UiMsg::RunOpened {
        ticket: older,
        run: read(first),
    });
    assert_eq!(
        a.run.run_id,
        Some(second),
        "a late answer opened the older request's run"
    );
    // A comparison answered after a newer request was made never opens the view.
    let stale = a.tickets.next_compare();
    a.tickets.next_compare();
    let missing = kakeai::tui::error::UiError::Missing("no comparison 9".into());
    a.on_msg(UiMsg::Compare {
        ticket: stale,
        view: Box::new(Err(missing)),
    });
    assert!(
        a.errors.is_empty() && !a.status.contains("no comparison 9"),
        "a stale compare answer was shown: {} {:?}",
        a.status,
        a.errors
    );
}

#[test]
fn snapshot_kappa_in_the_rules_pane() {
    let (_d, mut s) = store();
    let run = add_run(&mut s, "駅前のパン屋へ", 6, 1);
    let marks = [
        (1, true, true),
        (2, false, false),
        (3, true, false),
        (4, true, true),
        (5, false, true),
        (6, true, true),
    ];
    for (turn, mika, ken) in marks {
        act(
            &mut s,
            run,
            turn,
            ActionKind::Thumb,
            json!({"up": mika}),
            "mika",
        );
        act(
            &mut s,
            run,
            turn,
            ActionKind::Thumb,
            json!({"up": ken}),
            "ken",
        );
    }
    let mut a = opened(&s, run);
    a.pane = Pane::Rules;
    let rows = kakeai::tui::kappa::table(&a.run.turns, &a.review_log);
    // mika vs ken: agree on 1, 2, 4, 6 of 6 → raw 4/6; κ by hand: each has 4 fine / 2 not
    // → pe = (4·4 + 2·2)/36 = 20/36; κ = (24/36 − 20/36)/(16/36) = 0.25.
    let mk = rows.iter().find(|r| r.label == "ken–mika").unwrap();
    assert_eq!(mk.agreement.n, 6);
    assert!((mk.agreement.raw - 4.0 / 6.0).abs() < 1e-9);
    assert!((mk.agreement.kappa.unwrap() - 0.25).abs() < 1e-9);
    // Krippendorff's α among both, by hand: 12 values, 8 fine and 4 not; 2 disagreeing units
    // give 4 off-diagonal coincidences; α = 1 − 11·4 / (2·8·4) = 0.3125, over 6 turns.
    let alphas = kakeai::tui::kappa::alpha_table(&a.run.turns, &a.review_log);
    let (label, all) = &alphas[0];
    assert_eq!(label, "all 2 reviewers");
    assert_eq!(all.units, 6);
    assert!((all.alpha.unwrap() - 0.3125).abs() < 1e-9, "{all:?}");
    insta::assert_snapshot!("kappa_80x24", screen(&a, 80, 24));
    insta::assert_snapshot!("kappa_140x40", screen(&a, 140, 40));
    // At 80×24 the table continues below: the focused right pane scrolls to it (as far as
    // the pane was last drawn: at 80×24).
    screen(&a, 80, 24);
    a.act(Action::FocusRight);
    for _ in 0..4 {
        a.act(Action::PageDown);
    }
    assert_eq!(
        (a.right_focus, a.right_scroll),
        (true, a.right_max.get()),
        "stops at the last row"
    );
    assert!(
        a.right_scroll > 0 && a.right_scroll < 40,
        "{}",
        a.right_scroll
    );
    insta::assert_snapshot!("kappa_scrolled_80x24", screen(&a, 80, 24));
}

#[test]
fn regenerate_keeps_a_branch_in_store_and_on_screen() {
    let (_d, mut s) = store();
    let run = add_run(&mut s, "駅前のパン屋へ", 6, 1);
    // The store: turns 4–6 set aside, not deleted; a second rewind makes branch 2.
    assert_eq!(s.branch_off(run, 4).unwrap(), Some(1));
    assert_eq!(s.load_run(run).unwrap().turns.len(), 3);
    let kept = s.branches(run).unwrap();
    assert_eq!(
        kept.iter().map(|b| b.turn).collect::<Vec<_>>(),
        vec![4, 5, 6]
    );
    assert_eq!(kept[0].text, LINES[3].1);
    assert_eq!(s.branch_off(run, 9).unwrap(), None, "nothing to set aside");
    let o = reopen::open(&s, run, None).unwrap();
    assert_eq!(o.branches.len(), 1);
    let mut a = app();
    a.on_msg(UiMsg::RunOpened {
        ticket: a.tickets.open,
        run: Ok(Box::new(o)),
    });
    assert_eq!(a.run.turns.len(), 3);
    a.act(Action::NextBranch);
    assert_eq!(a.run.turns.len(), 6);
    assert_eq!(a.run.turns[5].shown().unwrap().text, LINES[5].1);
    assert!(a.branches.label().starts_with("branch 1/1 (from turn 4)"));
    insta::assert_snapshot!("branch_80x24", screen(&a, 80, 24));
    a.act(Action::NextBranch);
    assert_eq!(
        (a.run.turns.len(), a.branches.label().as_str()),
        (3, "main line")
    );
}

#[test]
fn a_live_truncation_becomes_a_branch_and_destructive_keys_ask() {
    use kakeai::duo::Effect;
    use kakeai::tui::app::Command;
    use kakeai::tui::view::RunState;
    let (_d, mut s) = store();
    let run = add_run(&mut s, "駅前のパン屋へ", 6, 1);
    let mut a = opened(&s, run);
    a.run.state = RunState::Running;
    // Regenerate asks first; any other key cancels; y confirms.
    a.selected = 2;
    assert!(a.act(Action::Regenerate).is_empty());
    assert_eq!(a.confirm, Some(Action::Regenerate));
    insta::assert_snapshot!("confirm_regenerate_80x24", screen(&a, 80, 24));
    assert!(a.on_key(key(KeyCode::Char('x'))).is_empty());
    assert_eq!(a.confirm, None);
    a.act(Action::Regenerate);
    let cmds = a.on_key(key(KeyCode::Char('y')));
    assert!(matches!(
        &cmds[..],
        [
            Command::Control(kakeai::duo::Event::Regenerate { turn: 3 }),
            Command::Save { .. }
        ]
    ));
    // Stop asks too.
    assert!(a.act(Action::Stop).is_empty());
    let cmds = a.on_key(key(KeyCode::Char('s')));
    assert!(matches!(
        &cmds[..],
        [Command::Control(kakeai::duo::Event::Stop), ..]
    ));
    // The driver's truncation keeps turns 4–6 as a branch; turn 3 stays (it is regenerated).
    a.on_msg(UiMsg::Effect(Box::new(Effect::Truncated { from_turn: 3 })));
    assert_eq!(a.branches.len(), 1);
    assert_eq!(
        a.branches.list()[0].turns.len(),
        4,
        "the committed turn 3 and 4–6"
    );
    assert_eq!(a.run.turns.len(), 2);
}

/// `r` on a finished (reopened) run is refused and stores nothing: no Control, no Save, on
/// every turn of runs of several lengths.
#[test]
fn regenerate_on_a_finished_run_is_refused_and_stores_nothing() {
    use kakeai::tui::app::Command;
    for turns in [1usize, 3, 6] {
        let (_d, mut s) = store();
        let run = add_run(&mut s, "駅前のパン屋へ", turns as u32, 1);
        let mut a = opened(&s, run);
        for sel in 0..turns {
            a.selected = sel;
            let cmds = a.act(Action::Regenerate);
            let cmds = if a.confirm.is_some() {
                a.on_key(key(KeyCode::Char('y')))
            } else {
                cmds
            };
            assert!(
                !cmds
                    .iter()
                    .any(|c| matches!(c, Command::Save { .. } | Command::Control(_))),
                "turns {turns}, selected {sel}: {cmds:?}"
            );
            assert!(a.status.contains("no run in progress"), "{}", a.status);
        }
    }
}

/// Imported runs may start at turn 2 and have turns whose first attempt logged no text: the
/// replay renumbers from 1 in the recorded speaker order, plays a later attempt when the first
/// has no text, skips a turn with no text at all, and paces by the clock.
#[tokio::test]
async fn replay_of_a_late_starting_run_with_missing_text() {
    use kakeai::duo::backend::{Backend, Replay};
    let (_d, mut s) = store();
    let run = add_run(&mut s, "駅前のパン屋へ", 6, 1);
    let c = s.conn();
    c.execute("DELETE FROM turns WHERE run_id = ?1 AND turn = 1", [run])
        .unwrap();
    c.execute("DELETE FROM attempts WHERE run_id = ?1 AND turn = 1", [run])
        .unwrap();
    // Turn 2's first attempt has no text (its second does); turn 5 has none anywhere.
    c.execute(
        "UPDATE attempts SET text = NULL WHERE run_id = ?1 AND turn = 2 AND attempt = 1",
        [run],
    )
    .unwrap();
    c.execute(
        "UPDATE attempts SET text = NULL WHERE run_id = ?1 AND turn = 5",
        [run],
    )
    .unwrap();
    c.execute(
        "UPDATE turns SET text = '' WHERE run_id = ?1 AND turn = 5",
        [run],
    )
    .unwrap();
    let rec = s.load_run(run).unwrap();
    let plan = kakeai::duo::replay_plan::plan(&rec);
    assert_eq!(plan.first_speaker.as_deref(), Some("ayu"));
    assert_eq!(plan.skipped, vec![5]);
    let turns: Vec<usize> = plan.attempts.iter().map(|a| a.turn).collect();
    assert_eq!(turns, vec![1, 2, 3, 4], "turns 2, 3, 4, 6 renumbered");
    assert_eq!(plan.attempts[0].text, LINES[1].1);
    assert_eq!(plan.attempts[3].text, LINES[5].1);

    let mut r = Replay::from_record(&rec);
    r.first_token = std::time::Duration::ZERO;
    // 10 s per token: only the clock's "jump to the end" can finish this in time.
    r.per_token = std::time::Duration::from_secs(10);
    r.to_end.store(true, std::sync::atomic::Ordering::Relaxed);
    let b = Backend::Replay(std::sync::Arc::new(r));
    let mut got = String::new();
    let started = std::time::Instant::now();
    let (text, stats) = b
        .generate(1, 1, Vec::new(), &[], &mut |d: &str| got.push_str(d))
        .await
        .unwrap();
    assert_eq!(text, LINES[1].1);
    assert_eq!(got, text, "every token delivered");
    assert!(stats.tokens > 1);
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    // Every replay turn has a recording for its first attempt.
    for turn in 1..=4 {
        assert!(
            b.generate(turn, 1, Vec::new(), &[], &mut |_| {})
                .await
                .is_ok()
        );
    }
}

/// Paced by the clock: at a speed where each token is due every 10 µs, a 400-character line
/// is not held up by a millisecond timer per token.
#[tokio::test]
async fn fast_replay_is_paced_by_time() {
    use kakeai::duo::backend::{Backend, Replay};
    let line = "あ".repeat(400);
    let mut r = Replay::parse(
        "t.jsonl",
        &format!("{{\"topic\":\"t\"}}\n{{\"turn\":1,\"attempt\":1,\"text\":\"{line}\"}}\n"),
    )
    .unwrap();
    r.first_token = std::time::Duration::ZERO;
    r.per_token = std::time::Duration::from_micros(10);
    let b = Backend::Replay(std::sync::Arc::new(r));
    let mut calls = 0;
    let (text, stats) = b
        .generate(1, 1, Vec::new(), &[], &mut |_| calls += 1)
        .await
        .unwrap();
    assert_eq!(text, line);
    // Tokens due together are delivered together: fewer deliveries than tokens.
    assert!(
        calls < stats.tokens as usize,
        "{calls} deliveries for {} tokens",
        stats.tokens
    );
}
