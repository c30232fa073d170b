//! `language` (issue 13 §4): a line that is not mostly Japanese → RETRY. Letters are kana,
//! kanji and any other alphabetic char outside quotes; the share of Japanese ones must reach
//! `language.min_japanese_ratio` once there are `language.min_letters` letters.

use super::super::finding::{Finding, RuleId, Status};
use super::super::{Input, messages};
use crate::text::chars::{is_hiragana, is_kanji, is_katakana};

/// (Japanese letters, all letters) outside quotes and parentheses.
pub fn letters(input: &Input) -> (usize, usize) {
    let a = input.a;
    let mut ja = 0;
    let mut all = 0;
    for (&c, &m) in a.chars.iter().zip(&a.norm.masked) {
        if m {
            continue;
        }
        let japanese = is_hiragana(c) || is_katakana(c) || is_kanji(c);
        if japanese || (c.is_alphabetic() && c != 'ー') {
            all += 1;
            ja += japanese as usize;
        }
    }
    (ja, all)
}

pub fn check(input: &Input) -> Vec<Finding> {
    let r = &input.rules.language;
    let (ja, all) = letters(input);
    if all == 0 || all < r.min_letters {
        return Vec::new();
    }
    let ratio = ja as f64 / all as f64;
    if ratio >= r.min_japanese_ratio {
        return Vec::new();
    }
    let pct = (ratio * 100.0).round() as u32;
    let (m, s) = messages::not_japanese(pct);
    vec![Finding::new(RuleId::Language, Status::Retry, m, s).with_evidence(format!("{ja}/{all}"))]
}
