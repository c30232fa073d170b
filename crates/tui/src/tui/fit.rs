//! Lines cut to a pane's width end in `…` (issue 23 item 13: nothing is cut at 80 columns
//! without saying so). A pane that does not wrap a line hands its lines through `lines` before
//! drawing; a line that fits is left as it is, a longer one keeps its spans' styles up to one
//! column short of the width and ends in `…` in the style of the span it cut.

use ratatui::text::{Line, Span};

use crate::text::width::{graphemes, width as text_width};

/// Each line fitted to `width` columns.
pub fn lines(lines: Vec<Line<'static>>, width: u16) -> Vec<Line<'static>> {
    lines.into_iter().map(|l| line(l, width)).collect()
}

/// One line fitted to `width` columns.
pub fn line(l: Line<'static>, width: u16) -> Line<'static> {
    let width = usize::from(width);
    let total: usize = l.spans.iter().map(|s| text_width(&s.content)).sum();
    if total <= width || width == 0 {
        return l;
    }
    let room = width - 1;
    let (style, alignment) = (l.style, l.alignment);
    let mut used = 0;
    let mut out: Vec<Span<'static>> = Vec::new();
    let mut last_style = ratatui::style::Style::default();
    'spans: for s in l.spans {
        last_style = s.style;
        let mut kept = String::new();
        for (g, w) in graphemes(&s.content) {
            if used + w > room {
                out.push(Span::styled(kept, s.style));
                break 'spans;
            }
            kept.push_str(g);
            used += w;
        }
        out.push(Span::styled(kept, s.style));
    }
    out.push(Span::styled("…", last_style));
    let mut fitted = Line::from(out).style(style);
    fitted.alignment = alignment;
    fitted
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(l: &Line) -> String {
        l.spans.iter().map(|s| s.content.as_ref()).collect()
    }

    #[test]
    fn a_long_line_ends_in_an_ellipsis_within_the_width() {
        let samples = [
            "ruleset 3b22afe5f1ae · [ ] select · < > change · w save",
            "verdicts      PASS  WARN RETRY UNSCORED",
            "やな endings: わ！ へ？ よね かな ｶﾞｷﾞ 🇯🇵 👩‍👩‍👧",
        ];
        for s in samples {
            for w in 1..=60u16 {
                let l = line(
                    Line::from(vec![Span::raw("▶ "), Span::raw(s.to_string())]),
                    w,
                );
                let t = text(&l);
                assert!(text_width(&t) <= usize::from(w), "{w}: {t}");
                let whole = format!("▶ {s}");
                if text_width(&whole) <= usize::from(w) {
                    assert_eq!(t, whole);
                } else {
                    assert!(t.ends_with('…'), "{w}: {t}");
                    // What is kept is the start of the line, cluster for cluster.
                    assert!(whole.starts_with(t.trim_end_matches('…')), "{w}: {t}");
                }
            }
        }
    }
}
