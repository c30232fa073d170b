//! The semantic check (seed 004 §5.3) wherever a line is judged: live runs, compare, chat and
//! the bot. The static review runs inside the synchronous Director verdict; [`amend`] then
//! asks the embedding model (when one is configured) and replaces the verdict's leak findings
//! with the full review's, so every verdict's coverage finding says whether it ran and why not.
//! The model judge (`vault::judge`) runs there too, after the embeddings.

use std::sync::Arc;

use crate::director::{RuleId, Verdict};
use crate::llm::{Client, LlmConfig};

use super::SharedVault;
use super::leak::{EmbedStatus, Review};

/// Where embeddings come from, or why there are none.
#[derive(Clone)]
pub struct Embedder {
    client: Option<Client>,
    off: String,
}

impl Embedder {
    /// No semantic check; `why` is what every review says.
    pub fn off(why: impl Into<String>) -> Embedder {
        Embedder {
            client: None,
            off: why.into(),
        }
    }

    /// From llm.toml: on only when `embed_model` is set (a chat model is not an embedding
    /// model), at `embed_endpoint` when given, else `endpoint`.
    pub fn from_config(cfg: &LlmConfig) -> Embedder {
        let Some(model) = cfg.embed_model.clone().filter(|m| !m.trim().is_empty()) else {
            return Embedder::off("no embed_model in llm.toml");
        };
        let mut c = cfg.clone();
        c.embed_model = Some(model);
        if let Some(e) = cfg.embed_endpoint.clone().filter(|e| !e.trim().is_empty()) {
            c.endpoint = e;
            // The chat endpoint's API kind says nothing about another server's.
            c.api = None;
        }
        match Client::new(c) {
            Ok(client) => Embedder {
                client: Some(client),
                off: String::new(),
            },
            Err(e) => Embedder::off(format!("embedding endpoint unusable: {e}")),
        }
    }

    pub fn client(&self) -> Option<&Client> {
        self.client.as_ref()
    }

    /// Why there is no semantic check ("" when there is one).
    pub fn why_off(&self) -> &str {
        &self.off
    }
}

/// The full leak review of `text` by `reader`: the static checks, then the semantic check
/// with the vault's embedder and the model judge side by side (the judge within its own time
/// limit). Without them the review says why they did not run.
pub async fn review(vault: &SharedVault, reader: &str, text: &str) -> Review {
    let limit = vault.judge().limit();
    full(
        vault,
        reader,
        text,
        None,
        tokio::time::Instant::now() + limit,
    )
    .await
}

/// [`review`] with every answer due by `deadline` (the bot's answer budget): an embedding
/// server past it costs the semantic check, not the judge's answer, and the other way round.
pub async fn review_until(
    vault: &SharedVault,
    reader: &str,
    text: &str,
    deadline: tokio::time::Instant,
) -> Review {
    full(vault, reader, text, Some(deadline), deadline).await
}

async fn full(
    vault: &SharedVault,
    reader: &str,
    text: &str,
    embed_by: Option<tokio::time::Instant>,
    judge_by: tokio::time::Instant,
) -> Review {
    let reviewer = vault.reviewer(reader);
    let embedder = vault.embedder();
    let judge = vault.judge();
    let embedded = async {
        let asked = reviewer.review_with_embeddings(text, embedder.client());
        let mut review = match embed_by {
            None => asked.await,
            Some(by) => match tokio::time::timeout_at(by, asked).await {
                Ok(r) => r,
                Err(_) => {
                    let mut r = reviewer.review(text);
                    r.embeddings = EmbedStatus::Skipped {
                        reason: "no answer within the answer budget".into(),
                    };
                    r
                }
            },
        };
        // With no embedder and no judge, the review names the missing semantic check and why;
        // with a judge, the judge's answer stands for meaning.
        if embedder.client().is_none()
            && judge.client().is_none()
            && review.embeddings == EmbedStatus::Disabled
        {
            review.embeddings = EmbedStatus::Skipped {
                reason: embedder.why_off().to_string(),
            };
        }
        review.settle();
        review
    };
    let judged = async {
        judge.client()?;
        let mut r = reviewer.review(text);
        let by = judge_by.min(tokio::time::Instant::now() + judge.limit());
        judge.judge(&mut r, reviewer.input(), text, by).await;
        Some(r)
    };
    let (mut review, judged) = tokio::join!(embedded, judged);
    if let Some(j) = judged {
        review.issues.extend(
            j.issues
                .into_iter()
                .filter(|i| i.kind == super::leak::IssueKind::ModelJudged),
        );
        review.judge = j.judge;
        if review
            .issues
            .iter()
            .any(|i| i.kind == super::leak::IssueKind::ModelJudged)
        {
            review.result = super::leak::ReviewResult::Rejected;
        }
        review.settle();
    }
    review
}

/// Is there anything beyond the static review to ask (an embedder or a model judge)?
fn anything_to_ask(vault: &SharedVault) -> bool {
    vault.embedder().client().is_some() || vault.judge().client().is_some()
}

/// Replaces the `leak` findings of `verdict` (from the static review) with those of the full
/// review, and recomputes its status. The bot's judge, the run driver and compare call this
/// after the static verdict.
pub async fn amend(verdict: &mut Verdict, vault: &SharedVault, reader: &str, text: &str) {
    if !anything_to_ask(vault) {
        // The static review already says the semantic check did not run, and why.
        return;
    }
    let r = review(vault, reader, text).await;
    apply(verdict, vault, reader, &r);
}

/// [`amend`] that gives the embedding model and the judge until `deadline` (the bot's answer
/// budget): past it, the semantic check counts as not run — "approved without the semantic
/// check", named in the coverage finding — exactly as when the embedding endpoint fails. A
/// model judge that could not answer fails closed here: the line is not sent (RETRY).
pub async fn amend_until(
    verdict: &mut Verdict,
    vault: &SharedVault,
    reader: &str,
    text: &str,
    deadline: tokio::time::Instant,
) {
    if !anything_to_ask(vault) {
        return;
    }
    // Each check keeps to the deadline itself; this only guards against one that does not.
    let guard = deadline + std::time::Duration::from_secs(1);
    let r = match tokio::time::timeout_at(guard, review_until(vault, reader, text, deadline)).await
    {
        Ok(r) => r,
        Err(_) => {
            let mut r = vault.reviewer(reader).review(text);
            r.embeddings = EmbedStatus::Skipped {
                reason: "no answer within the answer budget".into(),
            };
            if vault.judge().client().is_some() {
                r.judge = super::leak::JudgeStatus::Skipped {
                    reason: "no answer within the answer budget".into(),
                };
            }
            r.settle();
            r
        }
    };
    apply(verdict, vault, reader, &r);
    if r.judge.failed() && verdict.status != crate::director::Status::Retry {
        verdict.findings.push(crate::director::Finding::new(
            RuleId::Leak,
            crate::director::Status::Retry,
            format!(
                "漏洩チェックのモデル判定ができなかったため送りません: {}",
                r.judge.describe()
            ),
            String::new(),
        ));
        verdict.status = Verdict::status_of(&verdict.findings);
    }
}

fn apply(verdict: &mut Verdict, vault: &SharedVault, reader: &str, r: &Review) {
    let reviewer = vault.reviewer(reader);
    let findings = super::review::findings(r, reviewer.input(), reviewer.config());
    verdict.findings.retain(|f| f.rule != RuleId::Leak);
    verdict.findings.extend(findings);
    verdict.status = Verdict::status_of(&verdict.findings);
}

/// The embedder shared by everything that judges with this vault.
pub(super) type Shared = Arc<Embedder>;

/// Sets the vault's embedder from `cfg` and says on stderr (as `who`) whether the semantic
/// check will run, so nobody reads an "approved" as more than it is.
pub fn configure(vault: &SharedVault, cfg: &LlmConfig, who: &str) {
    let e = Embedder::from_config(cfg);
    match e.client() {
        Some(_) => crate::say!(
            "{who}: leak review: semantic check on ({} at {})",
            cfg.embed_model.as_deref().unwrap_or_default(),
            cfg.embed_endpoint.as_deref().unwrap_or(&cfg.endpoint)
        ),
        None => crate::say!(
            "{who}: leak review: semantic check OFF ({}); set embed_model in llm.toml. \
             Reviews say \"approved without the semantic check\"",
            e.why_off()
        ),
    }
    vault.set_embedder(e);
    let j = super::judge::Judge::from_config(cfg);
    match j.client() {
        Some(_) => crate::say!(
            "{who}: leak review: model judge on ({}, {:.0} s per line, up to {} secrets)",
            cfg.model,
            j.limit().as_secs_f64(),
            cfg.leak_judge.max_secrets
        ),
        None => crate::say!("{who}: leak review: model judge OFF ({})", j.why_off()),
    }
    vault.set_judge(j);
}

/// Lets the model judge ask through `client`, the run's own: one model load state, so the
/// judge never preloads or reloads what the run already loaded.
pub fn judge_with(vault: &SharedVault, client: &Client) {
    let cfg = &client.config().leak_judge;
    if cfg.enabled {
        vault.set_judge(super::judge::Judge::with_client(
            client.clone(),
            std::time::Duration::from_millis(cfg.timeout_ms),
            cfg.max_secrets,
        ));
    }
}

/// What the workbench header says about checks every review of this vault will lack:
/// `no semantic check` (no embedding model), `readings unchecked` (a kanji keyword without a
/// reading and no dictionary); None when nothing is missing.
pub fn missing_checks(vault: &SharedVault) -> Option<String> {
    let mut out = Vec::new();
    let judge = vault.judge().client().is_some();
    if vault.embedder().client().is_none() && !judge {
        out.push("no semantic check");
    }
    let probe = "あ";
    let readings = ["yana", "ayu"].iter().any(|r| {
        vault.reviewer(r).review(probe).readings == super::leak::ReadingsStatus::NotChecked
    });
    if readings {
        out.push("readings unchecked");
    }
    (!out.is_empty()).then(|| out.join(", "))
}
