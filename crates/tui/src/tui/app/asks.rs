//! The workbench's side of the rooms (issue 23): each pane answers a key with its own Ask
//! (`RulesAsk`, `PatternsAsk`, `VisAsk`, `ConversationsAsk`, `InterviewAsk`, …) and these
//! turn the answers into commands, dialogs and the status line. The panes themselves never see
//! the `App`.

use super::*;

impl App {
    /// `B`: the next branch on screen, once the run is paused or done.
    pub(crate) fn next_branch(&mut self) {
        if self.branches.is_empty() {
            self.status = "this run has no branches (regenerating a turn makes one)".into();
            return;
        }
        if self.running() {
            self.status = "branches can be switched once the run is paused or done".into();
            return;
        }
        self.branches.next(&mut self.run.turns);
        self.selected = self.selected.min(self.run.turns.len().saturating_sub(1));
        self.attempt = None;
        self.status = format!("showing {}", self.branches.label());
    }
}

impl App {
    pub(crate) fn interview_msg(&mut self, m: crate::tui::interview_view::InterviewMsg) {
        use crate::interview::state::State;
        use crate::tui::interview_view::{InterviewMsg, InterviewView};
        self.dirty = true;
        match m {
            InterviewMsg::Started(run, cfg) => {
                self.interview = Some(InterviewView::new(run, &cfg));
                self.status = format!(
                    "interview {} — Enter answers, Tab skips, Esc leaves",
                    cfg.name
                );
            }
            // An event of an interview no longer on screen (left, or another started) is dropped.
            InterviewMsg::Event(run, _) if self.interview.as_ref().is_none_or(|v| v.run != run) => {
            }
            InterviewMsg::Event(_, e) => {
                if let Some(v) = self.interview.as_mut() {
                    v.apply(&e);
                }
                if e.event == "done" {
                    self.status = if e.state == State::Done {
                        "interview finished — analysis queued (kakeai analyze --interview …)".into()
                    } else {
                        "interview left unfinished".into()
                    };
                }
            }
            InterviewMsg::Notice(n) => self.notify(n.level, n.text),
            InterviewMsg::Insights(Ok(v)) => {
                self.status = "insights — ←/→ interview or run set, ↑/↓ card, Esc back".into();
                self.insights = Some(*v);
            }
            InterviewMsg::Insights(Err(e)) => {
                self.notify(e.level(), e.context("insights").to_string())
            }
        }
    }

    /// Keys for the insights view or the interview pane; None when neither is open.
    pub(crate) fn interview_key(
        &mut self,
        key: crossterm::event::KeyEvent,
    ) -> Option<Vec<Command>> {
        use crate::tui::interview_view::InterviewAsk;
        if let Some(i) = self.insights.as_mut() {
            if key.code == crossterm::event::KeyCode::Esc {
                self.insights = None;
            } else {
                i.on_key(key);
            }
            return Some(Vec::new());
        }
        Some(match self.interview.as_mut()?.key(key) {
            InterviewAsk::Nothing => Vec::new(),
            InterviewAsk::Leave => {
                self.interview = None;
                self.status = "interview closed".into();
                vec![Command::InterviewLeave]
            }
            InterviewAsk::Answer(text) => vec![Command::InterviewAnswer(text)],
        })
    }
}

impl App {
    /// Keys while the compare view is open (it takes every key); None when it is not.
    pub(crate) fn compare_key(&mut self, key: crossterm::event::KeyEvent) -> Option<Vec<Command>> {
        let v = self.compare.as_mut()?;
        match key.code {
            crossterm::event::KeyCode::Esc | crossterm::event::KeyCode::Char('q') => {
                self.compare = None
            }
            _ => {
                v.key(key);
            }
        }
        Some(Vec::new())
    }

    /// A loaded comparison (or why not).
    pub(crate) fn on_compare(&mut self, r: Result<crate::tui::compare_view::CompareView, UiError>) {
        match r {
            Ok(v) => {
                self.runs = None;
                self.compare = Some(v);
                self.status = "compare view: ↑/↓ turns, Esc closes".into();
            }
            Err(e) => self.notify(e.level(), e.context("compare").to_string()),
        }
    }
}

impl App {
    /// The rules room changed a value: adopt the rules and judge the open run again.
    pub(crate) fn adopt_rules(
        &mut self,
        rules: crate::director::RuleSet,
        rule: Option<crate::director::RuleId>,
    ) {
        use crate::tui::tuning::rejudge_only;
        let prev = std::mem::replace(&mut self.rules, rules).version;
        let analyzer = self.analyzer.clone();
        let mut rj = rejudge_only(
            &mut self.run,
            &self.rules,
            &analyzer,
            &mut self.cache,
            rule.map(|r| (r, prev.as_str())),
        );
        self.status = format!(
            "ruleset {}: {} of {} verdicts flipped",
            self.rules.version,
            rj.flipped.len(),
            rj.judged
        );
        self.header.ruleset = self.rules.version.clone();
        rj.run_id = self.run.run_id;
        self.rooms.rules.rejudge = Some(rj);
    }

    /// Carries out a room's answer; None: the key was not the room's.
    pub(crate) fn answer(&mut self, ask: crate::tui::panes::Ask) -> Option<Vec<Command>> {
        use crate::tui::panes::Ask;
        Some(match ask {
            Ask::NotMine => return None,
            Ask::Done(said) => {
                if let Some(s) = said {
                    self.status = s;
                }
                Vec::new()
            }
            Ask::Fail(e) => {
                self.notify(e.level(), e.to_string());
                Vec::new()
            }
            Ask::Run(said, cmds) => {
                if let Some(s) = said {
                    self.status = s;
                }
                cmds
            }
            Ask::Dialog(m) => {
                self.modal = Some(*m);
                Vec::new()
            }
            Ask::Rejudge(rules, rule) => {
                self.adopt_rules(*rules, rule);
                Vec::new()
            }
        })
    }
}

impl App {
    /// Blind mode's read-only view of this session (see `blind`).
    pub fn blind_view(&self) -> crate::tui::blind::Blind<'_> {
        crate::tui::blind::Blind {
            on: self.blind,
            log: &self.review_log,
            me: self.reviewer.as_deref(),
        }
    }
}

impl App {
    /// The attempt the detail pane shows, as a request key.
    pub fn selected_request(&self) -> Option<crate::tui::request_view::Key> {
        crate::tui::request_view::selected_key(&self.run, self.selected, self.attempt)
    }

    /// `x`: findings ↔ request.
    pub(crate) fn toggle_request(&mut self) -> Vec<Command> {
        self.status = self.rooms.request.toggle().into();
        self.right_scroll = 0;
        Vec::new()
    }

    /// The read the request view needs now, if any.
    pub(crate) fn request_sync(&mut self) -> Option<Command> {
        let key = self.rooms.request.sync(self.selected_request())?;
        // Another attempt's request starts at its top.
        self.right_scroll = 0;
        Some(Command::LoadRequest(key))
    }
}

impl App {
    /// The read-only context the panes draw from.
    pub fn ctx(&self) -> crate::tui::ctx::Ctx<'_> {
        ctx!(self)
    }
}

impl App {
    /// What `P` would promote: in chat, the selected exchange (the user's masked message and
    /// the reply); otherwise the selected duo line, with the partner's line before it.
    pub(crate) fn promotion(&self) -> Option<Promotion> {
        if let Some(chat) = &self.chat {
            let e = chat.exchanges.get(chat.selected)?;
            if e.reply.is_empty() {
                return None;
            }
            return Some(Promotion {
                character: chat.character.clone(),
                user_message_type: String::new(),
                user_message_example: e.masked.clone(),
                bot_response: e.reply.clone(),
                bot_response_type: String::new(),
            });
        }
        let i = self.selected;
        let line = self.run.turns.get(i)?;
        let before = self.run.turns.get(i.checked_sub(1)?)?;
        let text = |t: &crate::tui::view::TurnView| t.shown().map(|a| a.text.clone());
        Some(Promotion {
            character: line.speaker.clone(),
            user_message_type: String::new(),
            user_message_example: text(before)?,
            bot_response: text(line)?,
            bot_response_type: String::new(),
        })
    }
}

impl App {
    /// The secret editor: Enter is a newline, ctrl-s applies, Esc cancels.
    pub(crate) fn secret_key(&mut self, key: crossterm::event::KeyEvent) -> Option<Vec<Command>> {
        use crossterm::event::{KeyCode, KeyModifiers};
        let Some(Modal::Secret {
            key: item_key,
            text,
        }) = self.modal.as_mut()
        else {
            return None;
        };
        if key.code == KeyCode::Char('s') && key.modifiers.contains(KeyModifiers::CONTROL) {
            let yaml = text.lines().join("\n");
            let item_key = item_key.clone();
            let applied = match self.rooms.vis.as_mut() {
                Some(v) => v.apply_secret(&item_key, &yaml),
                None => Err(crate::tui::error::UiError::Missing("no vault".into())),
            };
            match applied {
                Ok(said) => {
                    self.modal = None;
                    self.status = said;
                }
                Err(e) => self.fail(format!("secret not applied: {e}")),
            }
        } else if key.code == KeyCode::Esc {
            self.modal = None;
        } else {
            text.input(key);
        }
        Some(Vec::new())
    }
}

impl App {
    /// The chat's answer, carried out as a room's (`answer`).
    fn chat_ask(&mut self, ask: crate::tui::chat::ChatAsk) -> Option<Vec<Command>> {
        use crate::tui::chat::ChatAsk;
        use crate::tui::panes::Ask;
        let run = |cmds| Ask::Run(None, cmds);
        let ask = match ask {
            ChatAsk::NotMine => Ask::NotMine,
            ChatAsk::Done(said) => Ask::Done(said),
            ChatAsk::Close => {
                self.chat = None;
                Ask::Done(Some("chat closed".into()))
            }
            ChatAsk::Send {
                text,
                character,
                history,
                to,
            } => run(vec![Command::ChatSend {
                text,
                character,
                history,
                to,
            }]),
            ChatAsk::Insights => run(vec![Command::InsightsOpen]),
            ChatAsk::Interview(name) => run(vec![Command::InterviewStart(name)]),
            ChatAsk::Thumb { id, up, usage_id } => {
                let mut cmds = vec![Command::ChatThumb { id, up }];
                if let Some(usage_id) = usage_id {
                    cmds.push(Command::PatternFeedback { usage_id, up });
                }
                run(cmds)
            }
        };
        self.answer(ask)
    }

    /// A terminal sends Alt+key as Esc then the key, so an Esc read together with the next key
    /// (a quick Esc v, a slow link) arrives as Alt+v. In the message box that is Esc, then the
    /// key: the key without Alt, to be handled after an Esc.
    pub(crate) fn alt_in_chat(
        &self,
        focus: crate::tui::focus::Focus,
        key: &crossterm::event::KeyEvent,
    ) -> Option<crossterm::event::KeyEvent> {
        use crossterm::event::{KeyCode, KeyModifiers};
        let typing = self.chat.as_ref().is_some_and(|c| c.typing);
        let alt_char = matches!(key.code, KeyCode::Char(_)) && key.modifiers == KeyModifiers::ALT;
        (focus == crate::tui::focus::Focus::Chat && typing && alt_char)
            .then(|| crossterm::event::KeyEvent::new(key.code, KeyModifiers::NONE))
    }

    /// Keys while chat mode is on; None when the key is not the chat's.
    pub(crate) fn chat_key(&mut self, key: crossterm::event::KeyEvent) -> Option<Vec<Command>> {
        let ask = self.chat.as_mut()?.key(key);
        self.chat_ask(ask)
    }

    /// Chat-mode reactions to bound keys: open / focus the input, select, 👍/👎.
    pub(crate) fn chat_action(&mut self, action: Action) -> Option<Vec<Command>> {
        if action == Action::Chat {
            match self.chat.as_mut() {
                Some(c) => c.typing = true,
                None => {
                    self.chat = Some(crate::tui::chat::ChatView::new("yana"));
                    self.status =
                        "chat mode: messages are masked and judged before the sister sees them"
                            .into();
                }
            }
            return Some(Vec::new());
        }
        let ask = self.chat.as_mut()?.action(action);
        self.chat_ask(ask)
    }

    pub(crate) fn on_chat(&mut self, to: crate::tui::chat::ChatTarget, m: ChatMsg) {
        if let Some(err) = self.chat.as_mut().and_then(|c| c.apply(to, m)) {
            self.notify(err.level(), err.to_string());
        }
    }
}
