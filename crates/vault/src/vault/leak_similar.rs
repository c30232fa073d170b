//! String similarity per sentence against each checked secret (high), and over-explicit hints
//! of level-2 secrets (medium): by a score band below the threshold, or by content words.

use std::collections::HashMap;

use crate::text::chars::{is_kanji, is_katakana};
use crate::vault::similarity::{Folded, Profile, compare};

use super::super::messages;
use super::super::text::Prepared;
use super::super::{IssueKind, LeakIssue, ReviewConfig, ReviewInput};
use super::{Allowed, Compiled, Seen, fold, round3};

/// Content words of a secret for the explicit-hint rule: maximal runs of kanji, katakana and
/// ASCII letters/digits of ≥ 2 chars in the folded content, minus any inside the entity name
/// (naming the character is no hint). At most 64.
///
/// The rule: a sentence holding MORE THAN HALF of them, and at least two, states the secret
/// too explicitly. Two alone would be too eager: one multi-word place (駅前の喫茶店, 川沿いの
/// 公園) already gives two words, and naming where something happened is not telling what.
pub(in crate::vault::leak) fn content_words(content: &str, entity: &str) -> Vec<String> {
    let entity = fold(entity);
    let mut words: Vec<String> = Vec::new();
    let mut run = String::new();
    let chars = Folded::new(content).chars;
    for c in chars.iter().copied().chain(std::iter::once('\0')) {
        if is_kanji(c) || is_katakana(c) || c.is_ascii_alphanumeric() {
            run.push(c);
            continue;
        }
        let w = std::mem::take(&mut run);
        if w.chars().count() >= 2 && !entity.contains(&w) && !words.contains(&w) {
            words.push(w);
        }
    }
    words.truncate(64);
    words
}

impl Compiled {
    pub(super) fn similarity_issues(
        &self,
        t: &Prepared,
        input: &ReviewInput,
        cfg: &ReviewConfig,
        allowed: &Allowed,
        issues: &mut Vec<LeakIssue>,
        seen: &mut Seen,
    ) {
        let core = |a: usize, b: usize| -> Vec<char> {
            t.fold.chars[a..b]
                .iter()
                .copied()
                .filter(|c| c.is_alphanumeric())
                .collect()
        };
        for (sn, sent) in t.sentences.iter().enumerate() {
            let (a, b) = sent.norm;
            let base = Profile::new(&core(a, b), &[]);
            if base.is_empty() {
                continue;
            }
            for &si in &self.checked {
                let secret = &input.secrets[si];
                let gaps: Vec<(usize, usize)> = allowed.by_secret[si]
                    .iter()
                    .filter(|&&(s, e)| s < b && a < e)
                    .copied()
                    .collect();
                let masked;
                let profile = if gaps.is_empty() {
                    &base
                } else {
                    let segments = outside(a, b, &gaps);
                    let cores: Vec<Vec<char>> = segments.iter().map(|&(x, y)| core(x, y)).collect();
                    masked = Profile::from_segments(cores.iter().map(Vec::as_slice), &[]);
                    &masked
                };
                let score = compare(&self.profiles[si], profile).value();
                let threshold = cfg.thresholds.get(secret.importance);
                let (kind, msg) = if score > threshold {
                    seen.strong.insert((sn, si));
                    let m = messages::similarity(&secret.id, score, threshold, secret);
                    (IssueKind::Similarity, m)
                } else if secret.level == 2
                    && score > cfg.explicit_hint_threshold
                    && !seen.strong.contains(&(sn, si))
                {
                    seen.hinted.insert((sn, si));
                    let m = messages::hint_score(&secret.id, score, secret);
                    (IssueKind::ExplicitHint, m)
                } else if secret.level <= 1
                    && score > cfg.latent_hint_threshold
                    && !seen.strong.contains(&(sn, si))
                {
                    seen.hinted.insert((sn, si));
                    let m = messages::latent_score(&secret.id, score, secret);
                    (IssueKind::LatentHint, m)
                } else {
                    continue;
                };
                let mut issue = Self::issue(t, kind, (a, b), Some(&secret.id), msg);
                issue.score = Some(round3(score));
                issues.push(issue);
            }
        }
    }

    pub(super) fn word_hints(
        &self,
        t: &Prepared,
        input: &ReviewInput,
        allowed: &Allowed,
        issues: &mut Vec<LeakIssue>,
        reported: &Seen,
    ) {
        let mut seen: HashMap<(usize, usize), u64> = HashMap::new();
        self.words.each(&t.string, |p, sb, eb| {
            let (s, e) = (t.char_at_byte(sb), t.char_at_byte(eb));
            let Some(sent) = t.sentence_of(s) else {
                return;
            };
            for &(si, bit) in &self.word_owners[p] {
                if !allowed.covers(si, s, e) {
                    *seen.entry((sent, si)).or_default() |= 1u64 << bit;
                }
            }
        });
        let mut found: Vec<_> = seen
            .iter()
            .map(|(k, b)| (*k, *b))
            .filter(|&(key, bits)| {
                let n = bits.count_ones();
                n >= 2
                    && 2 * n > self.word_counts[key.1]
                    && !reported.strong.contains(&key)
                    && !reported.hinted.contains(&key)
            })
            .collect();
        // A secret split over two sentences (工房で働くんだ。春からね、海の近くの): the words
        // of two neighbouring sentences together, when neither alone said enough.
        let mut split: Vec<((usize, usize), u64)> = Vec::new();
        for (&(sn, si), &bits) in &seen {
            let Some(&next) = seen.get(&(sn + 1, si)) else {
                continue;
            };
            let n = (bits | next).count_ones();
            let enough = |b: u64| b.count_ones() >= 2 && 2 * b.count_ones() > self.word_counts[si];
            let told =
                |k: (usize, usize)| reported.strong.contains(&k) || reported.hinted.contains(&k);
            if n >= 2
                && 2 * n > self.word_counts[si]
                && !enough(bits)
                && !enough(next)
                && !told((sn, si))
                && !told((sn + 1, si))
            {
                split.push(((sn, si), bits | next));
            }
        }
        split.sort_unstable_by_key(|&(key, _)| key);
        for ((sn, si), bits) in split {
            let secret = &input.secrets[si];
            let n = bits.count_ones() as usize;
            let msg = messages::split_words(&secret.id, n, secret);
            let kind = if secret.level <= 1 {
                IssueKind::LatentHint
            } else {
                IssueKind::ExplicitHint
            };
            let span = (t.sentences[sn].norm.0, t.sentences[sn + 1].norm.1);
            issues.push(Self::issue(t, kind, span, Some(&secret.id), msg));
        }
        found.sort_unstable_by_key(|&(key, _)| key);
        for ((sn, si), bits) in found {
            let secret = &input.secrets[si];
            let n = bits.count_ones() as usize;
            let (kind, msg) = if secret.level <= 1 {
                (
                    IssueKind::LatentHint,
                    messages::latent_words(&secret.id, n, secret),
                )
            } else {
                (
                    IssueKind::ExplicitHint,
                    messages::hint_words(&secret.id, n, secret),
                )
            };
            let sent = t.sentences[sn];
            issues.push(Self::issue(t, kind, sent.norm, Some(&secret.id), msg));
        }
    }
}

/// The parts of `a..b` outside the given ranges.
fn outside(a: usize, b: usize, gaps: &[(usize, usize)]) -> Vec<(usize, usize)> {
    let mut gaps = gaps.to_vec();
    gaps.sort_unstable();
    let mut out = Vec::new();
    let mut at = a;
    for (s, e) in gaps {
        if s > at {
            out.push((at, s.min(b)));
        }
        at = at.max(e);
    }
    if at < b {
        out.push((at, b));
    }
    out
}

#[cfg(test)]
#[path = "leak_similar_tests.rs"]
mod tests;
