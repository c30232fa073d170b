//! The visibility pane's preview: the exact text the chosen sister's next prompt carries, and
//! what is withheld, in rows that scroll. PgUp/PgDn page it whatever has the focus; `l` gives
//! it the focus, and then j/k move it a row and g goes to its top. A row under the preview says
//! where it is (`9–16/40 · ↓ PgDn · ↑ PgUp`) whenever it holds more than fits; a line that does
//! not wrap (the heading, that row) ends in `…` when cut.

use std::cell::Cell;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::Line;
use ratatui::widgets::Paragraph;

use super::keymap::Action;
use super::theme::Theme;
use super::wrap::wrap;
use crate::vault::Work;

/// Where the preview is scrolled, and whether j/k move it (rather than the tree's selection).
#[derive(Debug, Default)]
pub struct PreviewScroll {
    /// The first body row shown.
    pub top: usize,
    /// `l` gave the preview the focus: j/k scroll it.
    pub focused: bool,
    /// As last drawn: the furthest `top` can go, and how many body rows show at once.
    last: Cell<(usize, usize)>,
}

impl PreviewScroll {
    /// A key for the preview; the status line to show (None: not the preview's key).
    pub fn action(&mut self, action: Action) -> Option<Option<String>> {
        let (max, rows) = self.last.get();
        let page = rows.saturating_sub(1).max(1);
        match action {
            Action::PageDown => self.top = (self.top + page).min(max),
            Action::PageUp => self.top = self.top.saturating_sub(page),
            Action::NextTurn if self.focused => self.top = (self.top + 1).min(max),
            Action::PrevTurn if self.focused => self.top = self.top.saturating_sub(1),
            Action::FirstTurn if self.focused => self.top = 0,
            Action::FocusRight => {
                self.focused = !self.focused;
                return Some(Some(if self.focused {
                    "preview focused: j/k PgUp/PgDn scroll it · l gives the tree back".into()
                } else {
                    "tree focused: j/k select · PgUp/PgDn scroll the preview · l focuses it".into()
                }));
            }
            _ => return None,
        }
        Some(None)
    }

    /// The rows from `top` that fit in `height` (one kept for the position when they do not
    /// all fit), and the position row; records the limits the keys stop at.
    fn window<'a>(
        &self,
        body: &'a [Line<'static>],
        height: usize,
    ) -> (&'a [Line<'static>], Option<String>) {
        if body.len() <= height {
            self.last.set((0, height));
            return (body, None);
        }
        let rows = height.saturating_sub(1).max(1);
        let max = body.len().saturating_sub(rows);
        self.last.set((max, rows));
        let top = self.top.min(max);
        let end = (top + rows).min(body.len());
        let (above, below) = (top > 0, end < body.len());
        let keys = match (above, below) {
            (true, true) => "↓ PgDn · ↑ PgUp",
            (false, _) => "↓ more: PgDn",
            (true, false) => "end · ↑ PgUp",
        };
        let at = format!("{}–{}/{} · {keys}", top + 1, end, body.len());
        (&body[top..end], Some(at))
    }
}

/// The preview's heading and its body rows (the withheld counts, then the prompt) wrapped at
/// `width`.
pub fn lines(work: &Work, who: &str, name: &str, width: usize, t: &Theme) -> PreviewLines {
    let dim = Style::new().fg(t.dim);
    let width = width.max(1);
    let ctx = work.context(Some(who));
    let n = ctx.prompt.chars().count();
    // The longest heading that fits; the shortest is cut with `…` only when even it does not.
    let heads = [
        format!("── next turn, {name} is told ({n} chars) ──"),
        format!("next turn, {name} is told ({n} chars)"),
        format!("{name} is told ({n} chars)"),
    ];
    let head = heads
        .iter()
        .find(|h| crate::text::width::width(h) <= width)
        .unwrap_or(&heads[2])
        .clone();
    // Counts only, never content: the writer sees at a glance that her secrets are held.
    let w = ctx.withheld;
    let held = format!(
        "withheld: {} hidden · {} notice only · {} reference only · {} given",
        w.level0, w.level1, w.level2, w.given
    );
    let mut body: Vec<Line<'static>> = wrap(&held, width)
        .into_iter()
        .map(|l| Line::styled(l, dim))
        .collect();
    for l in ctx.prompt.lines() {
        for w in wrap(l, width) {
            body.push(Line::styled(w, Style::new().fg(t.text)));
        }
    }
    PreviewLines {
        head: Line::styled(head, dim),
        body,
    }
}

/// The heading (it does not wrap) and the rows that scroll.
pub struct PreviewLines {
    pub head: Line<'static>,
    pub body: Vec<Line<'static>>,
}

/// Draws the heading, the rows at the scroll position and, when they do not all fit, the
/// position row.
pub fn render(f: &mut Frame, area: Rect, p: PreviewLines, scroll: &PreviewScroll, t: &Theme) {
    let height = usize::from(area.height.saturating_sub(1));
    let (rows, at) = scroll.window(&p.body, height);
    let mut out = vec![p.head];
    out.extend(rows.iter().cloned());
    if let Some(at) = at {
        let style = if scroll.focused {
            Style::new().fg(t.accent)
        } else {
            Style::new().fg(t.dim)
        };
        out.push(Line::styled(at, style));
    }
    f.render_widget(Paragraph::new(super::fit::lines(out, area.width)), area);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(n: usize) -> Vec<Line<'static>> {
        (0..n).map(|i| Line::raw(format!("row {i}"))).collect()
    }

    /// For every body length and height: the rows shown are consecutive, never more than fit,
    /// the position row appears exactly when something is left out, and PgDn/PgUp reach both
    /// ends and stop there.
    #[test]
    fn generated_windows_show_what_fits_and_say_where_they_are() {
        for n in 0..40 {
            for height in 1..20 {
                let b = body(n);
                let mut s = PreviewScroll::default();
                let (rows, at) = s.window(&b, height);
                assert_eq!(at.is_some(), n > height, "{n} in {height}");
                assert!(rows.len() + usize::from(at.is_some()) <= height.max(2));
                let mut seen = rows.len();
                for _ in 0..n + 2 {
                    s.action(Action::PageDown);
                    let (rows, at) = s.window(&b, height);
                    seen = seen.max(s.top.min(n) + rows.len());
                    if let Some(at) = at {
                        assert!(at.starts_with(&format!("{}–", s.top + 1)), "{at}");
                    }
                }
                assert_eq!(seen, n, "{n} in {height}: the last row never showed");
                for _ in 0..n + 2 {
                    s.action(Action::PageUp);
                }
                assert_eq!(s.top, 0);
            }
        }
    }

    #[test]
    fn j_and_k_scroll_only_with_the_focus() {
        let b = body(30);
        let mut s = PreviewScroll::default();
        s.window(&b, 10);
        assert_eq!(s.action(Action::NextTurn), None, "the tree takes j");
        assert!(s.action(Action::FocusRight).is_some_and(|m| m.is_some()));
        s.action(Action::NextTurn);
        s.action(Action::NextTurn);
        assert_eq!(s.top, 2);
        s.action(Action::FirstTurn);
        assert_eq!(s.top, 0);
    }

    /// The sample's prompt with a section of mixed scripts, at every width from 2: body rows fit,
    /// the heading fits or (fitted as drawn) ends in `…`, and no text is lost.
    #[test]
    fn generated_rows_fit_every_width() {
        let (themes, _) = crate::tui::theme::load_all();
        let mut work = crate::vault::sample();
        let parts = ["漢字", "ｶﾞﾗｶﾞﾗ", "👍", "🇯🇵", "👩‍👩‍👧", "word ", "「引用」", "。"];
        let mut next = crate::test_rng::words(11);
        let text: String = (0..80)
            .map(|_| parts[(next() % parts.len() as u64) as usize])
            .collect();
        let e = work.entities.iter_mut().find(|e| e.name == "あゆ").unwrap();
        e.sections
            .iter_mut()
            .find(|s| s.name == "基本情報")
            .unwrap()
            .text = text.clone();
        for width in 2..=60u16 {
            let p = lines(&work, "yana", "やな", width.into(), &themes[0]);
            let head = super::super::fit::line(p.head, width);
            let head: String = head.spans.iter().map(|s| s.content.as_ref()).collect();
            assert!(crate::text::width::width(&head) <= usize::from(width));
            assert!(
                head.ends_with(')') || head.ends_with('─') || head.ends_with('…'),
                "{head}"
            );
            let body: Vec<String> = p
                .body
                .iter()
                .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
                .collect();
            for r in &body {
                // A cluster wider than the row (an emoji at width 1) stands alone.
                let one = crate::text::width::graphemes(r).count() == 1;
                assert!(
                    one || crate::text::width::width(r) <= usize::from(width),
                    "{r}"
                );
            }
            assert!(body.concat().contains(&text), "{width}: text lost");
        }
    }
}
