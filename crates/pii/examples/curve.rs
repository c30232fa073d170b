//! Trains the learned labeller on chosen corpora and measures the masker with it: the
//! learning curve (recall and precision as the labeller sees more data) and the margin
//! curve, on a labelled set and on unlabelled natural lines (every span there is a false
//! positive, nearly). Measured, never a pass/fail.
//!
//! ```sh
//! cargo run --release -p kakeai-pii --example curve -- \
//!   --train assets/safety/pii_tagger/train.txt --eval tests/fixtures/pii_independent/set_b_forms.jsonl \
//!   --natural lines.txt --margins 0,16,48 --fractions 0.25,0.5,1
//! ```
//! `--kind-margins 96,128,64,128` sets one margin per kind (氏名, 会社名, 学校名, 住所) instead
//! of `--margins`. `--train` takes train.txt (its `corpus` lines) or JSONL corpora,
//! comma-separated; paths are relative to the workspace root. With the IPADIC dictionary every
//! command opens, the analyzer path is measured, else the rules alone. `CURVE_ERRORS=1` prints
//! every miss (`-`) and wrong span (`+`).

mod common;

use common::{arg, corpora, lines, numbers as list};
use kakeai_pii::pii::PiiMasker;
use kakeai_pii::pii::eval::{self, every, measure, table};
use kakeai_pii::pii::tagger::Tagger;
use kakeai_pii::pii::tagger::core::Example;

fn main() {
    let train = corpora(&arg("--train").unwrap_or("assets/safety/pii_tagger/train.txt".into()));
    let eval: Vec<(String, Vec<Example>)> = arg("--eval")
        .unwrap_or_default()
        .split(',')
        .filter(|p| !p.is_empty())
        .map(|p| (p.to_string(), corpora(p)))
        .collect();
    let natural = lines("--natural");
    // The dictionary every command opens; without one, the rules and the labeller alone.
    let an = kakeai_text::text::analyzer::dictionary();
    println!(
        "analyzer: {}",
        if an.is_some() { "lindera" } else { "none" }
    );
    let t0 = std::time::Instant::now();
    let built = Tagger::built_in();
    println!(
        "built-in labeller: {} weights, read in {:?}",
        built.size(),
        t0.elapsed()
    );
    let epochs = arg("--epochs").map_or(6, |e| e.parse().expect("epochs"));
    for frac in list("--fractions", "1") {
        let part = every(&train, f64::from(frac));
        let n = part.len();
        let t: &'static Tagger = Box::leak(Box::new(Tagger::trained(&part, epochs, 40)));
        let per_kind: Vec<[f32; 4]> = match arg("--kind-margins") {
            Some(_) => {
                let k = list("--kind-margins", "");
                vec![[k[0], k[1], k[2], k[3]]]
            }
            None => list("--margins", "0,16,48")
                .into_iter()
                .map(|m| [m; 4])
                .collect(),
        };
        for m in per_kind {
            let mut masker = PiiMasker::new().with_tagger_at(t, m);
            if let Some(a) = &an {
                masker = masker.with_analyzer(a.clone());
            }
            let t0 = std::time::Instant::now();
            let fp: usize = natural.iter().map(|l| masker.mask(l).items.len()).sum();
            let per_s = natural.len() as f64 / t0.elapsed().as_secs_f64().max(1e-9);
            println!("natural lines masked at {per_s:.0} lines/s");
            println!(
                "== {n} examples ({frac}), margin {m:?}: {fp} spans on {} natural lines",
                natural.len()
            );
            for (name, set) in &eval {
                print!("{}", table(name, &measure(&masker, set)));
                if std::env::var_os("CURVE_ERRORS").is_some() {
                    eval::errors(&masker, set)
                        .iter()
                        .for_each(|l| println!("{l}"));
                }
            }
        }
    }
}
