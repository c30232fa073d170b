//! The statistics a comparison reports, computed exactly or in closed form (no sampling):
//! the two-sided sign test (exact binomial, p = 0.5) over paired turns, Wilson score intervals
//! for rates, and Student-t intervals for means (unpaired mode).

/// Two-sided exact sign test: `better` and `worse` paired turns (ties dropped). The p-value is
/// P(X ≤ min) + P(X ≥ max) for X ~ Binomial(n, ½), capped at 1; 1 when there is no untied pair.
pub fn sign_test(better: usize, worse: usize) -> f64 {
    let n = better + worse;
    if n == 0 {
        return 1.0;
    }
    let k = better.min(worse);
    // Σ_{i≤k} C(n,i) / 2ⁿ, in log space so long runs do not overflow.
    let ln_half_n = -(n as f64) * std::f64::consts::LN_2;
    let tail: f64 = (0..=k).map(|i| (ln_choose(n, i) + ln_half_n).exp()).sum();
    (2.0 * tail).min(1.0)
}

fn ln_choose(n: usize, k: usize) -> f64 {
    ln_factorial(n) - ln_factorial(k) - ln_factorial(n - k)
}

fn ln_factorial(n: usize) -> f64 {
    (2..=n).map(|i| (i as f64).ln()).sum()
}

/// Wilson score interval for `hits` out of `n` at 95 % (z = 1.96); (0, 1) when n = 0.
pub fn wilson(hits: usize, n: usize) -> (f64, f64) {
    if n == 0 {
        return (0.0, 1.0);
    }
    let z = 1.959_963_984_540_054_f64;
    let (n, p) = (n as f64, hits as f64 / n as f64);
    let denom = 1.0 + z * z / n;
    let centre = (p + z * z / (2.0 * n)) / denom;
    let half = z * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt() / denom;
    ((centre - half).max(0.0), (centre + half).min(1.0))
}

/// Mean and 95 % Student-t interval; None for an empty sample, (mean, mean) for one value.
pub fn mean_ci(xs: &[f64]) -> Option<(f64, f64, f64)> {
    if xs.is_empty() {
        return None;
    }
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    if xs.len() == 1 {
        return Some((mean, mean, mean));
    }
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    let half = t_975(xs.len() - 1) * (var / n).sqrt();
    Some((mean, mean - half, mean + half))
}

/// The 97.5 % quantile of Student's t with `df` degrees of freedom (table to 30, then the
/// normal approximation with a 1/df correction, within 0.002 of the exact value).
fn t_975(df: usize) -> f64 {
    const T: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    match df {
        0 => f64::INFINITY,
        1..=30 => T[df - 1],
        _ => 1.959_964 + 2.4 / df as f64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn sign_test_matches_hand_computed_binomials() {
        // n = 6, all one way: 2 · (1/64) = 0.03125.
        assert!(close(sign_test(0, 6), 0.03125));
        assert!(close(sign_test(6, 0), 0.03125));
        // n = 5, all one way: 2/32 = 0.0625 (not significant at 0.05).
        assert!(close(sign_test(5, 0), 0.0625));
        // n = 10, 2 vs 8: 2 · (1 + 10 + 45)/1024 = 112/1024.
        assert!(close(sign_test(2, 8), 112.0 / 1024.0));
        // n = 12, 3 vs 9: 2 · (1 + 12 + 66 + 220)/4096 = 598/4096.
        assert!(close(sign_test(9, 3), 598.0 / 4096.0));
        // Balanced: capped at 1.
        assert!(close(sign_test(4, 4), 1.0));
        assert!(close(sign_test(0, 0), 1.0));
        assert!(close(sign_test(0, 1), 1.0));
    }

    #[test]
    fn sign_test_is_symmetric_and_monotone() {
        for n in 1..40usize {
            let mut last = 1.0;
            for k in (0..=n / 2).rev() {
                let p = sign_test(k, n - k);
                assert!(close(p, sign_test(n - k, k)));
                assert!((0.0..=1.0).contains(&p));
                // Fewer of the minority side → smaller p.
                assert!(p <= last + 1e-12, "n={n} k={k}");
                last = p;
            }
        }
        // Large n stays finite.
        assert!(sign_test(300, 700) < 1e-20);
    }

    #[test]
    fn wilson_interval_known_values() {
        // 5/10: centre 0.5, the textbook interval (0.2366, 0.7634).
        let (lo, hi) = wilson(5, 10);
        assert!(
            (lo - 0.2366).abs() < 1e-4 && (hi - 0.7634).abs() < 1e-4,
            "{lo} {hi}"
        );
        let (lo, hi) = wilson(0, 10);
        assert!(lo == 0.0 && (hi - 0.2775).abs() < 1e-4, "{hi}");
        assert_eq!(wilson(0, 0), (0.0, 1.0));
    }

    #[test]
    fn t_interval_known_values() {
        let (m, lo, hi) = mean_ci(&[1.0, 2.0, 3.0, 4.0]).unwrap();
        // sd = 1.2910, se = 0.6455, t(3) = 3.182 → half 2.054.
        assert!(close(m, 2.5));
        assert!((hi - lo - 2.0 * 3.182 * 0.645_497).abs() < 1e-4);
        assert_eq!(mean_ci(&[]), None);
        assert_eq!(mean_ci(&[3.0]), Some((3.0, 3.0, 3.0)));
    }
}
