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
use crate::chat::engine::Engine;
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
        .call(move |s| {
            pat::ingest::log_live(s.connection(), message, &opts).map_err(crate::store::invalid)
        })
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
    if user.pii_check == super::pii_pass::FAILED {
        // Fail closed: a message the PII second opinion could not check goes to no model.
        a.review = true;
        a.trace.push(
            "PII not checked by the model: her text is not sent to a model — her fallback line, marked for review"
                .into(),
        );
        return match fallback(svc, &ctx.history, started + budget, &mut a).await {
            Some((text, v)) => said(svc, user, a, text, v, "fallback").await,
            None => a,
        };
    }
    let sister = Sister::parse(&svc.me.id).unwrap_or(Sister::Yana);
    let judgment = safety(svc, &user.text_masked, sister, &ctx.user, budget).await;
    a.safety = serde_json::to_value(&judgment).ok();
    if judgment.is_blocked() {
        inc(&svc.metrics.blocks);
        a.source = "blocked".into();
        a.trace.push(format!(
            "safety: blocked at L{:?} ({:?}) · {} of the last {} messages blocked",
            judgment.layer,
            judgment.reason,
            ctx.user.recent_flags,
            chat::context::FLAG_WINDOW
        ));
        return a;
    }
    if judgment.context_type == Some(ContextType::Banter)
        && let Some(p) = best_pattern(svc, &user.text_masked, &mut a.trace).await
    {
        let v = judged(svc, &ctx.history, &p.bot_response, &[], started + budget).await;
        if chat::usable(&v) {
            return said_pattern(svc, user, p, v, a).await;
        }
        inc(&svc.metrics.rejected);
        a.review = true;
        a.trace.push(format!(
            "pattern #{} judged {} ({}): skipped, marked for review — the model answers",
            p.pattern_id,
            v.status.as_str(),
            chat::verdict::blocking_rules(&v)
        ));
    }
    let chosen = attempts(
        svc,
        user,
        &ctx.history,
        group.as_ref(),
        (started, budget),
        &mut a,
    )
    .await;
    match chosen {
        Some((t, v)) => {
            inc(&svc.metrics.model_replies);
            said(svc, user, a, t, v, "llm").await
        }
        None => {
            a.review = true;
            a.trace.push(
                "no usable attempt within the budget: her fallback line, marked for review".into(),
            );
            match fallback(svc, &ctx.history, started + budget, &mut a).await {
                Some((t, v)) => said(svc, user, a, t, v, "fallback").await,
                None => a,
            }
        }
    }
}

/// Her fallback line, judged (with a little grace past `deadline`); None when it is not
/// usable either: then nothing is sent and `a` says so (withheld).
async fn fallback(
    svc: &Services,
    history: &[(String, String)],
    deadline: Instant,
    a: &mut Answer,
) -> Option<(String, Verdict)> {
    let t = svc.cfg.lines().fallback.clone();
    let deadline = deadline.max(Instant::now() + FALLBACK_GRACE);
    let v = judged(svc, history, &t, &[], deadline).await;
    if !chat::usable(&v) {
        inc(&svc.metrics.withheld);
        inc(&svc.metrics.reviews);
        a.trace.push(format!(
            "her fallback line is {} too ({}): NOTHING is sent, marked for review",
            v.status.as_str(),
            chat::verdict::blocking_rules(&v)
        ));
        a.source = "withheld".into();
        a.withheld = Some(t);
        a.verdict = Some(v);
        return None;
    }
    inc(&svc.metrics.fallbacks);
    Some((t, v))
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

/// The model, RETRY (or any unusable verdict) regenerating while the budget and the attempts
/// last. Returns the first usable line; rejected lines are never returned.
async fn attempts(
    svc: &Services,
    user: &UserLine,
    history: &[(String, String)],
    group: Option<&GroupView>,
    (started, budget): (Instant, Duration),
    a: &mut Answer,
) -> Option<(String, Verdict)> {
    let setting = if user.source_type == "user" {
        Setting::OneToOne
    } else {
        Setting::Group
    };
    while a.attempts < svc.cfg.max_attempts {
        let left = budget.saturating_sub(started.elapsed());
        if left.is_zero() {
            break;
        }
        a.attempts += 1;
        let n = a.attempts;
        // A group's prompt tells speakers apart; the Director judges against the plain lines.
        let (said, before) = match group {
            Some(g) => (g.text.as_str(), g.history.as_slice()),
            None => (user.text_masked.as_str(), history),
        };
        match tokio::time::timeout(left, generate(svc, said, before, setting)).await {
            Ok(Ok((text, _))) if text.trim().is_empty() => {
                a.trace.push(format!("attempt {n}: empty reply"))
            }
            Ok(Ok((text, scaffold))) => {
                let v = judged(svc, history, &text, &scaffold, started + budget).await;
                if chat::usable(&v) {
                    a.trace
                        .push(format!("attempt {n}: Director {}", v.status.as_str()));
                    return Some((text, v));
                }
                inc(&svc.metrics.rejected);
                a.trace.push(format!(
                    "attempt {n}: Director {} ({}) — not sent",
                    v.status.as_str(),
                    chat::verdict::blocking_rules(&v)
                ));
            }
            Ok(Err(e)) => {
                inc(&svc.metrics.model_errors);
                a.trace.push(format!("attempt {n}: model failed: {e}"))
            }
            Err(_) => a.trace.push(format!(
                "attempt {n}: past the {:.0} s budget",
                budget.as_secs_f64()
            )),
        }
    }
    None
}

/// Every line she might say — pattern, model attempt, fallback — judged the same way: the
/// shared checks, then the vault's semantic check (seed 004 §5.3) when an embedding model is
/// configured (the verdict names it as not run otherwise).
///
/// The embedding call gets until `deadline` (the answer budget; a little more for her fallback,
/// [`FALLBACK_GRACE`]): a slow embedding server makes the check "not run", named in the verdict,
/// never an answer later than the budget.
async fn judged(
    svc: &Services,
    history: &[(String, String)],
    text: &str,
    scaffold: &[String],
    deadline: Instant,
) -> Verdict {
    let (mut v, _) = checks(svc).judge(&svc.me, history, text, scaffold);
    if let Some(vault) = &svc.vault {
        let deadline = tokio::time::Instant::from_std(deadline);
        crate::vault::semantic::amend_until(&mut v, vault, &svc.me.id, text, deadline).await;
    }
    v
}

/// How long her fallback's semantic check may take once the budget is spent (its text passed
/// the static checks when the server started).
pub const FALLBACK_GRACE: Duration = Duration::from_secs(2);

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
            let mut st = s.conn().prepare(&format!(
                "SELECT role, {}, state, speaker FROM line_messages WHERE channel_id = ?1
                   AND thread_ts IS ?2 AND id < ?3 ORDER BY id DESC LIMIT ?4",
                super::store::MODEL_TEXT
            ))?;
            let mut v: Vec<Row> = st
                .query_map(rusqlite::params![ch, th, id, limit as i64], |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
                })?
                .collect::<Result<_, _>>()?;
            v.reverse();
            let me: String = s
                .conn()
                .query_row(
                    "SELECT speaker FROM line_messages WHERE id = ?1",
                    [id],
                    |r| r.get(0),
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
async fn best_pattern(svc: &Services, text: &str, trace: &mut Vec<String>) -> Option<pat::Pattern> {
    let who = pat::Character::parse(&svc.me.id)?;
    match chat::engine::best_pattern(&svc.store, who, text).await {
        Ok(Some(c)) => {
            trace.push(c.trace);
            Some(c.pattern)
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

/// She answers in character, with her vault view of the world (`chat::engine`, as the
/// workbench). Returns the reply and the prompt's instruction parts (for `prompt_echo`).
async fn generate(
    svc: &Services,
    text: &str,
    history: &[(String, String)],
    setting: Setting,
) -> Result<(String, Vec<String>), String> {
    let g = engine(svc)
        .generate(&svc.me, text, history, setting, &mut |_| {})
        .await?;
    Ok((g.text, g.scaffold))
}
