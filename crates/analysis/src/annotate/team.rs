//! What a team running a queue sees besides its progress (issue 41, "what teams have
//! elsewhere"): each reviewer's pace over time (items per hour, and how many in the last hour),
//! read from when her judgement in force was made; and the queue's guidelines, a markdown text
//! the team writes for its reviewers (migration 019), shown by `queue show`, the workbench's
//! queues room and the report.

use std::collections::BTreeMap;

use crate::p;
use crate::store::sql::Db;
use crate::store::{Store, time::parse_iso_ms};

use super::db::{Item, labels_of};
use super::{Queue, QueueError};

/// The longest guidelines text stored (characters): a page or two, not a manual.
pub const GUIDELINES_MAX_CHARS: usize = 20_000;

/// One reviewer's pace on a queue.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Pace {
    /// Judgements in force whose time is known.
    pub judged: usize,
    pub first_ms: i64,
    pub last_ms: i64,
    /// Judgements made in the hour before now.
    pub last_hour: usize,
}

impl Pace {
    /// Items per hour between her first and last judgement: (n − 1) intervals over that span.
    /// None below two judgements or a span under a minute (too short to say).
    pub fn per_hour(&self) -> Option<f64> {
        let span = self.last_ms - self.first_ms;
        (self.judged >= 2 && span >= 60_000)
            .then(|| (self.judged - 1) as f64 * 3_600_000.0 / span as f64)
    }

    /// "4.0 items/h · 3 in the last hour" or "— items/h (too few to say) · 0 in the last hour".
    pub fn describe(&self) -> String {
        let rate = match self.per_hour() {
            Some(r) => format!("{r:.1} items/h"),
            None => "— items/h (too few to say)".to_string(),
        };
        format!("{rate} · {} in the last hour", self.last_hour)
    }
}

/// Each reviewer's pace from (reviewer, time of a judgement) pairs.
pub fn pace_of(
    judgements: impl IntoIterator<Item = (String, i64)>,
    now_ms: i64,
) -> BTreeMap<String, Pace> {
    let mut out: BTreeMap<String, Pace> = BTreeMap::new();
    for (who, at) in judgements {
        let p = out.entry(who).or_insert(Pace {
            first_ms: at,
            last_ms: at,
            ..Pace::default()
        });
        p.judged += 1;
        p.first_ms = p.first_ms.min(at);
        p.last_ms = p.last_ms.max(at);
        p.last_hour += usize::from(at > now_ms - 3_600_000 && at <= now_ms);
    }
    out
}

/// Each reviewer's pace on the queue: one time per judgement in force, the time of her latest
/// mark on the item (a 👍/👎 or override; a pairwise choice). A time that does not read is left
/// out of the pace (never guessed).
pub fn pace(conn: Db<'_>, q: &Queue, now_ms: i64) -> Result<BTreeMap<String, Pace>, QueueError> {
    let rows: Vec<(i64, u32, String, String)> = match q.spec.comparison {
        Some(c) => conn.query_map(
            "SELECT comparison_id, turn, reviewer, created_at FROM pairwise_marks
             WHERE comparison_id = ?1",
            p![c],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )?,
        None => conn.query_map(
            "SELECT a.run_id, a.turn, a.reviewer, a.created_at FROM actions a
             JOIN queue_items qi ON qi.subject = a.run_id AND qi.turn = a.turn
             WHERE qi.queue_id = ?1 AND a.reviewer IS NOT NULL
               AND a.kind IN ('thumb', 'override')",
            p![q.id],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )?,
    };
    let mut latest: BTreeMap<(Item, String), i64> = BTreeMap::new();
    for (subject, turn, who, at) in rows {
        let Some(at) = parse_iso_ms(&at) else {
            continue;
        };
        let t = latest.entry(((subject, turn), who)).or_insert(at);
        *t = (*t).max(at);
    }
    let in_force = labels_of(conn, q)?;
    let times = in_force
        .into_iter()
        .filter_map(|(item, who, _)| latest.get(&(item, who.clone())).map(|t| (who, *t)));
    Ok(pace_of(times, now_ms))
}

/// The queue's guidelines, if written.
pub fn guidelines(conn: Db<'_>, name: &str) -> Result<Option<String>, QueueError> {
    let q = super::db::get(conn, name)?;
    Ok(conn.one::<Option<String>>(
        "SELECT guidelines FROM review_queues WHERE id = ?1",
        p![q.id],
    )?)
}

/// Checks a guidelines text: not blank, no NUL or other control characters than newline and
/// tab (a terminal shows it), at most [`GUIDELINES_MAX_CHARS`].
pub fn check_guidelines(text: &str) -> Result<(), QueueError> {
    let bad = |m: String| Err(QueueError::Invalid(m));
    if text.trim().is_empty() {
        return bad("the guidelines are empty (write them, or use --clear)".into());
    }
    let n = text.chars().count();
    if n > GUIDELINES_MAX_CHARS {
        return bad(format!(
            "the guidelines are {n} characters; at most {GUIDELINES_MAX_CHARS}"
        ));
    }
    let (mut line, mut col) = (1, 0);
    for c in text.chars() {
        col += 1;
        if c == '\n' {
            (line, col) = (line + 1, 0);
        } else if c.is_control() && c != '\t' && c != '\r' {
            return bad(format!(
                "{line}:{col}: a control character (U+{:04X}) in the guidelines",
                c as u32
            ));
        }
    }
    Ok(())
}

/// Stores (Some) or clears (None) the queue's guidelines; the text is checked first.
pub fn set_guidelines(store: &mut Store, name: &str, text: Option<&str>) -> Result<(), QueueError> {
    if let Some(t) = text {
        check_guidelines(t)?;
    }
    store.transact_with(|tx| {
        let q = super::db::get(tx, name)?;
        tx.execute(
            "UPDATE review_queues SET guidelines = ?1 WHERE id = ?2",
            p![text, q.id],
        )?;
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_rng::Rng;

    #[test]
    fn pace_over_generated_judgement_times() {
        let mut r = Rng::new(41);
        let now = 10_000_000_000;
        for round in 0..500 {
            let n = 1 + r.next(30) as usize;
            let gap = 1 + r.next(1_200_000) as i64;
            // n judgements `gap` ms apart, ending `back` ms before now, given in shuffled order.
            let back = r.next(7_200_000) as i64;
            let mut times: Vec<i64> = (0..n as i64).map(|i| now - back - i * gap).collect();
            for i in (1..times.len()).rev() {
                times.swap(i, r.next(i as u64 + 1) as usize);
            }
            let p = pace_of(times.iter().map(|t| ("花子".to_string(), *t)), now)["花子"];
            assert_eq!(p.judged, n, "{round}");
            let span = (n as i64 - 1) * gap;
            match p.per_hour() {
                Some(rate) => {
                    assert!(span >= 60_000, "{round}");
                    let want = 3_600_000.0 / gap as f64;
                    assert!(
                        (rate - want).abs() < 1e-9 * want,
                        "{round}: {rate} vs {want}"
                    );
                }
                None => assert!(n < 2 || span < 60_000, "{round}"),
            }
            let want_hour = times.iter().filter(|t| now - **t < 3_600_000).count();
            assert_eq!(p.last_hour, want_hour, "{round}");
        }
    }

    #[test]
    fn reviewers_are_paced_apart() {
        let p = pace_of(
            [
                ("a".to_string(), 0),
                ("b".to_string(), 0),
                ("a".to_string(), 3_600_000),
                ("a".to_string(), 7_200_000),
            ],
            7_200_000,
        );
        assert_eq!(p["a"].per_hour(), Some(1.0));
        assert_eq!(p["b"].per_hour(), None);
        assert!(p["b"].describe().contains("too few"));
        assert_eq!(p["a"].last_hour, 1);
    }

    #[test]
    fn guidelines_are_checked() {
        assert!(check_guidelines("# 方針\n\n- 口調を見る\t(やな)\r\n").is_ok());
        for bad in ["", "  \n", "ok\nx\u{1b}[2J", "nul\0"] {
            assert!(check_guidelines(bad).is_err(), "{bad:?}");
        }
        let e = check_guidelines("ab\ncd\u{7}").unwrap_err().to_string();
        assert!(e.starts_with("2:3:"), "{e}");
        let long = "あ".repeat(GUIDELINES_MAX_CHARS + 1);
        assert!(check_guidelines(&long).is_err());
        assert!(check_guidelines(&long[3..]).is_ok());
    }
}
