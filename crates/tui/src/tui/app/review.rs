//! The review queue and navigation, the workbench's own verbs: `/` searches the run's text
//! (Tab: every stored run), n/N step through the matches (a match only in a rejected attempt
//! opens that attempt); keys jump to the next unreviewed turn, the next RETRY/WARN/UNSCORED
//! one (saying why: "attempt #1 RETRY before PASS"), the next whose verdict flipped in the last
//! rule edit; `u` takes back the latest 👍/👎, override or feedback (stored as an `undo`
//! action); `b` opens the runs browser; marks made elsewhere appear in the open run.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde_json::json;

use super::{App, Command, UiMsg, save};
use crate::store::ActionKind;
use crate::store::review::{Mark, fold, last_live};
use crate::tui::keymap::Action;
use crate::tui::queue::{
    Opened, attempt_index, flag_reason, match_attempt, matches, next_index, unreviewed,
};
use crate::tui::runs::{BrowserAsk, RunsBrowser};
use crate::tui::view::TurnView;

impl App {
    /// Keys while the runs browser or the search bar is open; None: not handled here.
    /// A destructive key waiting for its confirmation: y, Enter or the same key again.
    pub(crate) fn confirm_key(&mut self, key: KeyEvent) -> Option<Vec<Command>> {
        if let Some(a) = self.confirm.take() {
            let yes = matches!(key.code, KeyCode::Char('y') | KeyCode::Enter)
                || self.keymap.action(&key) == Some(a);
            if !yes {
                self.status = "cancelled".into();
                return Some(Vec::new());
            }
            self.confirmed = Some(a);
            return Some(self.act(a));
        }
        None
    }

    /// The runs browser's keys.
    pub(crate) fn runs_key(&mut self, key: KeyEvent) -> Option<Vec<Command>> {
        if let Some(b) = self.runs.as_mut() {
            return Some(match b.key(key) {
                BrowserAsk::Nothing => Vec::new(),
                BrowserAsk::Close => {
                    self.runs = None;
                    Vec::new()
                }
                BrowserAsk::Load(offset) => {
                    b.asked = offset;
                    vec![Command::BrowseRuns {
                        filter: b.filter.clone(),
                        offset,
                    }]
                }
                BrowserAsk::Open(id) => self.open_run(id, None),
                BrowserAsk::Compare(run) => vec![Command::OpenCompare(
                    crate::tui::compare_open::CompareAsk::OfRun(run),
                )],
            });
        }
        None
    }

    /// The search box's keys: type, Tab all runs, Enter search, Esc close.
    pub(crate) fn search_key(&mut self, key: KeyEvent) -> Option<Vec<Command>> {
        let input = self.search.input.as_mut()?;
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Esc => self.search.input = None,
            KeyCode::Char('c') if ctrl => self.search.input = None,
            KeyCode::Tab => self.search.all = !self.search.all,
            KeyCode::Backspace => {
                input.pop();
            }
            KeyCode::Char(c) if !ctrl => input.push(c),
            KeyCode::Enter => {
                let needle = self.search.input.take().unwrap_or_default();
                self.search.needle = needle.trim().to_string();
                self.search.hits.clear();
                self.search.hit = 0;
                if self.search.needle.is_empty() {
                    return Some(Vec::new());
                }
                if self.search.all {
                    self.status = format!("searching every run for “{}” …", self.search.needle);
                    return Some(vec![Command::SearchAll(self.search.needle.clone())]);
                }
                self.jump_match(false);
            }
            _ => {}
        }
        Some(Vec::new())
    }

    /// Opens a stored run (refused while a run is live: it would keep streaming unseen).
    fn open_run(&mut self, id: i64, turn: Option<usize>) -> Vec<Command> {
        if self.running() {
            self.status = "a run is in progress — stop it (s) before opening another".into();
            return Vec::new();
        }
        self.runs = None;
        self.status = format!("opening run {id} …");
        vec![Command::OpenRun { id, turn }]
    }

    /// The navigation and review actions of this module; None: not one of them.
    pub(crate) fn queue_action(&mut self, action: Action) -> Option<Vec<Command>> {
        let back = action == Action::SearchPrev;
        if self.right_focus && self.pane.scrolls() && self.scroll_right(action) {
            return Some(Vec::new());
        }
        let needs_confirm = match action {
            Action::Regenerate => self.run.run_id.is_some() && self.running(),
            Action::Stop => self.running(),
            _ => false,
        };
        if needs_confirm && self.confirmed.take() != Some(action) {
            self.confirm = Some(action);
            return Some(Vec::new());
        }
        match action {
            Action::NextBranch => self.next_branch(),
            Action::FocusRight => {
                self.right_focus = !self.right_focus;
                self.right_scroll = 0;
                self.status = if self.right_focus {
                    "right pane focused: j/k PgUp/PgDn scroll it · l gives the focus back".into()
                } else {
                    "conversation focused".into()
                };
            }
            Action::Runs => {
                let b = RunsBrowser {
                    loading: true,
                    ..RunsBrowser::default()
                };
                self.runs = Some(b);
                return Some(vec![Command::BrowseRuns {
                    filter: String::new(),
                    offset: 0,
                }]);
            }
            Action::Search => self.search.input = Some(String::new()),
            Action::SearchNext | Action::SearchPrev => {
                if self.search.needle.is_empty() {
                    self.status = "nothing searched yet — / searches".into();
                } else if !self.search.hits.is_empty() {
                    return Some(self.jump_hit(back));
                } else {
                    self.jump_match(back);
                }
            }
            // With a shared queue, `m` claims its next item (another run, maybe).
            Action::NextUnreviewed if self.queue.is_some() => {
                if self.reviewer.is_none() {
                    self.fail("a review queue needs your name: start with --reviewer NAME");
                    return Some(Vec::new());
                }
                self.status = "claiming the next item …".into();
                return Some(vec![Command::QueueNext]);
            }
            Action::NextUnreviewed => self.jump("unreviewed", unreviewed),
            // Blind: the verdict queues only know the turns she judged (they would tell).
            Action::NextFlagged | Action::NextFlipped => self.jump_verdict(action),
            Action::Undo => return Some(self.undo()),
            Action::ReplayToEnd => return Some(vec![Command::ReplayToEnd]),
            _ => return None,
        }
        Some(Vec::new())
    }

    /// j/k/PgUp/PgDn/g scroll the focused right pane (up to its last row); true when taken.
    fn scroll_right(&mut self, action: Action) -> bool {
        let s = &mut self.right_scroll;
        match action {
            Action::NextTurn => *s = s.saturating_add(1),
            Action::PrevTurn => *s = s.saturating_sub(1),
            Action::PageDown => *s = s.saturating_add(10),
            Action::PageUp => *s = s.saturating_sub(10),
            Action::FirstTurn => *s = 0,
            _ => {}
        }
        // Scrolling stops at the last row (as the pane was last drawn).
        *s = (*s).min(self.right_max.get());
        matches!(
            action,
            Action::NextTurn
                | Action::PrevTurn
                | Action::PageDown
                | Action::PageUp
                | Action::FirstTurn
        )
    }

    /// The next flagged (RETRY/WARN/UNSCORED) or flipped turn; blind: only turns she judged.
    fn jump_verdict(&mut self, action: Action) {
        match action {
            Action::NextFlagged => {
                let blind = self.blind;
                let what = if blind {
                    "judged RETRY/WARN/UNSCORED (blind)"
                } else {
                    "RETRY/WARN/UNSCORED"
                };
                let mine = crate::tui::blind::judged_turns(&self.blind_view(), &self.run.turns);
                // The status says why this turn is listed ("attempt #1 RETRY before PASS").
                self.jump_why(what, |t| {
                    (!blind || mine.contains(&t.turn))
                        .then(|| flag_reason(t))
                        .flatten()
                        .map(|why| format!(": {why}"))
                })
            }
            Action::NextFlipped => {
                let flipped: Vec<usize> = self
                    .rooms
                    .rules
                    .rejudge_of(self.run.run_id)
                    .map(|r| r.flipped.iter().map(|f| f.0).collect())
                    .unwrap_or_default();
                if flipped.is_empty() {
                    self.status = "no verdict flipped in the last rule edit".into();
                } else {
                    let blind = self.blind;
                    let mine = crate::tui::blind::judged_turns(&self.blind_view(), &self.run.turns);
                    self.jump("flipped", |t| {
                        (!blind || mine.contains(&t.turn)) && flipped.contains(&t.turn)
                    });
                }
            }
            _ => {}
        }
    }

    fn select(&mut self, i: usize) {
        self.selected = i;
        self.follow = false;
        self.attempt = None;
    }

    fn jump(&mut self, what: &str, pred: impl Fn(&TurnView) -> bool) {
        self.jump_why(what, |t| pred(t).then(|| format!(" ({what})")));
    }

    /// The next turn `why` lists, saying why ("turn 4: attempt #1 RETRY before PASS").
    fn jump_why(&mut self, what: &str, why: impl Fn(&TurnView) -> Option<String>) {
        let turns = &self.run.turns;
        match next_index(turns, self.selected, false, |t| why(t).is_some()) {
            Some(i) => {
                let left = turns.iter().filter(|t| unreviewed(t)).count();
                let said = why(&turns[i]).unwrap_or_default();
                self.status = format!("turn {}{said} · {left} unreviewed", turns[i].turn);
                self.select(i);
            }
            None => self.status = format!("no {what} turn in this run"),
        }
    }

    fn jump_match(&mut self, back: bool) {
        let needle = self.search.needle.clone();
        let turns = &self.run.turns;
        match next_index(turns, self.selected, back, |t| matches(t, &needle)) {
            Some(i) => {
                let total = turns.iter().filter(|t| matches(t, &needle)).count();
                let t = &turns[i];
                // A match only in a rejected attempt opens that attempt.
                let other = match_attempt(t, &needle).filter(|&k| Some(k) != t.committed);
                let where_ = match other.and_then(|k| t.attempts.get(k)) {
                    Some(a) if t.committed.is_some() => {
                        format!(", attempt #{} (not kept)", a.attempt)
                    }
                    Some(a) => format!(", attempt #{}", a.attempt),
                    None => String::new(),
                };
                self.status = format!(
                    "“{needle}”: turn {}{where_} · {total} matching turn(s)",
                    t.turn
                );
                self.select(i);
                self.attempt = other;
            }
            None => self.status = format!("“{needle}” is not in this run (/ then Tab: all runs)"),
        }
    }

    fn jump_hit(&mut self, back: bool) -> Vec<Command> {
        let n = self.search.hits.len();
        self.search.hit = if back {
            (self.search.hit + n - 1) % n
        } else {
            (self.search.hit + 1) % n
        };
        self.goto_hit()
    }

    /// Shows the current store-wide hit: its turn, and the attempt it is in when that was not
    /// kept; a hit in another run opens that run first.
    fn goto_hit(&mut self) -> Vec<Command> {
        let Some(h) = self.search.hits.get(self.search.hit).cloned() else {
            return Vec::new();
        };
        let n = self.search.hits.len();
        let not_kept = h
            .attempt
            .map(|k| format!(", attempt #{k} (not kept)"))
            .unwrap_or_default();
        self.status = format!(
            "“{}”: {} of {n} · run {} turn {}{not_kept}",
            self.search.needle,
            self.search.hit + 1,
            h.run_id,
            h.turn
        );
        if self.run.run_id == Some(h.run_id) {
            if let Some(i) = self
                .run
                .turns
                .iter()
                .position(|t| t.turn == h.turn as usize)
            {
                self.select(i);
                self.attempt = h.attempt.and_then(|k| attempt_index(&self.run.turns[i], k));
            }
            return Vec::new();
        }
        self.search.open_attempt = h.attempt.map(|k| (h.run_id, h.turn as usize, k));
        self.open_run(h.run_id, Some(h.turn as usize))
    }

    /// Takes back the latest mark in force; the undo is stored as an action.
    fn undo(&mut self) -> Vec<Command> {
        let Some((turn, kind)) = last_live(self.review_log.iter().map(|e| (e.0, e.1, &e.2))) else {
            self.status = "nothing to undo in this run".into();
            return Vec::new();
        };
        let payload = json!({"undo": kind.as_str()});
        // What is taken back, in the words the screen uses ("undid 👍 on turn 6").
        let what = crate::tui::marks::in_force(&self.review_log, turn)
            .into_iter()
            .rev()
            .find(|e| e.1 == kind)
            .map(|e| match kind {
                ActionKind::Thumb if e.2["up"] == true => "👍".to_string(),
                ActionKind::Thumb => "👎".to_string(),
                ActionKind::Override => {
                    format!("the override → {}", e.2["to"].as_str().unwrap_or("?"))
                }
                _ => "the feedback note".to_string(),
            })
            .unwrap_or_else(|| format!("the {}", kind.as_str()));
        self.review_log.push((
            turn,
            ActionKind::Undo,
            payload.clone(),
            self.reviewer.clone(),
            crate::store::time::now_iso(),
        ));
        let marks = fold(
            self.review_log
                .iter()
                .filter(|e| e.0 == turn)
                .map(|(t, k, p, _, _)| Mark {
                    turn: *t,
                    kind: *k,
                    payload: p,
                    reviewer: None,
                }),
        )
        .remove(&turn)
        .unwrap_or_default();
        if let Some(i) = self.run.turns.iter().position(|t| t.turn == turn as usize) {
            let r = &mut self.run.turns[i].review;
            r.thumb = marks.thumb;
            r.override_to = marks.override_to;
            r.notes = marks.notes;
            let ticket = r.queue();
            self.select(i);
            self.status = format!("undid {what} on turn {turn}");
            self.said = Some(self.status.clone());
            return vec![crate::tui::app::review_save(
                ticket,
                Some(turn as usize),
                ActionKind::Undo,
                payload,
            )];
        }
        self.status = format!("undid {what} on turn {turn}");
        vec![save(Some(turn as usize), ActionKind::Undo, payload)]
    }

    /// Keeps the review actions about to be saved in the undo log.
    pub(crate) fn note_saves(&mut self, cmds: &[Command]) {
        for c in cmds {
            if let Command::Save {
                turn: Some(turn),
                kind: kind @ (ActionKind::Thumb | ActionKind::Override | ActionKind::Feedback),
                payload,
                ..
            } = c
            {
                let who = self.reviewer.clone();
                self.review_log.push((
                    *turn as u32,
                    *kind,
                    payload.clone(),
                    who,
                    crate::store::time::now_iso(),
                ));
            }
        }
    }

    /// Pages, opened runs and search hits from the store.
    pub(crate) fn on_queue_msg(&mut self, msg: UiMsg) -> Vec<Command> {
        match msg {
            UiMsg::Runs {
                filter,
                offset,
                page,
            } => {
                // Only the page last asked for lands (filter and offset both).
                let asked = |b: &&mut RunsBrowser| b.filter == filter && b.asked == offset;
                if let Some(b) = self.runs.as_mut().filter(asked) {
                    match page {
                        Ok(page) => b.loaded(page),
                        Err(e) => {
                            b.loading = false;
                            b.error = Some(e.to_string());
                        }
                    }
                }
            }
            UiMsg::RunOpened { ticket, .. } if ticket != self.tickets.open => {}
            UiMsg::RunOpened { .. } if self.running() => {
                self.status = "a run is live: the stored run was not opened".into();
            }
            UiMsg::RunOpened { run, .. } => match run {
                Ok(o) => {
                    let Opened {
                        view,
                        log,
                        turn,
                        branches,
                    } = *o;
                    self.branches = crate::tui::branch::Branches::from(branches);
                    let id = view.run_id.unwrap_or_default();
                    let n = view.turns.len();
                    self.run = view;
                    self.review_log = log;
                    self.selected = turn
                        .and_then(|t| self.run.turns.iter().position(|v| v.turn == t))
                        .unwrap_or(n.saturating_sub(1));
                    self.follow = false;
                    // A search hit in an attempt not kept opens that attempt.
                    self.attempt = match self.search.open_attempt.take() {
                        Some((run, turn, k)) if run == id => self
                            .run
                            .turns
                            .get(self.selected)
                            .filter(|t| t.turn == turn)
                            .and_then(|t| attempt_index(t, k)),
                        _ => None,
                    };
                    let done = self.run.turns.iter().filter(|t| !unreviewed(t)).count();
                    self.status = format!(
                        "run {id}: {n} turns, {done} reviewed · b: runs · m: next unreviewed"
                    );
                }
                Err(e) => self.fail(format!("run NOT opened: {e}")),
            },
            UiMsg::Found { needle, .. } if needle != self.search.needle => {}
            UiMsg::Found { hits, .. } => match hits {
                Ok(hits) if hits.is_empty() => {
                    self.status = format!("“{}” is in no stored run", self.search.needle)
                }
                Ok(hits) => {
                    self.search.hits = hits;
                    self.search.hit = 0;
                    return self.goto_hit();
                }
                Err(e) => self.fail(format!("search failed: {e}")),
            },
            _ => {}
        }
        Vec::new()
    }
}

impl App {
    /// Marks made elsewhere (another reviewer's workbench, `kakeai queue judge`) appear in the
    /// open run: the run is read again and replaces the view, keeping the selection — unless a
    /// run went live, another run was opened meanwhile, or a mark of ours is still being saved.
    pub fn marks_refreshed(&mut self, r: Result<Box<Opened>, crate::tui::error::UiError>) {
        let o = match r {
            Ok(o) => o,
            Err(e) => {
                self.notify(
                    super::status::Level::Warn,
                    format!("marks not refreshed: {e}"),
                );
                return;
            }
        };
        let pending = !self.nothing_pending();
        if self.running() || pending || o.view.run_id != self.run.run_id {
            return;
        }
        let Opened {
            view,
            log,
            branches,
            ..
        } = *o;
        let me = self.reviewer.clone();
        let new: Vec<String> = log
            .iter()
            .skip(self.review_log.len())
            .filter(|e| e.3.is_some() && e.3 != me)
            .filter_map(|e| e.3.clone())
            .collect();
        let mut who = new.clone();
        who.sort();
        who.dedup();
        let keep = self.selected;
        self.run = view;
        self.review_log = log;
        self.branches = crate::tui::branch::Branches::from(branches);
        self.selected = keep.min(self.run.turns.len().saturating_sub(1));
        // Blind: others' marks are hidden, so is their arrival (and her own "saved ✓" stays).
        if !who.is_empty() && !self.blind {
            self.status = format!("{} new mark(s) from {}", new.len(), who.join(", "));
        }
        self.dirty = true;
    }
}
