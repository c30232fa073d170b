//! Character-level string similarity for leak review: NFKC folding with an offset map, and a
//! weighted character-bigram score of how much of a secret a sentence restates.
//!
//! Features: character bigrams plus single kanji. Japanese has no word boundaries, so
//! token-based measures need a tokenizer whose segmentation of an unseen paraphrase is
//! unreliable. Bigrams capture short words and okurigana (拾っ, 飼っ, 内緒) without one; single
//! kanji carry meaning on their own and survive what breaks bigrams in a paraphrase — reordering
//! and re-inflection change the bigrams that straddle a particle (姉に → お姉ちゃんに, 拾って猫を
//! → 拾った猫を) but keep the kanji. Single kana are too common (は, の) to count.
//!
//! The score is `max(dice, containment)` over weighted feature sets, where `containment` is the
//! share of the secret's feature weight found in the sentence:
//! - containment alone would miss nothing that is embedded in a long sentence (a leak does not
//!   get safer by adding words around it), but it undervalues a short sentence that restates only
//!   the core of the secret (the subject is usually clear from context);
//! - Dice rewards exactly that case: it exceeds containment only when the sentence has less
//!   feature weight than the secret.
//!
//! Weights: a bigram made only of hiragana is grammar glue (って, てい, いた) shared by unrelated
//! sentences, so it weighs [`HIRAGANA_WEIGHT`]; a feature of the secret's entity name (アイラ,
//! あゆ) is multiplied by [`ENTITY_WEIGHT`], because naming the character is not leaking her
//! secret.

use std::collections::HashSet;

use unicode_normalization::char::{compose, decompose_compatible};

use crate::text::chars::{is_hiragana, is_kanji};

/// Weight of a bigram whose two chars are both hiragana.
pub const HIRAGANA_WEIGHT: f64 = 0.5;
/// Extra factor for a feature that also occurs in the entity name.
pub const ENTITY_WEIGHT: f64 = 0.25;
/// Weight of a single kanji.
pub const KANJI_WEIGHT: f64 = 1.0;
/// The second half of a packed single-char feature.
const UNIGRAM: char = '\u{1}';

/// Calls `emit` with the NFKC form of `c`, lowercased. Composition with the char before
/// (half-width ｶﾞ → ガ, か + U+3099 → が) is done by [`Folded`], which sees the neighbours.
pub fn fold_char(c: char, mut emit: impl FnMut(char)) {
    if c.is_ascii() {
        emit(c.to_ascii_lowercase());
        return;
    }
    decompose_compatible(c, |d| {
        for l in d.to_lowercase() {
            emit(l);
        }
    });
}

/// A text in NFKC (lowercased) with, for every folded char, the original char range it came
/// from. NFKC is applied per char (compatibility decomposition) followed by pairwise canonical
/// composition with the previous char, which equals whole-string NFKC for Japanese text
/// (full/half width, dakuten, circled and squared forms) and for Latin with single accents.
#[derive(Debug, Clone, Default)]
pub struct Folded {
    pub chars: Vec<char>,
    /// Original char range `[start, end)` of each folded char.
    pub from: Vec<(u32, u32)>,
    /// Number of chars in the original text.
    pub orig_len: usize,
}

impl Folded {
    pub fn new(text: &str) -> Folded {
        let mut f = Folded {
            chars: Vec::with_capacity(text.len() / 2),
            from: Vec::with_capacity(text.len() / 2),
            orig_len: 0,
        };
        for (i, c) in text.chars().enumerate() {
            let i = i as u32;
            let first = f.chars.len();
            fold_char(c, |d| {
                if let Some(last) = f.chars.last_mut()
                    && let Some(composed) = compose(*last, d)
                {
                    *last = composed;
                    if let Some(r) = f.from.last_mut() {
                        r.1 = i + 1;
                    }
                    return;
                }
                f.chars.push(d);
                f.from.push((i, i + 1));
            });
            // A char that vanished entirely into its predecessor still belongs to it.
            if f.chars.len() == first
                && let Some(r) = f.from.last_mut()
            {
                r.1 = i + 1;
            }
            f.orig_len = i as usize + 1;
        }
        f
    }

    pub fn as_string(&self) -> String {
        self.chars.iter().collect()
    }

    /// Original char range of the folded range `start..end`.
    pub fn to_original(&self, start: usize, end: usize) -> (usize, usize) {
        if start >= end || start >= self.from.len() {
            let at = self.from.get(start).map_or(self.orig_len, |r| r.0 as usize);
            return (at, at);
        }
        let s = self.from[start].0 as usize;
        let e = self.from[end.min(self.from.len()) - 1].1 as usize;
        (s, e.max(s))
    }
}

/// NFKC + lowercase, keeping only letters and digits (kana, kanji, ー and 々 included):
/// the material the similarity score compares.
pub fn fold_core(text: &str) -> Vec<char> {
    Folded::new(text)
        .chars
        .into_iter()
        .filter(|c| c.is_alphanumeric())
        .collect()
}

fn pack(a: char, b: char) -> u64 {
    (u64::from(a) << 32) | u64::from(b)
}

/// The weighted feature set (bigrams and single kanji) of a text, sorted for merging.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Profile {
    grams: Vec<(u64, f64)>,
    total: f64,
}

impl Profile {
    /// Features of each segment (bigrams never span two segments). `entity` is the folded
    /// entity name whose features are discounted.
    pub fn from_segments<'a>(
        segments: impl IntoIterator<Item = &'a [char]>,
        entity: &[char],
    ) -> Profile {
        let entity_grams: HashSet<u64> = entity
            .windows(2)
            .map(|w| pack(w[0], w[1]))
            .chain(entity.iter().map(|&c| pack(c, UNIGRAM)))
            .collect();
        let mut grams: Vec<(u64, f64)> = Vec::new();
        let mut push = |g: u64, weight: f64| {
            let discount = if entity_grams.contains(&g) {
                ENTITY_WEIGHT
            } else {
                1.0
            };
            grams.push((g, weight * discount));
        };
        for seg in segments {
            for &c in seg.iter().filter(|&&c| is_kanji(c)) {
                push(pack(c, UNIGRAM), KANJI_WEIGHT);
            }
            for w in seg.windows(2) {
                let weight = if is_hiragana(w[0]) && is_hiragana(w[1]) {
                    HIRAGANA_WEIGHT
                } else {
                    1.0
                };
                push(pack(w[0], w[1]), weight);
            }
        }
        grams.sort_by_key(|g| g.0);
        grams.dedup_by_key(|g| g.0);
        let total = grams.iter().map(|g| g.1).sum();
        Profile { grams, total }
    }

    pub fn new(core: &[char], entity: &[char]) -> Profile {
        Profile::from_segments([core], entity)
    }

    pub fn is_empty(&self) -> bool {
        self.grams.is_empty()
    }

    /// Total weight.
    pub fn weight(&self) -> f64 {
        self.total
    }
}

/// The parts of a comparison, for tests and for explaining a score.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Score {
    /// Weight (by the secret's weights) of the features both share.
    pub shared: f64,
    pub dice: f64,
    pub containment: f64,
}

impl Score {
    pub fn value(&self) -> f64 {
        self.dice.max(self.containment)
    }
}

/// Compares a sentence with a secret. Shared features count with the secret's weights (so the
/// entity discount applies); the sentence's own total uses its own weights.
pub fn compare(secret: &Profile, sentence: &Profile) -> Score {
    let (a, b) = (&secret.grams, &sentence.grams);
    let (mut i, mut j, mut shared) = (0, 0, 0.0);
    while i < a.len() && j < b.len() {
        match a[i].0.cmp(&b[j].0) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                shared += a[i].1;
                i += 1;
                j += 1;
            }
        }
    }
    let denom = secret.total + sentence.total;
    Score {
        shared,
        dice: if denom > 0.0 {
            2.0 * shared / denom
        } else {
            0.0
        },
        containment: if secret.total > 0.0 {
            shared / secret.total
        } else {
            0.0
        },
    }
}

/// The similarity score of `sentence` to `secret` (both plain text), in 0..=1.
pub fn similarity(secret: &str, entity: &str, sentence: &str) -> f64 {
    let entity = fold_core(entity);
    compare(
        &Profile::new(&fold_core(secret), &entity),
        &Profile::new(&fold_core(sentence), &[]),
    )
    .value()
}

#[cfg(test)]
#[path = "similarity_tests.rs"]
mod tests;
