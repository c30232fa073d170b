//! Agreement figures: Cohen's κ of usable/unusable, folds by run, the sign test over the
//! turns a change flips, and per-rule precision/recall of RETRY.

use std::collections::BTreeMap;

use sha2::{Digest, Sha256};

/// Cohen's κ between predictions and labels (true = usable). 0 when chance agreement is
/// total (one class only on both sides), so a constant predictor never scores.
pub fn kappa(pairs: impl IntoIterator<Item = (bool, bool)>) -> f64 {
    let (mut n, mut agree, mut p_yes, mut l_yes) = (0.0, 0.0, 0.0, 0.0);
    for (p, l) in pairs {
        n += 1.0;
        agree += f64::from(u8::from(p == l));
        p_yes += f64::from(u8::from(p));
        l_yes += f64::from(u8::from(l));
    }
    if n == 0.0 {
        return 0.0;
    }
    let po = agree / n;
    let pe = (p_yes / n) * (l_yes / n) + (1.0 - p_yes / n) * (1.0 - l_yes / n);
    if (1.0 - pe).abs() < 1e-12 {
        0.0
    } else {
        (po - pe) / (1.0 - pe)
    }
}

/// Assigns each run to one of `k` folds (a run is never split), in an order fixed by a hash
/// of the run id so the folds do not follow the order runs were made in. Returns the fold of
/// every case, and the number of folds actually used (at most the number of runs).
pub fn folds_by_run(runs: &[&str], k: usize) -> (Vec<usize>, usize) {
    let mut ids: Vec<&str> = runs.to_vec();
    ids.sort();
    ids.dedup();
    ids.sort_by_key(|r| Sha256::digest(r.as_bytes()).to_vec());
    let k = k.min(ids.len()).max(1);
    let fold_of: BTreeMap<&str, usize> = ids.iter().enumerate().map(|(i, r)| (*r, i % k)).collect();
    (runs.iter().map(|r| fold_of[r]).collect(), k)
}

/// One-sided sign test: the probability of at least `wins` successes in `wins + losses` fair
/// coin flips.
pub fn sign_test(wins: usize, losses: usize) -> f64 {
    let n = wins + losses;
    if n == 0 {
        return 1.0;
    }
    // Sum of C(n, i) / 2^n for i ≥ wins, in logs to stay finite for large n.
    let ln_half_n = -(n as f64) * std::f64::consts::LN_2;
    let mut ln_c = 0.0; // ln C(n, 0)
    let mut p = 0.0;
    for i in 0..=n {
        if i >= wins {
            p += (ln_c + ln_half_n).exp();
        }
        ln_c += ((n - i) as f64).ln() - ((i + 1) as f64).ln();
    }
    p.min(1.0)
}

/// Mean and sample standard deviation.
pub fn mean_sd(xs: &[f64]) -> (f64, f64) {
    if xs.is_empty() {
        return (0.0, 0.0);
    }
    let n = xs.len() as f64;
    let m = xs.iter().sum::<f64>() / n;
    let var = if xs.len() > 1 {
        xs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1.0)
    } else {
        0.0
    };
    (m, var.sqrt())
}

/// Precision and recall of "this rule said RETRY" for "the label says unusable".
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
pub struct PrecisionRecall {
    pub retries: usize,
    pub precision: Option<f64>,
    pub recall: Option<f64>,
}

/// From (rule said RETRY, label unusable) pairs.
pub fn precision_recall(pairs: impl IntoIterator<Item = (bool, bool)>) -> PrecisionRecall {
    let (mut tp, mut fp, mut pos) = (0usize, 0usize, 0usize);
    for (retry, unusable) in pairs {
        tp += usize::from(retry && unusable);
        fp += usize::from(retry && !unusable);
        pos += usize::from(unusable);
    }
    PrecisionRecall {
        retries: tp + fp,
        precision: (tp + fp > 0).then(|| tp as f64 / (tp + fp) as f64),
        recall: (pos > 0).then(|| tp as f64 / pos as f64),
    }
}
