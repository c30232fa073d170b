//! Pure, synchronous stream framing: bytes → UTF-8 text (carrying split characters) → lines
//! (carrying partial lines), and the character cap with its trim back to a sentence end.

use std::ops::ControlFlow;

/// Decodes a byte stream whose chunks may end inside a multi-byte character. Complete
/// characters are returned at once; an incomplete tail (at most 3 bytes) waits for the next
/// chunk. Invalid bytes become U+FFFD, so one bad byte never stalls the stream.
#[derive(Debug, Default)]
pub struct Utf8Decoder {
    carry: Vec<u8>,
    out: String,
}

impl Utf8Decoder {
    pub fn new() -> Utf8Decoder {
        Utf8Decoder::default()
    }

    /// Decodes `bytes` after any carried tail; the returned text holds complete characters only.
    pub fn push<'a>(&'a mut self, bytes: &'a [u8]) -> &'a str {
        if self.carry.is_empty() {
            // Fast path: most chunks are whole, valid UTF-8 and need no copy.
            match std::str::from_utf8(bytes) {
                Ok(s) => return s,
                Err(e) if e.error_len().is_none() => {
                    let (good, tail) = bytes.split_at(e.valid_up_to());
                    self.carry.extend_from_slice(tail);
                    // valid_up_to guarantees `good` is UTF-8.
                    return std::str::from_utf8(good).unwrap_or_default();
                }
                Err(_) => {}
            }
        }
        let mut buf = std::mem::take(&mut self.carry);
        buf.extend_from_slice(bytes);
        self.out.clear();
        let mut rest: &[u8] = &buf;
        loop {
            match std::str::from_utf8(rest) {
                Ok(s) => {
                    self.out.push_str(s);
                    break;
                }
                Err(e) => {
                    let (good, after) = rest.split_at(e.valid_up_to());
                    self.out
                        .push_str(std::str::from_utf8(good).unwrap_or_default());
                    match e.error_len() {
                        None => {
                            self.carry.extend_from_slice(after);
                            break;
                        }
                        Some(n) => {
                            self.out.push(char::REPLACEMENT_CHARACTER);
                            rest = after.get(n..).unwrap_or_default();
                        }
                    }
                }
            }
        }
        &self.out
    }

    /// At end of input: an incomplete tail can never complete, so it becomes U+FFFD.
    pub fn finish(&mut self) -> Option<char> {
        if self.carry.is_empty() {
            None
        } else {
            self.carry.clear();
            Some(char::REPLACEMENT_CHARACTER)
        }
    }

    /// Bytes waiting for the rest of their character.
    pub fn pending(&self) -> usize {
        self.carry.len()
    }
}

/// Splits text into lines across chunk boundaries. Accepts LF and CRLF; the line terminator is
/// not part of the line.
#[derive(Debug, Default)]
pub struct LineSplitter {
    partial: String,
}

impl LineSplitter {
    pub fn new() -> LineSplitter {
        LineSplitter::default()
    }

    /// Calls `f` with every line completed by `text`; stops early when `f` breaks.
    pub fn push<B>(
        &mut self,
        text: &str,
        mut f: impl FnMut(&str) -> ControlFlow<B>,
    ) -> ControlFlow<B> {
        let mut rest = text;
        while let Some(nl) = rest.find('\n') {
            let (head, tail) = rest.split_at(nl);
            rest = tail.get(1..).unwrap_or_default();
            if self.partial.is_empty() {
                f(strip_cr(head))?;
            } else {
                self.partial.push_str(head);
                let line = std::mem::take(&mut self.partial);
                let flow = f(strip_cr(&line));
                // Keep the allocation for the next partial line.
                self.partial = line;
                self.partial.clear();
                flow?;
            }
        }
        self.partial.push_str(rest);
        ControlFlow::Continue(())
    }

    /// The unterminated last line, if any (a body that ends without a newline).
    pub fn take_rest(&mut self) -> Option<String> {
        if self.partial.is_empty() {
            None
        } else {
            let mut s = std::mem::take(&mut self.partial);
            if s.ends_with('\r') {
                s.pop();
            }
            Some(s)
        }
    }

    pub fn has_partial(&self) -> bool {
        !self.partial.is_empty()
    }
}

fn strip_cr(line: &str) -> &str {
    line.strip_suffix('\r').unwrap_or(line)
}

/// Accumulates streamed text and decides when the character cap is exceeded.
#[derive(Debug, Clone)]
pub struct Accumulator {
    raw: String,
    chars: usize,
    cap: Option<usize>,
}

impl Accumulator {
    /// `cap`: stop once more than this many characters have arrived (`None`: never).
    pub fn new(cap: Option<usize>) -> Accumulator {
        Accumulator {
            raw: String::new(),
            chars: 0,
            cap,
        }
    }

    /// Appends a delta; `true` when the text is now over the cap.
    pub fn push(&mut self, delta: &str) -> bool {
        self.raw.push_str(delta);
        self.chars += delta.chars().count();
        self.cap.is_some_and(|c| self.chars > c)
    }

    pub fn raw(&self) -> &str {
        &self.raw
    }

    pub fn into_raw(self) -> String {
        self.raw
    }

    pub fn chars(&self) -> usize {
        self.chars
    }
}

/// Cuts `text` to `max_chars` characters and then back to the last character of `trim_chars`
/// (kept); when none occurs in the cut text, the cut text is kept whole.
pub fn cap_text(text: &str, max_chars: usize, trim_chars: &str) -> String {
    let cut = match text.char_indices().nth(max_chars) {
        Some((at, _)) => text.get(..at).unwrap_or(text),
        None => text,
    };
    match cut
        .char_indices()
        .rev()
        .find(|(_, c)| trim_chars.contains(*c))
    {
        Some((at, c)) => cut.get(..at + c.len_utf8()).unwrap_or(cut).to_string(),
        None => cut.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_all(chunks: &[&[u8]]) -> String {
        let mut d = Utf8Decoder::new();
        let mut out = String::new();
        for c in chunks {
            out.push_str(d.push(c));
        }
        if let Some(c) = d.finish() {
            out.push(c);
        }
        out
    }

    #[test]
    fn utf8_split_at_every_byte_offset() {
        let text = "姉「🦀だよ」";
        let bytes = text.as_bytes();
        for i in 0..=bytes.len() {
            for j in i..=bytes.len() {
                let got = decode_all(&[&bytes[..i], &bytes[i..j], &bytes[j..]]);
                assert_eq!(got, text, "split at {i},{j}");
            }
        }
    }

    #[test]
    fn utf8_one_byte_at_a_time_yields_only_whole_chars() {
        let mut d = Utf8Decoder::new();
        let mut pieces = Vec::new();
        for b in "姉🦀".as_bytes() {
            let s = d.push(std::slice::from_ref(b)).to_string();
            if !s.is_empty() {
                pieces.push(s);
            }
        }
        assert_eq!(pieces, vec!["姉", "🦀"]);
        assert_eq!(d.pending(), 0);
    }

    #[test]
    fn utf8_invalid_bytes_become_replacement_and_decoding_continues() {
        assert_eq!(decode_all(&[b"a\xffb", "あ".as_bytes()]), "a\u{fffd}bあ");
        // A truncated character followed by a fresh one.
        assert_eq!(decode_all(&[b"\xe5\x85", b"x"]), "\u{fffd}x");
        // Truncated at the very end of input.
        assert_eq!(decode_all(&[b"ok\xe5\xa7"]), "ok\u{fffd}");
    }

    fn lines(chunks: &[&str]) -> (Vec<String>, Option<String>) {
        let mut s = LineSplitter::new();
        let mut out = Vec::new();
        for c in chunks {
            let _: ControlFlow<()> = s.push(c, |l| {
                out.push(l.to_string());
                ControlFlow::Continue(())
            });
        }
        (out, s.take_rest())
    }

    #[test]
    fn lines_carry_partials_and_strip_crlf() {
        let (got, rest) = lines(&["{\"a\":", "1}\r\n{\"b\"", ":2}\n\n", "tail"]);
        assert_eq!(got, vec!["{\"a\":1}", "{\"b\":2}", ""]);
        assert_eq!(rest.as_deref(), Some("tail"));
        // CR and LF arriving in separate chunks.
        let (got, rest) = lines(&["data: x\r", "\n"]);
        assert_eq!(got, vec!["data: x"]);
        assert_eq!(rest, None);
    }

    #[test]
    fn lines_stop_when_the_callback_breaks() {
        let mut s = LineSplitter::new();
        let mut seen = 0;
        let flow = s.push("a\nb\nc\n", |_| {
            seen += 1;
            if seen == 2 {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        });
        assert!(flow.is_break());
        assert_eq!(seen, 2);
    }

    #[test]
    fn accumulator_trips_only_when_over_the_cap() {
        let mut a = Accumulator::new(Some(3));
        assert!(!a.push("あい"));
        assert!(!a.push("う"));
        assert!(a.push("え"));
        assert_eq!(a.chars(), 4);
        let mut never = Accumulator::new(None);
        assert!(!never.push(&"あ".repeat(1000)));
    }

    #[test]
    fn cap_trims_back_to_the_last_sentence_end() {
        assert_eq!(
            cap_text("ねえ。そうだよね？でもさ", 10, "。？！"),
            "ねえ。そうだよね？"
        );
        // The cut lands before a later sentence end: that end is not reached.
        assert_eq!(cap_text("ねえ。あのね！まだ続く", 6, "。？！"), "ねえ。");
        // No sentence end at all: keep exactly max_chars.
        assert_eq!(cap_text("ずっと続く話だよ", 4, "。？！"), "ずっと続");
        // Shorter than the cap: untouched apart from trimming to a sentence end.
        assert_eq!(cap_text("短い。", 10, "。？！"), "短い。");
        assert_eq!(cap_text("xyz", 2, ""), "xy");
    }
}
