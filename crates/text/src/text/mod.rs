//! The Japanese text pipeline: normalisation with an offset map, sentence and line counting,
//! morphological analysis and the per-text analysis cache.

pub mod analysis;
pub mod analyzer;
pub mod chars;
pub mod echo;
pub mod fold;
pub mod normalize;
pub mod sanitize;
pub mod sentences;
pub mod shared_cache;
pub mod testing;
pub mod topics;
pub mod variants;
pub mod width;

pub use analysis::{Analysis, AnalysisCache};
pub use analyzer::{Analyzer, AnalyzerKind};
pub use shared_cache::SharedCache;
