//! Precision and recall of the rule-based PII masker per kind, on a labelled set of chat
//! messages written for it (tests/fixtures/pii_labelled.jsonl, built from
//! pii_labelled_src.txt by gen_pii_labelled.py). The test fails when a kind drops below the
//! figures recorded in README (issue 16 §2).
//!
//! Scoring: a labelled span is found when every char of it is masked by an item of its kind
//! (a half-masked name is a miss); an item is correct when it overlaps a labelled span of its
//! kind (anything else is a false positive).

use std::collections::BTreeMap;

use kakeai::safety::pii::{PiiKind, shared};

/// The recorded floors: (kind, precision, recall). README's table reports the measured values.
const FLOORS: [(PiiKind, f64, f64); 7] = [
    (PiiKind::Name, 0.95, 0.95),
    (PiiKind::Phone, 0.95, 0.95),
    (PiiKind::Email, 0.95, 0.95),
    (PiiKind::Address, 0.95, 0.95),
    (PiiKind::Company, 0.95, 0.95),
    (PiiKind::School, 0.95, 0.95),
    (PiiKind::Card, 0.95, 0.95),
];

struct Example {
    id: u64,
    text: String,
    spans: Vec<(usize, usize, PiiKind)>,
}

fn load() -> Vec<Example> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/pii_labelled.jsonl"
    );
    let text = std::fs::read_to_string(path).expect("labelled set");
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("json line");
            let spans = v["spans"]
                .as_array()
                .expect("spans")
                .iter()
                .map(|s| {
                    let kind = PiiKind::from_label(s[2].as_str().expect("label")).expect("kind");
                    (
                        s[0].as_u64().expect("start") as usize,
                        s[1].as_u64().expect("end") as usize,
                        kind,
                    )
                })
                .collect();
            Example {
                id: v["id"].as_u64().expect("id"),
                text: v["text"].as_str().expect("text").to_string(),
                spans,
            }
        })
        .collect()
}

#[derive(Default, Debug)]
struct Count {
    gold: usize,
    found: usize,
    predicted: usize,
    correct: usize,
}

#[test]
fn precision_and_recall_per_kind_hold() {
    let set = load();
    assert!(set.len() >= 300, "the set has {} messages", set.len());
    let mut counts: BTreeMap<&str, Count> = BTreeMap::new();
    let mut misses = Vec::new();
    for ex in &set {
        let m = shared().mask(&ex.text);
        for &(s, e, k) in &ex.spans {
            let c = counts.entry(k.label()).or_default();
            c.gold += 1;
            let covered = (s..e).all(|i| {
                m.items
                    .iter()
                    .any(|it| it.kind == k && it.span[0] <= i && i < it.span[1])
            });
            if covered {
                c.found += 1;
            } else {
                misses.push(format!(
                    "#{} miss {} [{s},{e}) in {:?} → {}",
                    ex.id,
                    k.label(),
                    ex.text,
                    m.masked_text
                ));
            }
        }
        for it in &m.items {
            let c = counts.entry(it.kind.label()).or_default();
            c.predicted += 1;
            let ok = ex
                .spans
                .iter()
                .any(|&(s, e, k)| k == it.kind && it.span[0] < e && s < it.span[1]);
            if ok {
                c.correct += 1;
            } else {
                misses.push(format!(
                    "#{} false {} {:?} in {:?} → {}",
                    ex.id,
                    it.kind.label(),
                    it.span,
                    ex.text,
                    m.masked_text
                ));
            }
        }
    }
    let mut report = String::from("kind | labelled | precision | recall\n");
    let mut failed = Vec::new();
    for (kind, p_floor, r_floor) in FLOORS {
        let c = counts
            .get(kind.label())
            .unwrap_or_else(|| panic!("no {} in the set", kind.label()));
        assert!(c.gold > 0, "no labelled {}", kind.label());
        let p = if c.predicted == 0 {
            0.0
        } else {
            c.correct as f64 / c.predicted as f64
        };
        let r = c.found as f64 / c.gold as f64;
        report.push_str(&format!(
            "{} | {} | {p:.3} | {r:.3}\n",
            kind.label(),
            c.gold
        ));
        if p < p_floor || r < r_floor {
            failed.push(kind.label());
        }
    }
    println!("{report}");
    for m in &misses {
        println!("{m}");
    }
    assert!(
        failed.is_empty(),
        "below the floor: {failed:?}\n{report}\n{}",
        misses.join("\n")
    );
}
