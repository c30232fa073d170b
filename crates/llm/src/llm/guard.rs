//! Reading a reply's token counts without being fooled by them (issue 21). Ollama counts the
//! prompt it *kept* (`prompt_eval_count`: llm/llama_server.go:1511-1513), so after a silent
//! front-drop (server/prompt.go:35-92) the count is small and a ratio learned from it is too
//! low — the next prompt is longer and is cut again. And a reply that carries prompt + reply
//! past the context was generated after the start of the prompt (the persona and the vault's
//! rules) was discarded (context shift, routes.go:2779; the KV cache never holds more than
//! num_ctx tokens).

use super::client::Client;
use super::config::ApiKind;
use super::types::ContextCheck;

/// Judges one reply's counts against what was expected. Pure.
///
/// `trusted`: the server cannot have cut the prompt (Ollama with `truncate: false`, or a
/// server that refuses over-long prompts), so any count teaches the ratio. Otherwise a count
/// below `expected × (1 − tolerance)` is not learned from. `context`: the runner's context,
/// when known for sure (Ollama), for the shift check.
pub fn judge_counts(
    expected: f64,
    counted: u32,
    reply: u32,
    context: Option<u32>,
    trusted: bool,
    tolerance: f64,
) -> ContextCheck {
    if let Some(ctx) = context
        && u64::from(counted) + u64::from(reply) > u64::from(ctx)
    {
        return ContextCheck::Shifted {
            prompt: counted,
            reply,
            context: ctx,
        };
    }
    if !trusted && f64::from(counted) < expected * (1.0 - tolerance) {
        return ContextCheck::CountLow {
            expected: expected.round() as u32,
            counted,
        };
    }
    ContextCheck::Learned
}

impl Client {
    /// Checks a reply's counts and learns the ratio from them when they can be believed:
    /// a line's (`generation`) into the ratio the lines are budgeted with, a judge call's into
    /// its own, so neither kind of prompt skews the other's estimate.
    pub(super) fn check_counts(
        &self,
        kind: ApiKind,
        generation: bool,
        chars: usize,
        prompt_tokens: Option<u32>,
        reply_tokens: u32,
    ) -> ContextCheck {
        let Some(counted) = prompt_tokens else {
            return ContextCheck::NoCount;
        };
        let facts = self.known_facts();
        let guarded = facts.is_some_and(super::facts::ServerFacts::guard_supported);
        let ollama_v1 = facts.is_some_and(|f| f.ollama_v1);
        let trusted = match kind {
            ApiKind::Ollama => guarded,
            ApiKind::OpenAi => !ollama_v1,
        };
        let on_ollama = kind == ApiKind::Ollama || ollama_v1;
        let context = on_ollama.then(|| self.context_tokens());
        // A judge call's first count is expected at the lines' ratio (the nearest estimate).
        let ratio = match self.judge_ratio() {
            j if !generation && j.learned => j,
            _ => self.ratio(),
        };
        let expected = ratio.tokens_per_char * chars as f64;
        let tolerance = super::budget::Priorities::builtin().count_tolerance;
        let check = judge_counts(expected, counted, reply_tokens, context, trusted, tolerance);
        if check == ContextCheck::Learned {
            if generation {
                self.learn(chars, counted);
            } else if let Ok(mut r) = self.inner.judge_ratio.lock() {
                r.observe(chars, counted);
            }
        }
        check
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_count_below_expectation_is_not_learned_unless_trusted() {
        // 4,600 chars expected at 1.5 → 6,900 tokens; Ollama kept 1,535 of them.
        let low = judge_counts(6900.0, 1535, 40, Some(8192), false, 0.2);
        assert_eq!(
            low,
            ContextCheck::CountLow {
                expected: 6900,
                counted: 1535
            }
        );
        assert_eq!(
            judge_counts(6900.0, 1535, 40, Some(8192), true, 0.2),
            ContextCheck::Learned
        );
        // Within the tolerance, or above: learned.
        assert_eq!(
            judge_counts(6900.0, 5600, 40, None, false, 0.2),
            ContextCheck::Learned
        );
        assert_eq!(
            judge_counts(6900.0, 7400, 40, None, false, 0.2),
            ContextCheck::Learned
        );
    }

    #[test]
    fn prompt_plus_reply_past_the_context_is_a_shift() {
        for (p, r, ctx, shifted) in [
            (7900, 400, 8192, true),
            (7792, 400, 8192, false),
            (7793, 400, 8192, true),
            (100, 5000, 4096, true),
        ] {
            let c = judge_counts(f64::from(p), p, r, Some(ctx), true, 0.2);
            assert_eq!(
                matches!(c, ContextCheck::Shifted { .. }),
                shifted,
                "{p}+{r}"
            );
        }
        // Unknown context: no claim.
        assert_eq!(
            judge_counts(7900.0, 7900, 400, None, true, 0.2),
            ContextCheck::Learned
        );
    }
}
