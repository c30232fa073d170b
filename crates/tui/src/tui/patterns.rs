//! The patterns pane: the プロレス reply patterns ranked by score, rank, success or likes,
//! filtered by sister; promoting a reviewed line to a pattern; and the counterfactual review of
//! dropouts (the model drafts one reply per type, the reviewer picks, edits and accepts).

use super::command::{Command, DraftSet, Modal};
use super::error::{Notice, UiError};
use super::panes::{Ask, RoomMsg};
use crate::store::{Store, StoreError};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::keymap::Action;
use super::theme::Theme;
use super::verbs::Input;
use super::wrap::wrap;

/// One pattern as the pane shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct PatternRow {
    pub id: i64,
    pub character: String,
    pub user_message_type: String,
    pub user_message_example: String,
    pub bot_response: String,
    pub bot_response_type: String,
    pub used: i64,
    pub success_rate: f64,
    pub like_rate: f64,
    pub score: f64,
    pub rank: String,
    pub counterfactual: bool,
}

/// A conversation that ended after a bot line, with the model's drafts once asked.
#[derive(Debug, Clone, PartialEq)]
pub struct DropoutRow {
    pub id: i64,
    pub character: String,
    pub user_line: String,
    pub bot_line: String,
    /// (type, reply) drafts, one per reply type.
    pub drafts: Vec<(String, String)>,
    /// The user's message type as the model named it (e.g. からかい), when it did.
    pub message_type: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SortBy {
    Score,
    Rank,
    Success,
    Likes,
}

impl SortBy {
    fn next(self) -> SortBy {
        match self {
            SortBy::Score => SortBy::Rank,
            SortBy::Rank => SortBy::Success,
            SortBy::Success => SortBy::Likes,
            SortBy::Likes => SortBy::Score,
        }
    }
    fn label(self) -> &'static str {
        match self {
            SortBy::Score => "score",
            SortBy::Rank => "rank",
            SortBy::Success => "success",
            SortBy::Likes => "likes",
        }
    }
}

pub struct PatternsPane {
    pub rows: Vec<PatternRow>,
    pub dropouts: Vec<DropoutRow>,
    pub sort: SortBy,
    /// None: both sisters.
    pub character: Option<&'static str>,
    pub row: usize,
    /// Showing dropouts (the counterfactual review) instead of patterns.
    pub review: bool,
    /// Draft chosen for acceptance in the review.
    pub draft: usize,
    pub loaded: bool,
}

impl Default for PatternsPane {
    fn default() -> Self {
        PatternsPane {
            rows: Vec::new(),
            dropouts: Vec::new(),
            sort: SortBy::Score,
            character: None,
            row: 0,
            review: false,
            draft: 0,
            loaded: false,
        }
    }
}

impl PatternsPane {
    /// The rows shown: filtered by sister, sorted (ties by id, so the order is stable).
    pub fn shown(&self) -> Vec<&PatternRow> {
        let mut v: Vec<&PatternRow> = self
            .rows
            .iter()
            .filter(|r| self.character.is_none_or(|c| r.character == c))
            .collect();
        let key = |r: &PatternRow| match self.sort {
            SortBy::Score | SortBy::Rank => r.score,
            SortBy::Success => r.success_rate,
            SortBy::Likes => r.like_rate,
        };
        v.sort_by(|a, b| {
            // S first: the rank's place in S, A, B, C, D (not its letter).
            let rank = |r: &PatternRow| "SABCD".find(r.rank.as_str()).unwrap_or(5);
            let primary = if self.sort == SortBy::Rank {
                rank(a).cmp(&rank(b))
            } else {
                key(b).total_cmp(&key(a))
            };
            primary
                .then(key(b).total_cmp(&key(a)))
                .then(a.id.cmp(&b.id))
        });
        v
    }
}

/// What a key in the patterns pane asks of the workbench.
#[derive(Debug, Clone, PartialEq)]
pub enum PatternsAsk {
    /// Not this pane's key.
    NotMine,
    /// Handled here (moved, sorted, filtered), or nothing selected to act on.
    Done,
    /// The dropout review was turned on: read the dropouts.
    LoadDropouts,
    /// Ask the model for counterfactual replies to this dropout.
    Draft { dropout: i64 },
    /// Accept (or edit first) draft `kind`/`text` for this dropout, whose user message the
    /// model typed as `message_type`.
    Accept {
        dropout: i64,
        kind: String,
        text: String,
        message_type: String,
    },
    /// Accept was asked with no drafts yet.
    NoDrafts,
    /// Nothing to do; the status line says why.
    Said(String),
}

/// The patterns pane's own verbs, bound in `[pane.patterns]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatternsVerb {
    /// The next draft in the dropout review; the next sort order in the list.
    NextDraft,
    PrevDraft,
    NextSister,
    Dropouts,
    Draft,
    Accept,
}

impl super::verbs::Verbs for PatternsVerb {
    const ALL: &'static [(&'static str, Self, &'static str)] = &[
        (
            "next_draft",
            PatternsVerb::NextDraft,
            "dropout review: the next draft · list: the next sort order",
        ),
        (
            "prev_draft",
            PatternsVerb::PrevDraft,
            "dropout review: the previous draft · list: the next sort order",
        ),
        (
            "next_sister",
            PatternsVerb::NextSister,
            "list both sisters / やな / あゆ",
        ),
        (
            "dropouts",
            PatternsVerb::Dropouts,
            "patterns ↔ dropouts (counterfactual review)",
        ),
        (
            "draft",
            PatternsVerb::Draft,
            "dropout review: ask the model for drafts",
        ),
        (
            "accept",
            PatternsVerb::Accept,
            "dropout review: accept the chosen draft as a pattern",
        ),
    ];
}

impl PatternsPane {
    fn rows(&self) -> usize {
        if self.review {
            self.dropouts.len()
        } else {
            self.shown().len()
        }
    }

    /// The pane's own verbs (sort, sister, the dropout review and its drafts) and the
    /// conversation's moves over its rows.
    pub fn action(&mut self, input: Input<PatternsVerb>) -> PatternsAsk {
        let n = self.rows();
        let verb = match input {
            Input::Verb(v) => v,
            Input::Global(Action::NextTurn) => {
                self.row = (self.row + 1).min(n.saturating_sub(1));
                return PatternsAsk::Done;
            }
            Input::Global(Action::PrevTurn) => {
                self.row = self.row.saturating_sub(1);
                return PatternsAsk::Done;
            }
            Input::Global(_) => return PatternsAsk::NotMine,
        };
        match verb {
            PatternsVerb::NextDraft | PatternsVerb::PrevDraft if self.review => {
                let k = self
                    .dropouts
                    .get(self.row)
                    .map(|d| d.drafts.len())
                    .unwrap_or(0)
                    .max(1);
                self.draft = if verb == PatternsVerb::NextDraft {
                    (self.draft + 1) % k
                } else {
                    (self.draft + k - 1) % k
                };
            }
            PatternsVerb::NextDraft | PatternsVerb::PrevDraft => {
                self.sort = self.sort.next();
                self.row = 0;
            }
            PatternsVerb::NextSister => {
                self.character = match self.character {
                    None => Some("yana"),
                    Some("yana") => Some("ayu"),
                    _ => None,
                };
                self.row = 0;
            }
            PatternsVerb::Dropouts => {
                self.review = !self.review;
                self.row = 0;
                if self.review {
                    return PatternsAsk::LoadDropouts;
                }
            }
            PatternsVerb::Draft if self.review => {
                return self
                    .dropouts
                    .get(self.row)
                    .map_or(PatternsAsk::Done, |d| PatternsAsk::Draft { dropout: d.id });
            }
            PatternsVerb::Accept if self.review => return self.accept(),
            PatternsVerb::Draft | PatternsVerb::Accept => {
                return PatternsAsk::Said("dropout review only — D opens it".into());
            }
        }
        PatternsAsk::Done
    }

    fn accept(&self) -> PatternsAsk {
        let Some(d) = self.dropouts.get(self.row) else {
            return PatternsAsk::Done;
        };
        match d.drafts.get(self.draft) {
            Some((kind, text)) => PatternsAsk::Accept {
                dropout: d.id,
                kind: kind.clone(),
                text: text.clone(),
                message_type: d.message_type.clone().unwrap_or_default(),
            },
            None => PatternsAsk::NoDrafts,
        }
    }
}

impl PatternsAsk {
    /// The answer as the workbench carries it out.
    pub fn into_ask(self) -> Ask {
        match self {
            PatternsAsk::NotMine => Ask::NotMine,
            PatternsAsk::Done => Ask::Done(None),
            PatternsAsk::Said(s) => Ask::Done(Some(s)),
            PatternsAsk::LoadDropouts => Ask::Run(None, vec![Command::LoadDropouts]),
            PatternsAsk::Draft { dropout } => Ask::Run(
                Some(format!(
                    "asking the model for three replies to dropout {dropout}…"
                )),
                vec![Command::DraftCounterfactuals { dropout }],
            ),
            PatternsAsk::NoDrafts => Ask::Done(Some("no drafts yet — press D… e to draft".into())),
            PatternsAsk::Accept {
                dropout,
                kind,
                text,
                message_type,
            } => {
                // The reviewer accepts it as is (Enter) or edits it first (seed 000 §7).
                // Line 1: the user's message type (the model's guess, or empty); line 2: the
                // reply.
                let mut ta = ratatui_textarea::TextArea::from([message_type, text]);
                ta.set_block(ratatui::widgets::Block::bordered().title(
                    " line 1 message type · line 2 reply (↑↓ between them) · Enter accept · Esc cancel ",
                ));
                ta.move_cursor(ratatui_textarea::CursorMove::Bottom);
                ta.move_cursor(ratatui_textarea::CursorMove::End);
                Ask::Dialog(Box::new(Modal::Draft {
                    dropout,
                    kind,
                    text: ta,
                }))
            }
        }
    }
}

impl PatternsPane {
    /// The patterns read from the store; the status line to show, if any.
    pub fn loaded(&mut self, r: Result<Vec<PatternRow>, UiError>) -> Option<Notice> {
        match r {
            Ok(rows) => {
                self.rows = rows;
                self.loaded = true;
                None
            }
            Err(e) => Some(Notice::failed("patterns", e)),
        }
    }

    /// The dropouts read from the store.
    pub fn dropouts_loaded(&mut self, r: Result<Vec<DropoutRow>, UiError>) -> Option<Notice> {
        match r {
            Ok(rows) => {
                self.dropouts = rows;
                None
            }
            Err(e) => Some(Notice::failed("dropouts", e)),
        }
    }

    /// The model's drafts for `dropout`.
    pub fn drafts_loaded(
        &mut self,
        dropout: i64,
        drafts: Result<DraftSet, UiError>,
    ) -> Option<Notice> {
        Some(match drafts {
            Ok((message_type, d)) => {
                if let Some(row) = self.dropouts.iter_mut().find(|r| r.id == dropout) {
                    row.drafts = d;
                    row.message_type = message_type;
                    self.draft = 0;
                }
                Notice::info("drafts ready — < > pick one, y accepts it as a pattern")
            }
            Err(e) => Notice::failed("no drafts", e),
        })
    }
}

/// The stored patterns, best first, as the pane lists them.
pub fn read_rows(s: &mut Store) -> Result<Vec<PatternRow>, StoreError> {
    let list = crate::patterns::db::list_scored(s.db(), None, crate::patterns::db::SortKey::Score)
        .map_err(|e| StoreError::Invalid(e.to_string()))?;
    Ok(list
        .into_iter()
        .map(|sp| PatternRow {
            id: sp.pattern.pattern_id,
            character: sp.pattern.character.as_str().into(),
            user_message_type: sp.pattern.user_message_type,
            user_message_example: sp.pattern.user_message_example,
            bot_response: sp.pattern.bot_response,
            bot_response_type: sp.pattern.bot_response_type.as_str().into(),
            used: i64::from(sp.pattern.used_count),
            success_rate: sp.pattern.success_rate,
            like_rate: sp.pattern.like_rate,
            score: sp.score,
            rank: sp.rank.as_str().into(),
            counterfactual: sp.pattern.is_counterfactual,
        })
        .collect())
}

/// The pane's read of the store (the runtime runs it on the store's thread).
pub fn load(s: &mut Store) -> RoomMsg {
    RoomMsg::Patterns(read_rows(s).map_err(UiError::from))
}

pub fn render(f: &mut Frame, area: Rect, p: &PatternsPane, t: &Theme) {
    let dim = Style::new().fg(t.dim);
    let [top, list, foot] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(3),
        Constraint::Length(6),
    ])
    .areas(area);
    let who = match p.character {
        Some("yana") => "やな",
        Some("ayu") => "あゆ",
        _ => "全員",
    };
    let head = if p.review {
        format!(
            "dropouts {} · e draft · </> pick · enter… y accept · D back",
            p.dropouts.len()
        )
    } else {
        format!(
            "{} patterns · sort {} (<>) · {who} (a) · D dropouts",
            p.rows.len(),
            p.sort.label()
        )
    };
    f.render_widget(
        Paragraph::new(super::fit::line(Line::styled(head, dim), top.width)),
        top,
    );
    let width = list.width.max(1) as usize;
    let (lines, detail) = if p.review {
        dropout_lines(p, width, t)
    } else {
        pattern_lines(p, width, t)
    };
    let h = list.height as usize;
    let skip = p.row.saturating_sub(h.saturating_sub(1));
    f.render_widget(
        Paragraph::new(super::fit::lines(
            lines.into_iter().skip(skip).take(h).collect::<Vec<_>>(),
            list.width,
        )),
        list,
    );
    let fw = foot.width.max(1) as usize;
    let dl: Vec<Line> = detail
        .iter()
        .flat_map(|d| wrap(d, fw))
        .map(|l| Line::styled(l, Style::new().fg(t.text)))
        .collect();
    f.render_widget(Paragraph::new(dl), foot);
}

/// The dropouts under review (one line each) and the selected one's exchange and drafts.
fn dropout_lines(p: &PatternsPane, width: usize, t: &Theme) -> (Vec<Line<'static>>, Vec<String>) {
    let dim = Style::new().fg(t.dim);
    let mut lines: Vec<Line> = Vec::new();
    let mut detail: Vec<String> = Vec::new();
    for (i, d) in p.dropouts.iter().enumerate() {
        let st = sel(i == p.row, t);
        lines.push(Line::styled(
            cut(
                &format!("#{} {} 「{}」", d.id, d.character, d.bot_line),
                width,
            ),
            st,
        ));
        if i == p.row {
            detail.push(format!("user: {}", d.user_line));
            detail.push(format!("bot:  {} (then silence)", d.bot_line));
            for (k, (kind, text)) in d.drafts.iter().enumerate() {
                let mark = if k == p.draft { "▶" } else { " " };
                detail.push(format!("{mark} {kind}: {text}"));
            }
        }
    }
    if p.dropouts.is_empty() {
        lines.push(Line::styled(
            "no dropouts — ingest conversation logs with kakeai ingest FILE.jsonl",
            dim,
        ));
    }
    (lines, detail)
}

/// The patterns (rank, score, success, likes, her line) and the selected one's details.
fn pattern_lines(p: &PatternsPane, width: usize, t: &Theme) -> (Vec<Line<'static>>, Vec<String>) {
    let dim = Style::new().fg(t.dim);
    let mut lines: Vec<Line> = Vec::new();
    let mut detail: Vec<String> = Vec::new();
    for (i, r) in p.shown().iter().enumerate() {
        let st = sel(i == p.row, t);
        let cf = if r.counterfactual { "✎" } else { " " };
        lines.push(Line::from(vec![
            Span::styled(
                format!("{} ", r.rank),
                st.fg(rank_color(&r.rank, t)).add_modifier(Modifier::BOLD),
            ),
            Span::styled(
                format!(
                    "{:.2} {:>3.0}% {:>3.0}%{cf}",
                    r.score,
                    r.success_rate * 100.0,
                    r.like_rate * 100.0
                ),
                st.fg(t.dim),
            ),
            Span::styled(
                cut(
                    &format!(
                        " {} {}",
                        if r.character == "ayu" {
                            "あゆ"
                        } else {
                            "やな"
                        },
                        r.bot_response
                    ),
                    width.saturating_sub(20),
                ),
                st,
            ),
        ]));
        if i == p.row {
            detail.push(format!(
                "#{} {} → {} · used {}",
                r.id, r.user_message_type, r.bot_response_type, r.used
            ));
            detail.push(format!("user: {}", r.user_message_example));
            detail.push(format!("bot:  {}", r.bot_response));
        }
    }
    if p.rows.is_empty() {
        lines.push(Line::styled(
            if p.loaded { "no patterns yet — kakeai patterns import assets/patterns/starter.jsonl, or P on a reviewed line" } else { "loading…" },
            dim,
        ));
    }
    (lines, detail)
}

fn sel(selected: bool, t: &Theme) -> Style {
    if selected {
        Style::new().fg(t.text).bg(t.selected_bg)
    } else {
        Style::new().fg(t.text)
    }
}

fn rank_color(rank: &str, t: &Theme) -> ratatui::style::Color {
    match rank {
        "S" | "A" => t.pass,
        "B" | "C" => t.warn,
        _ => t.retry,
    }
}

/// Cuts to a display width.
fn cut(s: &str, width: usize) -> String {
    let mut w = 0;
    let mut out = String::new();
    for c in s.chars() {
        let cw = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
        if w + cw > width {
            break;
        }
        w += cw;
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: i64, who: &str, score: f64, rank: &str, success: f64, likes: f64) -> PatternRow {
        PatternRow {
            id,
            character: who.into(),
            user_message_type: "からかい".into(),
            user_message_example: "例".into(),
            bot_response: "返し".into(),
            bot_response_type: "流し".into(),
            used: 10,
            success_rate: success,
            like_rate: likes,
            score,
            rank: rank.into(),
            counterfactual: false,
        }
    }

    fn ids(p: &PatternsPane) -> Vec<i64> {
        p.shown().iter().map(|r| r.id).collect()
    }

    #[test]
    fn sorting_and_filtering_follow_the_chosen_key() {
        let mut p = PatternsPane {
            rows: vec![
                row(1, "yana", 0.55, "C", 0.9, 0.1),
                row(2, "ayu", 0.92, "S", 0.5, 0.2),
                row(3, "yana", 0.72, "B", 0.6, 0.9),
                row(4, "ayu", 0.81, "A", 0.7, 0.0),
            ],
            ..PatternsPane::default()
        };
        assert_eq!(ids(&p), [2, 4, 3, 1]);
        p.sort = SortBy::Rank;
        assert_eq!(ids(&p), [2, 4, 3, 1], "S before A, not after D");
        p.sort = SortBy::Success;
        assert_eq!(ids(&p), [1, 4, 3, 2]);
        p.sort = SortBy::Likes;
        assert_eq!(ids(&p), [3, 2, 1, 4]);
        p.character = Some("ayu");
        assert_eq!(ids(&p), [2, 4]);
    }
}
