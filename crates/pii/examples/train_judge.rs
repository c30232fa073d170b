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
//! `--extra CORPORA` adds samples from corpora outside train.txt (proposed by the built-in
//! labeller, which never saw them). `--floor 0` (or four, one per kind) sets the labeller's
//! least margin for a proposal; `--thresholds` lists the
//! probabilities a proposal of the labeller needs and `--veto` those under which a rule's
//! candidate is turned down, measured on the `--eval` sets (the first of each is written); `--write` writes the
//! asset; `--natural PATH` counts the spans masked on lines with no personal data (each a
//! false positive); `JUDGE_ERRORS=1` prints every miss (`-`) and wrong span (`+`). Needs the IPADIC dictionary every command opens (the judge reads its words).

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
    for (kind, s, e, names) in m.judge_features(text) {
        let span: String = chars[s..e].iter().collect();
        let feats: Vec<u64> = names
            .iter()
            .map(|n| kakeai_pii::pii::judge::hash(n))
            .collect();
        println!("{} {span} {:.3}", kind.label(), j.prob(&feats));
        for n in &names {
            println!("    {:+.2} {n}", j.weight(n));
        }
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
    // One margin for every kind, or four (氏名, 会社名, 学校名, 住所).
    let floor: [f32; 4] = match numbers("--floor", "0").as_slice() {
        [f] => [*f; 4],
        [a, b, c, d] => [*a, *b, *c, *d],
        _ => panic!("--floor takes one margin or four"),
    };
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
            .with_tagger_at(t, floor)
            .with_analyzer(an.clone())
            .proposing();
        all.extend(samples(&masker, &held));
        eprintln!("fold {f}: {} samples so far", all.len());
    }
    // `--extra`: corpora outside train.txt, proposed by the built-in labeller (trained on all
    // of train.txt, so these texts are unseen by it as well).
    if let Some(spec) = arg("--extra") {
        let extra: Vec<Example> = spec
            .split(',')
            .flat_map(|p| eval::corpora(&root(), p).unwrap_or_else(|e| panic!("{e}")))
            .collect();
        let masker = PiiMasker::new()
            .with_tagger_at(Tagger::built_in(), floor)
            .with_analyzer(an.clone())
            .proposing();
        all.extend(samples(&masker, &extra.iter().collect::<Vec<_>>()));
        eprintln!("extra: {} samples so far", all.len());
    }
    let right = all.iter().filter(|s| s.right).count();
    println!("{} samples, {right} right", all.len());
    let l2 = arg("--l2").map_or(kakeai_pii::pii::judge::L2, |x| x.parse().expect("l2"));
    let mut judge = Judge::train_with(&all, epochs, 40, l2);
    judge.floor = floor;
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
    // `--natural PATH`: lines with (nearly) no personal data: every span is a false positive.
    let natural: Vec<String> = arg("--natural")
        .map(|p| std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{p}: {e}")))
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect();
    let spans = |m: &PiiMasker| -> usize { natural.iter().map(|l| m.mask(l).items.len()).sum() };
    if !natural.is_empty() {
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
            let n = spans(&m);
            let per_s = natural.len() as f64 / t0.elapsed().as_secs_f64().max(1e-9);
            println!("natural lines: {n} spans with {name} ({per_s:.0} lines/s)");
        }
    }
    let vetoes = numbers("--veto", "0.5");
    for (&th, &veto) in per_kind
        .iter()
        .flat_map(|t| vetoes.iter().map(move |v| (t, v)))
    {
        judge.threshold = th;
        judge.veto = [veto; 4];
        let j: &'static Judge = Box::leak(Box::new(judge.clone()));
        if !natural.is_empty() {
            let m = PiiMasker::new()
                .with_analyzer(an.clone())
                .with_judge(Some(j));
            println!("natural lines: {} spans at {th:?}, veto {veto}", spans(&m));
            if std::env::var_os("JUDGE_ERRORS").is_some() {
                for l in &natural {
                    let got = m.mask(l);
                    let chars: Vec<char> = l.chars().collect();
                    for i in &got.items {
                        let span: String = chars[i.span[0]..i.span[1]].iter().collect();
                        println!("+ {} {span} | {l}", i.kind.label());
                    }
                }
            }
        }
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
        judge.veto = [vetoes[0]; 4];
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
