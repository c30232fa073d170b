//! The workbench as the TUI tests build it: an `App` with a header naming its endpoint,
//! model and connection (the header is drawn, so snapshots keep each test's own), and the
//! screen it draws at a size, as text.

use kakeai::tui::app::{App, Conn, Header};
use kakeai::tui::keymap::Keymap;
use kakeai::tui::{render, theme};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

/// A header for tests; `ruleset` and `db` as the tests have always drawn them.
pub fn header(endpoint: &str, model: &str, conn: Conn, ruleset: &str, db: &str) -> Header {
    Header {
        endpoint: endpoint.into(),
        model: model.into(),
        conn,
        analyzer: "fallback".into(),
        ruleset: ruleset.into(),
        db: db.into(),
    }
}

/// The workbench with the built-in themes and keymap.
pub fn app(header: Header) -> App {
    app_with(header, Keymap::builtin())
}

/// The workbench with the built-in themes and `keymap`.
pub fn app_with(header: Header, keymap: Keymap) -> App {
    App::new(header, theme::load_all().0, keymap)
}

/// What `app` draws at `w`×`h`, as ratatui's test backend prints it (one quoted row a line).
pub fn screen(app: &App, w: u16, h: u16) -> String {
    let mut t = Terminal::new(TestBackend::new(w, h)).expect("test terminal");
    t.draw(|f| render::draw(f, app)).expect("draws");
    t.backend().to_string()
}

/// The workbench's services over the store at `db` (created when missing), the built-in rules
/// and safety data, the fallback analyzer, `llm` and `vault`.
pub fn services(
    db: &std::path::Path,
    llm: kakeai::llm::LlmConfig,
    vault: Option<std::sync::Arc<kakeai::vault::SharedVault>>,
) -> kakeai::tui::Services {
    kakeai::tui::Services {
        store: kakeai::store::StoreHandle::spawn(kakeai::store::Store::open(db).expect("store")),
        rules: kakeai::director::RuleSet::builtin().expect("rules"),
        duo: kakeai::duo::DuoConfig::builtin().expect("duo"),
        llm,
        analyzer: std::sync::Arc::new(kakeai::text::analyzer::fallback::FallbackAnalyzer),
        replay_speed: 1000.0,
        vault,
        safety: kakeai::safety::SharedSafety::ready(kakeai::safety::SafetyRules::builtin()),
    }
}
