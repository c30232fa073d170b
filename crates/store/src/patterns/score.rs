//! The seed's overall score (§6.2) and S–D rank, as pure functions of a pattern's statistics.
//!
//! - `prowrestling_rate`: of a pattern's resolved uses (usage-log rows with an outcome), the
//!   share after which the banter went on: the user answered within the dropout window *and*
//!   spoke at least once more without a silence longer than the window in between
//!   (`user_reaction = 'continued'`). 0 when no use is resolved.
//! - `avg_reaction_time`: mean `reaction_time_seconds` of the successful uses; the reaction term
//!   `1 − avg/300` is clamped to [0, 1] and is 0 when there is no successful use to time.
//! - `confidence = n / (n + 5)` with n = success_count + failure_count, the uses whose outcome
//!   is known: 0 with no evidence, ½ at five outcomes, 0.8 at twenty, 0.95 at ninety-five. A
//!   pattern reaches S only with a long, good record.

use serde::{Deserialize, Serialize};

/// The k in `n / (n + k)`: outcomes needed for half confidence.
pub const CONFIDENCE_K: f64 = 5.0;

/// Reaction time (seconds) at which the speed term reaches 0 (seed §6.2).
pub const REACTION_SCALE_SECS: f64 = 300.0;

/// A score this close below a cut-off reaches it: sums like 0.45·x + 0.25·y … land a hair
/// under values they equal on paper.
const EPS: f64 = 1e-9;

#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct ScoreInputs {
    pub success_rate: f64,
    pub prowrestling_rate: f64,
    pub like_rate: f64,
    /// `None` when no successful use has been timed.
    pub avg_reaction_time: Option<f64>,
    /// Uses with a known outcome (success_count + failure_count).
    pub observed: u32,
}

/// `n / (n + k)`.
pub fn confidence(observed: u32) -> f64 {
    let n = f64::from(observed);
    n / (n + CONFIDENCE_K)
}

/// The speed term's factor, `1 − avg/300` clamped to [0, 1].
pub fn reaction_term(avg_reaction_time: Option<f64>) -> f64 {
    match avg_reaction_time {
        Some(t) if t.is_finite() => (1.0 - t / REACTION_SCALE_SECS).clamp(0.0, 1.0),
        _ => 0.0,
    }
}

/// Seed §6.2: (success·0.45 + prowrestling·0.25 + like·0.20 + speed·0.10) × confidence.
pub fn score(s: &ScoreInputs) -> f64 {
    let unit = |x: f64| {
        if x.is_finite() {
            x.clamp(0.0, 1.0)
        } else {
            0.0
        }
    };
    let base = unit(s.success_rate) * 0.45
        + unit(s.prowrestling_rate) * 0.25
        + unit(s.like_rate) * 0.20
        + reaction_term(s.avg_reaction_time) * 0.10;
    base * confidence(s.observed)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Rank {
    S,
    A,
    B,
    C,
    D,
}

impl Rank {
    pub fn as_str(self) -> &'static str {
        match self {
            Rank::S => "S",
            Rank::A => "A",
            Rank::B => "B",
            Rank::C => "C",
            Rank::D => "D",
        }
    }
}

/// S ≥ 0.80, A ≥ 0.70, B ≥ 0.60, C ≥ 0.50, else D (seed §6.2).
pub fn rank(score: f64) -> Rank {
    let s = score + EPS;
    if s >= 0.80 {
        Rank::S
    } else if s >= 0.70 {
        Rank::A
    } else if s >= 0.60 {
        Rank::B
    } else if s >= 0.50 {
        Rank::C
    } else {
        Rank::D
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rank_cut_offs_are_inclusive() {
        let table = [
            (1.0, Rank::S),
            (0.80, Rank::S),
            (0.7999, Rank::A),
            (0.70, Rank::A),
            (0.6999, Rank::B),
            (0.60, Rank::B),
            (0.5999, Rank::C),
            (0.50, Rank::C),
            (0.4999, Rank::D),
            (0.0, Rank::D),
        ];
        for (s, want) in table {
            assert_eq!(rank(s), want, "score {s}");
        }
    }

    #[test]
    fn a_sum_that_equals_a_cut_off_on_paper_reaches_it() {
        // Every weight times 0.5 is 0.5 on paper, 0.49999999999999994 in binary.
        let on_paper = 0.45 * 0.5 + 0.25 * 0.5 + 0.20 * 0.5 + 0.10 * 0.5;
        assert!(on_paper < 0.50, "the float sum really is below the cut-off");
        assert_eq!(rank(on_paper), Rank::C);
        assert_eq!(rank(0.50 - 1e-6), Rank::D);
        assert_eq!(rank(0.80 - 1e-6), Rank::A);
    }

    #[test]
    fn confidence_grows_with_outcomes() {
        assert_eq!(confidence(0), 0.0);
        assert_eq!(confidence(5), 0.5);
        assert_eq!(confidence(20), 0.8);
        assert!(confidence(95) > 0.949 && confidence(95) < 0.951);
        assert!(confidence(1000) < 1.0);
    }

    #[test]
    fn reaction_term_is_clamped() {
        assert_eq!(reaction_term(Some(0.0)), 1.0);
        assert_eq!(reaction_term(Some(150.0)), 0.5);
        assert_eq!(reaction_term(Some(300.0)), 0.0);
        assert_eq!(reaction_term(Some(900.0)), 0.0);
        assert_eq!(reaction_term(Some(-30.0)), 1.0);
        assert_eq!(reaction_term(None), 0.0);
        assert_eq!(reaction_term(Some(f64::NAN)), 0.0);
    }

    #[test]
    fn score_weights_follow_the_seed() {
        let perfect = ScoreInputs {
            success_rate: 1.0,
            prowrestling_rate: 1.0,
            like_rate: 1.0,
            avg_reaction_time: Some(0.0),
            observed: 20,
        };
        assert!((score(&perfect) - 0.8).abs() < 1e-12);
        assert_eq!(rank(score(&perfect)), Rank::S);
        let only_success = ScoreInputs {
            success_rate: 1.0,
            observed: 20,
            ..ScoreInputs::default()
        };
        assert!((score(&only_success) - 0.45 * 0.8).abs() < 1e-12);
        // Each term alone, at full confidence-ish (n = 95 → 0.95).
        let each = [
            (
                ScoreInputs {
                    prowrestling_rate: 1.0,
                    observed: 95,
                    ..ScoreInputs::default()
                },
                0.25,
            ),
            (
                ScoreInputs {
                    like_rate: 1.0,
                    observed: 95,
                    ..ScoreInputs::default()
                },
                0.20,
            ),
            (
                ScoreInputs {
                    avg_reaction_time: Some(150.0),
                    observed: 95,
                    ..ScoreInputs::default()
                },
                0.05,
            ),
        ];
        for (inputs, weight) in each {
            assert!((score(&inputs) - weight * 0.95).abs() < 1e-12, "{inputs:?}");
        }
        // No evidence, no score.
        let unobserved = ScoreInputs {
            observed: 0,
            ..perfect
        };
        assert_eq!(score(&unobserved), 0.0);
    }
}
