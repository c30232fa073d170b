//! Pairwise review of a paired comparison (issue 24 §2): for each compared turn a reviewer says
//! A better, B better or tie, with a reason. Marks are append-only; the latest per reviewer and
//! turn is in force. The tally sits beside the Director's better/same/worse in the compare
//! summary.

use std::collections::BTreeMap;

use crate::p;
use crate::store::sql::{Db, Optional};
use serde::Serialize;

use super::db::Item;
use super::{Queue, QueueError};
use crate::store::Store;

/// A reviewer's preference on one compared turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Choice {
    A,
    B,
    #[serde(rename = "tie")]
    Tie,
}

impl Choice {
    pub fn as_str(self) -> &'static str {
        match self {
            Choice::A => "A",
            Choice::B => "B",
            Choice::Tie => "tie",
        }
    }

    /// `A`, `B` or `tie` (any case); None otherwise — never a guess.
    pub fn parse(s: &str) -> Option<Choice> {
        match s.trim().to_ascii_lowercase().as_str() {
            "a" => Some(Choice::A),
            "b" => Some(Choice::B),
            "tie" | "=" => Some(Choice::Tie),
            _ => None,
        }
    }
}

/// Reviewers' preferences over a comparison (the marks in force).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Tally {
    pub a: usize,
    pub b: usize,
    pub tie: usize,
    /// Distinct reviewers with a mark in force.
    pub reviewers: usize,
    /// Turns with at least one mark.
    pub turns: usize,
}

impl Tally {
    /// `reviewers: A better 3 · B better 5 · tie 1 (2 reviewers, 6 turns)`.
    pub fn line(&self) -> String {
        format!(
            "reviewers: A better {} · B better {} · tie {} ({} reviewer{}, {} turn{})",
            self.a,
            self.b,
            self.tie,
            self.reviewers,
            if self.reviewers == 1 { "" } else { "s" },
            self.turns,
            if self.turns == 1 { "" } else { "s" }
        )
    }
}

/// Refuses anything but a stored paired comparison.
pub fn require_paired(conn: Db<'_>, comparison: i64) -> Result<(), QueueError> {
    let kind: Option<String> = conn
        .one("SELECT kind FROM comparisons WHERE id = ?1", p![comparison])
        .optional()?;
    match kind.as_deref() {
        Some("paired") => Ok(()),
        Some(k) => Err(QueueError::Invalid(format!(
            "comparison {comparison} is {k}: pairwise review needs a paired comparison"
        ))),
        None => Err(QueueError::Invalid(format!(
            "no comparison with id {comparison} (see `kakeai compare --show`)"
        ))),
    }
}

/// The comparison's turns (one sister with --sister) become the queue's items.
pub(super) fn refresh(conn: Db<'_>, q: &Queue, comparison: i64) -> Result<usize, QueueError> {
    Ok(conn.execute(
        "INSERT INTO queue_items (queue_id, subject, turn, added_at)
         SELECT CAST(?1 AS BIGINT), comparison_id, turn, CAST(?2 AS TEXT) FROM comparison_turns
         WHERE comparison_id = ?3 AND (CAST(?4 AS TEXT) IS NULL OR speaker = ?4)
         ON CONFLICT DO NOTHING",
        p![
            q.id,
            crate::store::time::now_iso(),
            comparison,
            q.spec.filter.sister
        ],
    )?)
}

/// (item, reviewer, A|B|tie) for every pairwise mark in force.
pub(super) fn judged(
    conn: Db<'_>,
    comparison: i64,
) -> Result<Vec<(Item, String, String)>, QueueError> {
    Ok(in_force(conn, comparison)?
        .into_iter()
        .map(|((turn, who), c)| ((comparison, turn), who, c.as_str().to_string()))
        .collect())
}

/// (turn, reviewer) → the latest choice.
fn in_force(conn: Db<'_>, comparison: i64) -> Result<BTreeMap<(u32, String), Choice>, QueueError> {
    Ok(choices(conn, comparison)?
        .into_iter()
        .flat_map(|(turn, by)| by.into_iter().map(move |(who, (c, _))| ((turn, who), c)))
        .collect())
}

/// Reviewer → her latest choice on a turn and its reason.
pub type Choices = BTreeMap<String, (Choice, String)>;

/// Turn → each reviewer's latest choice and its reason (the marks in force).
pub fn choices(conn: Db<'_>, comparison: i64) -> Result<BTreeMap<u32, Choices>, QueueError> {
    let rows = conn.query_map(
        "SELECT turn, reviewer, choice, reason FROM pairwise_marks WHERE comparison_id = ?1
          ORDER BY id",
        p![comparison],
        |r| {
            Ok((
                r.get::<u32>(0)?,
                r.get::<String>(1)?,
                r.get::<String>(2)?,
                r.get::<Option<String>>(3)?,
            ))
        },
    )?;
    let mut out: BTreeMap<u32, Choices> = BTreeMap::new();
    for (turn, who, choice, reason) in rows {
        // The CHECK keeps other values out; one that got in anyway counts as nothing.
        if let Some(c) = Choice::parse(&choice) {
            out.entry(turn)
                .or_default()
                .insert(who, (c, reason.unwrap_or_default()));
        }
    }
    Ok(out)
}

/// Stores a reviewer's choice on one compared turn (acknowledged only after commit).
pub fn judge(
    store: &mut Store,
    comparison: i64,
    turn: u32,
    reviewer: &str,
    choice: Choice,
    reason: &str,
) -> Result<(), QueueError> {
    if reviewer.trim().is_empty() {
        return Err(QueueError::Invalid(
            "a pairwise mark needs your name: --reviewer NAME (or KAKEAI_REVIEWER)".into(),
        ));
    }
    let reviewer = &super::reviewer_name(reviewer)?;
    store.transact_with(|tx| {
        require_paired(tx, comparison)?;
        let known: Option<u32> = tx
            .one(
                "SELECT turn FROM comparison_turns WHERE comparison_id = ?1 AND turn = ?2",
                p![comparison, turn],
            )
            .optional()?;
        if known.is_none() {
            return Err(QueueError::Invalid(format!(
                "comparison {comparison} has no turn {turn}"
            )));
        }
        tx.execute(
            "INSERT INTO pairwise_marks (comparison_id, turn, reviewer, choice, reason, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            p![
                comparison,
                turn,
                reviewer.trim(),
                choice.as_str(),
                reason.trim(),
                crate::store::time::now_iso()
            ],
        )?;
        Ok(())
    })
}

/// The reviewers' preferences in force over a comparison.
pub fn tally(conn: Db<'_>, comparison: i64) -> Result<Tally, QueueError> {
    let marks = in_force(conn, comparison)?;
    let mut t = Tally::default();
    let mut who = std::collections::BTreeSet::new();
    let mut turns = std::collections::BTreeSet::new();
    for ((turn, reviewer), c) in marks {
        match c {
            Choice::A => t.a += 1,
            Choice::B => t.b += 1,
            Choice::Tie => t.tie += 1,
        }
        who.insert(reviewer);
        turns.insert(turn);
    }
    t.reviewers = who.len();
    t.turns = turns.len();
    Ok(t)
}
