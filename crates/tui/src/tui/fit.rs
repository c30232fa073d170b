//! Lines cut to a pane's width end in `…` (nothing is cut at 80 columns
//! without saying so). A pane that does not wrap a line hands its lines through `lines` before
//! drawing; a line that fits is left as it is, a longer one keeps its spans' styles up to one
//! column short of the width and ends in `…` in the style of the span it cut. A row of items
//! (an attempts timeline, a hook line) goes through `pack`: the items flow onto as many rows as
//! they need, never split, and only an item wider than a whole row is cut.

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

/// `items` (each a run of spans) laid into rows of `width` columns with `sep` between two on
/// a row; a row after the first starts with `sep` trimmed at its start (`→ #3 PASS`). An item
/// never splits across rows; one wider than a row is cut with `…`.
pub fn pack(items: Vec<Vec<Span<'static>>>, sep: Span<'static>, width: u16) -> Vec<Line<'static>> {
    let room = usize::from(width);
    let cols = |spans: &[Span]| spans.iter().map(|s| text_width(&s.content)).sum::<usize>();
    let lead = Span::styled(sep.content.trim_start().to_string(), sep.style);
    let (sep_w, lead_w) = (text_width(&sep.content), text_width(&lead.content));
    let mut rows: Vec<Vec<Span<'static>>> = Vec::new();
    let mut used = 0;
    for item in items {
        let w = cols(&item);
        match rows.last_mut() {
            Some(row) if used + sep_w + w <= room => {
                row.push(sep.clone());
                used += sep_w + w;
                row.extend(item);
            }
            Some(_) => {
                used = lead_w + w;
                rows.push(std::iter::once(lead.clone()).chain(item).collect());
            }
            None => {
                used = w;
                rows.push(item);
            }
        }
    }
    rows.into_iter()
        .map(|r| line(Line::from(r), width))
        .collect()
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

    /// Items of mixed scripts at every width: rows fit, nothing but an over-wide item is cut
    /// (and that ends in `…`).
    #[test]
    fn generated_packed_rows_fit_and_keep_every_item_that_fits() {
        let words = [
            "#1 RETRY",
            "#2★ PASS",
            "#3 generating",
            "漢字の試行",
            "ｶﾞﾗｶﾞﾗ",
            "👩‍👩‍👧 ok",
            "context overflow",
            "x",
        ];
        let mut next = crate::test_rng::words(2026);
        for _ in 0..300 {
            let n = 1 + (next() % 7) as usize;
            let items: Vec<String> = (0..n)
                .map(|_| words[(next() % words.len() as u64) as usize].to_string())
                .collect();
            for w in [4u16, 8, 12, 20, 31, 33, 50, 80] {
                let rows = pack(
                    items.iter().map(|i| vec![Span::raw(i.clone())]).collect(),
                    Span::raw(" → "),
                    w,
                );
                let texts: Vec<String> = rows.iter().map(text).collect();
                for t in &texts {
                    assert!(text_width(t) <= usize::from(w), "{w}: {t}");
                }
                for (k, item) in items.iter().enumerate() {
                    let fits = text_width(item) + if k == 0 { 0 } else { 2 } <= usize::from(w);
                    if fits {
                        assert!(
                            texts.iter().any(|t| t.contains(item.as_str())),
                            "{w}: {item} lost in {texts:?}"
                        );
                    }
                }
                for t in texts
                    .iter()
                    .filter(|t| !items.iter().any(|i| t.contains(i.as_str())))
                {
                    assert!(t.ends_with('…'), "{w}: {t} cut without …");
                }
            }
        }
    }
}
