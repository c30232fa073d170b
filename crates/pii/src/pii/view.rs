//! The detection view of one message: full-width ASCII folded to half-width, char for char, so a
//! match on the view is a match on the same char offsets of the original.

use crate::text::chars::{is_kanji, is_katakana};

/// One message as the detectors see it.
pub(super) struct View {
    /// Folded chars, one per original char.
    pub chars: Vec<char>,
    /// The same chars as a string, for the regexes and the marker automaton.
    pub norm: String,
    /// Byte offset in `norm` of each char, plus `norm.len()` at the end.
    starts: Vec<usize>,
    /// ASCII digits after folding: a phone number needs at least nine or ten.
    pub digits: usize,
    pub has_at: bool,
    /// An ASCII capital: a romanised name needs one.
    pub has_upper: bool,
    /// 市区町村郡 or 〒: without one there is no address to find.
    pub has_address_marker: bool,
    /// A 、 (a name called out needs one after it).
    pub has_comma: bool,
    /// Whether the message introduces its writer (よろしく, 申します …), asked at most once.
    pub intro: std::cell::OnceCell<bool>,
}

/// Full-width ASCII → ASCII, ideographic space → space, dash look-alikes → `-`. The long-vowel
/// mark ー is a dash only between digits (０９０ー１２３４), never inside a katakana word.
fn fold(c: char, prev_digit: bool, next_digit: bool) -> char {
    match c {
        '\u{FF01}'..='\u{FF5E}' => char::from_u32(c as u32 - 0xFEE0).unwrap_or(c),
        '\u{3000}' => ' ',
        '\u{2010}'..='\u{2015}' | '\u{2212}' | '\u{FE63}' => '-',
        'ー' | 'ｰ' | '〜' if prev_digit && next_digit => '-',
        c => c,
    }
}

fn is_any_digit(c: char) -> bool {
    c.is_ascii_digit() || ('０'..='９').contains(&c)
}

impl View {
    pub fn new(text: &str) -> View {
        let n = text.len();
        let mut v = View {
            chars: Vec::with_capacity(n / 2 + 1),
            norm: String::with_capacity(n),
            starts: Vec::with_capacity(n / 2 + 2),
            digits: 0,
            has_at: false,
            has_upper: false,
            has_address_marker: false,
            has_comma: false,
            intro: std::cell::OnceCell::new(),
        };
        v.chars.extend(text.chars());
        // Most messages fold nothing: their text is copied whole, not char by char.
        let mut folded = false;
        let mut byte = 0;
        let mut prev_digit = false;
        for i in 0..v.chars.len() {
            let raw = v.chars[i];
            let c = if raw.is_ascii() {
                raw
            } else {
                let next_digit = v.chars.get(i + 1).is_some_and(|&c| is_any_digit(c));
                fold(raw, prev_digit, next_digit)
            };
            prev_digit = is_any_digit(raw);
            if c.is_ascii() {
                if c.is_ascii_digit() {
                    v.digits += 1;
                } else if c == '@' {
                    v.has_at = true;
                } else if c.is_ascii_uppercase() {
                    v.has_upper = true;
                } else if c == '-' {
                    v.has_address_marker = true;
                }
            } else if c == '、' {
                v.has_comma = true;
            } else if matches!(c, '市' | '区' | '町' | '村' | '郡' | '〒' | '丁' | '条') {
                v.has_address_marker = true;
            }
            v.starts.push(byte);
            byte += c.len_utf8();
            if c != raw {
                v.chars[i] = c;
                folded = true;
            }
        }
        v.starts.push(byte);
        if folded {
            v.norm.extend(&v.chars);
        } else {
            v.norm.push_str(text);
        }
        if text.contains('〇') {
            v.fold_kanji_numbers();
        }
        v
    }

    /// A phone number in kanji numerals (〇九〇・一二三四・五六七八, 〇三一二三四五六七八):
    /// a run that starts with 〇 and holds 10–12 kanji digits, separated by nothing, ・, ー or
    /// a hyphen, is folded to ASCII digits and hyphens, char for char.
    fn fold_kanji_numbers(&mut self) {
        const KANJI_DIGITS: &str = "〇一二三四五六七八九";
        let digit = |c: char| KANJI_DIGITS.chars().position(|k| k == c);
        let n = self.chars.len();
        let mut i = 0;
        let mut changed = false;
        while i < n {
            if self.chars[i] != '〇' || (i > 0 && digit(self.chars[i - 1]).is_some()) {
                i += 1;
                continue;
            }
            let mut j = i;
            let mut count = 0;
            while j < n {
                let c = self.chars[j];
                if digit(c).is_some() {
                    count += 1;
                } else if !(matches!(c, '・' | 'ー' | '-' | ' ')
                    && self.chars.get(j + 1).is_some_and(|&d| digit(d).is_some()))
                {
                    break;
                }
                j += 1;
            }
            if (10..=12).contains(&count) {
                for c in &mut self.chars[i..j] {
                    *c = match digit(*c) {
                        Some(d) => char::from(b'0' + d as u8),
                        None if *c == ' ' => ' ',
                        None => '-',
                    };
                }
                changed = true;
            }
            i = j.max(i + 1);
        }
        if changed {
            self.norm = self.chars.iter().collect();
            self.starts = self.norm.char_indices().map(|(b, _)| b).collect();
            self.starts.push(self.norm.len());
            self.digits = self.chars.iter().filter(|c| c.is_ascii_digit()).count();
        }
    }

    pub fn len(&self) -> usize {
        self.chars.len()
    }

    /// The char index of a byte offset of `norm` that lies on a char boundary.
    pub fn char_at(&self, byte: usize) -> usize {
        self.starts.partition_point(|&b| b < byte)
    }

    /// Chars `s..e` of the folded text.
    pub fn slice(&self, s: usize, e: usize) -> &str {
        self.norm.get(self.starts[s]..self.starts[e]).unwrap_or("")
    }

    pub fn at(&self, i: usize) -> Option<char> {
        self.chars.get(i).copied()
    }

    /// Start of the run of chars satisfying `class` that ends at `end`, at most `max` long.
    pub fn run_before(&self, end: usize, max: usize, class: impl Fn(char) -> bool) -> usize {
        let mut s = end;
        while s > 0 && end - s < max && class(self.chars[s - 1]) {
            s -= 1;
        }
        s
    }

    /// End of the run of chars satisfying `class` that starts at `start`, at most `max` long.
    pub fn run_after(&self, start: usize, max: usize, class: impl Fn(char) -> bool) -> usize {
        let mut e = start;
        while e < self.chars.len() && e - start < max && class(self.chars[e]) {
            e += 1;
        }
        e
    }
}

/// Kanji (with 々 and ヶ) — the stuff of surnames and given names.
pub(super) fn is_han(c: char) -> bool {
    is_kanji(c)
}

/// Chars of an organisation or school name: kanji, katakana (with ー and ・), ASCII letters.
pub(super) fn is_org_char(c: char) -> bool {
    is_kanji(c) || is_katakana(c) || c.is_ascii_alphabetic()
}

/// Sentence edges and separators: what may stand right before a self-introduced name.
pub(super) fn is_edge(c: char) -> bool {
    c.is_whitespace()
        || matches!(
            c,
            '、' | '。'
                | ','
                | '.'
                | '!'
                | '?'
                | '！'
                | '？'
                | '「'
                | '『'
                | '('
                | '（'
                | '…'
                | '~'
                | '〜'
                | '-'
                | ':'
                | '♪'
        )
}
