//! Counterfactual replies for a dropout (seed 000 §7 Phase 2): the prompt that asks the LLM
//! for one reply per reply type and a forgiving parser of its JSON. Storing the drafts and
//! accepting one is in `review`.

use serde::Serialize;

use super::ResponseType;
use crate::llm::{Message, Role};

pub use super::review::{
    Accept, ReplyCheck, StoredDraft, accept, accept_checked, save_drafts, stored_drafts,
};

/// Who answers, as the prompt describes her.
#[derive(Debug, Clone, Copy)]
pub struct Persona<'a> {
    pub name: &'a str,
    pub role: &'a str,
    pub speech_style: &'a str,
}

impl<'a> Persona<'a> {
    pub fn from_character(c: &'a crate::director::ruleset::Character) -> Persona<'a> {
        Persona {
            name: &c.display_name,
            role: &c.role,
            speech_style: &c.speech_style,
        }
    }
}

/// The one user message (Gemma has no system role) asking for three replies.
pub fn draft_prompt(p: &Persona, user_text: Option<&str>, bot_text: &str) -> Vec<Message> {
    let name = p.name;
    // Stored texts are masked already; masking is idempotent, so this only guards against a
    // caller that passes raw text (every path to a model masks first).
    let mask = |t: &str| crate::safety::pii::shared().mask(t).masked_text;
    let user_text = user_text.map(mask);
    let user_text = user_text.as_deref();
    let bot_text = &mask(bot_text);
    let mut s = String::new();
    s.push_str(
        "あなたは、姉妹キャラクターが話し相手になるチャットの返答を見直すレビュアーです。\n",
    );
    s.push_str(&format!(
        "下の{name}の返答のあと、ユーザーは返事をせずに会話から離れてしまいました。\n\n"
    ));
    s.push_str(&format!(
        "【{name}の人物像】{} {}\n",
        p.role, p.speech_style
    ));
    match user_text {
        Some(u) => s.push_str(&format!("【ユーザーの発言】{u}\n")),
        None => s.push_str(&format!("【ユーザーの発言】なし（{name}から話しかけた）\n")),
    }
    s.push_str(&format!("【{name}の返答（このあと離脱）】{bot_text}\n\n"));
    s.push_str(&format!(
        "{name}として、会話が続きそうな別の返答を次の3種類で1つずつ考えてください。\n"
    ));
    s.push_str("- プロレス受け: からかいをいったん受け止め、大げさに乗ってみせる\n");
    s.push_str("- 流し: 笑って軽く受け流し、話を前へ進める\n");
    s.push_str("- カウンター: からかいを切り返し、問いかけでユーザーに話を返す\n");
    s.push_str(&format!(
        "どれも{name}の口調で1〜2文、40字くらいまで。AI・モデル・開発者など、世界観を壊す話はしないこと。\n"
    ));
    s.push_str("あわせて、ユーザーの発言の種類を短い名詞で答えてください（例: からかい、いじり、悪口、自虐）。\n\n");
    s.push_str("次の形のJSONだけを返してください。説明文やコードブロックは不要です。\n");
    s.push_str(r#"{"user_message_type": "…", "drafts": [{"bot_response_type": "プロレス受け", "text": "…"}, {"bot_response_type": "流し", "text": "…"}, {"bot_response_type": "カウンター", "text": "…"}]}"#);
    vec![Message {
        role: Role::User,
        content: s,
    }]
}

/// The follow-up sent once when the first reply could not be read.
pub fn reask(first: &[Message], raw: &str, error: &str) -> Vec<Message> {
    let mut m = first.to_vec();
    m.push(Message::assistant(raw));
    m.push(Message::user(format!(
        "今の返答は読み取れませんでした（{error}）。user_message_type と、プロレス受け・流し・カウンターの3つの案を持つ drafts 配列のJSONオブジェクトを1つだけ返してください。"
    )));
    m
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Draft {
    pub bot_response_type: ResponseType,
    pub text: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Drafts {
    pub user_message_type: Option<String>,
    /// One per type, in プロレス受け, 流し, カウンター order.
    pub drafts: Vec<Draft>,
}

const TYPE_KEYS: [&str; 5] = ["bot_response_type", "type", "reply_type", "種類", "タイプ"];
const TEXT_KEYS: [&str; 6] = [
    "text",
    "bot_response",
    "reply",
    "response",
    "返答",
    "セリフ",
];
const LIST_KEYS: [&str; 5] = ["drafts", "replies", "candidates", "responses", "案"];
const KIND_KEYS: [&str; 3] = ["user_message_type", "message_type", "発言の種類"];

fn type_alias(s: &str) -> Option<ResponseType> {
    let s = s.trim().trim_matches(['「', '」', '【', '】']);
    ResponseType::parse(s).or(match s.to_lowercase().as_str() {
        "受け" | "プロレス" | "accept" | "play along" => Some(ResponseType::Uke),
        "受け流し" | "deflect" | "brush off" => Some(ResponseType::Nagashi),
        "切り返し" | "反撃" => Some(ResponseType::Counter),
        _ => None,
    })
}

fn clean(text: &str) -> String {
    let t = text.trim();
    let t = t
        .strip_prefix('「')
        .and_then(|r| r.strip_suffix('」'))
        .unwrap_or(t);
    t.trim().to_string()
}

fn text_of(v: &serde_json::Value) -> Option<String> {
    match v {
        serde_json::Value::String(s) => Some(clean(s)),
        serde_json::Value::Object(o) => TEXT_KEYS
            .iter()
            .find_map(|k| o.get(*k).and_then(|v| v.as_str()))
            .map(clean),
        _ => None,
    }
}

/// Collects (type, text) pairs from the shapes models actually produce: `{"drafts": [...]}`,
/// a bare array of drafts, or an object keyed by the type names.
fn pairs(v: &serde_json::Value) -> Vec<(ResponseType, String)> {
    let from_list = |items: &Vec<serde_json::Value>| -> Vec<(ResponseType, String)> {
        items
            .iter()
            .filter_map(|it| {
                let o = it.as_object()?;
                let t = TYPE_KEYS
                    .iter()
                    .find_map(|k| o.get(*k).and_then(|v| v.as_str()))
                    .and_then(type_alias)?;
                Some((t, text_of(it)?))
            })
            .collect()
    };
    match v {
        serde_json::Value::Array(items) => from_list(items),
        serde_json::Value::Object(o) => {
            if let Some(items) = LIST_KEYS.iter().find_map(|k| o.get(*k)?.as_array()) {
                return from_list(items);
            }
            o.iter()
                .filter_map(|(k, v)| Some((type_alias(k)?, text_of(v)?)))
                .collect()
        }
        _ => Vec::new(),
    }
}

/// The end (exclusive) of the JSON object or array starting at `start`, brackets balanced
/// outside strings.
fn balanced(text: &str, start: usize) -> Option<&str> {
    let mut stack = Vec::new();
    let (mut in_str, mut escaped) = (false, false);
    for (i, c) in text.get(start..)?.char_indices() {
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
            '{' => stack.push('}'),
            '[' => stack.push(']'),
            '}' | ']' => {
                if stack.pop() != Some(c) {
                    return None;
                }
                if stack.is_empty() {
                    return text.get(start..start + i + c.len_utf8());
                }
            }
            _ => {}
        }
    }
    None
}

/// Reads the three drafts out of a reply: bare or fenced JSON, prose around it, several
/// shapes and key spellings. Every type must have a non-empty text; the first of each wins.
pub fn parse_drafts(reply: &str) -> Result<Drafts, String> {
    let mut first_err: Option<String> = None;
    for (start, _) in reply.match_indices(['{', '[']) {
        let Some(chunk) = balanced(reply, start) else {
            continue;
        };
        let Ok(v) = serde_json::from_str::<serde_json::Value>(chunk) else {
            first_err.get_or_insert_with(|| "JSONの構文エラー".to_string());
            continue;
        };
        let found = pairs(&v);
        let mut drafts = Vec::new();
        let mut missing = Vec::new();
        for t in ResponseType::ALL {
            match found.iter().find(|(ft, text)| *ft == t && !text.is_empty()) {
                Some((_, text)) => drafts.push(Draft {
                    bot_response_type: t,
                    text: text.clone(),
                }),
                None => missing.push(t.as_str()),
            }
        }
        if missing.is_empty() {
            let user_message_type = v.as_object().and_then(|o| {
                KIND_KEYS
                    .iter()
                    .find_map(|k| o.get(*k).and_then(|v| v.as_str()))
                    .map(|s| s.trim().to_string())
                    .filter(|s| !s.is_empty())
            });
            return Ok(Drafts {
                user_message_type,
                drafts,
            });
        }
        if !found.is_empty() {
            first_err.get_or_insert_with(|| format!("{}の案がありません", missing.join("・")));
        }
    }
    Err(first_err.unwrap_or_else(|| "JSONが見つかりません".to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(d: &Drafts) -> Vec<(&str, &str)> {
        d.drafts
            .iter()
            .map(|x| (x.bot_response_type.as_str(), x.text.as_str()))
            .collect()
    }

    #[test]
    fn the_asked_for_shape_is_read_in_type_order() {
        let reply = r#"{"user_message_type": "いじり", "drafts": [
            {"bot_response_type": "カウンター", "text": "じゃあ一緒に迷子になってみる？"},
            {"bot_response_type": "プロレス受け", "text": "そうなの、駅の出口は全部わたしの敵！"},
            {"bot_response_type": "流し", "text": "あはは、細かいことは気にしない！"}]}"#;
        let d = parse_drafts(reply).unwrap();
        assert_eq!(d.user_message_type.as_deref(), Some("いじり"));
        assert_eq!(
            texts(&d),
            [
                ("プロレス受け", "そうなの、駅の出口は全部わたしの敵！"),
                ("流し", "あはは、細かいことは気にしない！"),
                ("カウンター", "じゃあ一緒に迷子になってみる？"),
            ]
        );
    }

    #[test]
    fn fences_prose_and_other_shapes_are_read() {
        // Prose with a brace before the fenced JSON; an object keyed by type; 「」 stripped.
        let keyed = "はい、案です {笑}。\n```json\n{\"プロレス受け\": \"「負けました〜！」\", \"流し\": {\"text\": \"まあまあ\"}, \"counter\": \"そっちこそ？\"}\n```";
        let d = parse_drafts(keyed).unwrap();
        assert_eq!(
            texts(&d),
            [
                ("プロレス受け", "負けました〜！"),
                ("流し", "まあまあ"),
                ("カウンター", "そっちこそ？")
            ]
        );
        assert_eq!(d.user_message_type, None);
        // A bare array with other key spellings.
        let array = r#"[{"type": "受け", "reply": "うん、認める！"}, {"type": "nagashi", "reply": "へへっ"}, {"種類": "切り返し", "返答": "言ったね？"}]"#;
        let d = parse_drafts(array).unwrap();
        assert_eq!(texts(&d)[2], ("カウンター", "言ったね？"));
        // The first draft of a type wins.
        let twice = r#"{"drafts": [{"type": "流し", "text": "一つ目"}, {"type": "流し", "text": "二つ目"}, {"type": "プロレス受け", "text": "a"}, {"type": "カウンター", "text": "b"}]}"#;
        assert_eq!(texts(&parse_drafts(twice).unwrap())[1], ("流し", "一つ目"));
    }

    #[test]
    fn a_missing_or_empty_type_is_an_error_that_names_it() {
        let two = r#"{"drafts": [{"type": "プロレス受け", "text": "a"}, {"type": "流し", "text": "  "}]}"#;
        let e = parse_drafts(two).unwrap_err();
        assert!(e.contains("流し") && e.contains("カウンター"), "{e}");
        assert!(!e.contains("プロレス受け"), "{e}");
        assert_eq!(
            parse_drafts("ごめんなさい、書けません").unwrap_err(),
            "JSONが見つかりません"
        );
        assert_eq!(
            parse_drafts("{\"drafts\": [}").unwrap_err(),
            "JSONが見つかりません"
        );
        assert_eq!(parse_drafts("{\"a\": 1,}").unwrap_err(), "JSONの構文エラー");
    }

    #[test]
    fn the_prompt_names_the_lines_and_the_three_types() {
        let p = Persona {
            name: "やな",
            role: "姉。",
            speech_style: "タメ口。",
        };
        let m = draft_prompt(&p, Some("やなって方向音痴だよね"), "そんなことないもん");
        assert_eq!(m.len(), 1);
        let s = &m[0].content;
        for want in [
            "やなって方向音痴だよね",
            "そんなことないもん",
            "プロレス受け",
            "流し",
            "カウンター",
            "タメ口。",
            "user_message_type",
        ] {
            assert!(s.contains(want), "{want} missing from {s}");
        }
        let opener = draft_prompt(&p, None, "ねえねえ！");
        assert!(opener[0].content.contains("なし（やなから話しかけた）"));
    }
}

/// Why no drafts came back.
#[derive(Debug, Clone, PartialEq)]
pub enum DraftError {
    /// The client could not be built from the settings.
    Config(String),
    /// The endpoint failed.
    Endpoint(String),
    /// The model answered twice in a form that could not be read.
    Unreadable(String),
}

impl std::fmt::Display for DraftError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DraftError::Config(m) | DraftError::Endpoint(m) | DraftError::Unreadable(m) => {
                f.write_str(m)
            }
        }
    }
}

/// Asks the model for the three drafts: one call, and one re-ask when the reply cannot be read.
pub async fn request(
    llm: crate::llm::LlmConfig,
    messages: Vec<Message>,
) -> Result<Drafts, DraftError> {
    use crate::llm::{ChatRequest, Client, ResponseFormat};
    let temperature = llm.temperature;
    let client = Client::new(llm).map_err(|e| DraftError::Config(e.to_string()))?;
    let request = |messages| ChatRequest {
        messages,
        temperature: Some(temperature),
        max_tokens: None,
        format: ResponseFormat::Json,
        stop: Some(Vec::new()),
        seed: None,
        cap: false,
    };
    let first = client
        .chat(&request(messages.clone()))
        .await
        .map_err(|e| DraftError::Endpoint(e.to_string()))?;
    let error = match parse_drafts(&first.text) {
        Ok(d) => return Ok(d),
        Err(e) => e,
    };
    let second = client
        .chat(&request(reask(&messages, &first.text, &error)))
        .await
        .map_err(|e| DraftError::Endpoint(e.to_string()))?;
    parse_drafts(&second.text).map_err(|e| {
        DraftError::Unreadable(format!(
            "the model's reply could not be read twice ({e}): {}",
            second.text.trim()
        ))
    })
}
