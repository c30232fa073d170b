//! Wrapping a reply while it streams, at a cost independent of its length: the rows already
//! laid out are kept and only the last two rows onwards are wrapped again when tokens arrive (a
//! row that ended because the next cluster did not fit cannot change when text is appended
//! after it, except the one before the last: whether 禁則 may leave one cluster alone on it
//! depends on whether the last row's run still fits). Width changes and texts that did not simply grow are wrapped in full.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::Mutex;

use super::wrap::line_breaks;

/// The rows of one streaming text.
#[derive(Debug, Default, Clone)]
pub struct StreamWrap {
    width: usize,
    /// Bytes of the text wrapped so far.
    len: usize,
    /// The text's last 16 bytes when wrapped (a cheap check that it only grew).
    tail: Vec<u8>,
    rows: Vec<Range<usize>>,
}

impl StreamWrap {
    /// The rows of `text` at `width`, reusing what an earlier, shorter version laid out.
    pub fn rows(&mut self, text: &str, width: usize) -> &[Range<usize>] {
        let grew = width == self.width
            && text.len() >= self.len
            && text.as_bytes()[self.len - self.tail.len()..self.len] == self.tail[..];
        if !grew || self.rows.is_empty() {
            self.rows.clear();
            self.wrap_from(text, 0, width);
        } else if text.len() > self.len {
            // The last two rows: a row that kept one cluster alone (禁則) is redone when the
            // run after it grows wider than a row.
            self.rows.pop();
            let start = self.rows.pop().map(|r| r.start).unwrap_or(0);
            self.wrap_from(text, start, width);
        }
        self.width = width;
        self.len = text.len();
        self.tail = text.as_bytes()[text.len().saturating_sub(16)..].to_vec();
        &self.rows
    }

    fn wrap_from(&mut self, text: &str, start: usize, width: usize) {
        let mut base = start;
        for line in text[start..].split('\n') {
            self.rows.extend(
                line_breaks(line, width)
                    .into_iter()
                    .map(|r| base + r.start..base + r.end),
            );
            base += line.len() + 1;
        }
    }
}

/// The streaming attempts' wraps, by (turn, attempt); the drawing code borrows it.
#[derive(Debug, Default)]
pub struct StreamCache(Mutex<HashMap<(usize, usize), StreamWrap>>);

impl StreamCache {
    /// The rows of a streaming attempt's text, as strings.
    pub fn wrap(&self, key: (usize, usize), text: &str, width: usize) -> Vec<String> {
        let mut m = self.0.lock().unwrap_or_else(|e| e.into_inner());
        // Only the attempts streaming now are kept (one or two).
        if !m.contains_key(&key) && m.len() >= 4 {
            m.clear();
        }
        let w = m.entry(key).or_default();
        w.rows(text, width)
            .iter()
            .map(|r| text[r.clone()].to_string())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::width::graphemes;

    fn rng(seed: u64) -> impl FnMut() -> u64 {
        crate::test_rng::words(seed)
    }

    /// Token by token (split anywhere between characters, even inside a cluster), the kept rows
    /// always equal a full wrap of the text so far.
    #[test]
    fn incremental_rows_equal_a_full_wrap_at_every_token() {
        let parts = [
            "あ",
            "。",
            "、",
            "「",
            "」",
            "ｶﾞﾗ",
            "ﾟ",
            "word ",
            "natural",
            "👍",
            "\u{200d}",
            "👩",
            "e\u{301}",
            "\n",
            "ー",
            "っ",
            " ",
        ];
        let mut next = rng(42);
        for _ in 0..300 {
            let text: String = (0..(next() % 60))
                .map(|_| parts[(next() % parts.len() as u64) as usize])
                .collect();
            let width = 2 + (next() % 20) as usize;
            let mut w = StreamWrap::default();
            let chars: Vec<(usize, char)> = text.char_indices().collect();
            let mut at = 0;
            while at < chars.len() {
                at = (at + 1 + (next() % 4) as usize).min(chars.len());
                let end = chars.get(at).map(|c| c.0).unwrap_or(text.len());
                let sofar = &text[..end];
                let got: Vec<String> = w
                    .rows(sofar, width)
                    .iter()
                    .map(|r| sofar[r.clone()].to_string())
                    .collect();
                assert_eq!(
                    got,
                    super::super::wrap::wrap(sofar, width),
                    "{sofar:?} at {width}"
                );
            }
            let _ = graphemes(&text).count();
        }
    }

    #[test]
    fn a_width_change_or_a_replaced_text_wraps_in_full() {
        let mut w = StreamWrap::default();
        assert_eq!(w.rows("あいうえお", 4).len(), 3);
        assert_eq!(w.rows("あいうえお", 10).len(), 1);
        assert_eq!(w.rows("かきくけこさ", 10).len(), 2);
    }
}
