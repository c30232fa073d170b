//! The queues in the store (migration 013): create, list, claim the next item under a lease,
//! release it, progress per reviewer. Every claim runs in one `BEGIN IMMEDIATE` transaction, so
//! two reviewers in two processes never take the last open place of the same item.

use std::collections::BTreeMap;

use crate::p;
use crate::store::sql::{Db, Optional, Row, Value};

use super::{Filter, ItemState, Queue, QueueError, QueueSpec, pick};
use crate::store::review::{Mark, fold};
use crate::store::{ActionKind, Store};

/// (subject, turn): the subject is the run id, or the comparison id in a pairwise queue.
pub type Item = (i64, u32);

/// An item handed to a reviewer.
#[derive(Debug, Clone, PartialEq)]
pub struct Claim {
    /// The run (turn queues) or the comparison (pairwise queues).
    pub subject: i64,
    pub pairwise: bool,
    pub turn: u32,
    pub speaker: String,
    pub until_ms: i64,
}

/// A queue's progress at one moment.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Progress {
    pub items: usize,
    /// Items k reviewers judged.
    pub done: usize,
    /// Items someone holds a live lease on.
    pub held: usize,
    /// Reviewer → items she judged.
    pub per_reviewer: BTreeMap<String, usize>,
}

/// Creates a queue; refused when the spec is invalid or the name is taken.
pub fn create(store: &mut Store, spec: &QueueSpec, by: Option<&str>) -> Result<i64, QueueError> {
    spec.validate()?;
    let filter = serde_json::to_string(&spec.filter)
        .map_err(|e| QueueError::Invalid(format!("filter: {e}")))?;
    store.transact_with(|tx| {
        if let Some(c) = spec.comparison {
            super::pairwise::require_paired(tx, c)?;
        }
        if find(tx, &spec.name)?.is_some() {
            return Err(QueueError::Exists(spec.name.clone()));
        }
        Ok(tx.one::<i64>(
            "INSERT INTO review_queues (name, filter, k, lease_ms, overlap, created_at, created_by,
                                        comparison_id)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) RETURNING id",
            p![
                spec.name,
                filter,
                spec.k,
                spec.lease_ms,
                spec.overlap,
                crate::store::time::now_iso(),
                by,
                spec.comparison
            ],
        )?)
    })
}

fn find(conn: Db<'_>, name: &str) -> Result<Option<Queue>, QueueError> {
    let row = conn
        .query_row(
            "SELECT id, name, filter, k, lease_ms, overlap, created_at, created_by, comparison_id
             FROM review_queues WHERE name = ?1",
            p![name],
            read_queue,
        )
        .optional()?;
    row.map(finish).transpose()
}

type Raw = (
    i64,
    String,
    String,
    u32,
    i64,
    bool,
    String,
    Option<String>,
    Option<i64>,
);

fn read_queue(r: &Row) -> Result<Raw, crate::store::sql::DbError> {
    Ok((
        r.get(0)?,
        r.get(1)?,
        r.get(2)?,
        r.get(3)?,
        r.get(4)?,
        r.get(5)?,
        r.get(6)?,
        r.get(7)?,
        r.get(8)?,
    ))
}

/// A stored filter that no longer reads is an error naming the queue, never "match all".
fn finish(
    (id, name, filter, k, lease_ms, overlap, created_at, created_by, comparison): Raw,
) -> Result<Queue, QueueError> {
    let filter: Filter = serde_json::from_str(&filter).map_err(|e| {
        QueueError::Invalid(format!(
            "queue `{name}`: its stored filter is unreadable: {e}"
        ))
    })?;
    Ok(Queue {
        id,
        spec: QueueSpec {
            name,
            filter,
            k,
            lease_ms,
            overlap,
            comparison,
        },
        created_at,
        created_by,
    })
}

/// The queue named `name`.
pub fn get(conn: Db<'_>, name: &str) -> Result<Queue, QueueError> {
    find(conn, name)?.ok_or_else(|| QueueError::NoSuchQueue(name.to_string()))
}

/// Every queue, oldest first.
pub fn list(conn: Db<'_>) -> Result<Vec<Queue>, QueueError> {
    let raw = conn.query_map(
        "SELECT id, name, filter, k, lease_ms, overlap, created_at, created_by, comparison_id
         FROM review_queues ORDER BY id",
        p![],
        read_queue,
    )?;
    raw.into_iter().map(finish).collect()
}

/// Adds the committed turns that match the filter now; returns how many were new.
pub fn refresh(conn: Db<'_>, q: &Queue) -> Result<usize, QueueError> {
    if let Some(c) = q.spec.comparison {
        return super::pairwise::refresh(conn, q, c);
    }
    let f = &q.spec.filter;
    let kind = conn.kind();
    let started = kind.bytewise("r.started_at");
    let mut sql = String::from(
        "INSERT INTO queue_items (queue_id, subject, turn, added_at)
         SELECT CAST(?1 AS BIGINT), t.run_id, t.turn, CAST(?2 AS TEXT)
         FROM turns t JOIN runs r ON r.id = t.run_id WHERE 1 = 1",
    );
    let mut args: Vec<Value> = vec![Value::Int(q.id), Value::Text(crate::store::time::now_iso())];
    let mut bind = |sql: &mut String, clause: &str, v: Value| {
        args.push(v);
        sql.push_str(&clause.replace('?', &format!("?{}", args.len())));
    };
    if !f.statuses.is_empty() {
        let list: Vec<String> = f
            .statuses
            .iter()
            .map(|s| format!("'{}'", s.as_str()))
            .collect();
        sql.push_str(&format!(" AND t.status IN ({})", list.join(", ")));
    }
    if let Some(s) = &f.sister {
        bind(&mut sql, " AND t.speaker = ?", Value::Text(s.clone()));
    }
    if let Some(s) = &f.since {
        bind(
            &mut sql,
            &format!(" AND {started} >= ?"),
            Value::Text(s.clone()),
        );
    }
    if let Some(s) = &f.until {
        bind(
            &mut sql,
            &format!(" AND {started} < ?"),
            Value::Text(s.clone()),
        );
    }
    if !f.runs.is_empty() {
        let ids: Vec<String> = f.runs.iter().map(i64::to_string).collect();
        sql.push_str(&format!(" AND t.run_id IN ({})", ids.join(", ")));
    }
    sql.push_str(" ON CONFLICT DO NOTHING");
    Ok(conn.execute(&sql, &args)?)
}

/// Whether `item` is (now) in the queue; items are refreshed first.
pub fn has_item(store: &mut Store, name: &str, item: Item) -> Result<bool, QueueError> {
    store.transact_with(|tx| {
        let q = get(tx, name)?;
        refresh(tx, &q)?;
        let n: i64 = tx.one(
            "SELECT COUNT(*) FROM queue_items WHERE queue_id = ?1 AND subject = ?2 AND turn = ?3",
            p![q.id, item.0, item.1],
        )?;
        Ok(n > 0)
    })
}

/// Whether `reviewer` may judge `item` of queue `name` now: the item is in the queue, and she
/// either judged it before (changing her mark), holds a live lease on it, or — unclaimed — it
/// still has room: fewer than k judgements, counting others' live leases. A lease that lapsed
/// is no claim, so an item that reached k meanwhile is refused (a k = 1 item never ends with
/// two judgements). The error says why and what to do.
pub fn may_judge(
    store: &mut Store,
    name: &str,
    reviewer: &str,
    item: Item,
    now_ms: i64,
) -> Result<(), QueueError> {
    store.transact_with(|tx| {
        let q = get(tx, name)?;
        refresh(tx, &q)?;
        let all = states(tx, &q)?;
        let what = |i: Item| {
            let kind = if q.spec.comparison.is_some() {
                "comparison"
            } else {
                "run"
            };
            format!("{kind} {} turn {}", i.0, i.1)
        };
        let Some((_, s)) = all.iter().find(|(i, _)| *i == item) else {
            return Err(QueueError::Invalid(if q.spec.comparison.is_some() {
                format!(
                    "comparison {} has no turn {} in queue {name}",
                    item.0, item.1
                )
            } else {
                format!("{} is not in queue {name}", what(item))
            }));
        };
        let live = |who: &str| s.held_by.get(who).is_some_and(|u| *u > now_ms);
        if s.judged_by.contains(reviewer) || live(reviewer) {
            return Ok(());
        }
        let k = q.spec.k as usize;
        let held_by_others = s
            .held_by
            .keys()
            .filter(|w| live(w) && !s.judged_by.contains(*w))
            .count();
        if s.judged_by.len() >= k {
            return Err(QueueError::Invalid(format!(
                "{} already has its {k} judgement(s) and you hold no lease on it (a lease that \
                 lapsed is no claim): take the next item with `kakeai queue next {name}`",
                what(item)
            )));
        }
        if s.judged_by.len() + held_by_others >= k {
            return Err(QueueError::Invalid(format!(
                "{} is held by another reviewer now: take the next item with `kakeai queue next \
                 {name}`",
                what(item)
            )));
        }
        Ok(())
    })
}

/// Every item of the queue in order, with who judged it and who holds it.
pub fn states(conn: Db<'_>, q: &Queue) -> Result<Vec<(Item, ItemState)>, QueueError> {
    let mut items: BTreeMap<Item, ItemState> = BTreeMap::new();
    for item in items_of(conn, q.id)? {
        items.insert(item, ItemState::default());
    }
    let leases = conn.query_map(
        "SELECT subject, turn, reviewer, until_ms FROM queue_leases WHERE queue_id = ?1",
        p![q.id],
        |r| {
            Ok((
                (r.get::<i64>(0)?, r.get::<u32>(1)?),
                r.get::<String>(2)?,
                r.get::<i64>(3)?,
            ))
        },
    )?;
    for (item, who, until) in leases {
        if let Some(s) = items.get_mut(&item) {
            s.held_by.insert(who, until);
        }
    }
    for (item, who, _) in labels_of(conn, q)? {
        if let Some(s) = items.get_mut(&item) {
            s.judged_by.insert(who);
        }
    }
    Ok(items.into_iter().collect())
}

/// Every judgement in force on the queue's items: (item, reviewer, label).
pub(crate) fn items_of(conn: Db<'_>, queue_id: i64) -> Result<Vec<Item>, QueueError> {
    Ok(conn.query_map(
        "SELECT subject, turn FROM queue_items WHERE queue_id = ?1",
        p![queue_id],
        |r| Ok((r.get::<i64>(0)?, r.get::<u32>(1)?)),
    )?)
}

pub(crate) fn labels_of(
    conn: Db<'_>,
    q: &Queue,
) -> Result<Vec<(Item, String, String)>, QueueError> {
    match q.spec.comparison {
        Some(c) => super::pairwise::judged(conn, c),
        None => judged(conn, q.id),
    }
}

/// Krippendorff's α across every reviewer over the queue's items (labels: fine/not, or
/// A/B/tie in a pairwise queue).
pub fn agreement(conn: Db<'_>, q: &Queue) -> Result<Option<super::alpha::Alpha>, QueueError> {
    let items: std::collections::BTreeSet<Item> = items_of(conn, q.id)?.into_iter().collect();
    let mut units: BTreeMap<Item, Vec<String>> = BTreeMap::new();
    for (item, _, label) in labels_of(conn, q)? {
        if items.contains(&item) {
            units.entry(item).or_default().push(label);
        }
    }
    let units: Vec<Vec<String>> = units.into_values().collect();
    Ok(super::alpha::nominal(&units))
}

/// One review action of a turn: (turn, kind, payload).
type Logged = (u32, ActionKind, serde_json::Value);

/// (item, reviewer) for every named reviewer whose 👍/👎 or override is in force on an item.
/// Each with the reviewer's label as agreement reads it: `fine` (👍, or an override to PASS) or
/// `not` (👎, or an override to anything else); an override outranks her 👍/👎, as in κ.
fn judged(conn: Db<'_>, queue_id: i64) -> Result<Vec<(Item, String, String)>, QueueError> {
    type Row = (i64, u32, String, String, String);
    let rows: Vec<Row> = conn.query_map(
        "SELECT a.run_id, a.turn, a.kind, a.payload, a.reviewer FROM actions a
         JOIN queue_items qi ON qi.subject = a.run_id AND qi.turn = a.turn
         WHERE qi.queue_id = ?1 AND a.reviewer IS NOT NULL
           AND a.kind IN ('thumb', 'override', 'undo')
         ORDER BY a.id",
        p![queue_id],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
    )?;
    let mut per: BTreeMap<(i64, String), Vec<Logged>> = BTreeMap::new();
    for (run, turn, kind, payload, who) in rows {
        // An unreadable action is not a judgement (fail closed: the item stays open).
        let (Some(kind), Ok(payload)) = (ActionKind::parse(&kind), serde_json::from_str(&payload))
        else {
            continue;
        };
        per.entry((run, who))
            .or_default()
            .push((turn, kind, payload));
    }
    let mut out = Vec::new();
    for ((run, who), list) in per {
        let marks = fold(list.iter().map(|(turn, kind, payload)| Mark {
            turn: *turn,
            kind: *kind,
            payload,
            reviewer: Some(who.as_str()),
        }));
        for (turn, m) in marks {
            let fine = match (m.override_to, m.thumb) {
                (Some(s), _) => s == crate::director::Status::Pass,
                (None, Some(up)) => up,
                (None, None) => continue,
            };
            let label = if fine { "fine" } else { "not" };
            out.push(((run, turn), who.clone(), label.to_string()));
        }
    }
    Ok(out)
}

/// Hands `reviewer` her next item under a fresh lease (her own live lease first); None when
/// nothing is left for her. Refreshes the items and drops expired leases on the way.
pub fn claim(
    store: &mut Store,
    name: &str,
    reviewer: &str,
    now_ms: i64,
) -> Result<Option<Claim>, QueueError> {
    let reviewer = &super::reviewer_name(reviewer)?;
    store.transact_with(|tx| {
        let q = get(tx, name)?;
        refresh(tx, &q)?;
        tx.execute(
            "DELETE FROM queue_leases WHERE queue_id = ?1 AND until_ms <= ?2",
            p![q.id, now_ms],
        )?;
        let all = states(tx, &q)?;
        let Some((subject, turn)) = pick(&q.spec, &all, reviewer, now_ms) else {
            return Ok(None);
        };
        let until_ms = now_ms + q.spec.lease_ms;
        tx.execute(
            "INSERT INTO queue_leases (queue_id, subject, turn, reviewer, until_ms)
             VALUES (?1, ?2, ?3, ?4, ?5)
             ON CONFLICT (queue_id, subject, turn, reviewer) DO UPDATE SET until_ms = excluded.until_ms",
            p![q.id, subject, turn, reviewer, until_ms],
        )?;
        let from = if q.spec.comparison.is_some() {
            "SELECT speaker FROM comparison_turns WHERE comparison_id = ?1 AND turn = ?2"
        } else {
            "SELECT speaker FROM turns WHERE run_id = ?1 AND turn = ?2"
        };
        let speaker: String = tx.one(from, p![subject, turn])?;
        Ok(Some(Claim {
            subject,
            pairwise: q.spec.comparison.is_some(),
            turn,
            speaker,
            until_ms,
        }))
    })
}

/// Gives an item back before its lease ends (skip); true when she held it.
pub fn release(
    store: &mut Store,
    name: &str,
    reviewer: &str,
    item: Item,
) -> Result<bool, QueueError> {
    store.transact_with(|tx| {
        let q = get(tx, name)?;
        let n = tx.execute(
            "DELETE FROM queue_leases WHERE queue_id = ?1 AND subject = ?2 AND turn = ?3 AND reviewer = ?4",
            p![q.id, item.0, item.1, reviewer],
        )?;
        Ok(n > 0)
    })
}

/// Gives back every item `reviewer` holds in queue `name` (the workbench quitting); how many.
pub fn release_all(store: &mut Store, name: &str, reviewer: &str) -> Result<usize, QueueError> {
    store.transact_with(|tx| {
        let q = get(tx, name)?;
        Ok(tx.execute(
            "DELETE FROM queue_leases WHERE queue_id = ?1 AND reviewer = ?2",
            p![q.id, reviewer],
        )?)
    })
}

/// Where the queue stands (items refreshed first).
pub fn progress(store: &mut Store, name: &str, now_ms: i64) -> Result<Progress, QueueError> {
    store.transact_with(|tx| {
        let q = get(tx, name)?;
        refresh(tx, &q)?;
        let all = states(tx, &q)?;
        let mut p = Progress {
            items: all.len(),
            ..Progress::default()
        };
        for (_, s) in &all {
            p.done += usize::from(s.judged_by.len() >= q.spec.k as usize);
            p.held += usize::from(
                s.held_by
                    .iter()
                    .any(|(who, until)| *until > now_ms && !s.judged_by.contains(who)),
            );
            for who in &s.judged_by {
                *p.per_reviewer.entry(who.clone()).or_default() += 1;
            }
        }
        Ok(p)
    })
}
