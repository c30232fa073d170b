//! Issue 23 items 2–3: blind is per reviewer (only my own 👍/👎/override reveals a turn; other
//! reviewers' marks stay hidden), the marks in force are readable in the detail pane (who,
//! when, from→to with reason, category, description, fix), and an override to the verdict the
//! turn already has is refused.

mod common;

#[path = "review_fixture/mod.rs"]
mod review_fixture;

use crossterm::event::KeyCode;
use kakeai::store::ActionKind;
use kakeai::tui::app::{Command, Modal};
use kakeai::tui::keymap::Action;
use review_fixture::*;
use serde_json::json;

const VERDICT_WORDS: [&str; 4] = ["[PASS]", "[WARN]", "[RETRY]", "[UNSCORED]"];

#[test]
fn in_blind_mode_only_my_own_marks_reveal_a_turn() {
    let (_d, mut s) = store();
    let run = add_run(&mut s, "駅前のパン屋へ", 4, 1);
    // 花子 judged turns 1 and 2 (a 👍 and an override); nobody judged turns 3–4.
    act(
        &mut s,
        run,
        1,
        ActionKind::Thumb,
        json!({"up": true}),
        "花子",
    );
    act(
        &mut s,
        run,
        2,
        ActionKind::Override,
        json!({"from": "PASS", "to": "WARN", "reason": "硬い"}),
        "花子",
    );
    for me in ["taro", "tanaka"] {
        let mut a = opened(&s, run);
        a.blind = true;
        a.reviewer = Some(me.into());
        a.act(Action::FirstTurn);
        for (w, h) in [(80, 24), (140, 40)] {
            let sc = screen(&a, w, h);
            for word in VERDICT_WORDS {
                assert!(!sc.contains(word), "{me} {w}x{h}: {word}\n{sc}");
            }
            // (The detail pane's hint names 👍 as a key; the conversation rows show none.)
            let left: String = sc
                .lines()
                .map(|l| l.split("││").next().unwrap_or(""))
                .collect();
            assert!(
                !left.contains("👍") && !left.contains('✎'),
                "花子's marks shown to {me}\n{sc}"
            );
            assert!(!sc.contains("花子") && !sc.contains("硬い"), "{sc}");
            assert_eq!(sc.matches("[blind]").count(), 4, "{me} {w}x{h}\n{sc}");
        }
        // My own 👍 on turn 1 reveals turn 1 only.
        a.on_key(key(KeyCode::Char('+')));
        let sc = screen(&a, 140, 40);
        assert_eq!(sc.matches("[blind]").count(), 3, "{sc}");
        let left: String = sc
            .lines()
            .map(|l| l.split("││").next().unwrap_or(""))
            .collect();
        assert!(
            left.contains("👍") && sc.contains(&format!("{me} ")),
            "{sc}"
        );
    }
    // 花子 herself sees her turns revealed.
    let mut a = opened(&s, run);
    a.blind = true;
    a.reviewer = Some("花子".into());
    assert_eq!(screen(&a, 140, 40).matches("[blind]").count(), 2);
}

#[test]
fn the_detail_pane_lists_every_mark_in_force() {
    let (_d, mut s) = store();
    let run = add_run(&mut s, "駅前のパン屋へ", 4, 1);
    act(
        &mut s,
        run,
        2,
        ActionKind::Override,
        json!({"from": "PASS", "to": "WARN", "reason": "敬語が硬すぎる"}),
        "花子",
    );
    act(
        &mut s,
        run,
        2,
        ActionKind::Feedback,
        json!({"issue_type": "tone", "description": "姉様に対して丁寧すぎ", "suggested_fix": "少し砕けて"}),
        "taro",
    );
    act(
        &mut s,
        run,
        2,
        ActionKind::Thumb,
        json!({"up": false}),
        "taro",
    );
    act(
        &mut s,
        run,
        2,
        ActionKind::Undo,
        json!({"undo": "thumb"}),
        "taro",
    );
    let mut a = opened(&s, run);
    a.act(Action::FirstTurn);
    a.act(Action::NextTurn);
    let sc = screen(&a, 140, 40);
    let today = kakeai::store::time::now_iso();
    let day = &today[..10];
    for want in [
        "marks",
        "花子",
        "override PASS→WARN: 敬語が硬すぎる",
        "taro",
        "feedback [tone]",
        "issue: 姉様に対して丁寧すぎ",
        "fix: 少し砕けて",
        day,
    ] {
        assert!(sc.contains(want), "no `{want}` in the detail pane\n{sc}");
    }
    // The undone 👎 is not in force.
    assert!(!sc.contains("👎"), "{sc}");
}

#[test]
fn an_override_to_the_same_verdict_is_refused() {
    let (_d, mut s) = store();
    let run = add_run(&mut s, "駅前のパン屋へ", 3, 1);
    let mut a = opened(&s, run);
    a.reviewer = Some("taro".into());
    for i in 0..a.run.turns.len() {
        a.selected = i;
        let current = a.run.turns[i].status().unwrap();
        a.on_key(key(KeyCode::Char('o')));
        // Walk the dialog to the verdict the turn has, then Enter.
        for _ in 0..3 {
            match &a.modal {
                Some(Modal::Override { status, .. }) if *status == current => break,
                _ => {
                    a.on_key(key(KeyCode::Right));
                }
            }
        }
        let cmds = a.on_key(key(KeyCode::Enter));
        assert!(
            !cmds.iter().any(|c| matches!(
                c,
                Command::Save {
                    kind: ActionKind::Override,
                    ..
                }
            )),
            "turn {}: an override to {} was saved",
            i + 1,
            current.as_str()
        );
        assert!(a.status.contains("already"), "{}", a.status);
        assert!(
            matches!(a.modal, Some(Modal::Override { .. })),
            "the dialog stays open"
        );
        a.modal = None;
        assert_eq!(a.run.turns[i].review.override_to, None);
    }
}

/// Item 5: exports carry the reviewer of every action, as the store does (jsonl and md).
#[test]
fn exports_carry_the_reviewer() {
    let (_d, mut s) = store();
    let run = add_run(&mut s, "駅前のパン屋へ", 2, 1);
    act(
        &mut s,
        run,
        1,
        ActionKind::Thumb,
        json!({"up": true}),
        "taro",
    );
    act(
        &mut s,
        run,
        2,
        ActionKind::Override,
        json!({"from": "PASS", "to": "WARN", "reason": "硬い"}),
        "花子",
    );
    let rec = s.load_run(run).unwrap();
    let mut out = Vec::new();
    kakeai::store::export::jsonl(&rec, &mut out).unwrap();
    let actions: Vec<serde_json::Value> = String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|v| v["record"] == "action")
        .collect();
    let who: Vec<&str> = actions
        .iter()
        .filter_map(|v| v["reviewer"].as_str())
        .collect();
    assert_eq!(who, ["taro", "花子"], "{actions:?}");
    let mut md = Vec::new();
    kakeai::store::export::markdown(&rec, &mut md).unwrap();
    let md = String::from_utf8(md).unwrap();
    assert!(md.contains("- thumb by taro ("), "{md}");
    assert!(md.contains("- override by 花子 ("), "{md}");
}

/// Issue 23: a dialog carries its target. The selection moving while the override or feedback
/// dialog is open (a live run following its newest turn, a reviewer's stray key handled
/// elsewhere) does not move the mark: it lands on the turn the dialog was opened on, which
/// the dialog names.
#[test]
fn a_dialog_keeps_the_turn_it_was_opened_on() {
    let (_d, mut s) = store();
    let run = add_run(&mut s, "駅前のパン屋へ", 4, 1);
    for (open_on, moved_to) in [(0, 3), (1, 0), (2, 3)] {
        for (key_char, kind) in [('o', ActionKind::Override), ('f', ActionKind::Feedback)] {
            let mut a = opened(&s, run);
            a.selected = open_on;
            let turn = a.run.turns[open_on].turn;
            a.on_key(key(KeyCode::Char(key_char)));
            assert!(a.modal.is_some(), "{key_char} opens a dialog");
            let sc = screen(&a, 100, 30);
            assert!(sc.contains(&format!("turn {turn}")), "{sc}");
            // Change the verdict (an override must change it) and type a reason.
            if kind == ActionKind::Override {
                a.on_key(key(KeyCode::Right));
            }
            a.on_key(key(KeyCode::Char('硬')));
            a.selected = moved_to;
            let cmds = a.on_key(key(KeyCode::Enter));
            let saved: Vec<Option<usize>> = cmds
                .iter()
                .filter_map(|c| match c {
                    Command::Save { kind: k, turn, .. } if *k == kind => Some(*turn),
                    _ => None,
                })
                .collect();
            assert_eq!(saved, [Some(turn)], "{key_char}: {cmds:?}");
        }
    }
}
