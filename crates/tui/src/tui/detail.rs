//! The detail pane: the selected turn's attempts timeline, highlighted findings, judge scores,
//! guidance, and the diff and verdict delta against the previous attempt.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::ctx::Ctx;
use super::request_view::RequestPane;
use super::side;
use super::styled_wrap::{Mark, wrap_styled};
use super::theme::Theme;
use super::theme::badge;
use super::view::{AttemptView, Phase, TurnView};
use super::wrap::wrap;
use crate::director::Status;
use crate::vault::template::Templates;

/// The detail pane: the selected turn's attempts, text, marks and findings — or, with the
/// request view on (`request`), what the model saw, marked with the vault's `templates`.
pub fn detail(
    f: &mut Frame,
    area: Rect,
    cx: &Ctx<'_>,
    request: &RequestPane,
    templates: Option<&Templates>,
    t: &Theme,
) {
    let inner = side::framed(f, area, super::focus::Pane::Detail, t);
    let Some(turn) = cx.turn() else {
        return;
    };
    let hidden = super::blind::hides(&cx.blind, turn);
    let turn = &*super::blind::shown_turn(&cx.blind, turn);
    let idx = cx
        .attempt
        .or(turn.committed)
        .unwrap_or(turn.attempts.len().saturating_sub(1));
    let dim = Style::new().fg(t.dim);
    let mut lines = timeline(turn, idx, hidden, inner.width, t);
    let width = inner.width as usize;
    if hidden {
        let why = "Director's verdict hidden (blind): give yours first (👍/👎 or override)";
        lines.extend(wrap(why, width).into_iter().map(|r| Line::styled(r, dim)));
    }
    if request.shown {
        lines.push(Line::raw(""));
        let key = super::request_view::selected_key(cx.run, cx.selected, cx.attempt);
        lines.extend(super::request_view::lines(
            request, key, templates, hidden, width, t,
        ));
        let scroll = cx.scroll_for(lines.len(), inner.height);
        let lines = super::fit::lines(lines, inner.width);
        f.render_widget(Paragraph::new(lines).scroll((scroll, 0)), inner);
        return;
    }
    let Some(a) = turn.attempts.get(idx) else {
        f.render_widget(Paragraph::new(super::fit::lines(lines, inner.width)), inner);
        return;
    };
    lines.push(Line::raw(""));
    // While streaming, the last cluster may still grow: it is drawn once complete.
    let text = if a.phase == Phase::Generating {
        crate::text::width::without_open_cluster(&a.text)
    } else {
        &a.text
    };
    lines.extend(highlighted(a, text, width, t));
    // The marks in force, readable (blind: only this reviewer's own).
    let mut marks = super::marks::in_force(cx.blind.log, turn.turn as u32);
    if cx.blind.on {
        marks.retain(|e| e.3.as_deref() == cx.blind.me);
    }
    if !marks.is_empty() {
        lines.push(Line::raw(""));
        lines.extend(super::marks::lines(&marks, width, t));
    }
    let prev = idx.checked_sub(1).and_then(|i| turn.attempts.get(i));
    lines.extend(against_previous(prev, a, text, width, t));
    lines.extend(findings(a, width, t));
    if turn.committed == Some(idx) {
        lines.extend(carried(cx.rules, turn, a, width, dim));
    }
    let scroll = cx.scroll_for(lines.len(), inner.height);
    // Every row that does not wrap (a speed line, a finding's badge) ends in `…` when cut.
    let lines = super::fit::lines(lines, inner.width);
    f.render_widget(Paragraph::new(lines).scroll((scroll, 0)), inner);
}

/// The attempts timeline (the one on screen reversed, ★ the committed) and the hook line,
/// fitted to `width`: attempts and the hook's parts flow onto further rows rather than being
/// cut, and only a part wider than a row ends in `…`.
fn timeline(
    turn: &TurnView,
    idx: usize,
    hidden: bool,
    width: u16,
    t: &Theme,
) -> Vec<Line<'static>> {
    let dim = Style::new().fg(t.dim);
    let mut items: Vec<Vec<Span<'static>>> = Vec::new();
    for (i, a) in turn.attempts.iter().enumerate() {
        let (word, c) = attempt_word(a, hidden, t);
        let mut st = Style::new().fg(c);
        if i == idx {
            st = st.add_modifier(Modifier::REVERSED);
        }
        let star = if turn.committed == Some(i) { "★" } else { "" };
        items.push(vec![Span::styled(
            format!("#{}{star} {word}", a.attempt),
            st,
        )]);
    }
    match items.first_mut() {
        Some(first) => first.insert(0, Span::styled("attempts ", dim)),
        None => items.push(vec![Span::styled("attempts", dim)]),
    }
    let mut lines = super::fit::pack(items, Span::raw(" → "), width);
    if let Some(step) = turn.step {
        let mut parts = vec![
            format!("hook {}", turn.hook.as_deref().unwrap_or("-")),
            format!("depth {}/3 {}", turn.depth, step.as_str()),
        ];
        if turn.flags.exhausted {
            parts.push("exhausted".into());
        }
        if turn.flags.futile {
            parts.push("futile".into());
        }
        let items = parts.into_iter().map(|p| vec![Span::styled(p, dim)]);
        lines.extend(super::fit::pack(
            items.collect(),
            Span::styled(" · ", dim),
            width,
        ));
        if turn.flags.withheld {
            let why = "withheld: the leak review rejected it, her fallback line was committed";
            lines.extend(
                wrap(why, width.into())
                    .into_iter()
                    .map(|r| Line::styled(r, dim)),
            );
        }
    }
    lines
}

/// An attempt's state word in the timeline and its colour (blind: no verdict before hers).
fn attempt_word(a: &AttemptView, hidden: bool, t: &Theme) -> (String, ratatui::style::Color) {
    match &a.phase {
        Phase::Generating => match a.live {
            Some(l) => (format!("generating {}", l.describe()), t.accent),
            None => ("generating".to_string(), t.accent),
        },
        Phase::Reviewing => ("reviewing".to_string(), t.accent),
        Phase::Reviewed if hidden => (super::blind::HIDDEN_WORD.to_string(), t.dim),
        Phase::Reviewed => {
            let s = a.verdict.as_ref().map(|v| v.status).unwrap_or(Status::Pass);
            (s.as_str().to_string(), t.status(s))
        }
        Phase::Failed(e) if crate::llm::budget::is_overflow(e) => {
            ("context overflow".to_string(), t.warn)
        }
        Phase::Failed(_) => ("failed".to_string(), t.retry),
        Phase::Cancelled => ("cancelled".to_string(), t.dim),
    }
}

/// The delta and diff against the previous attempt, a failure, a stream that fell back.
fn against_previous(
    prev: Option<&AttemptView>,
    a: &AttemptView,
    text: &str,
    width: usize,
    t: &Theme,
) -> Vec<Line<'static>> {
    let mut lines: Vec<Line> = Vec::new();
    if let Some((prev, pv, cv)) =
        prev.and_then(|p| Some((p, p.verdict.as_ref()?, a.verdict.as_ref()?)))
    {
        lines.push(Line::raw(""));
        let delta = format!("vs #{}: {}", prev.attempt, verdict_delta(pv, cv));
        for r in wrap(&delta, width) {
            lines.push(Line::styled(r, Style::new().fg(t.accent)));
        }
        lines.extend(diff(&prev.text, text, width, t));
    }
    if let Phase::Failed(e) = &a.phase {
        for r in wrap(e, width) {
            lines.push(Line::styled(r, Style::new().fg(t.retry)));
        }
    }
    if let Some(speed) = a.stats.speed_line() {
        lines.push(Line::styled(speed, Style::new().fg(t.dim)));
    }
    if let Some(why) = &a.stats.fallback {
        let note = format!("⚠ streaming gave up; one non-stream call answered: {why}");
        for r in wrap(&note, width) {
            lines.push(Line::styled(r, Style::new().fg(t.warn)));
        }
    }
    if let Some(fit) = a.stats.fit.as_ref().filter(|f| !f.is_empty()) {
        // Vault sections the model never saw are a warning; the rest is information.
        let st = if fit.lost_vault() { t.warn } else { t.dim };
        for r in wrap(&format!("⚠ {}", fit.summary()), width) {
            lines.push(Line::styled(r, Style::new().fg(st)));
        }
    }
    lines
}

/// The attempt's findings with their suggestions, the judge's scores and the guidance sent.
fn findings(a: &AttemptView, width: usize, t: &Theme) -> Vec<Line<'static>> {
    let mut lines: Vec<Line> = Vec::new();
    let dim = Style::new().fg(t.dim);
    if let Some(v) = &a.verdict {
        lines.push(Line::raw(""));
        for fd in v.reported_findings() {
            lines.push(Line::from(vec![
                badge(Some(fd.status), t),
                Span::styled(format!(" {} ", fd.rule.as_str()), Style::new().fg(t.accent)),
            ]));
            for r in wrap(&fd.message, width.saturating_sub(2)) {
                lines.push(Line::styled(format!("  {r}"), Style::new().fg(t.text)));
            }
            // A leak hit as the writer reads it (what the CLI's `vault review` shows): its kind,
            // the secret's label and the words it matched — the message above is the neutral
            // one the model gets.
            if let Some(what) = leak_hit(fd, &a.text) {
                for r in wrap(&what, width.saturating_sub(2)) {
                    lines.push(Line::styled(format!("  {r}"), Style::new().fg(t.warn)));
                }
            }
            if !fd.suggestion.trim().is_empty() {
                for r in wrap(&format!("→ {}", fd.suggestion), width.saturating_sub(2)) {
                    lines.push(Line::styled(format!("  {r}"), dim));
                }
            }
        }
    }
    if let Some(s) = a.judge.as_ref().and_then(|j| j.scores.as_ref()) {
        let scores = format!(
            "judge {:.1}: frame {} roleplay {} connection {} density {} natural {}",
            s.mean, s.frame, s.roleplay, s.connection, s.density, s.naturalness
        );
        for r in wrap(&scores, width) {
            lines.push(Line::styled(r, dim));
        }
    }
    if !a.guidance.is_empty() {
        lines.push(Line::styled("guidance sent:", dim));
        for g in &a.guidance {
            for r in wrap(&format!("· {g}"), width) {
                lines.push(Line::styled(r, dim));
            }
        }
    }
    lines
}

/// `forbidden_keyword 非公開の設定#3fa2c1 · 「こうぼう」`: a leak finding's kind and label (its
/// evidence) and the text its span covers; None for other rules and the coverage finding.
fn leak_hit(fd: &crate::director::Finding, text: &str) -> Option<String> {
    if fd.rule != crate::director::RuleId::Leak || crate::vault::review::is_coverage(fd) {
        return None;
    }
    let evidence = fd.evidence.as_deref().unwrap_or("leak");
    let span = fd.span.map(|[s, e]| {
        let words: String = text
            .chars()
            .skip(s)
            .take(e.saturating_sub(s).min(40))
            .collect();
        format!(" · 「{words}」")
    });
    Some(format!("{evidence}{}", span.unwrap_or_default()))
}

/// What the committed line carries forward, by who it is for (seed 001 §1, §8): critiques of
/// the line to its speaker's next turn, what concerns the conversation to the next speaker.
fn carried(
    rules: &crate::director::RuleSet,
    turn: &TurnView,
    a: &AttemptView,
    width: usize,
    dim: Style,
) -> Vec<Line<'static>> {
    let Some(v) = &a.verdict else {
        return Vec::new();
    };
    let name = |id: &str| {
        rules
            .character(id)
            .map(|c| c.display_name.clone())
            .unwrap_or_else(|| id.to_string())
    };
    let partner = rules
        .character(&turn.speaker)
        .map(|c| name(&c.partner))
        .unwrap_or_else(|| "next speaker".into());
    let c = crate::duo::policy::intervention(v, turn.turn, &name(&turn.speaker));
    let mut out = Vec::new();
    for (to, list) in [(name(&turn.speaker), &c.own), (partner, &c.next)] {
        if list.is_empty() {
            continue;
        }
        out.push(Line::styled(format!("carried to {to}'s next turn:"), dim));
        for g in list {
            out.extend(
                wrap(&format!("· {g}"), width)
                    .into_iter()
                    .map(|r| Line::styled(r, dim)),
            );
        }
    }
    out
}

/// The attempt's text with every finding's span highlighted (and marked 【…】 when the theme
/// asks for text markers).
fn highlighted(a: &AttemptView, text: &str, width: usize, t: &Theme) -> Vec<Line<'static>> {
    let spans: Vec<[usize; 2]> = a
        .verdict
        .iter()
        .flat_map(|v| v.reported_findings().filter_map(|f| f.span))
        .collect();
    let hl = Style::new().fg(t.text).bg(t.highlight_bg);
    let normal = Style::new().fg(t.text);
    let mut runs: Vec<(String, Style, Mark)> = Vec::new();
    // Spans count chars; a cluster is highlighted whole when any of its chars is, so a span
    // edge inside 👩‍👩‍👧 or ｶﾞ never splits it into pieces drawn apart.
    let mut i = 0;
    for g in unicode_segmentation::UnicodeSegmentation::graphemes(text, true) {
        let n = g.chars().count();
        let on = spans.iter().any(|s| i < s[1] && i + n > s[0]);
        i += n;
        let (style, mark) = if on {
            (hl, Mark::Finding)
        } else {
            (normal, Mark::Plain)
        };
        match runs.last_mut() {
            Some((text, _, m)) if *m == mark => text.push_str(g),
            _ => runs.push((g.to_string(), style, mark)),
        }
    }
    wrap_styled(&runs, width, t.markers)
}

/// Cluster-level diff from the previous attempt (a char-level diff cut 👩‍👩‍👧 into pieces): removed text struck through, added text
/// underlined ([-…-] and {+…+} when the theme asks for text markers).
fn diff(prev: &str, cur: &str, width: usize, t: &Theme) -> Vec<Line<'static>> {
    let d = similar::TextDiff::from_graphemes(prev, cur);
    let mut runs: Vec<(String, Style, Mark)> = Vec::new();
    for change in d.iter_all_changes() {
        let (style, mark) = match change.tag() {
            similar::ChangeTag::Equal => (Style::new().fg(t.dim), Mark::Plain),
            similar::ChangeTag::Delete => (
                Style::new().fg(t.retry).add_modifier(Modifier::CROSSED_OUT),
                Mark::Removed,
            ),
            similar::ChangeTag::Insert => (
                Style::new().fg(t.pass).add_modifier(Modifier::UNDERLINED),
                Mark::Added,
            ),
        };
        match runs.last_mut() {
            Some((text, _, m)) if *m == mark => text.push_str(change.value()),
            _ => runs.push((change.value().to_string(), style, mark)),
        }
    }
    wrap_styled(&runs, width, t.markers)
}

/// "RETRY→PASS · tone 0→2 · tone RETRY→ok": what changed between two attempts' verdicts.
pub fn verdict_delta(prev: &crate::director::Verdict, cur: &crate::director::Verdict) -> String {
    let mut parts = vec![format!("{}→{}", prev.status.as_str(), cur.status.as_str())];
    if prev.tone.score != cur.tone.score {
        parts.push(format!("tone {}→{}", prev.tone.score, cur.tone.score));
    }
    let worst = |v: &crate::director::Verdict, r| {
        v.reported_findings()
            .filter(|f| f.rule == r)
            .map(|f| f.status)
            .max()
    };
    let mut rules: Vec<_> = prev
        .findings
        .iter()
        .chain(&cur.findings)
        .map(|f| f.rule)
        .collect();
    rules.sort();
    rules.dedup();
    for r in rules {
        let (a, b) = (worst(prev, r), worst(cur, r));
        if a != b {
            let w = |s: Option<Status>| s.map(|s| s.as_str()).unwrap_or("ok");
            parts.push(format!("{} {}→{}", r.as_str(), w(a), w(b)));
        }
    }
    parts.join(" · ")
}

#[cfg(test)]
mod fit_tests {
    use super::*;
    use crate::duo::fitting::FitReport;

    fn attempt(fit: Option<FitReport>) -> AttemptView {
        AttemptView {
            attempt: 1,
            text: "うん。".into(),
            phase: Phase::Reviewed,
            verdict: None,
            judge: None,
            guidance: Vec::new(),
            stats: crate::duo::records::GenStats {
                fit,
                ..Default::default()
            },
            live_counts: (0, 0),
            counted_len: 0,
            analysis: None,
            live: None,
        }
    }

    fn text(lines: &[Line]) -> String {
        lines
            .iter()
            .flat_map(|l| l.spans.iter().map(|s| s.content.to_string()))
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The detail pane says what the prompt left out to fit, and says nothing when nothing was.
    #[test]
    fn the_detail_pane_shows_what_fitting_left_out() {
        let (themes, _) = crate::tui::theme::load_all();
        let t = &themes[0];
        let lost = FitReport {
            history: 4,
            vault: [(3, 7), (2, 1)].into(),
            guidance: 1,
        };
        let a = attempt(Some(lost));
        let shown = text(&against_previous(None, &a, &a.text, 80, t));
        for want in [
            "4 earlier messages",
            "L3 ×7",
            "L2 ×1",
            "1 repeated guidance",
        ] {
            assert!(shown.contains(want), "{want}: {shown}");
        }
        for fit in [None, Some(FitReport::default())] {
            let a = attempt(fit);
            assert!(!text(&against_previous(None, &a, &a.text, 80, t)).contains("fit"));
        }
    }
}

#[cfg(test)]
mod leak_hit_tests {
    use super::leak_hit;
    use crate::director::{Finding, RuleId, Status};

    #[test]
    fn a_leak_hit_names_its_kind_label_and_words_and_nothing_else_does() {
        let text = "春からこうぼうで働くんだ";
        let f = Finding::new(RuleId::Leak, Status::Retry, "neutral".into(), "n".into())
            .with_span(Some(3..7))
            .with_evidence("forbidden_keyword 非公開の設定#3fa2c1".to_string());
        assert_eq!(
            leak_hit(&f, text).as_deref(),
            Some("forbidden_keyword 非公開の設定#3fa2c1 · 「こうぼう」")
        );
        let coverage = Finding::new(
            RuleId::Leak,
            Status::Info,
            "漏洩チェック".into(),
            String::new(),
        )
        .with_evidence(format!("{} v1 unchecked:", crate::vault::review::COVERAGE));
        assert_eq!(leak_hit(&coverage, text), None);
        let tone = Finding::new(RuleId::Tone, Status::Warn, "m".into(), "s".into());
        assert_eq!(leak_hit(&tone, text), None);
        // Hits at the end of the text or past it never panic.
        let past = Finding::new(RuleId::Leak, Status::Warn, "m".into(), "s".into())
            .with_span(Some(10..40))
            .with_evidence("quote".to_string());
        assert_eq!(leak_hit(&past, text).as_deref(), Some("quote · 「んだ」"));
    }
}
