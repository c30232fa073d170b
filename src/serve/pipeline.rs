//! Her answer to one LINE message (already PII-masked at the door): Layers 1–4 of the safety
//! judgment, then the pattern DB's best match for banter (seed 000 §6.3) or the model in
//! character with her vault view; the Director (with L5 and the leak review) judges whatever
//! would be said; RETRY regenerates while the time budget lasts, and past it the best attempt
//! or her safe fallback line goes out, marked for review. Pattern lines and model lines are
//! logged with `patterns::ingest::log_live`, as chat mode and `kakeai ingest` do.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::Services;
use super::metrics::inc;
use super::store::UserLine;
use crate::director::{self, Status, Verdict};
use crate::llm::{Client, Message};
use crate::patterns as pat;
use crate::safety::{ClientLlm, ContextType, Judgment, Sister, UserContext};
use crate::text::Analysis;

/// What she will say (or that she was blocked), with everything the store keeps about it.
#[derive(Debug, Clone, Default)]
pub struct Answer {
    /// None: blocked by the safety layers (nothing is sent).
    pub text: Option<String>,
    pub source: String,
    pub pattern_id: Option<i64>,
    pub usage_id: Option<i64>,
    pub safety: Option<serde_json::Value>,
    pub verdict: Option<Verdict>,
    pub attempts: usize,
    pub review: bool,
    pub trace: Vec<String>,
}

/// The dropout window, as in the workbench's chat mode (answered within it = success).
pub const WINDOW_SECS: i64 = 30 * 60;

/// The conversation-log id of a LINE chat (one per group, room or 1:1 user).
pub fn conversation(channel: &str) -> String {
    format!("line:{channel}")
}

/// Writes one line to the conversation log, so outcomes and dropouts are learned exactly as
/// `kakeai ingest` learns them. Returns the usage id of a pattern's line.
pub async fn log_line(
    svc: &Services,
    channel: &str,
    role: pat::ingest::Role,
    text: &str,
    pattern_id: Option<i64>,
    trace: &mut Vec<String>,
) -> Option<i64> {
    let message = pat::ingest::LogMessage {
        line: 0,
        conversation_id: conversation(channel),
        user_id: "line".into(),
        role,
        text: text.to_string(),
        at: pat::stamp::now_ms(),
        pattern_id,
        character: pat::Character::parse(&svc.me.id),
    };
    let opts = pat::ingest::IngestOptions {
        window_secs: WINDOW_SECS,
        as_of: pat::stamp::now_ms(),
        source: "line".into(),
    };
    let r = svc
        .store
        .call(move |s| pat::ingest::log_live(s.connection(), message, &opts).map_err(se))
        .await;
    match r {
        Ok((rep, usage)) => {
            if rep.successes + rep.failures > 0 {
                trace.push(format!(
                    "the last pattern reply: {} success, {} failure",
                    rep.successes, rep.failures
                ));
            }
            usage
        }
        Err(e) => {
            trace.push(format!("conversation log NOT written: {e}"));
            None
        }
    }
}

fn se(e: impl std::fmt::Display) -> crate::store::StoreError {
    crate::store::StoreError::Invalid(e.to_string())
}

/// The whole pipeline for `user` (its line is in the conversation log already).
pub async fn answer(svc: &Services, user: &UserLine) -> Answer {
    let started = Instant::now();
    let budget = Duration::from_secs_f64(svc.cfg.answer_budget_seconds);
    let mut a = Answer::default();
    let history = history(svc, user).await;
    let sister = Sister::parse(&svc.me.id).unwrap_or(Sister::Yana);
    let judgment = safety(svc, &user.text_masked, sister, &history).await;
    a.safety = serde_json::to_value(&judgment).ok();
    if judgment.is_blocked() {
        inc(&svc.metrics.blocks);
        a.source = "blocked".into();
        a.trace.push(format!(
            "safety: blocked at L{:?} ({:?})",
            judgment.layer, judgment.reason
        ));
        return a;
    }
    if judgment.context_type == Some(ContextType::Banter)
        && let Some(p) = best_pattern(svc, &user.text_masked, &mut a.trace).await
    {
        inc(&svc.metrics.pattern_hits);
        let usage = log_line(
            svc,
            &user.channel_id,
            pat::ingest::Role::Bot,
            &p.bot_response,
            Some(p.pattern_id),
            &mut a.trace,
        )
        .await;
        a.verdict = Some(judge(svc, sister, &history, &p.bot_response));
        a.source = "pattern".into();
        a.pattern_id = Some(p.pattern_id);
        a.usage_id = usage;
        a.attempts = 1;
        a.text = Some(p.bot_response);
        return a;
    }
    // The model, RETRY regenerating while the budget lasts.
    let mut best: Option<(String, Verdict)> = None;
    while a.attempts < svc.cfg.max_attempts {
        let left = budget.saturating_sub(started.elapsed());
        if left.is_zero() {
            break;
        }
        a.attempts += 1;
        match tokio::time::timeout(left, generate(svc, &user.text_masked, &history)).await {
            Ok(Ok(text)) if !text.trim().is_empty() => {
                let mut v = judge(svc, sister, &history, &text);
                if let Some(vault) = &svc.vault {
                    crate::vault::semantic::amend(&mut v, vault, &svc.me.id, &text).await;
                }
                a.trace.push(format!(
                    "attempt {}: Director {}",
                    a.attempts,
                    v.status.as_str()
                ));
                let better = best.as_ref().is_none_or(|(_, b)| v.status < b.status);
                let done = v.status != Status::Retry;
                if better {
                    best = Some((text, v));
                }
                if done {
                    break;
                }
            }
            Ok(Ok(_)) => a.trace.push(format!("attempt {}: empty reply", a.attempts)),
            Ok(Err(e)) => a
                .trace
                .push(format!("attempt {}: model failed: {e}", a.attempts)),
            Err(_) => a.trace.push(format!(
                "attempt {}: past the {:.0} s budget",
                a.attempts,
                budget.as_secs_f64()
            )),
        }
    }
    let (text, verdict, source) = match best {
        Some((t, v)) => {
            if v.status == Status::Retry {
                a.review = true;
                a.trace.push(
                    "budget spent: the best attempt (still RETRY) is sent, marked for review"
                        .into(),
                );
            }
            inc(&svc.metrics.model_replies);
            (t, v, "llm")
        }
        None => {
            a.review = true;
            inc(&svc.metrics.fallbacks);
            a.trace.push(
                "no usable attempt within the budget: her fallback line, marked for review".into(),
            );
            let t = svc.cfg.lines().fallback.clone();
            let v = judge(svc, sister, &history, &t);
            (t, v, "fallback")
        }
    };
    if a.review {
        inc(&svc.metrics.reviews);
    }
    log_line(
        svc,
        &user.channel_id,
        pat::ingest::Role::Bot,
        &text,
        None,
        &mut a.trace,
    )
    .await;
    a.source = source.into();
    a.verdict = Some(verdict);
    a.text = Some(text);
    a
}

/// The scope's earlier lines, as (role, text), the message itself excluded.
async fn history(svc: &Services, user: &UserLine) -> Vec<(String, String)> {
    let (ch, th, id) = (user.channel_id.clone(), user.thread_ts.clone(), user.id);
    let limit = svc.cfg.response.message_limit;
    svc.store
        .call(move |s| {
            let mut st = s.conn().prepare(
                "SELECT role, text_masked FROM line_messages WHERE channel_id = ?1 AND thread_ts IS ?2
                   AND id < ?3 ORDER BY id DESC LIMIT ?4",
            )?;
            let mut v: Vec<(String, String)> = st
                .query_map(rusqlite::params![ch, th, id, limit as i64], |r| Ok((r.get(0)?, r.get(1)?)))?
                .collect::<Result<_, _>>()?;
            v.reverse();
            Ok(v)
        })
        .await
        .unwrap_or_default()
}

async fn safety(
    svc: &Services,
    text: &str,
    sister: Sister,
    history: &[(String, String)],
) -> Judgment {
    let users = history.iter().filter(|(r, _)| r == "user").count();
    let ctx = UserContext {
        returning: users >= 3,
        previous_messages: users,
        recent_flags: 0,
    };
    match Client::new(svc.llm.clone()) {
        Ok(client) => {
            let llm = ClientLlm { client };
            svc.safety.judge.judge_async(text, sister, &ctx, &llm).await
        }
        Err(_) => svc.safety.judge.judge(text, sister, &ctx),
    }
}

async fn best_pattern(svc: &Services, text: &str, trace: &mut Vec<String>) -> Option<pat::Pattern> {
    let who = pat::Character::parse(&svc.me.id)?;
    let message = text.to_string();
    let found = svc
        .store
        .call(move |s| {
            let q = pat::best::BestQuery::new(who, &message);
            pat::best::best_match(s.connection(), &q).map_err(se)
        })
        .await;
    match found {
        Ok(Some(m)) => {
            trace.push(format!(
                "pattern #{} (success {:.0}%)",
                m.pattern.pattern_id,
                m.pattern.success_rate * 100.0
            ));
            Some(m.pattern)
        }
        Ok(None) => {
            trace.push("pattern: none of hers reaches 70% success — the model answers".into());
            None
        }
        Err(e) => {
            trace.push(format!("pattern store: {e} — the model answers"));
            None
        }
    }
}

/// She answers in character, with her vault view of the world.
async fn generate(
    svc: &Services,
    text: &str,
    history: &[(String, String)],
) -> Result<String, String> {
    let me = &svc.me;
    let partner = svc
        .rules
        .character(&me.partner)
        .cloned()
        .unwrap_or_else(|| me.clone());
    let world = match &svc.vault {
        Some(v) => crate::vault::shared::worlds(&v.get().1, &svc.scene, &[me.id.as_str()])
            .remove(&me.id)
            .unwrap_or_else(|| svc.scene.clone()),
        None => svc.scene.clone(),
    };
    let system = format!(
        "{}\n【世界設定】\n{}\n\n【いまの状況】\n{}は、LINEで話しかけてきた相手とおしゃべりしています。相手の言葉に、{}らしく1〜3文で答えてください。",
        crate::duo::persona::section(me, &partner),
        world,
        me.display_name,
        me.display_name
    );
    let mut messages = vec![Message::system(system)];
    for (role, t) in history {
        messages.push(if role == "user" {
            Message::user(t.clone())
        } else {
            Message::assistant(t.clone())
        });
    }
    messages.push(Message::user(text.to_string()));
    let client = Client::new(svc.llm.clone()).map_err(|e| e.to_string())?;
    let done = crate::duo::backend::fitted_stream(&client, messages, &mut |_| {}).await?;
    let mut out = done.text;
    if done.finish == crate::llm::Finish::Length {
        out = crate::duo::cut::to_last_sentence(&out, &svc.llm.trim_chars).0;
    }
    Ok(out.trim().to_string())
}

/// The Director's static rules, L5 (world view) and the vault's leak review on `reply`.
pub fn judge(svc: &Services, sister: Sister, history: &[(String, String)], reply: &str) -> Verdict {
    let me = &svc.me;
    let context: Vec<director::ContextTurn> = history
        .iter()
        .map(|(role, t)| director::ContextTurn {
            speaker: if role == "user" {
                "user".to_string()
            } else {
                me.id.clone()
            },
            analysis: Arc::new(Analysis::new(t)),
        })
        .collect();
    let mut v = director::judge(
        &svc.rules,
        svc.analyzer.as_ref(),
        me,
        &Analysis::new(reply),
        &context,
    );
    v.findings.extend(svc.safety.worldview.check(reply, sister));
    if let Some(vault) = &svc.vault {
        let r = vault.reviewer(&me.id);
        v.findings.extend(crate::vault::review::findings(
            &r.review(reply),
            r.input(),
            r.config(),
        ));
    }
    v.status = Verdict::status_of(&v.findings);
    v
}
