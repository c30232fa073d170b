//! Adjudication (issue 41): the items of a queue where reviewers disagree (two or more labels
//! among the marks in force) are listed for a lead, who decides each one's **gold label** with a
//! reason; the gold labels are stored per queue and item (`gold_labels`, migration 018; a new
//! decision replaces the old one) and counted by `queue show`. Labels are the queue's own:
//! fine / not in a turn queue, A / B / tie in a pairwise one. Nothing here guesses a label: an
//! item nobody disagrees on is not adjudicated, and a label outside the queue's set is refused.

use std::collections::BTreeMap;

use crate::p;
use crate::store::Store;
use crate::store::sql::Db;

use super::db::{self, Item};
use super::{Queue, QueueError};

/// A lead's decision on one item.
#[derive(Debug, Clone, PartialEq)]
pub struct Gold {
    pub label: String,
    pub reason: String,
    pub by: String,
    pub at: String,
}

/// An item the reviewers disagree on: each reviewer's label, and the gold label if decided.
#[derive(Debug, Clone, PartialEq)]
pub struct Disagreement {
    pub item: Item,
    pub labels: BTreeMap<String, String>,
    pub gold: Option<Gold>,
}

/// A lead's gold label on a run's turn, from a turn queue: fine or not, why, who, which queue.
#[derive(Debug, Clone, PartialEq)]
pub struct TurnGold {
    pub fine: bool,
    pub reason: String,
    pub by: String,
    pub queue: String,
}

/// The gold labels of run `run`'s turns from every turn queue, per turn (queues by name). Two
/// queues may disagree: the caller says so, never picks one (see [`agreed`]).
pub fn of_run(
    conn: Db<'_>,
    run: i64,
) -> Result<BTreeMap<u32, Vec<TurnGold>>, crate::store::StoreError> {
    let rows: Vec<(String, u32, String, String, String)> = conn.query_map(
        "SELECT q.name, g.turn, g.label, g.reason, g.decided_by FROM gold_labels g
           JOIN review_queues q ON q.id = g.queue_id
          WHERE g.subject = ?1 AND g.label IN ('fine', 'not') AND q.comparison_id IS NULL
          ORDER BY q.name",
        p![run],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
    )?;
    let mut by_turn: BTreeMap<u32, Vec<TurnGold>> = BTreeMap::new();
    for (queue, turn, label, reason, by) in rows {
        by_turn.entry(turn).or_default().push(TurnGold {
            fine: label == "fine",
            reason,
            by,
            queue,
        });
    }
    Ok(by_turn)
}

/// One turn's gold label when its queues agree on it (the first queue's, by name); None when
/// two queues decided it differently.
pub fn agreed(golds: Vec<TurnGold>) -> Option<TurnGold> {
    let first = golds.first()?.fine;
    golds
        .iter()
        .all(|g| g.fine == first)
        .then(|| golds.into_iter().next())?
}

/// The gold labels (A, B or tie) of comparison `comparison`'s turns from its pairwise queues,
/// per turn: each distinct label decided (two when queues disagree).
pub fn of_comparison(
    conn: Db<'_>,
    comparison: i64,
) -> Result<BTreeMap<u32, Vec<String>>, crate::store::StoreError> {
    let rows: Vec<(u32, String)> = conn.query_map(
        "SELECT g.turn, g.label FROM gold_labels g JOIN review_queues q ON q.id = g.queue_id
          WHERE g.subject = ?1 AND q.comparison_id = ?1 ORDER BY q.name",
        p![comparison],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    let mut out: BTreeMap<u32, Vec<String>> = BTreeMap::new();
    for (turn, label) in rows {
        let e = out.entry(turn).or_default();
        if !e.contains(&label) {
            e.push(label);
        }
    }
    Ok(out)
}

/// The labels a queue's items take.
pub fn labels(q: &Queue) -> &'static [&'static str] {
    if q.spec.comparison.is_some() {
        &["A", "B", "tie"]
    } else {
        &["fine", "not"]
    }
}

/// Every item of queue `name` (its items refreshed first) with two or more different labels in
/// force, in item order.
pub fn disagreements(store: &mut Store, name: &str) -> Result<Vec<Disagreement>, QueueError> {
    store.transact_with(|tx| {
        let q = db::get(tx, name)?;
        db::refresh(tx, &q)?;
        split(tx, &q)
    })
}

fn split(conn: Db<'_>, q: &Queue) -> Result<Vec<Disagreement>, QueueError> {
    let items: std::collections::BTreeSet<Item> = db::items_of(conn, q.id)?.into_iter().collect();
    let mut per: BTreeMap<Item, BTreeMap<String, String>> = BTreeMap::new();
    for (item, who, label) in db::labels_of(conn, q)? {
        if items.contains(&item) {
            per.entry(item).or_default().insert(who, label);
        }
    }
    let golds = golds(conn, q)?;
    Ok(per
        .into_iter()
        .filter(|(_, l)| {
            let first = l.values().next();
            l.values().any(|v| Some(v) != first)
        })
        .map(|(item, labels)| Disagreement {
            item,
            gold: golds.get(&item).cloned(),
            labels,
        })
        .collect())
}

/// The gold labels decided in `q`.
pub fn golds(conn: Db<'_>, q: &Queue) -> Result<BTreeMap<Item, Gold>, QueueError> {
    let rows = conn.query_map(
        "SELECT subject, turn, label, reason, decided_by, decided_at FROM gold_labels
          WHERE queue_id = ?1 ORDER BY subject, turn",
        p![q.id],
        |r| {
            Ok((
                (r.get::<i64>(0)?, r.get::<u32>(1)?),
                Gold {
                    label: r.get(2)?,
                    reason: r.get(3)?,
                    by: r.get(4)?,
                    at: r.get(5)?,
                },
            ))
        },
    )?;
    Ok(rows.into_iter().collect())
}

/// Stores `lead`'s gold label for `item` of queue `name` (replacing an earlier decision). The
/// item must be in the queue, the label one of the queue's, the reason not empty.
pub fn decide(
    store: &mut Store,
    name: &str,
    item: Item,
    label: &str,
    reason: &str,
    lead: &str,
) -> Result<(), QueueError> {
    let lead = super::reviewer_name(lead)?;
    let reason = reason.trim();
    if reason.is_empty() {
        return Err(QueueError::Invalid(
            "a gold label needs --reason (why this label)".into(),
        ));
    }
    store.transact_with(|tx| {
        let q = db::get(tx, name)?;
        let Some(label) = labels(&q).iter().find(|l| l.eq_ignore_ascii_case(label.trim())) else {
            return Err(QueueError::Invalid(format!(
                "--label {label}: one of {}",
                labels(&q).join(", ")
            )));
        };
        if !db::items_of(tx, q.id)?.contains(&item) {
            return Err(QueueError::Invalid(format!(
                "{} {} turn {} is not in queue {name}",
                if q.spec.comparison.is_some() { "comparison" } else { "run" },
                item.0,
                item.1
            )));
        }
        tx.execute(
            "INSERT INTO gold_labels (queue_id, subject, turn, label, reason, decided_by, decided_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
             ON CONFLICT (queue_id, subject, turn) DO UPDATE SET label = excluded.label,
               reason = excluded.reason, decided_by = excluded.decided_by,
               decided_at = excluded.decided_at",
            p![q.id, item.0, item.1, label, reason, lead, crate::store::time::now_iso()],
        )?;
        Ok(())
    })
}
