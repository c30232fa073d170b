//! Shared helpers for the integration tests.
#![allow(dead_code)]

pub mod both;
pub mod netns;
pub mod pg;
pub mod pii;
pub mod seeded;
pub mod stores;
pub mod terminal;
pub mod tmux;
pub mod tui;

use std::sync::{Arc, OnceLock};

use kakeai::director::{self, ContextTurn, RuleId, RuleSet, Status, ToneMode, Verdict};
use kakeai::text::analyzer::fallback::FallbackAnalyzer;
use kakeai::text::analyzer::lindera;
use kakeai::text::{Analysis, Analyzer};

pub fn rules(mode: ToneMode) -> RuleSet {
    RuleSet::builtin()
        .and_then(|r| r.with_tone_mode(mode))
        .expect("embedded rules load")
}

pub fn judge_with(
    an: &dyn Analyzer,
    mode: ToneMode,
    speaker: &str,
    text: &str,
    ctx: &[(&str, &str)],
) -> Verdict {
    let r = rules(mode);
    let c = r.character(speaker).expect("known speaker");
    let context: Vec<ContextTurn> = ctx
        .iter()
        .map(|(s, t)| ContextTurn {
            speaker: s.to_string(),
            analysis: Arc::new(Analysis::new(t)),
        })
        .collect();
    director::judge(&r, an, c, &Analysis::new(text), &context)
}

pub fn judge(speaker: &str, text: &str) -> Verdict {
    judge_with(&FallbackAnalyzer, ToneMode::Markers, speaker, text, &[])
}

pub fn judge_v(speaker: &str, text: &str) -> Verdict {
    judge_with(&FallbackAnalyzer, ToneMode::Violations, speaker, text, &[])
}

/// Status of the given rule's worst finding, PASS when it has none.
pub fn rule_status(v: &Verdict, rule: RuleId) -> Status {
    v.findings
        .iter()
        .filter(|f| f.rule == rule)
        .map(|f| f.status)
        .max()
        .unwrap_or(Status::Pass)
}

/// The lindera analyzer built from MeCab IPADIC sources into a per-process temp dir. None when
/// the sources are missing — except under CI=true, where that is a test failure.
pub fn lindera() -> Option<&'static dyn Analyzer> {
    static CELL: OnceLock<Option<lindera::LinderaAnalyzer>> = OnceLock::new();
    CELL.get_or_init(|| {
        let Some(src) = lindera::find_ipadic_sources() else {
            if std::env::var("CI").as_deref() == Ok("true") {
                panic!("CI=true but no MeCab IPADIC sources found: .ci/run must apt-get install mecab-ipadic");
            }
            eprintln!("note: MeCab IPADIC sources not found; skipping lindera tests");
            return None;
        };
        // Shared with the unit tests; rebuilt only when missing or stale.
        let dir = std::env::temp_dir().join("kakeai-test-ipadic");
        if !lindera::is_installed(&dir) {
            lindera::build_dictionary(&src, &dir).expect("dictionary builds");
        }
        Some(lindera::LinderaAnalyzer::load(&dir).expect("dictionary loads"))
    })
    .as_ref()
    .map(|a| a as &dyn Analyzer)
}

/// The same dictionary as [`lindera`], loaded once per process behind an `Arc` (what
/// `PiiMasker::with_analyzer` takes).
pub fn lindera_arc() -> Option<Arc<dyn Analyzer>> {
    static CELL: OnceLock<Option<Arc<dyn Analyzer>>> = OnceLock::new();
    CELL.get_or_init(|| {
        lindera()?;
        let dir = std::env::temp_dir().join("kakeai-test-ipadic");
        let an = lindera::LinderaAnalyzer::load(&dir).expect("dictionary loads");
        Some(Arc::new(an) as Arc<dyn Analyzer>)
    })
    .clone()
}

/// Three turns that all dwell on the ferris wheel (for topic_loop).
pub const FERRIS_WHEEL_TURNS: [(&str, &str); 3] = [
    ("yana", "観覧車、乗りたいな！"),
    ("ayu", "観覧車は一周十五分です。"),
    ("yana", "観覧車のてっぺんで写真撮ろ！"),
];

/// あゆ dwelling on it once more.
pub const FERRIS_WHEEL_AGAIN: &str = "観覧車の窓は少し曇っていますね。";
