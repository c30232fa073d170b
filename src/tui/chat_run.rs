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
use crate::text::{Analysis, Analyzer};
use crate::vault::SharedVault;

/// What one message needs, cloned out of the runtime's services.
pub(super) struct Deps {
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
        let deps = Deps {
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
    let text = masked.masked_text;
    let Some(me) = deps.rules.character(character).cloned() else {
        return Err(format!("unknown character `{character}`"));
    };
    let sister = Sister::parse(&me.id).unwrap_or(Sister::Yana);
    let judgment = safety(deps, &text, sister, history, emit).await;
    if judgment.is_blocked() {
        emit.send(ChatMsg::Reply {
            text: String::new(),
            source: Source::Blocked,
        });
        return Ok(());
    }
    let reply = generate(deps, &me, &text, history, emit).await?;
    let (verdict, l5) = judge(deps, &me, sister, &reply);
    if let Some(l5) = l5 {
        emit.trace(l5);
    }
    emit.trace(format!("Director: {}", verdict.status));
    emit.send(ChatMsg::Judged(Box::new(verdict)));
    Ok(())
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

impl Runtime {
    /// 👍/👎 on a pattern reply: recorded on its usage-log row.
    pub(super) fn pattern_feedback(&mut self, usage_id: i64, up: bool) {
        let _ = (usage_id, up);
        self.app.status = "pattern feedback needs the pattern store".into();
    }
}

impl Runtime {
    pub(super) fn patterns_command(&mut self, cmd: super::app::Command) {
        let _ = cmd;
        self.app.status = "the pattern store is not wired yet".into();
    }
}
