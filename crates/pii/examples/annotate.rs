//! Writes `assets/safety/pii_tagger/tokens.tsv`: the IPADIC analyzer's word codes
//! (`tagger::codes`) of every text the labeller trains on — each corpus `train.txt` names and
//! the negative and swapped copies training makes — so that `build.rs`, which has no
//! dictionary, trains on the same word features the dictionary path sees at run time. Run it
//! after changing a training corpus:
//!
//! ```sh
//! cargo run --release -p kakeai-pii --example annotate
//! ```
//! The dictionary is the one every command opens (`kakeai dict install`, or built from MeCab's
//! IPADIC sources on first use). Deterministic: the lines are sorted by key.

use std::fmt::Write as _;
use std::path::Path;

use kakeai_pii::pii::eval::training_corpora;
use kakeai_pii::pii::tagger::core::{text_key, training_texts};
use kakeai_pii::pii::tagger::{codes, swaps};

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    // The dictionary every command opens (installed, or built from MeCab's IPADIC sources).
    let Some(an) = kakeai_text::text::analyzer::dictionary() else {
        eprintln!(
            "no IPADIC dictionary: run `kakeai dict install` (or install MeCab's IPADIC sources, \
             Debian's mecab-ipadic) and run this again"
        );
        std::process::exit(2);
    };
    let examples = training_corpora(&root).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(2);
    });
    let mut lines: Vec<(u64, String)> = training_texts(&examples, &swaps())
        .iter()
        .map(|e| {
            let toks = an.proper_nouns(&e.text);
            (text_key(&e.text), codes(&toks, e.text.chars().count()))
        })
        .collect();
    lines.sort();
    lines.dedup_by_key(|l| l.0);
    let mut out = String::new();
    for (k, c) in &lines {
        let _ = writeln!(out, "{k:016x}\t{c}");
    }
    let path = root.join("assets/safety/pii_tagger/tokens.tsv");
    std::fs::write(&path, out).expect("write tokens.tsv");
    println!("{} texts annotated into {}", lines.len(), path.display());
}
