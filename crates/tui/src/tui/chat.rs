//! Chat mode: a reviewer talks to one sister as a user. Each message is masked for PII, judged
//! by the safety layers, answered by a プロレス pattern or the model, and the reply judged by the
//! Director; every step lands in the exchange's trace, shown in the detail pane.

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph};
use ratatui_textarea::TextArea;

use super::theme::Theme;
use super::theme::badge;
use super::wrap::wrap;
use crate::director::{Status, Verdict};

/// Where a reply came from.
#[derive(Debug, Clone, PartialEq)]
pub enum Source {
    /// Not answered yet.
    Pending,
    /// The safety layers blocked the message; no reply is made.
    Blocked,
    Pattern {
        pattern_id: i64,
        usage_id: i64,
        rank: String,
    },
    Llm,
    /// No usable line within the attempts: her fallback line, marked for review.
    Fallback,
    /// Not even her fallback was usable: nothing is said (marked for review).
    Withheld,
    /// Generation failed; the reason.
    Failed(String),
}

/// One user message and the sister's answer.
#[derive(Debug, Clone)]
pub struct Exchange {
    /// The sister who answers this exchange: each sister has her own history (ctrl-t switches
    /// to the other one's, it never relabels replies).
    pub character: String,
    /// The user's text after masking (the raw text is never kept).
    pub masked: String,
    /// Kinds that were masked, for the banner.
    pub masked_kinds: Vec<String>,
    pub reply: String,
    pub source: Source,
    pub verdict: Option<Verdict>,
    /// Human-readable steps: which layer fired and why, what was masked, which pattern.
    pub trace: Vec<String>,
    pub thumb: Option<bool>,
    /// Lines judged unusable and not said (a pattern, a model attempt), with their verdicts:
    /// the bot would never send them either (`chat::choose`).
    pub rejected: Vec<(String, Verdict)>,
    /// The exchange's row in the store, once saved.
    pub id: Option<i64>,
    /// When the user sent it (ms since the epoch), for pattern outcomes.
    pub at_ms: i64,
}

/// Where an answer in flight belongs: this chat (a closed and reopened chat is another one)
/// and its exchange. An answer for another chat is dropped, never shown under a new message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChatTarget {
    pub session: u64,
    pub exchange: usize,
}

pub struct ChatView {
    /// This chat's number (each chat mode opened is a new one).
    pub session: u64,
    /// Character id the user talks to.
    pub character: String,
    pub exchanges: Vec<Exchange>,
    pub selected: usize,
    pub input: TextArea<'static>,
    /// Keys go to the input box (Esc leaves it; `C` comes back).
    pub typing: bool,
    pub busy: bool,
}

impl ChatView {
    pub fn new(character: &str) -> ChatView {
        static SESSIONS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        ChatView {
            session: SESSIONS.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            character: character.to_string(),
            exchanges: Vec::new(),
            selected: 0,
            input: TextArea::default(),
            typing: true,
            busy: false,
        }
    }
}

fn name(id: &str) -> &'static str {
    if id == "ayu" { "あゆ" } else { "やな" }
}

/// The input box's frame: whom the message goes to and its keys, ending in … when the box is
/// narrower than the title.
fn input_frame(character: &str, width: u16) -> Block<'static> {
    let title = format!(
        " to {} — Enter send · Esc keys · C back here · ctrl-t other sister ",
        name(character)
    );
    Block::bordered().title(super::fit::line(Line::raw(title), width.saturating_sub(2)))
}

/// Progress of the chat message in flight.
#[derive(Debug, Clone)]
pub enum ChatMsg {
    Masked {
        masked: String,
        kinds: Vec<String>,
    },
    Trace(String),
    Token(String),
    Reply {
        text: String,
        source: Source,
    },
    Judged(Box<crate::director::Verdict>),
    /// A new model attempt begins: what streamed of the one before is void.
    Attempt(usize),
    /// A line judged unusable: not said, listed under the exchange.
    Rejected(String, Box<crate::director::Verdict>),
    /// The exchange's row id once it is in the database.
    Saved(i64),
    Done {
        id: Option<i64>,
        error: Option<crate::tui::error::UiError>,
    },
}

/// What a key or an action in chat mode asks of the workbench.
#[derive(Debug, Clone, PartialEq)]
pub enum ChatAsk {
    /// Not chat's key.
    NotMine,
    /// Handled here; the status line to show, if any.
    Done(Option<String>),
    /// Esc outside the input: close chat mode.
    Close,
    /// Send this message to `character` with her own earlier exchanges (the raw text leaves
    /// the chat's state here; only the masked text comes back).
    Send {
        text: String,
        character: String,
        history: Vec<crate::chat::Turn>,
        /// The exchange the answer belongs to.
        to: ChatTarget,
    },
    /// `/insights` typed.
    Insights,
    /// `/interview NAME` typed.
    Interview(String),
    /// 👍/👎 on stored exchange `id` (and on the pattern behind it, if any).
    Thumb {
        id: i64,
        up: bool,
        usage_id: Option<i64>,
    },
}

impl ChatView {
    /// Enter: /insights or /interview NAME, or the message sent.
    fn enter(&mut self) -> ChatAsk {
        let text = self.input.lines().join("\n").trim().to_string();
        if text == "/insights" {
            self.input = TextArea::default();
            return ChatAsk::Insights;
        }
        if let Some(name) = text.strip_prefix("/interview") {
            self.input = TextArea::default();
            let name = name.trim();
            let name = if name.is_empty() { "sample" } else { name };
            return ChatAsk::Interview(name.to_string());
        }
        if self.busy {
            return ChatAsk::Done(Some("still answering the last message".into()));
        }
        if text.is_empty() {
            return ChatAsk::Done(None);
        }
        self.input = TextArea::default();
        self.busy = true;
        self.exchanges.push(Exchange {
            character: self.character.clone(),
            masked: String::new(),
            masked_kinds: Vec::new(),
            reply: String::new(),
            source: Source::Pending,
            verdict: None,
            trace: Vec::new(),
            thumb: None,
            rejected: Vec::new(),
            id: None,
            at_ms: crate::patterns::stamp::now_ms(),
        });
        self.selected = self.exchanges.len() - 1;
        let character = self.character.clone();
        // Only her own conversation: the other sister's replies are not hers. Blocked ones
        // stay in as turns: `chat::context` counts them as flags and keeps their text out of
        // every prompt (the bot does the same).
        let history = self.exchanges[..self.exchanges.len() - 1]
            .iter()
            .filter(|e| e.character == character)
            .map(|e| crate::chat::Turn {
                user: e.masked.clone(),
                reply: e.reply.clone(),
                blocked: e.source == Source::Blocked,
            })
            .collect();
        ChatAsk::Send {
            text,
            character,
            history,
            to: ChatTarget {
                session: self.session,
                exchange: self.exchanges.len() - 1,
            },
        }
    }

    /// Keys while chat mode is on: typing in the input, Enter, ctrl-t, Esc.
    pub fn key(&mut self, key: KeyEvent) -> ChatAsk {
        if !self.typing {
            return if key.code == KeyCode::Esc {
                ChatAsk::Close
            } else {
                ChatAsk::NotMine
            };
        }
        match key.code {
            KeyCode::Esc => self.typing = false,
            KeyCode::Enter => return self.enter(),
            KeyCode::Char('t')
                if key
                    .modifiers
                    .contains(crossterm::event::KeyModifiers::CONTROL) =>
            {
                self.character = if self.character == "yana" {
                    "ayu"
                } else {
                    "yana"
                }
                .into();
                self.input = TextArea::default();
            }
            _ => {
                self.input.input(key);
            }
        }
        ChatAsk::Done(None)
    }

    /// Bound keys in chat mode: select, 👍/👎.
    pub fn action(&mut self, action: super::keymap::Action) -> ChatAsk {
        use super::keymap::Action;
        let n = self.exchanges.len();
        match action {
            Action::NextTurn => self.selected = (self.selected + 1).min(n.saturating_sub(1)),
            Action::PrevTurn => self.selected = self.selected.saturating_sub(1),
            Action::ThumbUp | Action::ThumbDown => {
                let up = action == Action::ThumbUp;
                let Some(e) = self.exchanges.get_mut(self.selected) else {
                    return ChatAsk::NotMine;
                };
                let Some(id) = e.id else {
                    return ChatAsk::Done(Some(
                        "this reply is not stored yet; 👍/👎 once it is".into(),
                    ));
                };
                e.thumb = Some(up);
                // A pattern's reply also counts for the pattern (seed 000 §6.1).
                let usage_id = match e.source {
                    Source::Pattern { usage_id, .. } => Some(usage_id),
                    _ => None,
                };
                return ChatAsk::Thumb { id, up, usage_id };
            }
            _ => return ChatAsk::NotMine,
        }
        ChatAsk::Done(None)
    }

    /// Progress of the message in flight to `to`; its failure, for the status line. An answer
    /// for another chat is dropped.
    pub fn apply(&mut self, to: ChatTarget, m: ChatMsg) -> Option<crate::tui::error::UiError> {
        if to.session != self.session {
            return None;
        }
        let e = self.exchanges.get_mut(to.exchange)?;
        match m {
            ChatMsg::Masked { masked, kinds } => {
                e.masked = masked;
                e.masked_kinds = kinds;
            }
            ChatMsg::Trace(s) => e.trace.push(s),
            ChatMsg::Token(d) => {
                e.source = Source::Llm;
                e.reply.push_str(&d);
            }
            ChatMsg::Reply { text, source } => {
                e.reply = text;
                e.source = source;
            }
            ChatMsg::Judged(v) => e.verdict = Some(*v),
            ChatMsg::Attempt(_) => {
                e.reply.clear();
                e.source = Source::Pending;
            }
            ChatMsg::Rejected(text, v) => e.rejected.push((text, *v)),
            ChatMsg::Saved(id) => e.id = Some(id),
            ChatMsg::Done { id, error } => {
                e.id = id.or(e.id);
                self.busy = false;
                if let Some(err) = error {
                    if e.source == Source::Pending {
                        e.source = Source::Failed(err.to_string());
                    }
                    return Some(err);
                }
            }
        }
        None
    }
}

pub fn render(f: &mut Frame, area: Rect, chat: Option<&ChatView>, t: &Theme) {
    let Some(chat) = chat else { return };
    let [convo, input] = Layout::vertical([Constraint::Min(3), Constraint::Length(3)]).areas(area);
    let title = format!(" chat with {} ", name(&chat.character));
    let block = Block::bordered()
        .title(title)
        .border_style(Style::new().fg(t.border));
    let inner = block.inner(convo);
    f.render_widget(block, convo);
    let width = inner.width.max(1) as usize;
    let mut lines: Vec<Line> = Vec::new();
    if let Some(kinds) = chat
        .exchanges
        .last()
        .map(|e| &e.masked_kinds)
        .filter(|k| !k.is_empty())
    {
        lines.push(Line::styled(
            format!("⚠ 個人情報をマスクしました: {}", kinds.join("・")),
            Style::new().fg(t.warn).add_modifier(Modifier::BOLD),
        ));
    }
    for (i, e) in chat.exchanges.iter().enumerate() {
        let sel = if i == chat.selected && !chat.typing {
            Style::new().bg(t.selected_bg)
        } else {
            Style::new()
        };
        lines.push(Line::styled(
            "あなた",
            sel.fg(t.dim).add_modifier(Modifier::BOLD),
        ));
        for w in wrap(&e.masked, width.saturating_sub(2)) {
            lines.push(Line::styled(format!("  {w}"), sel.fg(t.text)));
        }
        let mut head = vec![Span::styled(
            name(&e.character).to_string(),
            sel.fg(t.speaker(&e.character)).add_modifier(Modifier::BOLD),
        )];
        head.push(Span::raw(" "));
        match &e.source {
            Source::Blocked => head.push(badge(Some(Status::Retry), t)),
            _ => head.push(badge(e.verdict.as_ref().map(|v| v.status), t)),
        }
        head.push(Span::styled(source_label(&e.source), sel.fg(t.dim)));
        match e.thumb {
            Some(true) => head.push(Span::raw(" 👍")),
            Some(false) => head.push(Span::raw(" 👎")),
            None => {}
        }
        lines.push(Line::from(head));
        for (text, v) in &e.rejected {
            let why = format!("  ✗ {} not said: ", v.status.as_str());
            for (i, w) in wrap(text, width.saturating_sub(why.chars().count() + 2))
                .iter()
                .enumerate()
            {
                let lead = if i == 0 {
                    why.clone()
                } else {
                    " ".repeat(why.chars().count())
                };
                lines.push(Line::styled(format!("{lead}{w}"), sel.fg(t.dim)));
            }
        }
        for w in wrap(&e.reply, width.saturating_sub(2)) {
            lines.push(Line::styled(format!("  {w}"), sel.fg(t.text)));
        }
    }
    let h = inner.height as usize;
    let skip = lines.len().saturating_sub(h);
    f.render_widget(
        Paragraph::new(lines.into_iter().skip(skip).collect::<Vec<_>>()),
        inner,
    );
    let frame = input_frame(&chat.character, input.width);
    let inside = frame.inner(input);
    f.render_widget(frame, input);
    f.render_widget(&chat.input, inside);
}

fn source_label(s: &Source) -> String {
    match s {
        Source::Pending => " …".into(),
        Source::Blocked => " blocked".into(),
        Source::Pattern {
            pattern_id, rank, ..
        } => format!(" pattern #{pattern_id} ({rank})"),
        Source::Llm => " model".into(),
        Source::Fallback => " fallback line (no usable attempt) · review".into(),
        Source::Withheld => " nothing said (her fallback was not usable either) · review".into(),
        Source::Failed(e) => format!(" failed: {e}"),
    }
}

/// The detail pane in chat mode: the selected exchange's trace and verdict.
pub fn detail(f: &mut Frame, area: Rect, chat: Option<&ChatView>, t: &Theme) {
    let Some(chat) = chat else { return };
    let block = Block::bordered()
        .title(" trace ")
        .border_style(Style::new().fg(t.border));
    let inner = block.inner(area);
    f.render_widget(block, area);
    let width = inner.width.max(1) as usize;
    let Some(e) = chat.exchanges.get(chat.selected) else {
        let hint = "Type a message to the sister and press Enter. Each step — PII masking, the five safety layers, the pattern chosen, the Director's verdict — shows up here.";
        let lines: Vec<Line> = wrap(hint, width)
            .into_iter()
            .map(|l| Line::styled(l, Style::new().fg(t.dim)))
            .collect();
        f.render_widget(Paragraph::new(lines), inner);
        return;
    };
    let mut lines: Vec<Line> = Vec::new();
    for step in &e.trace {
        for (i, w) in wrap(step, width.saturating_sub(2)).into_iter().enumerate() {
            let prefix = if i == 0 { "· " } else { "  " };
            lines.push(Line::styled(
                format!("{prefix}{w}"),
                Style::new().fg(t.text),
            ));
        }
    }
    if let Some(v) = &e.verdict {
        lines.push(Line::raw(""));
        lines.push(Line::from(vec![
            Span::styled("Director ", Style::new().fg(t.dim)),
            badge(Some(v.status), t),
        ]));
        for fd in v.reported_findings() {
            for w in wrap(
                &format!("[{}] {} → {}", fd.rule, fd.message, fd.suggestion),
                width,
            ) {
                lines.push(Line::styled(w, Style::new().fg(t.status(fd.status))));
            }
        }
    }
    f.render_widget(Paragraph::new(lines), inner);
}
