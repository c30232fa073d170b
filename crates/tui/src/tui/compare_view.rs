//! The compare view (issue 15 §1): a stored comparison with the summary line on top, then per
//! turn A's and B's line side by side, the verdict change badge (`WARN→PASS`; a worse turn's
//! badge in red) and the character diff. ↑/↓ (j/k) move between turns, PgUp/PgDn jump five,
//! Home/End. Opened from the runs browser or `kakeai --compare ID` (loaded by the runtime: runtime/compare.rs).

use crate::text::width::width as text_width;
use crossterm::event::{KeyCode, KeyEvent};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::theme::Theme;
use super::wrap::wrap;
use crate::compare::db::Stored;
use crate::compare::outcome::{Change, TurnRow, headline};
use crate::store::export::speaker_name;
use crate::text::sanitize::for_terminal;

#[derive(Debug, Clone)]
pub struct CompareView {
    pub stored: Stored,
    /// Selected turn (index into `stored.turns`).
    pub row: usize,
}

impl CompareView {
    pub fn new(stored: Stored) -> CompareView {
        CompareView { stored, row: 0 }
    }

    /// Moves the selection; false when the key is not the view's.
    pub fn key(&mut self, k: KeyEvent) -> bool {
        let last = self.stored.turns.len().saturating_sub(1);
        self.row = match k.code {
            KeyCode::Down | KeyCode::Char('j') => (self.row + 1).min(last),
            KeyCode::Up | KeyCode::Char('k') => self.row.saturating_sub(1),
            KeyCode::PageDown => (self.row + 5).min(last),
            KeyCode::PageUp => self.row.saturating_sub(5),
            KeyCode::Home => 0,
            KeyCode::End => last,
            _ => return false,
        };
        true
    }
}

/// Draws the view into `area`.
pub fn render(f: &mut Frame, area: Rect, v: &CompareView, t: &Theme) {
    let width = area.width.max(20) as usize;
    let mut top = Vec::new();
    let s = &v.stored;
    match &s.summary {
        Some(sum) => {
            let color = if sum.regression { t.retry } else { t.accent };
            top.push(Line::styled(
                clip(&headline(sum), width),
                Style::new().fg(color).add_modifier(Modifier::BOLD),
            ));
        }
        None => top.push(Line::styled(
            "unfinished comparison: no summary",
            Style::new().fg(t.warn),
        )),
    }
    let who = format!(
        "comparison {} · A = run {} · B = {} ({}) on {}",
        s.id,
        s.header
            .baseline_run
            .map(|r| r.to_string())
            .unwrap_or("-".into()),
        s.header.variant_name,
        s.header.variant_hash,
        s.header.model.as_deref().unwrap_or("?")
    );
    top.push(Line::styled(
        clip(&for_terminal(&who), width),
        Style::new().fg(t.dim),
    ));
    let col = (width.saturating_sub(3)) / 2;
    let mut body: Vec<Line> = Vec::new();
    let mut starts = Vec::new();
    for (i, r) in s.turns.iter().enumerate() {
        starts.push(body.len());
        body.extend(turn_block(r, i == v.row, col, width, t));
    }
    starts.push(body.len());
    let body_h = (area.height as usize).saturating_sub(top.len() + 1);
    let (start, end) = (
        starts.get(v.row).copied().unwrap_or(0),
        starts.get(v.row + 1).copied().unwrap_or(0),
    );
    // The selected turn's block is kept in view (at the top once the list has to scroll).
    let offset = if end <= body_h {
        0
    } else {
        start.min(body.len().saturating_sub(body_h))
    };
    let mut lines = top;
    lines.extend(body.into_iter().skip(offset).take(body_h));
    while lines.len() < area.height.saturating_sub(1) as usize {
        lines.push(Line::raw(""));
    }
    lines.push(Line::styled(
        clip("↑↓ turn · PgUp/PgDn · Home/End · Esc back", width),
        Style::new().fg(t.dim),
    ));
    f.render_widget(Paragraph::new(lines), area);
}

fn turn_block(
    r: &TurnRow,
    selected: bool,
    col: usize,
    width: usize,
    t: &Theme,
) -> Vec<Line<'static>> {
    let b0 = r.b.first();
    let badge = match b0 {
        Some(b) => format!("{}→{}", r.a.status, b.status),
        None => r.a.status.to_string(),
    };
    let (word, color) = match r.change {
        Change::Better => ("better", t.pass),
        Change::Same => ("same", t.dim),
        Change::Worse => ("worse", t.retry),
    };
    let judge = |m: Option<f64>| m.map(|m| format!("{m:.1}")).unwrap_or("-".into());
    let bg = if selected {
        Style::new().bg(t.selected_bg)
    } else {
        Style::new()
    };
    let mut head = vec![
        Span::styled(
            format!("T{:<3}", r.turn),
            bg.fg(t.text).add_modifier(Modifier::BOLD),
        ),
        Span::styled(
            format!("{} ", speaker_name(&r.speaker)),
            bg.fg(t.speaker(&r.speaker)),
        ),
        Span::styled(
            format!(" {badge} "),
            bg.fg(color).add_modifier(Modifier::BOLD),
        ),
        Span::styled(format!(" {word}"), bg.fg(color)),
        Span::styled(
            format!(
                "  judge {}/{}",
                judge(r.a.judge_mean),
                judge(b0.and_then(|b| b.judge_mean))
            ),
            bg.fg(t.dim),
        ),
    ];
    if r.b.len() > 1 {
        head.push(Span::styled(
            format!("  ×{} samples", r.b.len()),
            bg.fg(t.dim),
        ));
    }
    let rules = |s: &crate::compare::Side| {
        s.fired()
            .iter()
            .map(|x| x.as_str())
            .collect::<Vec<_>>()
            .join(",")
    };
    let mut out = vec![Line::from(head)];
    let a_text = format!("{}{}", for_terminal(&r.a.text), tag(&rules(&r.a)));
    let b_text = b0
        .map(|b| format!("{}{}", for_terminal(&b.text), tag(&rules(b))))
        .unwrap_or_default();
    let (a, b) = (wrap(&a_text, col), wrap(&b_text, col));
    for i in 0..a.len().max(b.len()) {
        let l = a.get(i).cloned().unwrap_or_default();
        let rr = b.get(i).cloned().unwrap_or_default();
        out.push(Line::from(vec![
            Span::styled(pad(&l, col), Style::new().fg(t.text)),
            Span::styled(" │ ", Style::new().fg(t.border)),
            Span::styled(rr, Style::new().fg(t.text)),
        ]));
    }
    out.push(diff_line(r, width, t));
    out.push(Line::raw(""));
    out
}

fn tag(rules: &str) -> String {
    if rules.is_empty() {
        String::new()
    } else {
        format!("  [{rules}]")
    }
}

/// The diff on one row: deletions struck through in the RETRY colour, insertions underlined
/// in the PASS colour, cut at the width.
fn diff_line(r: &TurnRow, width: usize, t: &Theme) -> Line<'static> {
    let mut spans = vec![Span::styled("  diff ", Style::new().fg(t.dim))];
    let mut left = width.saturating_sub(7);
    let total: usize = r
        .diff
        .iter()
        .map(|p| text_width(&for_terminal(&p.text).replace('\n', "⏎")))
        .sum();
    // A diff longer than the row is cut with "…" (one column kept for it).
    let cut = total > left;
    if cut {
        left = left.saturating_sub(1);
    }
    for p in &r.diff {
        if left == 0 {
            break;
        }
        let text = crate::text::width::truncate(&for_terminal(&p.text).replace('\n', "⏎"), left)
            .to_string();
        left = left.saturating_sub(text_width(&text));
        let style = match p.op.as_str() {
            "delete" => Style::new().fg(t.retry).add_modifier(Modifier::CROSSED_OUT),
            "insert" => Style::new().fg(t.pass).add_modifier(Modifier::UNDERLINED),
            _ => Style::new().fg(t.dim),
        };
        spans.push(Span::styled(text, style));
    }
    if cut {
        spans.push(Span::styled("…", Style::new().fg(t.dim)));
    }
    Line::from(spans)
}

/// At most `width` columns of `s`.
fn clip(s: &str, width: usize) -> String {
    wrap(s, width).into_iter().next().unwrap_or_default()
}

/// `s` padded to `width` columns, measured as drawn (ｶﾞ is two columns: text::width).
fn pad(s: &str, width: usize) -> String {
    crate::text::width::pad(s, width)
}
