//! Cells the terminal draws exactly as the buffer holds them. ratatui keeps a grapheme cluster
//! in one cell and blanks the columns it covers; its diff then assumes the terminal also treats
//! the cluster as one wide glyph. Terminals disagree for a few clusters (measured in tmux 3.3a
//! with `printf … ; display -p '#{cursor_x}'`): `ｶﾞ` is two cells (ｶ, ﾞ), `🇯🇵` is two cells
//! (🇯, 🇵), `❤️` takes one column, `👍🏽` four, a trailing ZWJ glues the next character on. When
//! such a cluster is later overwritten by narrower text, the second cell is never rewritten and
//! a stray `ﾞ` or `🇵` stays on screen. So at the end of every frame each of these clusters is
//! rewritten into cells that every terminal draws the same way, in the columns the layout gave
//! it: ｶﾞ → `ｶ` `ﾞ`; 🇯🇵 → `🇯` `🇵`; a ZWJ sequence → its first emoji; skin tones and
//! variation selectors dropped, the freed column blank. Text in the store is untouched.
//! An overlay clears its area with `clear`, which also blanks a wide character straddling its
//! left edge (ratatui's diff skips the cell after a wide character, so the overlay's border
//! there was never sent).

use ratatui::Frame;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::widgets::Clear;

const ZWJ: char = '\u{200D}';

fn is_voicing_mark(c: char) -> bool {
    matches!(c, '\u{FF9E}' | '\u{FF9F}')
}

fn is_regional(c: char) -> bool {
    ('\u{1F1E6}'..='\u{1F1FF}').contains(&c)
}

fn is_dropped(c: char) -> bool {
    matches!(c, '\u{FE0E}' | '\u{FE0F}' | '\u{1F3FB}'..='\u{1F3FF}')
}

/// Whether a cluster must be split or simplified before it reaches the terminal.
fn unstable(sym: &str) -> bool {
    sym.chars().count() > 1
        && sym
            .chars()
            .any(|c| is_voicing_mark(c) || is_regional(c) || c == ZWJ || is_dropped(c))
}

/// Clears `area` for an overlay, and blanks a wide character whose right half is under it.
pub fn clear(f: &mut Frame, area: Rect) {
    f.render_widget(Clear, area);
    let buf = f.buffer_mut();
    if area.x == 0 {
        return;
    }
    for y in area.top()..area.bottom() {
        let Some(cell) = buf.cell_mut((area.x - 1, y)) else {
            continue;
        };
        if crate::text::width::width(cell.symbol()) > 1 {
            cell.set_symbol(" ");
        }
    }
}

/// The pieces, one per terminal cell run, that draw `sym` stably (each with its columns).
pub fn pieces(sym: &str) -> Vec<(String, usize)> {
    // A ZWJ sequence: its first emoji (terminals draw a sequence as one glyph or as its parts).
    let head = sym.split(ZWJ).next().unwrap_or("");
    let mut out: Vec<(String, usize)> = Vec::new();
    for c in head.chars().filter(|c| !is_dropped(*c)) {
        let standalone = is_voicing_mark(c) || is_regional(c) || out.is_empty();
        if standalone {
            let w = crate::text::width::grapheme_width(c.encode_utf8(&mut [0; 4]));
            out.push((c.to_string(), w.max(1)));
        } else if let Some(last) = out.last_mut() {
            // A combining mark stays with its base.
            last.0.push(c);
        }
    }
    out
}

/// Rewrites every unstable cluster in `buf` into stable cells (see the module doc).
pub fn settle(buf: &mut Buffer) {
    let area = buf.area;
    for y in area.top()..area.bottom() {
        let mut x = area.left();
        while x < area.right() {
            let sym = buf[(x, y)].symbol().to_string();
            let cols = crate::text::width::grapheme_width(&sym).max(1) as u16;
            if sym.len() > 1 && unstable(&sym) {
                let style = buf[(x, y)].style();
                let room = cols.min(area.right() - x) as usize;
                let mut used = 0;
                let mut at = x;
                for (p, w) in pieces(&sym) {
                    if used + w > room {
                        break;
                    }
                    buf[(at, y)].set_symbol(&p).set_style(style);
                    for k in 1..w as u16 {
                        buf[(at + k, y)].reset();
                    }
                    at += w as u16;
                    used += w;
                }
                while used < room {
                    buf[(at, y)].set_symbol(" ").set_style(style);
                    at += 1;
                    used += 1;
                }
            }
            x += cols;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::layout::Rect;
    use ratatui::style::Style;

    fn settled(s: &str, w: u16) -> Vec<String> {
        let mut b = Buffer::empty(Rect::new(0, 0, w, 1));
        b.set_stringn(0, 0, s, w as usize, Style::new());
        settle(&mut b);
        (0..w).map(|x| b[(x, 0)].symbol().to_string()).collect()
    }

    #[test]
    fn unstable_clusters_become_one_cell_per_terminal_column() {
        assert_eq!(settled("ｶﾞｷﾞ", 5), ["ｶ", "ﾞ", "ｷ", "ﾞ", " "]);
        assert_eq!(settled("🇯🇵x", 3), ["🇯", "🇵", "x"]);
        // A ZWJ family: its first emoji, still two columns (the second cell is covered).
        assert_eq!(
            settled("👩\u{200d}👩\u{200d}👧。", 4),
            ["👩", " ", "。", " "]
        );
        // VS16 heart: the text heart and a blank in the column the layout gave it.
        assert_eq!(settled("❤\u{fe0f}x", 3), ["❤", " ", "x"]);
        assert_eq!(settled("👍\u{1f3fd}x", 3), ["👍", " ", "x"]);
        // Untouched: wide kana, combining marks, plain text.
        assert_eq!(settled("か\u{3099}é", 3), ["か\u{3099}", " ", "é"]);
    }

    #[test]
    fn settling_keeps_every_column_where_the_layout_put_it() {
        let parts = [
            "ｶﾞ",
            "ﾊﾟ",
            "🇯🇵",
            "👩\u{200d}👩\u{200d}👧",
            "❤\u{fe0f}",
            "👍\u{1f3fd}",
            "あ",
            "x",
            "ﾗ",
        ];
        let mut g = crate::test_rng::Rng::new(11);
        for _ in 0..300 {
            let mut text = String::new();
            for _ in 0..8 {
                text.push_str(g.pick(&parts));
            }
            let mut b = Buffer::empty(Rect::new(0, 0, 30, 1));
            let (end, _) = b.set_stringn(0, 0, &text, 30, Style::new());
            settle(&mut b);
            // Every cell now holds a cluster the terminal draws in exactly the cell's width:
            // no voicing mark, flag pair, ZWJ or selector is left inside a cell.
            let mut x = 0;
            while x < end {
                let sym = b[(x, 0)].symbol();
                assert!(!unstable(sym), "{text:?}: cell {x} = {sym:?}");
                x += crate::text::width::grapheme_width(sym).max(1) as u16;
            }
            assert_eq!(x, end, "{text:?}");
        }
    }
}
