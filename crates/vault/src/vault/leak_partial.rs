//! Keywords written in halves: a compound keyword cut apart (工房 → 「工」のつく「房」, 料理帳 →
//! 料理の帳面) or several of a secret's keywords each given by one of its halves (海の近くの工…
//! 春から → 海沿い, 工房, 春から). No model needed: each forbidden keyword's kanji pieces are
//! looked for in the kanji runs of the text (a single kanji only as a run of its own), within a
//! sentence and the next.
//!
//! A secret is hinted when, in that window, one keyword's every piece appears apart (a compound
//! written in halves), or pieces of most of its keywords appear (at least two, more than half of
//! them). A single common kanji alone (春, 海) never is.

use super::super::messages;
use super::super::text::Prepared;
use super::super::{IssueKind, LeakIssue, ReviewInput};
use super::{Compiled, Seen};
use crate::text::chars::is_kanji;

/// One piece of a keyword: its kanji, and where in a run of the text it must stand.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Piece {
    pub kanji: Vec<char>,
    pub at: Place,
    /// The keyword it belongs to (index in the secret's `forbidden_keywords`).
    pub keyword: usize,
    /// Its half of that keyword: 0 the front, 1 the back (a run of its own counts as both).
    pub half: u8,
    /// The compound it was cut from (empty for a run of its own): a text run holding it whole
    /// is the keyword itself, the keyword check's to find.
    pub compound: Vec<char>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Place {
    /// The start of a kanji run.
    Front,
    /// The end of a kanji run.
    Back,
    /// A whole kanji run.
    Whole,
}

/// The kanji runs of `s`.
fn runs(s: &[char]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < s.len() {
        if is_kanji(s[i]) {
            let j = (i..s.len()).find(|&j| !is_kanji(s[j])).unwrap_or(s.len());
            out.push((i, j));
            i = j;
        } else {
            i += 1;
        }
    }
    out
}

/// The pieces of one keyword: with two kanji runs or more (引っ越し, 子猫を世話), each run whole;
/// with one run of two kanji or more (工房, 料理帳), each split into a front and a back; a
/// keyword whose one run is a single kanji (春から) has no piece: one kanji says too little.
pub(super) fn pieces(keyword: usize, word: &str) -> Vec<Piece> {
    let chars: Vec<char> = crate::text::fold::fold_str(word.trim()).chars().collect();
    let rs = runs(&chars);
    let mut out = Vec::new();
    if rs.len() >= 2 {
        for (n, &(a, b)) in rs.iter().enumerate() {
            let half = u8::from(2 * n >= rs.len());
            out.push(Piece {
                kanji: chars[a..b].to_vec(),
                at: Place::Whole,
                keyword,
                half,
                compound: Vec::new(),
            });
        }
    } else if let Some(&(a, b)) = rs.first()
        && b - a >= 2
    {
        let compound = chars[a..b].to_vec();
        for cut in a + 1..b {
            out.push(Piece {
                kanji: chars[a..cut].to_vec(),
                at: Place::Front,
                keyword,
                half: 0,
                compound: compound.clone(),
            });
            out.push(Piece {
                kanji: chars[cut..b].to_vec(),
                at: Place::Back,
                keyword,
                half: 1,
                compound: compound.clone(),
            });
        }
    }
    out
}

/// Per keyword, the halves (bit 0 front, bit 1 back) whose pieces stand in `text`'s kanji runs,
/// a run that holds the whole keyword aside (that is the keyword itself, found elsewhere).
pub(super) fn halves_present(text: &[char], pieces: &[Piece], n_keywords: usize) -> Vec<u8> {
    let mut found = vec![0u8; n_keywords];
    for (a, b) in runs(text) {
        let run = &text[a..b];
        for p in pieces {
            // One kanji says something only standing alone (「工」のつく…); two or more may
            // sit inside a longer run (料理 in 料理の帳面 or 再現料理).
            let hit = match p.at {
                Place::Whole => run == p.kanji.as_slice(),
                Place::Front | Place::Back if p.kanji.len() == 1 => run == p.kanji.as_slice(),
                Place::Front | Place::Back => run.windows(p.kanji.len()).any(|w| w == p.kanji),
            };
            let whole = !p.compound.is_empty()
                && run
                    .windows(p.compound.len())
                    .any(|w| w == p.compound.as_slice());
            if hit && !whole {
                found[p.keyword] |= 1 << p.half;
            }
        }
    }
    found
}

/// Whether these halves hint at the secret: one keyword given in both its halves apart, or
/// halves of most keywords (≥ 2, more than half of those that have pieces).
pub(super) fn hinted(found: &[u8], with_pieces: usize) -> bool {
    let apart = found.contains(&0b11);
    let n = found.iter().filter(|&&h| h != 0).count();
    apart || (n >= 2 && 2 * n > with_pieces)
}

impl Compiled {
    /// Keywords written in halves, per sentence and the next (see the module doc).
    pub(super) fn partial_issues(
        &self,
        t: &Prepared,
        input: &ReviewInput,
        issues: &mut Vec<LeakIssue>,
        seen: &Seen,
    ) {
        let told = |sn: usize, si: usize| {
            seen.strong.contains(&(sn, si)) || seen.hinted.contains(&(sn, si))
        };
        for (si, pieces) in &self.partial {
            let (si, pieces) = (*si, pieces.as_slice());
            let secret = &input.secrets[si];
            let n_kw = secret.forbidden_keywords.len();
            let with_pieces = {
                let mut ks: Vec<usize> = pieces.iter().map(|p| p.keyword).collect();
                ks.dedup();
                ks.len()
            };
            let mut sn = 0;
            while sn < t.sentences.len() {
                let end = (sn + 2).min(t.sentences.len());
                let (a, b) = (t.sentences[sn].norm.0, t.sentences[end - 1].norm.1);
                let found = halves_present(&t.fold.chars[a..b], pieces, n_kw);
                let (oa, ob) = t.to_original(a, b);
                let said = issues.iter().any(|i| {
                    i.secret_id.as_deref() == Some(secret.id.as_str())
                        && i.span[0] < ob
                        && oa < i.span[1]
                });
                if hinted(&found, with_pieces) && !said && !(sn..end).any(|s| told(s, si)) {
                    let kind = if secret.level <= 1 {
                        IssueKind::LatentHint
                    } else {
                        IssueKind::ExplicitHint
                    };
                    let n = found.iter().filter(|&&h| h != 0).count();
                    let msg = messages::partial_words(&secret.id, n, secret);
                    issues.push(Self::issue(t, kind, (a, b), Some(&secret.id), msg));
                    sn = end;
                    continue;
                }
                sn += 1;
            }
        }
    }
}

#[cfg(test)]
#[path = "leak_partial_tests.rs"]
mod tests;
