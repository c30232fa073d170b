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
//! - `--samples CORPORA`: the texts of train.txt the judge learns from (default all);
//!   `--extra CORPORA` adds corpora outside train.txt (proposed by the built-in labeller,
//!   which never saw them);
//! - `--floor 0` (or four, one per kind): the labeller's least margin for a proposal;
//! - `--thresholds` (or `--kind-thresholds`, four): the probabilities a proposal of the
//!   labeller needs; `--veto` (or `--kind-vetoes`, four): those under which a rule's
//!   candidate is turned down; each combination is measured on the `--eval` sets, and the
//!   first is what `--write` writes;
//! - `--natural PATH` counts the spans masked on lines with no personal data (each a false
//!   positive); `JUDGE_ERRORS=1` prints every miss (`-`) and wrong span (`+`);
//! - `--explain TEXT` prints each candidate of TEXT with the built-in judge's probability and
//!   the weight of each of its features.
//!
//! Needs the IPADIC dictionary every command opens (the judge reads its words).

mod common;

use std::collections::HashSet;
use std::sync::Arc;

use common::{arg, corpora, lines, numbers, root};
use kakeai_pii::pii::PiiMasker;
use kakeai_pii::pii::eval::{self, measure, table};
use kakeai_pii::pii::judge::{self, Judge, Sample};
use kakeai_pii::pii::tagger::core::Example;
use kakeai_pii::pii::tagger::{Tagger, kind_index};
use kakeai_text::text::Analyzer;

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
    for (kind, s, e, names) in m.judge_features(text) {
        let span: String = chars[s..e].iter().collect();
        let feats: Vec<u64> = names.iter().map(|n| judge::hash(n)).collect();
        println!("{} {span} {:.3}", kind.label(), j.prob(&feats));
        for n in &names {
            println!("    {:+.2} {n}", j.weight(n));
        }
    }
    println!("masked: {}", m.mask(text).masked_text);
}

/// One margin for every kind, or four (氏名, 会社名, 学校名, 住所).
fn floor() -> [f32; 4] {
    match numbers("--floor", "0").as_slice() {
        [f] => [*f; 4],
        [a, b, c, d] => [*a, *b, *c, *d],
        _ => panic!("--floor takes one margin or four"),
    }
}

/// The samples of every fold of `train` (those `--samples` names), each proposed by a
/// labeller trained on the other folds, then those of `--extra`.
fn cross_fitted(
    train: &[Example],
    folds: usize,
    floor: [f32; 4],
    an: &Arc<dyn Analyzer>,
) -> Vec<Sample> {
    let from: Option<HashSet<String>> =
        arg("--samples").map(|spec| corpora(&spec).into_iter().map(|e| e.text).collect());
    let masker = |t: &'static Tagger| {
        PiiMasker::new()
            .with_tagger_at(t, floor)
            .with_analyzer(an.clone())
            .proposing()
    };
    let mut all = Vec::new();
    for f in 0..folds {
        let (rest, held): (Vec<_>, Vec<_>) =
            train.iter().enumerate().partition(|(i, _)| i % folds != f);
        let rest: Vec<Example> = rest.into_iter().map(|(_, e)| e.clone()).collect();
        let held: Vec<&Example> = held
            .into_iter()
            .map(|(_, e)| e)
            .filter(|e| from.as_ref().is_none_or(|t| t.contains(&e.text)))
            .collect();
        let t: &'static Tagger = Box::leak(Box::new(Tagger::trained(&rest, 6, 40)));
        all.extend(samples(&masker(t), &held));
        eprintln!("fold {f}: {} samples so far", all.len());
    }
    if let Some(spec) = arg("--extra") {
        let extra = corpora(&spec);
        all.extend(samples(
            &masker(Tagger::built_in()),
            &extra.iter().collect::<Vec<_>>(),
        ));
        eprintln!("extra: {} samples so far", all.len());
    }
    all
}

/// Four probabilities (one per kind) from `four`, or each of `one`'s for every kind.
fn per_kind(four: &str, one: &str, default: &str) -> Vec<[f32; 4]> {
    match arg(four) {
        Some(_) => {
            let k = numbers(four, "");
            assert!(k.len() == 4, "{four} takes four probabilities");
            vec![[k[0], k[1], k[2], k[3]]]
        }
        None => numbers(one, default).into_iter().map(|t| [t; 4]).collect(),
    }
}

/// Every (threshold per kind, veto per kind) combination the flags ask to measure.
fn settings() -> Vec<([f32; 4], [f32; 4])> {
    let thresholds = per_kind("--kind-thresholds", "--thresholds", "0.5");
    let vetoes = per_kind("--kind-vetoes", "--veto", "0.5");
    thresholds
        .iter()
        .flat_map(|t| vetoes.iter().map(move |v| (*t, *v)))
        .collect()
}

/// Spans masked on `natural` by `m` (every one a false positive), and every one of them with
/// `JUDGE_ERRORS`.
fn natural_spans(m: &PiiMasker, natural: &[String]) -> usize {
    let mut n = 0;
    for l in natural {
        let got = m.mask(l);
        n += got.items.len();
        if std::env::var_os("JUDGE_ERRORS").is_some() {
            let chars: Vec<char> = l.chars().collect();
            for i in &got.items {
                let span: String = chars[i.span[0]..i.span[1]].iter().collect();
                println!("+ {} {span} | {l}", i.kind.label());
            }
        }
    }
    n
}

/// The masker with `j` measured on the natural lines and every `--eval` set.
fn measure_with(j: &'static Judge, name: &str, an: &Arc<dyn Analyzer>, natural: &[String]) {
    let masker = PiiMasker::new()
        .with_analyzer(an.clone())
        .with_judge(Some(j));
    if !natural.is_empty() {
        println!(
            "natural lines: {} spans at {name}",
            natural_spans(&masker, natural)
        );
    }
    for path in arg("--eval")
        .unwrap_or_default()
        .split(',')
        .filter(|p| !p.is_empty())
    {
        let set = corpora(path);
        print!(
            "{}",
            table(&format!("{path} at {name}"), &measure(&masker, &set))
        );
        if std::env::var_os("JUDGE_ERRORS").is_some() {
            eval::errors(&masker, &set)
                .iter()
                .for_each(|l| println!("{l}"));
        }
    }
}

/// The built-in judge and none on the natural lines, with their speed.
fn natural_baselines(an: &Arc<dyn Analyzer>, natural: &[String]) {
    for (name, m) in [
        (
            "the built-in judge",
            PiiMasker::new().with_analyzer(an.clone()),
        ),
        (
            "no judge",
            PiiMasker::new().with_analyzer(an.clone()).with_judge(None),
        ),
    ] {
        let t0 = std::time::Instant::now();
        let n: usize = natural.iter().map(|l| m.mask(l).items.len()).sum();
        let per_s = natural.len() as f64 / t0.elapsed().as_secs_f64().max(1e-9);
        println!("natural lines: {n} spans with {name} ({per_s:.0} lines/s)");
    }
}

fn main() {
    if let Some(text) = arg("--explain") {
        return explain(&text);
    }
    let spec = arg("--train").unwrap_or("assets/safety/pii_tagger/train.txt".into());
    let train = corpora(&spec);
    let Some(an) = kakeai_text::text::analyzer::dictionary() else {
        eprintln!("no IPADIC dictionary: run `kakeai dict install` (the judge reads its words)");
        std::process::exit(2);
    };
    let folds = arg("--folds").map_or(4, |f| f.parse().expect("--folds takes a number"));
    let epochs = arg("--epochs").map_or(6, |f| f.parse().expect("--epochs takes a number"));
    let l2 = arg("--l2").map_or(judge::L2, |x| x.parse().expect("--l2 takes a number"));
    let floor = floor();
    let all = cross_fitted(&train, folds, floor, &an);
    let right = all.iter().filter(|s| s.right).count();
    println!("{} samples, {right} right", all.len());
    let mut judge = Judge::train_with(&all, epochs, 40, l2);
    judge.floor = floor;
    let natural = lines("--natural");
    if !natural.is_empty() {
        natural_baselines(&an, &natural);
    }
    let settings = settings();
    for &(th, veto) in &settings {
        (judge.threshold, judge.veto) = (th, veto);
        let j: &'static Judge = Box::leak(Box::new(judge.clone()));
        measure_with(j, &format!("{th:?}, veto {veto:?}"), &an, &natural);
    }
    if std::env::args().any(|a| a == "--write") {
        (judge.threshold, judge.veto) = settings[0];
        let args: Vec<String> = std::env::args().skip(1).collect();
        let header = format!(
            "The judge of candidate spans, written by `cargo run --release -p kakeai-pii \
             --example train_judge -- {}`\nfrom {spec}: {} examples, {folds} folds, {} \
             samples ({right} right), {epochs} epochs, floor {floor:?}.",
            args.join(" "),
            train.len(),
            all.len()
        );
        let out = root().join("assets/safety/pii_tagger/judge.tsv");
        std::fs::write(&out, judge.to_tsv(&header)).expect("write judge.tsv");
        println!("wrote {}", out.display());
    }
}
