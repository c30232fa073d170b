//! Did a change make the dialogue better? Paired A/B comparison of a stored run against a
//! variant (issue 15 §1): variants (`variant`), the per-turn rebuild and re-judge (`prepare`,
//! `paired`), ranking and summary (`outcome`), exact statistics (`stats`), the stored
//! comparisons (`db`), unpaired runs on topics (`unpaired`) and the printed report (`report`).

pub mod db;
pub mod outcome;
pub mod paired;
pub mod prepare;
pub mod report;
pub mod stats;
pub mod unpaired;
pub mod variant;

pub use outcome::{Change, Side, Summary, TurnRow};
pub use variant::Variant;

/// Exit codes of `kakeai compare`.
pub const EXIT_OK: i32 = 0;
pub const EXIT_REGRESSION: i32 = 1;
pub const EXIT_BAD_INPUT: i32 = 2;
pub const EXIT_ENDPOINT: i32 = 3;
