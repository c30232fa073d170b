//! Finding out what the endpoint speaks and serves (model-list probes), and enriching a
//! missing-model error with the models that are there.

use std::time::Duration;

use super::client::{Client, protocol};
use super::config::ApiKind;
use super::error::{LlmError, TimeoutPhase};
use super::http::{self, Target};
use super::ollama::same_model;
use super::types::ServerInfo;

impl Client {
    /// Finds the API (unless configured: then only that one is asked) and the server's models.
    /// Probes GET /api/tags, then GET /v1/models. Fixes the API for later calls.
    pub async fn detect(&self) -> Result<ServerInfo, LlmError> {
        let cfg = &self.inner.cfg;
        let forced = cfg.api.or(self.inner.says_v1.then_some(ApiKind::OpenAi));
        let order = match forced {
            Some(k) => vec![k],
            None => vec![ApiKind::Ollama, ApiKind::OpenAi],
        };
        let mut tried = Vec::new();
        for kind in order {
            let proto = protocol(kind);
            let target = self.target(kind, proto.models_path(), &cfg.model);
            let limit = (TimeoutPhase::Probe, cfg.timeouts.probe());
            let fetched = self.get(&target, limit).await;
            let body = match fetched {
                Ok(body) => body,
                Err(e) if forced.is_some() => return Err(e),
                // Nobody listening, or too slow: the other probe would fail the same way.
                Err(e @ (LlmError::Connect { .. } | LlmError::Timeout { .. })) => return Err(e),
                Err(e) => {
                    tried.push(format!("GET {} → {}", target.url, short(&e)));
                    continue;
                }
            };
            let Some(models) = proto.parse_models(&body) else {
                if forced.is_some() {
                    return Err(target.malformed("a model list", &body));
                }
                tried.push(format!("GET {} → not a model list", target.url));
                continue;
            };
            let model_present = models.iter().any(|m| match kind {
                ApiKind::Ollama => same_model(&cfg.model, m),
                ApiKind::OpenAi => *m == cfg.model,
            });
            // A concurrent detection may have set it first; both found the same server.
            let _ = self.inner.api.set(kind);
            return Ok(ServerInfo {
                api: kind,
                models,
                model_present,
            });
        }
        Err(LlmError::UnknownApi {
            url: cfg.endpoint.clone(),
            model: cfg.model.clone(),
            detail: tried.join("; "),
        })
    }

    /// `detect()`, then a typed `ModelNotFound` when the server lacks the configured model.
    pub async fn ensure_model(&self) -> Result<ServerInfo, LlmError> {
        let info = self.detect().await?;
        if info.model_present {
            return Ok(info);
        }
        Err(LlmError::ModelNotFound {
            url: self.url(info.api, protocol(info.api).models_path()),
            model: self.inner.cfg.model.clone(),
            api: info.api,
            available: super::error::shortlist(&self.inner.cfg.model, &info.models),
        })
    }

    pub(super) async fn resolve_api(&self) -> Result<ApiKind, LlmError> {
        self.inner
            .api
            .get_or_try_init(|| async { self.detect().await.map(|i| i.api) })
            .await
            .copied()
    }

    pub(super) async fn get(
        &self,
        target: &Target,
        limit: (TimeoutPhase, Duration),
    ) -> Result<String, LlmError> {
        let (resp, started, _) = http::send(
            &self.inner.http,
            target,
            None,
            limit,
            self.connect_timeout(),
            None,
        )
        .await?;
        http::read_body(resp, target, started + limit.1, limit.1).await
    }

    /// Adds what the user needs to fix an error: the models the server does have when ours is
    /// missing (a 404 during chat says only "model 'x' not found": routes.go:2481-2486).
    pub(super) async fn explain(&self, e: LlmError) -> LlmError {
        match e {
            LlmError::ModelNotFound {
                url,
                model,
                api,
                available,
            } if available.is_empty() => {
                let proto = protocol(api);
                let target = self.target(api, proto.models_path(), &model);
                let limit = (TimeoutPhase::Probe, self.inner.cfg.timeouts.probe());
                let available = match self.get(&target, limit).await {
                    Ok(body) => proto.parse_models(&body).unwrap_or_default(),
                    Err(_) => Vec::new(),
                };
                LlmError::ModelNotFound {
                    available: super::error::shortlist(&model, &available),
                    url,
                    model,
                    api,
                }
            }
            e => e,
        }
    }
}

fn short(e: &LlmError) -> String {
    match e {
        LlmError::Rejected { status, .. } | LlmError::Server { status, .. } => {
            format!("HTTP {status}")
        }
        e => e.to_string(),
    }
}
