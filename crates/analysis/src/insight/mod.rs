//! Insights (issue 12 §2, seed 003 §8): RAKE keywords over segmented Japanese, LLM themes in
//! `THEME / JTBD / SUMMARY / SEVERITY / EVIDENCE` lines, and insight cards with a confidence
//! label — from finished interviews, or from reviewers' feedback on duo runs.

pub mod analyze;
pub mod cards;
pub mod feedback;
pub mod rake;
pub mod stopwords;
pub mod store;
pub mod themes;

pub use cards::{Card, Deck, Label};
pub use rake::Keyword;
pub use themes::{Severity, Theme};
