//! Helpers shared by the blind-mode and request-view tests: a stored run of the sisters' walk
//! to the station (lines written for these tests), opened in a workbench App, drawn on a TestBackend.
#![allow(dead_code)]

use std::time::SystemTime;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use kakeai::director::{self, RuleSet};
use kakeai::store::{
    ActionKind, AttemptOutcome, NewAction, NewAttempt, NewRun, Store, TurnCommit, TurnFlags,
};
use kakeai::text::Analysis;
use kakeai::text::analyzer::fallback::FallbackAnalyzer;
use kakeai::tui::app::{App, Conn, Header, UiMsg};
use kakeai::tui::reopen;
use serde_json::json;

/// A few lines of a walk to the station, in the sisters' voices (written for these tests).
pub const LINES: [(&str, &str); 6] = [
    ("yana", "ねえ、駅前のパン屋さん、新しいメロンパン出てたよ！"),
    (
        "ayu",
        "姉様、それは季節限定だそうです。夕方には売り切れるみたいですね。",
    ),
    ("yana", "じゃあ今から走って買いに行こ！ｶﾞﾗｶﾞﾗの袋持ってく？"),
    ("ayu", "はい、行きましょう。袋は私が持っています。"),
    ("yana", "やった！あゆ、半分こしよ。"),
    ("ayu", "もちろんです。温かいうちにいただきましょう。"),
];

// The one harness (tests/common): every test that includes this fixture declares `mod common;`.
use crate::common::tui as common_tui;
#[allow(unused_imports)]
pub use common_tui::screen;

pub fn app() -> App {
    common_tui::app(header())
}

/// The header these tests draw (the snapshots keep it).
pub fn header() -> Header {
    let h = common_tui::header;
    h(
        "http://127.0.0.1:11434",
        "gemma2:27b",
        Conn::Probing,
        "0123456789ab",
        "/tmp/kakeai.db",
    )
}

pub fn key(c: KeyCode) -> KeyEvent {
    KeyEvent::new(c, KeyModifiers::NONE)
}

pub fn verdict_json(speaker: &str, text: &str) -> (kakeai::director::Status, serde_json::Value) {
    let rules = RuleSet::builtin().unwrap();
    let c = rules.character(speaker).unwrap();
    let v = director::judge(&rules, &FallbackAnalyzer, c, &Analysis::new(text), &[]);
    (v.status, serde_json::to_value(&v).unwrap())
}

/// A run of `turns` lines (the lines above, round and round); turn 2 has a failed first try.
pub fn add_run(s: &mut Store, topic: &str, turns: u32, minute: u32) -> i64 {
    let run = s
        .create_run(&NewRun {
            topic: topic.into(),
            model: Some("gemma2:27b".into()),
            options: json!({}),
            ..NewRun::default()
        })
        .unwrap();
    for turn in 1..=turns {
        let (speaker, text) = LINES[(turn as usize - 1) % LINES.len()];
        let tries: &[&str] = if turn == 2 {
            &["えっと、その、つまり、あの、ですね、ええと、はい。", text]
        } else {
            &[text]
        };
        let mut last = 0;
        for (i, t) in tries.iter().enumerate() {
            let id = s
                .start_attempt(&NewAttempt {
                    run_id: run,
                    turn,
                    speaker: speaker.into(),
                    attempt: i as u32 + 1,
                    text: String::new(),
                    tokens: 0,
                    guidance: None,
                    prompt_hash: None,
                    started_at: SystemTime::now(),
                    first_token_ms: Some(300),
                })
                .unwrap();
            let (status, v) = verdict_json(speaker, t);
            let mut out = AttemptOutcome::done(*t);
            out.status = Some(status);
            out.verdict = Some(v);
            s.finish_attempt(id, &out).unwrap();
            last = id;
        }
        let (status, _) = verdict_json(speaker, text);
        s.commit_turn(&TurnCommit {
            run_id: run,
            turn,
            speaker: speaker.into(),
            attempt_id: Some(last),
            text: text.into(),
            status,
            flags: TurnFlags::default(),
            hook: None,
            hook_depth: None,
        })
        .unwrap();
    }
    s.conn()
        .execute(
            "UPDATE runs SET started_at = ?1, status = 'completed' WHERE id = ?2",
            rusqlite::params![format!("2026-08-01T19:{minute:02}:00.000Z"), run],
        )
        .unwrap();
    run
}

pub fn act(s: &mut Store, run: i64, turn: u32, kind: ActionKind, p: serde_json::Value, who: &str) {
    s.add_action_by(
        &NewAction {
            run_id: run,
            turn: Some(turn),
            attempt_id: None,
            kind,
            payload: p,
        },
        Some(who),
    )
    .unwrap();
}

pub fn store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let s = Store::open(&dir.path().join("k.db")).unwrap();
    (dir, s)
}

pub fn opened(s: &Store, run: i64) -> App {
    let mut a = app();
    let o = reopen::open(s, run, None).unwrap();
    a.on_msg(UiMsg::RunOpened {
        ticket: a.tickets.open,
        run: Ok(Box::new(o)),
    });
    a
}
