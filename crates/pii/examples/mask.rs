//! The PII masker on its own: each line of standard input, masked, with what was found.
//!
//! ```sh
//! printf '田中さんの番号は090-1234-5678です\n' | cargo run -p kakeai-pii --example mask
//! ```
//!
//! The rules alone (no dictionary, no model): the same masker the store uses before a line is
//! stored, shown or exported, minus the IPADIC reading (`PiiMasker::with_dictionary` adds it).

use std::io::BufRead;

use kakeai_pii::pii::PiiMasker;

fn main() {
    let masker = PiiMasker::new();
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        let m = masker.mask(&line);
        let found: Vec<String> = m
            .items
            .iter()
            .map(|i| format!("{:?} {}..{}", i.kind, i.span[0], i.span[1]))
            .collect();
        println!("{}\t{}", m.masked_text, found.join(", "));
    }
}
