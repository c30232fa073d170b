//! The queues pane (issue 24 §2, "watch queues from the workbench"): every shared review
//! queue with its filter, k reviewers per item, lease, progress and each reviewer's count,
//! read again whenever another process commits. `m` claims from the queue the workbench was
//! started with (`--queue NAME`); this pane is where the team sees how far each queue is.

use std::collections::BTreeMap;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::Line;
use ratatui::widgets::Paragraph;

use super::{Ask, RoomMsg};
use crate::annotate::db;
use crate::store::{Store, StoreError};
use crate::tui::ctx::Ctx;
use crate::tui::error::{Notice, UiError};
use crate::tui::keymap::Action;
use crate::tui::theme::Theme;
use crate::tui::verbs::Input;
use crate::tui::wrap::wrap;

/// One queue as the pane lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct QueueRow {
    pub name: String,
    pub filter: String,
    pub k: u32,
    pub lease_s: i64,
    pub overlap: bool,
    pub pairwise: bool,
    pub items: usize,
    pub done: usize,
    pub held: usize,
    pub per_reviewer: BTreeMap<String, usize>,
    /// Each reviewer's pace (items/hour, and in the last hour).
    pub pace: BTreeMap<String, crate::annotate::team::Pace>,
    /// The queue's guidelines for its reviewers (markdown), if written.
    pub guidelines: Option<String>,
}

/// The pane's state.
#[derive(Debug, Default)]
pub struct QueuesRoom {
    pub rows: Vec<QueueRow>,
    pub loaded: bool,
    pub row: usize,
}

/// Every queue with its progress (the runtime runs it on the store's thread).
pub fn load(s: &mut Store) -> RoomMsg {
    RoomMsg::Queues(read(s).map_err(UiError::from))
}

fn read(s: &mut Store) -> Result<Vec<QueueRow>, StoreError> {
    let bad = |e: crate::annotate::QueueError| StoreError::Invalid(e.to_string());
    let now = crate::patterns::stamp::now_ms();
    let queues = db::list(s.db()).map_err(bad)?;
    let mut out = Vec::new();
    for q in queues {
        let p = db::progress(s, &q.spec.name, now).map_err(bad)?;
        let pace = crate::annotate::team::pace(s.db(), &q, now).map_err(bad)?;
        let guidelines = crate::annotate::team::guidelines(s.db(), &q.spec.name).map_err(bad)?;
        out.push(QueueRow {
            pace,
            guidelines,
            filter: q.spec.filter.describe(),
            k: q.spec.k,
            lease_s: q.spec.lease_ms / 1000,
            overlap: q.spec.overlap,
            pairwise: q.spec.comparison.is_some(),
            name: q.spec.name,
            items: p.items,
            done: p.done,
            held: p.held,
            per_reviewer: p.per_reviewer,
        });
    }
    Ok(out)
}

/// The queues pane's own verbs, bound in `[pane.queues]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueuesVerb {
    Reload,
}

impl crate::tui::verbs::Verbs for QueuesVerb {
    const ALL: &'static [(&'static str, Self, &'static str)] =
        &[("reload", QueuesVerb::Reload, "read the queues again")];
}

impl QueuesRoom {
    /// Its verb (read the queues again) and the conversation's moves over the queues.
    pub fn act(&mut self, input: Input<QueuesVerb>) -> Ask {
        let n = self.rows.len();
        match input {
            Input::Global(Action::NextTurn) => self.row = (self.row + 1).min(n.saturating_sub(1)),
            Input::Global(Action::PrevTurn) => self.row = self.row.saturating_sub(1),
            Input::Verb(QueuesVerb::Reload) => {
                return Ask::Run(
                    Some("reading the queues again …".into()),
                    vec![crate::tui::command::Command::LoadRoom(super::Pane::Queues)],
                );
            }
            Input::Global(_) => return Ask::NotMine,
        }
        Ask::Done(None)
    }

    /// The queues read; the status line to show, if any.
    pub fn loaded(&mut self, r: Result<Vec<QueueRow>, UiError>) -> Option<Notice> {
        match r {
            Ok(rows) => {
                self.rows = rows;
                self.loaded = true;
                self.row = self.row.min(self.rows.len().saturating_sub(1));
                None
            }
            Err(e) => Some(Notice::failed("queues", e)),
        }
    }

    pub fn draw(&self, f: &mut Frame, area: Rect, cx: &Ctx, t: &Theme) {
        let dim = Style::new().fg(t.dim);
        let mut rows = vec![(
            "review queues (kakeai queue create …), progress per reviewer".to_string(),
            Style::new().fg(t.accent).add_modifier(Modifier::BOLD),
        )];
        if !self.loaded {
            rows.push(("reading the queues…".into(), dim));
        } else if self.rows.is_empty() {
            rows.push((
                "no queues yet — kakeai queue create NAME --status RETRY,UNSCORED".into(),
                dim,
            ));
        }
        for (i, q) in self.rows.iter().enumerate() {
            rows.extend(rows_of(q, i == self.row, t));
        }
        // Every row wrapped at the pane's width (nothing is cut), continuations indented.
        let width = usize::from(area.width).max(12);
        let mut lines = Vec::new();
        for (text, style) in rows {
            // Wrapped 4 columns short, so the indented continuation fits too.
            for (k, piece) in wrap(&text, width - 4).into_iter().enumerate() {
                let piece = if k == 0 {
                    piece
                } else {
                    format!("    {piece}")
                };
                lines.push(Line::styled(piece, style));
            }
        }
        let n = lines.len();
        let scroll = cx.scroll_for(n, area.height);
        f.render_widget(Paragraph::new(lines).scroll((scroll, 0)), area);
    }
}

/// A queue's rows: name and progress, then its filter and settings, then who judged what.
fn rows_of(q: &QueueRow, selected: bool, t: &Theme) -> Vec<(String, Style)> {
    let dim = Style::new().fg(t.dim);
    let head = Style::new().fg(t.accent).add_modifier(if selected {
        Modifier::BOLD | Modifier::REVERSED
    } else {
        Modifier::BOLD
    });
    let mut out = vec![(
        format!(
            "{}{}  {}/{} done · {} held{}",
            if selected { "▶ " } else { "  " },
            q.name,
            q.done,
            q.items,
            q.held,
            if q.pairwise { " · pairwise" } else { "" }
        ),
        head,
    )];
    out.push((
        format!(
            "    {} · k={}{} · lease {} s",
            q.filter,
            q.k,
            if q.overlap { " overlap" } else { "" },
            q.lease_s
        ),
        dim,
    ));
    if !q.per_reviewer.is_empty() {
        let who: Vec<String> = q
            .per_reviewer
            .iter()
            .map(|(w, n)| match q.pace.get(w).and_then(|p| p.per_hour()) {
                Some(r) => format!("{w} {n} ({r:.1}/h)"),
                None => format!("{w} {n}"),
            })
            .collect();
        out.push((format!("    judged: {}", who.join(" · ")), dim));
    }
    // The selected queue's guidelines in full; the others' first line only.
    if let Some(g) = &q.guidelines {
        let g = crate::text::sanitize::for_terminal(g);
        let mut lines = g.lines().filter(|l| !l.trim().is_empty());
        if selected {
            out.push(("    guidelines:".into(), dim));
            out.extend(lines.map(|l| (format!("    │ {l}"), Style::new())));
        } else if let Some(first) = lines.next() {
            out.push((format!("    guidelines: {first} …"), dim));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(name: &str) -> QueueRow {
        QueueRow {
            name: name.into(),
            filter: "RETRY".into(),
            k: 2,
            lease_s: 600,
            overlap: false,
            pairwise: false,
            items: 4,
            done: 1,
            held: 1,
            per_reviewer: BTreeMap::from([("花子".into(), 2), ("taro".into(), 1)]),
            pace: BTreeMap::new(),
            guidelines: None,
        }
    }

    #[test]
    fn moves_stop_at_the_ends_and_reload_is_asked_for() {
        let mut r = QueuesRoom::default();
        r.loaded(Ok(vec![row("a"), row("b")]));
        for _ in 0..5 {
            r.act(Input::Global(Action::NextTurn));
        }
        assert_eq!(r.row, 1);
        for _ in 0..5 {
            r.act(Input::Global(Action::PrevTurn));
        }
        assert_eq!(r.row, 0);
        assert!(matches!(r.act(Input::Verb(QueuesVerb::Reload)), Ask::Run(_, c) if c.len() == 1));
        assert!(matches!(
            r.act(Input::Global(Action::ThumbUp)),
            Ask::NotMine
        ));
        assert!(matches!(r.act(Input::Global(Action::Probe)), Ask::NotMine));
        // A reload with fewer queues keeps the selection on a row that exists.
        r.row = 1;
        r.loaded(Ok(vec![row("a")]));
        assert_eq!(r.row, 0);
        assert_eq!(
            r.loaded(Err(UiError::Store("locked".into()))),
            Some(Notice {
                level: crate::tui::error::Level::Error,
                text: "queues: locked".into()
            })
        );
    }

    /// At every width the pane's text is all there: rows wrap, nothing is cut.
    #[test]
    fn nothing_is_cut_at_any_width() {
        use ratatui::{Terminal, backend::TestBackend};
        let mut r = QueuesRoom::default();
        r.loaded(Ok(vec![row("retry-ayu-since-monday")]));
        let theme = &crate::tui::theme::load_all().0[0];
        let (run, rules) = (
            crate::tui::view::RunView::default(),
            crate::director::RuleSet::builtin().unwrap(),
        );
        let (log, max) = (Vec::new(), std::cell::Cell::new(0));
        for w in [16u16, 24, 33, 40, 57, 80] {
            let cx = Ctx {
                run: &run,
                selected: 0,
                attempt: None,
                rules: &rules,
                blind: crate::tui::blind::Blind {
                    on: false,
                    log: &log,
                    me: None,
                },
                right_scroll: 0,
                right_max: &max,
                chat: None,
            };
            let mut term = Terminal::new(TestBackend::new(w, 30)).unwrap();
            term.draw(|f| r.draw(f, f.area(), &cx, theme)).unwrap();
            let screen: String = term
                .backend()
                .buffer()
                .content()
                .iter()
                .map(|c| c.symbol())
                .collect::<String>()
                .split_whitespace()
                .collect();
            for want in [
                "retry-ayu-since-monday",
                "1/4done",
                "lease600s",
                "花子2",
                "taro1",
            ] {
                assert!(screen.contains(want), "{w}: {want} in {screen}");
            }
        }
    }

    #[test]
    fn a_row_shows_progress_settings_and_reviewers() {
        let text: String = rows_of(&row("retry-ayu"), true, &crate::tui::theme::load_all().0[0])
            .iter()
            .map(|(l, _)| l.clone() + "\n")
            .collect();
        for want in [
            "retry-ayu",
            "1/4 done",
            "1 held",
            "k=2",
            "lease 600 s",
            "花子 2",
            "taro 1",
        ] {
            assert!(text.contains(want), "{want}: {text}");
        }
    }

    #[test]
    fn the_selected_queue_shows_its_guidelines_and_each_pace() {
        let theme = &crate::tui::theme::load_all().0[0];
        let mut q = row("retry-ayu");
        q.guidelines = Some("# 方針\n\n口調を見る\x1b[2J\n- 敬語の崩れ".into());
        q.pace = crate::annotate::team::pace_of(
            [("花子".to_string(), 0), ("花子".to_string(), 1_800_000)],
            1_800_000,
        );
        let text = |selected| -> String {
            rows_of(&q, selected, theme)
                .iter()
                .map(|(l, _)| l.clone() + "\n")
                .collect()
        };
        let on = text(true);
        for want in [
            "花子 2 (2.0/h)",
            "taro 1 ·",
            "│ # 方針",
            "│ 口調を見る",
            "│ - 敬語の崩れ",
        ] {
            assert!(on.contains(want), "{want}: {on}");
        }
        assert!(!on.contains('\x1b'), "{on}");
        let off = text(false);
        assert!(off.contains("guidelines: # 方針 …"), "{off}");
        assert!(!off.contains("敬語"), "{off}");
    }
}
