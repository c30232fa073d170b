//! Leak review of a work for one reader: the review input built from the vault (every secret
//! and foreshadowing of level ≤ 2 for that reader, every setting text for direct quotation),
//! and the Director rule `leak` (rejected → RETRY, warning → WARN) with char spans.

use super::leak::{
    LeakIssue, LeakSecret, Review, ReviewConfig, ReviewInput, ReviewResult, Reviewer, SettingText,
};
use super::load::Work;
use crate::director::{Finding, RuleId, Status};

impl Work {
    /// What a text by `reader` is checked against. Level-0/1/2 sections count as secrets too
    /// (their text must not surface); every text, whatever its level, counts for quotation.
    pub fn review_input(&self, reader: Option<&str>) -> ReviewInput {
        let mut secrets = Vec::new();
        let mut settings = Vec::new();
        let mut hidden = 0;
        for it in self.items(reader) {
            // Foreshadowing sections marked below their foreshadowing: level 0, unnamed.
            for text in it.cut.iter().filter(|t| !t.trim().is_empty()) {
                hidden += 1;
                let key = format!("非公開の設定{hidden}");
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
            // surface in stored findings, run events or exports: it goes by a neutral ordinal.
            let hidden_level = it.level.get() == 0;
            let label = if hidden_level {
                hidden += 1;
                format!("非公開の設定{hidden}")
            } else {
                it.key.clone()
            };
            settings.push(SettingText {
                key: label.clone(),
                text: it.text.clone(),
                level: it.level.get(),
            });
            if it.level.get() <= 2 {
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
        ReviewInput {
            secrets,
            settings,
            forbidden_keywords_global: self.visibility.forbidden_keywords_global.clone(),
        }
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
    review
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
        .collect()
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
        ReviewResult::Approved => Status::Pass,
    }
}
