//! The checks themselves, in the order a run meets them.

use crate::llm::budget as llm_budget;
use crate::llm::facts::{GUARD_SINCE, ServerFacts};
use crate::llm::{ApiKind, ChatRequest, Client, LlmError, Message, ResponseFormat, SystemRole};

use super::{Check, Setup, budget};

/// How much to ask: `Quick` (the workbench's R: no generation) or `Full` (`kakeai doctor`:
/// one-token measurements, an embedding and a judge call as well).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Depth {
    Quick,
    Full,
}

/// A Japanese sample for the tokens-per-character measurement (40 characters).
const SAMPLE: &str =
    "港町の夕暮れ、坂の上の古い喫茶店で姉妹は今日も他愛ない話を続けている。潮風が窓を";

pub(super) async fn run_all(
    client: &Client,
    depth: Depth,
    setup: Option<&Setup>,
    out: &mut Vec<Check>,
    on_step: &mut (dyn FnMut(&str) + Send),
) -> Option<ApiKind> {
    let cfg = client.config().clone();
    on_step("endpoint");
    let info = match client.detect().await {
        Ok(i) => i,
        Err(e) => {
            out.push(endpoint_failure(&e));
            out.push(skipped("the endpoint did not answer"));
            return None;
        }
    };
    out.push(Check::ok("endpoint", format!("{} answers", cfg.endpoint)));
    let facts = client.facts(info.api).await.clone();
    out.push(api_check(info.api, &facts, client));
    if !info.model_present {
        out.push(model_missing(info.api, &cfg.model, &info.models));
        out.push(skipped("the model is missing"));
        return Some(info.api);
    }
    out.push(Check::ok("model", format!("{} is there", cfg.model)));
    if info.api == ApiKind::Ollama {
        out.push(version_check(&facts));
    }
    client.learn_slot_context(info.api).await; // llama-server: the real context per slot
    // The run's first turn, built and fitted as the run does (pure: nothing is sent).
    let planned = setup.map(crate::duo::preflight::first_turn);
    if let Some(p) = &planned {
        client.learn_from_tokenizer(&p[0].messages).await; // llama-server, as a run does
    }
    let fits_now = planned.as_deref().map(|p| {
        let b = budget_at(client, None);
        budget::outcome(p, b).mark() == super::Mark::Ok
    });
    out.push(context_check(client, info.api, &facts, fits_now));
    out.push(role_check(client, info.api, &facts));
    if info.api == ApiKind::Ollama {
        on_step("load");
    }
    let loaded = load_check(client, info.api).await;
    let load_failed = loaded.mark == super::Mark::Fail;
    out.push(loaded);
    if load_failed {
        out.push(skipped("the model did not load"));
        return Some(info.api);
    }
    let measured = if depth == Depth::Full {
        on_step("tokens");
        let (check, measured) = ratio_check(client).await;
        out.push(check);
        measured
    } else {
        None
    };
    if let Some(p) = &planned {
        on_step("budget");
        out.push(budget_check(client, info.api, &facts, p, measured));
    }
    if depth == Depth::Full {
        on_step("embeddings");
        out.push(embed_check(client, info.api).await);
        on_step("judge");
        out.push(judge_check(client).await);
        on_step("PII check");
        out.push(pii_check(client).await);
    }
    Some(info.api)
}

/// The budget a run's first request is fitted to: the client's ratio (first guess, or the
/// server's tokenizer), or the measured one when that is higher (a run learns it from the
/// first refusal, so budgeting with it is what the run ends up doing).
fn budget_at(client: &Client, measured: Option<f64>) -> budget::Budget {
    let ratio = client.ratio();
    let ratio = match measured {
        Some(m) if m > ratio.tokens_per_char => llm_budget::Ratio::new(m),
        _ => ratio,
    };
    budget::Budget {
        ratio,
        context: client.context_tokens(),
        max_tokens: client.config().max_tokens,
    }
}

fn budget_check(
    client: &Client,
    api: ApiKind,
    facts: &ServerFacts,
    planned: &[crate::duo::preflight::Planned],
    measured: Option<f64>,
) -> Check {
    let b = budget_at(client, measured);
    let cap = match (api, facts.ollama_v1_context().or(facts.context_length)) {
        (ApiKind::Ollama, Some(trained)) => trained,
        (_, Some(v1)) if facts.ollama_v1 => v1.max(b.context),
        _ => b.context.max(UNKNOWN_CAP),
    };
    let floor = (client.config().max_chars as f64 * b.ratio.tokens_per_char).ceil() as u32;
    let server = budget::Server {
        api,
        ollama_v1: facts.ollama_v1,
        cap,
        reply_floor: floor.max(1),
    };
    budget::check(planned, b, server)
}

/// The largest context advised when the server does not say its own.
const UNKNOWN_CAP: u32 = 131_072;

fn skipped(why: &str) -> Check {
    Check::fail(
        "rest",
        format!("not checked: {why}"),
        "fix the line above, then run `kakeai doctor` again",
    )
}

fn endpoint_failure(e: &LlmError) -> Check {
    let fix = match e {
        LlmError::UnknownApi { .. } => "pass --api ollama|openai, or fix --endpoint",
        LlmError::Timeout { .. } => {
            "the server accepted the connection but did not answer: is it busy or hung?"
        }
        _ => "start the server (`ollama serve`), or pass --endpoint with its URL",
    };
    // A refused connection's own message ends in the same advice as `fix`: said once.
    let detail = match e {
        LlmError::Connect {
            url,
            model,
            kind,
            detail,
        } => format!("{kind} ({url}, model {model}): {detail}"),
        _ => e.to_string(),
    };
    Check::fail("endpoint", detail, fix)
}

fn api_check(api: ApiKind, facts: &ServerFacts, client: &Client) -> Check {
    match api {
        ApiKind::Ollama => Check::ok("api", "Ollama's native API (/api/chat, NDJSON)"),
        ApiKind::OpenAi if facts.ollama_v1 => Check::warn(
            "api",
            format!(
                "Ollama's /v1: it cannot take num_ctx, so kakeai budgets for Ollama's default \
                 context ({} tokens) instead of num_ctx {}",
                client.context_tokens(),
                client.config().num_ctx
            ),
            "use the endpoint without /v1 (Ollama's native API): num_ctx, keep_alive and \
             the truncation guard then apply",
        ),
        ApiKind::OpenAi => Check::ok("api", "OpenAI-compatible (/v1/chat/completions, SSE)"),
    }
}

fn version_check(facts: &ServerFacts) -> Check {
    let (a, b, c) = GUARD_SINCE;
    match &facts.version {
        Some(v) if facts.guard_supported() => Check::ok(
            "version",
            format!("Ollama {v}: over-long prompts are refused, never cut (truncate/shift off)"),
        ),
        Some(v) => Check::warn(
            "version",
            format!(
                "Ollama {v} cuts over-long prompts silently (it keeps system messages; kakeai \
                 does not learn from cut counts and stops on a context shift)"
            ),
            format!("upgrade Ollama to {a}.{b}.{c} or later"),
        ),
        None => Check::fail(
            "version",
            "GET /api/version gave no version",
            "is this really Ollama? pass --api openai for an OpenAI-compatible server",
        ),
    }
}

fn model_missing(api: ApiKind, model: &str, models: &[String]) -> Check {
    let e = LlmError::ModelNotFound {
        url: String::new(),
        model: model.to_string(),
        api,
        available: models.to_vec(),
    };
    let fix = match api {
        ApiKind::Ollama => format!("`ollama pull {model}`, or pass --model with one of those"),
        ApiKind::OpenAi => "pass --model with one the server serves".to_string(),
    };
    let detail = e.to_string().replace(" not found at ", " not found");
    Check::fail("model", detail, fix)
}

/// The context the budget uses. `fits_now`: whether the run's first turn fits it (None: not
/// computed), so the cap's advice never points at a num_ctx that leaves the run short.
fn context_check(
    client: &Client,
    api: ApiKind,
    facts: &ServerFacts,
    fits_now: Option<bool>,
) -> Check {
    let cfg = client.config();
    let ctx = client.context_tokens();
    let prompt = llm_budget::prompt_tokens(ctx, cfg.max_tokens);
    let detail = format!(
        "budgeting {ctx} tokens: {prompt} for the prompt, {} for the reply",
        cfg.max_tokens
    );
    match (api, facts.context_length) {
        (ApiKind::Ollama, None) => Check::fail(
            "context",
            format!(
                "/api/show did not give the model's context ({})",
                facts.show_error.as_deref().unwrap_or("no context_length")
            ),
            "check `ollama show <model>`; kakeai cannot tell whether num_ctx fits",
        ),
        (ApiKind::Ollama, Some(trained)) if cfg.num_ctx > trained => Check::warn(
            "context",
            format!(
                "num_ctx {} is above the model's {trained}; Ollama caps it — {detail}",
                cfg.num_ctx
            ),
            match fits_now {
                Some(false) => format!(
                    "the model holds {trained} tokens at most, too few for a run: see the budget line"
                ),
                _ => format!("set num_ctx = {trained} in llm.toml (Ollama uses no more)"),
            },
        ),
        // Without the run's prompts (the workbench's probe), a rough floor.
        _ if fits_now.is_none() && prompt < 1024 => Check::fail(
            "context",
            detail,
            "raise the context (num_ctx, or the server's) or lower max_tokens",
        ),
        _ => Check::ok("context", detail),
    }
}

fn role_check(client: &Client, api: ApiKind, facts: &ServerFacts) -> Check {
    let role = client.system_role(api);
    let why = if client.config().configured_system_role().is_some() {
        "as configured (system_role)"
    } else if api == ApiKind::Ollama && facts.takes_system.is_some() {
        "as the model's template takes it"
    } else {
        "by the model's name (the template could not be read)"
    };
    match role {
        SystemRole::Native => Check::ok("system", format!("sent as a `system` message, {why}")),
        SystemRole::Fold if api == ApiKind::Ollama && !facts.guard_supported() => Check::warn(
            "system",
            format!(
                "folded into the first user message, {why} — the first message Ollama drops when a prompt is too long"
            ),
            "upgrade Ollama to 0.13 or later so such a prompt is refused instead",
        ),
        SystemRole::Fold => Check::ok(
            "system",
            format!("folded into the first user message, {why}"),
        ),
    }
}

async fn load_check(client: &Client, api: ApiKind) -> Check {
    if api != ApiKind::Ollama {
        return Check::ok("load", "the server loads its model at start-up");
    }
    match client.preload().await {
        Ok(d) => Check::ok(
            "load",
            format!(
                "loaded in {:.1} s (preload, keep_alive {} s)",
                d.as_secs_f64(),
                client.config().keep_alive_s
            ),
        ),
        Err(e) => Check::fail(
            "load",
            e.to_string(),
            "raise timeouts.load_ms, free memory, or use a smaller model",
        ),
    }
}

/// Tokens per Japanese character from the server's own counts: a one-token generation for
/// a one-character prompt and for the sample; the difference is the sample's text alone.
async fn ratio_check(client: &Client) -> (Check, Option<f64>) {
    let count = |text: &str| {
        let mut req = ChatRequest::line(vec![Message::user(text)]);
        req.max_tokens = Some(1);
        req.cap = false;
        async move { client.chat(&req).await.map(|c| c.prompt_tokens) }
    };
    let (base, full) = (count("あ").await, count(SAMPLE).await);
    let first_guess = client.config().tokens_per_char;
    let measured = match (&base, &full) {
        (Ok(Some(b)), Ok(Some(f))) if f > b => {
            let n = SAMPLE.chars().count().saturating_sub(1).max(1);
            Some(f64::from(f - b) / n as f64)
        }
        _ => None,
    };
    let check = match (base, full, measured) {
        (_, _, Some(r)) => {
            if r <= first_guess {
                Check::ok(
                    "tokens/char",
                    format!(
                        "{r:.2} tokens per Japanese character (first guess {first_guess}: on the safe side)"
                    ),
                )
            } else {
                Check::warn(
                    "tokens/char",
                    format!(
                        "{r:.2} tokens per Japanese character, above the first guess {first_guess}"
                    ),
                    format!("set tokens_per_char = {:.2} in llm.toml", r * 1.1),
                )
            }
        }
        (Err(e), _, _) | (_, Err(e), _) => Check::fail(
            "tokens/char",
            e.to_string(),
            "the model could not answer a one-token request",
        ),
        _ => Check::warn(
            "tokens/char",
            "the server gave no prompt counts",
            "kakeai keeps its first guess (tokens_per_char)",
        ),
    };
    (check, measured)
}

/// The vault review's semantic check as a run sets it up (`vault::semantic::Embedder`): off
/// without `embed_model`, and never an embedding with the chat model (an embed request cannot
/// carry `shift`, so Ollama would load the chat model again, and once more for the next chat).
async fn embed_check(client: &Client, api: ApiKind) -> Check {
    let cfg = client.config();
    let pull = match api {
        ApiKind::Ollama => {
            "set embed_model = \"nomic-embed-text\" in llm.toml and `ollama pull nomic-embed-text`"
        }
        ApiKind::OpenAi => "set embed_model (and embed_endpoint) to a model a server embeds with",
    };
    let embedder = crate::vault::semantic::Embedder::from_config(cfg);
    let Some(embed) = embedder.client() else {
        return Check::warn(
            "embeddings",
            format!(
                "not configured ({}): the vault review's semantic check does not run",
                embedder.why_off()
            ),
            pull,
        );
    };
    let ecfg = embed.config();
    if ecfg.embed_model() == cfg.model && ecfg.endpoint == cfg.endpoint {
        return Check::warn(
            "embeddings",
            format!(
                "embed_model is the chat model {}: not tried — each embedding would reload it",
                cfg.model
            ),
            pull,
        );
    }
    let model = ecfg.embed_model().to_string();
    match embed.embed(&["埋め込みの確認".to_string()]).await {
        Ok(v) => Check::ok(
            "embeddings",
            format!("{model} ({} dimensions)", v.first().map_or(0, Vec::len)),
        ),
        Err(e) => Check::warn(
            "embeddings",
            format!("{model} cannot embed: {e} (the vault review's semantic check is skipped)"),
            pull,
        ),
    }
}

/// A message as the rules leave it, for timing the PII second opinion.
const PII_SAMPLE: &str = "［氏名］さんに明日の打ち合わせの件を伝えておいてください。折り返しは［電話番号］までお願いします。";

/// The budgets the PII second opinion must answer within: chat (policy.toml `[pii]`) and the
/// LINE bot (serve.toml `[pii] llm_seconds`, at most half the answer budget).
fn pii_budgets() -> (f64, f64) {
    let chat = crate::safety::SafetyRules::load().map_or(5.0, |r| r.pii.seconds);
    let serve = crate::serve::config::ServeConfig::load(None)
        .unwrap_or_else(|_| crate::serve::config::ServeConfig::defaults());
    let line = serve.pii.llm_seconds.min(serve.answer_budget_seconds / 2.0);
    (chat, line)
}

/// Times one PII second opinion as chat and the bot ask it (a rule-masked message, as many
/// tokens as its answer needs) against both budgets: over one, that path falls back on every
/// message (chat: not sent; LINE: her fallback line).
async fn pii_check(client: &Client) -> Check {
    let (chat, line) = pii_budgets();
    let limit = std::time::Duration::from_secs_f64(chat.max(line) * 2.0);
    let req = crate::safety::pii::second::request(PII_SAMPLE);
    let t0 = std::time::Instant::now();
    let reply = tokio::time::timeout(limit, client.chat(&req)).await;
    let took = t0.elapsed().as_secs_f64();
    match reply {
        Ok(Ok(_)) if took <= line.min(chat) => Check::ok(
            "PII check",
            format!("answered in {took:.1} s (budgets: LINE {line:.1} s, chat {chat:.1} s)"),
        ),
        Ok(Ok(_)) => Check::warn(
            "PII check",
            format!(
                "answered in {took:.1} s: over the {} budget ({} s) — every message there would get the fallback",
                if took > line { "LINE" } else { "chat" },
                if took > line { line } else { chat }
            ),
            "use a faster model or GPU, raise llm_seconds in serve.toml / policy.toml [pii], or set llm = \"off\"",
        ),
        Ok(Err(e)) => Check::fail(
            "PII check",
            e.without_server_text().to_string(),
            "the PII second opinion cannot be had: fix the line above, or set [pii] llm = \"off\"",
        ),
        Err(_) => Check::fail(
            "PII check",
            format!("no answer within {:.0} s", limit.as_secs_f64()),
            "use a faster model, or set [pii] llm = \"off\" in serve.toml and policy.toml",
        ),
    }
}

async fn judge_check(client: &Client) -> Check {
    let messages = vec![
        Message::system("あなたは会話の審査員です。指定のJSONだけを返してください。"),
        Message::user(
            "やな「おはよー、あゆ！」 あゆ「おはようございます、お姉ちゃん。」を1〜5で採点してください。",
        ),
    ];
    let mut req = ChatRequest::judge(
        messages,
        ResponseFormat::Schema(crate::director::judge::schema()),
    );
    req.max_tokens = Some(160);
    match client.chat(&req).await {
        Ok(c) => match crate::director::judge::parse(&c.text) {
            Ok(_) => Check::ok("judge", "JSON mode works (the reply read as scores)"),
            Err(why) => Check::fail(
                "judge",
                format!("the reply did not read as scores: {why}"),
                "use a model that follows the JSON schema (format), or run with --no-judge",
            ),
        },
        Err(e) => Check::fail(
            "judge",
            e.to_string(),
            "the judge call failed; run with --no-judge or fix the line above",
        ),
    }
}
