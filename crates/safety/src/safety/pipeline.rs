//! The five-layer judgment of one user message (seed 000 §4): Layers 1–3 in order (a critical
//! hit blocks at once), then Layer 4 when something was raised (or always, by policy), then
//! the decision. Every layer leaves a `TraceStep`, run or not, saying what it found and why.
//!
//! Layer 4 can block (攻撃) or clear warnings (じゃれ合い / 通常 at or above `min_confidence`);
//! it never runs after a critical hit, so it can never overturn one. When it does not run or
//! fails, the static result stands: block on a warning in a fail-closed category, else respond.

use super::context_judge::{self, ContextLlm, ContextType, L4CallError, L4Request};
use super::contextual::{Contextual, L2Outcome};
use super::data::{L4Mode, Source};
use super::fold::Folded;
pub use super::judgment::{Action, Judgment, L4Skip, Policy, Reason, StepOutcome, TraceStep};
use super::layers::{Hit, NgWords, Patterns, placeholders};
use super::messages as m;
use super::types::{Category, Sister, Tier, UserContext};
use crate::config::ConfigError;

/// Layers 1–3 done, Layer 4 not yet.
#[derive(Debug, Clone)]
pub struct Staged {
    text: String,
    sister: Sister,
    ctx: UserContext,
    steps: Vec<TraceStep>,
    /// A critical hit: (layer, reason).
    blocked: Option<(u8, Reason)>,
    /// Warnings, with their layer, in layer order.
    raised: Vec<(u8, Hit)>,
    /// Layer 2 called it banter (its hits are in `banter_hits`).
    banter_hits: Vec<Hit>,
}

impl Staged {
    /// Blocked already at Layers 1–3.
    pub fn blocked(&self) -> bool {
        self.blocked.is_some()
    }
}

/// The five-layer judge (Layers 1–4; Layer 5 is `WorldviewChecker`, on replies).
#[derive(Debug, Clone)]
pub struct SafetyJudge {
    ng: NgWords,
    contextual: Contextual,
    patterns: Patterns,
    policy: Policy,
}

impl SafetyJudge {
    /// Built from parsed data files (see `data::load_sources`).
    pub fn from_sources(sources: &[Source]) -> Result<SafetyJudge, ConfigError> {
        SafetyJudge::from_sources_with(sources, super::variants::Dict::installed())
    }

    /// Like `from_sources`, Layer 1's kanji words also matched by their reading from `dict`.
    pub fn from_sources_with(
        sources: &[Source],
        dict: super::variants::Dict,
    ) -> Result<SafetyJudge, ConfigError> {
        let holders = placeholders(sources);
        let targets = holders.get("target").cloned().unwrap_or_default();
        let mut policy = Policy {
            l4: L4Mode::OnRaise,
            min_confidence: 0.5,
            temperature: 0.1,
            fail_closed: vec![
                Category::Violence,
                Category::SelfHarm,
                Category::Sexual,
                Category::Hate,
            ],
        };
        for src in sources {
            let Some(p) = &src.file.policy else { continue };
            if let Some(c) = p.min_confidence {
                if !(0.0..=1.0).contains(&c) {
                    return Err(src.error("min_confidence", "must be between 0 and 1".into()));
                }
                policy.min_confidence = c;
            }
            if let Some(t) = p.temperature {
                if !(0.0..=2.0).contains(&t) {
                    return Err(src.error("temperature", "must be between 0 and 2".into()));
                }
                policy.temperature = t;
            }
            policy.l4 = p.l4.unwrap_or(policy.l4);
            if let Some(f) = &p.fail_closed {
                policy.fail_closed = f.clone();
            }
        }
        Ok(SafetyJudge {
            ng: NgWords::build_with(sources, dict)?,
            contextual: Contextual::build(sources, &targets)?,
            patterns: Patterns::build(sources, &holders)?,
            policy,
        })
    }

    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    pub fn policy_mut(&mut self) -> &mut Policy {
        &mut self.policy
    }

    /// Entry counts (Layer 1 words, Layer 3 patterns), for `--help`-style summaries.
    pub fn sizes(&self) -> (usize, usize) {
        (self.ng.len(), self.patterns.len())
    }

    /// Layers 1–4 without a model: Layer 4 is skipped and the static result stands.
    pub fn judge(&self, text: &str, sister: Sister, ctx: &UserContext) -> Judgment {
        self.finish_skipped(self.stage(text, sister, ctx), L4Skip::NoLlm)
    }

    /// Layers 1–4, asking `llm` when the policy says Layer 4 runs.
    pub async fn judge_async<L: ContextLlm>(
        &self,
        text: &str,
        sister: Sister,
        ctx: &UserContext,
        llm: &L,
    ) -> Judgment {
        let staged = self.stage(text, sister, ctx);
        match self.l4_messages(&staged) {
            Some(messages) => {
                let reply = llm.ask(messages, self.policy.temperature).await;
                self.finish_with(staged, reply)
            }
            None => self.finish_skipped(staged, L4Skip::NoLlm),
        }
    }

    /// Layers 1–3.
    pub fn stage(&self, text: &str, sister: Sister, ctx: &UserContext) -> Staged {
        let f = Folded::new(text);
        let mut st = Staged {
            text: text.to_string(),
            sister,
            ctx: *ctx,
            steps: Vec::with_capacity(4),
            blocked: None,
            raised: Vec::new(),
            banter_hits: Vec::new(),
        };
        // Layer 1.
        let l1 = self.ng.scan(&f, text);
        if !self.static_step(&mut st, 1, l1.hits, Reason::StaticNg) {
            self.skip_rest(&mut st, 2);
            return st;
        }
        // Layer 2.
        let l2 = self.contextual.judge(&f, text, &l1.safe_spans, ctx);
        let live: Vec<&Hit> = l2.hits.iter().filter(|h| h.tier != Tier::Safe).collect();
        let signals = m::signal_list(&l2.signals);
        let (outcome, note) = match l2.outcome {
            L2Outcome::None if l2.hits.is_empty() => (StepOutcome::Pass, m::l2_none()),
            L2Outcome::None => (
                StepOutcome::Info,
                m::info_only(&l2.hits.iter().collect::<Vec<_>>()),
            ),
            L2Outcome::SelfDirected => (StepOutcome::SelfDirected, m::l2_self(&live)),
            L2Outcome::Banter => (StepOutcome::Banter, m::l2_banter(&live, &signals)),
            L2Outcome::Ambiguous => (StepOutcome::Raise, m::l2_ambiguous(&live, &signals)),
            L2Outcome::ContextualNg => (StepOutcome::Block, m::l2_ng(&live, &signals)),
        };
        match l2.outcome {
            L2Outcome::Banter => st.banter_hits = live.iter().map(|h| (*h).clone()).collect(),
            L2Outcome::Ambiguous => st.raised.extend(live.iter().map(|h| (2, (*h).clone()))),
            L2Outcome::ContextualNg => st.blocked = Some((2, Reason::ContextualNg)),
            _ => {}
        }
        let mut step = TraceStep::new(2, outcome, note);
        step.hits = l2.hits;
        step.signals = l2.signals;
        st.steps.push(step);
        if st.blocked.is_some() {
            self.skip_rest(&mut st, 3);
            return st;
        }
        // Layer 3.
        let l3 = self.patterns.scan(&f, text);
        if !self.static_step(&mut st, 3, l3, Reason::PatternNg) {
            self.skip_rest(&mut st, 4);
        }
        st
    }

    /// Records a Layer 1 or 3 step; false when it blocked.
    fn static_step(&self, st: &mut Staged, layer: u8, hits: Vec<Hit>, reason: Reason) -> bool {
        let live = |t: Tier| -> Vec<&Hit> {
            hits.iter()
                .filter(|h| h.tier == t && h.shadowed_by.is_none())
                .collect()
        };
        let (critical, warning) = (live(Tier::Critical), live(Tier::Warning));
        let (outcome, note) = if !critical.is_empty() {
            st.blocked = Some((layer, reason));
            (StepOutcome::Block, block_note(layer, &critical))
        } else if !warning.is_empty() {
            st.raised
                .extend(warning.iter().map(|h| (layer, (*h).clone())));
            (StepOutcome::Raise, raise_note(layer, &warning))
        } else if hits.is_empty() {
            (StepOutcome::Pass, m::info_only(&[]))
        } else {
            (
                StepOutcome::Info,
                m::info_only(&hits.iter().collect::<Vec<_>>()),
            )
        };
        let mut step = TraceStep::new(layer, outcome, note);
        step.hits = hits;
        st.steps.push(step);
        st.blocked.is_none()
    }

    fn skip_rest(&self, st: &mut Staged, from: u8) {
        let by = st.blocked.map(|b| b.0).unwrap_or(0);
        for layer in from..=4 {
            st.steps.push(TraceStep::new(
                layer,
                StepOutcome::Skipped,
                m::skipped_after_block(by),
            ));
        }
    }

    /// The Layer 4 prompt when the policy wants Layer 4 for this message; `None` otherwise.
    pub fn l4_messages(&self, st: &Staged) -> Option<Vec<crate::llm::Message>> {
        let wanted = match self.policy.l4 {
            L4Mode::Off => false,
            L4Mode::OnRaise => !st.raised.is_empty() || !st.banter_hits.is_empty(),
            L4Mode::Always => true,
        };
        if st.blocked.is_some() || !wanted {
            return None;
        }
        let hits: Vec<&Hit> = st
            .raised
            .iter()
            .map(|(_, h)| h)
            .chain(st.banter_hits.iter())
            .collect();
        Some(context_judge::prompt(&L4Request {
            text: &st.text,
            sister: st.sister,
            ctx: &st.ctx,
            hits: &hits,
        }))
    }

    /// Finishes without asking Layer 4; the note says why it did not run.
    pub fn finish_skipped(&self, st: Staged, why: L4Skip) -> Judgment {
        if st.blocked.is_some() {
            return self.decided(st, None);
        }
        let note = if self.policy.l4 == L4Mode::Off {
            m::l4_disabled()
        } else if self.policy.l4 == L4Mode::OnRaise
            && st.raised.is_empty()
            && st.banter_hits.is_empty()
        {
            m::l4_nothing_raised()
        } else {
            match why {
                L4Skip::NoLlm => m::l4_no_llm(),
                L4Skip::EndpointDown(w) => m::l4_endpoint_down(&w),
            }
        };
        self.static_result(st, TraceStep::new(4, StepOutcome::Skipped, note), None)
    }

    /// Finishes with Layer 4's raw reply (or its failure).
    pub fn finish_with(&self, st: Staged, reply: Result<String, L4CallError>) -> Judgment {
        if st.blocked.is_some() {
            return self.decided(st, None);
        }
        let (raw, verdict) = match reply {
            Err(e) => {
                let step = TraceStep::new(4, StepOutcome::Failed, m::l4_failed(&e.message));
                return self.static_result(st, step, None);
            }
            Ok(raw) => {
                let v = context_judge::parse(&raw);
                (raw, v)
            }
        };
        let v = match verdict {
            Err(why) => {
                let mut step = TraceStep::new(4, StepOutcome::Failed, m::l4_failed(&why));
                step.raw = Some(raw);
                return self.static_result(st, step, None);
            }
            Ok(v) => v,
        };
        let mut step = TraceStep::new(4, StepOutcome::Answered, m::l4_answer(&v));
        step.llm = Some(v.clone());
        if v.context_type == ContextType::Attack {
            step.outcome = StepOutcome::Block;
            step.note.push_str(m::l4_attack());
            let mut st = st;
            st.steps.push(step);
            return Judgment {
                action: Action::Block,
                layer: Some(4),
                reason: Some(Reason::Attack),
                context_type: Some(ContextType::Attack),
                trace: st.steps,
            };
        }
        // Only a confident answer lowers a static warning: a bare label (no confidence) is a
        // low-confidence answer, and the static result stands.
        match v.confidence {
            None => {
                step.note.push_str(m::l4_no_confidence());
                return self.static_result(st, step, Some(v.context_type));
            }
            Some(c) if c < self.policy.min_confidence => {
                step.note
                    .push_str(&m::l4_low_confidence(self.policy.min_confidence));
                return self.static_result(st, step, Some(v.context_type));
            }
            Some(_) => {}
        }
        let mut st = st;
        st.steps.push(step);
        Judgment {
            action: Action::Respond,
            layer: None,
            reason: None,
            context_type: Some(v.context_type),
            trace: st.steps,
        }
    }

    /// A Layers 1–3 block: Layer 4's step is already in the trace (skipped).
    fn decided(&self, st: Staged, context_type: Option<ContextType>) -> Judgment {
        let (layer, reason) = st.blocked.unzip();
        Judgment {
            action: Action::Block,
            layer,
            reason,
            context_type,
            trace: st.steps,
        }
    }

    /// The static result, after Layer 4's `step` (skipped, failed or not confident).
    fn static_result(
        &self,
        mut st: Staged,
        mut step: TraceStep,
        answered: Option<ContextType>,
    ) -> Judgment {
        let closed = st
            .raised
            .iter()
            .find(|(_, h)| self.policy.fail_closed.contains(&h.category));
        let guess = answered.or_else(|| {
            (!st.banter_hits.is_empty()).then(|| {
                step.note.push_str(m::static_banter_guess());
                ContextType::Banter
            })
        });
        let (action, layer, reason) = match closed {
            Some((layer, h)) => {
                step.note.push_str(&m::static_block(h.category, *layer));
                let reason = match layer {
                    1 => Reason::StaticNg,
                    2 => Reason::ContextualNg,
                    _ => Reason::PatternNg,
                };
                (Action::Block, Some(*layer), Some(reason))
            }
            None => {
                step.note
                    .push_str(&m::static_respond(!st.raised.is_empty()));
                (Action::Respond, None, None)
            }
        };
        st.steps.push(step);
        Judgment {
            action,
            layer,
            reason,
            context_type: guess,
            trace: st.steps,
        }
    }
}

fn block_note(layer: u8, hits: &[&Hit]) -> String {
    if layer == 1 {
        m::l1_block(hits)
    } else {
        m::l3_block(hits)
    }
}

fn raise_note(layer: u8, hits: &[&Hit]) -> String {
    if layer == 1 {
        m::l1_raise(hits)
    } else {
        m::l3_raise(hits)
    }
}
