//! The rules pane's guard: a WARN threshold may not pass its RETRY threshold (lines, scatter
//! sentences and topics), nor the judge's RETRY cut-off its PASS cut-off. An edit that would
//! cross them is refused and the pane says which pair.

use crate::config::ConfigError;
use crate::director::ruleset::RuleData;

fn refuse(message: String) -> ConfigError {
    ConfigError::Invalid {
        path: "rules pane".into(),
        at: None,
        key: None,
        message,
    }
}

/// Ok when every WARN threshold is at most its RETRY threshold.
pub fn check_order(d: &RuleData) -> Result<(), ConfigError> {
    let pairs = [
        ("lines.warn", d.lines.warn, "lines.retry", d.lines.retry),
        (
            "scatter.warn_sentences",
            d.scatter.warn_sentences,
            "scatter.retry_sentences",
            d.scatter.retry_sentences,
        ),
        (
            "scatter.warn_topics",
            d.scatter.warn_topics,
            "scatter.retry_topics",
            d.scatter.retry_topics,
        ),
    ];
    for (wk, w, rk, r) in pairs {
        if w > r {
            return Err(refuse(format!(
                "{wk} {w} would be above {rk} {r}: a WARN threshold cannot pass its RETRY threshold (edit NOT applied)"
            )));
        }
    }
    if d.judge.retry_below > d.judge.pass_from {
        return Err(refuse(format!(
            "judge.retry_below {:.1} would be above judge.pass_from {:.1} (edit NOT applied)",
            d.judge.retry_below, d.judge.pass_from
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::tuning::{adjust, fields};
    use crate::director::RuleSet;

    /// Raising any WARN value step by step stops at its RETRY value, never above it; lowering a
    /// RETRY value stops at its WARN value.
    #[test]
    fn warn_never_passes_retry_in_the_rules_pane() {
        let fs = fields();
        let idx = |k: &str| fs.iter().position(|f| f.key == k).unwrap();
        for (warn, retry) in [
            ("lines.warn", "lines.retry"),
            ("scatter.warn_sentences", "scatter.retry_sentences"),
            ("scatter.warn_topics", "scatter.retry_topics"),
            ("judge.retry_below", "judge.pass_from"),
        ] {
            for (moved, steps) in [(warn, 1.0), (retry, -1.0)] {
                let mut r = RuleSet::builtin().unwrap();
                let mut refused = None;
                for _ in 0..100 {
                    match adjust(&r, idx(moved), steps) {
                        Ok(next) => r = next,
                        Err(e) => {
                            refused = Some(e.to_string());
                            break;
                        }
                    }
                }
                let e = refused.unwrap_or_else(|| panic!("{moved} moved past its pair"));
                assert!(e.contains(warn) && e.contains(retry), "{e}");
                let (w, rt) = (fs[idx(warn)].get(&r.data), fs[idx(retry)].get(&r.data));
                assert!(w <= rt, "{warn} {w} > {retry} {rt}");
            }
        }
    }
}
