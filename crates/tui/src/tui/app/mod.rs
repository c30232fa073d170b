//! The workbench's state and its reactions to keys and service messages. No I/O here: keys
//! become `Command`s the runtime carries out (start a run, steer it, save a reviewer action).

/// The read-only context the rooms read, built from the app's fields (so a room can be
/// borrowed mutably beside it).
macro_rules! ctx {
    ($app:expr) => {
        crate::tui::ctx::Ctx {
            run: &$app.run,
            selected: $app.selected,
            attempt: $app.attempt,
            rules: &$app.rules,
            blind: crate::tui::blind::Blind {
                on: $app.blind,
                log: &$app.review_log,
                me: $app.reviewer.as_deref(),
            },
            right_scroll: $app.right_scroll,
            right_max: &$app.right_max,
            chat: $app.chat.as_ref(),
        }
    };
}

mod asks;
pub(crate) mod commands;
pub(crate) mod modal;
mod multiline;
pub(crate) mod overlay;
pub mod render;
mod review;
pub(crate) mod status;

use crossterm::event::KeyEvent;
use serde_json::json;

use std::sync::Arc;

use super::keymap::{Action, Keymap};
use super::theme::Theme;
use super::view::{RunState, RunView};
use crate::director::RuleSet;
use crate::director::Status;
use crate::duo::{Effect, Event};
use crate::store::ActionKind;
use crate::text::analyzer::fallback::FallbackAnalyzer;
use crate::text::{AnalysisCache, Analyzer};
use crate::tui::error::UiError;

/// Feedback categories (duo-talk's issue_type set).
pub const CATEGORIES: [&str; 5] = [
    "tone_drift",
    "knowledge_overstep",
    "slow_progress",
    "character_break",
    "other",
];

#[derive(Debug, Clone, PartialEq)]
pub enum Conn {
    Probing,
    Up {
        api: String,
    },
    /// Nothing usable answered: refused, or accepted and silent past the probe limit.
    Down(String),
    /// The server answered but does not serve the model; the message lists what it has.
    Answered(String),
    /// The model is loading (a cold Ollama model): the header counts the seconds.
    Loading {
        since: std::time::Instant,
    },
    Demo,
}

#[derive(Debug, Clone)]
pub struct Header {
    pub endpoint: String,
    pub model: String,
    pub conn: Conn,
    pub analyzer: String,
    pub ruleset: String,
    pub db: String,
}

pub use crate::tui::chat::ChatMsg;
pub use crate::tui::command::{Command, DraftSet, Modal, Promotion, textarea};

/// visibility.yaml as written, read back off the UI task.
#[derive(Debug, Clone)]
pub struct VaultSaved {
    pub path: String,
    pub work: crate::vault::Work,
    /// The pane's edit count when the saved copy was taken.
    pub edits: u64,
    /// The works beside it in its vault (the sample may just have been written out to one).
    pub works: Vec<String>,
}

/// Messages from the services.
#[derive(Debug, Clone)]
pub enum UiMsg {
    Token {
        turn: usize,
        attempt: usize,
        delta: String,
        /// When the piece arrived (the runtime's clock: the view keeps none of its own).
        at: std::time::Instant,
    },
    Effect(Box<Effect>),
    RunStarted {
        run_id: i64,
        topic: String,
    },
    Connection(Conn),
    Saved {
        turn: Option<usize>,
        ticket: Option<super::view::SaveTicket>,
        result: Result<(), UiError>,
    },
    /// A notice from a background task, with its level (never guessed from its words).
    Notice(status::Level, String),
    /// visibility.yaml written (the path and the work as saved), or why not.
    VaultSaved(Result<Box<VaultSaved>, UiError>),
    VaultOpened(Result<Box<crate::vault::Work>, UiError>),
    /// Chat mode's progress, for the chat and exchange it belongs to.
    Chat(crate::tui::chat::ChatTarget, ChatMsg),
    Interview(super::interview_view::InterviewMsg),
    /// A room's loader answered (panes.rs).
    Room(super::panes::RoomMsg),
    /// A page of the runs browser, for the filter it was asked with (a page for an older
    /// filter is dropped: the newest request wins).
    Runs {
        filter: String,
        offset: usize,
        page: Result<crate::store::browse::BrowsePage, UiError>,
    },
    /// A stored run read for opening, with the ticket of the request (only the newest request's
    /// answer opens: a slow older read never replaces the run asked for after it).
    RunOpened {
        ticket: u64,
        run: Result<Box<super::queue::Opened>, UiError>,
    },
    /// Another connection committed to the store (another reviewer, a CLI, an import).
    StoreChanged,
    /// The open run read again after [`UiMsg::StoreChanged`].
    MarksRefreshed(Result<Box<super::queue::Opened>, UiError>),
    /// Hits of `/` over every run, for the needle searched (an older needle's are dropped).
    Found {
        needle: String,
        hits: Result<Vec<crate::store::browse::TextHit>, UiError>,
    },
    /// A comparison for the compare view, with the ticket of its request (the newest wins).
    Compare {
        ticket: u64,
        view: Box<Result<super::compare_view::CompareView, UiError>>,
    },
    /// The stored request of an attempt (None: not kept), for the detail pane.
    Request(
        super::request_view::Key,
        Result<Option<serde_json::Value>, UiError>,
    ),
}

/// Tickets of the requests whose answers replace what is on screen: each new request takes the
/// next number, and an answer carrying an older number is dropped (the newest request wins).
#[derive(Debug, Default, Clone, Copy)]
pub struct Tickets {
    /// Opening a stored run (the browser, a search hit, the queue, the newest run).
    pub open: u64,
    /// Loading a comparison for the compare view.
    pub compare: u64,
}

impl Tickets {
    /// The ticket of a new request to open a run.
    pub fn next_open(&mut self) -> u64 {
        self.open += 1;
        self.open
    }

    /// The ticket of a new request for a comparison.
    pub fn next_compare(&mut self) -> u64 {
        self.compare += 1;
        self.compare
    }
}

/// What the right-hand pane shows (listed once, in focus.rs).
pub use crate::tui::focus::Pane;
use crate::tui::focus::{Dialog, Focus};

pub struct App {
    pub header: Header,
    pub pane: Pane,
    /// Every pane's own state (panes.rs).
    pub rooms: super::panes::Rooms,
    /// The ruleset being tuned (new runs use it too).
    pub rules: RuleSet,
    pub analyzer: Arc<dyn Analyzer>,
    pub cache: AnalysisCache,
    pub run: RunView,
    pub themes: Vec<Theme>,
    pub theme: usize,
    pub keymap: Keymap,
    /// Index into `run.turns`.
    pub selected: usize,
    /// Follow the stream: the newest turn stays selected.
    pub follow: bool,
    /// Attempt shown in the detail pane (index into the turn's attempts); None = the committed.
    pub attempt: Option<usize>,
    pub modal: Option<Modal>,
    /// Chat mode (None: the duo conversation is shown).
    pub chat: Option<super::chat::ChatView>,
    /// Interview mode (`/interview NAME` in chat), over the chat while it runs.
    pub interview: Option<super::interview_view::InterviewView>,
    /// The insights view (`/insights` in chat).
    pub insights: Option<super::insights_view::InsightsView>,
    pub help: bool,
    /// The run on screen is a replay (the demo, a stored run or a recording), not a live run.
    pub replay: bool,
    /// First row of the help screen shown (it scrolls).
    pub help_scroll: usize,
    /// The help screen as last drawn: its rows (descriptions wrapped) and how many show at
    /// once, so PgUp/PgDn move a page and End stops at the last full page.
    pub help_view: std::cell::Cell<(usize, usize)>,
    /// The runs browser, while open.
    pub runs: Option<super::runs::RunsBrowser>,
    /// The compare view, while open (drawn over the body).
    pub compare: Option<super::compare_view::CompareView>,
    pub search: super::queue::Search,
    /// The open run's review actions (for undo), oldest first.
    pub review_log: Vec<super::queue::LogEntry>,
    /// Stored on every reviewer action; shown in the header.
    pub reviewer: Option<String>,
    /// Blind mode: the Director's verdict on a turn stays hidden until the reviewer judged it.
    pub blind: bool,
    /// The shared review queue `m` claims from (issue 24 §2); None: `m` is the next
    /// unreviewed turn of the open run.
    pub queue: Option<String>,
    /// The leak review's missing checks for the header (`leak: no semantic check`), if any.
    pub leak_note: Option<String>,
    /// Why the story vault did not load, when it did not: no live run, chat or interview
    /// starts without its leak review (the start is refused with this and the fix).
    pub vault_error: Option<String>,
    /// Lines a regeneration set aside, and which of them is on screen (None: the main line).
    pub branches: super::branch::Branches,
    /// A destructive key waiting for its confirmation.
    pub confirm: Option<Action>,
    /// Set for the one `act` that carries out a confirmed key.
    pub confirmed: Option<Action>,
    /// The right pane has focus: j/k/PgUp/PgDn scroll it (l toggles).
    pub right_focus: bool,
    pub right_scroll: u16,
    /// The furthest the right pane can scroll, as last drawn (scrolling stops at the last row).
    pub right_max: std::cell::Cell<u16>,
    /// What the last review action did ("👍 on turn 6"), said again when the store saved it.
    pub said: Option<String>,
    /// The newest request of each kind whose answer may land (older answers are dropped).
    pub tickets: Tickets,
    /// Commands a service message led to (the runtime carries them out after `on_msg`).
    pub queued: Vec<Command>,
    pub status: String,
    /// Errors shown whole until acknowledged (Esc), oldest first (see status.rs).
    pub errors: Vec<String>,
    /// The status text last sorted by `settle_status`, and when it was first shown.
    pub status_seen: String,
    pub status_since: Option<std::time::Instant>,
    /// Rows of the replies streaming now, extended token by token (stream_wrap.rs).
    pub stream: super::stream_wrap::StreamCache,
    pub quit: bool,
    pub dirty: bool,
}

impl UiMsg {
    /// A background task's result: `Ok` an info notice, `Err` an error that stays until Esc.
    pub fn outcome(r: Result<String, UiError>) -> UiMsg {
        match r {
            Ok(t) => UiMsg::Notice(status::Level::Info, t),
            Err(e) => UiMsg::Notice(e.level(), e.to_string()),
        }
    }
}

impl App {
    pub fn new(header: Header, themes: Vec<Theme>, keymap: Keymap) -> App {
        App {
            header,
            pane: Pane::Detail,
            rooms: Default::default(),
            rules: RuleSet::builtin().expect("embedded rules parse"),
            analyzer: Arc::new(FallbackAnalyzer),
            cache: AnalysisCache::new(),
            run: RunView::default(),
            themes,
            theme: 0,
            keymap,
            selected: 0,
            follow: true,
            attempt: None,
            modal: None,
            chat: None,
            interview: None,
            insights: None,
            help: false,
            replay: false,
            help_scroll: 0,
            help_view: std::cell::Cell::new((0, 0)),
            runs: None,
            compare: None,
            search: Default::default(),
            review_log: Vec::new(),
            reviewer: None,
            blind: false,
            queue: None,
            leak_note: None,
            vault_error: None,
            queued: Vec::new(),
            branches: super::branch::Branches::default(),
            confirm: None,
            confirmed: None,
            right_focus: false,
            right_scroll: 0,
            right_max: std::cell::Cell::new(u16::MAX),
            said: None,
            tickets: Tickets::default(),
            status: String::new(),
            errors: Vec::new(),
            status_seen: String::new(),
            status_since: None,
            stream: Default::default(),
            quit: false,
            dirty: true,
        }
    }

    pub fn theme(&self) -> &Theme {
        &self.themes[self.theme.min(self.themes.len().saturating_sub(1))]
    }

    /// Whether the header shows a running count of seconds (a model loading): it is drawn
    /// again every second without a key press.
    pub fn counting(&self) -> bool {
        matches!(self.header.conn, Conn::Loading { .. })
    }

    /// Why a live run cannot start now (the endpoint has not answered with the model), short
    /// enough for the footer at 80 columns: the advice first; a failed probe's reason is in
    /// the error box (`conn_error`).
    fn not_ready(&self) -> Option<String> {
        let (probe, demo) = (self.key_name(Action::Probe), self.key_name(Action::Demo));
        match &self.header.conn {
            Conn::Up { .. } => None,
            Conn::Probing => {
                Some("still probing the endpoint — wait for the header to say connected".into())
            }
            Conn::Loading { .. } => {
                Some("the model is still loading — wait for the header to say connected".into())
            }
            Conn::Down(_) => Some(format!(
                "endpoint down: {probe} probes again, {demo} plays the demo (why: the error box)"
            )),
            Conn::Answered(_) => Some(format!(
                "model missing: {probe} probes again, {demo} plays the demo (why: the error box)"
            )),
            Conn::Demo => Some(format!(
                "probing the endpoint before a live run — press {} again once connected",
                self.key_name(Action::NewRun)
            )),
        }
    }

    /// A failed probe's reason whole, then the keys: what the error box shows (once — the
    /// conversation pane then only points at it).
    pub fn conn_error(&self, why: &str) -> String {
        format!(
            "{why} — {} probes again, {} plays the bundled demo",
            self.key_name(Action::Probe),
            self.key_name(Action::Demo)
        )
    }

    /// Whether the error box holds the connection's failure now.
    pub fn conn_error_shown(&self) -> bool {
        match &self.header.conn {
            Conn::Down(why) | Conn::Answered(why) => {
                let e = self.conn_error(why);
                let e = crate::text::sanitize::for_terminal(&e);
                self.errors.iter().any(|x| x.as_str() == e.as_ref())
            }
            _ => false,
        }
    }

    /// The key bound to `action` in the keymap (the first one; "?" when unbound), for hints.
    pub fn key_name(&self, action: Action) -> String {
        self.keymap
            .keys_for("", action)
            .into_iter()
            .next()
            .unwrap_or_else(|| "?".into())
    }

    /// What a run control says when there is no run.
    pub fn no_run(&self) -> String {
        format!(
            "no run in progress — {} starts one, {} plays the demo",
            self.key_name(Action::NewRun),
            self.key_name(Action::Demo)
        )
    }

    /// No mark of ours is being saved or failed to save (a reload would hide either).
    pub fn nothing_pending(&self) -> bool {
        self.run.turns.iter().all(|t| {
            !matches!(
                t.review.mark(),
                super::ack::SaveMark::Pending | super::ack::SaveMark::Failed(_)
            )
        })
    }

    pub fn running(&self) -> bool {
        matches!(self.run.state, RunState::Running | RunState::Paused)
    }

    pub fn on_msg(&mut self, msg: UiMsg) {
        self.dirty = true;
        match msg {
            UiMsg::Compare { ticket, view } => {
                if ticket == self.tickets.compare {
                    self.on_compare(*view)
                }
            }
            m @ (UiMsg::Runs { .. } | UiMsg::RunOpened { .. } | UiMsg::Found { .. }) => {
                let cmds = self.on_queue_msg(m);
                self.queued.extend(cmds);
            }
            UiMsg::Request(key, r) => self.rooms.request.loaded(key, r),
            UiMsg::Token {
                turn,
                attempt,
                delta,
                at,
            } => self.run.on_token(turn, attempt, &delta, at),
            UiMsg::Effect(e) => self.on_effect(e),
            UiMsg::RunStarted { run_id, topic } => self.on_run_started(run_id, topic),
            UiMsg::Connection(c) => self.on_connection(c),
            UiMsg::Saved {
                turn,
                ticket,
                result,
            } => self.on_saved(turn, ticket, result),
            UiMsg::Notice(level, e) => self.notify(level, e),
            UiMsg::StoreChanged => {
                // The pane on screen reads its data again (another reviewer's marks, the
                // bot's new conversations, a queue's progress).
                let reload = self.rooms.opened(self.pane);
                self.queued.extend(reload);
                if let Some(id) = self.run.run_id
                    && !self.running()
                    && self.nothing_pending()
                {
                    self.queued.push(Command::RefreshMarks { id });
                }
            }
            UiMsg::MarksRefreshed(r) => self.marks_refreshed(r),
            UiMsg::VaultSaved(r) => self.on_vault_saved(r),
            UiMsg::VaultOpened(r) => self.on_vault_opened(r),
            UiMsg::Chat(to, m) => self.on_chat(to, m),
            UiMsg::Interview(m) => self.interview_msg(m),
            UiMsg::Room(m) => {
                if let Some(n) = self.rooms.loaded(m) {
                    self.notify(n.level, n.text);
                }
            }
        }
        let load = self.request_sync();
        self.queued.extend(load);
    }

    fn on_effect(&mut self, e: Box<Effect>) {
        self.branches.keep(&mut self.run.turns, &e);
        self.run.apply(&e);
        match &*e {
            Effect::Held { turn, .. } => {
                self.fail(format!(
                    "turn {turn}: every attempt failed — pick one with tab and c, or regenerate with r"
                ));
            }
            Effect::Paused => self.status = "paused".into(),
            Effect::Resumed => self.status = "resumed".into(),
            Effect::Unsuitable { rejected } => {
                self.fail(crate::duo::session::unsuitable_message(*rejected));
            }
            Effect::RunDone { status, error } => match error {
                Some(e) => self.fail(format!("run {}: {e}", status.as_str())),
                None => self.status = format!("run {}", status.as_str()),
            },
            _ => {}
        }
        if self.follow && !self.run.turns.is_empty() {
            self.selected = self.run.turns.len() - 1;
            self.attempt = None;
        }
    }

    fn on_run_started(&mut self, run_id: i64, topic: String) {
        self.run = RunView {
            run_id: Some(run_id),
            topic,
            ..RunView::default()
        };
        self.selected = 0;
        self.follow = true;
        self.review_log.clear();
        self.branches = super::branch::Branches::default();
        self.status = format!("run {run_id} started");
    }

    fn on_connection(&mut self, c: Conn) {
        match &c {
            Conn::Down(why) => self.fail(self.conn_error(why)),
            Conn::Answered(why) => self.notify(status::Level::Warn, self.conn_error(why)),
            _ => {}
        }
        self.header.conn = c;
    }

    fn on_saved(
        &mut self,
        turn: Option<usize>,
        ticket: Option<super::view::SaveTicket>,
        result: Result<(), UiError>,
    ) {
        if let Some(tk) = ticket {
            // Settles the ticket on whichever turn queued it (turn numbers can repeat
            // after a truncation; tickets cannot).
            let _ = self
                .run
                .turns
                .iter_mut()
                .any(|t| t.review.settle(tk, &result));
        }
        match result {
            Ok(()) => {
                self.status =
                    match turn.and_then(|n| self.run.turns.iter().rev().find(|t| t.turn == n)) {
                        Some(t) if ticket.is_some() && !t.review.saved() => {
                            "saved; earlier marks of this turn still pending".into()
                        }
                        // A mark's words, now saved; a pause, stop, instruction or
                        // regeneration keeps what its status said (never a bare "saved ✓").
                        _ => match self.said.take() {
                            Some(what) => format!("{what} · saved ✓"),
                            None => std::mem::take(&mut self.status),
                        },
                    }
            }
            Err(e) => self.fail(format!("NOT saved: {e}")),
        }
    }

    fn on_vault_saved(&mut self, r: Result<Box<VaultSaved>, UiError>) {
        match r {
            Ok(saved) => {
                let VaultSaved {
                    path,
                    work,
                    edits,
                    works,
                } = *saved;
                let mut later = false;
                if let Some(v) = self.rooms.vis.as_mut() {
                    if v.edits == edits {
                        v.work = work;
                        v.unsaved = false;
                    } else {
                        // Edited while the file was written: keep those edits (unsaved),
                        // but follow the work to where it now lives.
                        v.work.root = work.root;
                        v.work.on_disk = work.on_disk;
                        later = true;
                    }
                    v.works = works;
                }
                self.status = if later {
                    format!("saved {path}; edits made since are not saved yet (w)")
                } else {
                    format!("saved {path} (previous kept as .bak); the next turn uses it")
                };
            }
            Err(e) => self.fail(format!("visibility NOT saved: {e}")),
        }
    }

    fn on_vault_opened(&mut self, r: Result<Box<crate::vault::Work>, UiError>) {
        match r {
            Ok(work) => {
                let name = work.name.clone();
                let warnings = work.warnings.len();
                let works = self
                    .rooms
                    .vis
                    .as_ref()
                    .map(|v| v.works.clone())
                    .unwrap_or_default();
                self.rooms.vis = Some(super::vis::VisPane::with_works(*work, works));
                self.status = format!(
                    "opened {name}{}; the next turn uses it",
                    if warnings > 0 {
                        format!(" ({warnings} warnings in the log)")
                    } else {
                        String::new()
                    }
                );
            }
            Err(e) => self.fail(format!("work NOT opened: {e}")),
        }
    }

    pub fn on_key(&mut self, key: KeyEvent) -> Vec<Command> {
        let mut cmds = self.on_key_inner(key);
        self.note_saves(&cmds);
        cmds.extend(self.request_sync());
        cmds
    }

    /// What has the keyboard: the topmost thing on screen.
    pub fn focus(&self) -> Focus {
        if self.confirm.is_some() {
            Focus::Confirm
        } else if let Some(m) = &self.modal {
            Focus::Dialog(m.dialog())
        } else if self.help {
            Focus::Help
        } else if self.runs.is_some() {
            Focus::Runs
        } else if self.search.input.is_some() {
            Focus::Search
        } else if self.compare.is_some() {
            Focus::Compare
        } else if self.insights.is_some() {
            Focus::Insights
        } else if self.interview.is_some() {
            Focus::Interview
        } else if self
            .chat
            .as_ref()
            .is_some_and(|c| c.typing || self.pane == Pane::Detail)
        {
            // While the message input is open it owns every key, whatever the right pane
            // shows: a typed `q` or `r` is text, never a command.
            Focus::Chat
        } else {
            Focus::Pane(self.pane)
        }
    }

    /// The key goes to the focus alone; Esc closes the topmost thing only (an error box
    /// first when it is drawn over the focus).
    fn on_key_inner(&mut self, key: KeyEvent) -> Vec<Command> {
        use crossterm::event::KeyCode;
        self.dirty = true;
        let focus = self.focus();
        if let Some(plain) = self.alt_in_chat(focus, &key) {
            let mut cmds = self.on_key_inner(KeyEvent::from(KeyCode::Esc));
            cmds.extend(self.on_key_inner(plain));
            return cmds;
        }
        if key.code == KeyCode::Esc && focus.under_errors() && self.acknowledge_error() {
            return Vec::new();
        }
        let cmds = match focus {
            Focus::Confirm => self.confirm_key(key),
            Focus::Dialog(Dialog::Secret) => self.secret_key(key),
            Focus::Dialog(_) => Some(self.modal_key(key)),
            Focus::Help => {
                self.help_key(key);
                Some(Vec::new())
            }
            Focus::Runs => self.runs_key(key),
            Focus::Search => self.search_key(key),
            Focus::Compare => self.compare_key(key),
            Focus::Insights | Focus::Interview => self.interview_key(key),
            Focus::Chat => self.chat_key(key),
            Focus::Pane(_) | Focus::Errors => None,
        };
        if let Some(cmds) = cmds {
            return cmds;
        }
        // The focused pane's own verbs (its `[pane.NAME]` section) before the global keys.
        if let Focus::Pane(pane) = focus {
            let ask = self.rooms.key(pane, &key, &self.keymap, &ctx!(self));
            if let Some(cmds) = self.answer(ask) {
                return cmds;
            }
        }
        let Some(action) = self.keymap.action_in(commands::focus(self), &key) else {
            return Vec::new();
        };
        self.act(action)
    }

    pub fn act(&mut self, action: Action) -> Vec<Command> {
        // The focused pane's room answers first (its own verbs).
        let ask = self.rooms.act(self.pane, action, &ctx!(self));
        if let Some(cmds) = self.answer(ask) {
            return cmds;
        }
        if let Some(cmds) = self.chat_action(action) {
            return cmds;
        }
        if let Some(cmds) = self.queue_action(action) {
            return cmds;
        }
        if action == Action::ShowRequest {
            return self.toggle_request();
        }
        let handlers: [Handler; 3] = [App::nav_action, App::run_action, App::review_action];
        for h in handlers {
            if let Some(cmds) = h(self, action) {
                return cmds;
            }
        }
        match action {
            Action::Quit => self.quit = true,
            Action::Help => {
                self.help = true;
                self.help_scroll = 0;
            }
            Action::NextPane => {
                self.pane = self.pane.next();
                return self.rooms.opened(self.pane);
            }
            Action::NextTheme => {
                self.theme = (self.theme + 1) % self.themes.len().max(1);
                self.status = format!("theme: {}", self.theme().name);
            }
            _ => {}
        }
        Vec::new()
    }

    /// Moving over turns and attempts; None: not one of them.
    fn nav_action(&mut self, action: Action) -> Option<Vec<Command>> {
        let n = self.run.turns.len();
        match action {
            Action::NextTurn => {
                self.selected = (self.selected + 1).min(n.saturating_sub(1));
                self.follow = self.selected + 1 >= n;
                self.attempt = None;
            }
            Action::PrevTurn => {
                self.selected = self.selected.saturating_sub(1);
                self.follow = false;
                self.attempt = None;
            }
            Action::PageDown => {
                self.selected = (self.selected + 5).min(n.saturating_sub(1));
                self.follow = self.selected + 1 >= n;
            }
            Action::PageUp => {
                self.selected = self.selected.saturating_sub(5);
                self.follow = false;
            }
            Action::FirstTurn => {
                self.selected = 0;
                self.follow = false;
            }
            Action::Follow => {
                self.selected = n.saturating_sub(1);
                self.follow = true;
            }
            Action::NextAttempt | Action::PrevAttempt => {
                if let Some(t) = self.run.turns.get(self.selected) {
                    let len = t.attempts.len();
                    let cur = self
                        .attempt
                        .or(t.committed)
                        .unwrap_or(len.saturating_sub(1));
                    self.attempt = Some(if action == Action::NextAttempt {
                        (cur + 1).min(len.saturating_sub(1))
                    } else {
                        cur.saturating_sub(1)
                    });
                }
            }
            _ => return None,
        }
        Some(Vec::new())
    }

    /// Starting, steering and stopping a run; None: not one of them.
    fn run_action(&mut self, action: Action) -> Option<Vec<Command>> {
        let sel_turn = self.run.turns.get(self.selected).map(|t| t.turn);
        match action {
            Action::NewRun => {
                if self.running() {
                    self.status = "a run is in progress — stop it first (s)".into();
                } else if let Some(why) = self.not_ready() {
                    // A run that would only fail a minute later is not started: the advice
                    // in the footer, the reason (once) in the error box.
                    self.status = why;
                    if let Conn::Down(e) | Conn::Answered(e) = &self.header.conn
                        && !self.conn_error_shown()
                    {
                        let e = self.conn_error(e);
                        self.fail(e);
                    }
                    if self.header.conn == Conn::Demo {
                        self.header.conn = Conn::Probing;
                        return Some(vec![Command::Probe]);
                    }
                } else {
                    self.modal = Some(Modal::Topic(textarea(
                        "topic — what should they talk about? (Enter to start, Esc to cancel)",
                    )));
                }
            }
            Action::Probe => {
                self.header.conn = Conn::Probing;
                self.status = format!("probing {} …", self.header.endpoint);
                return Some(vec![Command::Probe]);
            }
            Action::Demo => {
                if self.running() {
                    self.status = "a run is in progress — stop it first (s)".into();
                } else {
                    return Some(vec![Command::StartDemo]);
                }
            }
            Action::PauseResume => {
                let (ev, kind) = match self.run.state {
                    RunState::Paused => (Event::Resume, ActionKind::Resume),
                    RunState::Running => (Event::Pause, ActionKind::Pause),
                    _ => {
                        self.status = self.no_run();
                        return Some(Vec::new());
                    }
                };
                self.status = format!("{} requested", kind.as_str());
                return Some(vec![Command::Control(ev), save(None, kind, json!({}))]);
            }
            Action::Stop if self.running() => {
                self.status = "stopping the run …".into();
                return Some(vec![
                    Command::Control(Event::Stop),
                    save(None, ActionKind::Stop, json!({})),
                ]);
            }
            Action::Inject if self.running() => {
                self.modal = Some(Modal::Inject(textarea(
                    "owner instruction for the next turn (Enter to send)",
                )));
            }
            Action::Stop | Action::Inject => self.status = self.no_run(),
            // Only a run in progress can regenerate; a refused key stores nothing (a stored
            // `regenerate` on a finished run would void every reviewer mark of it on export).
            Action::Regenerate if !self.running() => self.status = self.no_run(),
            Action::Regenerate => {
                if let Some(turn) = sel_turn.filter(|_| self.run.run_id.is_some()) {
                    self.follow = true;
                    self.status = format!("regenerating turn {turn} …");
                    return Some(vec![
                        Command::Control(Event::Regenerate { turn }),
                        save(Some(turn), ActionKind::Regenerate, json!({})),
                    ]);
                }
            }
            _ => return None,
        }
        Some(Vec::new())
    }

    /// A reviewer's marks and dialogs on the selected turn; None: not one of them.
    fn review_action(&mut self, action: Action) -> Option<Vec<Command>> {
        let sel_turn = self.run.turns.get(self.selected).map(|t| t.turn);
        match action {
            Action::ThumbUp | Action::ThumbDown => {
                if let Some(t) = self.run.turns.get_mut(self.selected) {
                    let up = action == Action::ThumbUp;
                    t.review.thumb = Some(up);
                    let what = format!("{} on turn {}", if up { "👍" } else { "👎" }, t.turn);
                    self.status = what.clone();
                    self.said = Some(what);
                    return Some(vec![review_save(
                        t.review.queue(),
                        Some(t.turn),
                        ActionKind::Thumb,
                        json!({"up": up, "speaker": t.speaker}),
                    )]);
                }
            }
            Action::Override if sel_turn.is_some() => {
                let t = &self.run.turns[self.selected];
                // Blind: the dialog must not start at the hidden verdict.
                let current = (!super::blind::hides(&self.blind_view(), t))
                    .then(|| t.status())
                    .flatten()
                    .unwrap_or(Status::Pass);
                self.modal = Some(Modal::Override {
                    target: crate::tui::command::Target::Turn(t.turn, t.speaker.clone()),
                    status: current,
                    reason: textarea("override: ←/→ verdict, type the reason, Enter to save"),
                });
            }
            Action::Feedback if let Some(turn) = sel_turn => {
                let who = self.run.turns[self.selected].speaker.clone();
                self.modal = Some(Modal::Feedback {
                    turn,
                    who,
                    category: 0,
                    text: textarea(
                        "feedback: line 1 what is wrong · ctrl-j · line 2 the fix · Enter saves",
                    ),
                });
            }
            Action::Promote => {
                let Some(p) = self.promotion() else {
                    self.status =
                        "select a reviewed line with the line before it to promote".into();
                    return Some(Vec::new());
                };
                let mut t = textarea(
                    "promote: ←/→ reply type · type the message type (e.g. からかい) · Enter",
                );
                t.insert_str("からかい");
                self.modal = Some(Modal::Promote {
                    promotion: Box::new(p),
                    kind: 0,
                    text: t,
                });
            }
            Action::ChooseAttempt if self.run.held => {
                if let Some(a) = self.run.turns.get(self.selected).and_then(|t| {
                    t.attempts
                        .get(self.attempt.unwrap_or(t.attempts.len().saturating_sub(1)))
                }) {
                    return Some(vec![Command::Control(Event::Choose { attempt: a.attempt })]);
                }
            }
            _ => return None,
        }
        Some(Vec::new())
    }
}

/// A handler of one group of actions: `None` when the action is not in its group.
type Handler = fn(&mut App, Action) -> Option<Vec<Command>>;

pub(super) fn save(turn: Option<usize>, kind: ActionKind, payload: serde_json::Value) -> Command {
    Command::Save {
        turn,
        kind,
        payload,
        ticket: None,
    }
}

/// A write the turn's review mark waits for (its ticket from `Review::queue`).
pub(super) fn review_save(
    ticket: super::view::SaveTicket,
    turn: Option<usize>,
    kind: ActionKind,
    payload: serde_json::Value,
) -> Command {
    Command::Save {
        turn,
        kind,
        payload,
        ticket: Some(ticket),
    }
}
