//! Sentence and line counting per seed 001 §6.1: 。！？ end a sentence, a line break without a
//! terminal mark also ends one, empty lines are neither lines nor sentences.
//!
//! Terminators inside brackets do not split (「すごい！」と言った。 is one sentence) unless the
//! bracket closes right after them and nothing but a line end, a space or another bracket follows.

use super::chars::{closing_of, is_closing, is_terminator};

/// A sentence as char offsets into the normalised text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sentence {
    pub start: usize,
    /// End of the body: the terminator run (if any) starts here.
    pub body_end: usize,
    /// End including the terminator run and trailing closing brackets.
    pub end: usize,
    /// The first terminator char, if the sentence has one.
    pub terminator: Option<char>,
}

/// Returns (sentences, non-empty line count).
pub fn split(chars: &[char]) -> (Vec<Sentence>, usize) {
    let mut sentences = Vec::new();
    let lines = chars
        .split(|&c| c == '\n')
        .filter(|l| l.iter().any(|c| !c.is_whitespace()))
        .count();
    let mut depth = 0usize;
    let mut start = 0usize;
    let mut i = 0usize;
    let n = chars.len();
    let push =
        |sentences: &mut Vec<Sentence>, s: usize, body_end: usize, end: usize, t: Option<char>| {
            if chars[s..body_end].iter().any(|c| !c.is_whitespace()) || t.is_some() {
                // A terminator alone on a line (e.g. "！") still counts only if it has content.
                if chars[s..end]
                    .iter()
                    .any(|&c| !c.is_whitespace() && !is_terminator(c))
                {
                    sentences.push(Sentence {
                        start: s,
                        body_end,
                        end,
                        terminator: t,
                    });
                }
            }
        };
    while i < n {
        let c = chars[i];
        if c == '\n' {
            push(&mut sentences, start, i, i, None);
            depth = 0;
            i += 1;
            start = i;
            continue;
        }
        if closing_of(c).is_some() {
            depth += 1;
        } else if is_closing(c) {
            depth = depth.saturating_sub(1);
        }
        if is_terminator(c) {
            let body_end = i;
            let mut j = i;
            while j < n && is_terminator(chars[j]) {
                j += 1;
            }
            let mut k = j;
            let mut d = depth;
            while k < n && d > 0 && is_closing(chars[k]) {
                d -= 1;
                k += 1;
            }
            let ends = if depth == 0 {
                true
            } else {
                // Inside brackets: split only when they all close and the quote is finished.
                d == 0
                    && (k >= n
                        || chars[k] == '\n'
                        || chars[k].is_whitespace()
                        || closing_of(chars[k]).is_some())
            };
            if ends {
                push(&mut sentences, start, body_end, k, Some(c));
                depth = d;
                i = k;
                start = k;
                continue;
            }
            i = j;
            continue;
        }
        i += 1;
    }
    if start < n {
        push(&mut sentences, start, n, n, None);
    }
    (sentences, lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count(s: &str) -> (usize, usize) {
        let chars: Vec<char> = s.chars().collect();
        let (sent, lines) = split(&chars);
        (sent.len(), lines)
    }

    #[test]
    fn terminators_and_newlines_end_sentences() {
        assert_eq!(count("わ！見て。きれい？"), (3, 1));
        assert_eq!(count("一行目\n二行目"), (2, 2));
        assert_eq!(count("一行目。\n\n\n二行目"), (2, 2));
        assert_eq!(count("え！？まじ！？"), (2, 1));
        assert_eq!(count(""), (0, 0));
        assert_eq!(count("\n \n"), (0, 0));
    }

    #[test]
    fn quotes_do_not_split_unless_closed_at_the_end() {
        assert_eq!(count("「すごい！」と言った。"), (1, 1));
        assert_eq!(count("「やっほー！」「元気？」"), (2, 1));
        assert_eq!(count("（頷いて）そうだね。"), (1, 1));
    }
}
