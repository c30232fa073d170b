//! `kakeai tune` on real lines: the duo-talk corpus's spoken turns (read in place from
//! `../shared/corpora/duo-talk/`, never copied), labelled by simulated reviewers with a
//! hidden policy. Tune must recover each policy on held-out folds (κ ≥ 0.80 over ≥ 400
//! labelled lines) and propose nothing on coin-flip labels. Skipped when the corpus is
//! absent; required under CI=true.

mod common;

use common::seeded::Gen as Rng;
use kakeai::director::RuleSet;
use kakeai::text::Analysis;
use kakeai::text::analyzer::fallback::FallbackAnalyzer;
use kakeai::tune::rejudge::{Turn, build};
use kakeai::tune::search::{Report, Settings, tune};
use kakeai::tune::{Label, Provenance};

/// The corpus's spoken turns in run order, unlabelled.
fn corpus() -> Option<Vec<Turn>> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/corpora/duo-talk/commentary_runs.jsonl"
    );
    let Ok(text) = std::fs::read_to_string(path) else {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CI=true but {path} is missing"
        );
        eprintln!("note: duo-talk corpus not found; skipping");
        return None;
    };
    let mut out = Vec::new();
    for l in text.lines() {
        let v: serde_json::Value = serde_json::from_str(l).unwrap_or_default();
        let (Some("speak"), Some(run), Some(turn), Some(sp), Some(t)) = (
            v["event"].as_str(),
            v["run_id"].as_str(),
            v["turn"].as_u64(),
            v["speaker"].as_str(),
            v["text"].as_str(),
        ) else {
            continue;
        };
        let speaker = match sp {
            "A" => "yana",
            "B" => "ayu",
            _ => continue,
        };
        out.push(Turn {
            run: run.into(),
            turn: turn as u32,
            speaker: speaker.into(),
            text: t.into(),
            label: None,
            judge_mean: None,
            ..Default::default()
        });
    }
    Some(out)
}

/// Labels `n` random turns by `policy` (true = usable), with `slip_pct`% of marks flipped.
fn label(
    turns: &mut [Turn],
    rng: &mut Rng,
    n: usize,
    slip_pct: u64,
    policy: impl Fn(&Turn) -> bool,
) {
    let mut idx: Vec<usize> = (0..turns.len()).collect();
    for i in (1..idx.len()).rev() {
        idx.swap(i, rng.next(i as u64 + 1) as usize);
    }
    for &i in idx.iter().take(n) {
        let slip = rng.next(100) < slip_pct;
        turns[i].label = Some(Label {
            usable: policy(&turns[i]) != slip,
            provenance: Provenance::Single {
                reviewer: Some("sim".into()),
            },
        });
    }
}

fn run(turns: &[Turn]) -> Report {
    let rules = RuleSet::builtin().unwrap();
    let s = Settings::default();
    let (cases, cands) = build(&rules, &FallbackAnalyzer, turns, &s.grid).unwrap();
    tune(&cases, &cands, &s).unwrap()
}

fn sentences(t: &Turn) -> usize {
    Analysis::new(&t.text).sentences.len()
}

#[test]
fn recovers_sentence_limits_on_held_out_runs() {
    let Some(base) = corpus() else { return };
    for (seed, limit) in [(1, 5), (2, 4), (3, 6), (4, 7)] {
        let mut turns = base.clone();
        let mut rng = Rng::new(seed);
        // "`limit` sentences is too long".
        label(&mut turns, &mut rng, 600, 2, |t| sentences(t) < limit);
        let r = run(&turns);
        println!(
            "policy: {limit} sentences too long: {} labels, {} folds, held-out κ {:.3} → {:.3} (spread {:.3}, {}+/{}-, p={:.2e}); {:?}",
            r.labels,
            r.folds,
            r.agreement_before,
            r.agreement_after,
            r.spread,
            r.flipped_right,
            r.flipped_wrong,
            r.p_value,
            r.proposals
                .iter()
                .map(|p| format!("{} {}→{}", p.change, p.before, p.after))
                .collect::<Vec<_>>()
        );
        assert!(r.labels >= 400);
        assert!(r.holds_up, "limit {limit}");
        // The bar of κ ≥ 0.80 is held on the balanced policy (five sentences); on the others
        // the labels are lopsided (most duo-talk lines are long, or few are very long) and κ
        // is printed, not held: the change must still be found and hold up.
        if limit == 5 {
            assert!(
                r.agreement_after >= 0.80,
                "limit {limit}: {}",
                r.agreement_after
            );
        }
        assert!(
            r.proposals
                .iter()
                .any(|p| p.rule == "scatter" && p.after.starts_with(&format!("{limit}/"))),
            "limit {limit}"
        );
    }
}

#[test]
fn proposes_nothing_on_coin_flips() {
    let Some(base) = corpus() else { return };
    for seed in 10..13 {
        let mut turns = base.clone();
        let mut rng = Rng::new(seed);
        label(&mut turns, &mut rng, 600, 50, |_| true);
        let r = run(&turns);
        println!(
            "coin flips: held-out κ {:.3} → {:.3} (spread {:.3}, p={:.2})",
            r.agreement_before, r.agreement_after, r.spread, r.p_value
        );
        assert!(!r.holds_up && r.proposals.is_empty(), "seed {seed}");
    }
}
