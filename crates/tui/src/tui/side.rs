//! The rules and stats panes that share the right-hand side with the detail pane.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Sparkline};

use super::ctx::Ctx;
use super::focus::Pane;
use super::theme::Theme;
use super::tuning;
use crate::director::Status;

/// The pane's frame with its tab strip (every pane, from `Pane::ALL`) as the title. When the
/// strip does not fit, the other tabs shorten to three letters, and below that the title says
/// which tab of how many is open — never a tab silently cut off.
pub fn framed(f: &mut Frame, area: Rect, active: Pane, t: &Theme) -> Rect {
    let room = usize::from(area.width.saturating_sub(4));
    let strip = |short: bool| -> Vec<(String, bool)> {
        Pane::ALL
            .iter()
            .map(|p| {
                let name = if short && *p != active {
                    p.name().chars().take(3).collect()
                } else {
                    p.name().to_string()
                };
                (name, *p == active)
            })
            .collect()
    };
    let width = |tabs: &[(String, bool)]| {
        tabs.iter()
            .map(|(n, _)| n.chars().count() + 1)
            .sum::<usize>()
            + " (v)".len()
    };
    let mut title = vec![Span::raw(" ")];
    let on = Style::new().fg(t.accent).add_modifier(Modifier::BOLD);
    let off = Style::new().fg(t.dim);
    match [strip(false), strip(true)]
        .into_iter()
        .find(|s| width(s) <= room)
    {
        Some(tabs) => {
            for (i, (name, is_on)) in tabs.iter().enumerate() {
                title.push(Span::styled(name.clone(), if *is_on { on } else { off }));
                let sep = if i + 1 < tabs.len() { "│" } else { " (v) " };
                title.push(Span::styled(sep, off));
            }
        }
        None => {
            title.push(Span::styled(active.name(), on));
            title.push(Span::styled(
                format!(" {}/{} (v) ", active.index() + 1, Pane::ALL.len()),
                off,
            ));
        }
    }
    let block = Block::bordered()
        .title(Line::from(title))
        .border_style(Style::new().fg(t.border));
    let inner = block.inner(area);
    f.render_widget(block, area);
    inner
}

/// The rules pane: the editable values (`field` selected), what the last edit flipped
/// (`rejudge`) and the agreement table.
pub fn rules(
    f: &mut Frame,
    area: Rect,
    cx: &Ctx<'_>,
    field: usize,
    rejudge: Option<&tuning::Rejudge>,
    tune: &super::tune_room::TuneState,
    t: &Theme,
) {
    let dim = Style::new().fg(t.dim);
    let data = &cx.rules.data;
    let mut lines = vec![Line::styled(
        format!(
            "ruleset {} · [ ] select · < > change · w save",
            cx.rules.version
        ),
        dim,
    )];
    for (i, fd) in tuning::fields().iter().enumerate() {
        let sel = i == field;
        let st = if sel {
            Style::new()
                .fg(t.text)
                .bg(t.selected_bg)
                .add_modifier(Modifier::BOLD)
        } else {
            Style::new().fg(t.text)
        };
        // The value being edited always shows; the label shortens first (with …).
        let value = fd.show(data);
        let w = area.width as usize;
        let vw = crate::text::width::width(&value).max(10).min(w);
        let col = w.saturating_sub(vw).min(28);
        let label = if fd.key.len() <= col {
            fd.key.to_string()
        } else {
            fit(fd.key, col.saturating_sub(1))
        };
        lines.push(Line::from(vec![
            Span::styled(crate::text::width::pad(&label, col), st),
            Span::styled(format!("{value:>vw$}"), st.fg(t.accent)),
        ]));
    }
    for id in ["yana", "ayu"] {
        if let Some(c) = data.characters.get(id) {
            let w = area.width as usize;
            let text = format!("{} endings: {}", c.display_name, c.tone.endings.join(" "));
            lines.push(Line::styled(fit(&text, w), dim));
        }
    }
    if let Some(rj) = rejudge {
        lines.extend(flips(cx, rj, t));
    }
    // Blind: agreement over her own judged turns and her own marks only (no other reviewer's
    // rows, nothing of a turn she has not judged).
    let (turns, log) = super::blind::agreement_inputs(&cx.blind, &cx.run.turns);
    lines.extend(super::kappa::lines(&turns, &log, t, area.width));
    // Blind: no tune figures at all (κ, flips and support come from the whole team's labels).
    lines.extend(super::tune_room::lines(tune, cx.blind.on, t, area.width));
    let scroll = cx.scroll_for(lines.len(), area.height);
    let lines = super::fit::lines(lines, area.width);
    f.render_widget(Paragraph::new(lines).scroll((scroll, 0)), area);
}

/// What re-judging with the edited rules did: flipped turns (hidden ones only counted in blind
/// mode) and the agreement with the reviewers' overrides.
fn flips(cx: &Ctx<'_>, rj: &tuning::Rejudge, t: &Theme) -> Vec<Line<'static>> {
    let dim = Style::new().fg(t.dim);
    let mut lines: Vec<Line> = Vec::new();
    lines.push(Line::raw(""));
    lines.push(Line::styled(
        format!(
            "re-judged {} turns: {} flipped",
            rj.judged,
            rj.flipped.len()
        ),
        Style::new().fg(t.accent),
    ));
    // Blind: a hidden turn's flip would tell its verdict.
    let hidden = |turn: &usize| {
        cx.run
            .turns
            .iter()
            .any(|x| x.turn == *turn && super::blind::hides(&cx.blind, x))
    };
    let n_hidden = rj
        .flipped
        .iter()
        .filter(|(turn, _, _)| hidden(turn))
        .count();
    if n_hidden > 0 {
        let why = format!("  {n_hidden} flipped turns hidden (blind) until you judge them");
        lines.push(Line::styled(why, dim));
    }
    for (turn, a, b) in rj.flipped.iter().filter(|(t, _, _)| !hidden(t)).take(6) {
        lines.push(Line::from(vec![
            Span::styled(format!("  turn {turn:>2} "), dim),
            Span::styled(a.as_str(), Style::new().fg(t.status(*a))),
            Span::styled(" → ", dim),
            Span::styled(b.as_str(), Style::new().fg(t.status(*b))),
        ]));
    }
    let n = rj.overrides();
    if n > 0 {
        lines.push(Line::styled(
            format!(
                "agreement with {n} overrides: {} ({:.0}%)",
                rj.agreed(),
                100.0 * rj.agreed() as f64 / n as f64
            ),
            Style::new().fg(t.text),
        ));
        lines.push(Line::styled("reviewer ↓ / rules →  PASS  WARN RETRY", dim));
        for (i, name) in ["PASS", "WARN", "RETRY"].iter().enumerate() {
            let r = rj.confusion[i];
            lines.push(Line::styled(
                format!("{name:>20} {:>5} {:>5} {:>5}", r[0], r[1], r[2]),
                Style::new().fg(t.text),
            ));
        }
    }
    lines
}

pub fn stats(f: &mut Frame, area: Rect, cx: &Ctx<'_>, t: &Theme) {
    let turns = &cx.run.turns;
    let order = [Status::Pass, Status::Warn, Status::Retry, Status::Unscored];
    let mut lines = vec![Line::styled(
        "verdicts      PASS  WARN RETRY UNSCORED",
        Style::new().fg(t.dim),
    )];
    for (id, name) in [("yana", "やな"), ("ayu", "あゆ")] {
        let mut row = vec![Span::styled(
            format!("{name:<10}"),
            Style::new().fg(t.speaker(id)),
        )];
        for s in order {
            let n = turns
                .iter()
                .filter(|x| x.speaker == id && x.committed.is_some() && x.status() == Some(s))
                .filter(|x| !super::blind::hides(&cx.blind, x))
                .count();
            row.push(Span::styled(
                format!("{n:>6}"),
                Style::new().fg(t.status(s)),
            ));
        }
        lines.push(Line::from(row));
    }
    let retried = turns.iter().filter(|x| x.attempts.len() > 1).count();
    let attempts: usize = turns.iter().map(|x| x.attempts.len()).sum();
    lines.push(Line::styled(
        format!(
            "{} turns · {attempts} attempts · {retried} turns regenerated",
            turns.len()
        ),
        Style::new().fg(t.dim),
    ));
    lines.push(Line::raw(""));
    let mut strip = vec![Span::styled("by turn  ", Style::new().fg(t.dim))];
    for x in turns
        .iter()
        .rev()
        .take(area.width.saturating_sub(10) as usize)
        .rev()
    {
        if super::blind::hides(&cx.blind, x) {
            strip.push(Span::styled("?", Style::new().fg(t.dim)));
            continue;
        }
        let c = x.status().map(|s| t.status(s)).unwrap_or(t.dim);
        strip.push(Span::styled("█", Style::new().fg(c)));
    }
    lines.push(Line::from(strip));
    lines.push(Line::styled(
        "tone score by turn (0–3)",
        Style::new().fg(t.dim),
    ));
    let [top, spark] = Layout::vertical([
        Constraint::Length(lines.len() as u16),
        Constraint::Length(4),
    ])
    .areas(area);
    f.render_widget(Paragraph::new(super::fit::lines(lines, top.width)), top);
    let tones: Vec<u64> = turns
        .iter()
        .filter(|x| !super::blind::hides(&cx.blind, x))
        .filter_map(|x| {
            x.shown()?
                .verdict
                .as_ref()
                .map(|v| u64::from(v.tone.score) + 1)
        })
        .collect();
    let w = spark.width as usize;
    let tail = &tones[tones.len().saturating_sub(w)..];
    f.render_widget(
        Sparkline::default()
            .data(tail)
            .max(4)
            .style(Style::new().fg(t.accent)),
        spark,
    );
}

/// `s` in at most `cols` columns, ending in "…" when cut.
fn fit(s: &str, cols: usize) -> String {
    if crate::text::width::width(s) <= cols {
        return s.to_string();
    }
    format!(
        "{}…",
        crate::text::width::truncate(s, cols.saturating_sub(1))
    )
}
