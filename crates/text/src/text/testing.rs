//! Test support shared by every crate's tests: the lindera analyzer over IPADIC built from
//! MeCab's sources into a shared temp dir (once per process), or `None` without the sources
//! (under CI=true they are required). Not part of the product.

use std::sync::{Arc, OnceLock};

use super::analyzer::{Analyzer, lindera};

/// The lindera analyzer over the test dictionary (shared temp dir), or `None` without sources.
#[doc(hidden)]
pub fn ipadic() -> Option<Arc<dyn Analyzer>> {
    static CELL: OnceLock<Option<Arc<dyn Analyzer>>> = OnceLock::new();
    CELL.get_or_init(|| {
        let Some(src) = lindera::find_ipadic_sources() else {
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "CI needs MeCab IPADIC sources"
            );
            eprintln!("note: no MeCab IPADIC sources; reading tests skipped");
            return None;
        };
        let dir = std::env::temp_dir().join("kakeai-test-ipadic");
        if !lindera::is_installed(&dir) {
            lindera::build_dictionary(&src, &dir).ok()?;
        }
        let a = lindera::LinderaAnalyzer::load(&dir).ok()?;
        Some(Arc::new(a) as Arc<dyn Analyzer>)
    })
    .clone()
}
