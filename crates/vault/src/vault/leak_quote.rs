//! Direct quotation (seed 004 §5.4): runs of ≥ k consecutive folded chars (whitespace ignored)
//! shared with a setting text or a secret. Every k-gram of the sources is hashed once; a text is
//! scanned with a rolling hash, hits are verified char by char, and overlapping or touching hit
//! windows merge into one run.

use std::collections::HashMap;

use crate::vault::similarity::Folded;

use super::ReviewInput;

const BASE: u64 = 0x0100_0000_01b3;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Source {
    Setting(usize),
    Secret(usize),
}

/// A quoted run: dense (non-whitespace folded) char range of the text and the source quoted
/// most within it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Run {
    pub start: usize,
    pub end: usize,
    pub source: Source,
}

pub(super) struct QuoteIndex {
    k: usize,
    sources: Vec<(Source, Vec<char>)>,
    table: HashMap<u64, Vec<(u32, u32)>>,
    /// BASE^k, to drop the char leaving the window.
    top: u64,
}

fn dense(text: &str) -> Vec<char> {
    Folded::new(text)
        .chars
        .into_iter()
        .filter(|c| !c.is_whitespace())
        .collect()
}

fn step(h: u64, c: char) -> u64 {
    h.wrapping_mul(BASE).wrapping_add(u64::from(c))
}

/// Calls `f(start, hash)` for every window of `k` chars.
fn each_window(chars: &[char], k: usize, top: u64, mut f: impl FnMut(usize, u64)) {
    if k == 0 || chars.len() < k {
        return;
    }
    let mut h = 0u64;
    for (i, &c) in chars.iter().enumerate() {
        h = step(h, c);
        if i >= k {
            h = h.wrapping_sub(u64::from(chars[i - k]).wrapping_mul(top));
        }
        if i + 1 >= k {
            f(i + 1 - k, h);
        }
    }
}

impl QuoteIndex {
    /// `k == 0` disables the check.
    pub fn new(input: &ReviewInput, k: usize) -> QuoteIndex {
        let mut sources: Vec<(Source, Vec<char>)> = Vec::new();
        if k > 0 {
            for (i, s) in input.settings.iter().enumerate() {
                sources.push((Source::Setting(i), dense(&s.text)));
            }
            for (i, s) in input.secrets.iter().enumerate() {
                sources.push((Source::Secret(i), dense(&s.content)));
            }
        }
        let mut top = 1u64;
        for _ in 0..k {
            top = top.wrapping_mul(BASE);
        }
        let mut table: HashMap<u64, Vec<(u32, u32)>> = HashMap::new();
        for (si, (_, chars)) in sources.iter().enumerate() {
            each_window(chars, k, top, |pos, h| {
                let hits = table.entry(h).or_default();
                // One entry per distinct k-gram per source is enough to verify and attribute.
                if !hits.iter().any(|&(s, _)| s as usize == si) {
                    hits.push((si as u32, pos as u32));
                }
            });
        }
        QuoteIndex {
            k,
            sources,
            table,
            top,
        }
    }

    /// Quoted runs in `text` (dense chars). A window for which `exempt(start, end)` holds (it
    /// touches an allowed expression) does not count.
    pub fn find(&self, text: &[char], exempt: impl Fn(usize, usize) -> bool) -> Vec<Run> {
        let k = self.k;
        let mut hits: Vec<(usize, usize)> = Vec::new();
        each_window(text, k, self.top, |j, h| {
            let Some(cands) = self.table.get(&h) else {
                return;
            };
            let window = &text[j..j + k];
            let verified = cands.iter().find(|&&(s, p)| {
                let chars = &self.sources[s as usize].1;
                chars.get(p as usize..p as usize + k) == Some(window)
            });
            if let Some(&(s, _)) = verified
                && !exempt(j, j + k)
            {
                hits.push((j, s as usize));
            }
        });
        let mut runs = Vec::new();
        let mut i = 0;
        while i < hits.len() {
            let start = hits[i].0;
            let mut end = start + k;
            let mut counts: HashMap<usize, usize> = HashMap::new();
            while i < hits.len() && hits[i].0 <= end {
                end = end.max(hits[i].0 + k);
                *counts.entry(hits[i].1).or_default() += 1;
                i += 1;
            }
            let best = counts
                .iter()
                .max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0)))
                .map_or(0, |(&s, _)| s);
            runs.push(Run {
                start,
                end,
                source: self.sources[best].0,
            });
        }
        runs
    }
}
