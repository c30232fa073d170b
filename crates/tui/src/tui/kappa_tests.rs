use super::*;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

/// Pairs from a 2×2 table [[a, b], [c, d]] (rows: first rater, columns: second).
fn table2(a: usize, b: usize, c: usize, d: usize) -> Vec<(usize, usize)> {
    let mut v = vec![(0, 0); a];
    v.extend(vec![(0, 1); b]);
    v.extend(vec![(1, 0); c]);
    v.extend(vec![(1, 1); d]);
    v
}

#[test]
fn hand_computed_examples() {
    // 20 / 5 / 10 / 15 of 50: po = 0.70, pe = 0.5·0.6 + 0.5·0.4 = 0.50, κ = 0.40.
    let a = cohen(&table2(20, 5, 10, 15), 2).unwrap();
    assert!(close(a.raw, 0.70));
    assert!(close(a.kappa.unwrap(), 0.40));
    assert_eq!(a.n, 50);
    // 45 / 15 / 25 / 15 of 100: po = 0.60, pe = 0.6·0.7 + 0.4·0.3 = 0.54, κ = 0.06/0.46.
    let a = cohen(&table2(45, 15, 25, 15), 2).unwrap();
    assert!(close(a.kappa.unwrap(), 0.06 / 0.46));
    // Three categories: diagonal 4, 3, 2 and one (0→2) of 10.
    // po = 0.9; rows 5,3,2; columns 4,3,3 → pe = (20 + 9 + 6)/100 = 0.35; κ = 0.55/0.65.
    let mut p = vec![(0, 0); 4];
    p.extend(vec![(1, 1); 3]);
    p.extend(vec![(2, 2); 2]);
    p.push((0, 2));
    let a = cohen(&p, 3).unwrap();
    assert!(close(a.kappa.unwrap(), 0.55 / 0.65));
    // Complete disagreement on a balanced table: κ = -1.
    assert!(close(
        cohen(&table2(0, 5, 5, 0), 2).unwrap().kappa.unwrap(),
        -1.0
    ));
}

/// The next number of a seeded generator (fastrand) whose state is `seed`.
fn lcg(seed: &mut u64) -> usize {
    let mut rng = fastrand::Rng::with_seed(*seed);
    *seed = rng.u64(..);
    (*seed >> 33) as usize
}

#[test]
fn properties_over_many_tables() {
    let mut seed = 7u64;
    for _ in 0..2000 {
        let k = 2 + lcg(&mut seed) % 3;
        let n = 1 + lcg(&mut seed) % 40;
        let pairs: Vec<(usize, usize)> = (0..n)
            .map(|_| (lcg(&mut seed) % k, lcg(&mut seed) % k))
            .collect();
        let a = cohen(&pairs, k).unwrap();
        // Symmetric in the raters.
        let swapped: Vec<_> = pairs.iter().map(|&(x, y)| (y, x)).collect();
        let b = cohen(&swapped, k).unwrap();
        assert_eq!(a.kappa.is_some(), b.kappa.is_some());
        if let (Some(x), Some(y)) = (a.kappa, b.kappa) {
            assert!(close(x, y));
            // Bounded above by 1, and never above the raw agreement's own scale.
            assert!((-1.0 - 1e-9..=1.0 + 1e-9).contains(&x), "{x}");
        }
        assert!((0.0..=1.0).contains(&a.raw));
        assert_eq!(a.n, n);
        // A rater compared with herself: κ = 1 whenever two labels occur, else undefined.
        let own: Vec<_> = pairs.iter().map(|&(x, _)| (x, x)).collect();
        let s = cohen(&own, k).unwrap();
        assert!(close(s.raw, 1.0));
        let used = {
            let mut l: Vec<_> = pairs.iter().map(|p| p.0).collect();
            l.sort();
            l.dedup();
            l.len()
        };
        match s.kappa {
            Some(x) => assert!(used > 1 && close(x, 1.0)),
            None => assert_eq!(used, 1),
        }
        // Relabelling the categories the same way on both sides changes nothing.
        let perm: Vec<_> = pairs.iter().map(|&(x, y)| (k - 1 - x, k - 1 - y)).collect();
        let p = cohen(&perm, k).unwrap();
        assert!(close(p.raw, a.raw));
        if let (Some(x), Some(y)) = (a.kappa, p.kappa) {
            assert!(close(x, y));
        }
    }
    assert!(cohen(&[], 2).is_none());
}

fn entry(turn: u32, who: &str, up: bool) -> LogEntry {
    (
        turn,
        crate::store::ActionKind::Thumb,
        serde_json::json!({"up": up}),
        Some(who.to_string()),
        String::new(),
    )
}

/// α among reviewers is the annotate module's nominal α over the same units: three reviewers
/// with missing marks, generated; fewer than two reviewers give no α rows.
#[test]
fn alpha_among_reviewers_uses_every_reviewer_and_allows_missing_marks() {
    let rules = crate::director::RuleSet::builtin().unwrap();
    let lines: Vec<(&str, &str)> = (0..8)
        .map(|i| {
            if i % 2 == 0 {
                ("yana", "ねえ、見て！あれすごくない？")
            } else {
                ("ayu", "はい、姉様。とても綺麗ですね。")
            }
        })
        .collect();
    let turns = crate::tui::tuning::tests::view(&rules, &lines, None).turns;
    let mut seed = 11u64;
    for _ in 0..200 {
        let mut log = Vec::new();
        let mut units: Vec<Vec<bool>> = vec![Vec::new(); 8];
        for who in ["花子", "taro", "ken"] {
            for t in 1..=8u32 {
                if lcg(&mut seed).is_multiple_of(3) {
                    continue; // this reviewer did not judge the turn
                }
                let up = lcg(&mut seed).is_multiple_of(2);
                log.push(entry(t, who, up));
                units[(t - 1) as usize].push(!up);
            }
        }
        let rows = alpha_table(&turns, &log);
        let want = nominal(&units);
        match want {
            Some(a) => {
                assert_eq!(rows[0].1, a);
                assert_eq!(rows[0].0, "all 3 reviewers");
            }
            None => assert!(rows.iter().all(|r| !r.0.starts_with("all"))),
        }
    }
    let one: Vec<LogEntry> = (1..=8).map(|t| entry(t, "花子", t % 2 == 0)).collect();
    assert!(alpha_table(&turns, &one).is_empty());
}
