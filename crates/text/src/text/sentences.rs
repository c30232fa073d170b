//! Sentence and line counting per seed 001 §6.1: every 。！？ ends a sentence, a line break
//! without a terminal mark also ends one, empty lines are neither lines nor sentences.
//!
//! Quotes do not protect their terminators: §2.1 excludes quoted text from tone and praise
//! only, so 「すごい！」と言った。 is two sentences. Closing brackets right after a terminator
//! belong to its sentence. A bracket without its partner on the same line is literal text (as
//! it is for the quote mask): a stray 」 never joins a sentence.

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
    let paired = paired_brackets(chars);
    let mut start = 0usize;
    let mut i = 0usize;
    let n = chars.len();
    let push =
        |sentences: &mut Vec<Sentence>, s: usize, body_end: usize, end: usize, t: Option<char>| {
            // A terminator or a bracket alone (e.g. "！", a stray "（") is not a sentence.
            if chars[s..end].iter().any(|&c| {
                !c.is_whitespace() && !is_terminator(c) && closing_of(c).is_none() && !is_closing(c)
            }) {
                sentences.push(Sentence {
                    start: s,
                    body_end,
                    end,
                    terminator: t,
                });
            }
        };
    while i < n {
        let c = chars[i];
        if c == '\n' {
            push(&mut sentences, start, i, i, None);
            i += 1;
            start = i;
            continue;
        }
        if is_terminator(c) {
            let body_end = i;
            let mut k = i;
            while k < n && is_terminator(chars[k]) {
                k += 1;
            }
            while k < n && is_closing(chars[k]) && paired[k] {
                k += 1;
            }
            push(&mut sentences, start, body_end, k, Some(c));
            i = k;
            start = k;
            continue;
        }
        i += 1;
    }
    if start < n {
        push(&mut sentences, start, n, n, None);
    }
    (sentences, lines)
}

/// Marks the brackets that have their partner on the same line (both ends), with the quote
/// mask's matching: a closer pairs with the nearest open bracket of its kind.
fn paired_brackets(chars: &[char]) -> Vec<bool> {
    let mut paired = vec![false; chars.len()];
    let mut stack: Vec<(char, usize)> = Vec::new();
    for (i, &c) in chars.iter().enumerate() {
        if let Some(close) = closing_of(c) {
            stack.push((close, i));
        } else if is_closing(c) {
            if let Some(pos) = stack.iter().rposition(|&(close, _)| close == c) {
                let (_, open) = stack[pos];
                // Opens skipped over by this closer stay unpaired.
                stack.truncate(pos);
                paired[open] = true;
                paired[i] = true;
            }
        } else if c == '\n' {
            stack.clear();
        }
    }
    paired
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

    /// Seed §6.1: a terminator inside quotes ends a sentence too (issue 26 §2).
    #[test]
    fn terminators_inside_quotes_end_sentences() {
        assert_eq!(count("「すごい！」と言った。"), (2, 1));
        assert_eq!(count("「やっほー！」「元気？」"), (2, 1));
        assert_eq!(count("（頷いて）そうだね。"), (1, 1));
        assert_eq!(count("あゆが「見て！あれ！」って。"), (3, 1));
        let chars: Vec<char> = "「すごい！」と言った。".chars().collect();
        let (s, _) = split(&chars);
        assert_eq!(
            (s[0].body_end, s[0].end),
            (4, 6),
            "the closer joins its sentence"
        );
    }

    #[test]
    fn an_unmatched_opening_bracket_is_literal_text() {
        assert_eq!(
            count("港は広いです。「灯台は白いです。船も多いです。夜は静かです。"),
            (4, 1)
        );
        assert_eq!(count("ねえ(笑 これ見て！すごい！きれい！"), (3, 1));
        assert_eq!(count("あ）い。う。"), (2, 1));
    }

    /// Generated lines of n sentences keep n sentences wherever a stray opening bracket lands.
    #[test]
    fn a_stray_bracket_never_changes_the_count() {
        const PARTS: [&str; 6] = [
            "空が青い",
            "うん",
            "雨だね",
            "灯台が見える",
            "ほんと",
            "風が強い",
        ];
        const ENDS: [char; 3] = ['。', '！', '？'];
        const STRAY: [char; 4] = ['「', '『', '（', '('];
        let mut next = crate::test_rng::below(0x2545_f491_4f6c_dd1d);
        for _ in 0..300 {
            let n = 1 + next(5);
            let mut chars: Vec<char> = Vec::new();
            for _ in 0..n {
                chars.extend(PARTS[next(PARTS.len())].chars());
                chars.push(ENDS[next(ENDS.len())]);
            }
            let (plain, _) = split(&chars);
            assert_eq!(plain.len(), n);
            let at = next(chars.len() + 1);
            chars.insert(at, STRAY[next(STRAY.len())]);
            let text: String = chars.iter().collect();
            assert_eq!(split(&chars).0.len(), n, "{text}");
        }
    }
}
