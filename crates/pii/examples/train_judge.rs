//! Trains the judge of candidate spans (`src/pii/judge.rs`) and writes
//! `assets/safety/pii_tagger/judge.tsv`. The labelled corpora of train.txt are cut into
//! folds; for each fold the labeller is trained on the others, so the scores the judge learns
//! from are those of text the labeller never saw, as in use. Each candidate of the rules and
//! the labeller is a sample, right when it overlaps a gold span of its kind.
//!
//! ```sh
//! cargo run --release -p kakeai-pii --example train_judge -- \
//!   --eval tests/fixtures/pii_independent/set_b_forms.jsonl --thresholds 0.3,0.5 [--write]
//! ```
//! `--floor 0` sets the labeller's least margin for a proposal; `--thresholds` lists the
//! probabilities to measure on the `--eval` sets (the first is written); `--write` writes the
//! asset; `JUDGE_ERRORS=1` prints every miss (`-`) and wrong span (`+`). Needs the IPADIC dictionary every command opens (the judge reads its words).

use std::path::{Path, PathBuf};

use kakeai_pii::pii::PiiMasker;
use kakeai_pii::pii::eval::{self, measure, table};
use kakeai_pii::pii::judge::{Judge, Sample};
use kakeai_pii::pii::tagger::core::Example;
use kakeai_pii::pii::tagger::{Tagger, kind_index};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn arg(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

fn numbers(name: &str, default: &str) -> Vec<f32> {
    arg(name)
        .unwrap_or_else(|| default.into())
        .split(',')
        .map(|x| x.parse().expect("a number"))
        .collect()
}

/// The samples of `set` as `masker` proposes them.
fn samples(masker: &PiiMasker, set: &[&Example]) -> Vec<Sample> {
    let mut out = Vec::new();
    for ex in set {
        for (kind, s, e, feats) in masker.judge_samples(&ex.text) {
            let right = ex
                .spans
                .iter()
                .any(|g| g.2 == kind.label() && g.0 < e && s < g.1);
            out.push(Sample {
                kind: kind_index(kind),
                feats,
                right,
            });
        }
    }
    out
}

/// `--explain TEXT`: every candidate of TEXT with the built-in judge's probability.
fn explain(text: &str) {
    let an = kakeai_text::text::analyzer::dictionary().expect("the IPADIC dictionary");
    let Some(j) = Judge::built_in() else {
        println!("no built-in judge");
        return;
    };
    let m = PiiMasker::new().with_analyzer(an);
    let chars: Vec<char> = text.chars().collect();
    for (kind, s, e, feats) in m.judge_samples(text) {
        let span: String = chars[s..e].iter().collect();
        println!("{} {span} {:.3}", kind.label(), j.prob(&feats));
    }
    println!("masked: {}", m.mask(text).masked_text);
}

fn main() {
    if let Some(text) = arg("--explain") {
        return explain(&text);
    }
    let spec = arg("--train").unwrap_or("assets/safety/pii_tagger/train.txt".into());
    let train = eval::corpora(&root(), &spec).unwrap_or_else(|e| panic!("{e}"));
    let Some(an) = kakeai_text::text::analyzer::dictionary() else {
        eprintln!("no IPADIC dictionary: run `kakeai dict install` (the judge reads its words)");
        std::process::exit(2);
    };
    let folds = arg("--folds").map_or(4, |f| f.parse().expect("folds"));
    let floor = numbers("--floor", "0")[0];
    let epochs = arg("--epochs").map_or(6, |f| f.parse().expect("epochs"));
    // The texts the judge learns from (`--samples`: corpora, comma-separated; default all).
    let from: Option<std::collections::HashSet<String>> = arg("--samples").map(|spec| {
        spec.split(',')
            .flat_map(|p| eval::corpora(&root(), p).unwrap_or_else(|e| panic!("{e}")))
            .map(|e| e.text)
            .collect()
    });
    let mut all = Vec::new();
    for f in 0..folds {
        let rest: Vec<Example> = train
            .iter()
            .enumerate()
            .filter(|(i, _)| i % folds != f)
            .map(|(_, e)| e.clone())
            .collect();
        let held: Vec<&Example> = train
            .iter()
            .enumerate()
            .filter(|(i, _)| i % folds == f)
            .map(|(_, e)| e)
            .filter(|e| from.as_ref().is_none_or(|t| t.contains(&e.text)))
            .collect();
        let t: &'static Tagger = Box::leak(Box::new(Tagger::trained(&rest, 6, 40)));
        let masker = PiiMasker::new()
            .with_tagger_at(t, [floor; 4])
            .with_analyzer(an.clone())
            .proposing();
        all.extend(samples(&masker, &held));
        eprintln!("fold {f}: {} samples so far", all.len());
    }
    let right = all.iter().filter(|s| s.right).count();
    println!("{} samples, {right} right", all.len());
    let mut judge = Judge::train(&all, epochs, 40);
    judge.floor = [floor; 4];
    // `--thresholds` one probability for every kind, or `--kind-thresholds` four (one run).
    let per_kind: Vec<[f32; 4]> = match arg("--kind-thresholds") {
        Some(_) => {
            let k = numbers("--kind-thresholds", "");
            vec![[k[0], k[1], k[2], k[3]]]
        }
        None => numbers("--thresholds", "0.5")
            .into_iter()
            .map(|t| [t; 4])
            .collect(),
    };
    for &th in &per_kind {
        judge.threshold = th;
        let j: &'static Judge = Box::leak(Box::new(judge.clone()));
        for path in arg("--eval")
            .unwrap_or_default()
            .split(',')
            .filter(|p| !p.is_empty())
        {
            let set = eval::corpora(&root(), path).unwrap_or_else(|e| panic!("{e}"));
            let masker = PiiMasker::new()
                .with_analyzer(an.clone())
                .with_judge(Some(j));
            print!(
                "{}",
                table(&format!("{path} at {th:?}"), &measure(&masker, &set))
            );
            if std::env::var_os("JUDGE_ERRORS").is_some() {
                eval::errors(&masker, &set)
                    .iter()
                    .for_each(|l| println!("{l}"));
            }
        }
    }
    if std::env::args().any(|a| a == "--write") {
        judge.threshold = per_kind[0];
        let args: Vec<String> = std::env::args().skip(1).collect();
        let header = format!(
            "The judge of candidate spans, written by `cargo run --release -p kakeai-pii \
             --example train_judge -- {}`\nfrom {spec}: {} examples, {folds} folds, {} \
             samples ({right} right), {epochs} epochs, floor {floor}.",
            args.join(" "),
            train.len(),
            all.len()
        );
        let out = root().join("assets/safety/pii_tagger/judge.tsv");
        std::fs::write(&out, judge.to_tsv(&header)).expect("write judge.tsv");
        println!("wrote {}", out.display());
    }
}
