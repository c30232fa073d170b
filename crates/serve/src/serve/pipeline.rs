//! Her answer to one LINE message (already PII-masked at the door): Layers 1–4 of the safety
//! judgment with the chat's context (`chat::context`: the user's blocked messages are flags and
//! never reach a prompt), then the pattern DB's choice for banter (seed 000 §6.3 with the cold
//! start of `patterns::best::choose`) or the model in character with her vault view. Every line
//! that would be said — pattern, model or fallback — is judged (`chat::verdict`) and only a
//! *usable* one (PASS or WARN) goes out: a RETRY pattern is skipped, a RETRY attempt is
//! regenerated while the budget and the attempts last, then her fallback line goes out, marked
//! for review; and when even the fallback is not usable, nothing is sent (`withheld`).
//! Pattern lines and model lines are logged with `patterns::ingest::log_live`, as chat mode and
//! `kakeai ingest` do.

use std::time::{Duration, Instant};

use super::Services;
use super::metrics::inc;
use super::store::UserLine;
use crate::chat::choose::{Choice, How, Line, Plan, Unwatched};
use crate::chat::engine::{Chosen, Engine};
use crate::chat::{self, ChatContext, prompt::Setting};
use crate::director::Verdict;
use crate::patterns as pat;
use crate::safety::{ContextType, Judgment, Sister, UserContext};

/// What she will say (or that she was blocked), with everything the store keeps about it.
#[derive(Debug, Clone, Default)]
pub struct Answer {
    /// None: nothing is sent — blocked by the safety layers (`source` "blocked") or no usable
    /// line, not even her fallback (`source` "withheld").
    pub text: Option<String>,
    /// The fallback line that was judged unusable, kept for review (never sent).
    pub withheld: Option<String>,
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
        .call(move |s| pat::ingest::log_live(s.db(), message, &opts).map_err(crate::store::invalid))
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

/// The whole pipeline for `user` (its line is in the conversation log already).
pub async fn answer(svc: &Services, user: &UserLine, spent: Duration) -> Answer {
    let started = Instant::now();
    let mut a = Answer::default();
    let (ctx, group) = context(svc, user).await;
    let budget = Duration::from_secs_f64(svc.cfg.answer_budget_seconds).saturating_sub(spent);
    // A group's prompt tells speakers apart; the Director judges against the plain lines.
    let (said_text, before) = match &group {
        Some(g) => (g.text.as_str(), g.history.as_slice()),
        None => (user.text_masked.as_str(), ctx.history.as_slice()),
    };
    let plan = Plan {
        me: &svc.me,
        said: said_text,
        prompt_history: before,
        judge_history: &ctx.history,
        setting: if user.source_type == "user" {
            Setting::OneToOne
        } else {
            Setting::Group
        },
        max_attempts: svc.cfg.max_attempts,
        started,
        budget,
        fallback: &svc.cfg.lines().fallback,
    };
    if user.pii_check == super::pii_pass::FAILED {
        // Fail closed: a message the PII second opinion could not check goes to no model.
        a.review = true;
        a.trace.push(
            "PII not checked by the model: her text is not sent to a model — her fallback line, marked for review"
                .into(),
        );
        let c = engine(svc).fallback(&plan, How::default()).await;
        return finish(svc, user, a, c).await;
    }
    let sister = Sister::parse(&svc.me.id).unwrap_or(Sister::Yana);
    let judgment = safety(svc, &user.text_masked, sister, &ctx.user, budget).await;
    a.safety = serde_json::to_value(&judgment).ok();
    if judgment.is_blocked() {
        inc(&svc.metrics.blocks);
        a.source = "blocked".into();
        a.trace.push(format!(
            "safety: blocked at L{} ({}) · {} of the last {} messages blocked",
            judgment.layer.map_or("?".into(), |l| l.to_string()),
            judgment.reason.map_or("no reason given", |r| r.as_str()),
            ctx.user.recent_flags,
            chat::context::FLAG_WINDOW
        ));
        return a;
    }
    let pattern = match judgment.context_type {
        Some(ContextType::Banter) => best_pattern(svc, &user.text_masked, &mut a.trace).await,
        _ => None,
    };
    let c = engine(svc).choose(&plan, pattern, &mut Unwatched).await;
    finish(svc, user, a, c).await
}

/// The chosen line (`chat::choose`) in the answer: counted, logged for pattern learning, and
/// said — or withheld when not even her fallback was usable.
async fn finish(svc: &Services, user: &UserLine, mut a: Answer, c: Choice) -> Answer {
    let how = c.how;
    a.trace.extend(how.trace);
    a.review |= how.review;
    a.attempts = how.attempts;
    (0..how.rejected).for_each(|_| inc(&svc.metrics.rejected));
    (0..how.model_errors).for_each(|_| inc(&svc.metrics.model_errors));
    match c.line {
        Line::Pattern(p) => said_pattern(svc, user, p.pattern, c.verdict, a).await,
        Line::Model => {
            inc(&svc.metrics.model_replies);
            said(svc, user, a, c.text, c.verdict, "llm").await
        }
        Line::Fallback => {
            inc(&svc.metrics.fallbacks);
            said(svc, user, a, c.text, c.verdict, "fallback").await
        }
        Line::Withheld => {
            inc(&svc.metrics.withheld);
            inc(&svc.metrics.reviews);
            a.source = "withheld".into();
            a.withheld = Some(c.text);
            a.verdict = Some(c.verdict);
            a
        }
    }
}

/// The line she says: logged for pattern learning and returned as the answer.
async fn said(
    svc: &Services,
    user: &UserLine,
    mut a: Answer,
    text: String,
    verdict: Verdict,
    source: &str,
) -> Answer {
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

/// A usable pattern line: its use is logged (so its outcome is learned) and it is said.
async fn said_pattern(
    svc: &Services,
    user: &UserLine,
    p: pat::Pattern,
    v: Verdict,
    mut a: Answer,
) -> Answer {
    inc(&svc.metrics.pattern_hits);
    a.usage_id = log_line(
        svc,
        &user.channel_id,
        pat::ingest::Role::Bot,
        &p.bot_response,
        Some(p.pattern_id),
        &mut a.trace,
    )
    .await;
    a.verdict = Some(v);
    a.source = "pattern".into();
    a.pattern_id = Some(p.pattern_id);
    a.attempts = 1;
    a.text = Some(p.bot_response);
    a
}

/// How long her fallback's semantic check may take once the budget is spent.
pub use crate::chat::choose::FALLBACK_GRACE;

/// The shared judgement with this server's rules, analyzer, safety rules and vault.
pub fn checks(svc: &Services) -> chat::Checks<'_> {
    engine(svc).checks()
}

/// The shared pipeline steps over the bot's services.
fn engine(svc: &Services) -> Engine<'_> {
    Engine {
        rules: &svc.rules,
        safety: &svc.safety,
        analyzer: svc.analyzer.as_ref(),
        llm: &svc.llm,
        vault: svc.vault.as_deref(),
        scene: &svc.scene,
    }
}

/// A group's lines for the prompt, each user line marked by its speaker (【A】【B】…).
pub struct GroupView {
    pub history: Vec<(String, String)>,
    /// The message answered, marked.
    pub text: String,
}

/// The scope's earlier lines as `chat::context` reads them (the message itself excluded):
/// blocked messages are flags, undelivered lines of hers are not part of it. In a group or
/// room, also the same lines marked by speaker for the prompt.
async fn context(svc: &Services, user: &UserLine) -> (ChatContext, Option<GroupView>) {
    let (ch, th, id) = (user.channel_id.clone(), user.thread_ts.clone(), user.id);
    let limit = svc
        .cfg
        .response
        .message_limit
        .max(2 * chat::context::FLAG_WINDOW);
    type Row = (String, String, String, String);
    let (rows, me) = svc
        .store
        .call(move |s| {
            let mut v: Vec<Row> = s.db().query_map(
                &format!(
                    "SELECT role, {}, state, speaker FROM line_messages WHERE channel_id = ?1
                       AND thread_ts IS NOT DISTINCT FROM ?2 AND id < ?3
                     ORDER BY id DESC LIMIT ?4",
                    super::store::MODEL_TEXT
                ),
                crate::p![ch, th, id, limit as i64],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
            )?;
            v.reverse();
            let me: String = s
                .db()
                .one(
                    "SELECT speaker FROM line_messages WHERE id = ?1",
                    crate::p![id],
                )
                .unwrap_or_default();
            Ok((v, me))
        })
        .await
        .unwrap_or_default();
    let keep = svc.cfg.response.message_limit;
    let plain: Vec<(String, String, String)> = rows
        .iter()
        .map(|(r, t, s, _)| (r.clone(), t.clone(), s.clone()))
        .collect();
    let c = trimmed(
        chat::context::context(&chat::context::turns_from_rows(&plain)),
        keep,
    );
    if user.source_type == "user" {
        return (c, None);
    }
    let mut who: Vec<&str> = rows
        .iter()
        .filter(|r| r.0 == "user")
        .map(|r| r.3.as_str())
        .collect();
    who.push(me.as_str());
    let mut marks = chat::prompt::speaker_marks(&who).into_iter();
    let marked: Vec<(String, String, String)> = plain
        .into_iter()
        .map(|(r, t, s)| match r.as_str() {
            "user" => {
                let m = marks.next().unwrap_or_default();
                (r, format!("{m}{t}"), s)
            }
            _ => (r, t, s),
        })
        .collect();
    let g = trimmed(
        chat::context::context(&chat::context::turns_from_rows(&marked)),
        keep,
    );
    let view = GroupView {
        history: g.history,
        text: format!("{}{}", marks.next().unwrap_or_default(), user.text_masked),
    };
    (c, Some(view))
}

/// The prompt keeps the last `keep` turns; the flags saw the longer window.
fn trimmed(mut c: ChatContext, keep: usize) -> ChatContext {
    if c.history.len() > keep {
        c.history.drain(..c.history.len() - keep);
    }
    c
}

/// Layers 1–4 within `budget` (the answer's, which L4 shares with generation and judging):
/// a Layer 4 that has not answered in time counts as failed (`chat::engine`).
async fn safety(
    svc: &Services,
    text: &str,
    sister: Sister,
    ctx: &UserContext,
    budget: Duration,
) -> Judgment {
    engine(svc).safety(text, sister, ctx, Some(budget)).await
}

/// The pattern for banter (`chat::engine::best_pattern`).
async fn best_pattern(svc: &Services, text: &str, trace: &mut Vec<String>) -> Option<Chosen> {
    let who = pat::Character::parse(&svc.me.id)?;
    match chat::engine::best_pattern(&svc.store, who, text).await {
        Ok(Some(c)) => {
            trace.push(c.trace.clone());
            Some(c)
        }
        Ok(None) => {
            trace.push(
                "pattern: none of hers is on trial or reaches 70% success — the model answers"
                    .into(),
            );
            None
        }
        Err(e) => {
            trace.push(format!("pattern store: {e} — the model answers"));
            None
        }
    }
}
