//! The chat pipeline, run off the UI task: PII masking first (the raw text goes no further),
//! then the safety layers, a プロレス pattern or the model in character, then the Director.
//! Each step reports to the app as a `ChatMsg`.

use crate::tui::error::UiError;
use std::sync::Arc;

use tokio::sync::mpsc::UnboundedSender;

use crate::director::{Character, RuleSet, Verdict};
use crate::llm::LlmConfig;
use crate::patterns::ingest::Role;
use crate::safety::{Judgment, Sister, UserContext, pii};
use crate::store::chat::NewChat;
use crate::text::Analyzer;
use crate::tui::Runtime;
use crate::tui::app::{ChatMsg, UiMsg};
use crate::tui::chat::{ChatTarget, Source};
use crate::vault::SharedVault;

/// What one message needs, cloned out of the runtime's services.
pub(crate) struct Deps {
    pub store: crate::store::StoreHandle,
    /// The conversation this chat belongs to (one per workbench session).
    pub conversation: String,
    /// The first message of this chat: stale pattern uses of earlier chats are settled first.
    pub first: bool,
    /// The safety layers' view of the user (`chat::context`: blocked messages are flags).
    pub user_context: UserContext,
    pub rules: RuleSet,
    pub safety: Arc<crate::safety::SafetyRules>,
    pub analyzer: Arc<dyn Analyzer>,
    pub llm: LlmConfig,
    pub vault: Option<Arc<SharedVault>>,
    pub scene: String,
}

/// Reports to the app, for the exchange the answer belongs to; the trace is also kept for the
/// stored exchange.
pub(crate) struct Emit(
    pub UnboundedSender<UiMsg>,
    std::sync::Mutex<Vec<String>>,
    pub ChatTarget,
);

impl Emit {
    pub fn new(tx: UnboundedSender<UiMsg>, to: ChatTarget) -> Emit {
        Emit(tx, std::sync::Mutex::new(Vec::new()), to)
    }
    pub fn send(&self, m: ChatMsg) {
        let _ = self.0.send(UiMsg::Chat(self.2, m));
    }
    pub fn trace(&self, s: impl Into<String>) {
        let s = s.into();
        if let Ok(mut t) = self.1.lock() {
            t.push(s.clone());
        }
        self.send(ChatMsg::Trace(s));
    }
    fn traced(&self) -> Vec<String> {
        self.1.lock().map(|t| t.clone()).unwrap_or_default()
    }
}

impl Runtime {
    pub(crate) fn chat_send(
        &mut self,
        text: String,
        character: String,
        history: Vec<crate::chat::Turn>,
        to: ChatTarget,
    ) {
        let s = &self.services;
        let first = self
            .app
            .chat
            .as_ref()
            .is_none_or(|c| c.exchanges.len() <= 1);
        let ctx = crate::chat::context::context(&history);
        let deps = Deps {
            store: s.store.clone(),
            conversation: self.chat_conversation.clone(),
            first,
            user_context: ctx.user,
            rules: self.app.rules.clone(),
            safety: s.safety.get(),
            analyzer: s.analyzer.clone(),
            llm: s.llm.clone(),
            vault: s.vault.clone(),
            scene: s.duo.world.clone(),
        };
        let emit = Emit::new(self.tx.clone(), to);
        tokio::spawn(async move {
            let error = respond(&deps, text, &character, &ctx.history, &emit)
                .await
                .err();
            emit.send(ChatMsg::Done { id: None, error });
        });
    }
}

/// Masks `raw` and answers it. The raw text is dropped after masking.
async fn respond(
    deps: &Deps,
    raw: String,
    character: &str,
    history: &[(String, String)],
    emit: &Emit,
) -> Result<(), UiError> {
    let (masked, digest) = masked(raw, emit);
    let (masked, unchecked) = second_opinion(deps, masked, emit).await;
    let mut row = NewChat {
        conversation_id: deps.conversation.clone(),
        character: character.to_string(),
        user_masked: masked.masked_text.clone(),
        original_content_hash: digest,
        pii_kinds: kinds_of(&masked.items),
        ..NewChat::default()
    };
    if let Some(why) = unchecked {
        // Fail closed: a message the model could not check goes to no model.
        row.action = "block".into();
        row.source = "pii-unchecked".into();
        row.trace = emit.traced();
        save(deps, row, emit).await;
        return Err(UiError::Model(format!(
            "PII not checked by the model ({why}): the message was not sent to her"
        )));
    }
    let text = masked.masked_text;
    let Some(me) = deps.rules.character(character).cloned() else {
        return Err(UiError::Missing(format!("unknown character `{character}`")));
    };
    if deps.first {
        settle_stale_uses(deps, emit).await;
    }
    // The user's message joins the conversation log; a pattern used before it is resolved from
    // the timing (seed 000 §7: answered within the window = success; spoke again = continued).
    log_message(
        deps,
        crate::patterns::ingest::Role::User,
        &me,
        &text,
        None,
        emit,
    )
    .await;
    let sister = Sister::parse(&me.id).unwrap_or(Sister::Yana);
    let judgment = safety(deps, &text, sister, emit).await;
    row.safety = serde_json::to_value(&judgment).ok();
    let result = if judgment.is_blocked() {
        emit.send(ChatMsg::Reply {
            text: String::new(),
            source: Source::Blocked,
        });
        row.action = "block".into();
        row.source = "blocked".into();
        Ok(())
    } else {
        row.action = "respond".into();
        answer(deps, &me, &text, history, &judgment, &mut row, emit).await
    };
    if result.is_err() {
        row.source = "failed".into();
    }
    row.trace = emit.traced();
    save(deps, row, emit).await;
    result
}

/// The message masked (the raw text goes no further) and its keyed digest (none without the
/// installation secret — never a plain hash); what was masked is traced and shown.
fn masked(raw: String, emit: &Emit) -> (pii::Masked, String) {
    let masked = pii::shared().mask(&raw);
    drop(raw);
    // The keyed digest; without the installation secret none is kept (never a plain hash).
    let digest = match pii::installation_key() {
        Ok(key) => masked.digest(key),
        Err(e) => {
            emit.trace(format!("PII: no digest kept ({e})"));
            String::new()
        }
    };
    let kinds: Vec<String> = masked
        .items
        .iter()
        .map(|i| i.kind.label().to_string())
        .collect();
    emit.trace(if kinds.is_empty() {
        "PII: nothing to mask".to_string()
    } else {
        format!(
            "PII: masked {} (only the text's keyed digest {}… is kept)",
            kinds.join("・"),
            digest.get(..12).unwrap_or("")
        )
    });
    emit.send(ChatMsg::Masked {
        masked: masked.masked_text.clone(),
        kinds,
    });
    (masked, digest)
}

/// The model's second opinion on the rule-masked message (policy.toml `[pii]`): the union,
/// shown again when it masked more, and why it could not be had when the mode is fail-closed.
async fn second_opinion(
    deps: &Deps,
    masked: pii::Masked,
    emit: &Emit,
) -> (pii::Masked, Option<String>) {
    let check = deps.safety.pii;
    if check.mode == pii::PiiLlmMode::Off {
        return (masked, None);
    }
    let before = masked.items.len();
    let limit = std::time::Duration::from_secs_f64(check.seconds);
    let (after, flag) = pii::second::ask(&deps.llm, masked, check.mode, limit).await;
    match &flag {
        Some(why) => emit.trace(format!("PII second opinion failed: {why}")),
        None if after.items.len() > before => {
            emit.trace("PII second opinion: the model masked more".to_string());
            emit.send(ChatMsg::Masked {
                masked: after.masked_text.clone(),
                kinds: kinds_of(&after.items),
            });
        }
        None => emit.trace("PII second opinion: nothing more".to_string()),
    }
    (after, flag)
}

fn kinds_of(items: &[pii::PiiItem]) -> Vec<String> {
    items.iter().map(|i| i.kind.label().to_string()).collect()
}

/// Her answer, chosen as the bot chooses it (`chat::choose`: a banter pattern or the model's
/// first usable attempt, else her fallback line, else nothing), streamed to the chat as it
/// goes; the lines judged unusable are listed under the exchange, never said.
async fn answer(
    deps: &Deps,
    me: &Character,
    text: &str,
    history: &[(String, String)],
    judgment: &Judgment,
    row: &mut NewChat,
    emit: &Emit,
) -> Result<(), UiError> {
    use crate::chat::choose::Plan;
    let banter = judgment.context_type == Some(crate::safety::ContextType::Banter);
    let pattern = if banter {
        best_pattern(deps, me, text, emit).await
    } else {
        None
    };
    emit.trace(format!(
        "model: {} at {}",
        deps.llm.model, deps.llm.endpoint
    ));
    let serve = serve_defaults();
    let fallback = serve
        .lines
        .get(&me.id)
        .map(|l| l.fallback.clone())
        .ok_or_else(|| UiError::Missing(format!("no fallback line for `{}`", me.id)))?;
    let plan = Plan {
        me,
        said: text,
        prompt_history: history,
        judge_history: history,
        setting: crate::chat::prompt::Setting::OneToOne,
        max_attempts: serve.max_attempts,
        started: std::time::Instant::now(),
        budget: CHAT_BUDGET,
        fallback: &fallback,
    };
    let mut watch = Watching(emit.0.clone(), emit.2);
    let c = engine(deps).choose(&plan, pattern, &mut watch).await;
    said(deps, me, c, row, emit).await
}

/// The chosen line in the chat and in the exchange's row: a pattern's use and her line go to
/// the conversation log (pattern learning); a withheld answer says nothing.
async fn said(
    deps: &Deps,
    me: &Character,
    c: crate::chat::choose::Choice,
    row: &mut NewChat,
    emit: &Emit,
) -> Result<(), UiError> {
    use crate::chat::choose::Line;
    for t in c.how.trace {
        emit.trace(t);
    }
    let (source, said) = match c.line {
        Line::Pattern(p) => {
            let p = *p;
            row.source = "pattern".into();
            row.pattern_id = Some(p.pattern.pattern_id);
            // Logging the line logs the use (ingest's rule); its id takes the 👍/👎.
            let usage = log_message(
                deps,
                Role::Bot,
                me,
                &c.text,
                Some(p.pattern.pattern_id),
                emit,
            );
            let Some(usage_id) = usage.await else {
                return Err(UiError::Store(
                    "the pattern's use could not be logged".into(),
                ));
            };
            row.usage_id = Some(usage_id);
            let source = Source::Pattern {
                pattern_id: p.pattern.pattern_id,
                usage_id,
                rank: p.rank,
            };
            (source, true)
        }
        Line::Model => (Source::Llm, true),
        Line::Fallback => (Source::Fallback, true),
        Line::Withheld => (Source::Withheld, false),
    };
    if !matches!(source, Source::Pattern { .. }) {
        row.source = match source {
            Source::Llm => "llm",
            Source::Fallback => "fallback",
            _ => "withheld",
        }
        .into();
        if said {
            log_message(deps, Role::Bot, me, &c.text, None, emit).await;
        }
    }
    let reply = if said { c.text } else { String::new() };
    emit.send(ChatMsg::Reply {
        text: reply.clone(),
        source,
    });
    emit.trace(format!("Director: {}", c.verdict.status));
    row.reply = reply;
    row.verdict = serde_json::to_value(&c.verdict).ok();
    emit.send(ChatMsg::Judged(Box::new(c.verdict)));
    Ok(())
}

/// The bot's bundled settings (her fallback lines, `max_attempts`), parsed once: chat mode
/// chooses as the bot does.
fn serve_defaults() -> &'static crate::serve::config::ServeConfig {
    static D: std::sync::OnceLock<crate::serve::config::ServeConfig> = std::sync::OnceLock::new();
    D.get_or_init(crate::serve::config::ServeConfig::defaults)
}

/// How long chat mode waits for one answer, every attempt included (a person at the
/// workbench waits longer than a LINE user; the bot's budget is `answer_budget_seconds`).
const CHAT_BUDGET: std::time::Duration = std::time::Duration::from_secs(180);

/// Streams the attempts to the chat: tokens as they come, a new attempt clears the shown
/// text, a rejected line is listed under the exchange.
struct Watching(UnboundedSender<UiMsg>, ChatTarget);

impl crate::chat::choose::Watch for Watching {
    fn attempt(&mut self, n: usize) {
        let _ = self.0.send(UiMsg::Chat(self.1, ChatMsg::Attempt(n)));
    }
    fn token(&mut self, delta: &str) {
        let m = ChatMsg::Token(delta.to_string());
        let _ = self.0.send(UiMsg::Chat(self.1, m));
    }
    fn rejected(&mut self, text: &str, verdict: &Verdict) {
        let m = ChatMsg::Rejected(text.to_string(), Box::new(verdict.clone()));
        let _ = self.0.send(UiMsg::Chat(self.1, m));
    }
}

/// Seed 000 §6.3: the best pattern of this sister with success ≥ 0.7, and its rank
/// (`chat::engine::best_pattern`, as the bot).
async fn best_pattern(
    deps: &Deps,
    me: &Character,
    text: &str,
    emit: &Emit,
) -> Option<crate::chat::engine::Chosen> {
    let who = crate::patterns::Character::parse(&me.id)?;
    match crate::chat::engine::best_pattern(&deps.store, who, text).await {
        Ok(Some(c)) => {
            emit.trace(c.trace.clone());
            Some(c)
        }
        Ok(None) => {
            emit.trace(
                "pattern: none of hers is on trial or reaches 70% success — the model answers",
            );
            None
        }
        Err(e) => {
            emit.trace(format!("pattern store: {e} — the model answers"));
            None
        }
    }
}

fn ingest_options() -> crate::patterns::ingest::IngestOptions {
    crate::patterns::ingest::IngestOptions {
        window_secs: crate::tui::runtime::patterns_run::WINDOW_SECS,
        as_of: crate::patterns::stamp::now_ms(),
        source: "workbench-chat".into(),
    }
}

/// Writes one chat line to the conversation log (so dropouts and outcomes see chats as they
/// see ingested logs) and traces what it resolved. Returns the usage id of a pattern's line.
async fn log_message(
    deps: &Deps,
    role: crate::patterns::ingest::Role,
    me: &Character,
    text: &str,
    pattern_id: Option<i64>,
    emit: &Emit,
) -> Option<i64> {
    use crate::patterns as pat;
    let message = pat::ingest::LogMessage {
        line: 0,
        conversation_id: deps.conversation.clone(),
        user_id: "reviewer".into(),
        role,
        text: text.to_string(),
        at: pat::stamp::now_ms(),
        pattern_id,
        character: pat::Character::parse(&me.id),
    };
    let r = deps
        .store
        .call(move |s| {
            pat::ingest::log_live(s.db(), message, &ingest_options()).map_err(crate::store::invalid)
        })
        .await;
    match r {
        Ok((report, usage)) => {
            if report.successes + report.failures > 0 {
                emit.trace(format!(
                    "the last pattern reply: {} success, {} failure (answered within {} min or not)",
                    report.successes,
                    report.failures,
                    crate::tui::runtime::patterns_run::WINDOW_SECS / 60
                ));
            }
            usage
        }
        Err(e) => {
            emit.trace(format!("conversation log NOT written: {e}"));
            None
        }
    }
}

/// Pattern uses of earlier chats whose user never wrote again: failures once the window closed.
async fn settle_stale_uses(deps: &Deps, emit: &Emit) {
    use crate::patterns as pat;
    let r = deps
        .store
        .call(|s| {
            pat::ingest::resolve_open(s.db(), &ingest_options()).map_err(crate::store::invalid)
        })
        .await;
    match r {
        Ok(rep) if rep.failures + rep.successes > 0 => emit.trace(format!(
            "earlier chats settled: {} pattern use(s) unanswered past the window → failure, {} answered → success",
            rep.failures, rep.successes
        )),
        Ok(_) => {}
        Err(e) => emit.trace(format!("earlier pattern uses not settled: {e}")),
    }
}

async fn save(deps: &Deps, row: NewChat, emit: &Emit) {
    match deps.store.call(move |s| s.save_chat(&row)).await {
        Ok(id) => emit.send(ChatMsg::Saved(id)),
        Err(e) => emit.trace(format!("NOT saved: {e}")),
    }
}

/// The shared pipeline steps over the chat's services.
fn engine(deps: &Deps) -> crate::chat::engine::Engine<'_> {
    crate::chat::engine::Engine {
        rules: &deps.rules,
        safety: &deps.safety,
        analyzer: deps.analyzer.as_ref(),
        llm: &deps.llm,
        vault: deps.vault.as_deref(),
        scene: &deps.scene,
    }
}

/// Layers 1–4 on the masked message; L4 asks the model when L1–L3 raised something.
async fn safety(deps: &Deps, text: &str, sister: Sister, emit: &Emit) -> Judgment {
    let judgment = engine(deps)
        .safety(text, sister, &deps.user_context, None)
        .await;
    for step in &judgment.trace {
        let hits: Vec<String> = step
            .hits
            .iter()
            .map(|h| {
                format!(
                    "「{}」({}/{})",
                    h.text,
                    h.tier.as_str(),
                    h.category.as_str()
                )
            })
            .collect();
        let hits = if hits.is_empty() {
            String::new()
        } else {
            format!(" {}", hits.join(" "))
        };
        emit.trace(format!(
            "L{} {}: {:?}{hits} — {}",
            step.layer, step.name, step.outcome, step.note
        ));
    }
    emit.trace(match (&judgment.reason, judgment.layer) {
        (Some(r), Some(l)) => format!("safety: blocked at L{l} ({})", r.as_str()),
        _ => format!(
            "safety: respond{}",
            judgment
                .context_type
                .map(|c| format!(" · context {}", c.as_str()))
                .unwrap_or_default()
        ),
    });
    judgment
}
