//! The semantic check (seed 004 §5.3): every checked secret and every sentence embedded in one
//! call, cosine similarity above the threshold is a critical issue. The pure part
//! ([`semantic_issues`]) takes the vectors; the async part only fetches them and says honestly
//! whether it ran.

use serde::{Deserialize, Serialize};

use crate::llm::Client;

use super::checks::round3;
use super::text::Prepared;
use super::{
    EmbedStatus, IssueKind, LeakIssue, Review, ReviewConfig, ReviewInput, Reviewer, decide,
    messages, sort_issues,
};

/// A sentence to embed: its original char span, paragraph, and text with any allowed
/// expression removed (vetted hints are not evidence).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SentenceSpan {
    pub span: [usize; 2],
    pub paragraph: usize,
    pub text: String,
}

/// What one review embeds: the checked secrets (indices into `ReviewInput::secrets`) and the
/// sentences, in that order in [`EmbedPlan::inputs`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EmbedPlan {
    pub secrets: Vec<usize>,
    pub sentences: Vec<SentenceSpan>,
}

impl EmbedPlan {
    /// The strings to embed: secret contents, then sentences.
    pub fn inputs(&self, input: &ReviewInput) -> Vec<String> {
        self.secrets
            .iter()
            .map(|&i| input.secrets[i].content.clone())
            .chain(self.sentences.iter().map(|s| s.text.clone()))
            .collect()
    }

    pub fn len(&self) -> usize {
        self.secrets.len() + self.sentences.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Cosine similarity; 0 for vectors of different lengths or zero length.
pub fn cosine(a: &[f32], b: &[f32]) -> f64 {
    if a.len() != b.len() || a.is_empty() {
        return 0.0;
    }
    let (mut dot, mut na, mut nb) = (0.0f64, 0.0f64, 0.0f64);
    for (&x, &y) in a.iter().zip(b) {
        let (x, y) = (f64::from(x), f64::from(y));
        dot += x * y;
        na += x * x;
        nb += y * y;
    }
    if na == 0.0 || nb == 0.0 {
        0.0
    } else {
        dot / (na.sqrt() * nb.sqrt())
    }
}

/// One critical issue per (sentence, secret) whose cosine similarity exceeds
/// `cfg.embed_threshold`. `vectors` are in [`EmbedPlan::inputs`] order; a missing vector is no
/// evidence.
pub fn semantic_issues(
    plan: &EmbedPlan,
    input: &ReviewInput,
    vectors: &[Vec<f32>],
    cfg: &ReviewConfig,
) -> Vec<LeakIssue> {
    let n = plan.secrets.len();
    let mut issues = Vec::new();
    for (j, sent) in plan.sentences.iter().enumerate() {
        let Some(sv) = vectors.get(n + j) else {
            break;
        };
        for (k, &si) in plan.secrets.iter().enumerate() {
            let (Some(secret), Some(kv)) = (input.secrets.get(si), vectors.get(k)) else {
                continue;
            };
            let score = cosine(kv, sv);
            if score <= cfg.embed_threshold {
                continue;
            }
            let kind = IssueKind::SemanticSimilarity;
            let (detail, suggestion) =
                messages::semantic(&secret.id, score, cfg.embed_threshold, secret);
            issues.push(LeakIssue {
                kind,
                severity: kind.severity(),
                location: messages::location(sent.paragraph),
                detail,
                suggestion,
                secret_id: Some(secret.id.clone()),
                span: sent.span,
                score: Some(round3(score)),
                context: None,
            });
        }
    }
    issues
}

/// Why embeddings cannot be used, if they cannot.
fn unusable(vectors: &[Vec<f32>], expected: usize) -> Option<String> {
    if vectors.len() != expected {
        return Some(format!(
            "the endpoint returned {} embeddings for {expected} inputs",
            vectors.len()
        ));
    }
    let dim = vectors.first().map_or(0, Vec::len);
    if dim == 0 || vectors.iter().any(|v| v.len() != dim) {
        return Some("the endpoint returned empty or differently sized embeddings".into());
    }
    None
}

impl Reviewer {
    /// The secrets and sentences [`Reviewer::review_with_embeddings`] embeds for `text`.
    pub fn embed_plan(&self, text: &str) -> EmbedPlan {
        let t = Prepared::new(text);
        let mask = self.compiled.allowed_mask(&t, self.input.secrets.len());
        let secrets = (0..self.input.secrets.len())
            .filter(|&i| {
                let s = &self.input.secrets[i];
                s.level <= 2 && s.content.chars().any(char::is_alphanumeric)
            })
            .collect();
        let sentences = t
            .sentences
            .iter()
            .filter_map(|sent| {
                let mut text = String::new();
                let mut next = sent.orig.0;
                let (a, b) = sent.norm;
                for (&(s, e), &allowed) in t.fold.from[a..b].iter().zip(&mask[a..b]) {
                    let (s, e) = (s as usize, e as usize);
                    if !allowed && e > next {
                        text.push_str(&t.original_text(s.max(next), e));
                    }
                    next = next.max(e);
                }
                text.chars()
                    .any(char::is_alphanumeric)
                    .then(|| SentenceSpan {
                        span: [sent.orig.0, sent.orig.1],
                        paragraph: sent.paragraph,
                        text: text.trim().to_string(),
                    })
            })
            .collect();
        EmbedPlan { secrets, sentences }
    }

    /// The static checks, then — with a client — the semantic check in one embeddings call.
    /// Without a client `embeddings` is `Disabled`; when the call fails or there is nothing to
    /// compare it is `Skipped` with the reason, and no semantic issue is claimed.
    pub async fn review_with_embeddings(&self, text: &str, embed: Option<&Client>) -> Review {
        let mut review = self.review(text);
        let Some(client) = embed else {
            return review;
        };
        if matches!(review.embeddings, EmbedStatus::NotNeeded { .. }) {
            return review;
        }
        let plan = self.embed_plan(text);
        let not_needed = |reason: &str| EmbedStatus::NotNeeded {
            reason: reason.to_string(),
        };
        review.embeddings = if plan.secrets.is_empty() {
            not_needed("no secret of level 2 or lower to compare")
        } else if plan.sentences.is_empty() {
            not_needed("the text has no sentence to compare (allowed expressions only)")
        } else {
            match client.embed(&plan.inputs(&self.input)).await {
                Err(e) => skipped(&e.to_string()),
                Ok(vectors) => match unusable(&vectors, plan.len()) {
                    Some(reason) => skipped(&reason),
                    None => {
                        review.issues.extend(semantic_issues(
                            &plan,
                            &self.input,
                            &vectors,
                            &self.cfg,
                        ));
                        sort_issues(&mut review.issues);
                        review.result = decide(&review.issues, &self.cfg);
                        EmbedStatus::Ran
                    }
                },
            }
        };
        review.settle();
        review
    }
}

fn skipped(reason: &str) -> EmbedStatus {
    EmbedStatus::Skipped {
        reason: reason.to_string(),
    }
}

/// [`review`](super::review) plus the semantic check when `embed` is given.
pub async fn review_with_embeddings(
    text: &str,
    input: &ReviewInput,
    cfg: &ReviewConfig,
    embed: Option<&Client>,
) -> Review {
    Reviewer::new(input, cfg)
        .review_with_embeddings(text, embed)
        .await
}

#[cfg(test)]
#[path = "leak_embed_tests.rs"]
mod tests;
