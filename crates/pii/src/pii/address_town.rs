//! Addresses with neither prefecture nor 市区町村: a town name right before a full block number
//! (道玄坂2-10-7, みなとみらい3-4-1, 北1条西2丁目). The town is the run of kanji, katakana and
//! kana before the number, cut at particles (横浜の|みなとみらい); a block number needs three
//! parts or a 丁目, so scores (3-1) and dates (2024-01-15) stay.

use super::address::extend_building;
use super::view::View;
use super::{Cand, PiiKind};

/// Kana that end a town name when read backwards: particles (横浜の, 住所は, 家が).
const STOPS: &str = "のはをにでへもやかねよ";

/// Words a number follows without being a block number (電話番号1-2-3, 品番12-3-4).
const NOT_TOWN_ENDS: [&str; 16] = [
    "番号",
    "番",
    "号",
    "日",
    "版",
    "品番",
    "型番",
    "電話",
    "携帯",
    "年",
    "スコア",
    "結果",
    "点",
    "対",
    "戦",
    "ID",
];

fn is_town_char(c: char) -> bool {
    crate::text::chars::is_kanji(c)
        || crate::text::chars::is_katakana(c)
        || (crate::text::chars::is_hiragana(c) && !STOPS.contains(c))
}

/// The end of a block number starting at `i`, if one does: `N-N-N` (first part of at most four
/// digits, not a date) or `N丁目` optionally followed by `N番` / `N-N` / `N号`.
fn block_end(v: &View, i: usize) -> Option<usize> {
    let digits = |at: usize| v.run_after(at, 5, |c| c.is_ascii_digit());
    let a = digits(i);
    if a == i || v.at(i) == Some('0') {
        return None;
    }
    if v.slice(a, (a + 2).min(v.len())) == "丁目" {
        let mut e = a + 2;
        let b = digits(e);
        if b > e {
            e = b;
            for w in ["番地", "番", "号", "-"] {
                let n = w.chars().count();
                if v.slice(e, (e + n).min(v.len())) == w {
                    e += n;
                    let c = digits(e);
                    e = if c > e { c } else { e };
                    break;
                }
            }
        }
        return Some(e);
    }
    // A leading 0 is a phone number's (0120-123-456), never a block's.
    if a - i > 4 || v.at(a) != Some('-') || v.at(i) == Some('0') {
        return None;
    }
    let b = digits(a + 1);
    if b == a + 1 || v.at(b) != Some('-') {
        return None;
    }
    let c = digits(b + 1);
    if c == b + 1
        || v.at(c)
            .is_some_and(|ch| ch.is_ascii_alphanumeric() || ch == '-')
    {
        return None;
    }
    let date = a - i == 4 && b - a - 1 <= 2 && c - b - 1 <= 2;
    (!date).then_some(c)
}

pub(super) fn find(v: &View, out: &mut Vec<Cand>) {
    let mut i = 1;
    while i < v.len() {
        let starts_number = v.chars[i].is_ascii_digit() && !v.chars[i - 1].is_ascii_digit();
        let Some(e) = starts_number.then(|| block_end(v, i)).flatten() else {
            i += 1;
            continue;
        };
        let s = v.run_before(i, 10, is_town_char);
        let town = v.slice(s, i);
        if i - s >= 2 && !NOT_TOWN_ENDS.iter().any(|w| town.ends_with(w)) {
            out.push(Cand::new(PiiKind::Address, s, extend_building(v, e)));
        }
        i = e.max(i + 1);
    }
}
