//! Seed 001 §2 normalisation with an offset map back to the original text.
//!
//! Steps: half-width `!?` → `！？`, `｡` → `。`, `､` → `、`, runs of the same symbol collapse,
//! runs of horizontal whitespace (incl. U+3000) collapse to one space, CRLF → LF. Every
//! normalised char remembers the original char range it came from, so findings can point at
//! the text the reviewer actually sees.

use super::chars::{closing_of, is_closing, is_collapsible_symbol, is_hspace};

#[derive(Debug, Clone, Default)]
pub struct Normalized {
    /// The normalised text.
    pub text: String,
    /// Byte offset of each char of `text`, plus `text.len()` at the end.
    pub char_bytes: Vec<u32>,
    /// For each char of `text`, the original char range `[start, end)` it stands for.
    pub orig: Vec<(u32, u32)>,
    /// For each char of `text`: inside a balanced 「」『』（）() pair (brackets included).
    pub masked: Vec<bool>,
    /// Number of chars in the original text.
    pub orig_len: usize,
}

fn unify(c: char) -> char {
    match c {
        '!' => '！',
        '?' => '？',
        '｡' => '。',
        '､' => '、',
        c => c,
    }
}

/// Normalises `original`. `skip` lists original char ranges to drop entirely (used to unwrap a
/// script-format 「…」 without losing the offsets).
pub fn normalize(original: &str, skip: &[(usize, usize)]) -> Normalized {
    let mut out = Normalized {
        text: String::with_capacity(original.len()),
        char_bytes: Vec::with_capacity(original.len() / 2 + 1),
        orig: Vec::with_capacity(original.len() / 2 + 1),
        masked: Vec::new(),
        orig_len: 0,
    };
    let mut prev: Option<char> = None;
    let mut i = 0usize;
    let mut chars = original.chars().peekable();
    while let Some(raw) = chars.next() {
        let at = i;
        i += 1;
        if skip.iter().any(|&(s, e)| at >= s && at < e) {
            continue;
        }
        let mut c = unify(raw);
        if c == '\r' {
            if chars.peek() == Some(&'\n') {
                continue; // the LF that follows carries the line break
            }
            c = '\n';
        }
        if is_hspace(c) {
            c = ' ';
        }
        let extends_run = match prev {
            Some(p) => p == c && (c == ' ' || is_collapsible_symbol(c)),
            None => false,
        };
        if extends_run {
            if let Some(last) = out.orig.last_mut() {
                last.1 = i as u32;
            }
            continue;
        }
        out.char_bytes.push(out.text.len() as u32);
        out.text.push(c);
        out.orig.push((at as u32, i as u32));
        prev = Some(c);
    }
    out.orig_len = i;
    out.char_bytes.push(out.text.len() as u32);
    out.masked = bracket_mask(&out.text);
    out
}

/// Marks chars inside balanced bracket pairs. An unbalanced bracket masks nothing, so a model's
/// stray 「 cannot hide the rest of a line from the tone check.
pub fn bracket_mask(text: &str) -> Vec<bool> {
    let chars: Vec<char> = text.chars().collect();
    let mut mask = vec![false; chars.len()];
    let mut stack: Vec<(char, usize)> = Vec::new();
    for (idx, &c) in chars.iter().enumerate() {
        if let Some(close) = closing_of(c) {
            stack.push((close, idx));
        } else if is_closing(c) {
            if let Some(pos) = stack.iter().rposition(|&(close, _)| close == c) {
                let (_, open) = stack[pos];
                stack.truncate(pos);
                for m in &mut mask[open..=idx] {
                    *m = true;
                }
            }
        } else if c == '\n' {
            // Brackets do not span lines in dialogue; drop unclosed ones.
            stack.clear();
        }
    }
    mask
}

impl Normalized {
    pub fn char_len(&self) -> usize {
        self.orig.len()
    }

    /// Char index of a byte offset into `text` (which must be a char boundary).
    pub fn char_at_byte(&self, byte: usize) -> usize {
        match self.char_bytes.binary_search(&(byte as u32)) {
            Ok(i) | Err(i) => i,
        }
    }

    /// Byte range of the char range `start..end`.
    pub fn byte_range(&self, start: usize, end: usize) -> std::ops::Range<usize> {
        let s = self.char_bytes.get(start).copied().unwrap_or(0) as usize;
        let e = self
            .char_bytes
            .get(end)
            .copied()
            .unwrap_or(self.text.len() as u32) as usize;
        s..e
    }

    /// The normalised substring for a char range.
    pub fn slice(&self, start: usize, end: usize) -> &str {
        self.text.get(self.byte_range(start, end)).unwrap_or("")
    }

    /// Maps a normalised char range to the original char range.
    pub fn to_original(&self, start: usize, end: usize) -> std::ops::Range<usize> {
        if self.orig.is_empty() || start >= end {
            let at = self
                .orig
                .get(start)
                .map(|o| o.0 as usize)
                .unwrap_or(self.orig_len);
            return at..at;
        }
        let s = self
            .orig
            .get(start)
            .map(|o| o.0)
            .unwrap_or(self.orig_len as u32) as usize;
        let e = self
            .orig
            .get(end.saturating_sub(1).min(self.orig.len() - 1))
            .map(|o| o.1)
            .unwrap_or(self.orig_len as u32) as usize;
        s..e.max(s)
    }

    /// True when any char of the range lies inside quotes/parentheses.
    pub fn any_masked(&self, start: usize, end: usize) -> bool {
        self.masked
            .get(start..end)
            .is_some_and(|m| m.iter().any(|&b| b))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn collapses_symbol_runs_and_maps_offsets() {
        let n = normalize("すごい!!？？ね｡", &[]);
        assert_eq!(n.text, "すごい！？ね。");
        // ！ stands for the two original !! at 3..5, ？ for 5..7.
        assert_eq!(n.to_original(3, 4), 3..5);
        assert_eq!(n.to_original(4, 5), 5..7);
        assert_eq!(n.to_original(6, 7), 8..9);
    }

    #[test]
    fn collapses_whitespace_including_ideographic_space() {
        let n = normalize("うん\u{3000}\u{3000} そう\r\nだね", &[]);
        assert_eq!(n.text, "うん そう\nだね");
        assert_eq!(n.to_original(5, 7), 8..10);
    }

    #[test]
    fn long_vowel_marks_are_not_collapsed() {
        assert_eq!(normalize("すごーーい、、", &[]).text, "すごーーい、");
    }

    #[test]
    fn mask_covers_balanced_brackets_only() {
        let n = normalize("あ「いう」え（お）か「き", &[]);
        let m: String = n
            .text
            .chars()
            .zip(&n.masked)
            .map(|(c, &m)| if m { '#' } else { c })
            .collect();
        assert_eq!(m, "あ####え###か「き");
    }

    #[test]
    fn skip_ranges_keep_offsets() {
        let n = normalize("「やった」", &[(0, 1), (4, 5)]);
        assert_eq!(n.text, "やった");
        assert_eq!(n.to_original(0, 3), 1..4);
    }
}
