//! Wrapping styled text (the detail pane's highlighted findings and attempt diff) with the same
//! breaks as `wrap::wrap`: the plain text is wrapped, then each row is cut back into runs of
//! one style. With `markers` on (high-contrast / NO_COLOR themes), a styled run also gets a text
//! marker, since colour alone carries nothing there: findings 【…】, removed text [-…-], added
//! text {+…+}.

use ratatui::style::Style;
use ratatui::text::{Line, Span};

use super::wrap::line_breaks;

/// What a run of text is, for its marker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    Plain,
    Finding,
    Removed,
    Added,
}

impl Mark {
    fn brackets(self) -> (&'static str, &'static str) {
        match self {
            Mark::Plain => ("", ""),
            Mark::Finding => ("【", "】"),
            Mark::Removed => ("[-", "-]"),
            Mark::Added => ("{+", "+}"),
        }
    }
}

/// Wraps runs of (text, style, mark) into lines of at most `width` columns.
pub fn wrap_styled(
    runs: &[(String, Style, Mark)],
    width: usize,
    markers: bool,
) -> Vec<Line<'static>> {
    // The plain text (markers included, so they are wrapped like text) and each byte's run.
    let mut plain = String::new();
    let mut owner: Vec<(usize, Style)> = Vec::new(); // (end byte, style), ascending
    for (text, style, mark) in runs {
        let (open, close) = if markers { mark.brackets() } else { ("", "") };
        for part in [open, text.as_str(), close] {
            if !part.is_empty() {
                plain.push_str(part);
                owner.push((plain.len(), *style));
            }
        }
    }
    let style_at = |byte: usize| -> (Style, usize) {
        let i = owner.partition_point(|(end, _)| *end <= byte);
        owner
            .get(i)
            .map(|(end, s)| (*s, *end))
            .unwrap_or((Style::new(), plain.len()))
    };
    let mut out = Vec::new();
    let mut base = 0;
    for line in plain.split('\n') {
        for r in line_breaks(line, width) {
            let (mut at, end) = (base + r.start, base + r.end);
            let mut spans = Vec::new();
            while at < end {
                let (style, run_end) = style_at(at);
                let stop = run_end.min(end);
                spans.push(Span::styled(plain[at..stop].to_string(), style));
                at = stop;
            }
            out.push(Line::from(spans));
        }
        base += line.len() + 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::style::Modifier;

    fn text(l: &Line) -> String {
        l.spans.iter().map(|s| s.content.as_ref()).collect()
    }

    #[test]
    fn rows_match_plain_wrapping_and_styles_follow_their_text() {
        let hl = Style::new().add_modifier(Modifier::BOLD);
        let runs = vec![
            ("あいう".to_string(), Style::new(), Mark::Plain),
            ("えお。か".to_string(), hl, Mark::Finding),
            ("\nきく".to_string(), Style::new(), Mark::Plain),
        ];
        let lines = wrap_styled(&runs, 6, false);
        let rows: Vec<String> = lines.iter().map(text).collect();
        assert_eq!(rows, super::super::wrap::wrap("あいうえお。か\nきく", 6));
        let bold: String = lines
            .iter()
            .flat_map(|l| l.spans.iter())
            .filter(|s| s.style == hl)
            .map(|s| s.content.as_ref())
            .collect();
        assert_eq!(bold, "えお。か");
        let marked = wrap_styled(&runs, 80, true);
        assert_eq!(text(&marked[0]), "あいう【えお。か】");
        let diff = vec![
            ("同じ".to_string(), Style::new(), Mark::Plain),
            ("消えた".to_string(), Style::new(), Mark::Removed),
            ("足した".to_string(), Style::new(), Mark::Added),
        ];
        assert_eq!(
            text(&wrap_styled(&diff, 80, true)[0]),
            "同じ[-消えた-]{+足した+}"
        );
        assert_eq!(text(&wrap_styled(&diff, 80, false)[0]), "同じ消えた足した");
    }
}
