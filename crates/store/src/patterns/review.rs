//! The review side of counterfactuals: the drafts table (one draft per reply type and
//! dropout) and accepting a (possibly edited) draft as a pattern with is_counterfactual = 1.

use crate::p;
use crate::store::sql::{Db, Optional};
use serde::Serialize;

use super::counterfactual::Drafts;
use super::dropouts::{self, Dropout};
use super::stamp::{self, Millis};
use super::{Character, NewPattern, Pattern, PatternError, ResponseType, atomic, db};

/// Replaces the stored drafts of a dropout (accepted ones are kept as they were accepted).
pub fn save_drafts(
    db: Db<'_>,
    dropout_id: i64,
    drafts: &Drafts,
    model: Option<&str>,
) -> Result<(), PatternError> {
    atomic(db, |conn| {
        let now = stamp::iso(stamp::now_ms());
        for d in &drafts.drafts {
            conn.execute(
                "INSERT INTO counterfactual_drafts (dropout_id, bot_response_type, text,
                     user_message_type, model, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                 ON CONFLICT (dropout_id, bot_response_type) DO UPDATE
                 SET text = excluded.text, user_message_type = excluded.user_message_type,
                     model = excluded.model, created_at = excluded.created_at
                 WHERE counterfactual_drafts.pattern_id IS NULL",
                p![
                    dropout_id,
                    d.bot_response_type.as_str(),
                    d.text,
                    drafts.user_message_type,
                    model,
                    now
                ],
            )?;
        }
        Ok(())
    })
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StoredDraft {
    pub bot_response_type: ResponseType,
    pub text: String,
    pub user_message_type: Option<String>,
    pub model: Option<String>,
    pub created_at: String,
    /// The pattern it became, once accepted.
    pub pattern_id: Option<i64>,
}

pub fn stored_drafts(conn: Db<'_>, dropout_id: i64) -> Result<Vec<StoredDraft>, PatternError> {
    let rows = conn.query_map(
        "SELECT bot_response_type, text, user_message_type, model, created_at, pattern_id
         FROM counterfactual_drafts WHERE dropout_id = ?1",
        p![dropout_id],
        |r| {
            let t: String = r.get(0)?;
            Ok((
                ResponseType::parse(&t),
                r.get(1)?,
                r.get(2)?,
                r.get(3)?,
                r.get(4)?,
                r.get(5)?,
            ))
        },
    )?;
    let mut out: Vec<StoredDraft> = rows
        .into_iter()
        .filter_map(|(t, text, kind, model, created_at, pattern_id)| {
            Some(StoredDraft {
                bot_response_type: t?,
                text,
                user_message_type: kind,
                model,
                created_at,
                pattern_id,
            })
        })
        .collect();
    out.sort_by_key(|d| d.bot_response_type);
    Ok(out)
}

/// A reviewer's choice for one dropout.
#[derive(Debug, Clone)]
pub struct Accept<'a> {
    pub dropout_id: i64,
    pub bot_response_type: ResponseType,
    /// The edited reply; `None` takes the stored draft of that type.
    pub text: Option<&'a str>,
    /// `None`: the bot line's character.
    pub character: Option<Character>,
    /// `None`: the type the LLM suggested with its drafts.
    pub user_message_type: Option<&'a str>,
    pub window_secs: i64,
    pub as_of: Millis,
}

/// Stores the chosen (or edited) reply as a pattern with is_counterfactual = 1; its example is
/// the user's (masked) line before the dropout.
pub fn accept(conn: Db<'_>, a: &Accept) -> Result<Pattern, PatternError> {
    accept_checked(conn, a, &|_, _| Ok(()))
}

/// A check on the reply before it is stored: `Err(why)` refuses it (nothing is written).
pub type ReplyCheck<'a> = &'a dyn Fn(Option<Character>, &str) -> Result<(), String>;

/// [`accept`], with `check` run on the chosen reply (and its character) before anything is
/// written; a refusal is `PatternError::Invalid` on `bot_response`.
pub fn accept_checked(
    db: Db<'_>,
    a: &Accept,
    check: ReplyCheck<'_>,
) -> Result<Pattern, PatternError> {
    atomic(db, |conn| {
        let d: Dropout = dropouts::dropout(conn, a.dropout_id, a.window_secs, a.as_of)?;
        let stored = stored_drafts(conn, a.dropout_id)?;
        let draft = stored
            .iter()
            .find(|s| s.bot_response_type == a.bot_response_type);
        let text = match (a.text, draft) {
            (Some(t), _) => t.to_string(),
            (None, Some(s)) => s.text.clone(),
            (None, None) => {
                return Err(PatternError::invalid(
                    "text",
                    format!(
                        "no {} draft for dropout {}; draft first or give the reply text",
                        a.bot_response_type, a.dropout_id
                    ),
                ));
            }
        };
        let character = match a.character.or(d.character) {
            Some(c) => Some(c),
            None => d
                .pattern_id
                .map(|p| db::get(conn, p).map(|p| p.character))
                .transpose()?,
        };
        check(character, &text).map_err(|why| PatternError::invalid("bot_response", why))?;
        let kind = a
            .user_message_type
            .map(str::to_string)
            .or_else(|| stored.iter().find_map(|s| s.user_message_type.clone()));
        let example = d.user_text.clone().ok_or_else(|| {
            PatternError::invalid(
                "user_message_example",
                format!("dropout {} has no user message before it", a.dropout_id),
            )
        })?;
        let pattern = db::add(
            conn,
            &NewPattern {
                character,
                user_message_type: kind.unwrap_or_default(),
                user_message_example: example,
                bot_response: text.clone(),
                bot_response_type: Some(a.bot_response_type),
                counts: Default::default(),
                is_counterfactual: true,
            },
        )?;
        let existing: Option<i64> = conn
            .query_row(
                "SELECT 1 FROM counterfactual_drafts
                 WHERE dropout_id = ?1 AND bot_response_type = ?2",
                p![a.dropout_id, a.bot_response_type.as_str()],
                |r| r.get(0),
            )
            .optional()?;
        let now = stamp::iso(stamp::now_ms());
        if existing.is_some() {
            conn.execute(
                "UPDATE counterfactual_drafts SET text = ?3, pattern_id = ?4
                 WHERE dropout_id = ?1 AND bot_response_type = ?2",
                p![
                    a.dropout_id,
                    a.bot_response_type.as_str(),
                    pattern.bot_response,
                    pattern.pattern_id
                ],
            )?;
        } else {
            conn.execute(
                "INSERT INTO counterfactual_drafts (dropout_id, bot_response_type, text,
                     user_message_type, model, created_at, pattern_id)
                 VALUES (?1, ?2, ?3, ?4, NULL, ?5, ?6)",
                p![
                    a.dropout_id,
                    a.bot_response_type.as_str(),
                    pattern.bot_response,
                    pattern.user_message_type,
                    now,
                    pattern.pattern_id
                ],
            )?;
        }
        Ok(pattern)
    })
}
