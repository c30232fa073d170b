//! Measuring the masker on a labelled set: per kind the recall (a gold span counts as found
//! when spans of its kind cover at least half of it), the share masked at all (any kind), and
//! precision (a predicted span is right when it overlaps a gold span of its kind). Labelled
//! sets are JSONL, one `{"text", "spans": [[start, end, kind], ...]}` per line, offsets in
//! chars. Shared by the independent-set tests, the learning curve and `examples/curve.rs`, so
//! every figure is counted the same way.

use std::collections::BTreeMap;

use super::tagger::core::Example;
use super::{PiiKind, PiiMasker};

/// Counts for one kind.
#[derive(Default, Debug, Clone, Copy, PartialEq)]
pub struct Tally {
    pub gold: usize,
    pub found: usize,
    pub masked: usize,
    pub predicted: usize,
    pub right: usize,
}

impl std::ops::AddAssign for Tally {
    fn add_assign(&mut self, o: Tally) {
        self.gold += o.gold;
        self.found += o.found;
        self.masked += o.masked;
        self.predicted += o.predicted;
        self.right += o.right;
    }
}

impl Tally {
    pub fn recall(&self) -> f64 {
        self.found as f64 / self.gold.max(1) as f64
    }
    /// 1.0 when nothing was predicted (no false positive).
    pub fn precision(&self) -> f64 {
        if self.predicted == 0 {
            1.0
        } else {
            self.right as f64 / self.predicted as f64
        }
    }
}

/// Reads a labelled JSONL set; a malformed line is an error naming its line.
pub fn read_set(jsonl: &str) -> Result<Vec<Example>, String> {
    let mut out = Vec::new();
    for (n, line) in jsonl.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let bad = |why: &str| format!("line {}: {why}", n + 1);
        let v: serde_json::Value = serde_json::from_str(line).map_err(|e| bad(&e.to_string()))?;
        let text = v["text"].as_str().ok_or_else(|| bad("no text"))?;
        let mut spans = Vec::new();
        for s in v["spans"].as_array().ok_or_else(|| bad("no spans"))? {
            let at = |i: usize| s.get(i).and_then(|x| x.as_u64()).map(|x| x as usize);
            let kind = s.get(2).and_then(|x| x.as_str());
            match (at(0), at(1), kind) {
                (Some(a), Some(b), Some(k)) if a < b => spans.push((a, b, k.to_string())),
                _ => return Err(bad("a span is [start, end, kind]")),
            }
        }
        out.push(Example {
            text: text.to_string(),
            spans,
        });
    }
    Ok(out)
}

/// Every corpus `train.txt` names (its `corpus PATH` lines, paths relative to `root`), in
/// order: what `build.rs` trains the built-in labeller on.
pub fn training_corpora(root: &std::path::Path) -> Result<Vec<Example>, String> {
    corpora(root, "assets/safety/pii_tagger/train.txt")
}

/// The examples of `path` (relative to `root`): a labelled JSONL set, or a `.txt` spec whose
/// `corpus PATH` lines name such sets.
pub fn corpora(root: &std::path::Path, path: &str) -> Result<Vec<Example>, String> {
    let text = std::fs::read_to_string(root.join(path)).map_err(|e| format!("{path}: {e}"))?;
    if !path.ends_with(".txt") {
        return read_set(&text).map_err(|e| format!("{path}: {e}"));
    }
    let mut out = Vec::new();
    for line in text.lines() {
        if let Some(corpus) = line.trim().strip_prefix("corpus ") {
            out.extend(corpora(root, corpus.trim())?);
        }
    }
    Ok(out)
}

/// Every `step`-th example of `all` (a share that keeps each corpus's part), copied.
pub fn every(all: &[Example], share: f64) -> Vec<Example> {
    let n = ((all.len() as f64) * share).round().max(1.0) as usize;
    let step = all.len() as f64 / n as f64;
    (0..n)
        .map(|i| &all[((i as f64) * step) as usize])
        .map(|e| Example {
            text: e.text.clone(),
            spans: e.spans.clone(),
        })
        .collect()
}

fn overlap(a: (usize, usize), b: (usize, usize)) -> usize {
    a.1.min(b.1).saturating_sub(a.0.max(b.0))
}

/// Per kind (and "all") for `masker` on `set`.
pub fn measure(masker: &PiiMasker, set: &[Example]) -> BTreeMap<String, Tally> {
    let mut t: BTreeMap<String, Tally> = BTreeMap::new();
    for ex in set {
        let got: Vec<(usize, usize, &str)> = masker
            .mask(&ex.text)
            .items
            .iter()
            .map(|i| (i.span[0], i.span[1], i.kind.label()))
            .collect();
        for (s, e, k) in &ex.spans {
            let half = (e - s).div_ceil(2);
            let cover = |same: bool| -> usize {
                got.iter()
                    .filter(|g| !same || g.2 == k)
                    .map(|g| overlap((*s, *e), (g.0, g.1)))
                    .sum()
            };
            let (same, any) = (cover(true), cover(false));
            for key in [k.as_str(), "all"] {
                let x = t.entry(key.to_string()).or_default();
                x.gold += 1;
                x.found += usize::from(same >= half);
                x.masked += usize::from(any >= half);
            }
        }
        for (s, e, k) in &got {
            let right = ex
                .spans
                .iter()
                .any(|g| g.2 == *k && overlap((*s, *e), (g.0, g.1)) > 0);
            for key in [*k, "all"] {
                let x = t.entry(key.to_string()).or_default();
                x.predicted += 1;
                x.right += usize::from(right);
            }
        }
    }
    t
}

/// Each missed gold span (`- kind span | text`) and each wrong predicted span (`+ …`), for
/// reading what a change did.
pub fn errors(masker: &PiiMasker, set: &[Example]) -> Vec<String> {
    let mut out = Vec::new();
    for ex in set {
        let chars: Vec<char> = ex.text.chars().collect();
        let got = masker.mask(&ex.text).items;
        let cut = |s: usize, e: usize| chars[s..e].iter().collect::<String>();
        let line = ex.text.replace('\n', "⏎");
        for (s, e, k) in &ex.spans {
            if !got
                .iter()
                .any(|g| g.kind.label() == k && g.span[0] < *e && *s < g.span[1])
            {
                out.push(format!("- {k} {} | {line}", cut(*s, *e)));
            }
        }
        for g in &got {
            let (s, e, k) = (g.span[0], g.span[1], g.kind.label());
            if !ex.spans.iter().any(|x| x.2 == k && x.0 < e && s < x.1) {
                out.push(format!("+ {k} {} | {line}", cut(s, e)));
            }
        }
    }
    out
}

/// A table of `t` headed by `name`.
pub fn table(name: &str, t: &BTreeMap<String, Tally>) -> String {
    let mut s = format!("{name}\n  kind            gold  recall  masked  precision\n");
    for k in PiiKind::ALL.iter().map(|k| k.label()).chain(["all"]) {
        let Some(x) = t.get(k) else { continue };
        let r = |n: usize, d: usize| {
            if d == 0 {
                "   —".to_string()
            } else {
                format!("{:.3}", n as f64 / d as f64)
            }
        };
        s.push_str(&format!(
            "  {k:<12} {:>6}  {}   {}   {}\n",
            x.gold,
            r(x.found, x.gold),
            r(x.masked, x.gold),
            r(x.right, x.predicted)
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_found_masked_and_right() {
        let set = read_set(
            r#"{"text":"田中さんの番号は090-1234-5678","spans":[[0,2,"氏名"],[8,21,"電話番号"]]}
{"text":"駅で会おう","spans":[]}"#,
        )
        .unwrap();
        let t = measure(&PiiMasker::new(), &set);
        let phone = t["電話番号"];
        assert_eq!((phone.gold, phone.found, phone.right), (1, 1, 1));
        assert_eq!(t["all"].gold, 2);
        assert!(t["all"].predicted >= 1);
    }

    #[test]
    fn a_bad_line_is_named() {
        let e =
            read_set("{\"text\":\"a\",\"spans\":[]}\n{\"text\":\"b\",\"spans\":[[3,1,\"氏名\"]]}")
                .unwrap_err();
        assert!(e.starts_with("line 2:"), "{e}");
    }
}
