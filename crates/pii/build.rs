//! Trains the PII sequence labeller (src/pii/tagger_core.rs) from the labelled corpora
//! and word lists named in assets/safety/pii_tagger/train.txt, and writes the model to
//! `$OUT_DIR/pii_tagger.bin` for `include_bytes!`. Deterministic: the same files give the same
//! model. A malformed line stops the build with its file:line.

#[path = "src/pii/tagger_core.rs"]
#[allow(dead_code)]
mod tagger_core;

use std::path::Path;

fn main() {
    // The workspace root: the assets and labelled corpora live there, shared by every crate.
    let manifest = std::env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR");
    let root = &Path::new(&manifest).join("../..");
    let spec_path = root.join("assets/safety/pii_tagger/train.txt");
    println!("cargo:rerun-if-changed={}", spec_path.display());
    println!("cargo:rerun-if-changed=src/pii/tagger_core.rs");
    let spec = std::fs::read_to_string(&spec_path).expect("assets/safety/pii_tagger/train.txt");
    let mut lists = tagger_core::Lists::default();
    let mut examples = Vec::new();
    let (mut epochs, mut seed) = (5usize, 1u64);
    let mut named: Vec<(String, String)> = Vec::new();
    let mut swaps = tagger_core::Swaps::default();
    let mut all_swaps = String::new();
    for (n, line) in spec.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let at = format!("{}:{}", spec_path.display(), n + 1);
        let parts: Vec<&str> = line.split_whitespace().collect();
        match parts.as_slice() {
            ["epochs", k] => epochs = k.parse().unwrap_or_else(|_| panic!("{at}: epochs N")),
            ["seed", k] => seed = k.parse().unwrap_or_else(|_| panic!("{at}: seed N")),
            ["list", name, path] => named.push((name.to_string(), path.to_string())),
            ["corpus", path] => examples.extend(corpus(root, path)),
            ["swap", path] => {
                let text = read_listed(root, path, &at);
                swaps.add(&text);
                all_swaps.push_str(&format!("\u{1}swap\n{text}"));
            }
            ["fillers", path] => {
                let text = read_listed(root, path, &at);
                swaps.add_fillers(&text);
                all_swaps.push_str(&format!("\u{1}fillers\n{text}"));
            }
            _ => panic!(
                "{at}: expected `list NAME PATH`, `swap PATH`, `fillers PATH`, `corpus PATH`, \
                 `epochs N` or `seed N`"
            ),
        }
    }
    // One list per name, its files joined.
    let mut names: Vec<String> = named.iter().map(|(n, _)| n.clone()).collect();
    names.dedup();
    // The lists as the model saw them, for the crate to look up the same words at run time.
    let mut all_lists = String::new();
    for name in names {
        let mut text = String::new();
        for (_, path) in named.iter().filter(|(n, _)| *n == name) {
            text.push_str(&read_listed(root, path, path));
            text.push('\n');
        }
        lists.add(&name, &text);
        all_lists.push_str(&format!("\u{1}{name}\n{text}"));
    }
    // The analyzer's word codes of every training text, written by `examples/annotate.rs`
    // (build scripts have no dictionary). A text without codes trains on its chars alone.
    let codes_path = root.join("assets/safety/pii_tagger/tokens.tsv");
    println!("cargo:rerun-if-changed={}", codes_path.display());
    let codes_text = std::fs::read_to_string(&codes_path).unwrap_or_default();
    let codes = tagger_core::read_codes(&codes_text);
    let missing = tagger_core::training_texts(&examples, &swaps)
        .iter()
        .filter(|e| !codes.contains_key(&tagger_core::text_key(&e.text)))
        .count();
    if missing > 0 {
        println!(
            "cargo:warning={missing} training texts have no word codes: run \
             `cargo run --release -p kakeai-pii --example annotate`"
        );
    }
    let lookup = |t: &str| codes.get(&tagger_core::text_key(t)).cloned();
    let model = tagger_core::train_with(&examples, &lists, &swaps, epochs, seed, &lookup);
    let out = Path::new(&std::env::var("OUT_DIR").expect("OUT_DIR")).join("pii_tagger_codes.tsv");
    std::fs::write(&out, &codes_text).expect("write the word codes");
    let out = Path::new(&std::env::var("OUT_DIR").expect("OUT_DIR")).join("pii_tagger.bin");
    std::fs::write(&out, model.to_bytes()).expect("write the model");
    let out = Path::new(&std::env::var("OUT_DIR").expect("OUT_DIR")).join("pii_tagger_lists.txt");
    std::fs::write(&out, all_lists).expect("write the lists");
    let out = Path::new(&std::env::var("OUT_DIR").expect("OUT_DIR")).join("pii_tagger_swaps.txt");
    std::fs::write(&out, all_swaps).expect("write the swaps");
}

/// A file `train.txt` names, read and watched for changes; `at` says where it was named.
fn read_listed(root: &Path, path: &str, at: &str) -> String {
    let p = root.join(path);
    println!("cargo:rerun-if-changed={}", p.display());
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{at}: {path}: {e}"))
}

fn corpus(root: &Path, path: &str) -> Vec<tagger_core::Example> {
    let p = root.join(path);
    println!("cargo:rerun-if-changed={}", p.display());
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let v: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("{path}:{}: {e}", n + 1));
        let text = v["text"]
            .as_str()
            .unwrap_or_else(|| panic!("{path}:{}: no text", n + 1));
        let spans = v["spans"]
            .as_array()
            .unwrap_or_else(|| panic!("{path}:{}: no spans", n + 1))
            .iter()
            .map(|s| {
                let at = format!("{path}:{}: a span is [start, end, kind]", n + 1);
                let s = s.as_array().unwrap_or_else(|| panic!("{at}"));
                let num = |k: usize| {
                    s.get(k)
                        .and_then(|x| x.as_u64())
                        .unwrap_or_else(|| panic!("{at}"))
                };
                let kind = s
                    .get(2)
                    .and_then(|x| x.as_str())
                    .unwrap_or_else(|| panic!("{at}"));
                (num(0) as usize, num(1) as usize, kind.to_string())
            })
            .collect();
        out.push(tagger_core::Example {
            text: text.to_string(),
            spans,
        });
    }
    out
}
