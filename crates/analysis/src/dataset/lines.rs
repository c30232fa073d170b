//! One run read as training material: for each turn, the versions of her line (lines set aside
//! by a regenerate, then the committed one), each with the attempts that led to it and the
//! labels reviewers gave it while it was on screen. Marks carry no attempt id: a mark belongs to
//! the version that was committed for its turn when it was made — versions change at each
//! `regenerate` action that set the turn aside. When the action log and the stored branches
//! disagree (a regenerate without its branch), the run's reviewer labels are not used (fail
//! closed) and the run is counted as ambiguous.

use std::collections::BTreeMap;

use crate::director::Status;
use crate::store::branch::BranchTurn;
use crate::store::review::by_reviewer;
use crate::store::{ActionKind, AttemptRow, AttemptState, RunRecord};

/// One version of a turn's line.
#[derive(Debug, Clone, PartialEq)]
pub struct Version {
    pub attempt_id: Option<i64>,
    pub text: String,
    pub status: Status,
    /// The Director's RETRY attempts that came just before this line (same turn, between the
    /// previous version's attempt and this one's).
    pub rejected: Vec<i64>,
    /// Reviewer → fine (👍, override to PASS) or not (👎, any other override).
    pub labels: BTreeMap<String, bool>,
    pub current: bool,
    /// The gold label a lead decided for this turn's committed line (adjudication), if any.
    pub gold: Option<Gold>,
}

/// A lead's decision on a turn of a turn queue: fine or not, why, who, in which queue.
pub type Gold = crate::annotate::adjudicate::TurnGold;

/// A turn's versions, oldest first.
#[derive(Debug, Clone, PartialEq)]
pub struct TurnLines {
    pub turn: u32,
    pub speaker: String,
    pub versions: Vec<Version>,
}

/// The run's turns as versions; `ambiguous` when reviewer labels could not be placed.
pub fn read(rec: &RunRecord, branches: &[BranchTurn]) -> (Vec<TurnLines>, bool) {
    let regenerates: Vec<(i64, u32)> = rec
        .actions
        .iter()
        .filter(|a| a.kind == ActionKind::Regenerate)
        .filter_map(|a| a.turn.map(|t| (a.id, t)))
        .collect();
    let n_branches = branches.iter().map(|b| b.branch).max().unwrap_or(0) as usize;
    let ambiguous = regenerates.len() != n_branches;
    let mut out = Vec::new();
    for t in &rec.turns {
        let mut versions: Vec<(Option<i64>, Version)> = Vec::new();
        for b in branches.iter().filter(|b| b.turn == t.turn) {
            // Branch b was made by the b-th regenerate: marks before it belong to this line.
            let cut = regenerates.get(b.branch as usize - 1).map(|r| r.0);
            versions.push((cut, version(b.attempt_id, &b.text, b.status, false)));
        }
        versions.push((None, version(t.attempt_id, &t.text, t.status, true)));
        attach_attempts(rec, t.turn, &mut versions);
        if !ambiguous {
            attach_labels(rec, t.turn, &mut versions);
        }
        out.push(TurnLines {
            turn: t.turn,
            speaker: t.speaker.clone(),
            versions: versions.into_iter().map(|(_, v)| v).collect(),
        });
    }
    (out, ambiguous)
}

fn version(attempt_id: Option<i64>, text: &str, status: Status, current: bool) -> Version {
    Version {
        attempt_id,
        text: text.to_string(),
        status,
        rejected: Vec::new(),
        labels: BTreeMap::new(),
        current,
        gold: None,
    }
}

/// Each version's RETRY attempts: finished attempts of the turn numbered after the previous
/// version's attempt and before its own.
fn attach_attempts(rec: &RunRecord, turn: u32, versions: &mut [(Option<i64>, Version)]) {
    let attempts: Vec<&AttemptRow> = rec.attempts_of(turn).collect();
    let number = |id: Option<i64>| {
        id.and_then(|id| attempts.iter().find(|a| a.id == id))
            .map(|a| a.attempt)
    };
    let mut after = 0;
    for (_, v) in versions.iter_mut() {
        let Some(mine) = number(v.attempt_id) else {
            continue;
        };
        v.rejected = attempts
            .iter()
            .filter(|a| a.attempt > after && a.attempt < mine)
            .filter(|a| a.state == AttemptState::Done && a.status == Some(Status::Retry))
            .filter(|a| a.text.as_deref().is_some_and(|t| !t.trim().is_empty()))
            .map(|a| a.id)
            .collect();
        after = mine;
    }
}

/// Each reviewer's label on each version: the marks in force just before the regenerate that
/// set the version aside (the current version: the whole log), read by the store's one fold —
/// a regenerate voids the marks made before it, so a mark lands only on the line it was made on.
fn attach_labels(rec: &RunRecord, turn: u32, versions: &mut [(Option<i64>, Version)]) {
    for (cut, v) in versions.iter_mut() {
        let end = cut.unwrap_or(i64::MAX);
        let mut marks = by_reviewer(rec.actions.iter().filter(|a| a.id < end));
        for (who, m) in marks.remove(&turn).unwrap_or_default() {
            if let Some(f) = m.fine() {
                v.labels.insert(who, f);
            }
        }
    }
}
