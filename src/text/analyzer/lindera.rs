//! TEMPORARY STUB — replaced by the real lindera/IPADIC analyzer.
use super::{Analyzer, AnalyzerKind, Morpheme};
use std::path::{Path, PathBuf};
#[derive(Debug, thiserror::Error)]
pub enum DictError {
    #[error("stub")]
    Stub,
    #[error("not found")]
    SourcesNotFound { searched: Vec<PathBuf> },
}
pub fn default_dict_dir() -> Option<PathBuf> {
    None
}
pub fn find_ipadic_sources() -> Option<PathBuf> {
    None
}
pub fn candidate_source_dirs() -> Vec<PathBuf> {
    Vec::new()
}
pub fn is_valid_source_dir(_dir: &Path) -> bool {
    false
}
pub fn is_installed(_dir: &Path) -> bool {
    false
}
pub struct BuildReport {
    pub out_dir: PathBuf,
    pub source_dir: PathBuf,
    pub seconds: f64,
    pub bytes_on_disk: u64,
}
pub fn build_dictionary(_src: &Path, _out: &Path) -> Result<BuildReport, DictError> {
    Err(DictError::Stub)
}
pub struct LinderaAnalyzer;
impl LinderaAnalyzer {
    pub fn load(_dir: &Path) -> Result<Self, DictError> {
        Err(DictError::Stub)
    }
}
impl Analyzer for LinderaAnalyzer {
    fn kind(&self) -> AnalyzerKind {
        AnalyzerKind::LinderaIpadic
    }
    fn tokenize(&self, _t: &str) -> Vec<Morpheme> {
        Vec::new()
    }
}
