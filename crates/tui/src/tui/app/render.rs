//! Drawing: header, conversation, detail, footer, and the help / input overlays. Only what is
//! visible is laid out, so a thousand-turn run costs the same as a short one.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph};

use crate::text::width::width as text_width;
use crate::tui::app::overlay;
use crate::tui::app::{App, CATEGORIES, Conn, Modal};
use crate::tui::chat;
use crate::tui::theme::Theme;
use crate::tui::theme::badge;
use crate::tui::view::{AttemptView, Phase, RunState, SaveMark, TurnView};
use crate::tui::wrap::wrap;

pub fn draw(f: &mut Frame, app: &App) {
    let t = app.theme();
    let [head, body, foot] = Layout::vertical([
        Constraint::Length(2),
        Constraint::Min(3),
        Constraint::Length(1),
    ])
    .areas(f.area());
    header(f, head, app, t);
    let [conv, detail_area] =
        Layout::horizontal([Constraint::Percentage(58), Constraint::Percentage(42)]).areas(body);
    if let Some(v) = &app.insights {
        crate::tui::insights_view::render(f, conv, v, t);
    } else if let Some(v) = &app.interview {
        crate::tui::interview_view::render(f, conv, v, t);
    } else if app.chat.is_some() {
        chat::render(f, conv, app.chat.as_ref(), t);
    } else {
        conversation(f, conv, app, t);
    }
    app.rooms.draw(app.pane, f, detail_area, &app.ctx(), t);
    if let Some(v) = &app.compare {
        f.render_widget(ratatui::widgets::Clear, body);
        crate::tui::compare_view::render(f, body, v, t);
    }
    overlay::errors(f, body, app, t);
    overlay::footer(f, foot, app, t);
    let overlays = crate::tui::queue_draw::Overlays {
        runs: app.runs.as_ref(),
        confirm: app.confirm.map(|a| {
            let t = app.run.turns.get(app.selected);
            let who = t.map_or(String::new(), |t| sister(app, &t.speaker));
            (a, t.map_or(0, |t| t.turn), who)
        }),
        search: &app.search,
    };
    crate::tui::queue_draw::render(f, body, &overlays, t);
    if let Some(m) = &app.modal {
        modal(f, app, m, t);
    } else if app.help {
        overlay::help(f, app, t);
    }
    // Last: every cluster in cells the terminal draws exactly as the buffer holds them.
    crate::tui::cells::settle(f.buffer_mut());
}

fn header(f: &mut Frame, area: Rect, app: &App, t: &Theme) {
    let h = &app.header;
    let (conn, color) = match &h.conn {
        Conn::Probing => ("probing…".to_string(), t.dim),
        Conn::Loading { since } => (
            format!("loading {}… {} s", h.model, since.elapsed().as_secs()),
            t.warn,
        ),
        Conn::Up { api } => (format!("connected ({api})"), t.pass),
        Conn::Down(_) => ("no endpoint answering · R probe again".to_string(), t.retry),
        Conn::Answered(_) => (
            "server up, model missing · R probe again".to_string(),
            t.warn,
        ),
        Conn::Demo if app.replay => ("replay (no model)".to_string(), t.accent),
        Conn::Demo => ("not probed · R probe".to_string(), t.dim),
    };
    let dim = Style::new().fg(t.dim);
    let l1 = Line::from(vec![
        Span::styled(
            "kakeai 掛け合い ",
            Style::new().fg(t.accent).add_modifier(Modifier::BOLD),
        ),
        Span::styled(
            format!("{} · {} · ", h.endpoint, h.model),
            Style::new().fg(t.text),
        ),
        Span::styled(conn, Style::new().fg(color)),
    ]);
    let run = match (&app.run.run_id, &app.run.state) {
        (Some(id), s) if app.replay => {
            format!("run {id} 「{}」 {} · replay", app.run.topic, state_word(s))
        }
        (Some(id), s) => format!("run {id} 「{}」 {}", app.run.topic, state_word(s)),
        (None, _) => "no run yet".to_string(),
    };
    let who = app
        .reviewer
        .as_deref()
        .map(|r| format!("reviewer {r} · "))
        .unwrap_or_default();
    let who = if app.blind {
        format!("{who}blind · ")
    } else {
        who
    };
    // The leak notice is a safety notice: it comes first after who is reviewing, so a
    // narrow header cuts the db path, never it.
    let leak = app
        .leak_note
        .as_deref()
        .map(|n| Span::styled(format!("leak: {n} · "), Style::new().fg(t.warn)));
    let l2 = Line::from(
        [Span::styled(who, dim)]
            .into_iter()
            .chain(leak)
            .chain([Span::styled(
                format!(
                    "{run} · analyzer {} · rules {} · db {}",
                    h.analyzer,
                    h.ruleset,
                    // A PostgreSQL URL is shown with its password as ***.
                    crate::store::target::mask(&h.db)
                ),
                dim,
            )])
            .collect::<Vec<_>>(),
    );
    let lines = crate::tui::fit::lines(vec![l1, l2], area.width);
    f.render_widget(Paragraph::new(lines), area);
}

fn state_word(s: &RunState) -> String {
    match s {
        RunState::Idle => "idle".into(),
        RunState::Running => "running".into(),
        RunState::Paused => "paused".into(),
        RunState::Done(e, Some(why)) if crate::llm::budget::is_overflow(why) => {
            format!("{}: context overflow", e.as_str())
        }
        RunState::Done(e, _) => e.as_str().into(),
    }
}

/// The rows one turn takes in the conversation pane.
fn turn_rows(app: &App, turn: &TurnView, width: usize, selected: bool) -> Vec<Line<'static>> {
    let t = app.theme();
    let hidden = crate::tui::blind::hides(&app.blind_view(), turn);
    let turn = &*crate::tui::blind::shown_turn(&app.blind_view(), turn);
    let name = if turn.speaker == "ayu" {
        "あゆ"
    } else {
        "やな"
    };
    let shown = turn.shown();
    let mut head = turn_head(turn, name, hidden, t);
    // The badges after the counts stay visible in a narrow pane: the counts shorten first.
    // Outside blind mode, a turn several reviewers thumbed shows each one's 👍/👎.
    let by = if app.blind {
        Vec::new()
    } else {
        crate::tui::marks::thumbs_by(&app.review_log, turn.turn as u32)
    };
    let tail = turn_tail(turn, &by, t);
    let tries = turn.attempts.len();
    let used = |spans: &[Span]| spans.iter().map(|s| text_width(&s.content)).sum::<usize>();
    let room = width.saturating_sub(used(&head) + used(&tail));
    // Blind: no counts either (the tone score is the Director's).
    let (counts_text, tries_text) = fit_counts(shown.filter(|_| !hidden), tries, room);
    if !counts_text.is_empty() {
        head.push(Span::styled(counts_text, Style::new().fg(t.dim)));
    }
    if !tries_text.is_empty() {
        head.push(Span::styled(tries_text, Style::new().fg(t.warn)));
    }
    head.extend(tail);
    let bg = if selected && t.markers {
        // No colour to show the selection with: reverse video.
        Style::new()
            .bg(t.selected_bg)
            .add_modifier(Modifier::REVERSED)
    } else if selected {
        Style::new().bg(t.selected_bg)
    } else {
        Style::new()
    };
    let mut rows = vec![Line::from(head).style(bg)];
    let cursor = shown.is_some_and(|a| a.phase == Phase::Generating);
    // A withheld line: what was committed as said is her fallback line, not the rejected text.
    let committed_shown = turn.committed.and_then(|i| turn.attempts.get(i)).is_some();
    let text = match &turn.said {
        Some(said) if committed_shown => said.as_str(),
        _ => shown.map(|a| a.text.as_str()).unwrap_or(""),
    };
    // While streaming, the last cluster may still grow: it is drawn once complete.
    let text = if cursor {
        crate::text::width::without_open_cluster(text)
    } else {
        text
    };
    // A streaming reply is wrapped from its last row on only (stream_wrap.rs).
    let wrapped = match shown.filter(|a| a.phase == Phase::Generating) {
        Some(a) => app
            .stream
            .wrap((turn.turn, a.attempt), text, width.saturating_sub(4)),
        None => wrap(text, width.saturating_sub(4)),
    };
    for r in wrapped {
        rows.push(
            Line::from(vec![
                Span::raw("    "),
                Span::styled(r, Style::new().fg(t.text)),
            ])
            .style(bg),
        );
    }
    if let Some(last) = rows.last_mut().filter(|_| cursor) {
        last.push_span(Span::styled("▌", Style::new().fg(t.accent)));
    }
    rows
}

/// A turn's first spans: number and speaker, its badge, and ✎/= for an override.
fn turn_head(
    turn: &TurnView,
    name: &str,
    hidden: bool,
    t: &crate::tui::theme::Theme,
) -> Vec<Span<'static>> {
    let shown = turn.shown();
    let mut head = vec![
        Span::styled(
            format!("{:>2} {name} ", turn.turn),
            Style::new()
                .fg(t.speaker(&turn.speaker))
                .add_modifier(Modifier::BOLD),
        ),
        match (turn.status(), shown.map(|a| &a.phase)) {
            (None, Some(Phase::Cancelled)) => Span::styled("[stopped]", Style::new().fg(t.dim)),
            // A prompt the context cannot hold is a state of the run, not a failure.
            (None, Some(Phase::Failed(e))) if e.starts_with("context overflow") => {
                Span::styled("[context overflow]", Style::new().fg(t.warn))
            }
            (None, Some(Phase::Failed(_))) => Span::styled("[failed]", Style::new().fg(t.retry)),
            (None, Some(Phase::Reviewed)) if hidden => {
                Span::styled(crate::tui::blind::HIDDEN_BADGE, Style::new().fg(t.dim))
            }
            (s, _) => badge(s, t),
        },
    ];
    if turn.flags.withheld {
        head.push(Span::styled("[leak: withheld] ", Style::new().fg(t.retry)));
    }
    // ✎ for an override that changed the verdict; = for one that confirmed it (blind mode).
    if let Some(to) = turn.review.override_to {
        let director = turn
            .attempts
            .get(turn.committed.unwrap_or(usize::MAX))
            .or(shown)
            .and_then(|a| a.verdict.as_ref().map(|v| v.status));
        let sign = if director == Some(to) { "=" } else { "✎" };
        head.push(Span::styled(sign, Style::new().fg(t.accent)));
    }
    head
}

/// A turn's last spans: 👍/👎, 📝 and its save mark (✓ only once every write committed).
/// `by`: each reviewer's 👍/👎 in force; with two or more, every one is shown with her name.
fn turn_tail(
    turn: &TurnView,
    by: &[(String, bool)],
    t: &crate::tui::theme::Theme,
) -> Vec<Span<'static>> {
    let mut tail: Vec<Span<'static>> = Vec::new();
    if by.len() >= 2 {
        for (who, up) in by {
            let who = crate::text::sanitize::for_terminal(who).replace(['\n', '\t'], " ");
            tail.push(Span::raw(format!(
                " {}{who}",
                if *up { "👍" } else { "👎" }
            )));
        }
    } else {
        match turn.review.thumb {
            Some(true) => tail.push(Span::raw(" 👍")),
            Some(false) => tail.push(Span::raw(" 👎")),
            None => {}
        }
    }
    if turn.review.notes > 0 {
        tail.push(Span::raw(" 📝"));
    }
    // ✓ only once every queued write of this turn committed (see `view::Review`).
    let (mark, c) = match turn.review.mark() {
        SaveMark::Nothing => ("", t.dim),
        SaveMark::Pending => (" …", t.dim),
        SaveMark::Saved => (" ✓", t.pass),
        SaveMark::Failed(_) => (" ✗ NOT saved", t.retry),
    };
    if !mark.is_empty() {
        tail.push(Span::styled(mark, Style::new().fg(c)));
    }
    tail
}

/// The counts and the attempt count in the columns left: in full, shorter, or left out.
fn fit_counts(shown: Option<&AttemptView>, tries: usize, room: usize) -> (String, String) {
    let tries_long = if tries > 1 {
        format!(" 試行{tries}")
    } else {
        String::new()
    };
    let tries_short = if tries > 1 {
        format!(" ×{tries}")
    } else {
        String::new()
    };
    let full = shown.map(counts).unwrap_or_default();
    let short = shown.map(counts_short).unwrap_or_default();
    for (c, r) in [
        (&full, &tries_long),
        (&short, &tries_long),
        (&short, &tries_short),
        (&String::new(), &tries_short),
    ] {
        if text_width(c) + text_width(r) <= room {
            return (c.clone(), r.clone());
        }
    }
    (String::new(), String::new())
}

fn counts_short(a: &AttemptView) -> String {
    match &a.verdict {
        Some(v) => format!(" t{} {}行{}文", v.tone.score, v.lines, v.sentences),
        None => format!(" …{}行{}文", a.live_counts.0, a.live_counts.1),
    }
}

fn counts(a: &AttemptView) -> String {
    match &a.verdict {
        Some(v) => format!(
            " tone {}/3 · {}行 · {}文 · 話題{}",
            v.tone.score, v.lines, v.sentences, v.topics
        ),
        None => format!(" … {}行 · {}文", a.live_counts.0, a.live_counts.1),
    }
}

fn conversation(f: &mut Frame, area: Rect, app: &App, t: &Theme) {
    let title = if app.follow {
        " conversation (following) "
    } else {
        " conversation "
    };
    let branch = (!app.branches.is_empty()).then(|| format!("· {} · B ", app.branches.label()));
    let title = format!("{title}{}", branch.unwrap_or_default());
    let block = Block::bordered()
        .title(title)
        .border_style(Style::new().fg(t.border));
    let inner = block.inner(area);
    f.render_widget(block, area);
    let turns = &app.run.turns;
    if turns.is_empty() {
        let msg = match &app.header.conn {
            Conn::Down(why) | Conn::Answered(why) => not_connected(app, why, inner.width, t),
            _ => vec![Line::styled(
                format!(
                    "No run yet. {}: new run · {}: demo · {}: help",
                    app.key_name(crate::tui::keymap::Action::NewRun),
                    app.key_name(crate::tui::keymap::Action::Demo),
                    app.key_name(crate::tui::keymap::Action::Help)
                ),
                Style::new().fg(t.dim),
            )],
        };
        // Wrapped, so nothing is cut at 80 columns.
        f.render_widget(
            Paragraph::new(msg).wrap(ratatui::widgets::Wrap { trim: false }),
            inner,
        );
        return;
    }
    // Lay out from the selected turn: the turns before it until the pane is half full, then
    // it and what follows — only visible turns are wrapped.
    let width = inner.width as usize;
    let height = inner.height as usize;
    let sel = app.selected.min(turns.len() - 1);
    let mut start = sel;
    let mut above = 0;
    let budget = if app.follow { height } else { height / 2 };
    while start > 0 {
        let h = turn_rows(app, &turns[start - 1], width, false).len();
        if above + h + turn_rows(app, &turns[sel], width, true).len() > budget {
            break;
        }
        above += h;
        start -= 1;
    }
    let mut lines: Vec<Line> = Vec::new();
    for (i, turn) in turns.iter().enumerate().skip(start) {
        lines.extend(turn_rows(app, turn, width, i == sel));
        if lines.len() >= height + 40 {
            break;
        }
    }
    // When following, keep the newest rows in view.
    let skip = if app.follow {
        lines.len().saturating_sub(height)
    } else {
        0
    };
    let visible: Vec<Line> = lines.into_iter().skip(skip).take(height).collect();
    f.render_widget(Paragraph::new(visible), inner);
}

/// The first screen when the probe failed: its reason and advice once — here, or only a
/// pointer when the error box below already holds them — then the keys.
fn not_connected(app: &App, why: &str, width: u16, t: &Theme) -> Vec<Line<'static>> {
    use crate::tui::keymap::Action;
    let mut lines: Vec<Line<'static>> = if app.conn_error_shown() {
        vec![Line::styled(
            "No model endpoint answers: the error box below says why.",
            Style::new().fg(t.retry),
        )]
    } else {
        wrap(why, width as usize)
            .into_iter()
            .map(|r| Line::styled(r, Style::new().fg(t.retry)))
            .collect()
    };
    lines.push(Line::raw(""));
    lines.push(Line::styled(
        format!(
            "{}: probe again · {}: the bundled demo run · {}: help",
            app.key_name(Action::Probe),
            app.key_name(Action::Demo),
            app.key_name(Action::Help)
        ),
        Style::new().fg(t.accent),
    ));
    lines
}

fn modal(f: &mut Frame, app: &App, m: &Modal, t: &Theme) {
    let height = if matches!(m, Modal::Secret { .. }) {
        20
    } else {
        9
    };
    let area = overlay::centered(f.area(), 76, height);
    let (label, ta) = match m {
        Modal::Topic(ta) => (String::new(), ta),
        Modal::Inject(ta) => (String::new(), ta),
        Modal::Override { status, reason, .. } => {
            (format!("verdict → {}", status.as_str()), reason)
        }
        Modal::Feedback { category, text, .. } => {
            (format!("category → {}", CATEGORIES[*category]), text)
        }
        Modal::Secret { key, text } => (key.clone(), text),
        Modal::Draft { kind, text, .. } => (
            format!("reply type {kind} · edit, then Enter accepts"),
            text,
        ),
        Modal::Promote { kind, text, .. } => (
            format!(
                "reply type → {}",
                crate::tui::app::modal::PROMOTE_TYPES[*kind % 3]
            ),
            text,
        ),
    };
    let keys = crate::tui::app::commands::data()
        .dialogs
        .get(crate::tui::app::commands::dialog_name(m))
        .cloned()
        .unwrap_or_default();
    let label = Line::styled(label, Style::new().fg(t.accent));
    overlay::dialog(f, area, dialog_title(app, m), label, ta, &keys, t);
}

/// A sister's name as the rules give it ("あゆ" for `ayu`).
fn sister(app: &App, id: &str) -> String {
    app.rules
        .data
        .characters
        .get(id)
        .map_or(id.to_string(), |c| c.display_name.clone())
}

/// A dialog's frame title: what it is and what it acts on, turn and sister by name.
fn dialog_title(app: &App, m: &Modal) -> String {
    let sister = |id: &str| sister(app, id);
    let what = match m {
        Modal::Topic(_) => "new run".to_string(),
        Modal::Inject(_) => {
            let next = app.run.turns.last().map_or(1, |t| t.turn + 1);
            format!("owner instruction · for turn {next}")
        }
        Modal::Override {
            target: crate::tui::command::Target::Turn(n, who),
            ..
        } => format!("override · turn {n} · {}", sister(who)),
        Modal::Override { target, .. } => format!("override · {target}"),
        Modal::Feedback { turn, who, .. } => format!("feedback · turn {turn} · {}", sister(who)),
        Modal::Secret { .. } => "secret".to_string(),
        Modal::Draft { .. } => "draft a pattern".to_string(),
        Modal::Promote { .. } => "promote to a pattern".to_string(),
    };
    format!(" {what} ")
}
