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

impl GenStats {
    /// Streaming speed in tokens per second after the first token (as llama-server's and
    /// Ollama's own timings count it); None when the server gave no count or the reply came in
    /// one piece.
    pub fn tokens_per_s(&self) -> Option<f64> {
        let first = self.first_token_ms?;
        let streaming = self.latency_ms.checked_sub(first).filter(|ms| *ms > 0)?;
        (self.tokens > 1).then(|| f64::from(self.tokens - 1) * 1000.0 / streaming as f64)
    }

    /// `38 tokens · first token 2.31 s · 18.4 tokens/s` for the detail pane and headless.
    /// None when the server counted no tokens or the times are not a stream's.
    pub fn speed_line(&self) -> Option<String> {
        let first = self.first_token_ms?;
        if self.tokens == 0 || self.latency_ms < first {
            return None;
        }
        let speed = self
            .tokens_per_s()
            .map_or(String::new(), |v| format!(" · {v:.1} tokens/s"));
        Some(format!(
            "{} tokens · first token {:.2} s · {:.2} s in all{speed}",
            self.tokens,
            first as f64 / 1000.0,
            self.latency_ms as f64 / 1000.0
        ))
    }
}

#[cfg(test)]
mod speed_tests {
    use super::GenStats;

    #[test]
    fn speed_counts_tokens_after_the_first() {
        for (tokens, first, latency, want) in [
            (41u32, 2000u64, 4000u64, Some(20.0)),
            (1, 500, 900, None),
            (10, 800, 800, None),
            (0, 100, 200, None),
        ] {
            let s = GenStats {
                tokens,
                first_token_ms: Some(first),
                latency_ms: latency,
                ..GenStats::default()
            };
            assert_eq!(s.tokens_per_s(), want, "{tokens} {first} {latency}");
        }
        let none = GenStats::default();
        assert_eq!(none.speed_line(), None);
        // A stored attempt with no token count (an import, an old run) shows nothing.
        let uncounted = GenStats {
            first_token_ms: Some(300),
            ..GenStats::default()
        };
        assert_eq!(uncounted.speed_line(), None);
        let s = GenStats {
            tokens: 41,
            first_token_ms: Some(2000),
            latency_ms: 4000,
            ..GenStats::default()
        };
        assert_eq!(
            s.speed_line().as_deref(),
            Some("41 tokens · first token 2.00 s · 4.00 s in all · 20.0 tokens/s")
        );
    }
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

pub use crate::store::TurnFlags;

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
