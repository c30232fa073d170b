//! The command-line arguments of `kakeai patterns` (and the shared ones `kakeai ingest` uses).

use std::path::PathBuf;

use clap::{Args, Subcommand, ValueEnum};

use super::draft;
use crate::patterns::db::SortKey;
use crate::patterns::stamp::{self, Millis};
use crate::patterns::{Character, ResponseType};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Table,
    Json,
}

/// Where the store is and how to print; every patterns subcommand takes these.
#[derive(Args, Debug, Clone)]
pub struct Common {
    /// The store file (default: <data dir>/kakeai.db).
    #[arg(long, env = "KAKEAI_DB")]
    pub db: Option<PathBuf>,
    #[arg(long, value_enum, default_value = "table")]
    pub format: Format,
}

/// The dropout window and the instant the logs are complete up to.
#[derive(Args, Debug, Clone)]
pub struct WindowArgs {
    /// No user message within this many minutes of a bot line = a dropout (seed: 30).
    #[arg(long, default_value_t = 30, value_parser = clap::value_parser!(u32).range(1..))]
    pub window_minutes: u32,
    /// Judge silences as of this instant (RFC 3339 or unix seconds; default: now).
    #[arg(long, value_parser = parse_instant)]
    pub as_of: Option<Millis>,
}

impl WindowArgs {
    pub fn secs(&self) -> i64 {
        i64::from(self.window_minutes) * 60
    }
    pub fn as_of(&self) -> Millis {
        self.as_of.unwrap_or_else(stamp::now_ms)
    }
}

pub fn parse_instant(s: &str) -> Result<Millis, String> {
    stamp::parse_arg(s)
}

pub(super) fn parse_character(s: &str) -> Result<Character, String> {
    Character::parse(s).ok_or_else(|| format!("unknown character {s:?}; use yana or ayu"))
}

pub(super) fn parse_type(s: &str) -> Result<ResponseType, String> {
    ResponseType::parse(s)
        .ok_or_else(|| format!("unknown reply type {s:?}; use プロレス受け, 流し or カウンター"))
}

#[derive(Subcommand, Debug)]
pub enum PatternsCommand {
    /// Add one pattern by hand.
    Add(AddArgs),
    /// Every pattern with its success rate, like rate, score and rank.
    List(ListArgs),
    /// The pattern that would answer a message (seed §6.3); exit 1 and `null` when none qualifies.
    Best(BestArgs),
    /// Record that a pattern answered (a usage-log row); prints its log id.
    Use(UseArgs),
    /// 👍 (+1) or 👎 (-1) on a usage-log row.
    Feedback(FeedbackArgs),
    /// Resolve a use: the user replied at a time, or stayed silent past the window.
    Outcome(OutcomeArgs),
    /// Import patterns from JSON Lines (one pattern per line, the seed's column names).
    Import(ImportArgs),
    /// Export every pattern as JSON Lines, ready for `import`.
    Export(ExportArgs),
    /// Bot lines after which the user went quiet (from `kakeai ingest` logs).
    Dropouts(DropoutsArgs),
    /// Ask the LLM for three counterfactual replies to a dropout (プロレス受け, 流し, カウンター).
    Draft(draft::DraftArgs),
    /// Keep a (possibly edited) counterfactual reply as a pattern (is_counterfactual = 1).
    Accept(draft::AcceptArgs),
}

#[derive(Args, Debug)]
pub struct AddArgs {
    #[command(flatten)]
    pub common: Common,
    #[arg(long, value_parser = parse_character)]
    pub character: Character,
    /// bot_response_type: プロレス受け, 流し or カウンター (uke, nagashi, counter).
    #[arg(long = "type", value_parser = parse_type)]
    pub response_type: ResponseType,
    /// user_message_type, e.g. からかい.
    #[arg(long)]
    pub message_type: String,
    /// user_message_example: a message this pattern answers.
    #[arg(long)]
    pub example: String,
    /// bot_response: what the sister says.
    #[arg(long)]
    pub response: String,
    #[arg(long)]
    pub counterfactual: bool,
}

#[derive(Args, Debug)]
pub struct ListArgs {
    #[command(flatten)]
    pub common: Common,
    #[arg(long, value_parser = parse_character)]
    pub character: Option<Character>,
    #[arg(long, value_enum, default_value = "score")]
    pub sort: SortKey,
    #[arg(long)]
    pub limit: Option<usize>,
}

#[derive(Args, Debug)]
pub struct BestArgs {
    #[command(flatten)]
    pub common: Common,
    #[arg(long, value_parser = parse_character)]
    pub character: Character,
    /// The user's message.
    #[arg(long)]
    pub message: String,
    /// Only patterns with at least this success rate (seed: 0.7).
    #[arg(long, default_value_t = 0.7)]
    pub min_success: f64,
    /// Prefer patterns of this user_message_type (e.g. from a classifier).
    #[arg(long)]
    pub message_type: Option<String>,
}

#[derive(Args, Debug)]
pub struct UseArgs {
    #[command(flatten)]
    pub common: Common,
    #[arg(long)]
    pub pattern: i64,
    #[arg(long)]
    pub conversation: Option<String>,
    #[arg(long)]
    pub user: Option<String>,
    /// The user's message it answered (stored PII-masked).
    #[arg(long)]
    pub message: Option<String>,
    /// When it was said (RFC 3339 or unix seconds; default: now).
    #[arg(long, value_parser = parse_instant)]
    pub at: Option<Millis>,
}

#[derive(Args, Debug)]
pub struct FeedbackArgs {
    #[command(flatten)]
    pub common: Common,
    /// The usage-log row (see `use`, or the chat trace).
    #[arg(long)]
    pub log: i64,
    /// +1 / 1 / 👍 or -1 / 👎.
    #[arg(long, allow_hyphen_values = true)]
    pub value: String,
}

#[derive(Args, Debug)]
#[command(group(clap::ArgGroup::new("seen").required(true).args(["reply_at", "no_reply"])))]
pub struct OutcomeArgs {
    #[command(flatten)]
    pub common: Common,
    #[arg(long)]
    pub log: i64,
    /// When the user's next message came (RFC 3339 or unix seconds).
    #[arg(long, value_parser = parse_instant)]
    pub reply_at: Option<Millis>,
    /// The user's reply was followed by more of the user's banter (counts for prowrestling_rate).
    #[arg(long, requires = "reply_at")]
    pub continued: bool,
    /// No reply came (a failure once the window has closed by --as-of).
    #[arg(long)]
    pub no_reply: bool,
    #[command(flatten)]
    pub window: WindowArgs,
}

#[derive(Args, Debug)]
pub struct ImportArgs {
    #[command(flatten)]
    pub common: Common,
    pub file: PathBuf,
    /// Import the new patterns and skip the ones already there (default: a duplicate changes
    /// nothing and exits 1).
    #[arg(long)]
    pub skip_duplicates: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExportFormat {
    /// One pattern per line, the `import` format.
    Jsonl,
    /// One JSON array.
    Json,
    Table,
}

#[derive(Args, Debug)]
pub struct ExportArgs {
    #[arg(long, env = "KAKEAI_DB")]
    pub db: Option<PathBuf>,
    #[arg(long, value_enum, default_value = "jsonl")]
    pub format: ExportFormat,
}

#[derive(Args, Debug)]
pub struct DropoutsArgs {
    #[command(flatten)]
    pub common: Common,
    #[command(flatten)]
    pub window: WindowArgs,
}
