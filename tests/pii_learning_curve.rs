//! The learned labeller's learning curve: trained here on a growing share of its training
//! corpora (the ones `assets/safety/pii_tagger/train.txt` names, what `build.rs` trains the
//! built-in model on), measured on independent sets it never saw at the analyzer path's
//! default margins. The method must learn from data: more data finds more names on text from
//! other sources, and the full share is not less precise than the smallest.
//! `cargo test --test pii_learning_curve -- --nocapture` prints the curve.

mod common;

use std::path::Path;

use kakeai::safety::pii::PiiMasker;
use kakeai::safety::pii::eval::{self, Tally};
use kakeai::safety::pii::tagger::{DEFAULT_MARGIN, Tagger};

const SHARES: [f64; 4] = [0.125, 0.25, 0.5, 1.0];
const LEARNED: [&str; 4] = ["氏名", "会社名", "学校名", "住所"];

fn learned_kinds(t: &std::collections::BTreeMap<String, Tally>) -> Tally {
    let mut sum = Tally::default();
    for k in LEARNED {
        if let Some(x) = t.get(k) {
            sum += *x;
        }
    }
    sum
}

#[test]
fn more_training_data_finds_more_on_independent_sets() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let all = eval::training_corpora(root).expect("the training corpora");
    assert!(all.len() > 10_000, "{} examples", all.len());
    let sets: Vec<(&str, Vec<_>)> = ["set_a_chat", "set_d_bot"]
        .iter()
        .map(|n| {
            let p = root.join(format!("tests/fixtures/pii_independent/{n}.jsonl"));
            let text = std::fs::read_to_string(p).expect("an independent set");
            (*n, eval::read_set(&text).expect("labelled"))
        })
        .collect();
    let an = common::lindera_arc();
    let mut curve: Vec<(f64, Tally)> = Vec::new();
    for share in SHARES {
        let part = eval::every(&all, share);
        let t: &'static Tagger = Box::leak(Box::new(Tagger::trained(&part, 6, 40)));
        let mut masker = PiiMasker::new().with_tagger_at(t, DEFAULT_MARGIN);
        if let Some(a) = &an {
            masker = masker.with_analyzer(a.clone());
        }
        let mut sum = Tally::default();
        for (name, set) in &sets {
            let x = learned_kinds(&eval::measure(&masker, set));
            println!(
                "{share:>5} ({:>5} examples) {name}: names, companies, schools, addresses recall {:.3} precision {:.3}",
                part.len(),
                x.recall(),
                x.precision()
            );
            sum += x;
        }
        curve.push((share, sum));
    }
    let (first, last) = (curve[0].1, curve[curve.len() - 1].1);
    assert!(
        last.recall() > first.recall() + 0.02,
        "recall {:.3} with all the data, {:.3} with an eighth",
        last.recall(),
        first.recall()
    );
    assert!(
        last.precision() + 0.01 >= first.precision(),
        "precision {:.3} with all the data, {:.3} with an eighth",
        last.precision(),
        first.precision()
    );
}

/// The labeller trains on the analyzer's word codes that `examples/annotate.rs` wrote for
/// every training text; they must be what the dictionary reads today, or it would train on
/// words it never sees at run time. A corpus changed without running annotate fails here.
#[test]
fn every_training_text_has_the_word_codes_the_analyzer_gives_it() {
    let Some(an) = common::lindera_arc() else {
        return;
    };
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let all = eval::training_corpora(root).expect("the training corpora");
    let stored = kakeai::safety::pii::tagger::stored_codes();
    let texts = kakeai::safety::pii::tagger::core::training_texts(
        &all,
        &kakeai::safety::pii::tagger::swaps(),
    );
    let mut stale = Vec::new();
    for e in &texts {
        let want =
            kakeai::safety::pii::tagger::codes(&an.proper_nouns(&e.text), e.text.chars().count());
        match stored.get(&kakeai::safety::pii::tagger::core::text_key(&e.text)) {
            Some(c) if *c == want => {}
            _ => stale.push(e.text.clone()),
        }
    }
    assert!(
        stale.is_empty(),
        "{} of {} training texts lack their word codes (run `cargo run --release -p kakeai-pii --example annotate`), e.g. {:?}",
        stale.len(),
        texts.len(),
        stale.first()
    );
}
