//! LINE webhook bodies as LINE documents them (Messaging API, "Webhook event objects"), and the
//! pure decision of what each event asks of her: `classify(event) -> Action`.

use serde::Deserialize;

/// The envelope only: each event is read on its own (`read_event`), so one malformed event
/// never costs the others.
#[derive(Debug, Clone, Deserialize)]
pub struct WebhookBody {
    #[serde(default)]
    pub destination: String,
    pub events: Vec<serde_json::Value>,
}

/// One event of a batch: well-formed, or why not (with its dedup key either way).
#[derive(Debug, Clone)]
pub enum Read {
    Good(Box<Event>),
    Malformed {
        key: String,
        kind: String,
        reason: String,
    },
}

/// Reads one event. Its dedup key is LINE's `webhookEventId`, or — when it has none — a digest
/// of the event itself (its `deliveryContext` left out, so a redelivery has the same key).
pub fn read_event(v: &serde_json::Value) -> Read {
    let key = match v.get("webhookEventId").and_then(|x| x.as_str()) {
        Some(id) if !id.trim().is_empty() => id.to_string(),
        _ => content_key(v),
    };
    match serde_json::from_value::<Event>(v.clone()) {
        Ok(mut e) => {
            e.webhook_event_id = key;
            Read::Good(Box::new(e))
        }
        Err(err) => Read::Malformed {
            key,
            kind: v
                .get("type")
                .and_then(|t| t.as_str())
                .map(|t| t.chars().take(40).collect())
                .unwrap_or_else(|| "?".into()),
            reason: short_reason(&err.to_string()),
        },
    }
}

/// `sha256:` and the hex digest of the event's canonical JSON (keys sorted) without
/// `deliveryContext`.
pub fn content_key(v: &serde_json::Value) -> String {
    use sha2::Digest;
    let mut v = v.clone();
    if let Some(o) = v.as_object_mut() {
        o.remove("deliveryContext");
    }
    let digest = sha2::Sha256::digest(v.to_string().as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

/// serde's message with any quoted value replaced by `"…"` (it may be a user's words) and cut
/// to 120 characters.
fn short_reason(msg: &str) -> String {
    let mut out = String::new();
    let mut inside = false;
    for c in msg.chars() {
        match (c, inside) {
            ('"', false) => {
                inside = true;
                out.push_str("\"…\"");
            }
            ('"', true) => inside = false,
            (_, true) => {}
            (c, false) => out.push(c),
        }
    }
    out.chars().take(120).collect()
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Event {
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default)]
    pub webhook_event_id: String,
    #[serde(default)]
    pub delivery_context: DeliveryContext,
    #[serde(default)]
    pub timestamp: i64,
    #[serde(default)]
    pub source: Option<Source>,
    #[serde(default)]
    pub reply_token: Option<String>,
    #[serde(default)]
    pub message: Option<Message>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeliveryContext {
    #[serde(default)]
    pub is_redelivery: bool,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Source {
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default)]
    pub user_id: Option<String>,
    #[serde(default)]
    pub group_id: Option<String>,
    #[serde(default)]
    pub room_id: Option<String>,
}

impl Source {
    /// The chat this event belongs to (the push address): the group, the room, or the user.
    pub fn channel(&self) -> Option<&str> {
        match self.kind.as_str() {
            "group" => self.group_id.as_deref(),
            "room" => self.room_id.as_deref(),
            "user" => self.user_id.as_deref(),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Message {
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default)]
    pub id: String,
    #[serde(default)]
    pub text: Option<String>,
    #[serde(default)]
    pub quote_token: Option<String>,
    #[serde(default)]
    pub quoted_message_id: Option<String>,
    #[serde(default)]
    pub mention: Option<Mention>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Mention {
    #[serde(default)]
    pub mentionees: Vec<Mentionee>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Mentionee {
    #[serde(rename = "type", default)]
    pub kind: String,
    #[serde(default)]
    pub is_self: bool,
}

/// What an event asks of her.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// A text message: answer now (1:1, or she was mentioned) or leave it to the checker.
    Text { answer_now: bool },
    /// Another message type: the short "I can only read text" line.
    NotText,
    /// follow / unfollow / join / leave / anything else: recorded, nothing sent.
    Record,
}

/// `names` are hers (display name and aliases): a group message naming her counts as a mention.
pub fn classify(e: &Event, names: &[String]) -> Action {
    let Some(src) = &e.source else {
        return Action::Record;
    };
    match (e.kind.as_str(), &e.message) {
        ("message", Some(m)) if m.kind == "text" => {
            let text = m.text.as_deref().unwrap_or("");
            let answer_now = src.kind == "user" || mentions_her(m, text, names);
            Action::Text { answer_now }
        }
        ("message", Some(_)) => Action::NotText,
        _ => Action::Record,
    }
}

/// A LINE mention of the bot (`isSelf`, or `@All`), or her name in the text.
pub fn mentions_her(m: &Message, text: &str, names: &[String]) -> bool {
    let tagged = m
        .mention
        .as_ref()
        .is_some_and(|x| x.mentionees.iter().any(|p| p.is_self || p.kind == "all"));
    tagged
        || names
            .iter()
            .any(|n| !n.is_empty() && text.contains(n.as_str()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(json: &str) -> Event {
        serde_json::from_str(json).unwrap()
    }

    fn names() -> Vec<String> {
        vec!["やな".into(), "ヤナ".into()]
    }

    #[test]
    fn a_malformed_event_is_named_and_keyed_and_its_value_never_quoted() {
        let bad = [
            (
                r#"{"webhookEventId":"01X","source":{"type":"user","userId":"U1"}}"#,
                "type",
            ),
            (
                r#"{"type":"message","timestamp":"秘密の電話090","webhookEventId":"01Y"}"#,
                "string",
            ),
            (
                r#"{"type":"message","message":{"type":"text","id":42},"webhookEventId":"01Z"}"#,
                "integer",
            ),
        ];
        for (json, word) in bad {
            let v: serde_json::Value = serde_json::from_str(json).unwrap();
            match read_event(&v) {
                Read::Malformed { key, reason, .. } => {
                    assert!(key.starts_with("01"), "{key}");
                    assert!(reason.contains(word), "{reason}");
                    assert!(!reason.contains("秘密"), "{reason}");
                }
                Read::Good(_) => panic!("{json} read as good"),
            }
        }
    }

    #[test]
    fn events_without_an_id_get_distinct_keys_stable_across_redelivery() {
        let mk = |text: &str, redelivery: bool| {
            serde_json::json!({"type":"message","timestamp":1,"source":{"type":"user","userId":"U1"},
                "deliveryContext":{"isRedelivery":redelivery},
                "message":{"type":"text","id":text,"text":text}})
        };
        let key = |v: &serde_json::Value| match read_event(v) {
            Read::Good(e) => e.webhook_event_id,
            Read::Malformed { .. } => panic!("malformed"),
        };
        let keys: std::collections::BTreeSet<String> =
            (0..50).map(|i| key(&mk(&format!("m{i}"), false))).collect();
        assert_eq!(keys.len(), 50);
        assert!(
            keys.iter()
                .all(|k| k.starts_with("sha256:") && k.len() == 71)
        );
        assert_eq!(key(&mk("m7", false)), key(&mk("m7", true)));
    }

    #[test]
    fn lines_documented_shapes_classify() {
        let one = ev(
            r#"{"type":"message","mode":"active","timestamp":1,"source":{"type":"user","userId":"U1"},"webhookEventId":"01A","deliveryContext":{"isRedelivery":false},"replyToken":"r","message":{"id":"1","type":"text","quoteToken":"q","text":"こんにちは"}}"#,
        );
        assert_eq!(classify(&one, &names()), Action::Text { answer_now: true });
        assert_eq!(one.source.as_ref().unwrap().channel(), Some("U1"));
        let group = |text: &str, mention: &str| {
            ev(&format!(
                r#"{{"type":"message","source":{{"type":"group","groupId":"C9","userId":"U2"}},"webhookEventId":"01B","deliveryContext":{{"isRedelivery":true}},"message":{{"id":"2","type":"text","text":"{text}"{mention}}}}}"#
            ))
        };
        let g = group("今日暑いね", "");
        assert_eq!(classify(&g, &names()), Action::Text { answer_now: false });
        assert!(g.delivery_context.is_redelivery);
        assert_eq!(g.source.as_ref().unwrap().channel(), Some("C9"));
        assert_eq!(
            classify(&group("やなはどう思う？", ""), &names()),
            Action::Text { answer_now: true }
        );
        let tagged = group(
            "@bot ねえ",
            r#","mention":{"mentionees":[{"index":0,"length":4,"type":"user","userId":"Ubot","isSelf":true}]}"#,
        );
        assert_eq!(
            classify(&tagged, &names()),
            Action::Text { answer_now: true }
        );
        let other = group(
            "@たろう ねえ",
            r#","mention":{"mentionees":[{"index":0,"length":4,"type":"user","userId":"U3","isSelf":false}]}"#,
        );
        assert_eq!(
            classify(&other, &names()),
            Action::Text { answer_now: false }
        );
        let sticker = ev(
            r#"{"type":"message","source":{"type":"room","roomId":"R1","userId":"U2"},"webhookEventId":"01C","message":{"id":"3","type":"sticker","packageId":"1","stickerId":"1"}}"#,
        );
        assert_eq!(classify(&sticker, &names()), Action::NotText);
        for k in ["follow", "unfollow", "join", "leave", "postback"] {
            let e = ev(&format!(
                r#"{{"type":"{k}","source":{{"type":"user","userId":"U1"}},"webhookEventId":"x"}}"#
            ));
            assert_eq!(classify(&e, &names()), Action::Record, "{k}");
        }
    }
}
