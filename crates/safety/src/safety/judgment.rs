//! What a judgment says: block or respond, at which layer and why, the context type, and the
//! trace of every layer (serialised as the `kakeai safety judge` contract).

use serde::Serialize;

use super::context_judge::{ContextType, LlmVerdict};
use super::contextual::Signal;
use super::data::L4Mode;
use super::layers::Hit;
use super::types::Category;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    Block,
    Respond,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    StaticNg,
    ContextualNg,
    PatternNg,
    Attack,
}

impl Reason {
    /// The name the JSON uses (`static_ng`, …), for logs and traces.
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::StaticNg => "static_ng",
            Reason::ContextualNg => "contextual_ng",
            Reason::PatternNg => "pattern_ng",
            Reason::Attack => "attack",
        }
    }
}

/// What one layer did with the message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StepOutcome {
    /// Ran; nothing found.
    Pass,
    /// Ran; only safe (informational) hits.
    Info,
    /// Raised the message to Layer 4.
    Raise,
    /// Layer 2: banter.
    Banter,
    /// Layer 2: the user spoke of themselves.
    SelfDirected,
    Block,
    /// Layer 4 answered.
    Answered,
    /// Not run (the note says why).
    Skipped,
    /// Layer 4 was asked and gave nothing usable; the static result was used.
    Failed,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TraceStep {
    pub layer: u8,
    pub name: &'static str,
    pub outcome: StepOutcome,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub hits: Vec<Hit>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub signals: Vec<Signal>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub llm: Option<LlmVerdict>,
    /// The model's reply when it could not be read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw: Option<String>,
    /// Japanese, for the reviewer.
    pub note: String,
}

impl TraceStep {
    pub(super) fn new(layer: u8, outcome: StepOutcome, note: String) -> TraceStep {
        TraceStep {
            layer,
            name: LAYER_NAMES[usize::from(layer.clamp(1, 4)) - 1],
            outcome,
            hits: Vec::new(),
            signals: Vec::new(),
            llm: None,
            raw: None,
            note,
        }
    }
}

const LAYER_NAMES: [&str; 4] = ["static_ng", "contextual_ng", "pattern", "llm_context"];

/// The verdict on one user message (serialises as the `kakeai safety judge` contract, less
/// the `id`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Judgment {
    pub action: Action,
    pub layer: Option<u8>,
    pub reason: Option<Reason>,
    pub context_type: Option<ContextType>,
    pub trace: Vec<TraceStep>,
}

impl Judgment {
    pub fn is_blocked(&self) -> bool {
        self.action == Action::Block
    }

    /// Every hit of every layer, shadowed ones included.
    pub fn hits(&self) -> impl Iterator<Item = &Hit> {
        self.trace.iter().flat_map(|s| s.hits.iter())
    }
}

/// How the layers are combined (assets/safety/policy.toml).
#[derive(Debug, Clone, PartialEq)]
pub struct Policy {
    pub l4: L4Mode,
    pub min_confidence: f64,
    pub temperature: f32,
    pub fail_closed: Vec<Category>,
}

/// Why Layer 4 was not asked.
#[derive(Debug, Clone, PartialEq)]
pub enum L4Skip {
    /// No model was given (`--no-llm`, or the sync `judge`).
    NoLlm,
    /// The endpoint failed earlier; the caller stopped asking it.
    EndpointDown(String),
}
