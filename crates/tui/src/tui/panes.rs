//! The right-hand panes as rooms (issue 23): the one list of panes, each pane's state
//! (`Rooms`), and the one dispatch of a key, a drawing, an opening and a loaded answer to the
//! pane that has them. A room owns its state, verbs and drawing, reads the run through a
//! read-only [`Ctx`] and answers with an [`Ask`] the workbench carries out; it never sees the
//! `App`. Adding a pane touches three files: a variant and its arms here, its room (its own
//! file, declared here), and its keys, footer and help in assets/tui/commands.toml — plus, when
//! it reads the store, its loader in runtime/.

use ratatui::Frame;
use ratatui::layout::Rect;

use super::command::{Command, Modal};
use super::conversations::ConversationsPane;
use super::ctx::Ctx;
use super::error::Notice;
use super::keymap::{Action, Keymap};
use super::patterns::PatternsPane;
use super::request_view::RequestPane;
use super::theme::Theme;
use super::tuning::RulesRoom;
use super::verbs::Input;
use super::vis::VisPane;
use crate::director::{RuleId, RuleSet};
use crossterm::event::KeyEvent;

mod queues;

/// The right-hand panes, in tab order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Pane {
    Detail,
    Rules,
    Stats,
    Visibility,
    Patterns,
    Conversations,
    Queues,
}

impl Pane {
    /// Every pane, in the tab strip's order (the only place they are listed).
    pub const ALL: [Pane; 7] = [
        Pane::Detail,
        Pane::Rules,
        Pane::Stats,
        Pane::Visibility,
        Pane::Patterns,
        Pane::Conversations,
        Pane::Queues,
    ];

    /// Its name: the tab's label, its `[pane.NAME]` keymap section and its footer/help group.
    pub fn name(self) -> &'static str {
        match self {
            Pane::Detail => "detail",
            Pane::Rules => "rules",
            Pane::Stats => "stats",
            Pane::Visibility => "visibility",
            Pane::Patterns => "patterns",
            Pane::Conversations => "conversations",
            Pane::Queues => "queues",
        }
    }

    pub fn index(self) -> usize {
        Pane::ALL.iter().position(|p| *p == self).unwrap_or(0)
    }

    /// The next tab (after the last: the first).
    pub fn next(self) -> Pane {
        Pane::ALL[(self.index() + 1) % Pane::ALL.len()]
    }

    /// The previous tab (before the first: the last).
    pub fn prev(self) -> Pane {
        Pane::ALL[(self.index() + Pane::ALL.len() - 1) % Pane::ALL.len()]
    }

    pub fn from_name(name: &str) -> Option<Pane> {
        Pane::ALL.into_iter().find(|p| p.name() == name)
    }

    /// Its own verbs (name, description): what its `[pane.NAME]` section may bind besides
    /// the global actions.
    pub fn verbs(self) -> Vec<(&'static str, &'static str)> {
        use super::verbs::listing;
        match self {
            Pane::Detail | Pane::Stats => Vec::new(),
            Pane::Rules => listing::<super::tuning::RulesVerb>(),
            Pane::Visibility => listing::<super::vis::VisVerb>(),
            Pane::Patterns => listing::<super::patterns::PatternsVerb>(),
            Pane::Conversations => listing::<super::conversations::ConversationsVerb>(),
            Pane::Queues => listing::<queues::QueuesVerb>(),
        }
    }

    /// The global action names its verbs had before they were the pane's own: a user keymap
    /// written then binding them in [keys] is pointed at this pane's section.
    pub fn formerly(self) -> &'static [&'static str] {
        match self {
            Pane::Rules => &["increase", "decrease", "save_rules"],
            Pane::Visibility => &[
                "set_level0",
                "set_level1",
                "set_level2",
                "set_level3",
                "edit_secret",
            ],
            _ => &[],
        }
    }
}

/// A room's read of the store: a plain function of the store, run by the runtime on the
/// store's own thread (rooms never hold the store or spawn anything).
pub type Loader = fn(&mut crate::store::Store) -> RoomMsg;

impl Pane {
    /// Whether the pane scrolls as a whole when the right side has the focus (`l`): the
    /// list panes move a selection instead.
    pub fn scrolls(self) -> bool {
        matches!(
            self,
            Pane::Detail | Pane::Rules | Pane::Stats | Pane::Queues
        )
    }

    /// What the pane reads when it comes on screen or asks to reload.
    pub fn loader(self) -> Option<Loader> {
        match self {
            Pane::Patterns => Some(super::patterns::load),
            Pane::Conversations => Some(super::conversations::load),
            Pane::Queues => Some(queues::load),
            Pane::Detail | Pane::Rules | Pane::Stats | Pane::Visibility => None,
        }
    }
}

/// What a room asks of the workbench after a key.
pub enum Ask {
    /// Not one of the room's verbs: the workbench's own keys take it.
    NotMine,
    /// Done in the room; the status line to show, if any.
    Done(Option<String>),
    /// A failure, shown at the level its kind sets (an error stays until Esc).
    Fail(super::error::UiError),
    /// Work for the runtime, with the status line to show.
    Run(Option<String>, Vec<Command>),
    /// Open a dialog (it carries its target).
    Dialog(Box<Modal>),
    /// Adopt these rules and judge the open run again (the rule whose value changed).
    Rejudge(Box<RuleSet>, Option<RuleId>),
}

/// What a room's loader brought back from the store or the model.
#[derive(Debug, Clone)]
pub enum RoomMsg {
    Patterns(Result<Vec<super::patterns::PatternRow>, super::error::UiError>),
    Dropouts(Result<Vec<super::patterns::DropoutRow>, super::error::UiError>),
    Conversations(Result<super::conversations::Loaded, super::error::UiError>),
    Drafts {
        dropout: i64,
        /// The message type the model named, and the (reply type, text) drafts.
        drafts: Result<super::command::DraftSet, super::error::UiError>,
    },
    Queues(Result<Vec<queues::QueueRow>, super::error::UiError>),
    /// The tune section's learning: refused (too few labels …) or proposals.
    Tune(Result<super::tune_room::Outcome, super::error::UiError>),
    /// The read itself could not run (the store is gone).
    Failed(Pane, super::error::UiError),
}

/// Every pane's state.
#[derive(Default)]
pub struct Rooms {
    /// The detail pane's request view (findings ↔ the stored request).
    pub request: RequestPane,
    pub rules: RulesRoom,
    /// The writer's visibility pane (None when no vault could be loaded).
    pub vis: Option<VisPane>,
    pub patterns: PatternsPane,
    pub conversations: ConversationsPane,
    pub queues: queues::QueuesRoom,
}

impl Rooms {
    /// A key bound to one of `pane`'s own verbs in its `[pane.NAME]` section goes to its room;
    /// `Ask::NotMine` when the key names none of them.
    pub fn key(&mut self, pane: Pane, key: &KeyEvent, keymap: &Keymap, cx: &Ctx) -> Ask {
        let section = pane.name();
        let none = || Ask::NotMine;
        match pane {
            Pane::Detail | Pane::Stats => Ask::NotMine,
            Pane::Rules => keymap.verb(section, key).map_or_else(none, |v| {
                self.rules.act(Input::Verb(v), cx.rules, cx.blind.on)
            }),
            Pane::Visibility => match (keymap.verb(section, key), self.vis.as_mut()) {
                (Some(v), Some(room)) => room.action(Input::Verb(v)).into_ask(),
                (Some(_), None) => Ask::Done(Some("no vault is open (--vault DIR)".into())),
                (None, _) => Ask::NotMine,
            },
            Pane::Patterns => keymap
                .verb(section, key)
                .map_or_else(none, |v| self.patterns.action(Input::Verb(v)).into_ask()),
            Pane::Conversations => keymap.verb(section, key).map_or_else(none, |v| {
                self.conversations.action(Input::Verb(v)).into_ask()
            }),
            Pane::Queues => keymap
                .verb(section, key)
                .map_or_else(none, |v| self.queues.act(Input::Verb(v))),
        }
    }

    /// A global action the focused pane may take (moving its selection, 👍 on a
    /// conversation's reply): `Ask::NotMine` when it does not.
    pub fn act(&mut self, pane: Pane, action: Action, cx: &Ctx) -> Ask {
        match pane {
            Pane::Detail | Pane::Stats => Ask::NotMine,
            Pane::Rules => self.rules.act(Input::Global(action), cx.rules, cx.blind.on),
            Pane::Visibility => match self.vis.as_mut() {
                Some(v) => v.action(Input::Global(action)).into_ask(),
                None => Ask::NotMine,
            },
            Pane::Patterns => self.patterns.action(Input::Global(action)).into_ask(),
            Pane::Conversations => self.conversations.action(Input::Global(action)).into_ask(),
            Pane::Queues => self.queues.act(Input::Global(action)),
        }
    }

    /// What a pane reads when it comes on screen.
    pub fn opened(&self, pane: Pane) -> Vec<Command> {
        match pane {
            p if p.loader().is_some() => vec![Command::LoadRoom(p)],
            _ => Vec::new(),
        }
    }

    /// A loader's answer; the status line to show, if any.
    pub fn loaded(&mut self, msg: RoomMsg) -> Option<Notice> {
        match msg {
            RoomMsg::Patterns(r) => self.patterns.loaded(r),
            RoomMsg::Dropouts(r) => self.patterns.dropouts_loaded(r),
            RoomMsg::Drafts { dropout, drafts } => self.patterns.drafts_loaded(dropout, drafts),
            RoomMsg::Conversations(r) => self.conversations.loaded(r),
            RoomMsg::Queues(r) => self.queues.loaded(r),
            RoomMsg::Tune(r) => {
                use super::tune_room::{Outcome, TuneState};
                let (state, said) = match r {
                    Ok(Outcome::Learned(learned)) => {
                        let n = learned.report.proposals.len();
                        let state = TuneState::Ready {
                            learned,
                            selected: 0,
                            accepted: Vec::new(),
                        };
                        (
                            state,
                            Notice::info(format!("tune: {n} proposal(s) held up")),
                        )
                    }
                    Ok(Outcome::Refused(why)) => {
                        (TuneState::Refused(why.clone()), Notice::info(why))
                    }
                    Err(e) => (TuneState::Idle, Notice::failed("tune", e)),
                };
                self.rules.tune = state;
                Some(said)
            }
            RoomMsg::Failed(pane, e) => Some(Notice::failed(pane.name(), e)),
        }
    }

    /// Draws `pane` in `area` (its frame with the tab strip included).
    pub fn draw(&self, pane: Pane, f: &mut Frame, area: Rect, cx: &Ctx, t: &Theme) {
        use super::{chat, detail, side};
        let framed = |f: &mut Frame| side::framed(f, area, pane, t);
        match pane {
            Pane::Detail if cx.chat.is_some() => chat::detail(f, area, cx.chat, t),
            Pane::Detail => {
                let templates = self.vis.as_ref().map(|p| &p.work.templates);
                detail::detail(f, area, cx, &self.request, templates, t)
            }
            Pane::Rules => {
                let inner = framed(f);
                side::rules(
                    f,
                    inner,
                    cx,
                    self.rules.field,
                    self.rules.rejudge_of(cx.run.run_id),
                    &self.rules.tune,
                    t,
                );
            }
            Pane::Stats => {
                let inner = framed(f);
                side::stats(f, inner, cx, t);
            }
            Pane::Visibility => {
                let inner = framed(f);
                super::vis::render(f, inner, self.vis.as_ref(), t);
            }
            Pane::Patterns => {
                let inner = framed(f);
                super::patterns::render(f, inner, &self.patterns, t);
            }
            Pane::Conversations => {
                let inner = framed(f);
                super::conversations::render(f, inner, &self.conversations, t);
            }
            Pane::Queues => {
                let inner = framed(f);
                self.queues.draw(f, inner, cx, t);
            }
        }
    }
}
