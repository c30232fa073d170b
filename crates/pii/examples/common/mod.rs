//! What the examples share: the workspace root, their `--flag VALUE` arguments, and the
//! labelled corpora and plain lines they name (paths relative to the workspace root).

use std::path::{Path, PathBuf};

use kakeai_pii::pii::eval;
use kakeai_pii::pii::tagger::core::Example;

/// The workspace root: the assets and corpora live there.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The value after `name` on the command line.
pub fn arg(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

/// The comma-separated numbers after `name`, or `default`'s.
pub fn numbers(name: &str, default: &str) -> Vec<f32> {
    arg(name)
        .unwrap_or_else(|| default.into())
        .split(',')
        .map(|x| {
            x.parse()
                .unwrap_or_else(|_| panic!("{name}: {x:?} is not a number"))
        })
        .collect()
}

/// The examples of every comma-separated path (`eval::corpora`: a JSONL set or a train.txt
/// spec); a path that cannot be read stops the example with its error.
pub fn corpora(spec: &str) -> Vec<Example> {
    spec.split(',')
        .filter(|p| !p.is_empty())
        .flat_map(|p| eval::corpora(&root(), p).unwrap_or_else(|e| panic!("{e}")))
        .collect()
}

/// The lines of the file after `name` (none without the flag).
pub fn lines(name: &str) -> Vec<String> {
    arg(name)
        .map(|p| {
            std::fs::read_to_string(root().join(&p))
                .unwrap_or_else(|e| panic!("{p}: {e}"))
                .lines()
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}
