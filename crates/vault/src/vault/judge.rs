//! The model-judged leak check: the user's own chat model is asked, once per secret the
//! speaker may not know (levels 0 and 1), whether a line reveals it — however it is disguised
//! (a paraphrase, an English translation, a reading, emoji, a secret split over sentences).
//! The secret goes into this judge's prompt only, never into a sister's.
//!
//! Same design as the PII second opinion: on by default when a chat model is configured
//! (`[leak_judge]` in llm.toml), bounded in time for the whole line, and honest about what
//! happened: every review carries a [`JudgeStatus`]. An error, a timeout or an answer that is
//! neither yes nor no is a check that did not run — never a pass.

use std::time::Duration;

use futures_util::future::join_all;

use super::leak::{IssueKind, JudgeStatus, LeakIssue, LeakSecret, Review, ReviewInput, Severity};
use crate::llm::{ChatRequest, Client, LlmConfig, Message, ResponseFormat};

/// What the judge is told; the answer is one word.
pub const SYSTEM: &str = "あなたは物語の秘密設定が台詞から漏れていないかを判定する審査員です。\
秘密と台詞が与えられます。台詞が秘密の内容（またはその核心の一部）を読者に分かる形で明かしていれば「はい」、\
明かしていなければ「いいえ」と答えてください。言い換え、別の言語（英語など）、ローマ字、読み仮名や長音での表記、\
絵文字、二つ以上の文に分けた言い方、言葉の一部だけを使ったほのめかしも「明かしている」に含みます。\
同じ言葉が出てきても、秘密の内容に触れていなければ「いいえ」です。\
答えは「はい」か「いいえ」の一語だけで、説明は書かないでください。";

/// Tokens the one-word answer needs (a model may add a 。 or a newline).
const ANSWER_TOKENS: u32 = 8;

/// The chat model that judges, or why there is none.
#[derive(Clone)]
pub struct Judge {
    client: Option<Client>,
    off: String,
    limit: Duration,
    max_secrets: usize,
}

impl Judge {
    /// No model judge; `why` is what every review says.
    pub fn off(why: impl Into<String>) -> Judge {
        Judge {
            client: None,
            off: why.into(),
            limit: Duration::ZERO,
            max_secrets: 0,
        }
    }

    /// From llm.toml: on unless `[leak_judge] enabled = false`, with the chat model.
    pub fn from_config(cfg: &LlmConfig) -> Judge {
        let j = &cfg.leak_judge;
        if !j.enabled {
            return Judge::off("[leak_judge] enabled = false in llm.toml");
        }
        if cfg.model.trim().is_empty() {
            return Judge::off("no chat model configured");
        }
        match Client::new(cfg.clone()) {
            Ok(client) => Judge {
                client: Some(client),
                off: String::new(),
                limit: Duration::from_millis(j.timeout_ms),
                max_secrets: j.max_secrets,
            },
            Err(e) => Judge::off(format!("chat endpoint unusable: {e}")),
        }
    }

    /// A judge over `client` (tests and tools that already hold one).
    pub fn with_client(client: Client, limit: Duration, max_secrets: usize) -> Judge {
        Judge {
            client: Some(client),
            off: String::new(),
            limit,
            max_secrets,
        }
    }

    pub fn client(&self) -> Option<&Client> {
        self.client.as_ref()
    }

    /// Why there is no model judge ("" when there is one).
    pub fn why_off(&self) -> &str {
        &self.off
    }

    /// Time allowed for one line's questions.
    pub fn limit(&self) -> Duration {
        self.limit
    }

    /// Asks about `text` for each secret in `input` the speaker may not know and records the
    /// answers in `review`: a "yes" is a [`IssueKind::ModelJudged`] issue; a failure of any
    /// question, or no answer before `deadline`, makes the check count as not run.
    pub async fn judge(
        &self,
        review: &mut Review,
        input: &ReviewInput,
        text: &str,
        deadline: tokio::time::Instant,
    ) {
        let Some(client) = &self.client else {
            review.judge = JudgeStatus::Disabled;
            review.settle();
            return;
        };
        let (asked, total) = match plan(review, input, text, self.max_secrets) {
            Ok(p) => p,
            Err(reason) => {
                review.judge = JudgeStatus::NotNeeded { reason };
                review.settle();
                return;
            }
        };
        let questions = asked
            .iter()
            .map(|&i| ask(client, &input.secrets[i], text))
            .collect::<Vec<_>>();
        let answers = match tokio::time::timeout_at(deadline, join_all(questions)).await {
            Ok(a) => a,
            Err(_) => {
                review.judge = JudgeStatus::Skipped {
                    reason: format!(
                        "no answer within the time limit ({:.0} s)",
                        self.limit.as_secs_f64()
                    ),
                };
                review.settle();
                return;
            }
        };
        record(review, input, text, &asked, total, answers);
    }
}

/// The secrets to ask about (most important first, at most `max`) and how many needed asking;
/// or why nothing needs asking.
pub fn plan(
    review: &Review,
    input: &ReviewInput,
    text: &str,
    max: usize,
) -> Result<(Vec<usize>, usize), String> {
    if !text.chars().any(char::is_alphanumeric) && !text.chars().any(is_pictograph) {
        return Err("the text has nothing to judge".into());
    }
    if review.result == super::leak::ReviewResult::Rejected {
        return Err("already rejected by the static checks".into());
    }
    let mut need: Vec<usize> = (0..input.secrets.len())
        .filter(|&i| {
            let s = &input.secrets[i];
            s.level <= 1 && !s.content.trim().is_empty()
        })
        .collect();
    if need.is_empty() {
        return Err("no secret of level 0 or 1 for this speaker".into());
    }
    let total = need.len();
    // Importance orders Critical first.
    need.sort_by_key(|&i| input.secrets[i].importance);
    need.truncate(max);
    if need.is_empty() {
        return Err("[leak_judge] max_secrets = 0".into());
    }
    Ok((need, total))
}

fn is_pictograph(c: char) -> bool {
    matches!(c as u32, 0x1F300..=0x1FAFF | 0x2600..=0x27BF)
}

/// The request for one secret and one line: greedy, one word.
pub fn request(secret: &LeakSecret, text: &str) -> ChatRequest {
    let mut user = format!("秘密:\n{}\n", secret.content.trim());
    let words: Vec<&str> = secret
        .forbidden_keywords
        .iter()
        .map(|w| w.trim())
        .filter(|w| !w.is_empty())
        .collect();
    if !words.is_empty() {
        user.push_str(&format!("（関連する言葉: {}）\n", words.join("、")));
    }
    user.push_str(&format!(
        "\n台詞:\n{}\n\nこの台詞は秘密を明かしていますか？「はい」か「いいえ」で答えてください。",
        text.trim()
    ));
    ChatRequest {
        messages: vec![Message::system(SYSTEM), Message::user(user)],
        temperature: Some(0.0),
        max_tokens: Some(ANSWER_TOKENS),
        format: ResponseFormat::Text,
        stop: Some(Vec::new()),
        seed: None,
        cap: false,
    }
}

/// Reads the judge's answer: `Some(true)` for yes, `Some(false)` for no, `None` for anything
/// else (which counts as a check that did not run).
pub fn parse(answer: &str) -> Option<bool> {
    let t: String = answer
        .trim()
        .trim_start_matches(|c: char| "*「『\"'` 　".contains(c))
        .to_lowercase();
    if t.starts_with("いいえ") || t.starts_with("no") || t.starts_with("false") {
        Some(false)
    } else if t.starts_with("はい") || t.starts_with("yes") || t.starts_with("true") {
        Some(true)
    } else {
        None
    }
}

async fn ask(client: &Client, secret: &LeakSecret, text: &str) -> Result<bool, String> {
    let c = client
        .chat(&request(secret, text))
        .await
        .map_err(|e| e.to_string())?;
    parse(&c.text).ok_or_else(|| {
        let mut shown: String = c.text.chars().take(20).collect();
        shown.retain(|c| !c.is_control());
        format!("the judge answered neither はい nor いいえ (「{shown}」)")
    })
}

/// Writes the answers into `review`. Any failed question makes the whole check not run (its
/// "yes" answers still count: a leak found is a leak).
pub fn record(
    review: &mut Review,
    input: &ReviewInput,
    text: &str,
    asked: &[usize],
    total: usize,
    answers: Vec<Result<bool, String>>,
) {
    let len = text.chars().count();
    let mut failed = None;
    for (&i, a) in asked.iter().zip(answers) {
        match a {
            Ok(true) => review.issues.push(issue(&input.secrets[i], len)),
            Ok(false) => {}
            Err(e) => failed = failed.or(Some(e)),
        }
    }
    review.judge = match failed {
        Some(reason) => JudgeStatus::Skipped { reason },
        None => JudgeStatus::Ran {
            asked: asked.len(),
            secrets: total,
        },
    };
    if review
        .issues
        .iter()
        .any(|i| i.kind == IssueKind::ModelJudged)
    {
        review.result = super::leak::ReviewResult::Rejected;
    }
    review.settle();
}

fn issue(secret: &LeakSecret, len: usize) -> LeakIssue {
    let suggestion = match secret
        .allowed_expressions
        .iter()
        .find(|a| !a.trim().is_empty())
    {
        Some(a) => format!(
            "秘密に触れず、「{}」のような許可された表現にとどめてください",
            a.trim()
        ),
        None => "秘密に触れない言い方に変えてください".to_string(),
    };
    LeakIssue {
        kind: IssueKind::ModelJudged,
        severity: Severity::Critical,
        location: "全体".into(),
        detail: format!(
            "モデル判定: この台詞は秘密{}の内容を明かしていると判断されました",
            secret.id
        ),
        suggestion,
        secret_id: Some(secret.id.clone()),
        span: [0, len],
        score: None,
        context: None,
    }
}

#[cfg(test)]
#[path = "judge_tests.rs"]
mod tests;
