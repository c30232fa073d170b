//! Leak review (placeholder until the review engine lands).

use serde::{Deserialize, Serialize};

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Default,
)]
#[serde(rename_all = "lowercase")]
pub enum Importance {
    Critical,
    High,
    #[default]
    Medium,
    Low,
}
