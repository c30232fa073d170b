//! The writer's visibility pane: snapshots at two sizes over the bundled sample, and keys that
//! set levels (for everyone and for one sister), edit a secret and save visibility.yaml, which
//! the live run's shared vault then carries.

mod common;

use std::sync::Arc;
use std::time::Duration;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use kakeai::director::RuleSet;
use kakeai::duo::DuoConfig;
use kakeai::llm::LlmConfig;
use kakeai::store::{Store, StoreHandle};
use kakeai::text::analyzer::fallback::FallbackAnalyzer;
use kakeai::tui::app::{App, Conn, Modal};
use kakeai::tui::keymap::Action;
use kakeai::tui::vis::VisPane;
use kakeai::tui::{Runtime, Services};
use kakeai::vault::{self, SharedVault};
use ratatui_textarea::TextArea;

fn app() -> App {
    common::tui::app(common::tui::header(
        "http://127.0.0.1:11434",
        "gemma2:27b",
        Conn::Down("no endpoint".into()),
        "0123456789ab",
        "/tmp/kakeai.db",
    ))
}

fn screen(app: &App, w: u16, h: u16) -> String {
    common::tui::screen(app, w, h)
}

/// The workbench's services over a fresh store, with `shared` as the run's vault.
fn services(dir: &std::path::Path, shared: &Arc<SharedVault>) -> Services {
    Services {
        store: StoreHandle::spawn(Store::open(&dir.join("k.db")).unwrap()),
        rules: RuleSet::builtin().unwrap(),
        duo: DuoConfig::builtin().unwrap(),
        llm: LlmConfig::default(),
        analyzer: Arc::new(FallbackAnalyzer),
        replay_speed: 1000.0,
        vault: Some(shared.clone()),
        safety: kakeai::safety::SharedSafety::ready(kakeai::safety::SafetyRules::builtin()),
    }
}

fn key(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE)
}

/// A key pressed in the workbench (its commands are not run: these tests need none).
fn press(a: &mut App, c: char) {
    a.on_key(key(c));
}

fn to_pane(a: &mut App) {
    for _ in 0..3 {
        a.act(Action::NextPane);
    }
}

fn select(a: &mut App, key_name: &str) {
    let i = a
        .rooms
        .vis
        .as_ref()
        .unwrap()
        .items()
        .iter()
        .position(|i| i.key == key_name)
        .unwrap();
    a.rooms.vis.as_mut().unwrap().row = i;
}

#[test]
fn snapshot_visibility_pane_at_two_sizes() {
    let mut a = app();
    a.rooms.vis = Some(VisPane::new(vault::sample()));
    to_pane(&mut a);
    let s = screen(&a, 100, 30);
    assert!(
        s.contains("visibility") && s.contains("屋根裏") && s.contains("完全秘匿"),
        "{s}"
    );
    insta::assert_snapshot!("visibility_100x30", s);
    // One sister's view: the preview is her prompt, her overrides show as `reader`.
    press(&mut a, 'a');
    press(&mut a, 'a');
    let s = screen(&a, 140, 40);
    assert!(s.contains("for あゆ") && s.contains("あゆ is told"), "{s}");
    insta::assert_snapshot!("visibility_ayu_140x40", s);
}

#[test]
fn levels_set_per_sister_change_only_her_preview() {
    let mut a = app();
    a.rooms.vis = Some(VisPane::new(vault::sample()));
    to_pane(&mut a);
    select(&mut a, "world_settings/町/商店街");
    press(&mut a, 'a'); // やな
    press(&mut a, '0');
    let w = &a.rooms.vis.as_ref().unwrap().work;
    assert!(!w.context(Some("yana")).prompt.contains("アーケード"));
    assert!(w.context(Some("ayu")).prompt.contains("アーケード"));
    assert!(a.status.contains("unsaved"), "{}", a.status);
    // The pane's turn keys move the tree, not the conversation.
    let row = a.rooms.vis.as_ref().unwrap().row;
    a.act(Action::NextTurn);
    assert_eq!(a.rooms.vis.as_ref().unwrap().row, row + 1);
}

#[test]
fn a_secret_edit_is_validated_before_it_applies() {
    let mut a = app();
    a.rooms.vis = Some(VisPane::new(vault::sample()));
    to_pane(&mut a);
    select(&mut a, "characters/あゆ/SEC-AYU-01");
    press(&mut a, 'e');
    let Some(Modal::Secret { key: k, .. }) = &a.modal else {
        panic!("no editor")
    };
    assert_eq!(k, "characters/あゆ/SEC-AYU-01");
    let ctrl_s = KeyEvent::new(KeyCode::Char('s'), KeyModifiers::CONTROL);
    // Subtlety 12 is out of range: refused, the editor stays open.
    let edited = |subtlety: u8| {
        let y = format!(
            "id: SEC-AYU-01\ncontent: あゆは小学生のころ、迷い込んだ子猫を物置で一週間こっそり世話していた\nvisibility: 2\nforbidden_keywords: [物置]\nsubtlety: {subtlety}\n"
        );
        TextArea::from(y.lines().map(String::from).collect::<Vec<_>>())
    };
    a.modal = Some(Modal::Secret {
        key: k.clone(),
        text: edited(12),
    });
    a.on_key(ctrl_s);
    assert!(a.modal.is_some());
    // Refused is an error: it stays until Esc.
    assert!(
        a.errors.last().is_some_and(|e| e.contains("subtlety 12")),
        "{:?}",
        a.errors
    );
    a.modal = Some(Modal::Secret {
        key: "characters/あゆ/SEC-AYU-01".into(),
        text: edited(3),
    });
    a.on_key(ctrl_s);
    assert!(a.modal.is_none(), "{}", a.status);
    let w = &a.rooms.vis.as_ref().unwrap().work;
    let item = w
        .items(None)
        .into_iter()
        .find(|i| i.key == "characters/あゆ/SEC-AYU-01")
        .unwrap();
    assert_eq!((item.level.get(), item.subtlety), (2, 3));
    assert_eq!(
        w.context(None)
            .forbidden_keywords
            .iter()
            .filter(|k| *k == "物置")
            .count(),
        1
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn saving_writes_visibility_yaml_and_the_next_turn_sees_it() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("sisters");
    vault::save::materialize(&root).unwrap();
    let work = vault::load_vault(&root, None).unwrap();
    let shared = SharedVault::new(work.clone());
    let services = services(dir.path(), &shared);
    let mut a = app();
    a.rooms.vis = Some(VisPane::new(work));
    let (mut rt, mut rx) = Runtime::new(a, services);
    to_pane(&mut rt.app);
    select(&mut rt.app, "world_settings/家/屋根裏");
    let before = shared.generation();
    for k in ['3', 'w'] {
        for cmd in rt.app.on_key(key(k)) {
            rt.execute(cmd);
        }
    }
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !(rt.app.status.starts_with("saved ") || rt.app.status.contains("NOT saved")) {
        assert!(std::time::Instant::now() < deadline, "{}", rt.app.status);
        match rx.try_recv() {
            Ok(m) => rt.app.on_msg(m),
            Err(_) => std::thread::sleep(Duration::from_millis(5)),
        }
    }
    assert!(
        rt.app.status.contains("the next turn uses it"),
        "{}",
        rt.app.status
    );
    assert!(!rt.app.rooms.vis.as_ref().unwrap().unsaved);
    assert!(shared.generation() > before);
    let (_, published) = shared.get();
    assert!(published.context(Some("ayu")).prompt.contains("料理帳の箱"));
    let reloaded = vault::load_vault(&root, None).unwrap();
    assert!(reloaded.context(Some("yana")).prompt.contains("料理帳の箱"));
    assert!(root.join("_ai_control/visibility.yaml.bak").exists());
    // Nothing changed since: w says so and writes nothing.
    assert!(rt.app.on_key(key('w')).is_empty());
}

async fn wait_status(
    rt: &mut Runtime,
    rx: &mut tokio::sync::mpsc::UnboundedReceiver<kakeai::tui::app::UiMsg>,
    done: impl Fn(&str) -> bool,
) {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !done(&rt.app.status) {
        assert!(std::time::Instant::now() < deadline, "{}", rt.app.status);
        match rx.try_recv() {
            Ok(m) => rt.app.on_msg(m),
            Err(_) => tokio::time::sleep(Duration::from_millis(5)).await,
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tree_lists_the_vaults_works_and_w_opens_the_next_for_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let vault_root = dir.path().join("vault");
    vault::save::materialize(&vault_root.join("sisters")).unwrap();
    vault::save::materialize(&vault_root.join("外伝")).unwrap();
    let work = vault::load_vault(&vault_root, Some("sisters")).unwrap();
    let works = vault::sibling_works(&work);
    assert_eq!(works, ["sisters", "外伝"]);
    let shared = SharedVault::new(work.clone());
    let services = services(dir.path(), &shared);
    let mut a = app();
    a.rooms.vis = Some(VisPane::with_works(work, works));
    let (mut rt, mut rx) = Runtime::new(a, services);
    to_pane(&mut rt.app);
    let s = screen(&rt.app, 100, 30);
    assert!(s.contains("works ▾sisters ▸外伝"), "{s}");

    // Unsaved edits keep the work open.
    select(&mut rt.app, "world_settings/家/屋根裏");
    assert!(rt.app.on_key(key('3')).is_empty());
    assert!(rt.app.on_key(key('W')).is_empty());
    assert!(rt.app.status.contains("unsaved"), "{}", rt.app.status);

    // An edit made while the file is being written stays unsaved after the save lands.
    let save = rt.app.on_key(key('w'));
    assert_eq!(save.len(), 1);
    assert!(rt.app.on_key(key('2')).is_empty());
    for cmd in save {
        rt.execute(cmd);
    }
    wait_status(&mut rt, &mut rx, |s| s.starts_with("saved ")).await;
    assert!(rt.app.status.contains("not saved yet"), "{}", rt.app.status);
    assert!(rt.app.rooms.vis.as_ref().unwrap().unsaved);
    for cmd in rt.app.on_key(key('w')) {
        rt.execute(cmd);
    }
    wait_status(&mut rt, &mut rx, |s| s.contains("the next turn uses it")).await;
    assert!(!rt.app.rooms.vis.as_ref().unwrap().unsaved);

    // Now W opens 外伝, and the run's shared vault carries it from the next prompt.
    let before = shared.generation();
    for cmd in rt.app.on_key(key('W')) {
        rt.execute(cmd);
    }
    wait_status(&mut rt, &mut rx, |s| s.starts_with("opened ")).await;
    assert_eq!(rt.app.rooms.vis.as_ref().unwrap().work.name, "外伝");
    assert!(shared.generation() > before);
    assert_eq!(shared.get().1.name, "外伝");
    let s = screen(&rt.app, 100, 30);
    assert!(s.contains("works ▸sisters ▾外伝"), "{s}");
    // 外伝 was not edited: the attic is still hidden there.
    assert!(
        !shared
            .get()
            .1
            .context(Some("ayu"))
            .prompt
            .contains("料理帳の箱")
    );
}

/// Issue 27: the scorecard badge beside a secret is never cut on a narrow pane, and the header
/// names the leak checks every review will lack.
#[test]
fn the_scorecard_badge_is_whole_at_40_columns_and_the_header_names_missing_checks() {
    let mut a = app();
    let mut pane = VisPane::new(vault::sample());
    pane.scorecard = vec![kakeai::vault::scorecard::Row {
        secret: "SEC-AYU-01".into(),
        reader: "ayu".into(),
        level: 2,
        model: "gemma2:27b".into(),
        prompt_version: "p".into(),
        vault_version: "v".into(),
        current: true,
        reviewed: 40,
        without_semantic: 0,
        leaked: 3,
        warn: 1,
        retry: 2,
        info: 0,
    }];
    a.rooms.vis = Some(pane);
    a.leak_note = Some("no semantic check".into());
    to_pane(&mut a);
    select(&mut a, "characters/あゆ/SEC-AYU-01");
    // Every word of the badge appears whole, however narrow the pane (wrapped, never cut).
    for w in [40u16, 60, 80, 100, 140] {
        let s = screen(&a, w, 40);
        for word in ["あゆ", "L2", "leaked", "3/40", "gemma2:27b"] {
            let spaced: String = word
                .chars()
                .map(|c| c.to_string())
                .collect::<Vec<_>>()
                .join("");
            assert!(
                s.contains(&spaced) || s.replace(' ', "").contains(word),
                "`{word}` cut at {w} columns:\n{s}"
            );
        }
    }
    let s = screen(&a, 160, 30);
    assert!(s.contains("leak: no semantic check"), "{s}");
}
