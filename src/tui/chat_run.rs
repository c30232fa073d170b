//! The chat pipeline, run off the UI task: PII masking first (the raw text goes no further),
//! then the safety layers, a プロレス pattern or the model in character, then the Director.
//! Each step reports to the app as a `ChatMsg`.

use std::sync::Arc;

use tokio::sync::mpsc::UnboundedSender;

use super::Runtime;
use super::app::{ChatMsg, UiMsg};
use super::chat::Source;
use crate::director::{self, Character, RuleSet, Verdict};
use crate::llm::{ChatRequest, Client, LlmConfig, Message};
use crate::safety::{ClientLlm, Judgment, Sister, UserContext, pii};
use crate::store::chat::NewChat;
use crate::text::{Analysis, Analyzer};
use crate::vault::SharedVault;

/// What one message needs, cloned out of the runtime's services.
pub(super) struct Deps {
    pub store: crate::store::StoreHandle,
    /// The conversation this chat belongs to (one per workbench session).
    pub conversation: String,
    /// The last pattern use waiting for the user's next message: (usage id, when it was used).
    pub pending_use: Option<(i64, i64)>,
    pub rules: RuleSet,
    pub safety: Arc<crate::safety::SafetyRules>,
    pub analyzer: Arc<dyn Analyzer>,
    pub llm: LlmConfig,
    pub vault: Option<Arc<SharedVault>>,
    pub scene: String,
}

pub(super) struct Emit(pub UnboundedSender<UiMsg>);

impl Emit {
    pub fn send(&self, m: ChatMsg) {
        let _ = self.0.send(UiMsg::Chat(m));
    }
    pub fn trace(&self, s: impl Into<String>) {
        self.send(ChatMsg::Trace(s.into()));
    }
}

impl Runtime {
    pub(super) fn chat_send(
        &mut self,
        text: String,
        character: String,
        history: Vec<(String, String)>,
    ) {
        let s = &self.services;
        let pending_use = self.app.chat.as_ref().and_then(|c| {
            c.exchanges
                .iter()
                .rev()
                .nth(1)
                .and_then(|e| match e.source {
                    Source::Pattern { usage_id, .. } => Some((usage_id, e.at_ms)),
                    _ => None,
                })
        });
        let deps = Deps {
            store: s.store.clone(),
            conversation: self.chat_conversation.clone(),
            pending_use,
            rules: self.app.rules.clone(),
            safety: s.safety.clone(),
            analyzer: s.analyzer.clone(),
            llm: s.llm.clone(),
            vault: s.vault.clone(),
            scene: s.duo.world.clone(),
        };
        let emit = Emit(self.tx.clone());
        tokio::spawn(async move {
            let error = respond(&deps, text, &character, &history, &emit)
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
) -> Result<(), String> {
    let masked = pii::shared().mask(&raw);
    drop(raw);
    let kinds: Vec<String> = masked
        .items
        .iter()
        .map(|i| i.kind.label().to_string())
        .collect();
    emit.trace(if kinds.is_empty() {
        "PII: nothing to mask".to_string()
    } else {
        format!(
            "PII: masked {} (only the text's SHA-256 {}… is kept)",
            kinds.join("・"),
            &masked.original_sha256[..12]
        )
    });
    emit.send(ChatMsg::Masked {
        masked: masked.masked_text.clone(),
        kinds,
    });
    let mut row = NewChat {
        conversation_id: deps.conversation.clone(),
        character: character.to_string(),
        user_masked: masked.masked_text.clone(),
        original_content_hash: masked.original_sha256.clone(),
        pii_kinds: kinds_of(&masked.items),
        ..NewChat::default()
    };
    let text = masked.masked_text;
    // The user answered: the pattern used last time succeeded (seed 000 §7 outcome).
    if let Some((usage_id, at)) = deps.pending_use {
        resolve_previous(deps, usage_id, at, emit).await;
    }
    let Some(me) = deps.rules.character(character).cloned() else {
        return Err(format!("unknown character `{character}`"));
    };
    let sister = Sister::parse(&me.id).unwrap_or(Sister::Yana);
    let judgment = safety(deps, &text, sister, history, emit).await;
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
        answer(deps, &me, sister, &text, history, &judgment, &mut row, emit).await
    };
    if result.is_err() {
        row.source = "failed".into();
    }
    save(deps, row, emit).await;
    result
}

fn kinds_of(items: &[pii::PiiItem]) -> Vec<String> {
    items.iter().map(|i| i.kind.label().to_string()).collect()
}

/// A pattern when the message is banter and one qualifies; otherwise the model. Then the
/// Director on whatever was said.
#[allow(clippy::too_many_arguments)]
async fn answer(
    deps: &Deps,
    me: &Character,
    sister: Sister,
    text: &str,
    history: &[(String, String)],
    judgment: &Judgment,
    row: &mut NewChat,
    emit: &Emit,
) -> Result<(), String> {
    let banter = judgment.context_type == Some(crate::safety::ContextType::Banter);
    let pattern = if banter {
        best_pattern(deps, me, text, emit).await
    } else {
        None
    };
    let reply = match pattern {
        Some((p, usage_id, rank)) => {
            row.source = "pattern".into();
            row.pattern_id = Some(p.pattern_id);
            row.usage_id = Some(usage_id);
            emit.send(ChatMsg::Reply {
                text: p.bot_response.clone(),
                source: Source::Pattern {
                    pattern_id: p.pattern_id,
                    usage_id,
                    rank,
                },
            });
            p.bot_response
        }
        None => {
            row.source = "llm".into();
            generate(deps, me, text, history, emit).await?
        }
    };
    let (verdict, l5) = judge(deps, me, sister, &reply);
    if let Some(l5) = l5 {
        emit.trace(l5);
    }
    emit.trace(format!("Director: {}", verdict.status));
    row.reply = reply;
    row.verdict = serde_json::to_value(&verdict).ok();
    emit.send(ChatMsg::Judged(Box::new(verdict)));
    Ok(())
}

/// Seed 000 §6.3: the best pattern of this sister with success ≥ 0.7; its use is logged.
async fn best_pattern(
    deps: &Deps,
    me: &Character,
    text: &str,
    emit: &Emit,
) -> Option<(crate::patterns::Pattern, i64, String)> {
    use crate::patterns as pat;
    let who = pat::Character::parse(&me.id)?;
    let (message, conv) = (text.to_string(), deps.conversation.clone());
    let found = deps
        .store
        .call(move |s| {
            let q = pat::best::BestQuery::new(who, &message);
            let Some(m) = pat::best::best_match(s.connection(), &q).map_err(se)? else {
                return Ok(None);
            };
            let usage = pat::usage::record_use(
                s.connection(),
                &pat::usage::NewUse {
                    pattern_id: m.pattern.pattern_id,
                    conversation_id: Some(conv),
                    user_id: Some("reviewer".into()),
                    user_message: Some(message.clone()),
                    bot_response: None,
                    character: Some(who),
                    at: pat::stamp::now_ms(),
                },
            )
            .map_err(se)?;
            let rank = pat::db::scored(s.connection(), m.pattern.pattern_id)
                .map(|sp| sp.rank.as_str().to_string())
                .map_err(se)?;
            Ok(Some((m, usage, rank)))
        })
        .await;
    match found {
        Ok(Some((m, usage, rank))) => {
            emit.trace(format!(
                "pattern #{} ({} → {}): success {:.0}% · likes {:.0}% · used {} · relevance {:.2}",
                m.pattern.pattern_id,
                m.pattern.user_message_type,
                m.pattern.bot_response_type.as_str(),
                m.pattern.success_rate * 100.0,
                m.pattern.like_rate * 100.0,
                m.pattern.used_count + 1,
                m.relevance
            ));
            Some((m.pattern, usage, rank))
        }
        Ok(None) => {
            emit.trace("pattern: none of hers reaches 70% success — the model answers");
            None
        }
        Err(e) => {
            emit.trace(format!("pattern store: {e} — the model answers"));
            None
        }
    }
}

async fn resolve_previous(deps: &Deps, usage_id: i64, at: i64, emit: &Emit) {
    use crate::patterns as pat;
    let now = pat::stamp::now_ms();
    let r = deps
        .store
        .call(move |s| {
            pat::usage::resolve_use(
                s.connection(),
                usage_id,
                pat::usage::Observation::Replied {
                    at: now,
                    continued: false,
                },
                super::patterns_run::WINDOW_SECS,
            )
            .map_err(se)
        })
        .await;
    match r {
        Ok(res) => emit.trace(format!(
            "the last pattern reply was answered after {}s: {res:?}",
            (now - at) / 1000
        )),
        Err(e) => emit.trace(format!("pattern outcome not recorded: {e}")),
    }
}

async fn save(deps: &Deps, row: NewChat, emit: &Emit) {
    match deps.store.call(move |s| s.save_chat(&row)).await {
        Ok(id) => emit.send(ChatMsg::Saved(id)),
        Err(e) => emit.trace(format!("NOT saved: {e}")),
    }
}

fn se(e: impl std::fmt::Display) -> crate::store::StoreError {
    crate::store::StoreError::Invalid(e.to_string())
}

/// The sister answers in character, streamed.
async fn generate(
    deps: &Deps,
    me: &Character,
    text: &str,
    history: &[(String, String)],
    emit: &Emit,
) -> Result<String, String> {
    let partner = deps
        .rules
        .character(&me.partner)
        .cloned()
        .unwrap_or_else(|| me.clone());
    let world = match &deps.vault {
        Some(v) => crate::vault::shared::worlds(&v.get().1, &deps.scene, &[me.id.as_str()])
            .remove(&me.id)
            .unwrap_or_else(|| deps.scene.clone()),
        None => deps.scene.clone(),
    };
    let system = format!(
        "{}\n【世界設定】\n{}\n\n【いまの状況】\n{}は、話しかけてきた相手と一対一で話しています。相手の言葉に、{}らしく1〜3文で答えてください。",
        crate::duo::persona::section(me, &partner),
        world,
        me.display_name,
        me.display_name
    );
    let mut messages = vec![Message::system(system)];
    for (u, a) in history {
        messages.push(Message::user(u.clone()));
        if !a.is_empty() {
            messages.push(Message::assistant(a.clone()));
        }
    }
    messages.push(Message::user(text.to_string()));
    let client = Client::new(deps.llm.clone()).map_err(|e| e.to_string())?;
    emit.trace(format!(
        "model: {} at {}",
        deps.llm.model, deps.llm.endpoint
    ));
    let tx = emit.0.clone();
    let mut on_token = move |d: &str| {
        let _ = tx.send(UiMsg::Chat(ChatMsg::Token(d.to_string())));
    };
    let done = client
        .stream_chat(&ChatRequest::line(messages), &mut on_token)
        .await
        .map_err(|e| e.to_string())?;
    emit.send(ChatMsg::Reply {
        text: done.text.clone(),
        source: Source::Llm,
    });
    Ok(done.text)
}

/// Layers 1–4 on the masked message; L4 asks the model when L1–L3 raised something.
async fn safety(
    deps: &Deps,
    text: &str,
    sister: Sister,
    history: &[(String, String)],
    emit: &Emit,
) -> Judgment {
    let ctx = UserContext {
        returning: history.len() >= 3,
        previous_messages: history.len(),
        recent_flags: 0,
    };
    let judgment = match Client::new(deps.llm.clone()) {
        Ok(client) => {
            let llm = ClientLlm { client };
            deps.safety
                .judge
                .judge_async(text, sister, &ctx, &llm)
                .await
        }
        Err(_) => deps.safety.judge.judge(text, sister, &ctx),
    };
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
        (Some(r), Some(l)) => format!("safety: blocked at L{l} ({r:?})"),
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

/// The Director's static rules, the leak rule and the world-view check (L5) on the reply.
/// Returns the verdict and, when L5 fired, its trace line with the in-character correction.
fn judge(deps: &Deps, me: &Character, sister: Sister, reply: &str) -> (Verdict, Option<String>) {
    let a = Analysis::new(reply);
    let mut v = director::judge(&deps.rules, deps.analyzer.as_ref(), me, &a, &[]);
    let l5 = deps.safety.worldview.check(reply, sister);
    let trace = (!l5.is_empty()).then(|| {
        let mut s = format!("L5 worldview: {} meta word(s) break the fiction", l5.len());
        if let Some(fix) = deps.safety.worldview.correct(reply, sister) {
            s.push_str(&format!(" — in character: {fix}"));
        }
        s
    });
    v.findings.extend(l5);
    if let Some(vault) = &deps.vault {
        let r = vault.reviewer(&me.id);
        v.findings.extend(crate::vault::review::findings(
            &r.review(reply),
            r.input(),
            r.config(),
        ));
    }
    v.status = Verdict::status_of(&v.findings);
    (v, trace)
}
