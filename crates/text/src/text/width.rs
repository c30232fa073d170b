//! Display width, the one measure used for layout and drawing: a string is a sequence of
//! grapheme clusters (unicode-segmentation, extended), and each cluster takes the columns
//! ratatui's buffer gives it — so text wrapped or padded here lands on screen exactly where it
//! was measured. A cluster keeps its parts together: a kana with a combining voiced mark
//! (か + U+3099), half-width katakana with ﾞ/ﾟ (ｶﾞ = 2 columns), an emoji with VS16 (❤️) or ZWJ
//! (👨‍👩‍👧), a letter with combining accents. Control characters take no columns (ratatui
//! drops them).

use unicode_segmentation::UnicodeSegmentation;
use unicode_width::UnicodeWidthStr;

/// Columns one grapheme cluster takes on screen (0 for controls and zero-width clusters).
/// Terminals give the half-width voiced marks ﾞ/ﾟ (U+FF9E/U+FF9F) a column of their own though
/// Unicode makes them extend the kana before them; unicode-width ≤ 0.2.2 counts them as 0 and
/// ratatui adds 1 for each — the same sum is made here. (unicode-width 0.2.3 counts them itself,
/// so ratatui 0.30 counted them twice and drew ｶﾞ three columns wide: the crate is pinned to
/// 0.2.2 and `clusters_measure_as_drawn` fails if the two ever disagree again.)
pub fn grapheme_width(g: &str) -> usize {
    if g.chars().any(char::is_control) {
        return 0;
    }
    if g.len() == 1 {
        return 1;
    }
    let marks = g
        .chars()
        .filter(|c| matches!(c, '\u{FF9E}' | '\u{FF9F}'))
        .count();
    g.width() + marks
}

/// Columns `s` takes on screen: the sum of its clusters' widths.
pub fn width(s: &str) -> usize {
    if s.is_ascii() {
        return s.bytes().filter(|b| !b.is_ascii_control()).count();
    }
    s.graphemes(true).map(grapheme_width).sum()
}

/// The clusters of `s` with their widths.
pub fn graphemes(s: &str) -> impl Iterator<Item = (&str, usize)> {
    s.graphemes(true).map(|g| (g, grapheme_width(g)))
}

/// The longest prefix of `s` that fits in `max` columns, never splitting a cluster.
pub fn truncate(s: &str, max: usize) -> &str {
    let mut w = 0;
    let mut end = 0;
    for (i, g) in s.grapheme_indices(true) {
        let gw = grapheme_width(g);
        if w + gw > max {
            return &s[..i];
        }
        w += gw;
        end = i + g.len();
    }
    &s[..end]
}

/// `s` without its last cluster when that cluster may still grow. While a reply streams, a ZWJ
/// sequence arrives in pieces, ﾞ follows its kana, 🇵 follows 🇯, a skin tone or VS16 follows
/// its emoji: drawing the piece early would put something on screen that the next frame
/// changes into a cluster of another width.
pub fn without_open_cluster(s: &str) -> &str {
    let Some((i, g)) = s.grapheme_indices(true).next_back() else {
        return s;
    };
    let last = g.chars().next_back().unwrap_or(' ');
    let regional = |c: char| ('\u{1F1E6}'..='\u{1F1FF}').contains(&c);
    let open = last == '\u{200D}'
        || (regional(last) && g.chars().filter(|c| regional(*c)).count() % 2 == 1)
        || ('\u{FF66}'..='\u{FF9D}').contains(&last)
        || (!regional(last)
            && matches!(last, '\u{2300}'..='\u{27BF}' | '\u{2B00}'..='\u{2BFF}' | '\u{1F000}'..='\u{1FAFF}'));
    if open { &s[..i] } else { s }
}

/// `s` padded with spaces to `cols` columns (unchanged when already as wide or wider).
pub fn pad(s: &str, cols: usize) -> String {
    let w = width(s);
    if w >= cols {
        s.to_string()
    } else {
        format!("{s}{}", " ".repeat(cols - w))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::buffer::Buffer;
    use ratatui::layout::Rect;

    /// The columns ratatui's buffer gives `s` (where the next text would start).
    fn drawn(s: &str) -> usize {
        let mut b = Buffer::empty(Rect::new(0, 0, 200, 1));
        let (x, _) = b.set_stringn(0, 0, s, 200, ratatui::style::Style::new());
        x as usize
    }

    #[test]
    fn clusters_measure_as_drawn() {
        let cases = [
            ("abc", 3),
            ("あいう", 6),
            ("ｶﾞﾗｶﾞﾗ", 6),
            ("ﾊﾟﾝ", 3),
            ("か\u{3099}", 2),
            ("e\u{301}te\u{301}", 3),
            ("👍", 2),
            ("👨\u{200d}👩\u{200d}👧", 2),
            ("❤\u{fe0f}", 2),
            ("🇯🇵", 2),
            ("a\u{7}b", 2),
            ("", 0),
        ];
        for (s, w) in cases {
            assert_eq!(width(s), w, "{s:?}");
            assert_eq!(drawn(s), w, "ratatui places {s:?} differently");
        }
    }

    #[test]
    fn a_streaming_text_is_drawn_up_to_its_last_complete_cluster() {
        let family = "👩\u{200d}👩\u{200d}👧";
        // Every prefix of a stream, cut at any char: what is drawn is a prefix of the final
        // text's clusters, never a piece that later changes.
        let full = format!("あ{family}ｶﾞ🇯🇵x");
        let clusters: Vec<&str> = full.graphemes(true).collect();
        for (i, _) in full.char_indices().skip(1) {
            let shown = without_open_cluster(&full[..i]);
            let n = shown.graphemes(true).count();
            assert_eq!(shown, clusters[..n].concat(), "cut at byte {i}");
        }
        assert_eq!(without_open_cluster(""), "");
        assert_eq!(without_open_cluster("👩\u{200d}"), "");
        // A cluster that cannot grow is drawn at once.
        assert_eq!(without_open_cluster("なんだ！"), "なんだ！");
        assert_eq!(without_open_cluster("ｶﾞ🇯🇵"), "ｶﾞ🇯🇵");
        assert_eq!(without_open_cluster("ｶﾞｷ"), "ｶﾞ");
    }

    #[test]
    fn truncate_and_pad_never_split_a_cluster() {
        assert_eq!(truncate("ｶﾞﾗｶﾞﾗ", 3), "ｶﾞﾗ");
        assert_eq!(truncate("ｶﾞﾗｶﾞﾗ", 4), "ｶﾞﾗ");
        assert_eq!(truncate("あいう", 5), "あい");
        assert_eq!(truncate("👨\u{200d}👩\u{200d}👧x", 1), "");
        assert_eq!(truncate("abc", 10), "abc");
        assert_eq!(pad("ｶﾞ", 4), "ｶﾞ  ");
        assert_eq!(width(&pad("あゆ", 7)), 7);
    }

    /// A seeded generator, so failures reproduce.
    fn rng(seed: u64) -> impl FnMut() -> u64 {
        crate::test_rng::words(seed)
    }

    #[test]
    fn width_is_additive_over_clusters_and_agrees_with_the_buffer() {
        let parts = [
            "ｶﾞ",
            "ﾗ",
            "ﾟ",
            "あ",
            "。",
            "👍",
            "❤\u{fe0f}",
            "e\u{301}",
            "word ",
            "漢",
            "🇯🇵",
            "x",
        ];
        let mut next = rng(7);
        for _ in 0..500 {
            let n = (next() % 12) as usize;
            let s: String = (0..n)
                .map(|_| parts[(next() % parts.len() as u64) as usize])
                .collect();
            let sum: usize = graphemes(&s).map(|(_, w)| w).sum();
            assert_eq!(width(&s), sum, "{s:?}");
            assert_eq!(width(&s), drawn(&s), "{s:?}");
        }
    }
}
