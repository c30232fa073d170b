//! PII masking helpers shared by the masker's integration tests: what a masker found, as
//! strings, and a tuning set's exact-span score.

use kakeai::safety::pii::{PiiKind, PiiMasker};

/// What was found of `kind` in `text`, as strings (char spans, never byte-sliced).
pub fn found(m: &PiiMasker, text: &str, kind: PiiKind) -> Vec<String> {
    m.mask(text)
        .items
        .iter()
        .filter(|i| i.kind == kind)
        .map(|i| {
            text.chars()
                .skip(i.span[0])
                .take(i.span[1] - i.span[0])
                .collect()
        })
        .collect()
}

/// Precision, recall and the number of gold spans of `kind` (labelled `label`) on a tuning
/// set's jsonl (`{"text", "spans": [[start, end, label]]}`, char offsets), exact spans; every
/// miss and false positive printed (`-- --nocapture`).
pub fn score(m: &PiiMasker, jsonl: &str, kind: PiiKind, label: &str) -> (f64, f64, usize) {
    let (mut gold, mut predicted, mut correct) = (0usize, 0usize, 0usize);
    for line in jsonl.lines() {
        let v: serde_json::Value = serde_json::from_str(line).expect("json");
        let t = v["text"].as_str().expect("text");
        let span = |s: &serde_json::Value| {
            let at = |i: usize| s[i].as_u64().expect("offset") as usize;
            (at(0), at(1))
        };
        let want: Vec<(usize, usize)> = v["spans"]
            .as_array()
            .expect("spans")
            .iter()
            .filter(|s| s[2] == label)
            .map(span)
            .collect();
        let got: Vec<(usize, usize)> = m
            .mask(t)
            .items
            .iter()
            .filter(|i| i.kind == kind)
            .map(|i| (i.span[0], i.span[1]))
            .collect();
        gold += want.len();
        predicted += got.len();
        correct += got.iter().filter(|g| want.contains(g)).count();
        for w in want.iter().filter(|w| !got.contains(w)) {
            println!("  miss {w:?} in {t}");
        }
        for g in got.iter().filter(|g| !want.contains(g)) {
            println!("  false {g:?} in {t}");
        }
    }
    let p = correct as f64 / predicted.max(1) as f64;
    (p, correct as f64 / gold.max(1) as f64, gold)
}
