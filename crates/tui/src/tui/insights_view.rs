//! The insights view (issue 12 §2): insight cards — theme, JTBD, severity, confidence label,
//! evidence count — with the quotes of the selected card, filtered by scope (an interview's
//! name, `feedback`, or one run's feedback). Pure state (`on_key`) and a `render` function.

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph};

use super::theme::Theme;
use super::wrap::wrap;
use crate::insight::{Card, Deck, Label};

#[derive(Debug, Clone, Default)]
pub struct InsightsView {
    /// (scope, its cards, most confident first).
    pub scopes: Vec<(String, Vec<Card>)>,
    pub scope: usize,
    pub selected: usize,
}

impl InsightsView {
    pub fn new(scopes: Vec<(String, Deck)>) -> InsightsView {
        InsightsView {
            scopes: scopes
                .into_iter()
                .map(|(s, d)| (s, d.ranked().into_iter().cloned().collect()))
                .collect(),
            scope: 0,
            selected: 0,
        }
    }

    /// Loads every scope's cards from the store.
    pub fn load(s: &crate::store::Store) -> Result<InsightsView, crate::store::StoreError> {
        let mut v = Vec::new();
        for scope in crate::insight::store::scopes(s)? {
            let d = crate::insight::store::load(s, &scope)?;
            v.push((scope, d));
        }
        Ok(InsightsView::new(v))
    }

    pub fn cards(&self) -> &[Card] {
        self.scopes
            .get(self.scope)
            .map(|(_, c)| c.as_slice())
            .unwrap_or(&[])
    }

    /// ←/→ (h/l) change the scope filter, ↑/↓ (k/j) the card. True when the key was used.
    pub fn on_key(&mut self, k: KeyEvent) -> bool {
        let n = self.scopes.len().max(1);
        match k.code {
            KeyCode::Left | KeyCode::Char('h') => {
                self.scope = (self.scope + n - 1) % n;
                self.selected = 0;
            }
            KeyCode::Right | KeyCode::Char('l') => {
                self.scope = (self.scope + 1) % n;
                self.selected = 0;
            }
            KeyCode::Down | KeyCode::Char('j') => {
                self.selected = (self.selected + 1).min(self.cards().len().saturating_sub(1))
            }
            KeyCode::Up | KeyCode::Char('k') => self.selected = self.selected.saturating_sub(1),
            _ => return false,
        }
        true
    }
}

fn label_style(l: Label, t: &Theme) -> Style {
    let c = match l {
        Label::H => t.pass,
        Label::M => t.warn,
        Label::L => t.dim,
    };
    Style::new().fg(c).add_modifier(Modifier::BOLD)
}

pub fn render(f: &mut Frame, area: Rect, v: &InsightsView, t: &Theme) {
    let [filter, list, quotes] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Percentage(55),
        Constraint::Min(4),
    ])
    .areas(area);
    f.render_widget(Paragraph::new(scope_line(v, t)), filter);

    let block = Block::bordered()
        .title(" label  conf  severity  freq  ev  theme — jtbd ")
        .border_style(Style::new().fg(t.border));
    let inner = block.inner(list);
    f.render_widget(block, list);
    let cards = v.cards();
    let h = inner.height as usize;
    let first = v.selected.saturating_sub(h.saturating_sub(1));
    let rows = card_rows(v, cards, first, h, t);
    f.render_widget(Paragraph::new(rows), inner);

    let card = cards.get(v.selected);
    let title = card
        .map(|c| format!(" 「{}」の声 ({}) ", c.theme, c.quotes.len()))
        .unwrap_or_else(|| " quotes ".into());
    let block = Block::bordered()
        .title(title)
        .border_style(Style::new().fg(t.border));
    let inner = block.inner(quotes);
    f.render_widget(block, quotes);
    let width = inner.width.max(1) as usize;
    let mut lines = Vec::new();
    if let Some(c) = card {
        if !c.summary.is_empty() {
            lines.push(Line::styled(c.summary.clone(), Style::new().fg(t.dim)));
        }
        for q in &c.quotes {
            for w in wrap(&format!("「{q}」"), width.saturating_sub(2)) {
                lines.push(Line::styled(format!("  {w}"), Style::new().fg(t.text)));
            }
        }
    }
    f.render_widget(Paragraph::new(lines), inner);
}

/// The scopes to filter by, the selected one highlighted.
fn scope_line(v: &InsightsView, t: &Theme) -> Line<'static> {
    let mut spans = vec![Span::styled(
        " insights  ",
        Style::new().fg(t.accent).add_modifier(Modifier::BOLD),
    )];
    if v.scopes.is_empty() {
        spans.push(Span::styled(
            "no cards yet — run `kakeai analyze --interview NAME` or `--feedback`",
            Style::new().fg(t.dim),
        ));
    }
    for (i, (s, _)) in v.scopes.iter().enumerate() {
        let st = if i == v.scope {
            Style::new()
                .fg(t.text)
                .bg(t.selected_bg)
                .add_modifier(Modifier::BOLD)
        } else {
            Style::new().fg(t.dim)
        };
        spans.push(Span::styled(format!(" {s} "), st));
        spans.push(Span::raw(" "));
    }
    Line::from(spans)
}

/// One row per card on screen: label, confidence, severity, frequency, evidence, theme.
fn card_rows(
    v: &InsightsView,
    cards: &[crate::insight::Card],
    first: usize,
    h: usize,
    t: &Theme,
) -> Vec<Line<'static>> {
    cards
        .iter()
        .enumerate()
        .skip(first)
        .take(h)
        .map(|(i, c)| {
            let sel = if i == v.selected {
                Style::new().bg(t.selected_bg)
            } else {
                Style::new()
            };
            let l = c.label();
            Line::from(vec![
                Span::styled(
                    format!("  {}    ", l.as_str()),
                    label_style(l, t).patch(sel),
                ),
                Span::styled(format!("{:.2}  ", c.confidence()), sel.fg(t.text)),
                Span::styled(format!("{:<8}  ", c.severity.as_str()), sel.fg(t.text)),
                Span::styled(
                    format!("{:>4}  {:>2}  ", c.freq, c.quotes.len()),
                    sel.fg(t.text),
                ),
                Span::styled(c.theme.clone(), sel.fg(t.text).add_modifier(Modifier::BOLD)),
                Span::styled(format!(" — {}", c.jtbd), sel.fg(t.dim)),
            ])
        })
        .collect()
}
