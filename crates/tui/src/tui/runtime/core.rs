//! The runtime: the app with the services it talks to (store, model, vault, safety), the one
//! place that carries out the app's commands — spawning the tasks that do I/O and answer with
//! `UiMsg`s (issue 23: only runtime/ does I/O).

use super::term;
use crate::tui::{app, tuning, view};
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tokio::sync::mpsc::{self, UnboundedReceiver, UnboundedSender};

use crate::director::RuleSet;
use crate::duo::backend::{Backend, Replay};
use crate::duo::driver::{Driver, Notice, run_record};
use crate::duo::{DuoConfig, Event, RunSpec, Session};
use crate::llm::{Client, LlmConfig};
use crate::store::{NewAction, StoreHandle};
use crate::text::Analyzer;
use crate::tui::error::UiError;
use app::{App, Command, Conn, UiMsg};

/// Everything the runtime needs besides the app state.
pub struct Services {
    pub store: StoreHandle,
    pub rules: RuleSet,
    pub duo: DuoConfig,
    pub llm: LlmConfig,
    pub analyzer: Arc<dyn Analyzer>,
    /// The story vault (None when it failed to load: runs use the scene text alone).
    pub vault: Option<Arc<crate::vault::SharedVault>>,
    /// Safety layers for chat mode (embedded data ⊕ the user's safety/*.toml), loaded after
    /// the first frame.
    pub safety: crate::safety::SharedSafety,
    pub replay_speed: f64,
}

pub struct Runtime {
    pub app: App,
    /// Chat exchanges of this session share one conversation id (pattern outcomes use it).
    pub chat_conversation: String,
    pub services: Services,
    pub tx: UnboundedSender<UiMsg>,
    pub(super) ctl: Option<UnboundedSender<Event>>,
    /// The replay in progress: set to finish it at once.
    pub(super) replay_to_end: Option<Arc<std::sync::atomic::AtomicBool>>,
    /// Answers for the running interview (interview mode).
    pub(super) interview_tx: Option<UnboundedSender<String>>,
}

impl Runtime {
    pub fn new(app: App, services: Services) -> (Runtime, UnboundedReceiver<UiMsg>) {
        let (tx, rx) = mpsc::unbounded_channel();
        (
            Runtime {
                app,
                chat_conversation: format!("chat-{}", crate::patterns::stamp::now_ms()),
                services,
                tx,
                ctl: None,
                replay_to_end: None,
                interview_tx: None,
            },
            rx,
        )
    }

    /// Probes the endpoint in the background with `kakeai doctor --quick`'s checks (no
    /// generation); a cold model shows as loading while its preload waits. The UI task never
    /// waits for it.
    pub fn probe(&self) {
        let (tx, cfg) = (self.tx.clone(), self.services.llm.clone());
        tokio::spawn(async move {
            let client = match Client::new(cfg) {
                Ok(c) => c,
                Err(e) => {
                    let _ = tx.send(UiMsg::Connection(Conn::Down(e.to_string())));
                    return;
                }
            };
            let loading_tx = tx.clone();
            let mut on_step = move |step: &str| {
                if step == "load" {
                    let since = std::time::Instant::now();
                    let _ = loading_tx.send(UiMsg::Connection(Conn::Loading { since }));
                }
            };
            let report =
                crate::doctor::run(&client, crate::doctor::Depth::Quick, None, &mut on_step).await;
            let _ = tx.send(UiMsg::Connection(conn_of(&report)));
        });
    }
    /// Writes visibility.yaml off the UI task; a live run picks the saved work up before its
    /// next prompt.
    fn save_vault(&mut self, mut work: crate::vault::Work, edits: u64) {
        let (shared, tx) = (self.services.vault.clone(), self.tx.clone());
        tokio::task::spawn_blocking(move || {
            let result = match work.save_kept(crate::vault::sample_save_dir().as_deref()) {
                Ok((path, kept)) => {
                    // A layout the line editor does not follow is written whole: say so.
                    let path = if kept {
                        path.display().to_string()
                    } else {
                        format!("{} (written whole: comments not kept)", path.display())
                    };
                    if let Some(s) = &shared {
                        s.replace(work.clone());
                    }
                    // Listing the vault is I/O: done here, not on the UI task.
                    let works = crate::vault::sibling_works(&work);
                    Ok(Box::new(app::VaultSaved {
                        path,
                        work,
                        edits,
                        works,
                    }))
                }
                Err(e) => Err(UiError::File(e.to_string())),
            };
            let _ = tx.send(UiMsg::VaultSaved(result));
        });
    }

    /// Loads another work of the vault off the UI task and publishes it to runs; a work that
    /// does not load (bad YAML, a bad level) is reported and the open one stays.
    fn open_work(&mut self, root: std::path::PathBuf, name: String) {
        let (shared, tx) = (self.services.vault.clone(), self.tx.clone());
        tokio::task::spawn_blocking(move || {
            let result = crate::vault::load_vault(&root, Some(&name))
                .map(|work| {
                    for w in &work.warnings {
                        term::log(&format!("vault: {w}"));
                    }
                    if let Some(s) = &shared {
                        s.replace(work.clone());
                    }
                    Box::new(work)
                })
                .map_err(|e| UiError::File(e.to_string()));
            let _ = tx.send(UiMsg::VaultOpened(result));
        });
    }

    /// The tuned rules into the user's rules file (a small file: written here, at once).
    fn save_rules(&mut self, rules: &RuleSet) {
        let (level, said) = match crate::director::ruleset::user_rules_path() {
            Some(p) => match save_rules_file(rules, &p) {
                Ok(()) => (
                    app::status::Level::Info,
                    format!("saved to {}", p.display()),
                ),
                Err(e) => (app::status::Level::Error, format!("rules NOT saved: {e}")),
            },
            None => (
                app::status::Level::Error,
                "rules NOT saved: no config directory to save into".into(),
            ),
        };
        self.app.notify(level, said);
    }

    /// The tune section's learning, on the store's thread.
    fn tune(&self) {
        use crate::tui::panes::RoomMsg;
        let tx = self.tx.clone();
        // The store's thread reads the labels; the judging and search run on a blocking
        // thread of their own, so other reads and writes are not held up.
        let call = self
            .services
            .store
            .call(|s| Ok(crate::tui::tune_room::read(s)));
        tokio::spawn(async move {
            let outcome = match call.await {
                Ok(Ok(loaded)) => {
                    tokio::task::spawn_blocking(move || crate::tui::tune_room::learn(loaded))
                        .await
                        .unwrap_or_else(|e| Err(UiError::Refused(e.to_string())))
                }
                Ok(Err(e)) => Err(e),
                Err(e) => Err(e.into()),
            };
            let _ = tx.send(UiMsg::Room(RoomMsg::Tune(outcome)));
        });
    }

    /// Writes the accepted proposals' overlay beside the user's rules file, then adopts them
    /// (the open run is judged again). Nothing is adopted when the file cannot be written.
    fn accept_tune(&mut self, overlay: &str, rules: RuleSet) {
        let Some(path) = crate::director::ruleset::tune_overlay_path() else {
            self.app.notify(
                app::status::Level::Error,
                "NOT accepted: no config directory to write rules.tune.toml into",
            );
            return;
        };
        match write_atomic(&path, overlay) {
            Ok(()) => {
                self.app.adopt_rules(rules, None);
                self.app.notify(
                    app::status::Level::Info,
                    format!(
                        "accepted ✓ written to {} (loaded after your rules.toml; delete it to undo)",
                        path.display()
                    ),
                );
            }
            Err(e) => self
                .app
                .notify(app::status::Level::Error, format!("NOT accepted: {e}")),
        }
    }

    /// A live run, chat message or interview never starts without the vault's leak review:
    /// when the vault did not load, the start is refused with why and the fix (true).
    fn refused_without_vault(&mut self) -> bool {
        if self.services.vault.is_some() {
            return false;
        }
        let Some(e) = self.app.vault_error.clone() else {
            return false;
        };
        self.app.fail(format!(
            "not started: no story vault, so no leak review ({e}). Restart with --work NAME (or --vault DIR), or fix the file"
        ));
        true
    }

    pub fn execute(&mut self, cmd: Command) {
        match cmd {
            Command::Probe => self.probe(),
            Command::StartDemo => match Replay::demo() {
                Ok(r) => self.start_demo(r),
                Err(e) => self.app.fail(e),
            },
            Command::StartLive(_) | Command::ChatSend { .. } | Command::InterviewStart(_)
                if self.refused_without_vault() => {}
            Command::StartLive(topic) => match Client::new(self.services.llm.clone()) {
                Ok(c) => {
                    let turns = self.services.duo.max_turns;
                    let vault = self.services.vault.clone();
                    if let Some(v) = &vault {
                        crate::vault::semantic::judge_with(v, &c);
                    }
                    self.start(Backend::Live(c), topic, turns, "live", true, vault);
                }
                Err(e) => self.app.fail(e.to_string()),
            },
            Command::SaveVault { work, edits } => self.save_vault(*work, edits),
            Command::SaveRules(rules) => self.save_rules(&rules),
            Command::Tune => self.tune(),
            Command::AcceptTune { overlay, rules } => self.accept_tune(&overlay, *rules),
            Command::OpenWork { root, name } => self.open_work(root, name),
            Command::ChatSend {
                text,
                character,
                history,
                to,
            } => self.chat_send(text, character, history, to),
            Command::PatternFeedback { usage_id, up } => self.pattern_feedback(usage_id, up),
            Command::InterviewStart(name) => self.interview_start(name),
            Command::InterviewAnswer(text) => self.interview_answer(text),
            Command::InterviewLeave => self.interview_tx = None,
            Command::InsightsOpen => self.insights_open(),
            Command::ChatThumb { id, up } => self.chat_thumb(id, up),
            Command::LoadRoom(pane) => self.load_room(pane),
            Command::LoadDropouts
            | Command::DraftCounterfactuals { .. }
            | Command::AcceptCounterfactual { .. }
            | Command::Promote(_) => self.patterns_command(cmd),
            Command::LineThumb { .. } | Command::LineOverride { .. } => {
                self.conversations_command(cmd)
            }
            Command::ReplayToEnd => match &self.replay_to_end {
                Some(f) if self.app.running() => {
                    f.store(true, std::sync::atomic::Ordering::Relaxed);
                    self.app.status = "replaying to the end …".into();
                }
                _ => self.app.status = "no replay in progress".into(),
            },
            Command::OpenCompare(ask) => self.open_compare(ask),
            Command::BrowseRuns { .. }
            | Command::OpenRun { .. }
            | Command::OpenLatest
            | Command::RefreshMarks { .. }
            | Command::QueueNext
            | Command::SearchAll(_) => self.runs_command(cmd),
            Command::LoadRequest(key) => self.load_request(key),
            Command::Control(ev) => self.control(ev),
            Command::Save {
                turn,
                kind,
                payload,
                ticket,
            } => self.save_action(turn, kind, payload, ticket),
        }
    }

    /// 👍/👎 on a chat reply, stored in the background.
    fn chat_thumb(&mut self, id: i64, up: bool) {
        let (store, tx) = (self.services.store.clone(), self.tx.clone());
        tokio::spawn(async move {
            let r = store.call(move |s| s.set_chat_thumb(id, up)).await;
            let _ = tx.send(UiMsg::outcome(match r {
                Ok(()) => Ok(format!("{} saved ✓", if up { "👍" } else { "👎" })),
                Err(e) => Err(UiError::Store(format!("👍/👎 NOT saved: {e}"))),
            }));
        });
    }

    /// An event for the running session (pause, inject, regenerate …), or why there is none.
    fn control(&mut self, ev: crate::duo::Event) {
        match &self.ctl {
            Some(ctl) => {
                let _ = ctl.send(ev);
            }
            None => {
                self.app.status = format!(
                    "no run to control — start one with {}, or {} for the demo",
                    self.app.key_name(crate::tui::keymap::Action::NewRun),
                    self.app.key_name(crate::tui::keymap::Action::Demo)
                )
            }
        }
    }

    /// A reviewer's action, queued to the store now (so actions keep their order) and its
    /// commit awaited in the background; without a run it is refused on the turn's mark.
    fn save_action(
        &mut self,
        turn: Option<usize>,
        kind: crate::store::ActionKind,
        payload: serde_json::Value,
        ticket: Option<view::SaveTicket>,
    ) {
        let Some(run_id) = self.app.run.run_id else {
            // Not written: the turn's mark must say so, not wait forever.
            let reason = format!(
                "nothing to save yet — start a run ({}) or play the demo ({})",
                self.app.key_name(crate::tui::keymap::Action::NewRun),
                self.app.key_name(crate::tui::keymap::Action::Demo)
            );
            self.app.on_msg(UiMsg::Saved {
                turn,
                ticket,
                result: Err(UiError::Missing(reason.clone())),
            });
            self.app.status = reason;
            return;
        };
        let action = NewAction {
            run_id,
            turn: turn.map(|t| t as u32),
            attempt_id: None,
            kind,
            payload,
        };
        // Queued now, so actions reach the database in the order they were taken;
        // only the wait for the commit runs in the background.
        let reviewer = self.app.reviewer.clone();
        let queued = self
            .services
            .store
            .call(move |s| s.add_action_by(&action, reviewer.as_deref()));
        let tx = self.tx.clone();
        tokio::spawn(async move {
            let result = queued.await.map(drop).map_err(UiError::from);
            let _ = tx.send(UiMsg::Saved {
                turn,
                ticket,
                result,
            });
        });
    }

    /// Replays a recording (the demo, a stored run or a file) through the live pipeline.
    /// The bundled demo was recorded in the bundled sample world, so it always replays with
    /// the sample vault (its leak RETRY depends on it), whatever vault the writer uses.
    pub fn start_demo(&mut self, r: Replay) {
        let vault = Some(crate::vault::SharedVault::new(crate::vault::sample()));
        self.replay_with(r, vault);
    }

    /// A stored run or a recording, replayed in the writer's vault.
    pub fn start_replay(&mut self, r: Replay) {
        let vault = self.services.vault.clone();
        self.replay_with(r, vault);
    }

    fn replay_with(&mut self, mut r: Replay, vault: Option<Arc<crate::vault::SharedVault>>) {
        let s = self.services.replay_speed.max(0.01);
        r.first_token = r.first_token.div_f64(s);
        r.per_token = r.per_token.div_f64(s);
        let (topic, turns, judge) = (r.topic.clone(), r.max_turn(), r.has_judge());
        if turns == 0 {
            self.app.status = "the recording has no turns".into();
            return;
        }
        self.app.header.conn = Conn::Demo;
        self.replay_to_end = Some(r.to_end.clone());
        // A stored run replays in its own speaker order (it may start with either sister).
        let first = r.first_speaker.clone();
        let configured = self.services.duo.first_speaker.clone();
        if let Some(f) = first {
            self.services.duo.first_speaker = f;
        }
        let b = Backend::Replay(Arc::new(r));
        self.start(b, topic, turns, "replay", judge, vault);
        self.services.duo.first_speaker = configured;
    }

    fn start(
        &mut self,
        backend: Backend,
        topic: String,
        turns: usize,
        mode: &str,
        judge: bool,
        vault: Option<Arc<crate::vault::SharedVault>>,
    ) {
        self.app.replay = mode == "replay";
        // Rules tuned in the rules pane apply to the runs that start after the edit.
        self.services.rules = self.app.rules.clone();
        let s = &self.services;
        let spec = RunSpec {
            topic: topic.clone(),
            max_turns: turns,
            max_attempts: s.duo.max_attempts,
            exhaustion: s.duo.exhaustion,
            judge,
        };
        let session = Session::new(spec.clone(), s.duo.clone(), s.rules.clone());
        let (source, llm) = match &backend {
            Backend::Live(c) => (
                (
                    c.config().endpoint.clone(),
                    c.config().model.clone(),
                    mode.to_string(),
                ),
                Some(c.config()),
            ),
            Backend::Replay(_) => (
                (
                    "assets/demo/run.jsonl".into(),
                    "demo-replay".into(),
                    mode.to_string(),
                ),
                None,
            ),
        };
        let new = run_record(&spec, &session, source, llm, json!({"mode": mode}));
        let (ctl_tx, ctl_rx) = mpsc::unbounded_channel();
        self.ctl = Some(ctl_tx);
        let (store, analyzer, tx) = (s.store.clone(), s.analyzer.clone(), self.tx.clone());
        tokio::spawn(async move {
            let run_id = match store.call(move |st| st.create_run(&new)).await {
                Ok(id) => id,
                Err(e) => {
                    let _ = tx.send(UiMsg::Notice(
                        app::status::Level::Error,
                        format!("could not create the run: {e}"),
                    ));
                    return;
                }
            };
            let _ = tx.send(UiMsg::RunStarted { run_id, topic });
            let driver = Driver {
                backend,
                store,
                analyzer,
                run_id,
                save_every: Duration::from_millis(500),
                vault,
            };
            // A model load or a restarting server shows with its elapsed time, every second.
            let waiting = match &driver.backend {
                Backend::Live(c) => Some(tokio::spawn(waiting_notices(c.clone(), tx.clone()))),
                Backend::Replay(_) => None,
            };
            let mut sink = notices_to_app(tx.clone());
            driver.drive(session, Some(ctl_rx), &mut sink).await;
            if let Some(w) = waiting {
                w.abort();
            }
        });
    }
}

/// What a live run's client waits on (a load, a server coming back), as a status notice
/// once a second with its elapsed time while it lasts.
async fn waiting_notices(client: Client, tx: mpsc::UnboundedSender<UiMsg>) {
    loop {
        tokio::time::sleep(Duration::from_secs(1)).await;
        if let Some(line) = client.waiting_line() {
            let _ = tx.send(UiMsg::Notice(app::status::Level::Warn, line));
        }
    }
}

/// The driver's notices as messages to the app (tokens, effects, store errors).
fn notices_to_app(tx: mpsc::UnboundedSender<UiMsg>) -> impl FnMut(Notice<'_>) {
    move |n: Notice<'_>| {
        let msg = match n {
            Notice::Token {
                turn,
                attempt,
                delta,
            } => UiMsg::Token {
                turn,
                attempt,
                delta: delta.to_string(),
                at: std::time::Instant::now(),
            },
            Notice::Effect(e) => UiMsg::Effect(Box::new(e.clone())),
            Notice::StoreError(e) => {
                UiMsg::Notice(app::status::Level::Error, format!("store: {e}"))
            }
            Notice::Fitted { turn, attempt, fit } => UiMsg::Notice(
                app::status::Level::Warn,
                format!("turn {turn} #{attempt}: {}", fit.summary()),
            ),
            Notice::Warning(w) => UiMsg::Notice(app::status::Level::Error, w),
        };
        let _ = tx.send(msg);
    }
}

/// The header's state for a doctor report: up when a run would work, the server's models when
/// only the model is missing, else the first failing check and its fix.
fn conn_of(report: &crate::doctor::Report) -> Conn {
    match report.first_failure() {
        None => Conn::Up {
            api: report.api.map(|a| a.to_string()).unwrap_or_default(),
        },
        Some(c) => {
            let why = match &c.fix {
                Some(f) => format!("{} — {f}", c.detail),
                None => c.detail.clone(),
            };
            if report.model_missing() {
                Conn::Answered(why)
            } else {
                Conn::Down(why)
            }
        }
    }
}

/// `text` into `path` through a temporary file renamed over it.
fn write_atomic(path: &std::path::Path, text: &str) -> Result<(), UiError> {
    let file = |what: &std::path::Path, e: &dyn std::fmt::Display| {
        UiError::File(format!("{}: {e}", what.display()))
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| file(dir, &e))?;
    }
    let tmp = path.with_extension("toml.tmp");
    std::fs::write(&tmp, text).map_err(|e| file(&tmp, &e))?;
    std::fs::rename(&tmp, path).map_err(|e| file(path, &e))
}

/// Writes the tuned rules into the user's rules file (`tuning::merged` keeps what else it
/// holds): read, merged, written to a temporary file and renamed over it.
pub(crate) fn save_rules_file(rules: &RuleSet, path: &std::path::Path) -> Result<(), UiError> {
    let file = |what: &std::path::Path, e: &dyn std::fmt::Display| {
        UiError::File(format!("{}: {e}", what.display()))
    };
    let existing = match crate::limits::read_string(path) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(file(path, &e)),
    };
    let text = tuning::merged(rules, path, existing.as_deref())?;
    write_atomic(path, &text)
}
