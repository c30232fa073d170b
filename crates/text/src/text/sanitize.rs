//! Text a server (or any outside source) sent, made safe to print or store for display: escape
//! sequences (CSI, OSC, DCS …) are removed whole, and every other control character except
//! newline and tab is dropped, so a body like `\e[2J\e]0;title\a` cannot clear or retitle
//! the terminal from stderr, an exported markdown file or the workbench.

use std::borrow::Cow;

/// `s` without terminal control: escape sequences removed whole, other C0/C1 controls, DEL
/// and bidirectional overrides dropped; `\n` and `\t` kept. Borrowed when nothing changes.
pub fn for_terminal(s: &str) -> Cow<'_, str> {
    if !s.chars().any(is_unsafe) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    let mut it = s.chars().peekable();
    while let Some(c) = it.next() {
        match c {
            '\u{1b}' => skip_escape(&mut it),
            // C1 introducers: CSI, OSC, DCS, SOS, PM, APC take a body like their ESC forms.
            '\u{9b}' => skip_csi(&mut it),
            '\u{9d}' | '\u{90}' | '\u{98}' | '\u{9e}' | '\u{9f}' => skip_string(&mut it),
            c if is_unsafe(c) => {}
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

fn is_unsafe(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

type Chars<'a> = std::iter::Peekable<std::str::Chars<'a>>;

fn skip_escape(it: &mut Chars<'_>) {
    match it.next() {
        Some('[') => skip_csi(it),
        Some(']' | 'P' | 'X' | '^' | '_') => skip_string(it),
        // ESC plus intermediates (0x20–0x2F) and one final byte.
        Some(c) if ('\u{20}'..='\u{2f}').contains(&c) => {
            while it.next_if(|c| ('\u{20}'..='\u{2f}').contains(c)).is_some() {}
            it.next();
        }
        _ => {}
    }
}

/// Parameters and intermediates up to a final byte in 0x40–0x7E.
fn skip_csi(it: &mut Chars<'_>) {
    for c in it.by_ref() {
        if ('\u{40}'..='\u{7e}').contains(&c) || c == '\n' {
            return;
        }
    }
}

/// A string body ended by BEL, ST (ESC \ or U+009C). An unended one runs to the end of the text.
fn skip_string(it: &mut Chars<'_>) {
    while let Some(c) = it.next() {
        match c {
            '\u{7}' | '\u{9c}' => return,
            '\u{1b}' => {
                it.next_if_eq(&'\\');
                return;
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_issue_body_loses_every_control_and_keeps_its_words() {
        let body = "\u{1b}[2J\u{1b}]0;pwned\u{7}エラー: 混雑中\u{1b}[31m赤\u{1b}[0m\n次";
        assert_eq!(for_terminal(body), "エラー: 混雑中赤\n次");
    }

    #[test]
    fn clean_text_is_borrowed_unchanged() {
        let s = "やな：「今日はいい天気！」\tあゆ：「そうですね。」\n";
        assert!(matches!(for_terminal(s), Cow::Borrowed(_)));
    }

    /// Property: whatever the mix, the result has no control character but \n and \t, and
    /// every printable character outside an escape sequence survives in order.
    #[test]
    fn random_mixes_never_keep_a_control() {
        let pieces = [
            "\u{1b}[", "\u{1b}]", "\u{7}", "\u{1b}\\", "\u{9b}", "\u{8}", "\r", "\u{7f}", "m",
            "2J", "あ", "港", "x", "\n", "\u{202e}", "\u{1b}(B", "\u{1b}P", ";",
        ];
        let mut g = crate::test_rng::Rng::new(0x2545_f491);
        for _ in 0..3000 {
            let mut s = String::new();
            for _ in 0..g.next(24) {
                s.push_str(g.pick(&pieces));
            }
            let out = for_terminal(&s);
            assert!(!out.chars().any(is_unsafe), "{s:?} -> {out:?}");
            if !s.chars().any(is_unsafe) {
                assert_eq!(out, s);
            }
        }
    }
}
