//! What a run produces, as the session reports it: attempts, committed turns, generation
//! statistics. These are what the store persists and the headless mode prints.

use serde::{Deserialize, Serialize};

use super::topic::DepthStep;
use crate::director::judge::JudgeOutcome;
use crate::director::{Status, Verdict};

/// Measurements of one generation, filled in by the driver.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GenStats {
    pub tokens: u32,
    pub first_token_ms: Option<u64>,
    pub latency_ms: u64,
    /// The stream failed and a non-stream call produced the text.
    pub fell_back: bool,
    /// The 400-character cap cut the reply.
    pub capped: bool,
    /// Why streaming was given up for one non-stream call, when it was.
    #[serde(default)]
    pub fallback: Option<String>,
    /// The token limit cut the reply: what was dropped (see `duo::cut`).
    #[serde(default)]
    pub length_cut: Option<super::cut::LengthCut>,
    /// The prompt's size in tokens as the server counted it.
    #[serde(default)]
    pub prompt_tokens: Option<u32>,
    /// What the prompt left out to fit the context (None: not known, e.g. a replay).
    #[serde(default)]
    pub fit: Option<super::fitting::FitReport>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AttemptRecord {
    pub turn: usize,
    pub speaker: String,
    /// 1-based; numbering continues across regenerations of the same turn.
    pub attempt: usize,
    pub text: String,
    /// Static rules plus the judge's finding; status is the worst of both.
    pub verdict: Verdict,
    pub judge: Option<JudgeOutcome>,
    /// The Director guidance sent with this attempt's prompt.
    pub guidance: Vec<String>,
    pub prompt_hash: String,
    pub stats: GenStats,
    /// Conversation keywords of the text (analyzer nouns).
    pub keywords: Vec<String>,
    /// The text's analysis (not stored: it is rebuilt from the text when needed).
    #[serde(skip)]
    pub analysis: Option<std::sync::Arc<crate::text::Analysis>>,
}

impl AttemptRecord {
    pub fn judge_mean(&self) -> f64 {
        self.judge
            .as_ref()
            .and_then(|j| j.scores.as_ref())
            .map(|s| s.mean)
            .unwrap_or(0.0)
    }

    pub fn severe_findings(&self) -> usize {
        self.verdict
            .findings
            .iter()
            .filter(|f| f.status == Status::Retry)
            .count()
    }
}

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

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TurnRecord {
    pub turn: usize,
    pub speaker: String,
    pub attempt: usize,
    pub text: String,
    pub verdict: Verdict,
    pub flags: TurnFlags,
    pub hook: Option<String>,
    pub depth: u8,
    pub step: DepthStep,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunEnd {
    Completed,
    Stopped,
    Failed,
}

impl RunEnd {
    pub fn as_str(self) -> &'static str {
        match self {
            RunEnd::Completed => "completed",
            RunEnd::Stopped => "stopped",
            RunEnd::Failed => "failed",
        }
    }
}
