//! The prompt budget in tokens: the chars→tokens ratio is learned from each response's prompt
//! token count (usage.prompt_tokens, llama-server timings, Ollama prompt_eval_count), and a
//! prompt is fitted to the context by dropping its oldest history first (issue 13 §4).

use super::types::{Message, Role};

/// Tokens per character of prompt text, as last observed (or the configured first guess).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ratio {
    pub tokens_per_char: f64,
    /// Whether a server count has been seen yet.
    pub learned: bool,
}

impl Ratio {
    pub fn new(first_guess: f64) -> Ratio {
        Ratio {
            tokens_per_char: first_guess.max(0.05),
            learned: false,
        }
    }

    /// A server said `tokens` for a prompt of `chars` characters. The prompt's template and
    /// role markers are counted in, so the ratio errs on the safe (larger) side.
    pub fn observe(&mut self, chars: usize, tokens: u32) {
        if chars == 0 || tokens == 0 {
            return;
        }
        self.tokens_per_char = f64::from(tokens) / chars as f64;
        self.learned = true;
    }

    /// A server refused `chars` characters as longer than its `context` without saying its
    /// count (Ollama): the real ratio is above context/chars. Raises the ratio past that.
    pub fn raise_for_refusal(&mut self, chars: usize, context: u32) {
        if chars == 0 {
            return;
        }
        let floor = f64::from(context) / chars as f64 * 1.05;
        self.tokens_per_char = (self.tokens_per_char * 1.25).max(floor);
    }

    /// How many prompt characters fit `tokens`.
    pub fn chars_for(&self, tokens: u32) -> usize {
        (f64::from(tokens) / self.tokens_per_char).floor() as usize
    }
}

/// Prompt tokens available: the context minus the reply's reserve and a small margin for the
/// chat template.
pub fn prompt_tokens(num_ctx: u32, max_tokens: u32) -> u32 {
    let margin = (num_ctx / 32).max(16);
    num_ctx.saturating_sub(max_tokens).saturating_sub(margin)
}

/// How many prompt characters fit a context of `context` tokens with `max_tokens` kept for the
/// reply, at `ratio`: the budget every line's prompt is fitted to (and `doctor` checks).
pub fn budget_chars(ratio: Ratio, context: u32, max_tokens: u32) -> usize {
    ratio.chars_for(prompt_tokens(context, max_tokens))
}

pub fn chars_of(messages: &[Message]) -> usize {
    messages.iter().map(|m| m.content.chars().count()).sum()
}

/// The prompt does not fit even without any history.
#[derive(Debug, Clone, PartialEq)]
pub struct Overflow {
    pub needed_chars: usize,
    pub budget_chars: usize,
}

/// Drops the oldest history (messages between the leading system messages and the last one)
/// until `messages` fit `budget_chars`; a history that would then start with an assistant turn
/// loses that turn too (strict user/assistant alternation). Returns how many were dropped.
pub fn fit(messages: &mut Vec<Message>, budget_chars: usize) -> Result<usize, Overflow> {
    let lead = messages
        .iter()
        .take_while(|m| m.role == Role::System)
        .count();
    let mut dropped = 0;
    while chars_of(messages) > budget_chars && messages.len() > lead + 1 {
        messages.remove(lead);
        dropped += 1;
        while messages.len() > lead + 1 && messages[lead].role == Role::Assistant {
            messages.remove(lead);
            dropped += 1;
        }
    }
    let needed = chars_of(messages);
    if needed > budget_chars {
        return Err(Overflow {
            needed_chars: needed,
            budget_chars,
        });
    }
    Ok(dropped)
}

/// The order in which a prompt gives up its parts (assets/llm/budget.toml).
#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Priorities {
    /// History messages kept while lower-priority context goes.
    pub keep_history: usize,
    /// Vault levels dropped, in this order, after the older history.
    pub vault_drop_levels: Vec<u8>,
    /// A prompt count this much below the expected one is not learned from on a server that
    /// may drop messages silently (`llm::guard`).
    pub count_tolerance: f64,
}

impl Priorities {
    /// The embedded priorities (parsed once).
    pub fn builtin() -> &'static Priorities {
        static P: std::sync::OnceLock<Priorities> = std::sync::OnceLock::new();
        P.get_or_init(|| {
            toml::from_str(include_str!("../../../../assets/llm/budget.toml"))
                .expect("assets/llm/budget.toml is valid (tested)")
        })
    }
}

/// What fitting gave up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Fitted {
    /// History messages dropped.
    pub dropped: usize,
    /// How many rungs of lighter context were taken (0: the full context).
    pub rung: usize,
}

/// Fits `messages` to `budget_chars` in priority order: the oldest history down to
/// `keep_history` messages, then the system message replaced by each of `lighter` in turn
/// (the same prompt with less context: vault levels dropped), then the rest of the history.
pub fn fit_prioritised(
    messages: &mut Vec<Message>,
    budget_chars: usize,
    lighter: &[String],
    keep_history: usize,
) -> Result<Fitted, Overflow> {
    let lead = messages
        .iter()
        .take_while(|m| m.role == Role::System)
        .count();
    let mut out = Fitted::default();
    let history = |m: &Vec<Message>| m.len().saturating_sub(lead + 1);
    while chars_of(messages) > budget_chars && history(messages) > keep_history {
        messages.remove(lead);
        out.dropped += 1;
        while history(messages) > 0 && messages[lead].role == Role::Assistant {
            messages.remove(lead);
            out.dropped += 1;
        }
    }
    for l in lighter {
        if chars_of(messages) <= budget_chars || lead == 0 {
            break;
        }
        messages[0].content = l.clone();
        out.rung += 1;
    }
    out.dropped += fit(messages, budget_chars)?;
    Ok(out)
}

/// llama-server's context refusal, "request (2419 tokens) exceeds the available context size
/// (1024 tokens)": the prompt's token count and the context, when the message says them.
pub fn refused_counts(message: &str) -> Option<(u32, u32)> {
    let number_before = |at: usize| -> Option<u32> {
        let head = message.get(..at)?.trim_end();
        let digits: String = head
            .chars()
            .rev()
            .take_while(char::is_ascii_digit)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        digits.parse().ok()
    };
    if !message.contains("exceeds the available context size") {
        return None;
    }
    let mut found = message
        .match_indices(" tokens)")
        .map(|(i, _)| number_before(i));
    Some((found.next()??, found.next()??))
}

/// Every context-overflow message starts with this: the session ends the run *stopped* on it
/// (a state with a message, not a failed run) and the CLI prints a `context_overflow` event.
pub const OVERFLOW_PREFIX: &str = "context overflow:";

pub fn is_overflow(error: &str) -> bool {
    error.starts_with(OVERFLOW_PREFIX)
}

/// Whether a server's refusal says the prompt is longer than its context: llama-server
/// ("the request exceeds the available context size"), Ollama ("input length exceeds the
/// context length"), OpenAI-style ("maximum context length is").
/// Ollama at HEAD with `shift: false`: "the prompt is longer than the context length currently
/// available to the model; …" (llm/llama_server.go:295-300).
pub fn is_context_refusal(message: &str) -> bool {
    let m = message.to_lowercase();
    m.contains("context")
        && (m.contains("exceed")
            || m.contains("maximum context length")
            || m.contains("too long")
            || m.contains("longer than the context"))
}

/// The server refused a prompt that the budget let through (or told no counts to learn from).
pub fn refused_message(server: &str) -> String {
    format!(
        "{OVERFLOW_PREFIX} the server refused the prompt as longer than its context ({server}) — \
         shorten the persona, world or vault context, lower max_tokens, or raise the server's \
         context"
    )
}

/// Explains a prompt that cannot fit, for the run's state line.
/// The server discarded the start of the prompt while generating (prompt + reply past the
/// context): the line was written without its persona and vault rules, so it is not kept.
pub fn shifted_message(prompt: u32, reply: u32, context: u32) -> String {
    format!(
        "{OVERFLOW_PREFIX} the prompt ({prompt} tokens) and the reply ({reply} tokens) passed the \
         context ({context} tokens): the server discarded the start of the prompt — the persona \
         and the vault's rules — while writing, so the line is not kept; lower max_tokens, \
         shorten the persona, world or vault context, or raise the context"
    )
}

pub fn overflow_message(o: &Overflow, ratio: Ratio, num_ctx: u32) -> String {
    format!(
        "{OVERFLOW_PREFIX} even without any history the prompt is {} characters (~{:.0} tokens at \
         {:.2} tokens/char) and the context ({num_ctx} tokens, minus the reply's reserve) holds \
         {} characters — shorten the persona, world or vault context, lower max_tokens, or raise \
         num_ctx to the server's context",
        o.needed_chars,
        o.needed_chars as f64 * ratio.tokens_per_char,
        ratio.tokens_per_char,
        o.budget_chars
    )
}

#[cfg(test)]
#[path = "budget_tests.rs"]
mod priority_tests;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fitting_drops_oldest_history_first_and_keeps_alternation() {
        // Seeded (fastrand): the same cases on every run.
        let mut rng = fastrand::Rng::with_seed(11u64);
        let mut seed: u64;
        for _ in 0..300 {
            seed = rng.u64(..);
            let n = (seed >> 40) as usize % 9;
            let mut m = vec![Message::system(
                "設定".repeat(1 + (seed >> 20) as usize % 5),
            )];
            for i in 0..n {
                let text = "あ".repeat(1 + (seed as usize >> (i * 4)) % 13);
                m.push(if i % 2 == 0 {
                    Message::user(text)
                } else {
                    Message::assistant(text)
                });
            }
            m.push(Message::user("次の発言"));
            let budget = (seed >> 8) as usize % 80;
            let before = m.clone();
            match fit(&mut m, budget) {
                Ok(dropped) => {
                    assert!(chars_of(&m) <= budget);
                    assert_eq!(m.len() + dropped, before.len());
                    // What is left is the newest tail of the history, unchanged.
                    assert_eq!(m[1..], before[before.len() - (m.len() - 1)..]);
                    assert_ne!(m.get(1).map(|x| x.role), Some(Role::Assistant));
                }
                Err(o) => {
                    assert_eq!(
                        m.len(),
                        2,
                        "only the system part and the last message remain"
                    );
                    assert!(o.needed_chars > budget);
                }
            }
        }
    }

    #[test]
    fn ollamas_refusals_are_context_refusals() {
        // v0.13–v0.15 with truncate:false (runner.go v0.13.0:905-907), and HEAD with
        // shift:false (llm/llama_server.go:295-300).
        assert!(is_context_refusal(
            "the input length exceeds the context length"
        ));
        assert!(is_context_refusal(
            "the prompt is longer than the context length currently available to the model; \
             shorten the prompt, adjust the context length in settings, or use a model with a \
             longer context length"
        ));
        assert!(!is_context_refusal("model 'gemma2:27b' not found"));
        let mut r = Ratio::new(1.5);
        r.raise_for_refusal(4949, 8192);
        assert!(r.tokens_per_char >= 8192.0 / 4949.0 * 1.05);
        assert!(r.tokens_per_char >= 1.5 * 1.25 - 1e-9);
    }

    #[test]
    fn reads_llama_servers_refusal() {
        let m = "request (2419 tokens) exceeds the available context size (1024 tokens), try increasing it";
        assert_eq!(refused_counts(m), Some((2419, 1024)));
        assert_eq!(refused_counts("model 'x' not found"), None);
    }

    #[test]
    fn ratio_learned_from_a_count() {
        let mut r = Ratio::new(1.0);
        assert_eq!(r.chars_for(1000), 1000);
        r.observe(1500, 2550);
        assert!(r.learned);
        assert_eq!(r.chars_for(1700), 1000);
        assert_eq!(prompt_tokens(8192, 512), 8192 - 512 - 256);
    }
}
