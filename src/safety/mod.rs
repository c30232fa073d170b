//! User-message safety: PII masking before anything is stored or sent (issue 6 §3, seed 003 §6).

pub mod pii;
