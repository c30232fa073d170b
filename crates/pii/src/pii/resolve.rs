//! Overlap resolution and token replacement: candidates become sorted, disjoint items, and
//! items become the masked text.

use std::collections::BTreeMap;

use super::{Cand, PiiItem, PiiKind};

/// Intervals keyed by start, disjoint: only those starting before `e` can overlap `[s, e)`.
fn overlapping<V: Copy>(
    sorted: &BTreeMap<usize, (usize, V)>,
    s: usize,
    e: usize,
) -> impl Iterator<Item = (usize, usize)> + '_ {
    sorted
        .range(..e)
        .rev()
        .map(|(&a, &(b, _))| (a, b))
        .take_while(move |&(_, b)| b > s)
}

/// Resolves overlaps so that every char any candidate covers is masked: the longest candidate
/// (ties by kind rank) keeps its whole span, and each other candidate keeps the parts of its
/// span no earlier one covers (a phone number glued to a company name: both are masked).
/// Candidates touching an existing token (`[氏名]`) are dropped, so masking is idempotent.
/// Returns items sorted by start. O(n log n) for the usual few overlaps.
pub(super) fn resolve(mut cands: Vec<Cand>, tokens: &[(usize, usize)]) -> Vec<PiiItem> {
    let tokens: BTreeMap<usize, (usize, ())> = tokens.iter().map(|&(s, e)| (s, (e, ()))).collect();
    cands.retain(|c| overlapping(&tokens, c.s, c.e).next().is_none());
    cands.sort_by_key(|c| (std::cmp::Reverse(c.e - c.s), c.kind.rank(), c.s));
    let mut kept: BTreeMap<usize, (usize, PiiKind)> = BTreeMap::new();
    for c in cands {
        let mut covered: Vec<(usize, usize)> = overlapping(&kept, c.s, c.e).collect();
        covered.reverse();
        let mut at = c.s;
        let mut pieces = Vec::new();
        for (a, b) in covered {
            if a > at {
                pieces.push((at, a));
            }
            at = at.max(b);
        }
        if at < c.e {
            pieces.push((at, c.e));
        }
        for (a, b) in pieces {
            kept.insert(a, (b, c.kind));
        }
    }
    kept.into_iter()
        .map(|(s, (e, kind))| PiiItem { kind, span: [s, e] })
        .collect()
}

/// Replaces each item's chars of `text` by its token.
pub fn apply(text: &str, items: &[PiiItem]) -> String {
    let ranges: Vec<(usize, usize, PiiKind)> = items
        .iter()
        .map(|i| (i.span[0], i.span[1], i.kind))
        .collect();
    apply_tokens(text, &ranges)
}

/// Replaces chars `[s, e)` of `text` by `kind`'s token; ranges sorted, not overlapping.
pub(super) fn apply_tokens(text: &str, ranges: &[(usize, usize, PiiKind)]) -> String {
    if ranges.is_empty() {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut next = ranges.iter().peekable();
    let mut skip_until = 0usize;
    for (i, c) in text.chars().enumerate() {
        if let Some(&&(s, e, kind)) = next.peek()
            && s == i
        {
            out.push_str(kind.token());
            skip_until = e;
            next.next();
        }
        if i >= skip_until {
            out.push(c);
        }
    }
    out
}

/// For each char of the masked text (`apply(text, items)`), its char offset in the original,
/// or `None` inside a token.
pub(super) fn original_offsets(masked: &str, items: &[PiiItem]) -> Vec<Option<usize>> {
    let mut out = Vec::with_capacity(masked.len());
    let mut o = 0usize;
    for it in items {
        out.extend((o..it.span[0]).map(Some));
        out.extend(std::iter::repeat_n(None, it.kind.token().chars().count()));
        o = it.span[1];
    }
    let rest = masked.chars().count().saturating_sub(out.len());
    out.extend((o..o + rest).map(Some));
    out
}
