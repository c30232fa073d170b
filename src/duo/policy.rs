//! The retry policy's pure parts: guidance built from findings, futile-retry detection and the
//! choice of an attempt when every attempt failed (seed 001 §1, seed-origins §10 item 5).

use super::config::Exhaustion;
use super::records::AttemptRecord;
use crate::director::{Finding, Status, Verdict};

/// Guidance lines for a regeneration: each RETRY reason with its suggestion, worst first.
pub fn retry_guidance(v: &Verdict) -> Vec<String> {
    let mut fs: Vec<&Finding> = v
        .findings
        .iter()
        .filter(|f| f.status >= Status::Warn)
        .collect();
    fs.sort_by_key(|f| std::cmp::Reverse(f.status));
    let mut out =
        vec!["前回の案は採用されませんでした。次の点を直して言い直してください。".to_string()];
    out.extend(fs.iter().map(|f| line(f)));
    out
}

/// The intervention a committed WARN (or an exhausted RETRY) carries into the next turn.
pub fn intervention(v: &Verdict) -> Vec<String> {
    v.findings
        .iter()
        .filter(|f| f.status >= Status::Warn && f.status != Status::Unscored)
        .map(|f| format!("前のターンの指摘: {}", line(f)))
        .collect()
}

fn line(f: &Finding) -> String {
    if f.suggestion.is_empty() {
        f.message.clone()
    } else {
        format!("{} {}", f.message, f.suggestion)
    }
}

/// The RETRY reasons of a verdict, as (rule, message) pairs, for futility checks.
fn retry_reasons(v: &Verdict) -> Vec<(String, String)> {
    let mut r: Vec<(String, String)> = v
        .findings
        .iter()
        .filter(|f| f.status == Status::Retry)
        .map(|f| (f.rule.as_str().to_string(), f.message.clone()))
        .collect();
    r.sort();
    r
}

/// Two RETRY attempts in a row failing the same rules for the same reasons: regenerating again
/// would burn another call for nothing (duo-talk's NoveltyGuard loop, seed-origins §1.10 item 6).
pub fn is_futile(prev: &Verdict, cur: &Verdict) -> bool {
    let a = retry_reasons(prev);
    !a.is_empty() && a == retry_reasons(cur)
}

/// Which of the cycle's attempts to commit when all were RETRY (`Hold` picks none). `Best`:
/// the least severe verdict, then the fewest RETRY findings, then the highest judge mean.
pub fn choose(attempts: &[AttemptRecord], policy: Exhaustion) -> Option<usize> {
    match policy {
        Exhaustion::Hold => None,
        Exhaustion::Last => attempts.len().checked_sub(1),
        Exhaustion::Best => (0..attempts.len()).min_by(|&i, &j| {
            let (a, b) = (&attempts[i], &attempts[j]);
            a.verdict
                .status
                .cmp(&b.verdict.status)
                .then_with(|| a.severe_findings().cmp(&b.severe_findings()))
                .then_with(|| b.judge_mean().total_cmp(&a.judge_mean()))
                .then_with(|| i.cmp(&j))
        }),
    }
}
