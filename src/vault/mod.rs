//! Secret visibility (seed 004): leak review of what a sister wrote against the vault's secrets.

pub mod leak;
pub mod similarity;
