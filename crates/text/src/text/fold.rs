//! The folded views of a message every safety layer matches on: `plain` (NFKC) and `folded`
//! (NFKC, katakana → hiragana, lower case), char-aligned with each other and mapped back to
//! char offsets of the original text.
//!
//! NFKC is applied char by char (with a fast path for chars already in NFKC), and a combining
//! mark is composed onto the char before it — so half-width ｶﾞ becomes ガ and its span covers
//! both original chars. Kana and case folding are one char to one char (a lower-case form that
//! would be longer is not used), which is what keeps the two views aligned.

use unicode_normalization::char::{canonical_combining_class, compose};
use unicode_normalization::{IsNormalized, UnicodeNormalization, is_nfkc_quick};

/// A message in its two matching forms, with offsets back to the original.
#[derive(Debug, Clone, Default)]
pub struct Folded {
    /// NFKC only.
    pub plain: String,
    /// NFKC, katakana → hiragana, lower case.
    pub folded: String,
    /// Byte offset of each char of `plain`, then `plain.len()`.
    plain_bytes: Vec<u32>,
    /// Byte offset of each char of `folded`, then `folded.len()`.
    folded_bytes: Vec<u32>,
    /// For each char: the original char range `[start, end)` it came from.
    orig: Vec<(u32, u32)>,
    orig_len: usize,
    /// The keyword-variant views, built on first use (once per text).
    loose: std::sync::OnceLock<super::variants::LooseText>,
}

/// Katakana → hiragana (ヴ and the small ヵヶ included); everything else unchanged.
pub fn kana_fold(c: char) -> char {
    match c {
        '\u{30A1}'..='\u{30F6}' => char::from_u32(c as u32 - 0x60).unwrap_or(c),
        _ => c,
    }
}

/// Lower case when it is one char; otherwise unchanged (keeps the views aligned).
fn lower(c: char) -> char {
    if c.is_ascii() {
        return c.to_ascii_lowercase();
    }
    if !c.is_uppercase() {
        return c;
    }
    let mut l = c.to_lowercase();
    match (l.next(), l.next()) {
        (Some(one), None) => one,
        _ => c,
    }
}

/// The folded form of one already-NFKC char.
pub fn fold_char(c: char) -> char {
    lower(kana_fold(c))
}

/// The folded form of a whole string (what data entries are turned into at load).
pub fn fold_str(s: &str) -> String {
    Folded::new(s).folded
}

/// The NFKC form of a whole string, composed the same way as a message.
pub fn plain_str(s: &str) -> String {
    Folded::new(s).plain
}

fn is_combining(c: char) -> bool {
    matches!(c, '\u{3099}' | '\u{309A}') || canonical_combining_class(c) != 0
}

impl Folded {
    pub fn new(original: &str) -> Folded {
        let cap = original.len();
        let mut f = Folded {
            plain: String::with_capacity(cap),
            folded: String::with_capacity(cap),
            plain_bytes: Vec::with_capacity(cap / 2 + 1),
            folded_bytes: Vec::with_capacity(cap / 2 + 1),
            orig: Vec::with_capacity(cap / 2 + 1),
            orig_len: 0,
            loose: std::sync::OnceLock::new(),
        };
        let mut buf: Vec<char> = Vec::new();
        for (i, c) in original.chars().enumerate() {
            f.orig_len = i + 1;
            let i = i as u32;
            buf.clear();
            match c {
                // The spacing voiced marks decompose to a space plus the combining mark.
                '\u{309B}' => buf.push('\u{3099}'),
                '\u{309C}' => buf.push('\u{309A}'),
                c if is_nfkc_quick(std::iter::once(c)) == IsNormalized::Yes => buf.push(c),
                c => buf.extend(std::iter::once(c).nfkc()),
            }
            for &o in &buf {
                if is_combining(o)
                    && let Some(prev) = f.plain.chars().next_back()
                    && let Some(composed) = compose(prev, o)
                {
                    f.replace_last(composed, i + 1);
                    continue;
                }
                f.push(o, i, i + 1);
            }
        }
        f.plain_bytes.push(f.plain.len() as u32);
        f.folded_bytes.push(f.folded.len() as u32);
        f
    }

    fn push(&mut self, c: char, start: u32, end: u32) {
        self.plain_bytes.push(self.plain.len() as u32);
        self.folded_bytes.push(self.folded.len() as u32);
        self.plain.push(c);
        self.folded.push(fold_char(c));
        self.orig.push((start, end));
    }

    fn replace_last(&mut self, c: char, end: u32) {
        let start = self.orig.last().map(|r| r.0).unwrap_or(0);
        self.plain.pop();
        self.folded.pop();
        self.plain_bytes.pop();
        self.folded_bytes.pop();
        self.orig.pop();
        self.push(c, start, end);
    }

    /// The loose and okurigana views for keyword variants (view chars), built once.
    pub fn loose(&self) -> &super::variants::LooseText {
        self.loose
            .get_or_init(|| super::variants::LooseText::new(self.plain.chars()))
    }

    /// Number of chars in each view.
    pub fn len(&self) -> usize {
        self.orig.len()
    }

    pub fn is_empty(&self) -> bool {
        self.orig.is_empty()
    }

    /// Char index of a byte offset (a char boundary) in `folded`.
    pub fn folded_char_at(&self, byte: usize) -> usize {
        char_at(&self.folded_bytes, byte)
    }

    /// Char index of a byte offset (a char boundary) in `plain`.
    pub fn plain_char_at(&self, byte: usize) -> usize {
        char_at(&self.plain_bytes, byte)
    }

    /// The folded chars `[start, end)` as a string slice.
    pub fn folded_slice(&self, start: usize, end: usize) -> &str {
        slice(&self.folded, &self.folded_bytes, start, end)
    }

    /// The plain chars `[start, end)` as a string slice.
    pub fn plain_slice(&self, start: usize, end: usize) -> &str {
        slice(&self.plain, &self.plain_bytes, start, end)
    }

    /// The original char span of the view's chars `[start, end)`.
    pub fn orig_span(&self, start: usize, end: usize) -> [usize; 2] {
        if start >= end || start >= self.orig.len() {
            let at = self
                .orig
                .get(start)
                .map(|r| r.0 as usize)
                .unwrap_or(self.orig_len);
            return [at, at];
        }
        let s = self.orig[start].0 as usize;
        let e = self.orig[end.min(self.orig.len()) - 1].1 as usize;
        [s, e]
    }

    /// Number of chars in the original text.
    pub fn orig_len(&self) -> usize {
        self.orig_len
    }
}

fn char_at(bytes: &[u32], byte: usize) -> usize {
    let b = byte as u32;
    match bytes.binary_search(&b) {
        Ok(i) => i,
        Err(i) => i.saturating_sub(1),
    }
}

fn slice<'a>(s: &'a str, bytes: &[u32], start: usize, end: usize) -> &'a str {
    let last = bytes.len().saturating_sub(1);
    let (a, b) = (start.min(last), end.min(last).max(start.min(last)));
    s.get(bytes[a] as usize..bytes[b] as usize).unwrap_or("")
}

/// The substring of `text` at char offsets `[start, end)` (for showing what matched).
pub fn char_slice(text: &str, span: [usize; 2]) -> String {
    text.chars()
        .skip(span[0])
        .take(span[1].saturating_sub(span[0]))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folds_width_kana_and_case() {
        let f = Folded::new("ﾊﾞｶＡＩ！カタカナ");
        assert_eq!(f.plain, "バカAI!カタカナ");
        assert_eq!(f.folded, "ばかai!かたかな");
        // ﾊﾞ is two original chars folded into one.
        assert_eq!(f.orig_span(0, 1), [0, 2]);
        assert_eq!(f.orig_span(1, 2), [2, 3]);
        assert_eq!(f.orig_span(2, 4), [3, 5]);
        assert_eq!(f.orig_len(), 10);
        assert_eq!(f.len(), f.folded.chars().count());
        assert_eq!(f.len(), f.plain.chars().count());
    }

    #[test]
    fn expands_compatibility_chars_and_keeps_spans() {
        // ㍻ is one char that NFKC spells as two.
        let f = Folded::new("a㍻b");
        assert_eq!(f.plain, "a平成b");
        assert_eq!(f.orig_span(1, 3), [1, 2]);
        assert_eq!(f.orig_span(3, 4), [2, 3]);
        assert_eq!(f.folded_char_at(f.folded.find('b').unwrap()), 3);
        assert_eq!(f.folded_slice(1, 3), "平成");
    }

    #[test]
    fn composes_decomposed_marks() {
        let f = Folded::new("か\u{3099}き゛");
        assert_eq!(f.plain, "がぎ");
        assert_eq!(f.orig_span(0, 2), [0, 4]);
        assert_eq!(fold_str("ヴァイオリン"), "ゔぁいおりん");
        assert_eq!(char_slice("あいうえお", [1, 3]), "いう");
    }

    #[test]
    fn empty_and_out_of_range_spans() {
        let f = Folded::new("");
        assert!(f.is_empty());
        assert_eq!(f.orig_span(0, 0), [0, 0]);
        let f = Folded::new("ab");
        assert_eq!(f.orig_span(5, 9), [2, 2]);
    }
}
