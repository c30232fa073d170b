//! Emoji standing for a secret's words (🐱📦 for 子猫 and 物置, 🎐 for 風鈴): every emoji in a
//! line is read as its Japanese CLDR names (assets/vault/emoji_ja.tsv, from emojibase-data),
//! and those names are compared with each checked secret's forbidden keywords and readings.
//!
//! A name equal to a keyword counts 2, a name sharing a kanji with a short keyword (工場 and
//! 工房) or inside one (子猫 in 子猫を世話) counts 1. A secret scoring 2 or more from the
//! line's emoji is reported: as a forbidden keyword when some name equals one, else as a latent
//! hint. One emoji that only shares a kanji (🌊 and 海沿い) is not enough.

use std::collections::HashMap;
use std::sync::OnceLock;

use crate::text::chars::is_kanji;

const TABLE: &str = include_str!("../../../../assets/vault/emoji_ja.tsv");

/// Emoji (without U+FE0F) to their Japanese names.
fn table() -> &'static HashMap<String, Vec<String>> {
    static T: OnceLock<HashMap<String, Vec<String>>> = OnceLock::new();
    T.get_or_init(|| {
        TABLE
            .lines()
            .filter(|l| !l.starts_with('#'))
            .filter_map(|l| {
                let mut f = l.split('\t');
                let e = f.next()?.to_string();
                let names: Vec<String> = f.filter(|w| !w.is_empty()).map(str::to_string).collect();
                (!e.is_empty()).then_some((e, names))
            })
            .collect()
    })
}

/// Emoji in `text` as `(start, end, names)` in chars, longest sequence first (ZWJ sequences
/// and flags are one emoji).
pub fn emoji_in(text: &[char]) -> Vec<(usize, usize, &'static [String])> {
    let t = table();
    let mut out = Vec::new();
    let mut i = 0;
    while i < text.len() {
        let mut hit = None;
        for len in (1..=8.min(text.len() - i)).rev() {
            let key: String = text[i..i + len]
                .iter()
                .filter(|c| **c != '\u{FE0F}')
                .collect();
            if let Some(names) = t.get(&key) {
                hit = Some((len, names.as_slice()));
                break;
            }
        }
        match hit {
            Some((len, names)) => {
                out.push((i, i + len, names));
                i += len;
            }
            None => i += 1,
        }
    }
    out
}

/// How strongly one emoji's names point at a keyword: 2 equal, 1 related, 0 not.
fn relation(names: &[String], keyword: &str) -> u32 {
    let k = keyword.trim();
    if k.is_empty() {
        return 0;
    }
    let mut best = 0;
    for n in names {
        if n == k {
            return 2;
        }
        let short = k.chars().count() <= 3;
        let inside = n.chars().count() >= 2 && k.contains(n.as_str());
        let shares = short && n.chars().filter(|c| is_kanji(*c)).any(|c| k.contains(c));
        if inside || shares {
            best = 1;
        }
    }
    best
}

/// Per secret that the emoji point at: `(secret index, score, any exact, span of the emoji)`.
pub fn pointed(
    text: &[char],
    keywords: &[(usize, Vec<String>)],
) -> Vec<(usize, u32, bool, (usize, usize))> {
    let found = emoji_in(text);
    if found.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    for (si, words) in keywords {
        let (mut score, mut exact) = (0, false);
        let (mut s, mut e) = (usize::MAX, 0);
        for (a, b, names) in &found {
            let r = words.iter().map(|w| relation(names, w)).max().unwrap_or(0);
            if r > 0 {
                score += r;
                exact |= r == 2;
                s = s.min(*a);
                e = e.max(*b);
            }
        }
        if score >= 2 {
            out.push((*si, score, exact, (s, e)));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chars(s: &str) -> Vec<char> {
        s.chars().collect()
    }

    #[test]
    fn emoji_are_read_as_their_japanese_names() {
        let e = emoji_in(&chars("猫🐱と🏳️‍🌈と🇯🇵"));
        assert_eq!(e.len(), 3, "{e:?}");
        assert!(e[0].2.iter().any(|n| n == "猫"));
        assert_eq!((e[1].0, e[1].1), (3, 7));
    }

    /// Two related emoji, or one equal to a keyword, point at a secret; one related emoji, or
    /// emoji about something else, do not.
    #[test]
    fn emoji_point_at_keywords() {
        let kw = vec![
            (0, vec!["工房".to_string(), "海沿い".to_string()]),
            (1, vec!["物置".to_string(), "子猫を世話".to_string()]),
            (2, vec!["風鈴".to_string()]),
        ];
        let ids = |s: &str| -> Vec<usize> { pointed(&chars(s), &kw).iter().map(|p| p.0).collect() };
        assert_eq!(ids("春から🏭🌊だよ"), vec![0]);
        assert_eq!(ids("昔ね、🐱📦…"), vec![1]);
        assert_eq!(ids("縁側の🎐"), vec![2]);
        assert!(ids("海きれい🌊").is_empty());
        assert!(ids("おいしい🍰☕").is_empty());
        assert!(ids("").is_empty());
    }
}
