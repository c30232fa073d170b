//! Personal data on sets from sources the masker was never tuned on
//! (`tests/fixtures/pii_independent/`, each written by someone who had not seen kakeai's code or
//! data; what each is and who wrote it is in that folder's README). Measured, never tuned on:
//! `cargo test --test pii_independent -- --nocapture` prints per set and kind the recall (a gold
//! span counts as found when a span of the same kind covers at least half of it), the share
//! masked at all (any kind), and precision (a predicted span is right when it overlaps a gold
//! span of its kind). The floors below are the figures measured once, minus a margin: they
//! catch a regression, they are not the goal.

mod common;

use std::collections::BTreeMap;

use kakeai::safety::pii::PiiMasker;
use kakeai::safety::pii::eval::{self, Tally, table};

fn measure(m: &PiiMasker, jsonl: &str) -> BTreeMap<String, Tally> {
    eval::measure(m, &eval::read_set(jsonl).expect("a labelled set"))
}

fn sets() -> Vec<(String, String)> {
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/pii_independent"
    );
    let mut out: Vec<(String, String)> = std::fs::read_dir(dir)
        .expect("the independent sets")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .map(|p| {
            let name = p.file_stem().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read_to_string(&p).unwrap())
        })
        .collect();
    out.sort();
    out
}

/// The learned labeller's margin against precision and recall (`--ignored`; measured, not a
/// pass/fail): KAKEAI_PII_SET names the set (default set_b_forms).
#[test]
#[ignore]
fn learned_margin_curve() {
    let want = std::env::var("KAKEAI_PII_SET").unwrap_or_else(|_| "set_b_forms".into());
    let an = common::lindera_arc();
    for (name, text) in sets().into_iter().filter(|(n, _)| *n == want) {
        for m in [0.0f32, 2.0, 4.0, 8.0, 12.0, 16.0, 24.0, 32.0, 48.0] {
            let mut masker = PiiMasker::new().with_learned_at([m; 4]);
            if let Some(a) = &an {
                masker = masker.with_analyzer(a.clone());
            }
            let t = measure(&masker, &text);
            print!("{name} margin {m:>4}:");
            for k in ["氏名", "会社名", "学校名", "住所", "all"] {
                if let Some(x) = t.get(k) {
                    print!(
                        "  {k} R {:.3} P {:.3}",
                        x.found as f64 / x.gold.max(1) as f64,
                        x.right as f64 / x.predicted.max(1) as f64
                    );
                }
            }
            println!();
        }
    }
}

/// Spans masked on the duo-talk corpus's spoken lines (read in place, never copied; they hold
/// almost no personal data, so nearly every span is a chat word taken for one), odd lines only.
#[test]
#[ignore]
fn learned_margin_on_natural_lines() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/corpora/duo-talk/commentary_runs.jsonl"
    );
    let Ok(text) = std::fs::read_to_string(path) else {
        return;
    };
    let lines: Vec<String> = text
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|v| v["text"].as_str().map(str::to_string))
        .enumerate()
        .filter(|(i, _)| i % 2 == 1)
        .map(|(_, t)| t)
        .collect();
    let an = common::lindera_arc();
    let plain: Vec<(String, PiiMasker)> = vec![
        ("rules alone".into(), PiiMasker::new()),
        (
            "rules + learned 48".into(),
            PiiMasker::new().with_learned_at([48.0; 4]),
        ),
    ];
    for (name, masker) in plain {
        let t0 = std::time::Instant::now();
        let n: usize = lines.iter().map(|l| masker.mask(l).items.len()).sum();
        let per_s = lines.len() as f64 / t0.elapsed().as_secs_f64();
        println!("natural lines, {name}: {n} spans ({per_s:.0} lines/s)");
    }
    for m in [f32::INFINITY, 16.0, 24.0, 32.0, 48.0, 64.0] {
        let mut masker = PiiMasker::new().with_learned_at([m; 4]);
        if let Some(a) = &an {
            masker = masker.with_analyzer(a.clone());
        }
        let t0 = std::time::Instant::now();
        let n: usize = lines.iter().map(|l| masker.mask(l).items.len()).sum();
        let per_s = lines.len() as f64 / t0.elapsed().as_secs_f64();
        println!(
            "natural lines {}: margin {m}: {n} spans ({per_s:.0} lines/s)",
            lines.len()
        );
    }
}

#[test]
fn independent_sets_per_kind() {
    let maskers: Vec<(&str, PiiMasker)> = {
        let mut v = vec![
            ("rules", PiiMasker::new()),
            ("rules + learned", PiiMasker::new().with_learned()),
        ];
        if let Some(an) = common::lindera_arc() {
            v.push(("lindera", PiiMasker::new().with_analyzer(an.clone())));
            v.push((
                "lindera, no judge (before)",
                PiiMasker::new()
                    .with_learned_at(kakeai::safety::pii::tagger::DEFAULT_MARGIN)
                    .with_analyzer(an.clone()),
            ));
            v.push((
                "lindera, no learned (before)",
                PiiMasker::new().rules_only().with_analyzer(an.clone()),
            ));
            v.push((
                "lindera + learned",
                PiiMasker::new().with_analyzer(an).with_learned(),
            ));
        }
        v
    };
    let sets = sets();
    assert!(!sets.is_empty());
    for (name, text) in &sets {
        for (mname, m) in &maskers {
            let t = measure(m, text);
            println!("{}", table(&format!("{name} · {mname}"), &t));
            let all = t["all"];
            if mname.contains("learned") && !mname.contains("no learned") {
                continue; // measured only: the labeller at every margin
            }
            // Floors: measured once (README), minus a margin for regressions only.
            assert!(
                all.found as f64 / all.gold as f64 >= 0.5,
                "{name} {mname}: {all:?}"
            );
            assert!(
                all.right as f64 / all.predicted.max(1) as f64 >= 0.8,
                "{name} {mname}: {all:?}"
            );
        }
    }
}
