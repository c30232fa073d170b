//! Terminal set-up and the event loop. Panics restore the terminal (ratatui's hook) and go to
//! the log file with everything else — nothing is printed over the screen.

use std::io::Write;
use std::time::{Duration, Instant};

use crossterm::event::{self, Event as TermEvent, KeyEventKind, MouseEventKind};
use tokio::sync::mpsc;

use crate::director::RuleSet;
use crate::duo::DuoConfig;
use crate::duo::backend::Replay;
use crate::llm::LlmConfig;
use crate::store::{Store, StoreHandle};
use crate::text::analyzer;
use crate::tui::app::{App, Command, Conn, Header};
use crate::tui::error::UiError;
use crate::tui::keymap::Keymap;
use crate::tui::{Options, Runtime, Services, render, theme, vis};

const FRAME: Duration = Duration::from_millis(33);

/// Appends a line to `<data_dir>/kakeai.log`.
pub fn log(line: &str) {
    let Some(dir) = crate::config::data_dir() else {
        return;
    };
    let _ = crate::config::create_private_dirs(&dir);
    let mut opts = std::fs::OpenOptions::new();
    opts.create(true).append(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut opts, 0o600);
    if let Ok(mut f) = opts.open(dir.join("kakeai.log")) {
        let _ = writeln!(f, "{} {line}", crate::store::time::now_iso());
    }
}

pub fn run(opts: Options) -> i32 {
    let mut problems: Vec<String> = Vec::new();
    let Configured {
        rules,
        duo,
        llm,
        keymap,
        vault,
        vault_error,
    } = configured(&opts, &mut problems);
    // Loaded after the first frame (`warm_up`); a load error reaches the status line then.
    let safety = crate::safety::SharedSafety::pending();
    let (themes, theme_errors) = theme::with_user(user_theme_files());
    problems.extend(theme_errors.iter().map(|e| e.to_string()));
    let (analyzer, db, store) = match opened(&opts) {
        Ok(o) => o,
        Err((e, code)) => {
            eprintln!("kakeai: {e}");
            return code;
        }
    };
    let header = Header {
        endpoint: llm.endpoint.clone(),
        model: llm.model.clone(),
        conn: Conn::Probing,
        analyzer: analyzer.kind().to_string(),
        ruleset: rules.version.clone(),
        db: db.display().to_string(),
    };
    let mut app = App::new(header, themes, keymap);
    app.reviewer = match opts.reviewer.as_deref().filter(|r| !r.trim().is_empty()) {
        Some(r) => match crate::annotate::reviewer_name(r) {
            Ok(r) => Some(r),
            Err(e) => {
                eprintln!("kakeai: {e}");
                return 2;
            }
        },
        None => None,
    };
    app.blind = opts.blind;
    app.queue = opts.queue.clone().filter(|q| !q.trim().is_empty());
    app.vault_error = vault_error;
    app.leak_note = vault
        .as_ref()
        .and_then(|v| crate::vault::semantic::missing_checks(v));
    app.rules = rules.clone();
    app.rooms.vis = vault.as_ref().map(|v| visibility_pane(v, &store));
    app.analyzer = analyzer.clone();
    pick_theme(&mut app, opts.theme.as_deref(), &mut problems);
    if let Some(p) = problems.first() {
        app.fail(format!("config: {p} (using defaults)"));
    }
    for p in &problems {
        log(&format!("config: {p}"));
    }
    let services = Services {
        store,
        rules,
        duo,
        llm,
        analyzer,
        vault,
        safety,
        replay_speed: if opts.replay_speed > 0.0 {
            opts.replay_speed
        } else {
            1.0
        },
    };
    drive(app, services, &opts)
}

/// The configuration files, each falling back to the built-in one with the problem noted.
struct Configured {
    rules: RuleSet,
    duo: DuoConfig,
    llm: LlmConfig,
    keymap: Keymap,
    vault: Option<std::sync::Arc<crate::vault::SharedVault>>,
    /// Why the vault did not load (then `vault` is None and no run may start).
    vault_error: Option<String>,
}

/// Loads rules, duo, model and keymap settings and the story vault; what cannot be read is
/// noted in `problems` and the built-in stands in (a broken vault: none at all).
fn configured(opts: &Options, problems: &mut Vec<String>) -> Configured {
    let mut note = |e: &dyn std::fmt::Display| problems.push(e.to_string());
    let rules = RuleSet::load(None).unwrap_or_else(|e| {
        note(&e);
        RuleSet::builtin().expect("embedded rules parse")
    });
    let duo = DuoConfig::load().unwrap_or_else(|e| {
        note(&e);
        DuoConfig::builtin().expect("embedded duo.toml parses")
    });
    let llm = LlmConfig::load()
        .unwrap_or_else(|e| {
            note(&e);
            LlmConfig::default()
        })
        .with_flags(opts.endpoint.clone(), opts.model.clone(), opts.api);
    let keymap = user_keymap().unwrap_or_else(|e| {
        note(&e);
        Keymap::builtin()
    });
    let (vault, vault_error) = match crate::vault::open(opts.vault.as_deref(), opts.work.as_deref())
    {
        Ok(w) => {
            for m in &w.warnings {
                log(&format!("vault: {m}"));
            }
            let v = crate::vault::SharedVault::new(w);
            v.set_embedder(crate::vault::semantic::Embedder::from_config(&llm));
            v.set_judge(crate::vault::judge::Judge::from_config(&llm));
            (Some(v), None)
        }
        Err(e) => {
            // A broken vault must not put another world into the prompts, and no run starts
            // without its leak review: the start is refused with this (`App::vault_error`).
            problems.push(format!(
                "vault: {e} — live runs, chat and interviews are refused until it loads"
            ));
            (None, Some(e.to_string()))
        }
    };
    Configured {
        rules,
        duo,
        llm,
        keymap,
        vault,
        vault_error,
    }
}

/// The analyzer, the store's path and the store (errors end the start with exit 2).
/// The error and the exit code: 3 when a PostgreSQL store cannot be reached or used (as every
/// command), else 2.
fn opened(opts: &Options) -> Result<Opened, (UiError, i32)> {
    let analyzer = analyzer::open(opts.analyzer, &mut |m| eprintln!("{m}"))
        .map_err(|e| (UiError::File(e.to_string()), 2))?;
    // A file (created when missing) or a PostgreSQL URL.
    let db = Store::target_or_default(opts.db.as_deref()).map_err(|e| (UiError::Store(e), 2))?;
    let store = Store::open_existing(Some(&db), true)
        .map(StoreHandle::spawn)
        .map_err(|(e, code)| (UiError::Store(e), code))?;
    Ok((analyzer, db, store))
}

/// What the workbench opens before its first frame: the analyzer, the store's path, the store.
type Opened = (
    std::sync::Arc<dyn crate::text::Analyzer>,
    std::path::PathBuf,
    StoreHandle,
);

/// The writer's visibility pane over the vault, with the secret-keeping scorecard beside each
/// ◆ (empty when the store cannot be read).
fn visibility_pane(v: &crate::vault::SharedVault, store: &StoreHandle) -> vis::VisPane {
    let work = (*v.get().1).clone();
    let works = crate::vault::sibling_works(&work);
    let mut pane = vis::VisPane::with_works(work, works);
    let w = pane.work.clone();
    pane.scorecard = store
        .call_blocking(move |s| Ok(crate::vault::scorecard::scorecard(s.db(), &w).ok()))
        .ok()
        .flatten()
        .unwrap_or_default();
    pane
}

/// The theme: NO_COLOR's, or the one named (an unknown name is a noted problem).
fn pick_theme(app: &mut App, name: Option<&str>, problems: &mut Vec<String>) {
    app.theme = theme::default_index(&app.themes, std::env::var("NO_COLOR").ok().as_deref());
    if let Some(name) = name {
        match app.themes.iter().position(|t| t.name == name) {
            Some(i) => app.theme = i,
            None => problems.push(format!("no theme named `{name}`")),
        }
    }
}

/// Runs the event loop on its own runtime (a replay loaded first) and shuts it down.
fn drive(app: App, services: Services, opts: &Options) -> i32 {
    let rt = match crate::duo::driver::runtime() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("kakeai: cannot start the async runtime: {e}");
            return 2;
        }
    };
    let replay = match &opts.replay {
        Some(what) => match load_replay(what, &services.store) {
            Ok(r) => Some(r),
            Err(e) => {
                eprintln!("kakeai: --replay {what}: {e}");
                return 2;
            }
        },
        None => None,
    };
    let claims = match (app.queue.clone(), app.reviewer.clone()) {
        (Some(q), Some(me)) => Some((services.store.clone(), q, me)),
        _ => None,
    };
    let code = rt.block_on(event_loop(
        app,
        services,
        opts.demo,
        replay,
        opts.exit_after_first_frame,
        opts.compare,
    ));
    // Quitting gives back what this reviewer still holds in the queue (others get it now, not
    // when the lease lapses).
    if let Some((store, queue, me)) = claims {
        let r = store.call_blocking(move |s| {
            crate::annotate::db::release_all(s, &queue, &me).map_err(crate::store::invalid)
        });
        if let Err(e) = r {
            eprintln!("kakeai: the item you held stays held until its lease lapses: {e}");
        }
    }
    if opts.exit_after_first_frame {
        // A start-up measurement: nothing is running yet that needs to finish.
        rt.shutdown_background();
    } else {
        // Reader threads may still block on the terminal; do not wait for them.
        rt.shutdown_timeout(Duration::from_millis(100));
    }
    code
}

/// Live marks (issue 24 §2): a thread polls the store's `data_version` every 300 ms on a
/// read-only connection of its own (PostgreSQL: LISTEN); a commit from any other connection —
/// another reviewer's workbench, `kakeai queue judge`, an import — sends `StoreChanged`, and the
/// open run's marks are read again. When the store cannot be reached the watcher says so (an
/// error that stays), keeps trying, and when it is back says how long it was away and reads
/// everything again.
fn watch_store(rt: &Runtime) {
    let path = std::path::PathBuf::from(&rt.app.header.db);
    let tx = rt.tx.clone();
    std::thread::spawn(move || {
        let mut w = loop {
            match crate::store::watch::Watch::open(&path) {
                Ok(w) => break w,
                Err(_) => std::thread::sleep(Duration::from_secs(2)),
            }
        };
        let mut away: Option<std::time::Instant> = None;
        loop {
            std::thread::sleep(Duration::from_millis(300));
            let msg = match (w.changed(), away) {
                (Ok(changed), Some(since)) => {
                    away = None;
                    let back = app::UiMsg::Notice(
                        crate::tui::app::status::Level::Info,
                        format!(
                            "live marks back after {:.0} s away; marks read again",
                            since.elapsed().as_secs_f64()
                        ),
                    );
                    if tx.send(back).is_err() {
                        return;
                    }
                    changed.then_some(app::UiMsg::StoreChanged)
                }
                (Ok(true), None) => Some(app::UiMsg::StoreChanged),
                (Ok(false), None) => None,
                (Err(e), None) => {
                    away = Some(std::time::Instant::now());
                    Some(app::UiMsg::Notice(
                        crate::tui::app::status::Level::Error,
                        format!(
                            "live marks paused: {e} (retrying; marks you save may fail until it is back)"
                        ),
                    ))
                }
                (Err(_), Some(_)) => None,
            };
            if let Some(m) = msg
                && tx.send(m).is_err()
            {
                return;
            }
        }
    });
}

/// After the first frame: loads the safety rules and compiles the Director's matchers on a
/// blocking thread, so neither delays the screen; a safety file that does not load is reported
/// like any config error (the defaults are used).
fn warm_up(rt: &Runtime) {
    let (safety, rules, tx) = (
        rt.services.safety.clone(),
        rt.app.rules.clone(),
        rt.tx.clone(),
    );
    tokio::task::spawn_blocking(move || {
        rules.warm();
        if let Some(e) = safety.load_error() {
            let _ = tx.send(app::UiMsg::Notice(
                crate::tui::app::status::Level::Error,
                format!("config: {e} (using defaults)"),
            ));
        }
    });
}

/// A stored run by id, or a recording file in the demo's format.
fn load_replay(what: &str, store: &StoreHandle) -> Result<Replay, crate::tui::error::UiError> {
    if let Ok(id) = what.parse::<i64>() {
        let rec = store
            .call_blocking(move |s| s.load_run(id))
            .map_err(crate::tui::error::UiError::from)?;
        return Ok(Replay::from_record(&rec));
    }
    let text = std::fs::read_to_string(what)
        .map_err(|e| crate::tui::error::UiError::File(format!("{what}: {e}")))?;
    Replay::parse(what, &text).map_err(crate::tui::error::UiError::Refused)
}

async fn event_loop(
    app: App,
    services: Services,
    demo: bool,
    replay: Option<Replay>,
    exit_after_first_frame: bool,
    compare: Option<i64>,
) -> i32 {
    let (mut rt, mut rx) = Runtime::new(app, services);
    begin(&mut rt, demo, replay, compare);
    install_panic_hook();
    let mut terminal = ratatui::init();
    let _ = crossterm::execute!(std::io::stdout(), crossterm::event::EnableMouseCapture);
    let mut keys = terminal_events();
    let mut last_frame = Instant::now() - FRAME;
    let mut last_count = Instant::now();
    let mut warmed = false;
    loop {
        if rt.app.dirty && last_frame.elapsed() >= FRAME {
            // Live counts of streaming text, debounced to ≤ 150 ms (seed 003 §5).
            if last_count.elapsed() >= Duration::from_millis(150) {
                rt.app.run.refresh_counts();
                last_count = Instant::now();
            }
            if let Err(e) = terminal.draw(|f| render::draw(f, &rt.app)) {
                log(&format!("draw failed: {e}"));
                break;
            }
            rt.app.dirty = false;
            last_frame = Instant::now();
            if exit_after_first_frame {
                break;
            }
            if !warmed {
                warmed = true;
                warm_up(&rt);
            }
        }
        let wait = FRAME.saturating_sub(last_frame.elapsed());
        // One timer, only while a status message is shown (it expires after a few seconds).
        let expiry = rt.app.status_deadline();
        tokio::select! {
            Some(ev) = keys.recv() => on_terminal_event(&mut rt, &mut terminal, ev),
            Some(msg) = rx.recv() => {
                if let app::UiMsg::Notice(crate::tui::app::status::Level::Error, e) = &msg {
                    log(e);
                }
                rt.app.on_msg(msg);
                for cmd in std::mem::take(&mut rt.app.queued) {
                    rt.execute(cmd);
                }
            }
            // Only wakes to draw a pending change; an idle screen sleeps.
            _ = tokio::time::sleep(wait), if rt.app.dirty => {}
            // A header counting seconds (a model loading) is drawn again every second.
            _ = tokio::time::sleep(Duration::from_secs(1)), if rt.app.counting() => {
                rt.app.dirty = true;
            }
            _ = tokio::time::sleep_until(expiry.unwrap_or_else(Instant::now).into()), if expiry.is_some() => {
                rt.app.expire_status(Instant::now());
            }
        }
        rt.app.settle_status(Instant::now());
        if rt.app.quit {
            break;
        }
    }
    let _ = crossterm::execute!(std::io::stdout(), crossterm::event::DisableMouseCapture);
    ratatui::restore();
    0
}

/// Opens what the start asked for: a replay, the demo, or the newest run (then the endpoint is
/// probed and other processes' marks are watched); and a comparison when one was named.
fn begin(rt: &mut Runtime, demo: bool, replay: Option<Replay>, compare: Option<i64>) {
    if let Some(r) = replay {
        rt.start_replay(r);
    } else if demo {
        rt.execute(Command::StartDemo);
    } else {
        rt.probe();
        rt.execute(Command::OpenLatest);
        watch_store(rt);
    }
    if let Some(id) = compare {
        rt.execute(Command::OpenCompare(
            crate::tui::compare_open::CompareAsk::Id(id),
        ));
    }
}

/// A panic goes to the log file; ratatui's hook (installed on top) restores the terminal
/// first, then this one leaves a single pointer to the log.
fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        log(&format!("panic: {info}"));
        let at = crate::config::data_dir().map(|d| d.join("kakeai.log"));
        eprintln!(
            "kakeai stopped on an internal error; details in {}",
            at.map(|p| p.display().to_string())
                .unwrap_or_else(|| "the log".into())
        );
    }));
}

/// The terminal's events, read on a thread of their own.
fn terminal_events() -> mpsc::UnboundedReceiver<TermEvent> {
    let (key_tx, keys) = mpsc::unbounded_channel();
    std::thread::spawn(move || {
        while let Ok(ev) = event::read() {
            if key_tx.send(ev).is_err() {
                break;
            }
        }
    });
    keys
}

/// The key a mouse wheel turn stands for.
fn wheel_key(kind: MouseEventKind) -> Option<crossterm::event::KeyEvent> {
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    let code = match kind {
        MouseEventKind::ScrollDown => KeyCode::Down,
        MouseEventKind::ScrollUp => KeyCode::Up,
        _ => return None,
    };
    Some(KeyEvent::new(code, KeyModifiers::NONE))
}

/// A key, a mouse wheel or a resize.
fn on_terminal_event(rt: &mut Runtime, terminal: &mut ratatui::DefaultTerminal, ev: TermEvent) {
    match ev {
        // ctrl-l redraws everything, over any dialog (the terminal is cleared, so
        // whatever another program or a terminal quirk left on it is gone).
        TermEvent::Key(k) if k.kind != KeyEventKind::Release && is_redraw(&k) => {
            let _ = terminal.clear();
            rt.app.dirty = true;
        }
        TermEvent::Key(k) if k.kind != KeyEventKind::Release => {
            for cmd in rt.app.on_key(k) {
                rt.execute(cmd);
            }
        }
        // The wheel is ↓/↑ to whatever has the keyboard (the help scrolls, the runs browser
        // moves, a dialog's text moves its cursor): it goes through the focus, never past it.
        TermEvent::Mouse(m) => {
            if let Some(k) = wheel_key(m.kind) {
                for cmd in rt.app.on_key(k) {
                    rt.execute(cmd);
                }
            }
        }
        TermEvent::Resize(..) => rt.app.dirty = true,
        _ => {}
    }
}

use crate::tui::app;

/// ctrl-l: redraw the whole screen.
fn is_redraw(k: &crossterm::event::KeyEvent) -> bool {
    k.code == crossterm::event::KeyCode::Char('l')
        && k.modifiers == crossterm::event::KeyModifiers::CONTROL
}

/// The user's theme files (`<config_dir>/themes/*.toml`), read here at the edge.
fn user_theme_files() -> Vec<(std::path::PathBuf, std::io::Result<String>)> {
    let dir = crate::config::config_dir().map(|d| d.join("themes"));
    dir.and_then(|d| std::fs::read_dir(d).ok())
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .map(|p| {
            let text = crate::limits::read_string(&p);
            (p, text)
        })
        .collect()
}

/// Defaults ⊕ `<config_dir>/keymap.toml`, the file read here at the edge.
fn user_keymap() -> Result<Keymap, crate::config::ConfigError> {
    let user = crate::config::config_dir().map(|d| d.join("keymap.toml"));
    let text = match user.as_deref().filter(|p| p.exists()) {
        Some(p) => Some(crate::limits::read_text(p, crate::limits::MAX_FILE_BYTES)?),
        None => None,
    };
    Keymap::from_text(user.as_deref().zip(text.as_deref()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crossterm::event::KeyCode;

    /// The wheel is ↓/↑ through the focus: over the help it scrolls the help (it used to move
    /// the conversation underneath).
    #[test]
    fn the_wheel_goes_to_what_has_the_keyboard() {
        assert_eq!(
            wheel_key(MouseEventKind::ScrollDown).map(|k| k.code),
            Some(KeyCode::Down)
        );
        assert_eq!(
            wheel_key(MouseEventKind::ScrollUp).map(|k| k.code),
            Some(KeyCode::Up)
        );
        assert!(wheel_key(MouseEventKind::Moved).is_none());
        let header = app::Header {
            endpoint: String::new(),
            model: String::new(),
            conn: app::Conn::Probing,
            analyzer: String::new(),
            ruleset: String::new(),
            db: String::new(),
        };
        let mut a = app::App::new(header, crate::tui::theme::load_all().0, Keymap::builtin());
        a.help = true;
        let before = (a.help_scroll, a.selected);
        a.on_key(wheel_key(MouseEventKind::ScrollDown).expect("a key"));
        assert_eq!(a.help_scroll, before.0 + 1, "the help did not scroll");
        assert_eq!(a.selected, before.1);
        assert!(a.help, "the wheel closed the help");
    }
}
