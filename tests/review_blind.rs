//! Issue 14 §3–4: blind mode hides the Director's verdict on a turn until the reviewer judged
//! it, and the detail pane shows the exact stored request of an attempt with the vault part
//! marked by level. Snapshots at 80×24 and 140×40.

mod common;

mod review_fixture;

use crossterm::event::KeyCode;
use kakeai::director::{RuleSet, Status};
use kakeai::duo::config::DuoConfig;
use kakeai::duo::prompt::{PromptInput, build};
use kakeai::store::Store;
use kakeai::tui::app::{Command, Pane, UiMsg};
use kakeai::tui::request_view;
use review_fixture::*;
use serde_json::json;

const VERDICT_WORDS: [&str; 4] = ["PASS", "WARN", "RETRY", "UNSCORED"];

#[test]
fn blind_hides_every_verdict_until_the_reviewer_judges_the_turn() {
    let (_d, mut s) = store();
    let run = add_run(&mut s, "駅前のパン屋へ", 6, 1);
    let mut a = opened(&s, run);
    a.blind = true;
    // Every turn, selected in turn, at three sizes: no verdict word anywhere on screen.
    a.act(kakeai::tui::keymap::Action::FirstTurn);
    for i in 0..a.run.turns.len() {
        assert_eq!(a.selected, i);
        for (w, h) in [(80, 24), (100, 30), (140, 40)] {
            let sc = screen(&a, w, h);
            for word in VERDICT_WORDS {
                assert!(!sc.contains(word), "turn {} {w}x{h}: {word}\n{sc}", i + 1);
            }
            assert!(sc.contains("[blind]") && sc.contains("blind · "), "{sc}");
        }
        a.on_key(key(KeyCode::Char('j')));
    }
    // The flagged queue does not give the hidden verdicts away.
    a.act(kakeai::tui::keymap::Action::FirstTurn);
    a.act(kakeai::tui::keymap::Action::NextFlagged);
    assert_eq!(a.selected, 0, "{}", a.status);
    // Turn 2 (a retried turn): hidden, then 👍 reveals its verdict and findings.
    a.act(kakeai::tui::keymap::Action::FirstTurn);
    a.on_key(key(KeyCode::Char('j')));
    assert_eq!(a.run.turns[a.selected].turn, 2);
    insta::assert_snapshot!("blind_hidden_80x24", screen(&a, 80, 24));
    insta::assert_snapshot!("blind_hidden_140x40", screen(&a, 140, 40));
    let stats_before = {
        a.pane = Pane::Stats;
        let sc = screen(&a, 140, 40);
        a.pane = Pane::Detail;
        sc
    };
    assert!(stats_before.contains("by turn  ??????"), "{stats_before}");
    a.on_key(key(KeyCode::Char('+')));
    // The detail pane shows when the 👍 was given: a fixed clock for the snapshots.
    for e in &mut a.review_log {
        e.4 = "2026-08-01T19:30:00.000Z".into();
    }
    assert_eq!(a.run.turns[1].review.thumb, Some(true));
    let shown = a.run.turns[1].status().unwrap();
    let sc = screen(&a, 140, 40);
    assert!(sc.contains(&format!("[{}]", shown.as_str())), "{sc}");
    // The first attempt's word in the timeline is back too; the others stay hidden.
    let first = a.run.turns[1].attempts[0].verdict.as_ref().unwrap().status;
    assert!(sc.contains(&format!("#1 {}", first.as_str())), "{sc}");
    assert_eq!(sc.matches("[blind]").count(), 5, "{sc}");
    insta::assert_snapshot!("blind_revealed_80x24", screen(&a, 80, 24));
    insta::assert_snapshot!("blind_revealed_140x40", screen(&a, 140, 40));
    a.pane = Pane::Stats;
    assert!(screen(&a, 140, 40).contains("by turn  ?█????"));
    a.pane = Pane::Detail;
    // An override judges a turn too; its dialog does not start at the hidden verdict.
    a.on_key(key(KeyCode::Char('j')));
    a.on_key(key(KeyCode::Char('o')));
    match &a.modal {
        Some(kakeai::tui::app::Modal::Override { status, .. }) => {
            assert_eq!(*status, Status::Pass)
        }
        other => panic!("no override dialog (a dialog open: {})", other.is_some()),
    }
    // Without blind the same screen shows the verdicts.
    a.modal = None;
    a.blind = false;
    let sc = screen(&a, 140, 40);
    assert!(VERDICT_WORDS.iter().any(|w| sc.contains(w)), "{sc}");
    assert!(!sc.contains("[blind]"));
}

/// The system message of a real duo prompt for `reader`, with the sample vault's context.
fn system_with_vault(reader: &str) -> (String, Vec<u8>) {
    let rules = RuleSet::builtin().unwrap();
    let cfg = DuoConfig::builtin().unwrap();
    let ctx = kakeai::vault::load::sample().context(Some(reader));
    let world = format!("夕方の商店街。焼きたての匂いがする。\n\n{}", ctx.prompt);
    let me = rules.character(reader).unwrap();
    let partner = rules.character(&me.partner).unwrap();
    let p = build(&PromptInput {
        speaker: me,
        partner,
        topic: "駅前の新しいパン屋",
        cfg: &cfg,
        world: &world,
        history: &[],
        guidance: &[],
        owner: None,
    });
    let mut levels = ctx.hint_levels.clone();
    if !ctx.context.is_empty() {
        levels.push(3);
    }
    (p.messages[0].content.clone(), levels)
}

fn attempt_id(s: &Store, run: i64, turn: u32, attempt: u32) -> i64 {
    s.conn()
        .query_row(
            "SELECT id FROM attempts WHERE run_id = ?1 AND turn = ?2 AND attempt = ?3",
            rusqlite::params![run, turn, attempt],
            |r| r.get(0),
        )
        .unwrap()
}

/// The read the runtime makes for a LoadRequest, handed back as its UiMsg.
fn serve(a: &mut kakeai::tui::app::App, s: &Store, cmds: &[Command]) {
    for c in cmds {
        if let Command::LoadRequest(k) = c {
            let r = s
                .request_at(k.0, k.1 as u32, k.2 as u32)
                .map_err(kakeai::tui::error::UiError::from);
            a.on_msg(UiMsg::Request(*k, r));
        }
    }
}

fn text_of(lines: &[ratatui::text::Line]) -> Vec<String> {
    lines
        .iter()
        .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
        .collect()
}

#[test]
fn a_stored_attempt_shows_its_request_with_the_vault_marked_by_level() {
    let (_d, mut s) = store();
    let run = add_run(&mut s, "駅前のパン屋へ", 4, 1);
    let (system, levels) = system_with_vault("yana");
    let request = json!({
        "messages": [
            {"role": "system", "content": system},
            {"role": "user", "content": "（会話を始めてください）"}
        ],
        "options": {"backend": "live", "model": "gemma2:27b", "temperature": 0.7}
    });
    s.save_request(attempt_id(&s, run, 1, 1), &request).unwrap();
    s.save_request(attempt_id(&s, run, 3, 1), &json!({"prompt": "古い形"}))
        .unwrap();
    let mut a = opened(&s, run);
    // The open work's templates (the sample's own) tell its hints apart.
    a.rooms.vis = Some(kakeai::tui::vis::VisPane::new(kakeai::vault::load::sample()));
    a.act(kakeai::tui::keymap::Action::FirstTurn);
    // Off: nothing is read. `x` turns the view on and asks for the selected attempt only.
    let cmds = a.on_key(key(KeyCode::Char('x')));
    assert!(matches!(&cmds[..], [Command::LoadRequest((r, 1, 1))] if *r == run));
    let loading = screen(&a, 140, 40);
    assert!(loading.contains("loading the stored request"), "{loading}");
    serve(&mut a, &s, &cmds);
    let t = a.theme().clone();
    let lines_of = |a: &kakeai::tui::app::App| {
        text_of(&request_view::lines(
            &a.rooms.request,
            a.selected_request(),
            a.rooms.vis.as_ref().map(|p| &p.work.templates),
            false,
            56,
            &t,
        ))
    };
    let rows = lines_of(&a);
    assert!(rows.iter().any(|r| r.contains("── 1 system ──")));
    assert!(rows.iter().any(|r| r.contains("── 2 user ──")));
    assert!(rows.iter().any(|r| r.contains("temperature: 0.7")));
    // Every level the sample gives yana is marked, and only vault text carries a marker.
    assert!(!levels.is_empty());
    for l in &levels {
        let m = format!("[L{l}] ");
        assert!(
            rows.iter().any(|r| r.starts_with(&m)),
            "{m} missing: {rows:#?}"
        );
    }
    assert!(
        rows.iter()
            .filter(|r| r.contains("夕方の商店街") || r.contains("【話題】"))
            .all(|r| !r.starts_with("[L"))
    );
    // Without the work's templates its hints are vault text of unknown level, never L3.
    let vis = a.rooms.vis.take();
    let unknown = lines_of(&a);
    assert!(unknown.iter().any(|r| r.starts_with("[L?] ")));
    let l3 = |v: &[String]| v.iter().filter(|r| r.starts_with("[L3] ")).count();
    assert_eq!(l3(&unknown), l3(&rows));
    a.rooms.vis = vis;
    // Scroll the pane to the vault part for the snapshot.
    let first = rows.iter().position(|r| r.starts_with("[L")).unwrap();
    a.right_scroll = first as u16;
    insta::assert_snapshot!("request_vault_140x40", screen(&a, 140, 40));
    // The next turn (its committed attempt #2) has no stored request; a read for a turn no longer selected is dropped.
    let cmds = a.on_key(key(KeyCode::Char('j')));
    assert!(matches!(&cmds[..], [Command::LoadRequest((_, 2, 2))]));
    a.on_msg(UiMsg::Request((run, 1, 1), Ok(Some(request.clone()))));
    assert!(screen(&a, 140, 40).contains("loading the stored request"));
    serve(&mut a, &s, &cmds);
    assert!(screen(&a, 140, 40).contains("no request stored for this attempt"));
    // A request stored in a shape this version cannot read is said so, and shown as stored.
    let cmds = a.on_key(key(KeyCode::Char('j')));
    serve(&mut a, &s, &cmds);
    let sc = screen(&a, 140, 40);
    assert!(
        sc.contains("request unreadable") && sc.contains("古い形"),
        "{sc}"
    );
    // `x` again: the findings are back and nothing more is read.
    assert!(a.on_key(key(KeyCode::Char('x'))).is_empty());
    assert!(!screen(&a, 140, 40).contains("request unreadable"));
    // Blind: the request of an unjudged turn carries the Director's guidance, so it waits.
    a.blind = true;
    a.on_key(key(KeyCode::Char('x')));
    assert!(screen(&a, 140, 40).contains("request hidden (blind)"));
}

#[test]
fn blind_is_a_flag_and_an_environment_switch() {
    use clap::Parser;
    let parse = |args: &[&str]| {
        kakeai::cli::Cli::try_parse_from(args)
            .unwrap()
            .workbench
            .blind
    };
    // SAFETY: no other test of this binary reads the environment (the others build Apps
    // directly), and these run one after another inside this test.
    unsafe { std::env::remove_var("KAKEAI_BLIND") };
    assert!(!parse(&["kakeai"]));
    assert!(parse(&["kakeai", "--blind", "--reviewer", "mika"]));
    for (v, want) in [
        ("1", true),
        ("true", true),
        ("yes", true),
        ("0", false),
        ("false", false),
        ("off", false),
    ] {
        unsafe { std::env::set_var("KAKEAI_BLIND", v) };
        assert_eq!(parse(&["kakeai"]), want, "KAKEAI_BLIND={v}");
    }
    unsafe { std::env::remove_var("KAKEAI_BLIND") };
}
