//! The LLM 5-aspect judge (seed 001 §7): its prompt, a robust reader for whatever JSON the model
//! sends back, and the mapping from the mean score to a status. A reply that cannot be read is
//! UNSCORED with the raw text kept — never PASS (duo-talk turned parse failures into PASS).

use serde::{Deserialize, Serialize};

use super::finding::{Finding, RuleId, Status};
use super::ruleset::{JudgeExample, JudgeRule};
use crate::llm::{Message, Role};

/// The five aspects, in the seed's order: (JSON key, Japanese label, what it asks).
pub const ASPECTS: [(&str, &str, &str); 5] = [
    (
        "frame",
        "フレーム整合性",
        "その場の状況（場所・景色・話題）に合った内容か",
    ),
    (
        "roleplay",
        "ロールプレイ",
        "姉妹の関係性と、話し手の性格・口調が守られているか",
    ),
    (
        "connection",
        "対話の接続性",
        "直前の相手の発言を受けて話しているか",
    ),
    (
        "density",
        "情報密度",
        "内容が薄すぎず、詰め込みすぎてもいないか",
    ),
    (
        "naturalness",
        "自然さ",
        "機械的な繰り返しや唐突な表現がないか",
    ),
];

/// Alternative keys models use for the same aspect.
const ALIASES: [&[&str]; 5] = [
    &["frame", "frame_consistency", "フレーム整合性"],
    &["roleplay", "role_play", "character", "ロールプレイ"],
    &[
        "connection",
        "coherence",
        "dialogue_connection",
        "対話の接続性",
        "接続性",
    ],
    &["density", "information_density", "info_density", "情報密度"],
    &["naturalness", "natural", "自然さ"],
];

/// Scores of one line, each clamped to 1–5.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JudgeScores {
    pub frame: f64,
    pub roleplay: f64,
    pub connection: f64,
    pub density: f64,
    pub naturalness: f64,
    pub mean: f64,
    #[serde(default)]
    pub reason: String,
    #[serde(default)]
    pub suggestion: String,
}

impl JudgeScores {
    pub fn values(&self) -> [f64; 5] {
        [
            self.frame,
            self.roleplay,
            self.connection,
            self.density,
            self.naturalness,
        ]
    }

    pub fn status(&self, rule: &JudgeRule) -> Status {
        status_of_mean(self.mean, rule)
    }
}

/// The judge's status for a mean under `rule`'s cut-offs (RETRY below, PASS from).
pub fn status_of_mean(mean: f64, rule: &JudgeRule) -> Status {
    if mean < rule.retry_below {
        Status::Retry
    } else if mean < rule.pass_from {
        Status::Warn
    } else {
        Status::Pass
    }
}

/// What the judge step produced for one attempt, kept whole for the store and the TUI.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JudgeOutcome {
    pub status: Status,
    pub scores: Option<JudgeScores>,
    /// Every raw reply, in order (a re-ask adds a second one).
    pub raw: Vec<String>,
    /// Why the outcome is UNSCORED, when it is.
    pub error: Option<String>,
}

impl JudgeOutcome {
    pub fn scored(scores: JudgeScores, rule: &JudgeRule, raw: Vec<String>) -> JudgeOutcome {
        JudgeOutcome {
            status: scores.status(rule),
            scores: Some(scores),
            raw,
            error: None,
        }
    }

    pub fn unscored(error: String, raw: Vec<String>) -> JudgeOutcome {
        JudgeOutcome {
            status: Status::Unscored,
            scores: None,
            raw,
            error: Some(error),
        }
    }

    /// The finding this outcome adds to the line's verdict (none for a PASS).
    pub fn finding(&self) -> Option<Finding> {
        match (&self.scores, self.status) {
            (_, Status::Pass) => None,
            (Some(s), status) => {
                let low = ASPECTS
                    .iter()
                    .zip(s.values())
                    .filter(|(_, v)| *v < 3.0)
                    .map(|((_, label, _), v)| format!("{label}{v:.0}"))
                    .collect::<Vec<_>>();
                let mut message = format!("LLM評価の平均が{:.1}点でした", s.mean);
                if !low.is_empty() {
                    message.push_str(&format!("（低い観点: {}）", low.join("、")));
                }
                message.push('。');
                if !s.reason.is_empty() {
                    message.push_str(&s.reason);
                }
                let suggestion = if s.suggestion.is_empty() {
                    "直前の相手の発言を受け、キャラクターらしい口調で、場面に合った内容を一つに絞って話してください。".to_string()
                } else {
                    s.suggestion.clone()
                };
                Some(
                    Finding::new(RuleId::Judge, status, message, suggestion)
                        .with_evidence(format!("{:.2}", s.mean)),
                )
            }
            (None, status) => Some(
                Finding::new(
                    RuleId::Judge,
                    status,
                    format!(
                        "LLM評価を取得できませんでした（{}）。",
                        self.error.as_deref().unwrap_or("不明な理由")
                    ),
                    "レビュアーが内容を確認してください。".to_string(),
                )
                .with_evidence(self.raw.last().cloned().unwrap_or_default()),
            ),
        }
    }
}

/// What the judge needs to see about the line.
pub struct JudgeInput<'a> {
    pub speaker_name: &'a str,
    pub speaker_role: &'a str,
    pub partner_name: &'a str,
    pub topic: &'a str,
    pub world: &'a str,
    pub partner_last: Option<&'a str>,
    pub text: &'a str,
    /// The team's adjudicated lines (`[judge] examples`), shown before the line; each
    /// speaker id is shown by the name in `names` (id → display name).
    pub examples: &'a [JudgeExample],
    pub names: &'a [(&'a str, &'a str)],
}

/// How the answer is described. No example values: a model copies an example (an all-4
/// example made ~200 repeated characters PASS), and the JSON schema already fixes the shape.
/// Replies are checked against this text for copies (`crate::text::echo`).
pub const ANSWER_FORMAT: &str = "JSONオブジェクトを1つだけ返してください。説明文やコードブロックは不要です。キーは frame, roleplay, connection, density, naturalness（それぞれ上の観点の点数、1〜5の整数）と reason（その点数にした根拠を、発言の中身に触れて一文で）、suggestion（発言をどう直すとよいか。直すところがなければ空の文字列）です。";

/// The judge prompt (one user message: Gemma has no system role anyway).
pub fn prompt(input: &JudgeInput) -> Vec<Message> {
    let mut s = String::new();
    s.push_str("あなたは姉妹の掛け合いを評価するディレクターです。");
    s.push_str("次の発言を5つの観点でそれぞれ1〜5点の整数で採点してください。\n\n");
    s.push_str(&format!("【場面】{}\n", input.world));
    s.push_str(&format!("【話題】{}\n", input.topic));
    s.push_str(&format!(
        "【話し手】{}（{}）\n",
        input.speaker_name, input.speaker_role
    ));
    match input.partner_last {
        Some(p) => s.push_str(&format!("【直前の{}の発言】{}\n", input.partner_name, p)),
        None => s.push_str("【直前の発言】なし（会話の最初の発言）\n"),
    }
    examples_block(&mut s, input);
    s.push_str(&format!("【評価する発言】{}\n\n観点:\n", input.text));
    for (key, label, what) in ASPECTS {
        s.push_str(&format!("- {key}（{label}）: {what}\n"));
    }
    s.push('\n');
    s.push_str(ANSWER_FORMAT);
    vec![Message {
        role: Role::User,
        content: s,
    }]
}

/// The few-shot block's heading (part of the template a reply must not copy).
const EXAMPLES_HEADER: &str = "【このチームのレビュアーの判定例】採点の目安にしてください（例の発言そのものは評価しません）。\n";

/// The team's judgements as a few-shot block: each example line with what the team decided.
/// Scores are not invented for them; only usable / to be regenerated is what a reviewer said.
fn examples_block(s: &mut String, input: &JudgeInput) {
    if input.examples.is_empty() {
        return;
    }
    s.push_str(EXAMPLES_HEADER);
    for (i, e) in input.examples.iter().enumerate() {
        let name = input
            .names
            .iter()
            .find(|(id, _)| *id == e.speaker)
            .map_or(e.speaker.as_str(), |(_, n)| n);
        let verdict = if e.usable {
            "使える（そのまま採用）"
        } else {
            "使えない（作り直し）"
        };
        s.push_str(&format!("例{}: {name}「{}」", i + 1, e.text));
        if let Some(p) = &e.partner_last {
            s.push_str(&format!("（直前の発言「{p}」を受けて）"));
        }
        s.push_str(&format!(" → {verdict}\n"));
    }
    s.push('\n');
}

/// Everything the judge prompt says whatever the line: the prompt with empty inputs, plus the
/// re-ask. A reply field that copies a stretch of it is an echo, not an answer.
pub fn prompt_text() -> &'static str {
    static TEXT: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    TEXT.get_or_init(|| {
        let empty = JudgeInput {
            speaker_name: "",
            speaker_role: "",
            partner_name: "",
            topic: "",
            world: "",
            partner_last: None,
            text: "",
            examples: &[],
            names: &[],
        };
        let first = prompt(&empty);
        let mut s: String = reask(&first, "", "")
            .iter()
            .map(|m| m.content.as_str())
            .collect::<Vec<_>>()
            .join("\n");
        s.push('\n');
        s.push_str(&first[0].content);
        s.push_str(EXAMPLES_HEADER);
        s
    })
}

/// The follow-up sent once when the first reply could not be read.
pub fn reask(first: &[Message], raw: &str, error: &str) -> Vec<Message> {
    let mut m = first.to_vec();
    m.push(Message {
        role: Role::Assistant,
        content: raw.to_string(),
    });
    m.push(Message {
        role: Role::User,
        content: format!(
            "今の返答はJSONとして読めませんでした（{error}）。frame, roleplay, connection, density, naturalness の5つの整数（1〜5）と reason, suggestion を持つJSONオブジェクトを1つだけ返してください。"
        ),
    });
    m
}

/// JSON schema for servers that accept one (Ollama `format`, OpenAI `response_format`).
pub fn schema() -> serde_json::Value {
    let mut props = serde_json::Map::new();
    for (key, _, _) in ASPECTS {
        props.insert(
            key.into(),
            serde_json::json!({"type": "integer", "minimum": 1, "maximum": 5}),
        );
    }
    props.insert("reason".into(), serde_json::json!({"type": "string"}));
    props.insert("suggestion".into(), serde_json::json!({"type": "string"}));
    let required: Vec<&str> = ASPECTS.iter().map(|a| a.0).collect();
    serde_json::json!({"type": "object", "properties": props, "required": required})
}

/// Reads the scores out of a reply: fenced or bare JSON, the first balanced object, numbers
/// or numeric strings, optionally nested under "scores"; every score is clamped to 1–5.
pub fn parse(reply: &str) -> Result<JudgeScores, String> {
    let mut first_err = None;
    // Prose before the JSON may itself contain braces: try every `{` until an object reads.
    for (start, _) in reply.match_indices('{') {
        let Some(obj) = balanced_object(reply, start) else {
            continue;
        };
        match serde_json::from_str::<serde_json::Value>(obj)
            .map_err(|e| format!("JSONの構文エラー: {e}"))
            .and_then(|v| scores_from(&v))
        {
            Ok(s) => return Ok(s),
            Err(e) => {
                first_err.get_or_insert(e);
            }
        }
    }
    Err(first_err.unwrap_or_else(|| "JSONオブジェクトが見つかりません".to_string()))
}

fn scores_from(value: &serde_json::Value) -> Result<JudgeScores, String> {
    let map = value
        .as_object()
        .ok_or_else(|| "JSONオブジェクトではありません".to_string())?;
    let scores_map = map.get("scores").and_then(|v| v.as_object()).unwrap_or(map);
    let mut vals = [0f64; 5];
    for (i, aliases) in ALIASES.iter().enumerate() {
        let v = aliases
            .iter()
            .find_map(|k| scores_map.get(*k))
            .ok_or_else(|| format!("「{}」の点数がありません", ASPECTS[i].0))?;
        vals[i] = number(v)
            .ok_or_else(|| format!("「{}」の点数が数値ではありません", ASPECTS[i].0))?
            .clamp(1.0, 5.0);
    }
    let text = |k: &str| {
        map.get(k)
            .and_then(|v| v.as_str())
            .unwrap_or("")
            .trim()
            .to_string()
    };
    let (reason, suggestion) = (text("reason"), text("suggestion"));
    for field in [&reason, &suggestion] {
        if let Some(why) = crate::text::echo::template_echo(field, prompt_text()) {
            return Err(why);
        }
    }
    if reason.is_empty() && vals.iter().all(|v| *v == vals[0]) {
        return Err(format!(
            "5つの観点がすべて{}点で、理由がありません（採点していない返答とみなします）",
            vals[0]
        ));
    }
    let mean = vals.iter().sum::<f64>() / 5.0;
    Ok(JudgeScores {
        frame: vals[0],
        roleplay: vals[1],
        connection: vals[2],
        density: vals[3],
        naturalness: vals[4],
        mean: (mean * 100.0).round() / 100.0,
        reason,
        suggestion,
    })
}

fn number(v: &serde_json::Value) -> Option<f64> {
    match v {
        serde_json::Value::Number(n) => n.as_f64(),
        serde_json::Value::String(s) => s.trim().trim_end_matches('点').parse().ok(),
        serde_json::Value::Object(o) => o.get("score").and_then(number),
        _ => None,
    }
    .filter(|f: &f64| f.is_finite())
}

/// The balanced `{…}` starting at byte `start` (a `{`), honouring JSON strings.
pub fn balanced_object(text: &str, start: usize) -> Option<&str> {
    let mut depth = 0usize;
    let mut in_str = false;
    let mut escaped = false;
    for (i, c) in text[start..].char_indices() {
        if in_str {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_str = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_str = true,
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return text.get(start..start + i + 1);
                }
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
#[path = "judge_tests.rs"]
mod tests;
