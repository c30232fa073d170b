//! The store's vocabulary: what callers write (`New*`, `AttemptOutcome`, `TurnCommit`) and what
//! they read back (`RunSummary`, `RunRecord` and its rows).

use std::fmt;
use std::time::SystemTime;

use serde::{Deserialize, Serialize};

use crate::director::Status;

/// Where a run stands. Imported runs are never live.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    Running,
    Completed,
    Stopped,
    Failed,
    Imported,
    /// Left `running` by a process that ended without finishing it (quit, kill -9, crash);
    /// set when the store is next opened.
    Interrupted,
}

/// Where one attempt stands. `Streaming` is what a crash leaves behind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AttemptState {
    Streaming,
    Done,
    Failed,
    Cancelled,
}

/// What a reviewer (or an import) did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ActionKind {
    Override,
    Thumb,
    Feedback,
    Note,
    Pause,
    Resume,
    Stop,
    Inject,
    Regenerate,
    /// Takes back the reviewer's latest 👍/👎, override or feedback on a turn (migration 007).
    Undo,
}

macro_rules! text_enum {
    ($t:ty { $($v:ident => $s:literal),* $(,)? }) => {
        impl $t {
            pub fn as_str(self) -> &'static str {
                match self { $(<$t>::$v => $s),* }
            }
            pub fn parse(s: &str) -> Option<Self> {
                match s { $($s => Some(<$t>::$v),)* _ => None }
            }
        }
        impl fmt::Display for $t {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

text_enum!(RunStatus { Running => "running", Completed => "completed", Stopped => "stopped",
    Failed => "failed", Imported => "imported", Interrupted => "interrupted" });
text_enum!(AttemptState { Streaming => "streaming", Done => "done", Failed => "failed",
    Cancelled => "cancelled" });
text_enum!(ActionKind { Override => "override", Thumb => "thumb", Feedback => "feedback",
    Note => "note", Pause => "pause", Resume => "resume", Stop => "stop", Inject => "inject",
    Regenerate => "regenerate", Undo => "undo" });

/// A live run about to start. `options` holds temperature, num_ctx, max_turns, max_attempts,
/// the exhaustion policy, judge on/off… as one JSON object.
#[derive(Debug, Clone, Default)]
pub struct NewRun {
    pub topic: String,
    pub model: Option<String>,
    pub endpoint: Option<String>,
    pub api: Option<String>,
    pub options: serde_json::Value,
    pub persona_version: Option<String>,
    pub ruleset_version: Option<String>,
}

/// An attempt, written at its first token so a crash loses at most the unfinished tail.
#[derive(Debug, Clone)]
pub struct NewAttempt {
    pub run_id: i64,
    /// 1-based.
    pub turn: u32,
    /// `yana` or `ayu`.
    pub speaker: String,
    /// 1-based.
    pub attempt: u32,
    /// The text so far (the first token or tokens).
    pub text: String,
    pub tokens: u32,
    /// The guidance sent with this attempt's prompt, if any.
    pub guidance: Option<String>,
    pub prompt_hash: Option<String>,
    /// When the request was sent.
    pub started_at: SystemTime,
    pub first_token_ms: Option<u64>,
}

/// How an attempt ended. `verdict` is `serde_json::to_value(&director::Verdict)`; `judge` the
/// judge's scores as JSON.
#[derive(Debug, Clone)]
pub struct AttemptOutcome {
    pub state: AttemptState,
    pub text: String,
    pub tokens: Option<u32>,
    pub status: Option<Status>,
    pub verdict: Option<serde_json::Value>,
    pub judge: Option<serde_json::Value>,
    pub judge_raw: Option<String>,
    pub latency_ms: Option<u64>,
    pub error: Option<String>,
    /// Why streaming was given up for one non-stream call, when it was (migration 006).
    pub fallback: Option<String>,
}

impl AttemptOutcome {
    /// A finished, not yet judged attempt.
    pub fn done(text: impl Into<String>) -> AttemptOutcome {
        AttemptOutcome {
            state: AttemptState::Done,
            text: text.into(),
            tokens: None,
            status: None,
            verdict: None,
            judge: None,
            judge_raw: None,
            latency_ms: None,
            error: None,
            fallback: None,
        }
    }
}

/// Markers a committed turn can carry (the session's own type).
/// How a turn came to be committed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TurnFlags {
    /// Every attempt was RETRY and the exhaustion policy picked one.
    pub exhausted: bool,
    /// Retries stopped early because the same reasons repeated.
    pub futile: bool,
    /// The run was held and the reviewer picked this attempt.
    pub held: bool,
    /// The leak review rejected the picked attempt: her fallback line was committed in its
    /// place (marked for review); the rejected text stays only as that attempt, never history.
    #[serde(default)]
    pub withheld: bool,
}

/// The committed line of a turn.
#[derive(Debug, Clone)]
pub struct TurnCommit {
    pub run_id: i64,
    pub turn: u32,
    pub speaker: String,
    pub attempt_id: Option<i64>,
    pub text: String,
    pub status: Status,
    pub flags: TurnFlags,
    pub hook: Option<String>,
    pub hook_depth: Option<u32>,
}

/// A reviewer action.
#[derive(Debug, Clone)]
pub struct NewAction {
    pub run_id: i64,
    pub turn: Option<u32>,
    pub attempt_id: Option<i64>,
    pub kind: ActionKind,
    pub payload: serde_json::Value,
}

/// One line of `kakeai runs`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunSummary {
    pub id: i64,
    pub started_at: String,
    pub topic: String,
    pub model: Option<String>,
    pub turns: u32,
    pub status: RunStatus,
    pub source: Option<String>,
    /// `compare 3 sample` or `probe`: a run made by a comparison or a vault probe, not a
    /// conversation to review (issue 23 item 10).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sample: Option<String>,
}

/// What makes a stored run a sample (SQL over `runs r`), for listings.
pub const SAMPLE_SQL: &str = "CASE WHEN json_valid(r.options) AND json_extract(r.options, '$.compare') IS NOT NULL \
     THEN 'compare ' || json_extract(r.options, '$.compare') || ' sample' \
     WHEN json_valid(r.options) AND json_extract(r.options, '$.probe') IS NOT NULL \
     THEN 'probe' ELSE NULL END";

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunRow {
    pub id: i64,
    pub topic: String,
    pub model: Option<String>,
    pub endpoint: Option<String>,
    pub api: Option<String>,
    pub options: serde_json::Value,
    pub persona_version: Option<String>,
    pub ruleset_version: Option<String>,
    pub started_at: String,
    pub ended_at: Option<String>,
    pub status: RunStatus,
    pub error: Option<String>,
    pub source: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AttemptRow {
    pub id: i64,
    pub turn: u32,
    pub speaker: String,
    pub attempt: u32,
    pub state: AttemptState,
    /// `None` only for imported attempts whose text the source did not log.
    pub text: Option<String>,
    pub status: Option<Status>,
    pub verdict: Option<serde_json::Value>,
    pub judge: Option<serde_json::Value>,
    pub judge_raw: Option<String>,
    pub guidance: Option<String>,
    pub prompt_hash: Option<String>,
    pub started_at: String,
    pub first_token_ms: Option<u64>,
    pub latency_ms: Option<u64>,
    pub tokens: Option<u32>,
    pub error: Option<String>,
    pub origin: Option<serde_json::Value>,
    /// Why streaming fell back to one non-stream call (migration 006).
    pub fallback: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TurnRow {
    pub turn: u32,
    pub speaker: String,
    pub attempt_id: Option<i64>,
    pub text: String,
    pub status: Status,
    pub flags: TurnFlags,
    pub hook: Option<String>,
    pub hook_depth: Option<u32>,
    pub committed_at: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ActionRow {
    pub id: i64,
    pub turn: Option<u32>,
    pub attempt_id: Option<i64>,
    pub kind: ActionKind,
    pub payload: serde_json::Value,
    pub created_at: String,
    pub source: Option<String>,
    /// Who made it (`--reviewer`); None when unnamed or imported.
    pub reviewer: Option<String>,
}

/// A whole run: turns and attempts ordered by turn then attempt, actions in creation order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunRecord {
    pub run: RunRow,
    pub turns: Vec<TurnRow>,
    pub attempts: Vec<AttemptRow>,
    pub actions: Vec<ActionRow>,
}

impl RunRecord {
    /// The attempts of one turn, in attempt order.
    /// The attempts of one turn: a binary search when the rows are in turn order (as read from
    /// the store), a scan otherwise — so exporting a long run stays linear.
    pub fn attempts_of(&self, turn: u32) -> impl Iterator<Item = &AttemptRow> {
        let rows: &[AttemptRow] = if self.attempts.is_sorted_by_key(|a| a.turn) {
            let from = self.attempts.partition_point(|a| a.turn < turn);
            let to = self.attempts.partition_point(|a| a.turn <= turn);
            &self.attempts[from..to]
        } else {
            &self.attempts
        };
        rows.iter().filter(move |a| a.turn == turn)
    }
}
