//! Krippendorff's α for nominal labels with missing data (issue 24 §2: agreement beyond pairs).
//! Each unit (a turn, a compared turn) carries the labels of whichever reviewers judged it;
//! units with fewer than two labels cannot be paired and are left out. α = 1 − D_o / D_e from
//! the coincidence matrix (Krippendorff 2011, "Computing Krippendorff's Alpha-Reliability").
//! Pure.

use std::collections::BTreeMap;

/// α and what it stands on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Alpha {
    /// None when expected disagreement is zero (every pairable label is the same): α is
    /// undefined, never shown as 1.
    pub alpha: Option<f64>,
    /// Units with at least two labels.
    pub units: usize,
    /// Pairable labels (n in the formula).
    pub values: usize,
}

/// α over `units`, each a list of labels (one per reviewer who judged it; missing reviewers
/// simply absent). None when no unit has two labels.
pub fn nominal<L: Ord + Clone>(units: &[Vec<L>]) -> Option<Alpha> {
    let mut o: BTreeMap<(L, L), f64> = BTreeMap::new();
    let mut pairable = 0;
    for u in units.iter().filter(|u| u.len() >= 2) {
        pairable += 1;
        let m = u.len() as f64;
        for (i, a) in u.iter().enumerate() {
            for (j, b) in u.iter().enumerate() {
                if i != j {
                    *o.entry((a.clone(), b.clone())).or_default() += 1.0 / (m - 1.0);
                }
            }
        }
    }
    if pairable == 0 {
        return None;
    }
    let mut n_c: BTreeMap<L, f64> = BTreeMap::new();
    for ((c, _), v) in &o {
        *n_c.entry(c.clone()).or_default() += v;
    }
    let n: f64 = n_c.values().sum();
    let observed: f64 = o.iter().filter(|((c, k), _)| c != k).map(|(_, v)| v).sum();
    let totals: Vec<f64> = n_c.values().copied().collect();
    let mut expected = 0.0;
    for (i, a) in totals.iter().enumerate() {
        for (j, b) in totals.iter().enumerate() {
            if i != j {
                expected += a * b;
            }
        }
    }
    let alpha = (expected > 0.0).then(|| 1.0 - (n - 1.0) * observed / expected);
    Some(Alpha {
        alpha,
        units: pairable,
        values: n.round() as usize,
    })
}

/// `α 0.74 (12 items)`, or `α — (…)` with the reason when it cannot be computed.
pub fn describe(a: Option<Alpha>) -> String {
    match a {
        None => "α — (no item judged by two reviewers yet)".into(),
        Some(Alpha {
            alpha: None, units, ..
        }) => {
            format!(
                "α — (every label the same on {units} items: agreement by chance cannot be told apart)"
            )
        }
        Some(Alpha {
            alpha: Some(x),
            units,
            ..
        }) => format!(
            "α {x:.2} ({units} item{})",
            if units == 1 { "" } else { "s" }
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Krippendorff (2011), the nominal example: 4 observers, 12 units, missing values.
    /// α = 0.743 (0.743421052631579 by the `krippendorff` Python package).
    #[test]
    fn the_textbook_example() {
        let a = [
            Some(1),
            Some(2),
            Some(3),
            Some(3),
            Some(2),
            Some(1),
            Some(4),
            Some(1),
            Some(2),
            None,
            None,
            None,
        ];
        let b = [
            Some(1),
            Some(2),
            Some(3),
            Some(3),
            Some(2),
            Some(2),
            Some(4),
            Some(1),
            Some(2),
            Some(5),
            None,
            Some(3),
        ];
        let c = [
            None,
            Some(3),
            Some(3),
            Some(3),
            Some(2),
            Some(3),
            Some(4),
            Some(2),
            Some(2),
            Some(5),
            Some(1),
            None,
        ];
        let d = [
            Some(1),
            Some(2),
            Some(3),
            Some(3),
            Some(2),
            Some(4),
            Some(4),
            Some(1),
            Some(2),
            Some(5),
            Some(1),
            None,
        ];
        let units: Vec<Vec<i32>> = (0..12)
            .map(|i| [a[i], b[i], c[i], d[i]].into_iter().flatten().collect())
            .collect();
        let r = nominal(&units).unwrap();
        assert!(
            (r.alpha.unwrap() - 0.743_421_052_631_579).abs() < 1e-12,
            "{r:?}"
        );
        assert_eq!(r.units, 11, "unit 12 has one value");
        assert_eq!(r.values, 40);
    }

    /// Seeded, for generated data.
    fn rng(seed: u64) -> impl FnMut(u64) -> u64 {
        crate::test_rng::below_u64(seed)
    }

    fn data(seed: u64) -> Vec<Vec<u8>> {
        let mut r = rng(seed);
        let mut out = Vec::new();
        for _ in 0..30 {
            let truth = r(3) as u8;
            let mut unit = Vec::new();
            for _ in 0..4 {
                if r(4) == 0 {
                    continue; // this reviewer did not judge the item
                }
                unit.push(if r(5) == 0 { r(3) as u8 } else { truth });
            }
            out.push(unit);
        }
        out
    }

    #[test]
    fn order_and_label_names_do_not_matter() {
        for seed in 1..40 {
            let d = data(seed);
            let base = nominal(&d).unwrap().alpha;
            let mut rev: Vec<Vec<u8>> = d
                .iter()
                .rev()
                .map(|u| u.iter().rev().copied().collect())
                .collect();
            rev.rotate_left(7);
            assert_eq!(
                nominal(&rev).unwrap().alpha.map(|x| (x * 1e9).round()),
                base.map(|x| (x * 1e9).round())
            );
            let renamed: Vec<Vec<char>> = d
                .iter()
                .map(|u| u.iter().map(|v| ['甲', '乙', '丙'][*v as usize]).collect())
                .collect();
            let ra = nominal(&renamed).unwrap().alpha;
            assert!((ra.unwrap() - base.unwrap()).abs() < 1e-12, "seed {seed}");
            assert!(base.unwrap() <= 1.0 + 1e-12);
        }
    }

    #[test]
    fn perfect_agreement_is_one_and_no_variation_is_undefined() {
        let units = vec![
            vec!["up", "up"],
            vec!["down", "down", "down"],
            vec!["up", "up"],
        ];
        assert_eq!(nominal(&units).unwrap().alpha, Some(1.0));
        let same = vec![vec!["up", "up"], vec!["up", "up", "up"]];
        assert_eq!(nominal(&same).unwrap().alpha, None);
        assert!(describe(nominal(&same)).contains("α —"));
        assert!(nominal::<u8>(&[vec![1], vec![]]).is_none());
        assert!(describe(None).contains("two reviewers"));
    }

    #[test]
    fn systematic_disagreement_is_negative() {
        let units: Vec<Vec<u8>> = (0..10).map(|i| vec![i % 2, 1 - i % 2]).collect();
        assert!(nominal(&units).unwrap().alpha.unwrap() < 0.0);
    }
}
