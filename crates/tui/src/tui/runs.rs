//! The runs browser: stored runs newest first (topic, model, started, status, a verdict strip
//! and review progress), filtered as you type, paged from the store so ten thousand runs open
//! as fast as ten. Pure state and drawing; `runs_run.rs` reads the pages.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph};
use unicode_width::UnicodeWidthStr;

use super::theme::Theme;
use crate::director::Status;
use crate::store::browse::{BrowsePage, BrowseRow};

/// Rows read per page.
pub const PAGE: usize = 200;
/// Turns shown in a row's verdict strip before it is cut with "…".
const STRIP: usize = 24;

#[derive(Debug, Clone, Default)]
pub struct RunsBrowser {
    pub filter: String,
    pub page: BrowsePage,
    /// Index into `page.rows`.
    pub selected: usize,
    pub loading: bool,
    pub error: Option<String>,
    /// The offset of the page last asked for (an answer for another offset is dropped).
    pub asked: usize,
}

/// What a key in the browser asks for.
#[derive(Debug, Clone, PartialEq)]
pub enum BrowserAsk {
    Nothing,
    Close,
    /// Read the page at this offset with the current filter.
    Load(usize),
    Open(i64),
    /// Open the newest comparison of this run (ctrl-o).
    Compare(i64),
}

impl RunsBrowser {
    pub fn selected_row(&self) -> Option<&BrowseRow> {
        self.page.rows.get(self.selected)
    }

    /// A page arrived (for the current filter).
    pub fn loaded(&mut self, page: BrowsePage) {
        self.page = page;
        self.selected = self.selected.min(self.page.rows.len().saturating_sub(1));
        self.loading = false;
        self.error = None;
    }

    /// Printable keys edit the filter; arrows and page keys move; Enter opens; Esc closes.
    pub fn key(&mut self, key: KeyEvent) -> BrowserAsk {
        let n = self.page.rows.len();
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Esc => BrowserAsk::Close,
            KeyCode::Char('c') if ctrl => BrowserAsk::Close,
            KeyCode::Char('o') if ctrl => match self.selected_row() {
                Some(r) => BrowserAsk::Compare(r.id),
                None => BrowserAsk::Nothing,
            },
            KeyCode::Enter => match self.selected_row() {
                Some(r) => BrowserAsk::Open(r.id),
                None => BrowserAsk::Nothing,
            },
            KeyCode::Down | KeyCode::Char('n') if key.code == KeyCode::Down || ctrl => {
                self.move_by(1, n)
            }
            KeyCode::Up | KeyCode::Char('p') if key.code == KeyCode::Up || ctrl => {
                self.move_by(-1, n)
            }
            KeyCode::PageDown => self.move_by(10, n),
            KeyCode::PageUp => self.move_by(-10, n),
            KeyCode::Home => {
                self.selected = 0;
                if self.page.offset > 0 {
                    return self.load(0);
                }
                BrowserAsk::Nothing
            }
            KeyCode::Backspace => {
                if self.filter.pop().is_some() {
                    self.selected = 0;
                    return self.load(0);
                }
                BrowserAsk::Nothing
            }
            KeyCode::Char(c) if !ctrl => {
                self.filter.push(c);
                self.selected = 0;
                self.load(0)
            }
            _ => BrowserAsk::Nothing,
        }
    }

    fn load(&mut self, offset: usize) -> BrowserAsk {
        self.loading = true;
        BrowserAsk::Load(offset)
    }

    /// Moves the selection; past the page's ends the next or previous page is read.
    fn move_by(&mut self, by: isize, n: usize) -> BrowserAsk {
        let want = self.selected as isize + by;
        let off = self.page.offset;
        if want >= n as isize && off + n < self.page.total {
            self.selected = 0;
            return self.load(off + n);
        }
        if want < 0 && off > 0 {
            self.selected = PAGE - 1;
            return self.load(off.saturating_sub(PAGE));
        }
        self.selected = want.clamp(0, n.saturating_sub(1) as isize) as usize;
        BrowserAsk::Nothing
    }
}

fn letter(s: Status) -> &'static str {
    match s {
        Status::Pass | Status::Info => "✓",
        Status::Warn => "w",
        Status::Modify => "m",
        Status::Retry => "R",
        Status::Unscored => "?",
    }
}

/// Cuts `s` to `w` display columns (with "…" when cut).
pub(super) fn fit(s: &str, w: usize) -> String {
    if s.width() <= w {
        return s.to_string();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in s.chars() {
        let cw = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
        if used + cw + 1 > w {
            break;
        }
        used += cw;
        out.push(c);
    }
    out.push('…');
    out
}

pub(super) fn pad(s: &str, w: usize) -> String {
    let s = fit(s, w);
    let n = w.saturating_sub(s.width());
    format!("{s}{}", " ".repeat(n))
}

fn row_line(r: &BrowseRow, width: usize, t: &Theme, selected: bool) -> Line<'static> {
    let base = if selected {
        Style::new().bg(t.selected_bg).fg(t.text)
    } else {
        Style::new().fg(t.text)
    };
    let started = r
        .started_at
        .get(..16)
        .unwrap_or(&r.started_at)
        .replace('T', " ");
    let turns = r.strip.len();
    let progress = format!("{:>3}/{:<3}", r.reviewed, turns);
    let model = r.model.clone().unwrap_or_else(|| "—".into());
    // #id started status model | strip | reviewed/turns topic
    let wide = width >= 90;
    let mut spans = vec![Span::styled(format!("{:>5} ", r.id), base.fg(t.dim))];
    if wide {
        spans.push(Span::styled(format!("{started} "), base.fg(t.dim)));
    }
    spans.push(Span::styled(pad(r.status.as_str(), 11), base));
    if wide {
        spans.push(Span::styled(pad(&model, 14), base.fg(t.dim)));
        spans.push(Span::styled(" ", base));
    }
    let strip_w = if wide { STRIP } else { 10 };
    for s in r.strip.iter().take(strip_w) {
        spans.push(Span::styled(letter(*s), base.fg(t.status(*s))));
    }
    let shown = turns.min(strip_w);
    let more = if turns > strip_w { "…" } else { " " };
    spans.push(Span::styled(
        format!("{more}{} ", " ".repeat(strip_w - shown)),
        base,
    ));
    spans.push(Span::styled(progress, base.fg(t.accent)));
    // A comparison's or a probe's sample says so before its topic (not a run to review).
    if let Some(sample) = &r.sample {
        spans.push(Span::styled(format!(" [{sample}]"), base.fg(t.dim)));
    }
    let used: usize = spans.iter().map(|s| s.content.width()).sum();
    spans.push(Span::styled(
        format!(" {}", pad(&r.topic, width.saturating_sub(used + 1))),
        base,
    ));
    Line::from(spans)
}

/// Draws the browser over `area`.
pub fn render(f: &mut Frame, area: Rect, b: &RunsBrowser, t: &Theme) {
    f.render_widget(Clear, area);
    let shown = b.page.rows.len();
    // Enter and Esc first: at 80 columns the rest ends in …
    let title = format!(
        " runs {}–{} of {} · Enter opens · Esc closes · type to filter · ↑↓ PgUp/PgDn · ctrl-o compare ",
        if shown == 0 { 0 } else { b.page.offset + 1 },
        b.page.offset + shown,
        b.page.total
    );
    let title = super::fit::line(Line::raw(title), area.width.saturating_sub(2));
    let block = Block::bordered()
        .title(title)
        .border_style(Style::new().fg(t.border));
    let inner = block.inner(area);
    f.render_widget(block, area);
    if inner.height == 0 {
        return;
    }
    let width = inner.width as usize;
    let mut lines = vec![Line::from(vec![
        Span::styled("filter: ", Style::new().fg(t.dim)),
        Span::styled(
            format!("{}▏", b.filter),
            Style::new().fg(t.accent).add_modifier(Modifier::BOLD),
        ),
        Span::styled(
            match (&b.error, b.loading) {
                (Some(e), _) => format!("  NOT read: {e}"),
                (None, true) => "  reading…".into(),
                _ => String::new(),
            },
            Style::new().fg(t.retry),
        ),
    ])];
    if shown == 0 && !b.loading {
        lines.push(Line::styled(
            if b.filter.is_empty() {
                "no stored runs yet — ctrl-n starts one, d plays the demo"
            } else {
                "no run matches the filter"
            },
            Style::new().fg(t.dim),
        ));
    }
    let rows = inner.height.saturating_sub(1) as usize;
    let first = b.selected.saturating_sub(rows.saturating_sub(1));
    for (i, r) in b.page.rows.iter().enumerate().skip(first).take(rows) {
        lines.push(row_line(r, width, t, i == b.selected));
    }
    f.render_widget(Paragraph::new(lines), inner);
}
