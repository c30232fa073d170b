//! What committed lines carry to later turns: guidance split by who it is for, and the owner's
//! instruction with the turn it targets.

/// Guidance carried from committed lines to later turns.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Carry {
    /// For whoever speaks next: what concerns the conversation.
    pub next: Vec<String>,
    /// Per character id: critiques of her last committed line, for her own next turn.
    pub own: std::collections::BTreeMap<String, Vec<String>>,
}

/// An owner instruction and the turn it is for.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Owner {
    pub(super) turn: usize,
    pub(super) text: String,
}
