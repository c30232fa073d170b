//! Choosing the judge's examples (gold only, never a guarded line, masked, the judge's misses
//! first, both labels and both sisters) and scoring the answers asked again.

use super::*;
use crate::director::ruleset::JudgeRule;
use crate::test_rng::Rng;
use crate::tune::Label;

fn rule() -> JudgeRule {
    JudgeRule {
        retry_below: 3.5,
        pass_from: 4.0,
        examples: Vec::new(),
    }
}

fn turn(run: usize, t: u32, text: &str, usable: bool, gold: bool, mean: Option<f64>) -> Turn {
    Turn {
        run: format!("r{run}"),
        turn: t,
        speaker: if t % 2 == 1 { "yana" } else { "ayu" }.into(),
        text: text.into(),
        label: Some(Label {
            usable,
            provenance: if gold {
                Provenance::Gold
            } else {
                Provenance::Single { reviewer: None }
            },
        }),
        judge_mean: mean,
        topic: "散歩".into(),
        guarded: false,
    }
}

#[test]
fn examples_are_gold_unguarded_masked_and_the_judges_misses_first() {
    let mut turns = vec![
        // r0: the judge passed an unusable line (a miss) — first choice for "unusable".
        turn(0, 1, "宇宙人の話をしよう！", false, true, Some(4.5)),
        turn(0, 2, "姉様、海が見えますね。", true, true, Some(4.5)),
        // Not gold: never an example, even a miss.
        turn(1, 1, "宇宙人が来たよ！", false, false, Some(4.8)),
        // Guarded: never an example.
        turn(1, 2, "合言葉はみかづきです。", false, true, Some(4.9)),
        // A miss with personal data: masked.
        turn(
            2,
            1,
            "田中さんの番号は090-1234-5678だよ！",
            false,
            true,
            Some(4.4),
        ),
        // The judge retried a usable line: first choice for "usable".
        turn(2, 2, "図書館は静かです。", true, true, Some(2.0)),
        turn(3, 1, "夕焼けがきれい！", true, true, Some(4.6)),
        turn(3, 2, "宇宙人は肉まんを食べますか。", false, true, Some(1.0)),
    ];
    turns[3].guarded = true;
    let s = ExampleSettings::default();
    let idx: Vec<usize> = (0..turns.len()).collect();
    let ex = choose(&turns, &idx, &rule(), &s);
    assert_eq!(ex.len(), 4);
    let texts: Vec<&str> = ex.iter().map(|e| e.text.as_str()).collect();
    assert!(
        !texts
            .iter()
            .any(|t| t.contains("みかづき") || t.contains("宇宙人が来た"))
    );
    assert!(
        !texts.iter().any(|t| t.contains("090-1234-5678")),
        "{texts:?}"
    );
    assert_eq!(ex.iter().filter(|e| e.usable).count(), 2);
    assert!(texts.contains(&"図書館は静かです。"), "{texts:?}");
    assert!(texts.contains(&"宇宙人の話をしよう！"), "{texts:?}");
    // The judge got r3#2 right: the other miss (masked) comes before it.
    assert!(
        !texts.contains(&"宇宙人は肉まんを食べますか。"),
        "{texts:?}"
    );
    let usable: Vec<&JudgeExample> = ex.iter().filter(|e| e.usable).collect();
    assert_ne!(
        usable[0].speaker, usable[1].speaker,
        "both sisters: {usable:?}"
    );
    // The partner's line before it travels with it (r2#2 follows r2#1, masked).
    let lib = ex.iter().find(|e| e.text == "図書館は静かです。").unwrap();
    assert!(
        lib.partner_last
            .as_deref()
            .is_some_and(|p| !p.contains("090-1234-5678"))
    );
    assert_eq!(lib.source, "run r2 turn 2");
}

#[test]
fn a_fold_learns_only_from_other_runs() {
    let mut rng = Rng::new(5);
    let mut turns = Vec::new();
    for r in 0..8 {
        for t in 1..=6 {
            let bad = rng.below(3) == 0;
            turns.push(turn(r, t, &format!("発言{r}-{t}"), !bad, true, Some(4.2)));
        }
    }
    let plans = plan(&turns, 4, &rule(), &ExampleSettings::default(), &|_| true);
    assert_eq!(plans.len(), 4);
    let mut asked = 0;
    for p in &plans {
        let held: std::collections::BTreeSet<&str> =
            p.held_out.iter().map(|&i| turns[i].run.as_str()).collect();
        for e in &p.examples {
            let run = e.source.split(' ').nth(1).unwrap();
            assert!(!held.contains(run), "example from a held-out run {run}");
        }
        asked += p.held_out.len();
    }
    assert_eq!(asked, turns.len(), "every labelled turn is held out once");
    let capped = plan(
        &turns,
        4,
        &rule(),
        &ExampleSettings {
            max_asked: 10,
            ..ExampleSettings::default()
        },
        &|_| true,
    );
    let n: usize = capped.iter().map(|p| p.held_out.len()).sum();
    assert!((10..=12).contains(&n), "{n}");
}

#[test]
fn answers_that_do_not_change_claim_no_gain_and_flips_right_do() {
    let mut rng = Rng::new(9);
    let mut turns = Vec::new();
    for r in 0..6 {
        for t in 1..=10 {
            turns.push(turn(r, t, "線", rng.below(2) == 0, true, Some(4.2)));
        }
    }
    let plans = plan(&turns, 3, &rule(), &ExampleSettings::default(), &|_| true);
    let label = |i: usize| turns[i].label.as_ref().unwrap().usable;
    let same: Vec<Answers> = plans
        .iter()
        .map(|p| {
            p.held_out
                .iter()
                .map(|&i| (i, Status::Pass, Status::Pass))
                .collect()
        })
        .collect();
    let ev = score(&turns, &plans, &same, 0.001);
    assert!(!ev.holds_up);
    assert_eq!(ev.flipped_right + ev.flipped_wrong, 0);
    assert!(proposal(&turns, vec![], 0, &ev, &plans, &same).is_none());
    let learned: Vec<Answers> = plans
        .iter()
        .map(|p| {
            p.held_out
                .iter()
                .map(|&i| {
                    let want = if label(i) {
                        Status::Pass
                    } else {
                        Status::Retry
                    };
                    (i, Status::Pass, want)
                })
                .collect()
        })
        .collect();
    let ev = score(&turns, &plans, &learned, 0.001);
    assert!(ev.holds_up, "{ev:?}");
    assert!((ev.agreement_after - 1.0).abs() < 1e-9);
    assert_eq!(ev.flipped_wrong, 0);
    // Unscored answers are never usable (fail closed).
    let unscored: Vec<Answers> = plans
        .iter()
        .map(|p| {
            p.held_out
                .iter()
                .map(|&i| (i, Status::Pass, Status::Unscored))
                .collect()
        })
        .collect();
    let ev = score(&turns, &plans, &unscored, 0.001);
    assert!(!ev.holds_up);
}
