//! Leak review (seed 004 §5–§6): checks a written text against the vault's secrets and setting
//! texts for forbidden keywords, string similarity, direct quotation, over-explicit hints and,
//! with an embedding endpoint, semantic similarity; maps the issues to approved / warning /
//! rejected.
//!
//! Everything is compared after NFKC folding (full/half width, lowercase ASCII); every span is a
//! char range into the ORIGINAL text. Issue messages name keywords, secret ids and setting keys
//! but never a secret's content, since reviews are stored and exported.
//!
//! Allowed expressions are the writer's vetted way to hint: text inside an occurrence of one is
//! never evidence against its secret (keywords, similarity, hints), nor a quotation, nor
//! embedded.

use serde::{Deserialize, Serialize};

#[path = "leak_checks.rs"]
mod checks;
#[path = "leak_embed.rs"]
mod embed;
#[path = "leak_messages.rs"]
mod messages;
#[path = "leak_quote.rs"]
mod quote;
#[path = "leak_romaji.rs"]
pub mod romaji;
#[path = "leak_text.rs"]
mod text;

pub use embed::{EmbedPlan, SentenceSpan, cosine, review_with_embeddings, semantic_issues};

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

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Low,
    Medium,
    High,
    Critical,
}

/// A secret as one reader sees it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LeakSecret {
    pub id: String,
    pub entity: String,
    pub content: String,
    /// Effective level (0..=3) for this reader; level 3 secrets are usable and not checked
    /// (except as a source of direct quotation).
    pub level: u8,
    pub importance: Importance,
    pub forbidden_keywords: Vec<String>,
    pub allowed_expressions: Vec<String>,
    /// 1..=10.
    pub subtlety: u8,
}

/// A section of an entity file, any level; used only for the direct-quotation check.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SettingText {
    /// e.g. "characters/やな/基本情報".
    pub key: String,
    pub text: String,
    pub level: u8,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ReviewInput {
    pub secrets: Vec<LeakSecret>,
    pub settings: Vec<SettingText>,
    /// Words no text may use, whatever the secret (seed 004 §6.2).
    #[serde(default)]
    pub forbidden_keywords_global: Vec<String>,
    /// Kana readings the writer gave for keywords (`{word: 王家, reading: おうけ}`), by word:
    /// matched like spellings, so they work without a dictionary.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub keyword_readings: std::collections::BTreeMap<String, Vec<String>>,
}

/// String-similarity thresholds by importance (seed 004 §5.2): more important, more sensitive.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Thresholds {
    pub critical: f64,
    pub high: f64,
    pub medium: f64,
    pub low: f64,
}

impl Default for Thresholds {
    fn default() -> Self {
        Thresholds {
            critical: 0.55,
            high: 0.60,
            medium: 0.70,
            low: 0.75,
        }
    }
}

impl Thresholds {
    pub fn get(&self, importance: Importance) -> f64 {
        match importance {
            Importance::Critical => self.critical,
            Importance::High => self.high,
            Importance::Medium => self.medium,
            Importance::Low => self.low,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ReviewConfig {
    pub thresholds: Thresholds,
    /// Cosine similarity above which a sentence restates a secret (seed 004 §5.3).
    pub embed_threshold: f64,
    /// Consecutive folded chars (whitespace ignored) that make a direct quotation.
    pub quote_min_chars: usize,
    /// Original chars shown either side of a forbidden keyword.
    pub keyword_context_chars: usize,
    /// A level-2 secret's sentence scoring above this (but not above its similarity
    /// threshold) states the hint too explicitly. 0.40 sits between unrelated sentences about
    /// the same characters (≤ 0.2 on the fixtures) and partial restatements (0.45–0.5).
    pub explicit_hint_threshold: f64,
    /// A level-0/1 secret (one the reader must not be able to guess) whose sentence scores
    /// above this, but not above its similarity threshold, lets a first-time reader guess it
    /// (潜在的暗示, seed 004 §6.3).
    pub latent_hint_threshold: f64,
    /// Rejected when any issue is at least this severe.
    pub reject_at: Severity,
    /// Otherwise a warning when any issue is at least this severe.
    pub warn_at: Severity,
}

impl Default for ReviewConfig {
    fn default() -> Self {
        ReviewConfig {
            thresholds: Thresholds::default(),
            embed_threshold: 0.75,
            quote_min_chars: 20,
            keyword_context_chars: 20,
            explicit_hint_threshold: 0.40,
            latent_hint_threshold: 0.40,
            reject_at: Severity::High,
            warn_at: Severity::Medium,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IssueKind {
    ForbiddenKeyword,
    Similarity,
    SemanticSimilarity,
    DirectQuotation,
    ExplicitHint,
    /// 潜在的暗示: a hidden secret a first-time reader could guess from the text.
    LatentHint,
    /// The chat model, asked per secret, judged that the line reveals it (see `vault::judge`).
    ModelJudged,
}

impl IssueKind {
    pub fn as_str(self) -> &'static str {
        match self {
            IssueKind::ForbiddenKeyword => "forbidden_keyword",
            IssueKind::Similarity => "similarity",
            IssueKind::SemanticSimilarity => "semantic_similarity",
            IssueKind::DirectQuotation => "direct_quotation",
            IssueKind::ExplicitHint => "explicit_hint",
            IssueKind::LatentHint => "latent_hint",
            IssueKind::ModelJudged => "model_judged",
        }
    }

    pub fn severity(self) -> Severity {
        match self {
            IssueKind::ForbiddenKeyword
            | IssueKind::SemanticSimilarity
            | IssueKind::ModelJudged => Severity::Critical,
            IssueKind::Similarity | IssueKind::DirectQuotation => Severity::High,
            IssueKind::ExplicitHint | IssueKind::LatentHint => Severity::Medium,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LeakIssue {
    #[serde(rename = "type")]
    pub kind: IssueKind,
    pub severity: Severity,
    /// "第N段落": N counts non-empty lines (see the paragraph rule in `leak_text.rs`: every line
    /// break starts a paragraph; blank lines only separate).
    pub location: String,
    /// Japanese; names keywords, secret ids and setting keys, never a secret's content.
    pub detail: String,
    /// Japanese.
    pub suggestion: String,
    pub secret_id: Option<String>,
    /// Char offsets `[start, end)` into the reviewed text.
    pub span: [usize; 2],
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
    /// The original text around a forbidden keyword.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReviewResult {
    /// Nothing found, and every check that had something to compare ran.
    Approved,
    /// Nothing found by the checks that ran, but the semantic check (seed 004 §5.3) did not
    /// run: a paraphrase with no forbidden word may have gone unseen.
    #[serde(rename = "approved_without_semantic_check")]
    ApprovedWithoutSemantic,
    Warning,
    Rejected,
}

impl ReviewResult {
    /// What the writer reads (CLI, detail pane, scorecard, run header).
    pub fn label(self) -> &'static str {
        match self {
            ReviewResult::Approved => "approved",
            ReviewResult::ApprovedWithoutSemantic => "approved without the semantic check",
            ReviewResult::Warning => "warning",
            ReviewResult::Rejected => "rejected",
        }
    }
}

/// The names of checks in [`Review::unchecked`].
pub const SEMANTIC_CHECK: &str = "semantic_similarity";
/// Kana readings of forbidden keywords (おうけ for 王家).
pub const READINGS_CHECK: &str = "readings";
/// The chat model asked per secret (see `vault::judge`).
pub const MODEL_CHECK: &str = "model_judge";

/// Whether the model judge ran. It never claims to have run when it did not.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum JudgeStatus {
    /// No judge configured (or a review made before there was one).
    #[default]
    Disabled,
    /// Nothing to ask: no secret of level 0 or 1, an empty text, or already rejected.
    NotNeeded { reason: String },
    /// Asked about `asked` of the `secrets` that needed it (`[leak_judge] max_secrets`).
    Ran { asked: usize, secrets: usize },
    /// Asked for but not done: an error, a timeout or an answer neither yes nor no.
    Skipped { reason: String },
}

impl JudgeStatus {
    /// Did the judge look at every secret that needed it (or have nothing to do)?
    pub fn complete(&self) -> bool {
        match self {
            JudgeStatus::Ran { asked, secrets } => asked >= secrets,
            JudgeStatus::NotNeeded { .. } => true,
            _ => false,
        }
    }

    /// A judge was configured and could not do its work.
    pub fn failed(&self) -> bool {
        matches!(self, JudgeStatus::Skipped { .. })
    }

    /// What the writer reads about it.
    pub fn describe(&self) -> String {
        match self {
            JudgeStatus::Disabled => "モデル判定なし".into(),
            JudgeStatus::NotNeeded { reason } => format!("モデル判定不要（{reason}）"),
            JudgeStatus::Ran { asked, secrets } if asked >= secrets => {
                format!("モデル判定 実施（秘密{asked}件）")
            }
            JudgeStatus::Ran { asked, secrets } => {
                format!("モデル判定 一部のみ（秘密{secrets}件中{asked}件）")
            }
            JudgeStatus::Skipped { reason } => format!("モデル判定 未実施（{reason}）"),
        }
    }
}

/// Whether the semantic check ran. It never claims to have run when it did not.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "lowercase")]
pub enum EmbedStatus {
    Ran,
    /// Asked for but not done: the endpoint failed, or there was nothing to compare.
    Skipped {
        reason: String,
    },
    /// Not asked for (no client, `--no-embed`).
    Disabled,
    /// Nothing to compare (no secret of level 2 or lower, or a text without words): the check
    /// had no work, so it is not missing either.
    NotNeeded {
        reason: String,
    },
}

impl EmbedStatus {
    /// Did the review lack a semantic check it needed?
    pub fn missing(&self) -> bool {
        !matches!(self, EmbedStatus::Ran | EmbedStatus::NotNeeded { .. })
    }

    /// Why it did not run (for the writer), if it did not.
    pub fn reason(&self) -> Option<&str> {
        match self {
            EmbedStatus::Skipped { reason } => Some(reason),
            EmbedStatus::Disabled => Some("no embedding model configured (llm.toml `embed_model`)"),
            _ => None,
        }
    }
}

/// Whether forbidden keywords written in kanji were also looked for by their kana reading.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum ReadingsStatus {
    Checked,
    /// No dictionary (the fallback analyzer): ころす is not found for 殺す. The keywords whose
    /// kana spellings went unchecked are named (they have kanji and no writer-given reading).
    #[default]
    NotChecked,
    /// Every keyword with kanji has a reading from the writer (visibility.yaml), or none has
    /// kanji: nothing needed the dictionary.
    NotNeeded,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Review {
    pub result: ReviewResult,
    pub issues: Vec<LeakIssue>,
    pub embeddings: EmbedStatus,
    /// Keyword readings (needs the IPADIC dictionary).
    #[serde(default)]
    pub readings: ReadingsStatus,
    /// Checks that had something to compare but did not run ([`SEMANTIC_CHECK`],
    /// [`READINGS_CHECK`]); empty when every needed check ran.
    #[serde(default)]
    pub unchecked: Vec<String>,
    /// The [`Reviewer::version`] of the vault this review was made against.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub vault_version: String,
    /// Whether the model judge ran (`vault::judge`).
    #[serde(default)]
    pub judge: JudgeStatus,
}

impl Review {
    /// Applies what a missing check means: readings not checked make the result at least a
    /// warning (おうけ would have passed for 王家); a missing semantic check turns "approved"
    /// into "approved without the semantic check". Idempotent.
    pub fn settle(&mut self) {
        self.unchecked.clear();
        if self.readings == ReadingsStatus::NotChecked {
            self.unchecked.push(READINGS_CHECK.into());
            if matches!(
                self.result,
                ReviewResult::Approved | ReviewResult::ApprovedWithoutSemantic
            ) {
                self.result = ReviewResult::Warning;
            }
        }
        // Meaning was checked when the embedding check or a complete model judge ran. A check
        // that was asked for and failed is named whatever else ran, and the line is never
        // plainly approved on it.
        let embed_failed = matches!(self.embeddings, EmbedStatus::Skipped { .. });
        let judged = matches!(self.judge, JudgeStatus::Ran { .. }) && self.judge.complete();
        if embed_failed || (self.embeddings.missing() && !judged) {
            self.unchecked.push(SEMANTIC_CHECK.into());
        }
        let judge_short = matches!(self.judge, JudgeStatus::Skipped { .. })
            || matches!(self.judge, JudgeStatus::Ran { .. } if !self.judge.complete());
        if judge_short {
            self.unchecked.push(MODEL_CHECK.into());
        }
        let short = self
            .unchecked
            .iter()
            .any(|c| c == SEMANTIC_CHECK || c == MODEL_CHECK);
        if short && self.result == ReviewResult::Approved {
            self.result = ReviewResult::ApprovedWithoutSemantic;
        } else if !short && self.result == ReviewResult::ApprovedWithoutSemantic {
            self.result = ReviewResult::Approved;
        }
    }
}

/// Maps issues to a result: rejected if any is at least `reject_at`, a warning if any is at
/// least `warn_at`, else approved.
pub fn decide(issues: &[LeakIssue], cfg: &ReviewConfig) -> ReviewResult {
    match issues.iter().map(|i| i.severity).max() {
        Some(s) if s >= cfg.reject_at => ReviewResult::Rejected,
        Some(s) if s >= cfg.warn_at => ReviewResult::Warning,
        _ => ReviewResult::Approved,
    }
}

/// Span start, then most severe first; the rest only makes the order total.
fn sort_issues(issues: &mut [LeakIssue]) {
    issues.sort_by(|a, b| {
        a.span[0]
            .cmp(&b.span[0])
            .then(b.severity.cmp(&a.severity))
            .then(a.span[1].cmp(&b.span[1]))
            .then(a.secret_id.cmp(&b.secret_id))
            .then(a.detail.cmp(&b.detail))
    });
}

/// Reviews `text` with the static checks (no embeddings; `embeddings` is `Disabled`).
pub fn review(text: &str, input: &ReviewInput, cfg: &ReviewConfig) -> Review {
    Reviewer::new(input, cfg).review(text)
}

/// A review input compiled once (folded secrets, keyword and allowed-expression automata,
/// similarity profiles, the quotation index) for reviewing many texts, e.g. every attempt of a
/// live run.
pub struct Reviewer {
    input: ReviewInput,
    cfg: ReviewConfig,
    compiled: checks::Compiled,
    version: String,
}

/// First 8 hex digits of the SHA-256 of the input and config as JSON.
fn version_of(input: &ReviewInput, cfg: &ReviewConfig) -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    h.update(serde_json::to_vec(&(input, cfg)).unwrap_or_default());
    h.finalize()
        .iter()
        .take(4)
        .map(|b| format!("{b:02x}"))
        .collect()
}

impl Reviewer {
    /// Keyword readings from the installed dictionary, when there is one.
    pub fn new(input: &ReviewInput, cfg: &ReviewConfig) -> Reviewer {
        Reviewer::with_dict(input, cfg, crate::safety::variants::Dict::installed())
    }

    /// Keyword readings from `dict` (`Dict::none()`: not checked, and the review says so).
    pub fn with_dict(
        input: &ReviewInput,
        cfg: &ReviewConfig,
        dict: crate::safety::variants::Dict,
    ) -> Reviewer {
        Reviewer {
            compiled: checks::Compiled::new(input, cfg, dict),
            input: input.clone(),
            cfg: cfg.clone(),
            version: version_of(input, cfg),
        }
    }

    pub fn input(&self) -> &ReviewInput {
        &self.input
    }

    pub fn config(&self) -> &ReviewConfig {
        &self.cfg
    }

    /// The static checks. The semantic check did not run: `embeddings` is `Disabled` (or
    /// `NotNeeded`), and an empty result is "approved without the semantic check".
    pub fn review(&self, text: &str) -> Review {
        let prepared = text::Prepared::new(text);
        let mut issues = self.compiled.run(&prepared, &self.input, &self.cfg);
        sort_issues(&mut issues);
        let mut review = Review {
            result: decide(&issues, &self.cfg),
            issues,
            embeddings: match self.semantic_work(text) {
                Some(reason) => EmbedStatus::NotNeeded { reason },
                None => EmbedStatus::Disabled,
            },
            readings: if self.compiled.readings_checked() {
                ReadingsStatus::Checked
            } else if self.compiled.readings_needed() && text.chars().any(char::is_alphanumeric) {
                ReadingsStatus::NotChecked
            } else {
                ReadingsStatus::NotNeeded
            },
            unchecked: Vec::new(),
            vault_version: self.version.clone(),
            judge: JudgeStatus::Disabled,
        };
        review.settle();
        review
    }

    /// Why the semantic check has nothing to do for `text`, if it has nothing.
    fn semantic_work(&self, text: &str) -> Option<String> {
        let secret = self
            .input
            .secrets
            .iter()
            .any(|s| s.level <= 2 && s.content.chars().any(char::is_alphanumeric));
        if !secret {
            return Some("no secret of level 2 or lower to compare".into());
        }
        (!text.chars().any(char::is_alphanumeric))
            .then(|| "the text has no sentence to compare".into())
    }

    /// A short stable digest of what this reviewer checks (secrets, settings, keywords,
    /// thresholds): the vault version a review was made against, so the scorecard never adds
    /// lines reviewed against an older vault to today's rows.
    pub fn version(&self) -> &str {
        &self.version
    }
}

#[cfg(test)]
#[path = "leak_tests.rs"]
mod tests;
#[cfg(test)]
#[path = "leak_variants_tests.rs"]
mod variants_tests;

/// Message and suggestion for a leak the speaker must not be told about (see `review::findings`).
pub fn neutral_messages() -> (String, String) {
    messages::neutral()
}
