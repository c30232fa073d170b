//! The store side of `kakeai tune`: the turns of the selected runs (a turn queue's items, or
//! whole runs) in run order, each with the label in force — a lead's gold label, else the
//! strict majority of the reviewers' marks (each reviewer's latest mark, undo honoured), else a
//! single mark. Works on SQLite and PostgreSQL alike (`store.db()`).

use std::collections::{BTreeMap, BTreeSet};

use super::labels::{Label, ReviewerMark, in_force, mark_usable};
use super::rejudge::Turn;
use crate::director::ruleset::PROTECTED;
use crate::store::review::{Mark, fold};
use crate::store::{ActionRow, RunRecord, Store, StoreError, TurnRow};

/// What to read labels from.
#[derive(Debug, Clone, PartialEq)]
pub enum Selection {
    /// A turn queue's items.
    Queue(String),
    /// These runs (empty: every run that is not a comparison or probe sample).
    Runs(Vec<i64>),
}

/// The turns to judge, with what was left out and why.
#[derive(Debug, Default)]
pub struct Loaded {
    pub turns: Vec<Turn>,
    /// `queue main` or `runs 3,5` (for the overlay's provenance).
    pub source: String,
    pub notes: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    #[error("no review queue named `{0}` (see `kakeai queue list`)")]
    NoQueue(String),
    #[error("queue `{0}` is a pairwise queue: tune reads turn queues (fine / not)")]
    Pairwise(String),
    #[error("run {0} is not in the store (see `kakeai runs`)")]
    NoRun(i64),
    #[error(transparent)]
    Store(#[from] StoreError),
}

type Gold = BTreeMap<(i64, u32), bool>;

/// Reads the selection's turns and labels.
pub fn load(store: &Store, sel: &Selection) -> Result<Loaded, SourceError> {
    let mut out = Loaded::default();
    let (runs, items, gold) = match sel {
        Selection::Queue(name) => {
            let (id, items, gold) = queue(store, name)?;
            let runs: BTreeSet<i64> = items.iter().map(|(r, _)| *r).collect();
            out.source = format!("queue {name} (#{id})");
            (runs.into_iter().collect::<Vec<_>>(), Some(items), gold)
        }
        Selection::Runs(ids) => {
            let ids = if ids.is_empty() {
                all_runs(store)?
            } else {
                ids.clone()
            };
            out.source = format!("runs {}", short_list(&ids));
            let gold = gold_of_runs(store, &ids, &mut out.notes)?;
            (ids, None, gold)
        }
    };
    for run in runs {
        let exists: Vec<i64> = store
            .db()
            .query_map("SELECT id FROM runs WHERE id = ?1", crate::p![run], |r| {
                r.get(0)
            })
            .map_err(StoreError::from)?;
        if exists.is_empty() {
            return Err(SourceError::NoRun(run));
        }
        let rec = store.load_run(run)?;
        let marks = reviewer_marks(&rec.actions);
        for t in &rec.turns {
            let in_scope = items.as_ref().is_none_or(|s| s.contains(&(run, t.turn)));
            let label = in_scope
                .then(|| label_of(gold.get(&(run, t.turn)).copied(), marks.get(&t.turn)))
                .flatten();
            out.turns.push(turn_of(&rec, t, label));
        }
    }
    Ok(out)
}

/// One committed turn as tune reads it: the judge's stored mean, and whether the line is
/// guarded (never an example): a never-leak rule spoke on it, it was withheld, or its verdict
/// is not on record (a check that did not run never counts as passed).
fn turn_of(rec: &RunRecord, t: &TurnRow, label: Option<Label>) -> Turn {
    let attempt = t
        .attempt_id
        .and_then(|id| rec.attempts.iter().find(|a| a.id == id));
    let judge_mean = attempt
        .and_then(|a| a.judge.as_ref())
        .and_then(|j| j.get("scores")?.get("mean")?.as_f64());
    let protected: Vec<String> = PROTECTED.iter().map(|r| super::rule_key(*r)).collect();
    let spoke = |v: &serde_json::Value| {
        v.get("findings")
            .and_then(|f| f.as_array())
            .is_some_and(|fs| {
                fs.iter().any(|f| {
                    f.get("rule")
                        .and_then(|r| r.as_str())
                        .is_some_and(|r| protected.iter().any(|p| p == r))
                })
            })
    };
    let guarded = t.flags.withheld || attempt.and_then(|a| a.verdict.as_ref()).is_none_or(spoke);
    Turn {
        run: rec.run.id.to_string(),
        turn: t.turn,
        speaker: t.speaker.clone(),
        text: t.text.clone(),
        label,
        judge_mean,
        topic: rec.run.topic.clone(),
        guarded,
    }
}

fn label_of(gold: Option<bool>, marks: Option<&Vec<ReviewerMark>>) -> Option<Label> {
    in_force(gold, marks.map(Vec::as_slice).unwrap_or(&[]))
}

/// Each reviewer's mark in force per turn (unnamed reviewers count as one).
fn reviewer_marks(actions: &[ActionRow]) -> BTreeMap<u32, Vec<ReviewerMark>> {
    let mut by: BTreeMap<Option<&str>, Vec<&ActionRow>> = BTreeMap::new();
    for a in actions.iter().filter(|a| a.turn.is_some()) {
        by.entry(a.reviewer.as_deref()).or_default().push(a);
    }
    let mut out: BTreeMap<u32, Vec<ReviewerMark>> = BTreeMap::new();
    for (who, list) in by {
        let folded = fold(list.iter().map(|a| Mark {
            turn: a.turn.unwrap_or(0),
            kind: a.kind,
            payload: &a.payload,
            reviewer: who,
        }));
        for (turn, m) in folded {
            if let Some(usable) = mark_usable(&m) {
                out.entry(turn).or_default().push(ReviewerMark {
                    reviewer: who.map(str::to_string),
                    usable,
                });
            }
        }
    }
    out
}

type QueueRead = (i64, BTreeSet<(i64, u32)>, Gold);

fn queue(store: &Store, name: &str) -> Result<QueueRead, SourceError> {
    let db = store.db();
    let rows: Vec<(i64, Option<i64>)> = db
        .query_map(
            "SELECT id, comparison_id FROM review_queues WHERE name = ?1",
            crate::p![name],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .map_err(StoreError::from)?;
    let Some(&(id, comparison)) = rows.first() else {
        return Err(SourceError::NoQueue(name.into()));
    };
    if comparison.is_some() {
        return Err(SourceError::Pairwise(name.into()));
    }
    let items: BTreeSet<(i64, u32)> = db
        .query_map(
            "SELECT subject, turn FROM queue_items WHERE queue_id = ?1",
            crate::p![id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .map_err(StoreError::from)?
        .into_iter()
        .collect();
    let gold = db
        .query_map(
            "SELECT subject, turn, label FROM gold_labels
              WHERE queue_id = ?1 AND label IN ('fine', 'not')",
            crate::p![id],
            |r| Ok(((r.get(0)?, r.get(1)?), r.get::<String>(2)? == "fine")),
        )
        .map_err(StoreError::from)?
        .into_iter()
        .collect();
    Ok((id, items, gold))
}

/// Gold labels of any turn queue over these runs; two queues that disagree on a turn give it
/// none (fail closed), with a note.
fn gold_of_runs(store: &Store, runs: &[i64], notes: &mut Vec<String>) -> Result<Gold, SourceError> {
    let wanted: BTreeSet<i64> = runs.iter().copied().collect();
    let rows: Vec<(i64, u32, bool)> = store
        .db()
        .query_map(
            "SELECT g.subject, g.turn, g.label FROM gold_labels g
               JOIN review_queues q ON q.id = g.queue_id
              WHERE q.comparison_id IS NULL AND g.label IN ('fine', 'not')",
            &[],
            |r| Ok((r.get(0)?, r.get(1)?, r.get::<String>(2)? == "fine")),
        )
        .map_err(StoreError::from)?;
    let mut seen: BTreeMap<(i64, u32), Option<bool>> = BTreeMap::new();
    for (run, turn, fine) in rows.into_iter().filter(|r| wanted.contains(&r.0)) {
        let e = seen.entry((run, turn)).or_insert(Some(fine));
        if *e != Some(fine) {
            *e = None;
        }
    }
    let mut gold = Gold::new();
    for ((run, turn), v) in seen {
        match v {
            Some(fine) => {
                gold.insert((run, turn), fine);
            }
            None => notes.push(format!(
                "run {run} turn {turn}: two queues' gold labels disagree; neither was used"
            )),
        }
    }
    Ok(gold)
}

fn all_runs(store: &Store) -> Result<Vec<i64>, SourceError> {
    let mut ids: Vec<i64> = store
        .runs(usize::MAX)?
        .into_iter()
        .filter(|r| r.sample.is_none())
        .map(|r| r.id)
        .collect();
    ids.sort_unstable();
    Ok(ids)
}

fn short_list(ids: &[i64]) -> String {
    let s: Vec<String> = ids.iter().take(8).map(i64::to_string).collect();
    if ids.len() > 8 {
        format!("{} … ({} runs)", s.join(","), ids.len())
    } else {
        s.join(",")
    }
}
