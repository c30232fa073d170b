//! Leak review of a work for one reader: the review input built from the vault (every secret
//! and foreshadowing of level ≤ 2 for that reader, every setting text for direct quotation),
//! and the Director rule `leak` (rejected → RETRY, warning → WARN) with char spans.

use super::leak::{
    JudgeStatus, LeakIssue, LeakSecret, MODEL_CHECK, READINGS_CHECK, Review, ReviewConfig,
    ReviewInput, ReviewResult, Reviewer, SEMANTIC_CHECK, SettingText,
};
use super::load::Work;
use crate::director::{Finding, RuleId, Status};

impl Work {
    /// What a text by `reader` is checked against. Level-0/1/2 sections count as secrets too
    /// (their text must not surface); every text, whatever its level, counts for quotation.
    pub fn review_input(&self, reader: Option<&str>) -> ReviewInput {
        let mut secrets = Vec::new();
        let mut settings = Vec::new();
        let mut readings_in: Vec<(String, Vec<String>)> = Vec::new();
        for it in self.items(reader) {
            // Foreshadowing sections marked below their foreshadowing: level 0, unnamed.
            for (section, text) in it.cut.iter().filter(|(_, t)| !t.trim().is_empty()) {
                let key = hidden_label(&format!("{}/{section}", it.key));
                settings.push(SettingText {
                    key: key.clone(),
                    text: text.clone(),
                    level: 0,
                });
                secrets.push(LeakSecret {
                    id: key,
                    entity: String::new(),
                    content: text.clone(),
                    level: 0,
                    importance: it.importance,
                    forbidden_keywords: Vec::new(),
                    allowed_expressions: Vec::new(),
                    subtlety: it.subtlety.clamp(1, 10) as u8,
                });
            }
            if it.text.trim().is_empty() {
                continue;
            }
            // Nothing naming a level-0 item (section name, secret or foreshadowing id) may
            // surface in stored findings, run events or exports: it goes by a neutral label
            // derived from its key, so adding an item never renumbers the others.
            let hidden_level = it.level.get() == 0;
            let label = if hidden_level {
                hidden_label(&it.key)
            } else {
                it.key.clone()
            };
            settings.push(SettingText {
                key: label.clone(),
                text: it.text.clone(),
                level: it.level.get(),
            });
            if it.level.get() <= 2 {
                readings_in.extend(it.keyword_readings.iter().cloned());
                secrets.push(LeakSecret {
                    id: match &it.secret_id {
                        Some(id) if !hidden_level => id.clone(),
                        _ => label,
                    },
                    entity: it.entity_name.clone(),
                    content: it.text.clone(),
                    level: it.level.get(),
                    importance: it.importance,
                    forbidden_keywords: it.forbidden_keywords.clone(),
                    allowed_expressions: it.allowed_expressions.clone(),
                    subtlety: it.subtlety.clamp(1, 10) as u8,
                });
            }
        }
        let mut keyword_readings = std::collections::BTreeMap::<String, Vec<String>>::new();
        let global = &self.visibility.forbidden_keywords_global;
        for (word, rs) in readings_in
            .into_iter()
            .chain(super::resolve::readings(global))
        {
            let e = keyword_readings.entry(word).or_default();
            for r in rs {
                if !e.contains(&r) {
                    e.push(r);
                }
            }
        }
        ReviewInput {
            secrets,
            settings,
            forbidden_keywords_global: super::model::words(global),
            keyword_readings,
        }
    }
}

/// The neutral label of a level-0 item: 非公開の設定 and 6 hex digits of a hash of its key
/// (`characters/やな/隠し設定`). Stable when items are added, removed or reordered; the
/// owner can map it back with [`Work::hidden_owner`].
pub fn hidden_label(key: &str) -> String {
    use sha2::{Digest, Sha256};
    let d = Sha256::digest(key.as_bytes());
    let hex: String = d.iter().take(3).map(|b| format!("{b:02x}")).collect();
    format!("{HIDDEN_PREFIX}{hex}")
}

/// What every level-0 label starts with.
pub const HIDDEN_PREFIX: &str = "非公開の設定#";

impl Work {
    /// For the owner only (never a prompt, a stored finding or an export): the key of the
    /// level-0 item behind a neutral label, searched over both readers' views.
    pub fn hidden_owner(&self, label: &str) -> Option<String> {
        if !label.starts_with(HIDDEN_PREFIX) {
            return None;
        }
        let readers = [None, Some("yana"), Some("ayu")];
        readers.iter().find_map(|r| {
            self.items(*r).into_iter().find_map(|it| {
                if hidden_label(&it.key) == label {
                    return Some(it.key.clone());
                }
                it.cut.iter().find_map(|(section, _)| {
                    let k = format!("{}/{section}", it.key);
                    (hidden_label(&k) == label).then_some(k)
                })
            })
        })
    }
}

impl Work {
    /// The work's leak review settings (visibility.yaml `review:`), else the defaults.
    pub fn review_config(&self) -> ReviewConfig {
        self.visibility.review.clone().unwrap_or_default()
    }

    /// A compiled reviewer for texts written by `reader`.
    pub fn reviewer(&self, reader: Option<&str>) -> Reviewer {
        Reviewer::new(&self.review_input(reader), &self.review_config())
    }
}

/// The review as Director findings: an issue at or above the reject threshold is RETRY, one at
/// or above the warn threshold WARN, anything below is informational.
///
/// Findings become retry guidance in the speaker's next prompt. A hit on something she may not
/// know (level 0 or 1 for her, or a level-0 setting text) is therefore worded neutrally — naming
/// the keyword would tell her it matters; the span still shows the reviewer where it is.
pub fn findings(review: &Review, input: &ReviewInput, cfg: &ReviewConfig) -> Vec<Finding> {
    let unknown_to_her = |i: &LeakIssue| {
        let by_id = i
            .secret_id
            .as_deref()
            .and_then(|id| input.secrets.iter().find(|s| s.id == id).map(|s| s.level));
        match by_id {
            Some(level) => level <= 1,
            // A quotation names a setting key instead.
            None => input
                .settings
                .iter()
                .any(|s| s.level == 0 && i.detail.contains(s.key.as_str())),
        }
    };
    let mut out: Vec<Finding> = review
        .issues
        .iter()
        .map(|i| {
            let status = if i.severity >= cfg.reject_at {
                Status::Retry
            } else if i.severity >= cfg.warn_at {
                Status::Warn
            } else {
                Status::Info
            };
            finding(i, status, unknown_to_her(i))
        })
        .collect();
    out.push(coverage(review));
    out
}

/// What the evidence of a review's coverage finding starts with.
pub const COVERAGE: &str = "coverage";

/// Is this the finding that says which checks ran (not a leak)?
pub fn is_coverage(f: &Finding) -> bool {
    f.rule == RuleId::Leak
        && f.evidence
            .as_deref()
            .is_some_and(|e| e.starts_with(COVERAGE))
}

/// The finding every review adds, leak or not: its result as the writer reads it, the checks
/// that did not run and why, and the vault version (`coverage <version> unchecked:<names>`).
/// WARN when keyword readings went unchecked (a line is never approved on that basis), else
/// informational. Never guidance for the speaker.
pub fn coverage(review: &Review) -> Finding {
    let mut missing = Vec::new();
    if review.unchecked.iter().any(|c| c == READINGS_CHECK) {
        missing.push(
            "かな読みの照合（IPADIC辞書がありません。`kakeai dict install`、または visibility.yaml の \
             forbidden_keywords に {word: 王家, reading: おうけ} の形で読みを書いてください）"
                .to_string(),
        );
    }
    if review.unchecked.iter().any(|c| c == SEMANTIC_CHECK) {
        let why = review.embeddings.reason().unwrap_or("not run");
        missing.push(format!("意味的類似度チェック（{why}）"));
    }
    let judged = review.unchecked.iter().any(|c| c == MODEL_CHECK);
    if judged {
        missing.push(review.judge.describe());
    }
    let ran = match &review.judge {
        j @ JudgeStatus::Ran { .. } if j.complete() => format!("、{}", j.describe()),
        _ => String::new(),
    };
    let message = if missing.is_empty() {
        format!(
            "漏洩チェック: {}（全項目を実施{ran}）",
            review.result.label()
        )
    } else {
        format!(
            "漏洩チェック: {} — 未実施: {}",
            review.result.label(),
            missing.join("、")
        )
    };
    // A judge that was asked and could not answer is never a quiet pass.
    let status = if review.unchecked.iter().any(|c| c == READINGS_CHECK) || judged {
        Status::Warn
    } else {
        Status::Info
    };
    let unchecked = if review.unchecked.is_empty() {
        "-".to_string()
    } else {
        review.unchecked.join(",")
    };
    let version = if review.vault_version.is_empty() {
        "-"
    } else {
        review.vault_version.as_str()
    };
    Finding::new(RuleId::Leak, status, message, String::new())
        .with_evidence(format!("{COVERAGE} {version} unchecked:{unchecked}"))
}

fn finding(i: &LeakIssue, status: Status, neutral: bool) -> Finding {
    let evidence = match &i.secret_id {
        Some(id) => format!("{} {}", i.kind.as_str(), id),
        None => i.kind.as_str().to_string(),
    };
    let (message, suggestion) = if neutral {
        super::leak::neutral_messages()
    } else {
        (i.detail.clone(), i.suggestion.clone())
    };
    Finding::new(RuleId::Leak, status, message, suggestion)
        .with_span(Some(i.span[0]..i.span[1]))
        .with_evidence(evidence)
}

/// The result a verdict status stands for (for `vault review` on a judged text).
pub fn status_of(result: ReviewResult) -> Status {
    match result {
        ReviewResult::Rejected => Status::Retry,
        ReviewResult::Warning => Status::Warn,
        ReviewResult::Approved | ReviewResult::ApprovedWithoutSemantic => Status::Pass,
    }
}

#[cfg(test)]
#[path = "coverage_tests.rs"]
mod coverage_tests;
