//! The interview runner: the I/O edge around the pure [`Machine`]. It masks each user message,
//! saves it, asks the model for the sister's reply (judged by the Director plus the
//! `interview_question` rule, one re-ask on RETRY), and on any model failure — after the
//! client's own retry and non-stream fallback — hands over to the fixed fallback questions, so
//! a conversation always finishes.

use std::sync::Arc;

use serde::Serialize;

use super::config::InterviewConfig;
use super::prompt;
use super::state::{Finish, Machine, Next, State};
use super::store::{self as istore, NewMessage};
use crate::director::{self, RuleSet, Status, Verdict};
use crate::llm::{ChatRequest, Client, Message};
use crate::store::{StoreError, StoreHandle};
use crate::text::{Analysis, Analyzer};

/// Model attempts per reply (the first included) before a RETRY reply is kept as it is.
pub const ATTEMPTS: usize = 2;

/// One thing that happened, as printed by `kakeai interview --headless`.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Event {
    pub event: &'static str,
    /// The state after the event.
    pub state: State,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    pub user_turns: usize,
    pub deep: usize,
    pub fallback: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub question: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verdict: Option<Status>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub findings: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub pii: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finish: Option<Finish>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interview_id: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub analysis: Option<&'static str>,
}

impl Event {
    pub fn new(event: &'static str, m: &Machine) -> Event {
        Event {
            event,
            state: m.state,
            text: None,
            user_turns: m.user_turns,
            deep: m.deep,
            fallback: m.fallback_mode,
            source: None,
            question: None,
            verdict: None,
            findings: Vec::new(),
            pii: Vec::new(),
            error: None,
            finish: None,
            interview_id: None,
            analysis: None,
        }
    }
}

pub struct Runner {
    pub cfg: InterviewConfig,
    pub client: Option<Client>,
    pub rules: RuleSet,
    pub analyzer: Arc<dyn Analyzer>,
    pub store: StoreHandle,
    pub interview_id: i64,
    /// The story vault her replies are reviewed against (Director rule `leak`); None: no vault,
    /// said by the caller.
    pub vault: Option<Arc<crate::vault::SharedVault>>,
}

/// How a run ended, for the exit code.
#[derive(Debug, PartialEq)]
pub enum Outcome {
    Finished {
        fallback: bool,
        finish: Finish,
    },
    /// The answers ran out before the conversation finished.
    Unfinished,
}

struct Reply {
    text: String,
    verdict: Verdict,
}

impl Runner {
    /// Runs the whole interview, taking answers from `answers` (a closed, empty channel: the
    /// user left) and reporting through `emit`.
    pub async fn run(
        &self,
        machine: &mut Machine,
        answers: &mut tokio::sync::mpsc::UnboundedReceiver<String>,
        emit: &mut (dyn FnMut(&Event) + Send),
    ) -> Result<Outcome, StoreError> {
        let mut history: Vec<Message> = Vec::new();
        let mut seq = 0i64;
        let mut start = Event::new("start", machine);
        start.interview_id = Some(self.interview_id);
        start.text = Some(self.cfg.goal.clone());
        emit(&start);
        let mut next = machine.start();
        loop {
            // The sister's turn.
            let (text, source, question, verdict, why) = match next {
                Next::Model => match self.generate(machine, &history).await {
                    Ok(r) => (r.text, "model", None, Some(r.verdict), None),
                    Err(e) => {
                        let mut ev = Event::new("model_failed", machine);
                        ev.error = Some(crate::text::sanitize::for_terminal(&e).into_owned());
                        next = machine.model_failed();
                        ev.state = machine.state;
                        ev.fallback = machine.fallback_mode;
                        emit(&ev);
                        continue;
                    }
                },
                Next::Fixed { question, text } => (text, "fallback", Some(question), None, None),
                Next::Finish { text, why } => (text, "closing", None, None, Some(why)),
            };
            seq += 1;
            let row = NewMessage {
                interview_id: self.interview_id,
                seq,
                role: "assistant",
                state: machine.state.as_str().into(),
                content: text.clone(),
                original_content_hash: None,
                pii_kinds: Vec::new(),
                source,
                verdict: verdict.as_ref().and_then(|v| serde_json::to_value(v).ok()),
            };
            let (fb, turns) = (machine.fallback_mode, machine.user_turns);
            self.store
                .call(move |s| istore::add_message(s, &row, fb, turns))
                .await?;
            let mut ev = Event::new("reply", machine);
            ev.text = Some(text.clone());
            ev.source = Some(source);
            ev.question = question;
            if let Some(v) = &verdict {
                ev.verdict = Some(v.status);
                ev.findings = v.findings.iter().map(|f| f.rule.to_string()).collect();
            }
            emit(&ev);
            history.push(Message::assistant(text));
            if let Some(why) = why {
                let id = self.interview_id;
                let w = serde_json::to_value(why)
                    .ok()
                    .and_then(|v| v.as_str().map(String::from))
                    .unwrap_or_default();
                self.store.call(move |s| istore::finish(s, id, &w)).await?;
                let mut done = Event::new("done", machine);
                done.finish = Some(why);
                done.interview_id = Some(id);
                done.analysis = Some("queued");
                emit(&done);
                return Ok(Outcome::Finished {
                    fallback: machine.fallback_mode,
                    finish: why,
                });
            }
            // The user's turn.
            let Some(raw) = answers.recv().await else {
                let mut ev = Event::new("done", machine);
                ev.interview_id = Some(self.interview_id);
                ev.error = Some("the answers ran out before the interview finished".into());
                emit(&ev);
                return Ok(Outcome::Unfinished);
            };
            let masked = crate::safety::pii::shared().mask(&raw);
            let hash = crate::safety::pii::keyfile::installation_key()
                .ok()
                .map(|k| masked.digest(k));
            let kinds: Vec<String> = masked
                .items
                .iter()
                .map(|i| i.kind.label().to_string())
                .collect();
            let content = masked.masked_text.clone();
            next = machine.user(&content);
            seq += 1;
            let row = NewMessage {
                interview_id: self.interview_id,
                seq,
                role: "user",
                state: machine.state.as_str().into(),
                content: content.clone(),
                original_content_hash: hash,
                pii_kinds: kinds.clone(),
                source: "user",
                verdict: None,
            };
            let (fb, turns) = (machine.fallback_mode, machine.user_turns);
            self.store
                .call(move |s| istore::add_message(s, &row, fb, turns))
                .await?;
            let mut ev = Event::new("user", machine);
            ev.text = Some(content.clone());
            ev.pii = kinds;
            emit(&ev);
            history.push(Message::user(content));
        }
    }

    /// One reply from the model, judged; re-asked once with the Director's guidance on RETRY.
    async fn generate(&self, m: &Machine, history: &[Message]) -> Result<Reply, String> {
        let Some(client) = &self.client else {
            return Err("no model endpoint".into());
        };
        let system = format!(
            "{}\n\n{}",
            prompt::system_prompt(&self.cfg),
            prompt::behaviour(m, &self.cfg)
        );
        let character = self
            .rules
            .character(&self.cfg.sister)
            .ok_or_else(|| format!("no character {}", self.cfg.sister))?;
        let mut guidance = String::new();
        let mut last = None;
        for _ in 0..ATTEMPTS {
            let mut msgs = vec![Message::system(format!("{system}{guidance}"))];
            msgs.extend(history.iter().cloned());
            if history.is_empty() {
                // Some chat templates need a user turn before the first reply.
                msgs.push(Message::user("（インタビューを始めてください）"));
            }
            let c = client
                .stream_chat(&ChatRequest::line(msgs), &mut |_| {})
                .await
                .map_err(|e| e.to_string())?;
            let text = c.text.trim().to_string();
            if text.is_empty() {
                return Err("the model returned an empty reply".into());
            }
            let mut verdict = director::judge(
                &self.rules,
                self.analyzer.as_ref(),
                character,
                &Analysis::new(&text),
                &[],
            );
            director::rules::interview_question::apply(&text, &mut verdict);
            if let Some(v) = &self.vault {
                let r = v.reviewer(&character.id);
                verdict.findings.extend(crate::vault::review::findings(
                    &r.review(&text),
                    r.input(),
                    r.config(),
                ));
                verdict.status = Verdict::status_of(&verdict.findings);
            }
            if verdict.status != Status::Retry {
                return Ok(Reply { text, verdict });
            }
            guidance = format!("\n\n前回の返答の直すべき点：{}", retry_hint(&verdict));
            last = Some(Reply { text, verdict });
        }
        // Every attempt was RETRY: keep the last one, its verdict says so — unless the leak
        // review rejected it: that line is never said nor kept as history; the fixed
        // questions take over (as after a model failure).
        match last {
            Some(r) if crate::duo::policy::leak_rejected(&r.verdict) => Err(
                "the leak review rejected every attempt: nothing of it is said or kept; the fixed questions take over"
                    .into(),
            ),
            Some(r) => Ok(r),
            None => Err("no attempt".into()),
        }
    }
}

/// The suggestions of a rejected reply, for its re-ask: a leak finding worded neutrally (never
/// naming the secret), each suggestion once.
fn retry_hint(v: &Verdict) -> String {
    let mut parts: Vec<String> = Vec::new();
    for f in v.findings.iter().filter(|f| f.status >= Status::Warn) {
        let s = if f.rule == director::RuleId::Leak {
            crate::vault::leak::neutral_messages().1
        } else {
            f.suggestion.clone()
        };
        if !s.is_empty() && !parts.contains(&s) {
            parts.push(s);
        }
    }
    parts.join(" ")
}
