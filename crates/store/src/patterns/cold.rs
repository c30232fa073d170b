//! Cold start: how a pattern with no outcomes yet gets its first uses, so seed 000's loop —
//! dropouts → drafts → register → the bot uses them → outcomes — closes without faking
//! outcomes. Seed 000 §6.3 alone uses only patterns whose success_rate reaches 0.7, and a new
//! pattern's rate is 0, so it could never earn one.
//!
//! Each pattern's success probability has the posterior Beta(1 + successes, 1 + failures)
//! (a uniform prior). Its upper confidence bound is the posterior mean plus
//! [`Z`] posterior standard deviations. A pattern is **on trial** while it has been used fewer
//! than [`TRIAL_USES`] times, does not yet qualify by the seed's rule, and its bound still
//! reaches the bar (0.7): there is still a fair chance its true rate clears the bar. When one is
//! on trial, the bot uses it (fewest uses first, then the highest bound, the most relevant to
//! the message, the lowest id) before the seed's best match; otherwise the seed's rule stands.
//! A new pattern: bound 0.87 → tried. One failure: 0.72 → tried again. Two failures and no
//! success (0.57), or one success in four (0.63): below 0.7 → dropped. Exploration is bounded: at most `TRIAL_USES` uses per
//! pattern, then only its real rate counts. Deterministic (no random draws), so tests and
//! replays pick the same pattern.

use crate::p;
use crate::store::sql::Db;

use super::best::{BestMatch, BestQuery, best_match, relevance};
use super::db::{COLUMNS, from_row};
use super::{Pattern, PatternError};

/// Uses within which a pattern is on trial.
pub const TRIAL_USES: u32 = 10;
/// Posterior standard deviations above the mean (one-sided 95 %).
pub const Z: f64 = 1.645;

/// Mean and standard deviation of Beta(1 + s, 1 + f).
pub fn posterior(successes: u32, failures: u32) -> (f64, f64) {
    let (a, b) = (1.0 + successes as f64, 1.0 + failures as f64);
    let n = a + b;
    (a / n, (a * b / (n * n * (n + 1.0))).sqrt())
}

/// The upper confidence bound on the success rate.
pub fn upper_bound(successes: u32, failures: u32) -> f64 {
    let (m, sd) = posterior(successes, failures);
    (m + Z * sd).min(1.0)
}

/// Whether `p` is on trial against the bar `min_success`.
pub fn on_trial(p: &Pattern, min_success: f64) -> bool {
    let outcomes = p.success_count + p.failure_count;
    let established = outcomes > 0 && p.success_rate >= min_success - 1e-12;
    !established
        && p.used_count < TRIAL_USES
        && upper_bound(p.success_count, p.failure_count) >= min_success
}

/// The pattern the bot uses, and whether it was chosen on trial.
#[derive(Debug, Clone, PartialEq)]
pub struct Choice {
    pub found: BestMatch,
    pub trial: bool,
}

/// A pattern on trial if there is one, else seed 000 §6.3's best match.
pub fn choose(conn: Db<'_>, q: &BestQuery) -> Result<Option<Choice>, PatternError> {
    if let Some(found) = trial(conn, q)? {
        return Ok(Some(Choice { found, trial: true }));
    }
    Ok(best_match(conn, q)?.map(|found| Choice {
        found,
        trial: false,
    }))
}

fn trial(conn: Db<'_>, q: &BestQuery) -> Result<Option<BestMatch>, PatternError> {
    let rows = conn.query_map(
        &format!(
            "SELECT {COLUMNS} FROM prowrestling_patterns WHERE character = ?1 AND used_count < ?2"
        ),
        p![q.character.as_str(), TRIAL_USES],
        from_row,
    )?;
    let mut best: Option<(u32, f64, f64, Pattern)> = None;
    for p in rows {
        if !on_trial(&p, q.min_success) {
            continue;
        }
        let ucb = upper_bound(p.success_count, p.failure_count);
        let rel = relevance(q.message, &p.user_message_example);
        let better = best.as_ref().is_none_or(|(u, b, r, bp)| {
            p.used_count
                .cmp(u)
                .reverse()
                .then(ucb.total_cmp(b))
                .then(rel.total_cmp(r))
                .then(bp.pattern_id.cmp(&p.pattern_id))
                .is_gt()
        });
        if better {
            best = Some((p.used_count, ucb, rel, p));
        }
    }
    Ok(best.map(|(_, _, relevance, pattern)| BestMatch {
        match_key: pattern.success_rate * 0.6 + pattern.like_rate * 0.4,
        relevance,
        type_matched: false,
        pattern,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bound_drops_below_the_bar_as_failures_come() {
        assert!(upper_bound(0, 0) >= 0.7);
        assert!(upper_bound(0, 1) >= 0.7);
        assert!(upper_bound(0, 2) < 0.7);
        assert!(upper_bound(1, 3) < 0.7);
        assert!(upper_bound(2, 1) >= 0.7);
        // Generated: the bound never falls below the posterior mean and shrinks with data.
        for s in 0..30 {
            for f in 0..30 {
                let (m, _) = posterior(s, f);
                let u = upper_bound(s, f);
                assert!(u >= m && u <= 1.0);
                assert!(upper_bound(s, f + 1) <= u + 1e-12);
            }
        }
    }
}
