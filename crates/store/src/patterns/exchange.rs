//! Pattern files (`kakeai patterns import` / `export`): JSON Lines, one pattern per line, with
//! the seed's column names. Import is all or nothing: every line is checked, and a duplicate
//! (the seed's UNIQUE rule, against the database or an earlier line) is reported by line.

use crate::store::sql::Db;
use serde::{Deserialize, Serialize};

use super::carry::{self, UsageSummary};
use super::logline::{LineError, json_error, key_col};
use super::{Counts, NewPattern, Pattern, PatternError, ResponseType, atomic, db};

/// One line of a pattern file. Counters may be left out (0). The derived fields `list` prints
/// (pattern_id, success_rate, like_rate, score, rank …) are accepted and ignored, so a `list`
/// line can be re-imported; any other unknown field is an error (a misspelt column must not
/// be dropped silently).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PatternRecord {
    pub character: String,
    pub user_message_type: String,
    pub user_message_example: String,
    pub bot_response: String,
    pub bot_response_type: String,
    #[serde(default)]
    pub used_count: u32,
    #[serde(default)]
    pub success_count: u32,
    #[serde(default)]
    pub failure_count: u32,
    #[serde(default)]
    pub like_count: u32,
    #[serde(default)]
    pub dislike_count: u32,
    #[serde(default, deserialize_with = "flag")]
    pub is_counterfactual: bool,
    /// The usage log's share of the score (prowrestling rate, reaction time), so a round trip
    /// keeps every score and rank (issue 16 §4). Absent: no history.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<UsageSummary>,
    #[serde(default, skip_serializing)]
    pattern_id: Option<serde_json::Value>,
    #[serde(default, skip_serializing)]
    success_rate: Option<serde_json::Value>,
    #[serde(default, skip_serializing)]
    like_rate: Option<serde_json::Value>,
    #[serde(default, skip_serializing)]
    prowrestling_rate: Option<serde_json::Value>,
    #[serde(default, skip_serializing)]
    avg_reaction_time: Option<serde_json::Value>,
    #[serde(default, skip_serializing)]
    confidence: Option<serde_json::Value>,
    #[serde(default, skip_serializing)]
    score: Option<serde_json::Value>,
    #[serde(default, skip_serializing)]
    rank: Option<serde_json::Value>,
    #[serde(default, skip_serializing)]
    created_at: Option<serde_json::Value>,
    #[serde(default, skip_serializing)]
    last_used_at: Option<serde_json::Value>,
    #[serde(default, skip_serializing)]
    updated_at: Option<serde_json::Value>,
}

/// SQLite's BOOLEAN is 0/1: both spellings are read.
fn flag<'de, D: serde::Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    match serde_json::Value::deserialize(d)? {
        serde_json::Value::Bool(b) => Ok(b),
        serde_json::Value::Number(n) if n.as_u64() == Some(0) => Ok(false),
        serde_json::Value::Number(n) if n.as_u64() == Some(1) => Ok(true),
        serde_json::Value::Null => Ok(false),
        other => Err(serde::de::Error::custom(format!(
            "is_counterfactual must be true/false or 1/0, not {other}"
        ))),
    }
}

impl From<&Pattern> for PatternRecord {
    fn from(p: &Pattern) -> PatternRecord {
        PatternRecord {
            character: p.character.as_str().into(),
            user_message_type: p.user_message_type.clone(),
            user_message_example: p.user_message_example.clone(),
            bot_response: p.bot_response.clone(),
            bot_response_type: p.bot_response_type.as_str().into(),
            used_count: p.used_count,
            success_count: p.success_count,
            failure_count: p.failure_count,
            like_count: p.like_count,
            dislike_count: p.dislike_count,
            is_counterfactual: p.is_counterfactual,
            usage: None,
            pattern_id: None,
            success_rate: None,
            like_rate: None,
            prowrestling_rate: None,
            avg_reaction_time: None,
            confidence: None,
            score: None,
            rank: None,
            created_at: None,
            last_used_at: None,
            updated_at: None,
        }
    }
}

impl PatternRecord {
    pub fn to_new(&self) -> Result<NewPattern, PatternError> {
        Ok(NewPattern {
            character: Some(super::Character::parse_field("character", &self.character)?),
            user_message_type: self.user_message_type.clone(),
            user_message_example: self.user_message_example.clone(),
            bot_response: self.bot_response.clone(),
            bot_response_type: Some(ResponseType::parse_field(
                "bot_response_type",
                &self.bot_response_type,
            )?),
            counts: Counts {
                used_count: self.used_count,
                success_count: self.success_count,
                failure_count: self.failure_count,
                like_count: self.like_count,
                dislike_count: self.dislike_count,
            },
            is_counterfactual: self.is_counterfactual,
        })
    }
}

/// A parsed line: its number, the pattern and its usage history.
pub type ImportLine = (usize, NewPattern, Option<UsageSummary>);

/// Parses and validates one line; `Ok(None)` for a blank one.
pub fn parse_line(
    line_no: usize,
    line: &str,
) -> Result<Option<(NewPattern, Option<UsageSummary>)>, LineError> {
    let t = line.trim_end_matches(['\r', '\n']);
    if t.trim().is_empty() {
        return Ok(None);
    }
    let rec: PatternRecord = serde_json::from_str(t).map_err(|e| json_error(line_no, t, &e))?;
    let checked = rec
        .to_new()
        .and_then(|n| n.validate().map(|_| n))
        .and_then(|n| match &rec.usage {
            Some(u) => u.validate().map(|_| n),
            None => Ok(n),
        });
    checked
        .map(|n| Some((n, rec.usage)))
        .map_err(|e| LineError {
            line: line_no,
            col: match &e {
                PatternError::Invalid { field, .. } => key_col(t, field).or(Some(1)),
                _ => Some(1),
            },
            message: e.to_string(),
        })
}

/// Parses every line of a pattern file; all bad lines are reported.
pub fn parse_file(text: &str) -> Result<Vec<ImportLine>, Vec<LineError>> {
    let mut ok = Vec::new();
    let mut bad = Vec::new();
    for (i, line) in text.lines().enumerate() {
        match parse_line(i + 1, line) {
            Ok(Some((p, u))) => ok.push((i + 1, p, u)),
            Ok(None) => {}
            Err(e) => bad.push(e),
        }
    }
    if bad.is_empty() { Ok(ok) } else { Err(bad) }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ImportReport {
    pub imported: Vec<i64>,
    /// (line, the pattern it duplicates) — already in the database or earlier in the file.
    pub duplicates: Vec<(usize, i64)>,
    /// Whether anything was written.
    pub written: bool,
}

/// Imports parsed lines in one savepoint. With duplicates and `skip_duplicates` false nothing
/// is written and every duplicate is reported; with it true the others are imported.
pub fn import(
    db: Db<'_>,
    lines: &[ImportLine],
    skip_duplicates: bool,
) -> Result<ImportReport, PatternError> {
    let mut report = ImportReport {
        imported: Vec::new(),
        duplicates: Vec::new(),
        written: false,
    };
    let done = atomic(db, |conn| {
        // From the start again when PostgreSQL runs the transaction a second time.
        report.imported.clear();
        report.duplicates.clear();
        for (line, p, usage) in lines {
            match db::add(conn, p) {
                Ok(pat) => {
                    if let Some(u) = usage {
                        carry::restore(conn, &pat, u)?;
                    }
                    report.imported.push(pat.pattern_id)
                }
                Err(PatternError::Duplicate { existing }) => {
                    report.duplicates.push((*line, existing));
                }
                Err(e) => return Err(e),
            }
        }
        if !report.duplicates.is_empty() && !skip_duplicates {
            // Rolls the savepoint back: a file with duplicates changes nothing.
            return Err(PatternError::Duplicate {
                existing: report.duplicates[0].1,
            });
        }
        Ok(())
    });
    match done {
        Ok(()) => {
            report.written = !report.imported.is_empty();
            Ok(report)
        }
        Err(PatternError::Duplicate { .. }) if !report.duplicates.is_empty() => {
            report.imported.clear();
            Ok(report)
        }
        Err(e) => Err(e),
    }
}

/// Every pattern as a file line, by id, with its usage history summed up.
pub fn export(conn: Db<'_>) -> Result<Vec<PatternRecord>, PatternError> {
    let stats = db::log_stats(conn, None)?;
    Ok(db::list(conn, None)?
        .iter()
        .map(|p| {
            let mut r = PatternRecord::from(p);
            r.usage = stats.get(&p.pattern_id).and_then(UsageSummary::of);
            r
        })
        .collect())
}
