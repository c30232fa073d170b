//! A pattern's usage history across export and import (issue 16 §4): the usage log holds the
//! prowrestling rate and the reaction times of a pattern's score, so an export carries their
//! summary and an import writes usage-log rows that give back the same figures.
//!
//! The rows written are marked `conversation_id = 'kakeai-import'` and hold no message text:
//! `resolved` rows, of which `continued` say 'continued' and the rest 'replied' (never
//! 'dropout', which would make them dropout-review candidates), each with the average reaction
//! time — so `COUNT`, the continued share and `AVG` read back exactly as exported.

use crate::p;
use crate::store::sql::{Db, Kind, Value};
use serde::{Deserialize, Serialize};

use super::db::LogStats;
use super::{Pattern, PatternError};

/// The conversation id of usage-log rows written by an import.
pub const IMPORT_CONVERSATION: &str = "kakeai-import";

/// Most resolved uses one line may carry (each becomes a row).
pub const MAX_RESOLVED: u32 = 100_000;

/// What a score needs from the usage log.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UsageSummary {
    /// Uses with an outcome (replied, continued or dropout).
    pub resolved: u32,
    /// Of those, the banter went on.
    pub continued: u32,
    /// Mean seconds to the user's answer over replied and continued uses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub avg_reaction_time: Option<f64>,
}

impl UsageSummary {
    pub(crate) fn of(s: &LogStats) -> Option<UsageSummary> {
        (s.resolved > 0).then_some(UsageSummary {
            resolved: s.resolved,
            continued: s.continued,
            avg_reaction_time: s.avg_reaction,
        })
    }

    pub fn validate(&self) -> Result<(), PatternError> {
        let bad = |message: String| PatternError::Invalid {
            field: "usage",
            message,
        };
        if self.continued > self.resolved {
            return Err(bad(format!(
                "continued ({}) is more than resolved ({})",
                self.continued, self.resolved
            )));
        }
        if self.resolved > MAX_RESOLVED {
            return Err(bad(format!("resolved is above {MAX_RESOLVED}")));
        }
        match self.avg_reaction_time {
            Some(t) if !t.is_finite() || t < 0.0 => {
                Err(bad(format!("avg_reaction_time must be 0 or more, not {t}")))
            }
            Some(_) if self.resolved == 0 => Err(bad(
                "avg_reaction_time needs at least one resolved use".into(),
            )),
            _ => Ok(()),
        }
    }
}

/// Writes the usage-log rows that give `pattern` the exported summary back.
pub fn restore(db: Db<'_>, pattern: &Pattern, u: &UsageSummary) -> Result<(), PatternError> {
    u.validate()?;
    let times = reaction_times(db.kind(), u);
    let insert = "INSERT INTO prowrestling_usage_log
             (pattern_id, conversation_id, user_reaction, reaction_time_seconds, character)
         VALUES (?1, ?2, ?3, ?4, ?5)";
    for (i, time) in (0..u.resolved).zip(times) {
        let reaction = if i < u.continued {
            "continued"
        } else {
            "replied"
        };
        db.execute(
            insert,
            p![
                pattern.pattern_id,
                IMPORT_CONVERSATION,
                reaction,
                time,
                pattern.character.as_str(),
            ],
        )?;
    }
    Ok(())
}

/// Each restored row's reaction time. SQLite keeps the average itself in every row (its
/// INTEGER column holds a real as it is), so `AVG` reads it back exactly. PostgreSQL's column
/// is BIGINT: the average is spread as whole seconds over the fewest rows `k` whose sum it
/// makes whole (the rest NULL, which `AVG` skips) — exact for every average a PostgreSQL store
/// exports (a sum of whole seconds over its uses); otherwise over every row, to the nearest
/// `1/resolved` second.
fn reaction_times(kind: Kind, u: &UsageSummary) -> Vec<Value> {
    let n = u.resolved as usize;
    let Some(avg) = u.avg_reaction_time else {
        return vec![Value::Null; n];
    };
    if kind == Kind::Sqlite {
        return vec![Value::Real(avg); n];
    }
    let whole = |k: usize| {
        let total = avg * k as f64;
        ((total - total.round()).abs() < 1e-6).then_some(total.round() as i64)
    };
    let (k, total) = (1..=n)
        .find_map(|k| whole(k).map(|t| (k, t)))
        .unwrap_or((n, (avg * n as f64).round() as i64));
    let k_i64 = k.max(1) as i64;
    let (base, extra) = (total.div_euclid(k_i64), total.rem_euclid(k_i64));
    (0..n)
        .map(|i| match i as i64 {
            i if i < extra => Value::Int(base + 1),
            i if i < k_i64 => Value::Int(base),
            _ => Value::Null,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(resolved: u32, avg: Option<f64>) -> UsageSummary {
        UsageSummary {
            resolved,
            continued: 0,
            avg_reaction_time: avg,
        }
    }

    /// The restored rows' (sum, count) of non-NULL times.
    fn sum_count(times: &[Value]) -> (i64, i64) {
        times.iter().fold((0, 0), |(s, n), v| match v {
            Value::Int(i) => (s + i, n + 1),
            Value::Null => (s, n),
            other => panic!("{other:?}"),
        })
    }

    #[test]
    fn sqlite_keeps_the_average_itself() {
        let t = reaction_times(Kind::Sqlite, &summary(3, Some(12.345)));
        assert_eq!(t, vec![Value::Real(12.345); 3]);
        let none = reaction_times(Kind::Postgres, &summary(2, None));
        assert_eq!(none, vec![Value::Null; 2]);
    }

    #[test]
    fn postgresql_spreads_whole_seconds_over_the_fewest_rows() {
        let t = reaction_times(Kind::Postgres, &summary(3, Some(12.5)));
        assert_eq!(t, vec![Value::Int(13), Value::Int(12), Value::Null]);
        // Not a ratio of whole seconds over at most `resolved` rows: the nearest over all.
        let t = reaction_times(Kind::Postgres, &summary(2, Some(12.345)));
        assert_eq!(sum_count(&t), (25, 2));
        // Generated: any average a PostgreSQL store exports (whole seconds over m ≤ n uses)
        // comes back exactly.
        let mut rng = crate::test_rng::Rng::new(24);
        for _ in 0..2000 {
            let m = 1 + rng.below(30);
            let n = m + rng.below(30);
            let sum: i64 = (0..m).map(|_| rng.below(4000) as i64).sum();
            let avg = sum as f64 / m as f64;
            let t = reaction_times(Kind::Postgres, &summary(n as u32, Some(avg)));
            assert_eq!(t.len(), n);
            let (s, k) = sum_count(&t);
            assert_eq!(s * m as i64, sum * k, "{sum}/{m} over {n}: {t:?}");
        }
    }
}
