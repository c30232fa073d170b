//! The budget check: does a run's first line — and a retry of it — fit the model's context?
//! The prompts are the run's own (`duo::preflight`: persona, the speaker's filtered vault
//! context, the topic, the retry instruction) fitted by the run's own code to the budget a run
//! computes (`llm::budget::budget_chars`: context − max_tokens − margin, at the ratio). Pure:
//! the caller gives the ratio, the context and the server's cap.
//!
//! ✓ nothing is left out; ! fitting leaves out vault sections or history (said as counts);
//! ✗ even the required part cannot fit. Advice is a num_ctx (or max_tokens) recomputed to ✓.

use crate::duo::fitting::FitReport;
use crate::duo::preflight::Planned;
use crate::llm::ApiKind;
use crate::llm::budget::{self, Overflow, Ratio};

use super::{Check, Mark};

/// What fitting does to the first turn at one context: per planned request (attempt 1, then
/// its retry), what it leaves out (an empty report: nothing) or the overflow that stops it.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome(pub Vec<(usize, Result<FitReport, Overflow>)>);

impl Outcome {
    /// ✓ every request whole, ! some leave parts out, ✗ one cannot fit.
    pub fn mark(&self) -> Mark {
        if self.0.iter().any(|(_, r)| r.is_err()) {
            Mark::Fail
        } else if self
            .0
            .iter()
            .any(|(_, r)| r.as_ref().is_ok_and(|f| !f.is_empty()))
        {
            Mark::Warn
        } else {
            Mark::Ok
        }
    }
}

/// The setting the outcome is computed for.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    pub ratio: Ratio,
    /// The context prompts are budgeted against (num_ctx, capped by the server).
    pub context: u32,
    pub max_tokens: u32,
}

impl Budget {
    pub fn chars(&self) -> usize {
        budget::budget_chars(self.ratio, self.context, self.max_tokens)
    }
    fn at(self, context: u32) -> Budget {
        Budget { context, ..self }
    }
    fn with_reply(self, max_tokens: u32) -> Budget {
        Budget { max_tokens, ..self }
    }
}

/// What the run's fitting does to each planned request at `b`.
pub fn outcome(planned: &[Planned], b: Budget) -> Outcome {
    let chars = b.chars();
    Outcome(planned.iter().map(|p| (p.attempt, p.fit(chars))).collect())
}

fn fits(planned: &[Planned], b: Budget) -> bool {
    outcome(planned, b).mark() == Mark::Ok
}

/// The smallest context of at most `cap` tokens at which everything fits (rounded up to a
/// multiple of 256 when that stays within `cap`), checked by computing the outcome again.
pub fn least_context(planned: &[Planned], b: Budget, cap: u32) -> Option<u32> {
    if planned.is_empty() || !fits(planned, b.at(cap)) {
        return None;
    }
    let (mut lo, mut hi) = (1u32, cap);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if fits(planned, b.at(mid)) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    let round = hi.div_ceil(256).saturating_mul(256);
    let pick = if round <= cap && fits(planned, b.at(round)) {
        round
    } else {
        hi
    };
    fits(planned, b.at(pick)).then_some(pick)
}

/// The largest max_tokens, below the configured one and at least `floor`, at which everything
/// fits the current context; checked like [`least_context`].
pub fn most_reply(planned: &[Planned], b: Budget, floor: u32) -> Option<u32> {
    if planned.is_empty() || b.max_tokens <= floor || !fits(planned, b.with_reply(floor)) {
        return None;
    }
    let (mut lo, mut hi) = (floor, b.max_tokens - 1);
    while lo < hi {
        let mid = hi - (hi - lo) / 2;
        if fits(planned, b.with_reply(mid)) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    fits(planned, b.with_reply(lo)).then_some(lo)
}

/// Where the context comes from, for the advice's wording.
#[derive(Debug, Clone, Copy)]
pub struct Server {
    pub api: ApiKind,
    pub ollama_v1: bool,
    /// The most context a request can get (the model's trained context on Ollama).
    pub cap: u32,
    /// The shortest reply worth advising (a whole line: max_chars at the ratio).
    pub reply_floor: u32,
}

/// The check line for `planned` at `b` on `server`.
pub fn check(planned: &[Planned], b: Budget, server: Server) -> Check {
    let Some(first) = planned.first() else {
        return Check::fail(
            "budget",
            "the run's first prompt could not be built (the rules define no such sisters)",
            "check the characters in your rules file",
        );
    };
    let at = format!(
        "{} tokens at {:.2} tokens/char, {} kept for the reply",
        b.context, b.ratio.tokens_per_char, b.max_tokens
    );
    let o = outcome(planned, b);
    match o.mark() {
        Mark::Ok => {
            let longest = planned.iter().map(Planned::chars).max().unwrap_or(0);
            Check::ok(
                "budget",
                format!(
                    "{}'s first line and a retry fit whole: {longest} of {} prompt characters ({at})",
                    first.name,
                    b.chars()
                ),
            )
        }
        Mark::Warn => Check::warn(
            "budget",
            format!("to fit, a run leaves out — {} ({at})", said(&o, b)),
            advice(planned, b, server),
        ),
        Mark::Fail => Check::fail(
            "budget",
            format!("{} ({at}) — the run would stop at turn 1", said(&o, b)),
            advice(planned, b, server),
        ),
    }
}

/// Each request that does not go out whole: what it leaves out, or why it cannot fit.
fn said(o: &Outcome, b: Budget) -> String {
    let parts: Vec<String> =
        o.0.iter()
            .filter_map(|(a, r)| match r {
                Ok(f) if f.is_empty() => None,
                Ok(f) => Some(format!("{}: {}", attempt_name(*a), f.summary())),
                Err(over) => Some(format!(
                    "{}: does not fit even with the vault and history left out — {} characters \
                 (~{:.0} tokens), the prompt holds {}",
                    attempt_name(*a),
                    over.needed_chars,
                    over.needed_chars as f64 * b.ratio.tokens_per_char,
                    over.budget_chars
                )),
            })
            .collect();
    parts.join("; ")
}

fn attempt_name(attempt: usize) -> &'static str {
    if attempt == 1 { "first line" } else { "retry" }
}

/// What makes the check ✓, each way recomputed: a context, a shorter reply, a shorter prompt.
fn advice(planned: &[Planned], b: Budget, server: Server) -> String {
    let mut ways = Vec::new();
    match least_context(planned, b, server.cap) {
        Some(c) if c > b.context => ways.push(context_advice(server, c)),
        Some(_) => {}
        None => ways.push(format!(
            "no context up to the model's {} tokens holds it: use a model with a longer context",
            server.cap
        )),
    }
    if let Some(m) = most_reply(planned, b, server.reply_floor) {
        ways.push(format!("lower max_tokens to {m}"));
    }
    ways.push("shorten the persona, world or vault context".into());
    ways.join("; or ")
}

fn context_advice(server: Server, c: u32) -> String {
    match server.api {
        ApiKind::Ollama => format!("set num_ctx = {c} in llm.toml"),
        ApiKind::OpenAi if server.ollama_v1 => {
            format!("use the endpoint without /v1 and set num_ctx = {c} in llm.toml")
        }
        ApiKind::OpenAi => format!(
            "set num_ctx = {c} in llm.toml and give the server that context per request \
             (llama-server: -c {c} × its parallel slots)"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::duo::preflight::{Setup, first_turn};

    fn planned(vault: bool) -> Vec<Planned> {
        first_turn(&Setup {
            rules: crate::director::RuleSet::builtin().unwrap(),
            duo: crate::duo::DuoConfig::builtin().unwrap(),
            work: vault.then(crate::vault::load::sample),
            topic: "灯台".into(),
        })
    }

    /// Over generated ratios and replies, the advised context is the least that fits (to the
    /// next multiple of 256) and the advised max_tokens the most.
    #[test]
    fn the_advice_is_the_least_context_and_the_most_reply_that_fit() {
        let mut rng = fastrand::Rng::with_seed(5);
        for vault in [false, true] {
            let p = planned(vault);
            for _ in 0..40 {
                let b = Budget {
                    ratio: Ratio::new(0.5 + rng.f64() * 1.5),
                    context: rng.u32(512..4096),
                    max_tokens: rng.u32(64..1024),
                };
                let cap = rng.u32(1024..16384);
                match least_context(&p, b, cap) {
                    Some(c) => {
                        assert!(c <= cap && fits(&p, b.at(c)), "{b:?} {c}");
                        assert!(c < 256 || !fits(&p, b.at(c - 256)), "{b:?} {c}");
                    }
                    None => assert!(!fits(&p, b.at(cap)), "{b:?} cap {cap}"),
                }
                if let Some(m) = most_reply(&p, b, 32) {
                    assert!(m >= 32 && m < b.max_tokens && fits(&p, b.with_reply(m)));
                    assert!(m + 1 == b.max_tokens || !fits(&p, b.with_reply(m + 1)));
                }
            }
        }
    }

    #[test]
    fn the_marks_follow_what_fitting_leaves_out() {
        let p = planned(true);
        let at = |context| Budget {
            ratio: Ratio::new(1.5),
            context,
            max_tokens: 512,
        };
        assert_eq!(outcome(&p, at(8192)).mark(), Mark::Ok);
        assert_eq!(outcome(&p, at(2200)).mark(), Mark::Warn);
        assert_eq!(outcome(&p, at(1024)).mark(), Mark::Fail);
    }
}
