//! What the server says about itself and the model, asked once per client before the first
//! prompt: Ollama's `GET /api/version` (whether `truncate`/`shift` can be turned off) and
//! `POST /api/show` (the model's trained context, its template — does it take a `system`
//! message? — and its capabilities). Behind an OpenAI-compatible endpoint, `GET /api/version`
//! answering means Ollama's `/v1`, whose context is Ollama's default, not `num_ctx`.
//!
//! The parsers are pure; `Client::facts` does the I/O. A server that does not answer is "not
//! known" (never "fine"): the client then keeps its configured behaviour and says so.

use serde_json::Value;

use super::client::Client;
use super::config::{ApiKind, SystemRole};
use super::error::TimeoutPhase;

/// Ollama's first version with `truncate` and `shift` on /api/chat (api/types.go:161-167;
/// runner.go v0.13.0:129,151-152).
pub const GUARD_SINCE: (u32, u32, u32) = (0, 13, 0);

/// The facts gathered; every field may be unknown.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ServerFacts {
    /// Ollama's version string, as /api/version gave it.
    pub version: Option<String>,
    /// The model's trained context (`model_info.<arch>.context_length`): Ollama clamps
    /// num_ctx to it (llm/server.go:111-116).
    pub context_length: Option<u32>,
    /// Whether the model's template renders a system message (`.System` appears in it).
    pub takes_system: Option<bool>,
    pub capabilities: Vec<String>,
    /// The endpoint speaks OpenAI but is Ollama's `/v1` (its /api/version answered).
    pub ollama_v1: bool,
    /// What /api/show said when it failed (shown by `doctor`).
    pub show_error: Option<String>,
}

impl ServerFacts {
    /// `truncate: false` / `shift: false` are understood (Ollama ≥ 0.13).
    pub fn guard_supported(&self) -> bool {
        self.version
            .as_deref()
            .and_then(parse_version)
            .is_some_and(|v| v >= GUARD_SINCE)
    }

    /// The context Ollama's `/v1` gives a model: it cannot take num_ctx (openai/openai.go:
    /// 640-722), so Ollama's default applies — 2048 up to v0.6.4, 4096 since (and below
    /// 23 GiB of VRAM since v0.16: server/routes.go:2049-2058), clamped to the trained context.
    pub fn ollama_v1_context(&self) -> Option<u32> {
        if !self.ollama_v1 {
            return None;
        }
        let old = self
            .version
            .as_deref()
            .and_then(parse_version)
            .is_some_and(|v| v < (0, 6, 5));
        let default = if old { 2048 } else { 4096 };
        Some(self.context_length.map_or(default, |c| c.min(default)))
    }

    /// Native when the template takes a system message, fold when it does not; `None` when
    /// the template is not known.
    pub fn system_role(&self) -> Option<SystemRole> {
        self.takes_system.map(|t| {
            if t {
                SystemRole::Native
            } else {
                SystemRole::Fold
            }
        })
    }
}

/// "0.13.0", "v0.33.0-rc2" → (0, 13, 0), (0, 33, 0).
pub fn parse_version(s: &str) -> Option<(u32, u32, u32)> {
    let s = s.trim().trim_start_matches('v');
    let core = s.split(['-', '+']).next()?;
    let mut parts = core.split('.').map(|p| p.parse::<u32>().ok());
    Some((
        parts.next()??,
        parts.next()??,
        parts.next().flatten().unwrap_or(0),
    ))
}

/// `{"version":"0.13.1"}` (server/routes.go:1879-1880).
pub fn version_from(body: &str) -> Option<String> {
    let v: Value = serde_json::from_str(body).ok()?;
    v.get("version")?.as_str().map(str::to_string)
}

/// Reads /api/show's ShowResponse (api/types.go:737-755) into `facts`.
pub fn read_show(body: &str, facts: &mut ServerFacts) -> bool {
    let Ok(v) = serde_json::from_str::<Value>(body) else {
        return false;
    };
    let info = v.get("model_info");
    let arch = info
        .and_then(|i| i.get("general.architecture"))
        .and_then(Value::as_str);
    let ctx = info.and_then(|i| {
        let by_arch = arch.and_then(|a| i.get(format!("{a}.context_length")));
        let any = || {
            i.as_object()?
                .iter()
                .find(|(k, _)| k.ends_with(".context_length"))
                .map(|(_, v)| v)
        };
        by_arch.or_else(any)?.as_u64()
    });
    facts.context_length = ctx.and_then(|c| u32::try_from(c).ok());
    if let Some(t) = v.get("template").and_then(Value::as_str) {
        facts.takes_system = Some(template_takes_system(t));
    }
    facts.capabilities = v
        .get("capabilities")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|c| c.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    true
}

/// Whether a Go template renders the system text wherever the system message lands: Ollama's
/// templates use `.System` (legacy prompt/response form, template.go:257-355) or range over
/// `.Messages` and test `eq .Role "system"` (gemma-instruct.gotmpl merges it into the next user
/// turn). gemma3-instruct.gotmpl:4 renders `$.System` only into the message at index 1, which
/// is lost when an assistant message comes first: such a template counts as not taking one.
/// The per-slot context from llama-server's `/props` (`default_generation_settings.n_ctx`) or
/// `/slots` (the smallest slot's `n_ctx`); None for anything else (0 is no answer).
pub fn slot_ctx(body: &str) -> Option<u32> {
    let v: serde_json::Value = serde_json::from_str(body).ok()?;
    let n = match &v {
        serde_json::Value::Array(slots) => slots.iter().filter_map(|s| s["n_ctx"].as_u64()).min(),
        _ => v["default_generation_settings"]["n_ctx"].as_u64(),
    }?;
    u32::try_from(n).ok().filter(|n| *n > 0)
}

pub fn template_takes_system(template: &str) -> bool {
    let renders = template.contains(".System") || template.contains("\"system\"");
    renders && !template.contains("eq $i 1")
}

impl Client {
    /// The server's facts, asked once (Ollama: /api/version and /api/show; OpenAI-compatible:
    /// /api/version, to recognise Ollama's /v1). Unanswered questions stay unknown.
    pub async fn facts(&self, kind: ApiKind) -> &ServerFacts {
        self.inner
            .facts
            .get_or_init(|| async {
                let facts = self.gather_facts(kind).await;
                if let Some(c) = facts.ollama_v1_context().or(facts.context_length) {
                    self.learn_context(c);
                }
                facts
            })
            .await
    }

    async fn gather_facts(&self, kind: ApiKind) -> ServerFacts {
        let cfg = self.config();
        let limit = (TimeoutPhase::Probe, cfg.timeouts.probe());
        let mut facts = ServerFacts::default();
        let version = self.target(ApiKind::Ollama, "/api/version", &cfg.model);
        facts.version = self
            .get(&version, limit)
            .await
            .ok()
            .and_then(|b| version_from(&b));
        if kind == ApiKind::OpenAi && facts.version.is_none() {
            return facts;
        }
        facts.ollama_v1 = kind == ApiKind::OpenAi;
        let show = self.target(ApiKind::Ollama, "/api/show", &cfg.model);
        let body = serde_json::json!({ "model": cfg.model });
        match self.post_limited(&show, &body, limit).await {
            Ok(text) if read_show(&text, &mut facts) => {}
            Ok(text) => facts.show_error = Some(super::error::truncate_chars(&text, 120)),
            Err(e) => facts.show_error = Some(e.to_string()),
        }
        facts
    }

    /// llama-server's real context per slot — what one request can hold, below the trained
    /// context when the server splits it over parallel slots — learned for the budget: `/props`
    /// (`default_generation_settings.n_ctx`) first, then `/slots`. None (nothing learned) on
    /// Ollama or a server that answers neither.
    pub async fn learn_slot_context(&self, kind: ApiKind) -> Option<u32> {
        if kind != ApiKind::OpenAi || self.facts(kind).await.ollama_v1 {
            return None;
        }
        let cfg = self.config();
        let limit = (TimeoutPhase::Probe, cfg.timeouts.probe());
        let model = &cfg.model;
        for path in ["/props", "/slots"] {
            // At the server's root, not under /v1 (the root URL is what an Ollama target uses).
            let target = self.target(ApiKind::Ollama, path, model);
            if let Some(n) = self
                .get(&target, limit)
                .await
                .ok()
                .and_then(|b| slot_ctx(&b))
            {
                self.learn_context(n);
                return Some(n);
            }
        }
        None
    }

    /// The facts if they were gathered already (for sync callers such as the budget).
    pub fn known_facts(&self) -> Option<&ServerFacts> {
        self.inner.facts.get()
    }

    /// How system messages go out: the user's setting, else (on Ollama) what the model's
    /// template takes, else the name-based default (see `LlmConfig::effective_system_role`).
    pub fn system_role(&self, kind: ApiKind) -> SystemRole {
        let cfg = self.config();
        if let Some(r) = cfg.configured_system_role() {
            return r;
        }
        let from_template = self
            .known_facts()
            .filter(|_| kind == ApiKind::Ollama)
            .and_then(ServerFacts::system_role);
        from_template.unwrap_or_else(|| cfg.effective_system_role())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions() {
        assert_eq!(parse_version("0.13.0"), Some((0, 13, 0)));
        assert_eq!(parse_version("v0.33.0-rc2"), Some((0, 33, 0)));
        assert_eq!(parse_version("0.6"), Some((0, 6, 0)));
        assert_eq!(parse_version("dev"), None);
        let f = |v: &str| ServerFacts {
            version: Some(v.into()),
            ..ServerFacts::default()
        };
        assert!(f("0.13.0").guard_supported());
        assert!(!f("0.12.11").guard_supported());
        assert!(!ServerFacts::default().guard_supported());
    }

    #[test]
    fn show_gives_context_template_and_capabilities() {
        let body = r#"{"template":"{{- range $i, $_ := .Messages }}{{- if eq .Role \"system\" }}…","model_info":{"general.architecture":"gemma2","gemma2.context_length":8192},"capabilities":["completion"]}"#;
        let mut f = ServerFacts::default();
        assert!(read_show(body, &mut f));
        assert_eq!(f.context_length, Some(8192));
        assert_eq!(f.system_role(), Some(SystemRole::Native));
        assert_eq!(f.capabilities, vec!["completion".to_string()]);
        let mut g = ServerFacts::default();
        assert!(read_show(
            r#"{"template":"{{ .Prompt }}","model_info":{}}"#,
            &mut g
        ));
        assert_eq!(g.system_role(), Some(SystemRole::Fold));
        assert!(!read_show("404 page not found", &mut g));
        let gemma3 = "{{- range $i, $_ := .Messages }}{{- if and (eq $i 1) $.System }}";
        assert!(!template_takes_system(gemma3));
    }

    #[test]
    fn ollama_v1_context_is_the_default_clamped() {
        let mut f = ServerFacts {
            ollama_v1: true,
            version: Some("0.5.7".into()),
            ..ServerFacts::default()
        };
        assert_eq!(f.ollama_v1_context(), Some(2048));
        f.version = Some("0.13.5".into());
        assert_eq!(f.ollama_v1_context(), Some(4096));
        f.context_length = Some(2048);
        assert_eq!(f.ollama_v1_context(), Some(2048));
        f.ollama_v1 = false;
        assert_eq!(f.ollama_v1_context(), None);
    }
}
