//! Which line she says, written once (issue 23) for the LINE bot and the workbench's chat mode:
//! every line that would be said — a banter pattern, a model attempt, her fallback — is judged
//! (`chat::verdict`, plus the vault's semantic check within the answer budget) and only a
//! *usable* one (PASS or WARN) is said. A rejected pattern is skipped and marked for review; a
//! rejected attempt is generated again while the budget and the attempts last; then her fallback
//! line, marked for review; and when even that is not usable nothing is said (withheld).
//! The drivers keep what differs: where tokens go, what they store and count.

use std::time::{Duration, Instant};

use super::engine::{Chosen, Engine};
use super::prompt::Setting;
use crate::director::{Character, Verdict};

/// How long her fallback's semantic check may take once the budget is spent (its text passed
/// the static checks when the driver started).
pub const FALLBACK_GRACE: Duration = Duration::from_secs(2);

/// One answer to choose.
pub struct Plan<'p> {
    pub me: &'p Character,
    /// The message as her prompt carries it (in a group, marked by speaker).
    pub said: &'p str,
    /// The earlier lines her prompt carries.
    pub prompt_history: &'p [(String, String)],
    /// The earlier lines the Director judges against (plain).
    pub judge_history: &'p [(String, String)],
    pub setting: Setting,
    pub max_attempts: usize,
    /// When the answer's budget started, and how long it is.
    pub started: Instant,
    pub budget: Duration,
    /// Her fallback line.
    pub fallback: &'p str,
}

impl Plan<'_> {
    fn deadline(&self) -> Instant {
        self.started + self.budget
    }
}

/// Where the line came from.
#[derive(Debug)]
pub enum Line {
    Pattern(Box<Chosen>),
    Model,
    Fallback,
    /// Nothing is said: even her fallback was not usable (`text` is that fallback).
    Withheld,
}

/// What was chosen, and how.
#[derive(Debug)]
pub struct Choice {
    pub line: Line,
    /// The line said (or, withheld, the fallback that was not).
    pub text: String,
    pub verdict: Verdict,
    pub how: How,
}

/// How the choice went: what the driver stores, counts and shows beside the line.
#[derive(Debug, Default)]
pub struct How {
    /// Model attempts made.
    pub attempts: usize,
    /// Marked for the reviewer (a skipped pattern, a fallback, a withheld answer).
    pub review: bool,
    pub trace: Vec<String>,
    /// Lines judged unusable (a pattern or an attempt), and model calls that failed.
    pub rejected: usize,
    pub model_errors: usize,
}

/// What a driver sees while the choice is made (chat mode streams the attempts).
pub trait Watch: Send {
    /// A new model attempt begins (what was shown of the one before is void).
    fn attempt(&mut self, _n: usize) {}
    /// A token of the attempt in flight.
    fn token(&mut self, _delta: &str) {}
    /// A line judged unusable (a pattern or an attempt): it is not said.
    fn rejected(&mut self, _text: &str, _verdict: &Verdict) {}
}

/// A driver that watches nothing (the bot sends only the chosen line).
pub struct Unwatched;
impl Watch for Unwatched {}

impl Engine<'_> {
    /// The judgement of a line she might say, with the vault's semantic check until `deadline`
    /// (past it the check counts as not run, named in the verdict). Layer 5's note, when it
    /// found meta words, goes to the trace.
    pub async fn judged(
        &self,
        me: &Character,
        history: &[(String, String)],
        text: &str,
        scaffold: &[String],
        deadline: Instant,
        trace: &mut Vec<String>,
    ) -> Verdict {
        let (mut v, l5) = self.checks().judge(me, history, text, scaffold);
        trace.extend(l5);
        if let Some(vault) = self.vault {
            let deadline = tokio::time::Instant::from_std(deadline);
            crate::vault::semantic::amend_until(&mut v, vault, &me.id, text, deadline).await;
        }
        v
    }

    /// `text` judged as her line in `plan`'s conversation, Layer 5's note into `c`'s trace.
    async fn judged_line(
        &self,
        plan: &Plan<'_>,
        text: &str,
        scaffold: &[String],
        deadline: Instant,
        c: &mut How,
    ) -> Verdict {
        let (me, history) = (plan.me, plan.judge_history);
        self.judged(me, history, text, scaffold, deadline, &mut c.trace)
            .await
    }

    /// The line she says to `plan.said`: `pattern` when one was chosen for banter and it is
    /// usable, else the model's first usable attempt, else her fallback when usable, else
    /// nothing (withheld).
    pub async fn choose(
        &self,
        plan: &Plan<'_>,
        pattern: Option<Chosen>,
        watch: &mut dyn Watch,
    ) -> Choice {
        let mut c = How::default();
        if let Some(p) = pattern {
            let text = p.pattern.bot_response.clone();
            let v = self
                .judged_line(plan, &text, &[], plan.deadline(), &mut c)
                .await;
            if super::usable(&v) {
                return c.said(Line::Pattern(Box::new(p)), text, v);
            }
            watch.rejected(&text, &v);
            c.rejected += 1;
            c.review = true;
            c.trace.push(format!(
                "pattern #{} judged {} ({}): skipped, marked for review — the model answers",
                p.pattern.pattern_id,
                v.status.as_str(),
                super::verdict::blocking_rules(&v)
            ));
        }
        if let Some((text, v)) = self.attempts(plan, &mut c, watch).await {
            return c.said(Line::Model, text, v);
        }
        c.review = true;
        c.trace.push(
            "no usable attempt within the budget: her fallback line, marked for review".into(),
        );
        self.fallback(plan, c).await
    }

    /// Her fallback line, judged (with [`FALLBACK_GRACE`] past the budget): said when usable,
    /// else withheld — nothing is said. `c` carries what happened before.
    pub async fn fallback(&self, plan: &Plan<'_>, mut c: How) -> Choice {
        let deadline = plan.deadline().max(Instant::now() + FALLBACK_GRACE);
        let text = plan.fallback.to_string();
        let v = self.judged_line(plan, &text, &[], deadline, &mut c).await;
        c.review = true;
        if super::usable(&v) {
            return c.said(Line::Fallback, text, v);
        }
        c.trace.push(format!(
            "her fallback line is {} too ({}): NOTHING is sent, marked for review",
            v.status.as_str(),
            super::verdict::blocking_rules(&v)
        ));
        c.said(Line::Withheld, text, v)
    }

    /// The model, any unusable verdict regenerating while the budget and the attempts last;
    /// the first usable line (rejected lines are never returned).
    async fn attempts(
        &self,
        plan: &Plan<'_>,
        c: &mut How,
        watch: &mut dyn Watch,
    ) -> Option<(String, Verdict)> {
        while c.attempts < plan.max_attempts {
            let left = plan.budget.saturating_sub(plan.started.elapsed());
            if left.is_zero() {
                break;
            }
            c.attempts += 1;
            let n = c.attempts;
            watch.attempt(n);
            let mut on_token = |d: &str| watch.token(d);
            let call = self.generate(
                plan.me,
                plan.said,
                plan.prompt_history,
                plan.setting,
                &mut on_token,
            );
            match tokio::time::timeout(left, call).await {
                Ok(Ok(g)) if g.text.trim().is_empty() => {
                    c.trace.extend(g.notes);
                    c.trace.push(format!("attempt {n}: empty reply"));
                }
                Ok(Ok(g)) => {
                    c.trace.extend(g.notes);
                    let deadline = plan.deadline();
                    let v = self
                        .judged_line(plan, &g.text, &g.scaffold, deadline, c)
                        .await;
                    if super::usable(&v) {
                        c.trace
                            .push(format!("attempt {n}: Director {}", v.status.as_str()));
                        return Some((g.text, v));
                    }
                    watch.rejected(&g.text, &v);
                    c.rejected += 1;
                    c.trace.push(format!(
                        "attempt {n}: Director {} ({}) — not sent",
                        v.status.as_str(),
                        super::verdict::blocking_rules(&v)
                    ));
                }
                Ok(Err(e)) => {
                    c.model_errors += 1;
                    c.trace.push(format!("attempt {n}: model failed: {e}"));
                }
                Err(_) => c.trace.push(format!(
                    "attempt {n}: past the {:.0} s budget",
                    plan.budget.as_secs_f64()
                )),
            }
        }
        None
    }
}

impl How {
    fn said(self, line: Line, text: String, verdict: Verdict) -> Choice {
        Choice {
            line,
            text,
            verdict,
            how: self,
        }
    }
}

impl Choice {
    /// Whether anything is said.
    pub fn says(&self) -> bool {
        !matches!(self.line, Line::Withheld)
    }
}
