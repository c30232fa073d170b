//! Chat-mode exchanges: masked user text + hash, the safety judgment, the reply and its
//! verdict. Nothing here ever sees the raw user text.

use crate::p;

use super::{Store, StoreError};

#[derive(Debug, Clone, Default)]
pub struct NewChat {
    pub conversation_id: String,
    pub character: String,
    pub user_masked: String,
    pub original_content_hash: String,
    pub pii_kinds: Vec<String>,
    /// "respond" or "block".
    pub action: String,
    pub safety: Option<serde_json::Value>,
    /// "pattern", "llm", "blocked" or "failed".
    pub source: String,
    pub pattern_id: Option<i64>,
    pub usage_id: Option<i64>,
    pub reply: String,
    pub verdict: Option<serde_json::Value>,
    pub trace: Vec<String>,
}

impl Store {
    pub fn save_chat(&mut self, c: &NewChat) -> Result<i64, StoreError> {
        let json = |v: &serde_json::Value| v.to_string();
        self.transact(|tx| {
            Ok(tx.one::<i64>(
                "INSERT INTO chat_exchanges (conversation_id, character, user_masked,
                original_content_hash, pii_kinds, action, safety, source, pattern_id, usage_id,
                reply, verdict, trace, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14) RETURNING id",
                p![
                    c.conversation_id,
                    c.character,
                    c.user_masked,
                    c.original_content_hash,
                    serde_json::to_string(&c.pii_kinds).unwrap_or_else(|_| "[]".into()),
                    c.action,
                    c.safety.as_ref().map(json),
                    c.source,
                    c.pattern_id,
                    c.usage_id,
                    c.reply,
                    c.verdict.as_ref().map(json),
                    serde_json::to_string(&c.trace).unwrap_or_else(|_| "[]".into()),
                    super::time::now_iso(),
                ],
            )?)
        })
    }

    pub fn set_chat_thumb(&mut self, id: i64, up: bool) -> Result<(), StoreError> {
        let n = self.transact(|tx| {
            Ok(tx.execute(
                "UPDATE chat_exchanges SET thumb = ?1 WHERE id = ?2",
                p![if up { 1i64 } else { -1 }, id],
            )?)
        })?;
        if n == 0 {
            return Err(StoreError::Invalid(format!("no chat exchange {id}")));
        }
        Ok(())
    }
}
