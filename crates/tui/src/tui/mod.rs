//! The workbench: one `select!` loop over terminal events, service messages and a frame timer;
//! runs and store writes happen in tasks that report back as `UiMsg`. Redraws only when
//! something changed, at most ~30 times a second.

mod ack;
pub mod app;
pub use app::render;
pub mod blind;
pub mod cells;
pub mod command;
mod compare_open;
pub mod compare_view;
pub mod ctx;
mod detail;
pub mod error;
pub mod fit;
pub mod focus;
pub mod keymap;
mod keymap_check;
pub mod kinsoku;
pub mod marks;
pub mod panes;
pub mod request_view;
mod side;
mod stream_wrap;
mod styled_wrap;
pub mod theme;
mod thresholds;
pub mod tune_room;
pub mod tuning;
pub mod verbs;
pub mod view;
pub mod wrap;

use std::path::PathBuf;

pub use runtime::{Runtime, Services};

/// Start-up options from the command line.
#[derive(Debug, Clone, Default)]
pub struct Options {
    pub demo: bool,
    pub theme: Option<String>,
    pub db: Option<PathBuf>,
    pub endpoint: Option<String>,
    pub model: Option<String>,
    pub api: Option<crate::llm::ApiKind>,
    pub analyzer: crate::text::analyzer::AnalyzerChoice,
    pub replay_speed: f64,
    /// `--replay RUN_ID|FILE`: a stored run, or a recording file, replayed.
    pub replay: Option<String>,
    pub exit_after_first_frame: bool,
    /// `--vault DIR` / `--work NAME`; default: the writer's vault, else the bundled sample.
    pub vault: Option<PathBuf>,
    pub work: Option<String>,
    /// `--reviewer NAME`: stored on every reviewer action, shown in the header.
    pub reviewer: Option<String>,
    /// `--compare ID`: open that comparison's view at start-up.
    pub compare: Option<i64>,
    /// `--blind`: hide the Director's verdict on a turn until the reviewer judged it.
    pub blind: bool,
    /// A review queue `m` claims items from.
    pub queue: Option<String>,
}

pub mod chat;
pub mod conversations;
pub mod insights_view;
pub mod interview_view;
pub mod patterns;
pub mod queue;
mod queue_draw;
pub mod reopen;
pub mod runs;
mod runtime;
pub mod vis;
pub mod vis_preview;
pub use runtime::term::run;
pub mod branch;
pub mod kappa;
