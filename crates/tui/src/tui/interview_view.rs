//! Interview mode of the chat (issue 12 §1): the conversation with the interviewing sister and
//! a status bar that shows the state, the user-turn count and the deepening count live. The
//! view is fed the runner's [`Event`]s (`apply`, pure) and drawn by [`render`].

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph};

use super::theme::Theme;
use super::theme::badge;
use super::wrap::wrap;
use crate::director::Status;
use crate::interview::{Event, InterviewConfig, State};

#[derive(Debug, Clone, PartialEq)]
pub struct Said {
    /// `user` or the sister's id.
    pub who: String,
    pub text: String,
    /// model | fallback | closing (the sister's lines).
    pub source: Option<&'static str>,
    pub verdict: Option<Status>,
}

#[derive(Debug, Clone)]
pub struct InterviewView {
    /// The run number its events carry.
    pub run: u64,
    pub name: String,
    pub sister: String,
    pub state: State,
    pub user_turns: usize,
    pub max_turns: usize,
    pub deep: usize,
    pub max_deep: usize,
    pub fallback: bool,
    pub lines: Vec<Said>,
    /// The last error shown (a model failure that started the fallback).
    pub notice: Option<String>,
    /// What the user is typing.
    pub input: String,
}

impl InterviewView {
    pub fn new(run: u64, cfg: &InterviewConfig) -> InterviewView {
        InterviewView {
            run,
            name: cfg.name.clone(),
            sister: cfg.sister.clone(),
            state: State::Intro,
            user_turns: 0,
            max_turns: cfg.max_turns,
            deep: 0,
            max_deep: cfg.max_deep,
            fallback: false,
            lines: Vec::new(),
            notice: None,
            input: String::new(),
        }
    }

    /// Follows one runner event.
    pub fn apply(&mut self, e: &Event) {
        self.state = e.state;
        self.user_turns = e.user_turns;
        self.deep = e.deep;
        self.fallback = e.fallback;
        match e.event {
            "reply" => self.lines.push(Said {
                who: self.sister.clone(),
                text: e.text.clone().unwrap_or_default(),
                source: e.source,
                verdict: e.verdict,
            }),
            "user" => self.lines.push(Said {
                who: "user".into(),
                text: e.text.clone().unwrap_or_default(),
                source: None,
                verdict: None,
            }),
            "model_failed" => {
                self.notice = Some("モデルが応答しないため、固定の質問に切り替えました".into())
            }
            _ => {}
        }
    }
}

fn sister_name(id: &str) -> &'static str {
    crate::interview::prompt::sister_name(id)
}

pub fn render(f: &mut Frame, area: Rect, v: &InterviewView, t: &Theme) {
    let [status, convo, input] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(3),
        Constraint::Length(3),
    ])
    .areas(area);
    f.render_widget(Paragraph::new(status_line(v, t)), status);
    let block = Block::bordered()
        .title(format!(" {}のインタビュー ", sister_name(&v.sister)))
        .border_style(Style::new().fg(t.border));
    let inner = block.inner(convo);
    f.render_widget(block, convo);
    let width = inner.width.max(1) as usize;
    let lines = conversation_lines(v, width, t);
    let skip = lines.len().saturating_sub(inner.height as usize);
    f.render_widget(
        Paragraph::new(lines.into_iter().skip(skip).collect::<Vec<_>>()),
        inner,
    );
    let hint = if v.state == State::Done {
        " 終了しました（分析待ち） "
    } else {
        " 答えを入力して Enter ・ [スキップ] は Tab "
    };
    f.render_widget(
        Paragraph::new(v.input.as_str()).block(
            Block::bordered()
                .title(hint)
                .border_style(Style::new().fg(t.border)),
        ),
        input,
    );
}

/// The status line: the interview's name, state, turns, depth and mode.
fn status_line(v: &InterviewView, t: &Theme) -> Line<'static> {
    let mode = if v.fallback {
        Span::styled(
            "  固定質問モード",
            Style::new().fg(t.warn).add_modifier(Modifier::BOLD),
        )
    } else {
        Span::styled("  model", Style::new().fg(t.pass))
    };
    Line::from(vec![
        Span::styled(
            format!(" interview {} ", v.name),
            Style::new().fg(t.accent).add_modifier(Modifier::BOLD),
        ),
        Span::styled("state ", Style::new().fg(t.dim)),
        Span::styled(
            v.state.as_str(),
            Style::new().fg(t.text).add_modifier(Modifier::BOLD),
        ),
        Span::styled(
            format!("  turn {}/{}", v.user_turns, v.max_turns),
            Style::new().fg(t.text),
        ),
        Span::styled(
            format!("  deep {}/{}", v.deep, v.max_deep),
            Style::new().fg(t.text),
        ),
        mode,
    ])
}

/// The interview so far: her lines (with the Director's badge or their source) and yours.
fn conversation_lines(v: &InterviewView, width: usize, t: &Theme) -> Vec<Line<'static>> {
    let mut lines: Vec<Line> = Vec::new();
    if let Some(n) = &v.notice {
        lines.push(Line::styled(
            format!("⚠ {n}"),
            Style::new().fg(t.warn).add_modifier(Modifier::BOLD),
        ));
    }
    for s in &v.lines {
        if s.who == "user" {
            lines.push(Line::styled(
                "あなた",
                Style::new().fg(t.dim).add_modifier(Modifier::BOLD),
            ));
        } else {
            let mut head = vec![Span::styled(
                sister_name(&s.who),
                Style::new()
                    .fg(t.speaker(&s.who))
                    .add_modifier(Modifier::BOLD),
            )];
            if s.source == Some("model") {
                head.push(Span::raw(" "));
                head.push(badge(s.verdict, t));
            }
            if let Some(src) = s.source.filter(|s| *s != "model") {
                head.push(Span::styled(format!(" ({src})"), Style::new().fg(t.dim)));
            }
            lines.push(Line::from(head));
        }
        for w in wrap(&s.text, width.saturating_sub(2)) {
            lines.push(Line::styled(format!("  {w}"), Style::new().fg(t.text)));
        }
    }
    lines
}

/// What the interview runtime tells the app.
#[derive(Debug, Clone)]
pub enum InterviewMsg {
    /// An interview started, with its run number (each `/interview` is a new one).
    Started(u64, Box<InterviewConfig>),
    /// An event of interview run `u64`: dropped when another interview is on screen.
    Event(u64, Box<Event>),
    /// A line for the status bar with its level (an error, or the analysis result).
    Notice(crate::tui::error::Notice),
    Insights(Result<Box<super::insights_view::InsightsView>, crate::tui::error::UiError>),
}

/// What a key in the interview pane asks of the workbench.
#[derive(Debug, Clone, PartialEq)]
pub enum InterviewAsk {
    /// Handled here (typing, nothing to send).
    Nothing,
    /// Esc: leave the interview (the conversation stays saved).
    Leave,
    /// Enter (or Tab: [スキップ]): send this answer.
    Answer(String),
}

impl InterviewView {
    /// Keys while interview mode is on: typing, Enter answers, Tab sends [スキップ], Esc
    /// leaves.
    pub fn key(&mut self, key: crossterm::event::KeyEvent) -> InterviewAsk {
        use crossterm::event::KeyCode;
        match key.code {
            KeyCode::Esc => return InterviewAsk::Leave,
            KeyCode::Enter if self.state != State::Done => {
                let text = self.input.trim().to_string();
                self.input.clear();
                if !text.is_empty() {
                    return InterviewAsk::Answer(text);
                }
            }
            KeyCode::Tab if self.state != State::Done => {
                return InterviewAsk::Answer(crate::interview::state::SKIP.into());
            }
            KeyCode::Backspace => {
                self.input.pop();
            }
            KeyCode::Char(c) => self.input.push(c),
            _ => {}
        }
        InterviewAsk::Nothing
    }
}
