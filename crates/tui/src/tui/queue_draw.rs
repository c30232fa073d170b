//! Drawing the review queue's overlays: the runs browser over the body, a destructive key's
//! confirmation, and the search bar above the footer.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph};

use super::keymap::Action;
use super::queue::Search;
use super::runs::RunsBrowser;
use super::theme::Theme;

/// What these overlays show, read from the workbench's state by the caller.
pub struct Overlays<'a> {
    pub runs: Option<&'a RunsBrowser>,
    /// A destructive key waiting for its confirmation, the turn it acts on and who spoke it.
    pub confirm: Option<(Action, usize, String)>,
    pub search: &'a Search,
}

/// The runs browser over the body, a confirmation, and the search bar above the footer.
pub fn render(f: &mut Frame, body: Rect, o: &Overlays<'_>, t: &Theme) {
    if let Some(b) = o.runs {
        super::runs::render(f, body, b, t);
    }
    if let Some((a, turn, who)) = &o.confirm {
        let ask = match a {
            Action::Regenerate => format!(
                "Regenerate turn {turn} · {who}? The turns after it are kept as a branch (B)."
            ),
            _ => "Stop the run? It ends here and cannot be resumed.".to_string(),
        };
        let w = (crate::text::width::width(&ask) as u16 + 4).min(body.width);
        let area = Rect::new(
            body.x + (body.width - w) / 2,
            body.y + body.height / 2,
            w,
            4.min(body.height),
        );
        super::cells::clear(f, area);
        f.render_widget(
            Paragraph::new(super::fit::lines(
                vec![
                    Line::styled(ask, Style::new().fg(t.text)),
                    Line::styled(
                        "y / Enter / the same key: yes · any other key: no",
                        Style::new().fg(t.dim),
                    ),
                ],
                w.saturating_sub(2),
            ))
            .block(Block::bordered().border_style(Style::new().fg(t.warn))),
            area,
        );
    }
    if let Some(input) = &o.search.input {
        let h = 3.min(body.height);
        let area = Rect::new(body.x, body.bottom().saturating_sub(h), body.width, h);
        super::cells::clear(f, area);
        let scope = if o.search.all { "all runs" } else { "this run" };
        let line = Line::from(vec![Span::styled(
            format!("{input}▏"),
            Style::new().fg(t.text),
        )]);
        f.render_widget(
            Paragraph::new(line).block(
                Block::bordered()
                    .title(format!(" / search {scope} · Tab: scope · Enter · Esc "))
                    .border_style(Style::new().fg(t.accent)),
            ),
            area,
        );
    }
}
