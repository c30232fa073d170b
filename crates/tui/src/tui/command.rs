//! What the workbench asks of the runtime (`Command`) and the dialogs it opens (`Modal`):
//! plain values shared by the app, the rooms that answer with them and the runtime that
//! carries them out — no I/O and no `App` here.

use ratatui_textarea::TextArea;

use crate::director::Status;
use crate::duo::Event;
use crate::store::ActionKind;

/// What an override acts on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A turn of the open run, by its number, and who spoke it.
    Turn(usize, String),
    /// A bot reply in the conversations pane, by its stored id.
    Reply(i64),
}

impl std::fmt::Display for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Target::Turn(n, who) => write!(f, "turn {n} · {who}"),
            Target::Reply(id) => write!(f, "reply #{id}"),
        }
    }
}

/// An open dialog, with everything it acts on.
pub enum Modal {
    Topic(TextArea<'static>),
    Inject(TextArea<'static>),
    Override {
        /// What the verdict is overridden on, fixed when the dialog opened (a live run may
        /// move the selection meanwhile).
        target: Target,
        status: Status,
        reason: TextArea<'static>,
    },
    Feedback {
        /// The turn number the note is on, fixed when the dialog opened.
        turn: usize,
        /// Who spoke that turn (a sister's id), named in the dialog's frame.
        who: String,
        category: usize,
        text: TextArea<'static>,
    },
    /// Promote a reviewed line to a pattern: ←/→ reply type, the message type typed.
    Promote {
        promotion: Box<Promotion>,
        kind: usize,
        text: TextArea<'static>,
    },
    /// A counterfactual draft, editable before it is accepted (patterns pane review).
    Draft {
        dropout: i64,
        kind: String,
        text: TextArea<'static>,
    },
    /// A secret's fields as YAML (visibility pane).
    Secret {
        key: String,
        text: TextArea<'static>,
    },
}

impl Modal {
    /// Which dialog this is (its key bar and keymap section).
    pub fn dialog(&self) -> crate::tui::focus::Dialog {
        match self {
            Modal::Topic(_) => crate::tui::focus::Dialog::Topic,
            Modal::Inject(_) => crate::tui::focus::Dialog::Inject,
            Modal::Override { .. } => crate::tui::focus::Dialog::Override,
            Modal::Feedback { .. } => crate::tui::focus::Dialog::Feedback,
            Modal::Promote { .. } => crate::tui::focus::Dialog::Promote,
            Modal::Draft { .. } => crate::tui::focus::Dialog::Draft,
            Modal::Secret { .. } => crate::tui::focus::Dialog::Secret,
        }
    }
}

/// What the runtime must do for the app.
#[derive(Debug, Clone)]
pub enum Command {
    StartLive(String),
    StartDemo,
    /// Ask the endpoint again (model list, short timeout); the header shows the answer.
    Probe,
    /// Read the stored request of one attempt (run, turn, attempt) for the detail pane.
    LoadRequest(crate::tui::request_view::Key),
    Control(Event),
    Save {
        turn: Option<usize>,
        kind: ActionKind,
        payload: serde_json::Value,
        /// The turn's review mark waits for this write (see `view::Review`).
        ticket: Option<crate::tui::view::SaveTicket>,
    },
    /// Write the edited visibility.yaml and hand the work to the next turn.
    SaveVault {
        work: Box<crate::vault::Work>,
        /// The pane's edit count when this copy was taken.
        edits: u64,
    },
    /// Load another work of the vault; runs use it from their next prompt.
    OpenWork {
        root: std::path::PathBuf,
        name: String,
    },
    /// Chat mode: run one user message through masking, safety, patterns, the model and the
    /// Director. `text` is the raw message; the runtime masks it before anything else.
    ChatSend {
        text: String,
        character: String,
        /// Her earlier exchanges, oldest first (blocked ones included, as `chat::context`
        /// wants them).
        history: Vec<crate::chat::Turn>,
        /// The exchange the answer belongs to.
        to: crate::tui::chat::ChatTarget,
    },
    /// 👍/👎 on a stored chat exchange (its `thumb` column).
    /// Interview mode: start `interview NAME`, answer (raw; masked by the runner), leave.
    InterviewStart(String),
    InterviewAnswer(String),
    InterviewLeave,
    /// Load the insight cards for the insights view.
    InsightsOpen,
    ChatThumb {
        id: i64,
        up: bool,
    },
    /// 👍/👎 on a reply that came from a pattern (usage-log feedback).
    PatternFeedback {
        usage_id: i64,
        up: bool,
    },
    /// Write the tuned rules to the user's rules file.
    SaveRules(Box<crate::director::RuleSet>),
    /// Learn proposals from the team's labels (the rules pane's tune section).
    Tune,
    /// Write the accepted proposals' overlay (rules.tune.toml) and adopt `rules`.
    AcceptTune {
        overlay: String,
        rules: Box<crate::director::RuleSet>,
    },
    /// Run a pane's read of the store (`Pane::loader`) and hand the answer to its room.
    LoadRoom(crate::tui::panes::Pane),
    LoadDropouts,
    /// The conversations view (LINE traffic): 👍/👎 a reply, override it with a note.
    LineThumb {
        id: i64,
        up: bool,
    },
    LineOverride {
        id: i64,
        status: Status,
        note: String,
    },
    DraftCounterfactuals {
        dropout: i64,
    },
    AcceptCounterfactual {
        dropout: i64,
        kind: String,
        /// The user's message type (からかい …), as the reviewer confirmed it.
        message_type: String,
        text: String,
    },
    /// Make a reviewed line a pattern: the line before it is the user's message.
    Promote(Box<Promotion>),
    /// Runs browser: a page of stored runs.
    BrowseRuns {
        filter: String,
        offset: usize,
    },
    /// Read a stored run back (and select `turn`).
    /// Claims the next item of the review queue for this reviewer and opens it.
    QueueNext,
    OpenRun {
        id: i64,
        turn: Option<usize>,
    },
    /// At start-up: open the newest stored run, if any.
    OpenLatest,
    /// Read the open run's marks again (another process committed to the store).
    RefreshMarks {
        id: i64,
    },
    /// Open the compare view (a comparison, or a run's newest one).
    OpenCompare(crate::tui::compare_open::CompareAsk),
    /// `/` over every stored run.
    SearchAll(String),
    /// Finish the replay in progress at once.
    ReplayToEnd,
}

/// A reviewed line becoming a プロレス pattern.
#[derive(Debug, Clone)]
pub struct Promotion {
    pub character: String,
    pub user_message_type: String,
    pub user_message_example: String,
    pub bot_response: String,
    pub bot_response_type: String,
}

/// The message type the model named, and the (reply type, text) drafts.
pub type DraftSet = (Option<String>, Vec<(String, String)>);

/// An input box with its title.
pub fn textarea(title: &str) -> TextArea<'static> {
    let mut t = TextArea::default();
    t.set_block(ratatui::widgets::Block::bordered().title(title.to_string()));
    t
}
