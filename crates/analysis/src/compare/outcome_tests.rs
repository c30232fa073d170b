use super::*;
use crate::director::{RuleId, Status};

fn side(status: Status, exhausted: bool, judge: Option<f64>, rules: &[RuleId]) -> Side {
    Side {
        text: "x".into(),
        status,
        exhausted,
        tone: 0,
        findings: rules
            .iter()
            .map(|r| Brief {
                rule: *r,
                status: Status::Warn,
                message: String::new(),
            })
            .collect(),
        judge: judge.map(|m| [m; 5]),
        judge_mean: judge,
        attempts: 1,
    }
}

fn row(turn: usize, a: Side, b: Side) -> TurnRow {
    TurnRow {
        turn,
        speaker: "yana".into(),
        change: change(&a, std::slice::from_ref(&b)),
        diff: diff(&a.text, &b.text),
        a,
        b: vec![b],
    }
}

#[test]
fn ranking_orders_pass_warn_retry_exhausted_then_judge() {
    let order = [
        side(Status::Retry, true, None, &[]),
        side(Status::Retry, false, None, &[]),
        side(Status::Warn, false, Some(3.0), &[]),
        side(Status::Warn, false, Some(4.0), &[]),
        side(Status::Pass, false, Some(2.0), &[]),
        side(Status::Pass, false, Some(4.6), &[]),
    ];
    for (i, a) in order.iter().enumerate() {
        for (j, b) in order.iter().enumerate() {
            let want = match j.cmp(&i) {
                std::cmp::Ordering::Greater => Change::Better,
                std::cmp::Ordering::Less => Change::Worse,
                std::cmp::Ordering::Equal => Change::Same,
            };
            assert_eq!(change(a, std::slice::from_ref(b)), want, "{i} → {j}");
        }
    }
}

#[test]
fn summary_counts_and_gates() {
    // Six turns all worse: p = 1/32 < 0.05 → regression.
    let rows: Vec<TurnRow> = (1..=6)
        .map(|t| {
            row(
                t,
                side(Status::Pass, false, None, &[]),
                side(Status::Retry, false, None, &[RuleId::Lines]),
            )
        })
        .collect();
    let s = summarise(&rows, 0.05, &[]);
    assert_eq!((s.better, s.same, s.worse), (0, 0, 6));
    assert!(s.regression);
    assert_eq!(s.rules["lines"], RuleCount { a: 0, b: 6 });
    // Five: p = 0.0625, not significant, and no listed rule.
    let s5 = summarise(&rows[..5], 0.05, &[]);
    assert!(!s5.regression);
    // …unless `lines` must not regress.
    let s5 = summarise(&rows[..5], 0.05, &[RuleId::Lines]);
    assert!(s5.regression);
    assert_eq!(s5.must_not_regress.len(), 5);
    assert!(headline(&s).contains("lines ×6"), "{}", headline(&s));
}

#[test]
fn a_rule_already_firing_in_a_is_not_a_regression() {
    let rows = vec![row(
        1,
        side(Status::Warn, false, None, &[RuleId::Scatter]),
        side(Status::Warn, false, None, &[RuleId::Scatter]),
    )];
    let s = summarise(&rows, 0.05, &[RuleId::Scatter]);
    assert!(s.must_not_regress.is_empty() && !s.regression);
}

#[test]
fn diff_reassembles_both_texts() {
    let cases = [
        ("やなだよ！", "やなだってば！"),
        ("", "あゆです。"),
        ("ｶﾀｶﾅ😀", "ｶﾀｶﾅ"),
    ];
    for (a, b) in cases {
        let d = diff(a, b);
        let left: String = d
            .iter()
            .filter(|p| p.op != "insert")
            .map(|p| p.text.as_str())
            .collect();
        let right: String = d
            .iter()
            .filter(|p| p.op != "delete")
            .map(|p| p.text.as_str())
            .collect();
        assert_eq!((left.as_str(), right.as_str()), (a, b));
    }
}

/// Issue 23 item 4: with fewer than 6 paired turns the sign test cannot reach p < 0.05 even
/// when every turn is worse — the summary says so; from 6 pairs on it says nothing.
#[test]
fn the_summary_says_when_the_gate_cannot_fire() {
    for n in 1..=8usize {
        let rows: Vec<TurnRow> = (1..=n)
            .map(|t| {
                row(
                    t,
                    side(Status::Pass, false, None, &[]),
                    side(Status::Retry, false, None, &[]),
                )
            })
            .collect();
        let s = summarise(&rows, 0.05, &[]);
        assert_eq!(s.worse, n);
        let note = gate_note(&s);
        assert_eq!(note.is_some(), !s.regression, "{n} pairs: {note:?}");
        assert_eq!(note.is_some(), n < 6, "{n} pairs: {note:?}");
        if let Some(note) = note {
            assert!(
                note.starts_with(&format!("the gate cannot fire on {n} pairs")),
                "{note}"
            );
            assert!(note.ends_with("name must_not_regress rules"), "{note}");
            // With rules named, the note says only they can fail it (it asked to name some).
            let named = summarise(&rows, 0.05, &[RuleId::Leak]);
            let note = gate_note(&named).expect("still too few pairs");
            assert!(
                note.contains("only must_not_regress (leak) can fail it")
                    && !note.contains("name must_not_regress"),
                "{note}"
            );
        }
    }
}
