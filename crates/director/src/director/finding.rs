//! The one data model every check speaks: `Status`, `RuleId`, `Finding`, `ToneScore`, `Verdict`.

use std::fmt;
use std::ops::Range;

use serde::{Deserialize, Serialize};

use crate::text::AnalyzerKind;

/// Severity of a finding or verdict. `Pass < Warn < Retry`; `Modify` is internal (seed 001 §1)
/// and `Unscored` marks a judge that did not answer — it is never counted as a pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Status {
    /// Informational only; never affects the verdict.
    Info,
    Pass,
    Unscored,
    Warn,
    Modify,
    Retry,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Info => "INFO",
            Status::Pass => "PASS",
            Status::Unscored => "UNSCORED",
            Status::Warn => "WARN",
            Status::Modify => "MODIFY",
            Status::Retry => "RETRY",
        }
    }

    pub fn parse(s: &str) -> Option<Status> {
        Some(match s.to_ascii_uppercase().as_str() {
            "INFO" => Status::Info,
            "PASS" => Status::Pass,
            "UNSCORED" => Status::Unscored,
            "WARN" => Status::Warn,
            "MODIFY" => Status::Modify,
            "RETRY" => Status::Retry,
            _ => return None,
        })
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Stable identifier of the check that produced a finding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RuleId {
    Empty,
    ScriptFormat,
    Lines,
    Setting,
    Praise,
    Scatter,
    Contradiction,
    Tone,
    ForbiddenWord,
    PromptLeak,
    TopicLoop,
    EarlyTopicShift,
    /// The LLM 5-aspect judge (seed 001 §7).
    Judge,
    /// Leak review against the story vault (seed 004 §5–§6).
    Leak,
    /// Layer 5 world-view check: meta talk that breaks the fiction (issue 6 §2).
    Worldview,
    /// A line that is not mostly Japanese (issue 13 §4).
    Language,
    /// A line that reads back the prompt that produced it (issue 13 §4).
    PromptEcho,
    /// A reply cut by the token limit (finish_reason "length"; issue 13 §4).
    TokenLimit,
    /// An interviewer's reply: one question per turn, at most 400 characters (issue 12 §1).
    InterviewQuestion,
}

impl RuleId {
    pub const ALL: [RuleId; 19] = [
        RuleId::Empty,
        RuleId::ScriptFormat,
        RuleId::Lines,
        RuleId::Setting,
        RuleId::Praise,
        RuleId::Scatter,
        RuleId::Contradiction,
        RuleId::Tone,
        RuleId::ForbiddenWord,
        RuleId::PromptLeak,
        RuleId::TopicLoop,
        RuleId::EarlyTopicShift,
        RuleId::Judge,
        RuleId::Leak,
        RuleId::Worldview,
        RuleId::Language,
        RuleId::PromptEcho,
        RuleId::TokenLimit,
        RuleId::InterviewQuestion,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            RuleId::Empty => "empty",
            RuleId::ScriptFormat => "script_format",
            RuleId::Lines => "lines",
            RuleId::Setting => "setting",
            RuleId::Praise => "praise",
            RuleId::Scatter => "scatter",
            RuleId::Contradiction => "contradiction",
            RuleId::Tone => "tone",
            RuleId::ForbiddenWord => "forbidden_word",
            RuleId::PromptLeak => "prompt_leak",
            RuleId::TopicLoop => "topic_loop",
            RuleId::EarlyTopicShift => "early_topic_shift",
            RuleId::Judge => "judge",
            RuleId::Leak => "leak",
            RuleId::Worldview => "worldview",
            RuleId::Language => "language",
            RuleId::PromptEcho => "prompt_echo",
            RuleId::TokenLimit => "token_limit",
            RuleId::InterviewQuestion => "interview_question",
        }
    }
}

impl fmt::Display for RuleId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One observation about one utterance. `span` is in char offsets of the ORIGINAL text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    pub rule: RuleId,
    pub status: Status,
    /// Japanese explanation for the reviewer.
    pub message: String,
    /// Japanese instruction usable verbatim as a regeneration hint.
    pub suggestion: String,
    pub span: Option<[usize; 2]>,
    /// What matched (a word, a count…), for rule tuning.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<String>,
}

impl Finding {
    pub fn new(rule: RuleId, status: Status, message: String, suggestion: String) -> Self {
        Finding {
            rule,
            status,
            message,
            suggestion,
            span: None,
            evidence: None,
        }
    }

    pub fn with_span(mut self, span: Option<Range<usize>>) -> Self {
        self.span = span.map(|r| [r.start, r.end]);
        self
    }

    pub fn with_evidence(mut self, evidence: impl Into<String>) -> Self {
        self.evidence = Some(evidence.into());
        self
    }
}

/// Seed 001 §4: `score = marker + vocab + style`, each 0 or 1.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToneScore {
    pub marker: u8,
    pub vocab: u8,
    pub style: u8,
    pub score: u8,
}

/// The judgement of one utterance: status is the maximum of the findings' statuses.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    pub status: Status,
    pub findings: Vec<Finding>,
    pub tone: ToneScore,
    pub lines: usize,
    pub sentences: usize,
    pub topics: usize,
    pub ruleset: String,
    pub analyzer: AnalyzerKind,
}

impl Verdict {
    /// The overall status from a set of findings: informational findings never count.
    pub fn status_of(findings: &[Finding]) -> Status {
        findings
            .iter()
            .map(|f| f.status)
            .filter(|s| *s != Status::Info)
            .max()
            .unwrap_or(Status::Pass)
    }

    /// Findings that are not PASS (the ones `check` prints).
    pub fn reported_findings(&self) -> impl Iterator<Item = &Finding> {
        self.findings.iter().filter(|f| f.status != Status::Pass)
    }
}
