//! `kakeai ingest`: parsed conversation logs (see `logline`) into the store, with every text
//! PII-masked, pattern uses logged and their outcomes resolved from the timing of the user's
//! next message (seed 000 §7 Phase 1). Every line is checked before anything is written (a
//! problem writes nothing); writing goes in short batched transactions.

use std::collections::{BTreeSet, HashMap};

use crate::p;
use crate::store::sql::{Db, DbError, Optional};
use serde::Serialize;

pub use super::logline::{LineError, LogMessage, Role, parse_line, parse_log};
use super::stamp::{self, Millis};
use super::{Character, NewUse, Observation, PatternError, Resolution, atomic, db, usage};
use crate::safety::pii;

#[derive(Debug, Clone)]
pub struct IngestOptions {
    pub window_secs: i64,
    /// The log is taken as complete up to this instant: silence after a bot line counts as a
    /// dropout only once the window has closed before it.
    pub as_of: Millis,
    /// Written with each message (e.g. the file name) so a row can be traced back.
    pub source: String,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct IngestReport {
    pub messages: usize,
    pub duplicates: usize,
    pub conversations: usize,
    pub masked: usize,
    pub uses: usize,
    pub successes: usize,
    pub failures: usize,
    pub pending: usize,
    pub dropouts: usize,
}

#[derive(Debug, thiserror::Error)]
pub enum IngestError {
    #[error("line {line}: {message}")]
    Line { line: usize, message: String },
    #[error(transparent)]
    Pattern(#[from] PatternError),
}

impl From<rusqlite::Error> for IngestError {
    fn from(e: rusqlite::Error) -> Self {
        IngestError::Pattern(PatternError::Sql(e))
    }
}

impl From<DbError> for IngestError {
    fn from(e: DbError) -> Self {
        IngestError::Pattern(PatternError::Db(e))
    }
}

impl crate::store::write::BusyCheck for IngestError {
    fn is_busy(&self) -> bool {
        match self {
            IngestError::Pattern(e) => e.is_busy(),
            IngestError::Line { .. } => false,
        }
    }
}

/// An id as stored: see [`pii::pseudonym`] (a keyed pseudonym when it looks personal).
pub fn pseudonym(id: &str) -> Result<String, pii::KeyError> {
    pii::pseudonym(id)
}

impl From<pii::KeyError> for IngestError {
    fn from(e: pii::KeyError) -> Self {
        IngestError::Pattern(PatternError::Key(e))
    }
}

/// Messages per write transaction: each batch holds the store's write lock only briefly, so a
/// live run writing the same database waits milliseconds, not the whole ingest.
pub const BATCH: usize = 500;

/// Checks every message first (nothing is written when one is wrong), then writes them in
/// batches of [`BATCH`], each its own committed transaction; then logs the pattern uses of the
/// new bot lines and resolves their conversations, batch by batch again. Every step is keyed so
/// that a re-run after a crash (or of the same file) adds nothing twice and finishes the work.
pub fn ingest(
    conn: Db<'_>,
    messages: &[LogMessage],
    opts: &IngestOptions,
) -> Result<IngestReport, IngestError> {
    ingest_with(conn, messages, opts, &mut |_| {})
}

/// [`ingest`], telling `written` how many messages each committed batch held (for progress).
pub fn ingest_with(
    conn: Db<'_>,
    messages: &[LogMessage],
    opts: &IngestOptions,
    written: &mut dyn FnMut(usize),
) -> Result<IngestReport, IngestError> {
    ingest_inner(conn, messages, None, opts, written)
}

/// [`ingest_with`] storing `masked[i]` for `messages[i]` (masked beforehand: the rules, and
/// for user lines the model's second opinion) instead of masking each text by the rules.
/// `masked` must hold one entry per message; otherwise nothing is written.
pub fn ingest_masked(
    conn: Db<'_>,
    messages: &[LogMessage],
    masked: &[pii::Masked],
    opts: &IngestOptions,
    written: &mut dyn FnMut(usize),
) -> Result<IngestReport, IngestError> {
    if masked.len() != messages.len() {
        return Err(PatternError::invalid(
            "masked",
            format!(
                "{} masked texts for {} messages",
                masked.len(),
                messages.len()
            ),
        )
        .into());
    }
    ingest_inner(conn, messages, Some(masked), opts, written)
}

/// The read-only checks [`ingest`] makes before it writes (each conversation belongs to one
/// user, each pattern exists and is the line's character's), alone: a caller about to spend
/// time on the messages first learns whether the store would take them.
pub fn validate(conn: Db<'_>, messages: &[LogMessage]) -> Result<(), IngestError> {
    check(conn, messages, &mut Pseudonyms::default()).map(|_| ())
}

fn ingest_inner(
    conn: Db<'_>,
    messages: &[LogMessage],
    pre: Option<&[pii::Masked]>,
    opts: &IngestOptions,
    written: &mut dyn FnMut(usize),
) -> Result<IngestReport, IngestError> {
    if opts.window_secs <= 0 {
        return Err(PatternError::invalid("window", "must be at least one second").into());
    }
    let mut ids = Pseudonyms::default();
    let characters = check(conn, messages, &mut ids)?;
    let mut report = IngestReport::default();
    let mut touched = BTreeSet::new();
    let now = stamp::iso(stamp::now_ms());
    let mut first_new: Option<i64> = None;
    let key = pii::installation_key()?;
    for (n, (chunk, chars)) in messages
        .chunks(BATCH)
        .zip(characters.chunks(BATCH))
        .enumerate()
    {
        let pre = pre.map(|p| &p[n * BATCH..n * BATCH + chunk.len()]);
        // What the batch wrote, kept only once it committed (PostgreSQL may run it twice).
        let batch = atomic(conn, |conn| {
            let rows = Rows {
                messages: chunk,
                characters: chars,
                masked: pre,
            };
            write_batch(conn, &rows, &mut ids, &now, key, &opts.source)
        })?;
        report.duplicates += batch.duplicates;
        report.messages += batch.messages;
        report.masked += batch.masked;
        if let Some(id) = batch.first {
            first_new.get_or_insert(id);
        }
        touched.extend(batch.touched);
        written(chunk.len());
    }
    log_uses(conn, first_new, &mut touched, &mut report)?;
    report.conversations = touched.len();
    let touched: Vec<String> = touched.into_iter().collect();
    for convs in touched.chunks(BATCH) {
        let part = atomic(conn, |conn| -> Result<IngestReport, IngestError> {
            let mut part = IngestReport::default();
            for conv in convs {
                resolve_conversation(conn, conv, opts, &mut part)?;
                part.dropouts +=
                    super::dropouts::in_conversation(conn, conv, opts.window_secs, opts.as_of)?
                        .len();
            }
            Ok(part)
        })?;
        report.successes += part.successes;
        report.failures += part.failures;
        report.pending += part.pending;
        report.dropouts += part.dropouts;
    }
    Ok(report)
}

/// One batch's messages, their characters and (when masked beforehand) their masked texts.
struct Rows<'a> {
    messages: &'a [LogMessage],
    characters: &'a [Option<Character>],
    masked: Option<&'a [pii::Masked]>,
}

/// Writes one batch's conversations and messages (a repeat of a stored message is counted,
/// not written), inside the caller's transaction.
fn write_batch(
    conn: Db<'_>,
    rows: &Rows<'_>,
    ids: &mut Pseudonyms,
    now: &str,
    key: &pii::DigestKey,
    source: &str,
) -> Result<Batch, IngestError> {
    let mut b = Batch::default();
    let kind = conn.kind();
    let upsert = format!(
        "INSERT INTO conversations (conversation_id, user_id, first_at, last_at,
                 ingested_at) VALUES (?1, ?2, ?3, ?3, ?4)
             ON CONFLICT (conversation_id) DO UPDATE SET
                 first_at = {}, last_at = {}",
        kind.least(
            &kind.bytewise("conversations.first_at"),
            &kind.bytewise("excluded.first_at")
        ),
        kind.greatest(
            &kind.bytewise("conversations.last_at"),
            &kind.bytewise("excluded.last_at")
        ),
    );
    for (j, (m, character)) in rows.messages.iter().zip(rows.characters).enumerate() {
        let (conv, user) = (ids.of(&m.conversation_id)?, ids.of(&m.user_id)?);
        let at = stamp::iso(m.at);
        conn.execute(&upsert, p![conv, user, at, now])?;
        let masked = match rows.masked {
            Some(p) => p[j].clone(),
            None => pii::shared().mask(&m.text),
        };
        let new_id: Option<i64> = conn
            .query_row(
                "INSERT INTO conversation_messages (conversation_id, role, text,
                     original_sha256, pii_detected, at_ms, at, character, pattern_id, source)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
                 ON CONFLICT (conversation_id, role, at_ms, original_sha256) DO NOTHING
                 RETURNING message_id",
                p![
                    conv,
                    m.role.as_str(),
                    masked.masked_text,
                    masked.digest(key),
                    masked.pii_detected,
                    m.at,
                    at,
                    character.map(Character::as_str),
                    m.pattern_id,
                    format!("{source}:{}", m.line)
                ],
                |r| r.get(0),
            )
            .optional()?;
        let Some(id) = new_id else {
            b.duplicates += 1;
            continue;
        };
        b.first.get_or_insert(id);
        b.messages += 1;
        b.masked += usize::from(masked.pii_detected);
        b.touched.push(conv);
    }
    Ok(b)
}

/// What one batch of messages wrote.
#[derive(Default)]
struct Batch {
    duplicates: usize,
    messages: usize,
    masked: usize,
    /// The first new message's id.
    first: Option<i64>,
    touched: Vec<String>,
}

/// Ids as stored, each looked up once (the PII check behind [`pseudonym`] is not free).
#[derive(Default)]
struct Pseudonyms(HashMap<String, String>);

impl Pseudonyms {
    fn of(&mut self, id: &str) -> Result<String, pii::KeyError> {
        if let Some(p) = self.0.get(id) {
            return Ok(p.clone());
        }
        let p = pseudonym(id)?;
        self.0.insert(id.to_string(), p.clone());
        Ok(p)
    }
}

/// Read-only pass before any write: each conversation belongs to one user (in the file and in
/// the store), each pattern exists and is the line's character's. Returns each message's
/// character (the pattern's, when it has one).
fn check(
    conn: Db<'_>,
    messages: &[LogMessage],
    ids: &mut Pseudonyms,
) -> Result<Vec<Option<Character>>, IngestError> {
    let mut owners: HashMap<String, String> = HashMap::new();
    let mut patterns: HashMap<i64, Character> = HashMap::new();
    let mut out = Vec::with_capacity(messages.len());
    for m in messages {
        let line_err = |message: String| IngestError::Line {
            line: m.line,
            message,
        };
        let (conv, user) = (ids.of(&m.conversation_id)?, ids.of(&m.user_id)?);
        let owner = match owners.get(&conv) {
            Some(o) => Some(o.clone()),
            None => conn
                .query_row(
                    "SELECT user_id FROM conversations WHERE conversation_id = ?1",
                    p![conv],
                    |r| r.get::<String>(0),
                )
                .optional()?,
        };
        match owner {
            Some(o) if o != user => {
                return Err(line_err(format!(
                    "conversation {conv:?} belongs to user {o:?}, not {user:?}"
                )));
            }
            _ => {
                owners.insert(conv, user);
            }
        }
        let mut character = m.character;
        if let Some(pid) = m.pattern_id {
            let pc = match patterns.get(&pid) {
                Some(c) => *c,
                None => {
                    let c = db::get(conn, pid)
                        .map_err(|e| line_err(e.to_string()))?
                        .character;
                    patterns.insert(pid, c);
                    c
                }
            };
            if character.is_some_and(|c| c != pc) {
                return Err(line_err(format!(
                    "pattern {pid} is {pc}'s, but the line says {}",
                    m.character.map(Character::as_str).unwrap_or("")
                )));
            }
            character = Some(pc);
        }
        out.push(character);
    }
    Ok(out)
}

/// Logs a use for every bot line from a pattern that has none yet, from message `from` on (the
/// first one this ingest wrote; a re-run after a crash finds the ones it left, since they have
/// no log id), in batches.
fn log_uses(
    conn: Db<'_>,
    from: Option<i64>,
    touched: &mut BTreeSet<String>,
    report: &mut IngestReport,
) -> Result<(), IngestError> {
    // Lines a crashed ingest wrote but never logged come before `from`: start at the oldest.
    let orphan: Option<i64> = conn.one(
        "SELECT MIN(message_id) FROM conversation_messages
         WHERE pattern_id IS NOT NULL AND log_id IS NULL",
        p![],
    )?;
    let Some(mut after) = orphan.or(from).map(|id| id - 1) else {
        return Ok(());
    };
    loop {
        let batch = atomic(
            conn,
            |conn| -> Result<Vec<(i64, i64, String)>, IngestError> {
                let batch: Vec<(i64, i64, String)> = conn.query_map(
                    "SELECT message_id, pattern_id, conversation_id FROM conversation_messages
                 WHERE message_id > ?1 AND pattern_id IS NOT NULL AND log_id IS NULL
                 ORDER BY message_id LIMIT ?2",
                    p![after, BATCH as i64],
                    |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
                )?;
                for (message_id, pattern_id, conv) in &batch {
                    log_one(conn, *message_id, *pattern_id, conv)?;
                }
                Ok(batch)
            },
        )?;
        for (message_id, _, conv) in &batch {
            report.uses += 1;
            touched.insert(conv.clone());
            after = *message_id;
        }
        if batch.len() < BATCH {
            return Ok(());
        }
    }
}

fn log_one(conn: Db<'_>, message_id: i64, pattern_id: i64, conv: &str) -> Result<(), IngestError> {
    let (user_message, bot_text, at, user): (Option<String>, String, i64, String) = conn
        .query_row(
            "SELECT (SELECT u.text FROM conversation_messages u
                     WHERE u.conversation_id = b.conversation_id AND u.role = 'user'
                       AND (u.at_ms < b.at_ms OR (u.at_ms = b.at_ms AND u.message_id < b.message_id))
                     ORDER BY u.at_ms DESC, u.message_id DESC LIMIT 1),
                    b.text, b.at_ms,
                    (SELECT c.user_id FROM conversations c WHERE c.conversation_id = b.conversation_id)
             FROM conversation_messages b WHERE b.message_id = ?1",
            p![message_id],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )?;
    let log_id = usage::record_use(
        conn,
        &NewUse {
            pattern_id,
            conversation_id: Some(conv.to_string()),
            user_id: Some(user),
            user_message,
            bot_response: Some(bot_text),
            character: None,
            at,
        },
    )?;
    conn.execute(
        "UPDATE conversation_messages SET log_id = ?2 WHERE message_id = ?1",
        p![message_id, log_id],
    )?;
    Ok(())
}

/// A message as outcome resolution sees it.
struct Msg {
    role: Role,
    at: Millis,
    log_id: Option<i64>,
}

/// Resolves the conversation's open pattern uses and marks banter that went on since.
fn resolve_conversation(
    conn: Db<'_>,
    conv: &str,
    opts: &IngestOptions,
    report: &mut IngestReport,
) -> Result<(), PatternError> {
    let msgs: Vec<Msg> = conn.query_map(
        "SELECT role, at_ms, log_id FROM conversation_messages WHERE conversation_id = ?1
         ORDER BY at_ms, message_id",
        p![conv],
        |r| {
            let role: String = r.get(0)?;
            Ok(Msg {
                role: if role == "user" {
                    Role::User
                } else {
                    Role::Bot
                },
                at: r.get(1)?,
                log_id: r.get(2)?,
            })
        },
    )?;
    let window_ms = opts.window_secs.saturating_mul(1000);
    for (i, m) in msgs.iter().enumerate() {
        let Some(log_id) = m.log_id else { continue };
        let state: Option<String> = conn.query_row(
            "SELECT user_reaction FROM prowrestling_usage_log WHERE log_id = ?1",
            p![log_id],
            |r| r.get(0),
        )?;
        let obs = observe(&msgs, i, window_ms, opts.as_of);
        match (state.as_deref(), obs) {
            (None, obs) => match usage::resolve_use(conn, log_id, obs, opts.window_secs)? {
                Resolution::Success { .. } => report.successes += 1,
                Resolution::Failure => report.failures += 1,
                Resolution::Pending => report.pending += 1,
            },
            (
                Some("replied"),
                Observation::Replied {
                    continued: true, ..
                },
            ) => {
                usage::mark_continued(conn, log_id)?;
            }
            _ => {}
        }
    }
    Ok(())
}

/// What followed message `i`: the next user message, and whether the user spoke at least twice
/// after it with no silence longer than the window between consecutive messages.
fn observe(msgs: &[Msg], i: usize, window_ms: i64, as_of: Millis) -> Observation {
    let Some(first) = msgs[i + 1..].iter().find(|m| m.role == Role::User) else {
        return Observation::Silent { as_of };
    };
    let mut prev = msgs[i].at;
    let mut users = 0;
    for m in &msgs[i + 1..] {
        if m.at - prev > window_ms {
            break;
        }
        prev = m.at;
        if m.role == Role::User {
            users += 1;
            if users >= 2 {
                break;
            }
        }
    }
    Observation::Replied {
        at: first.at,
        continued: users >= 2,
    }
}

/// Resolves every conversation that still has an open pattern use, as of `opts.as_of`: uses
/// whose window has closed in silence become failures. Workbench chats call this when they
/// start, so a user who never wrote again still counts against the pattern.
pub fn resolve_open(db: Db<'_>, opts: &IngestOptions) -> Result<IngestReport, PatternError> {
    atomic(db, |conn| {
        let convs: Vec<String> = conn.query_map(
            &format!(
                "SELECT DISTINCT {} FROM conversation_messages m
                 JOIN prowrestling_usage_log l ON l.log_id = m.log_id
                 WHERE l.user_reaction IS NULL ORDER BY 1",
                conn.kind().bytewise("m.conversation_id")
            ),
            p![],
            |r| r.get(0),
        )?;
        let mut report = IngestReport {
            conversations: convs.len(),
            ..IngestReport::default()
        };
        for conv in &convs {
            resolve_conversation(conn, conv, opts, &mut report)?;
        }
        Ok(report)
    })
}

/// One live message (a workbench chat) written as a conversation-log line: the same masking,
/// use logging and outcome resolution as `kakeai ingest`. Returns the report and, for a bot
/// line from a pattern, the usage-log id its 👍/👎 go to.
pub fn log_live(
    conn: Db<'_>,
    message: LogMessage,
    opts: &IngestOptions,
) -> Result<(IngestReport, Option<i64>), IngestError> {
    let conv = pseudonym(&message.conversation_id)?;
    let (role, at) = (message.role.as_str(), message.at);
    let report = ingest(conn, std::slice::from_ref(&message), opts)?;
    let log_id: Option<i64> = conn
        .query_row(
            "SELECT log_id FROM conversation_messages WHERE conversation_id = ?1 AND role = ?2
               AND at_ms = ?3 ORDER BY message_id DESC LIMIT 1",
            p![conv, role, at],
            |r| r.get(0),
        )
        .optional()?
        .flatten();
    Ok((report, log_id))
}
