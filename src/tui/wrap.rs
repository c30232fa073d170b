//! Wrapping by display width, character by character: Japanese has no spaces, so ratatui's
//! word wrap (which needs them, ratatui #1199) cannot be used.

use unicode_width::UnicodeWidthChar;

/// Splits `text` into rows of at most `width` columns; explicit newlines start new rows.
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let width = width.max(2);
    let mut rows = Vec::new();
    for line in text.split('\n') {
        let mut row = String::new();
        let mut w = 0;
        for c in line.chars() {
            let cw = c.width().unwrap_or(0);
            if w + cw > width && !row.is_empty() {
                rows.push(std::mem::take(&mut row));
                w = 0;
            }
            row.push(c);
            w += cw;
        }
        rows.push(row);
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wide_characters_count_twice_and_newlines_break() {
        assert_eq!(wrap("あいうえお", 4), ["あい", "うえ", "お"]);
        assert_eq!(wrap("わ！ok\nうん", 5), ["わ！o", "k", "うん"]);
        assert_eq!(wrap("", 10), [""]);
        // A wide character never splits across rows even when one column is left.
        assert_eq!(wrap("aあい", 4), ["aあ", "い"]);
    }
}
