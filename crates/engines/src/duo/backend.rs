//! Where a run's lines and judge replies come from: a live endpoint, or a recorded run replayed
//! with realistic token timing (the bundled demo, `--demo`). Both go through the same session,
//! Director, judge reader and store — only the words are recorded.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Deserialize;

use super::records::GenStats;
use crate::director::judge::{self, JudgeOutcome};
use crate::director::ruleset::JudgeRule;
use crate::llm::{ChatRequest, Client, Finish, Message, ResponseFormat};

/// The bundled demo recording (see assets/demo/README.md).
pub const DEMO: &str = include_str!("../../../../assets/demo/run.jsonl");

#[derive(Clone)]
pub enum Backend {
    Live(Client),
    Replay(Arc<Replay>),
}

/// One recorded attempt.
#[derive(Debug, Clone, Deserialize)]
pub struct Recorded {
    pub turn: usize,
    pub attempt: usize,
    pub text: String,
    /// The judge model's raw reply, or two replies (the second answers the re-ask).
    #[serde(default)]
    pub judge: Option<JudgeReplies>,
    /// Why the live run fell back from streaming (a stored run replayed keeps showing it).
    #[serde(default)]
    pub fallback: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum JudgeReplies {
    One(String),
    Two(Vec<String>),
}

#[derive(Debug, Clone)]
pub struct Replay {
    pub topic: String,
    pub attempts: Vec<Recorded>,
    /// Pause before the first token and between tokens.
    pub first_token: Duration,
    pub per_token: Duration,
    /// The speaker of turn 1 when the recording says (a stored run); None: the configured one.
    pub first_speaker: Option<String>,
    /// Set to finish the replay at once (the reviewer's "jump to the end").
    pub to_end: Arc<std::sync::atomic::AtomicBool>,
}

#[derive(Deserialize)]
struct Header {
    topic: String,
}

impl Replay {
    /// Parses a recording: a `{"topic": …}` line, then one attempt per line. Errors name the
    /// line and column.
    pub fn parse(name: &str, text: &str) -> Result<Replay, String> {
        let mut lines = text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty());
        let (n, first) = lines
            .next()
            .ok_or_else(|| format!("{name}: empty recording"))?;
        let at = |n: usize, e: serde_json::Error| format!("{name}:{}:{}: {e}", n + 1, e.column());
        let header: Header = serde_json::from_str(first).map_err(|e| at(n, e))?;
        let attempts = lines
            .map(|(n, l)| serde_json::from_str::<Recorded>(l).map_err(|e| at(n, e)))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Replay {
            topic: header.topic,
            attempts,
            first_token: Duration::from_millis(350),
            per_token: Duration::from_millis(45),
            first_speaker: None,
            to_end: Default::default(),
        })
    }

    pub fn demo() -> Result<Replay, String> {
        Replay::parse("assets/demo/run.jsonl", DEMO)
    }

    /// A stored (or imported) run, replayed: each attempt's text, and its judge replies when
    /// they were kept.
    pub fn from_record(rec: &crate::store::RunRecord) -> Replay {
        // Turns renumbered from 1, textless ones skipped (see `replay_plan`).
        let plan = super::replay_plan::plan(rec);
        Replay {
            topic: rec.run.topic.clone(),
            attempts: plan.attempts,
            first_token: Duration::from_millis(350),
            per_token: Duration::from_millis(45),
            first_speaker: plan.first_speaker,
            to_end: Default::default(),
        }
    }

    /// Whether any attempt kept judge replies (imported duo-talk runs have none).
    pub fn has_judge(&self) -> bool {
        self.attempts.iter().any(|a| a.judge.is_some())
    }

    pub fn max_turn(&self) -> usize {
        self.attempts.iter().map(|a| a.turn).max().unwrap_or(0)
    }

    /// The recording for (turn, attempt); a later attempt than recorded repeats the last one,
    /// an earlier one than recorded plays the first recorded.
    fn find(&self, turn: usize, attempt: usize) -> Option<&Recorded> {
        let of_turn = || self.attempts.iter().filter(move |a| a.turn == turn);
        of_turn()
            .filter(|a| a.attempt <= attempt)
            .max_by_key(|a| a.attempt)
            .or_else(|| of_turn().min_by_key(|a| a.attempt))
    }
}

impl Backend {
    /// Streams one line; `on_token` sees each delta. `lighter`: the same system message with
    /// less vault context, rung by rung, for the token budget (see `llm::budget`).
    pub async fn generate(
        &self,
        turn: usize,
        attempt: usize,
        messages: Vec<Message>,
        lighter: &[String],
        on_token: &mut (dyn FnMut(&str) + Send),
    ) -> Result<(String, GenStats), String> {
        self.generate_observed(turn, attempt, messages, lighter, &mut |_| {}, on_token)
            .await
    }

    /// [`Backend::generate`] where `on_sent` sees each request as it goes over the wire, with
    /// what fitting gave up for it (a replay sends nothing).
    pub async fn generate_observed(
        &self,
        turn: usize,
        attempt: usize,
        messages: Vec<Message>,
        lighter: &[String],
        on_sent: &mut (dyn FnMut(Sent) + Send),
        on_token: &mut (dyn FnMut(&str) + Send),
    ) -> Result<(String, GenStats), String> {
        match self {
            Backend::Live(client) => {
                let c =
                    fitted_stream_observed(client, messages, lighter, on_sent, on_token).await?;
                let mut text = c.text;
                // Never committed as if whole: cut back to the last finished sentence.
                let length_cut = (c.finish == Finish::Length).then(|| {
                    let (kept, dropped) =
                        super::cut::to_last_sentence(&text, &client.config().trim_chars);
                    text = kept;
                    super::cut::LengthCut {
                        dropped,
                        kept: text.chars().count(),
                    }
                });
                let stats = GenStats {
                    tokens: c.tokens,
                    first_token_ms: c.first_token.map(|d| d.as_millis() as u64),
                    latency_ms: c.elapsed.as_millis() as u64,
                    fell_back: c.fell_back,
                    capped: c.finish == Finish::Capped,
                    fallback: c.fallback_reason,
                    length_cut,
                    prompt_tokens: c.prompt_tokens,
                    fit: None,
                };
                Ok((text, stats))
            }
            Backend::Replay(r) => {
                let started = Instant::now();
                let (text, fallback) = r
                    .find(turn, attempt)
                    .map(|a| (a.text.clone(), a.fallback.clone()))
                    .ok_or_else(|| format!("the recording has no turn {turn}"))?;
                // Paced by the clock: each token is due at first_token + i·per_token; tokens
                // already due go out together, so a fast replay is not bound by the timer's
                // resolution. "Jump to the end" sends the rest at once.
                let to_end = || r.to_end.load(std::sync::atomic::Ordering::Relaxed);
                let due = |i: u32| started + r.first_token + r.per_token * i;
                if !to_end() {
                    tokio::time::sleep_until(due(0).into()).await;
                }
                let first = started.elapsed();
                let chars: Vec<char> = text.chars().collect();
                let mut tokens = 0u32;
                // Tokens of 1–3 characters, the way a Japanese tokenizer tends to cut.
                let mut i = 0;
                let mut batch = String::new();
                while i < chars.len() {
                    let n = 1 + (i * 7 + turn) % 3;
                    batch.extend(&chars[i..(i + n).min(chars.len())]);
                    tokens += 1;
                    i += n;
                    let next = due(tokens);
                    if to_end() || i >= chars.len() {
                        continue;
                    }
                    if next > Instant::now() + Duration::from_millis(1) {
                        on_token(&std::mem::take(&mut batch));
                        tokio::time::sleep_until(next.into()).await;
                    }
                }
                if !batch.is_empty() {
                    on_token(&batch);
                }
                let stats = GenStats {
                    tokens,
                    first_token_ms: Some(first.as_millis() as u64),
                    latency_ms: started.elapsed().as_millis() as u64,
                    fell_back: fallback.is_some(),
                    fallback,
                    ..GenStats::default()
                };
                Ok((text, stats))
            }
        }
    }

    /// The LLM judge: one call, re-asked once when the reply cannot be read.
    pub async fn judge(
        &self,
        turn: usize,
        attempt: usize,
        messages: Vec<Message>,
        rule: &JudgeRule,
    ) -> JudgeOutcome {
        match self {
            Backend::Live(client) => {
                let format = ResponseFormat::Schema(judge::schema());
                let mut call = |m: Vec<Message>| {
                    let (client, format) = (client.clone(), format.clone());
                    async move {
                        client
                            .chat(&ChatRequest::judge(m, format))
                            .await
                            .map(|c| c.text)
                            .map_err(|e| e.to_string())
                    }
                };
                judge_with(&mut call, messages, rule).await
            }
            Backend::Replay(r) => {
                let replies: Vec<String> = match r.find(turn, attempt).and_then(|a| a.judge.clone())
                {
                    Some(JudgeReplies::One(s)) => vec![s],
                    Some(JudgeReplies::Two(v)) => v,
                    None => Vec::new(),
                };
                let mut n = 0;
                let mut call = |_m: Vec<Message>| {
                    let reply = replies.get(n).or(replies.last()).cloned();
                    n += 1;
                    async move { reply.ok_or_else(|| "the recording has no judge reply".to_string()) }
                };
                judge_with(&mut call, messages, rule).await
            }
        }
    }
}

/// The judge protocol over any way of asking: read the reply, re-ask once, else UNSCORED.
async fn judge_with<F, Fut>(call: &mut F, messages: Vec<Message>, rule: &JudgeRule) -> JudgeOutcome
where
    F: FnMut(Vec<Message>) -> Fut,
    Fut: std::future::Future<Output = Result<String, String>>,
{
    let first = match call(messages.clone()).await {
        Ok(t) => t,
        Err(e) => return JudgeOutcome::unscored(format!("判定の呼び出しに失敗: {e}"), Vec::new()),
    };
    let why = match judge::parse(&first) {
        Ok(s) => return JudgeOutcome::scored(s, rule, vec![first]),
        Err(why) => why,
    };
    match call(judge::reask(&messages, &first, &why)).await {
        Ok(t) => match judge::parse(&t) {
            Ok(s) => JudgeOutcome::scored(s, rule, vec![first, t]),
            Err(why) => JudgeOutcome::unscored(why, vec![first, t]),
        },
        Err(e) => JudgeOutcome::unscored(format!("再質問に失敗: {e}"), vec![first]),
    }
}

/// Streams a line with its prompt fitted to the context in tokens (oldest history dropped
/// first). When the server still refuses the prompt as too long, its own count teaches the
/// ratio and the prompt is fitted again once. A prompt that cannot fit is a clear
/// `context overflow` message.
pub async fn fitted_stream(
    client: &Client,
    messages: Vec<Message>,
    on_token: &mut (dyn FnMut(&str) + Send),
) -> Result<crate::llm::Completion, String> {
    fitted_stream_with(client, messages, &[], on_token).await
}

/// [`fitted_stream`] with lighter versions of the system message (less vault context), taken
/// in the priority order of assets/llm/budget.toml once the older history is gone.
pub async fn fitted_stream_with(
    client: &Client,
    messages: Vec<Message>,
    lighter: &[String],
    on_token: &mut (dyn FnMut(&str) + Send),
) -> Result<crate::llm::Completion, String> {
    fitted_stream_observed(client, messages, lighter, &mut |_| {}, on_token).await
}

/// Fits a line's prompt to `budget_chars` in the priority order of assets/llm/budget.toml:
/// what every request of a run goes through before it is sent (and what `doctor` asks of the
/// first turn, so its verdict is the run's).
pub fn fit_to(
    messages: &mut Vec<Message>,
    budget_chars: usize,
    lighter: &[String],
) -> Result<crate::llm::budget::Fitted, crate::llm::budget::Overflow> {
    use crate::llm::budget;
    let keep = budget::Priorities::builtin().keep_history;
    budget::fit_prioritised(messages, budget_chars, lighter, keep)
}

/// One request as it went over the wire: its URL, the JSON body exactly as sent (messages
/// after fitting and the system-role policy, every option), and what fitting gave up for it.
#[derive(Debug, Clone)]
pub struct Sent {
    pub url: String,
    pub body: serde_json::Value,
    pub fitted: crate::llm::budget::Fitted,
}

/// [`fitted_stream_with`] that shows `on_sent` every request it sends (a refit after the
/// server refused the length, a fallback after a failed stream: the last one is the one the
/// reply came from).
pub async fn fitted_stream_observed(
    client: &Client,
    mut messages: Vec<Message>,
    lighter: &[String],
    on_sent: &mut (dyn FnMut(Sent) + Send),
    on_token: &mut (dyn FnMut(&str) + Send),
) -> Result<crate::llm::Completion, String> {
    use crate::llm::budget;
    // The server's facts (its real context, whether the template takes a system message) and
    // a loaded model come before the budget: see llm::facts and llm::load.
    client.prepare().await.map_err(|e| e.to_string())?;
    // The server's tokenizer, where it has one, gives the ratio before the first request.
    client.learn_from_tokenizer(&messages).await;
    // What fitting gave up over the rounds (a refit starts from the prompt already fitted).
    let mut fitted = budget::Fitted::default();
    for round in 0..3 {
        let budget_chars = client.prompt_budget_chars();
        match fit_to(&mut messages, budget_chars, lighter) {
            Ok(f) => {
                fitted.dropped += f.dropped;
                fitted.rung = fitted.rung.max(f.rung);
            }
            Err(o) => {
                return Err(budget::overflow_message(
                    &o,
                    client.ratio(),
                    client.context_tokens(),
                ));
            }
        }
        let sent_chars = budget::chars_of(&messages);
        let mut seen = |url: &str, body: &serde_json::Value| {
            on_sent(Sent {
                url: url.to_string(),
                body: body.clone(),
                fitted,
            })
        };
        match client
            .stream_chat_observed(&ChatRequest::line(messages.clone()), &mut seen, on_token)
            .await
        {
            Ok(c) => {
                if let crate::llm::ContextCheck::Shifted {
                    prompt,
                    reply,
                    context,
                } = c.context
                {
                    return Err(budget::shifted_message(prompt, reply, context));
                }
                return Ok(c);
            }
            Err(crate::llm::LlmError::Rejected { message, .. })
                if budget::is_context_refusal(&message) =>
            {
                // Learn from the counts and fit again; without counts (Ollama) the ratio is
                // raised past what the refusal proves. A refusal in the last round is a
                // context overflow, not a server failure.
                match (budget::refused_counts(&message), round) {
                    (Some((tokens, ctx)), 0) => {
                        client.learn(sent_chars, tokens);
                        client.learn_context(ctx);
                    }
                    (None, 0 | 1) if client.is_ollama() => client.learn_refusal(sent_chars),
                    _ => return Err(budget::refused_message(&message)),
                }
            }
            Err(e) => return Err(e.to_string()),
        }
    }
    Err(budget::refused_message("refused again after fitting"))
}
