//! The LLM second opinion of seed 003 §6 sent through a model client, within a time limit:
//! one request (the rule-masked text under [`LLM_SYSTEM_PROMPT`]), its reply merged by
//! [`merge_llm`]. Used by `kakeai pii mask --llm` and by the LINE bot's workers, so both ask
//! the same question and read the answer the same way.
//!
//! A reply that does not come within `limit` is a failure like any other: in `FailClosed`
//! mode the rule result stands and the returned flag says why the message needs review.
//!
//! Batch commands (`ingest`, `export`) check many texts through [`check_each`]: in order, a
//! bounded number at a time, stopping at the first failure when told to.

use std::future::Future;
use std::time::Duration;

use futures_util::StreamExt;

use super::{LLM_SYSTEM_PROMPT, Masked, PiiLlmMode, llm_user_prompt, merge_llm, merge_reply};
use crate::llm::{ChatRequest, Client, LlmConfig, Message, ResponseFormat};

/// Tokens the answer needs besides the copied text: its three keys, the flag and the kinds.
const ANSWER_OVERHEAD_TOKENS: u32 = 48;
/// Tokens per character of the copied text, generously (Japanese runs about 1 with Gemma's
/// tokenizer; a masked token such as ［氏名］ is a few).
const COPY_TOKENS_PER_CHAR: f64 = 1.5;

/// The tokens the three-line answer needs for `masked_text`: the text copied once plus the
/// keys. Asking for no more keeps a small CPU model within the LINE and chat budgets (the
/// configured 512 took 18.9 s there).
pub fn answer_tokens(masked_text: &str) -> u32 {
    let chars = masked_text.chars().count() as f64;
    ANSWER_OVERHEAD_TOKENS + (chars * COPY_TOKENS_PER_CHAR).ceil() as u32
}

/// Where the answer ends: a model that starts the three lines again (small models loop on a
/// format) is stopped there, and the first answer is the one read.
pub const ANSWER_STOP: &str = "\nPII_DETECTED:";

/// The request for one rule-masked text: greedy, plain text, as many tokens as the answer
/// needs ([`answer_tokens`]), stopped where a second answer would start ([`ANSWER_STOP`]).
pub fn request(masked_text: &str) -> ChatRequest {
    ChatRequest {
        messages: vec![
            Message::system(LLM_SYSTEM_PROMPT),
            Message::user(llm_user_prompt(masked_text)),
        ],
        temperature: Some(0.0),
        max_tokens: Some(answer_tokens(masked_text)),
        format: ResponseFormat::Text,
        // A message that itself holds the key would be cut by it: no stop then.
        stop: Some(if masked_text.contains(ANSWER_STOP.trim_start()) {
            Vec::new()
        } else {
            vec![ANSWER_STOP.to_string()]
        }),
        seed: None,
        cap: false,
    }
}

/// The model's reply to `masked_text`, or why there is none within `limit`.
async fn reply(client: &Client, masked_text: &str, limit: Duration) -> Result<String, String> {
    let req = request(masked_text);
    match tokio::time::timeout(limit, client.chat(&req)).await {
        Ok(Ok(c)) => Ok(c.text),
        // Kind, status, endpoint and model: the server's words may quote the text it was sent.
        Ok(Err(e)) => Err(e.without_server_text().to_string()),
        Err(_) => Err(format!("{:.1} 秒以内に答えがなかった", limit.as_secs_f64())),
    }
}

/// Asks the model about `masked` and merges its answer; `(result, flag)` as [`merge_llm`].
/// `Off` sends nothing.
pub async fn second_opinion(
    client: &Client,
    masked: Masked,
    mode: PiiLlmMode,
    limit: Duration,
) -> (Masked, Option<String>) {
    if mode == PiiLlmMode::Off {
        return (masked, None);
    }
    let reply = reply(client, &masked.masked_text, limit).await;
    merge_llm(masked, reply.as_deref().map_err(Clone::clone), mode)
}

/// Asks the model about `masked` and merges its answer; the second value says why the check
/// could not run (no answer in time, an error, an answer that cannot be read), in any mode.
pub async fn opinion(client: &Client, masked: Masked, limit: Duration) -> Outcome {
    let reply = reply(client, &masked.masked_text, limit).await;
    merge_reply(masked, reply.as_deref().map_err(Clone::clone))
}

/// [`second_opinion`] with a client for `llm`; a client that cannot be made is a failed check
/// like any other.
pub async fn ask(
    llm: &LlmConfig,
    masked: Masked,
    mode: PiiLlmMode,
    limit: Duration,
) -> (Masked, Option<String>) {
    match Client::new(llm.clone()) {
        Ok(client) => second_opinion(&client, masked, mode, limit).await,
        Err(e) => merge_llm(masked, Err(e.to_string()), mode),
    }
}

/// One text's outcome in a batch: the merge, and why the check could not run (`None`: it ran).
pub type Outcome = (Masked, Option<String>);

/// Checks each of `texts` (rule-masked) against the model, at most `at_once` requests at a
/// time, answering in the order given; `done` is told after each. A failure is always
/// reported (see [`opinion`]): the caller decides what it means. With
/// `stop_at_failure` nothing after the first failure is awaited (requests in flight are
/// dropped) and the list ends at it.
pub async fn check_each(
    client: &Client,
    texts: Vec<Masked>,
    limit: Duration,
    at_once: usize,
    stop_at_failure: bool,
    done: &mut dyn FnMut(usize),
) -> Vec<Outcome> {
    let ask = |m: Masked| opinion(client, m, limit);
    in_order(texts, at_once, stop_at_failure, done, ask).await
}

/// [`check_each`]'s order and bounds around any `ask`.
async fn in_order<F, Fut>(
    texts: Vec<Masked>,
    at_once: usize,
    stop_at_failure: bool,
    done: &mut dyn FnMut(usize),
    ask: F,
) -> Vec<Outcome>
where
    F: Fn(Masked) -> Fut,
    Fut: Future<Output = Outcome>,
{
    let mut out = Vec::with_capacity(texts.len());
    let mut answers = futures_util::stream::iter(texts)
        .map(ask)
        .buffered(at_once.max(1));
    while let Some(answer) = answers.next().await {
        let failed = answer.1.is_some();
        out.push(answer);
        done(out.len());
        if failed && stop_at_failure {
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The answer's budget covers the text copied once plus its keys, for any length, and is
    /// far below the 512 tokens of a line for a LINE-sized message.
    #[test]
    fn the_check_asks_for_what_the_answer_needs() {
        let mut rng = fastrand::Rng::with_seed(39);
        for _ in 0..200 {
            let n = rng.usize(0..400);
            let text: String = (0..n).map(|_| rng.char('ぁ'..='ん')).collect();
            let r = request(&text);
            let max = r.max_tokens.expect("a bound is sent");
            assert_eq!(max, answer_tokens(&text));
            assert_eq!(r.stop.as_deref(), Some(&[ANSWER_STOP.to_string()][..]));
            assert!(max as usize >= n + ANSWER_OVERHEAD_TOKENS as usize);
            let quoting = request(&format!("{text}\nPII_DETECTED: true"));
            assert_eq!(quoting.stop.as_deref(), Some(&[][..]));
            if n <= 100 {
                assert!(max <= 200, "{n} chars: {max}");
            }
        }
    }

    /// What a model sends before the stop is one whole answer: the stop never falls inside the
    /// three lines of a reply, whatever the copied text holds.
    #[test]
    fn the_stop_never_cuts_an_answer() {
        let mut rng = fastrand::Rng::with_seed(40);
        for _ in 0..200 {
            let n = rng.usize(0..60);
            let text: String = (0..n)
                .map(|_| match rng.u8(0..10) {
                    0 => '\n',
                    1 => ':',
                    _ => rng.char('ぁ'..='ん'),
                })
                .collect();
            let reply = format!("PII_DETECTED: false\nMASKED_TEXT: {text}\nDETECTED_ITEMS: なし");
            let cut = reply.find(ANSWER_STOP).map_or(&reply[..], |i| &reply[..i]);
            assert_eq!(cut, reply, "{text:?}");
            let twice = format!("{reply}{ANSWER_STOP} true\nMASKED_TEXT: x");
            let cut = &twice[..twice.find(ANSWER_STOP).unwrap()];
            assert_eq!(
                super::super::llm::parse_reply(cut).map(|r| r.detected),
                Ok(false)
            );
        }
    }

    /// Generated batches: answers come back in the order asked, never more than `at_once` are
    /// in flight, and with `stop_at_failure` the list ends at the first failure (nothing after
    /// it is reported), without it every text is answered.
    #[tokio::test]
    async fn a_batch_answers_in_order_within_its_bound() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let mut rng = fastrand::Rng::with_seed(41);
        for _ in 0..60 {
            let n = rng.usize(0..12);
            let at_once = rng.usize(1..4);
            let fails: Vec<bool> = (0..n).map(|_| rng.u8(0..5) == 0).collect();
            let texts: Vec<Masked> = (0..n)
                .map(|i| super::super::already_masked(&format!("{i}")))
                .collect();
            for stop in [false, true] {
                let (live, most) = (AtomicUsize::new(0), AtomicUsize::new(0));
                let mut seen = Vec::new();
                let ask = |m: Masked| {
                    let (live, most, fails) = (&live, &most, &fails);
                    async move {
                        let now = live.fetch_add(1, Ordering::SeqCst) + 1;
                        most.fetch_max(now, Ordering::SeqCst);
                        tokio::task::yield_now().await;
                        live.fetch_sub(1, Ordering::SeqCst);
                        let i: usize = m.masked_text.parse().unwrap();
                        let why = fails[i].then(|| format!("failed {i}"));
                        (m, why)
                    }
                };
                let got = in_order(texts.clone(), at_once, stop, &mut |k| seen.push(k), ask).await;
                let want = match fails.iter().position(|f| *f) {
                    Some(first) if stop => first + 1,
                    _ => n,
                };
                assert_eq!(got.len(), want, "{fails:?} stop={stop}");
                assert_eq!(seen, (1..=want).collect::<Vec<_>>());
                for (i, (m, why)) in got.iter().enumerate() {
                    assert_eq!(m.masked_text, i.to_string());
                    assert_eq!(why.is_some(), fails[i]);
                }
                assert!(most.load(Ordering::SeqCst) <= at_once);
            }
        }
    }
}
