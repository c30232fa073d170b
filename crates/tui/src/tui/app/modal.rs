//! The input overlays' keys: topic, owner instruction, verdict override and feedback.

use crossterm::event::{KeyCode, KeyEvent};
use ratatui_textarea::TextArea;
use serde_json::json;

use crate::director::Status;
use crate::duo::Event;
use crate::store::ActionKind;
use crate::tui::app::{App, CATEGORIES, Command, Modal, review_save, save};
use crate::tui::command::Target;

/// The seed's reply types, in the order ←/→ walks them.
pub(crate) const PROMOTE_TYPES: [&str; 3] = ["プロレス受け", "流し", "カウンター"];

impl App {
    pub(crate) fn modal_key(&mut self, key: KeyEvent) -> Vec<Command> {
        let Some(modal) = self.modal.as_mut() else {
            return Vec::new();
        };
        if crate::tui::app::multiline::is_newline(&key) {
            crate::tui::app::multiline::newline(modal);
            return Vec::new();
        }
        match key.code {
            KeyCode::Esc => {
                self.modal = None;
                return Vec::new();
            }
            KeyCode::Left | KeyCode::Right => {
                let right = key.code == KeyCode::Right;
                match modal {
                    Modal::Override { status, .. } => {
                        let order = [Status::Pass, Status::Warn, Status::Retry];
                        let i = order.iter().position(|s| s == status).unwrap_or(0);
                        *status = order[if right { (i + 1) % 3 } else { (i + 2) % 3 }];
                        return Vec::new();
                    }
                    Modal::Promote { kind, .. } => {
                        *kind = if right {
                            (*kind + 1) % 3
                        } else {
                            (*kind + 2) % 3
                        };
                        return Vec::new();
                    }
                    Modal::Feedback { category, .. } => {
                        let n = CATEGORIES.len();
                        *category = if right {
                            (*category + 1) % n
                        } else {
                            (*category + n - 1) % n
                        };
                        return Vec::new();
                    }
                    _ => {}
                }
            }
            KeyCode::Enter => {
                let Some(modal) = self.modal.take() else {
                    return Vec::new();
                };
                return self.submit(modal);
            }
            _ => {}
        }
        match modal {
            Modal::Topic(t) | Modal::Inject(t) => {
                t.input(key);
            }
            Modal::Override { reason: t, .. }
            | Modal::Feedback { text: t, .. }
            | Modal::Secret { text: t, .. }
            | Modal::Promote { text: t, .. }
            | Modal::Draft { text: t, .. } => {
                t.input(key);
            }
        }
        Vec::new()
    }

    fn submit(&mut self, modal: Modal) -> Vec<Command> {
        match modal {
            // Handled by the visibility pane's editor (Enter is a newline there).
            Modal::Secret { .. } => Vec::new(),
            Modal::Promote {
                mut promotion,
                kind,
                text,
            } => {
                let t = text.lines().join(" ").trim().to_string();
                if t.is_empty() {
                    self.status = "a message type is needed (e.g. からかい)".into();
                    return Vec::new();
                }
                promotion.user_message_type = t;
                promotion.bot_response_type = PROMOTE_TYPES[kind % 3].into();
                vec![Command::Promote(promotion)]
            }
            Modal::Draft {
                dropout,
                kind,
                text,
            } => self.submit_draft(dropout, kind, text),
            Modal::Topic(t) => {
                let topic = t.lines().join(" ").trim().to_string();
                if topic.is_empty() {
                    return Vec::new();
                }
                vec![Command::StartLive(topic)]
            }
            Modal::Inject(t) => {
                let text = t.lines().join("\n").trim().to_string();
                if text.is_empty() {
                    return Vec::new();
                }
                let next = self.run.turns.last().map(|t| t.turn + 1).unwrap_or(1);
                self.status = format!("instruction queued for turn {next}");
                vec![
                    Command::Control(Event::Inject(text.clone())),
                    save(None, ActionKind::Inject, json!({"instruction": text})),
                ]
            }
            Modal::Override {
                target: Target::Reply(id),
                status,
                reason,
            } => {
                let note = reason.lines().join("\n").trim().to_string();
                vec![Command::LineOverride { id, status, note }]
            }
            Modal::Override {
                target: Target::Turn(turn, who),
                status,
                reason: area,
            } => self.submit_override(status, area, (turn, who)),
            Modal::Feedback {
                turn,
                category,
                text,
                ..
            } => self.submit_feedback(category, text, turn),
        }
    }

    /// A counterfactual draft accepted as a pattern: line 1 the message type, line 2 the reply.
    fn submit_draft(
        &mut self,
        dropout: i64,
        kind: String,
        text: TextArea<'static>,
    ) -> Vec<Command> {
        let lines = text.lines();
        let message_type = lines
            .first()
            .map(|l| l.trim().to_string())
            .unwrap_or_default();
        let reply = lines
            .get(1..)
            .unwrap_or_default()
            .join("")
            .trim()
            .to_string();
        if message_type.is_empty() || reply.is_empty() {
            self.status = "line 1 needs the message type (e.g. からかい), line 2 the reply".into();
            // Keep the reviewer's text: reopen the editor as it was.
            self.modal = Some(Modal::Draft {
                dropout,
                kind,
                text,
            });
            return Vec::new();
        }
        vec![Command::AcceptCounterfactual {
            dropout,
            kind,
            message_type,
            text: reply,
        }]
    }

    /// A reviewer's override of the selected turn's verdict (one that changes nothing is refused).
    fn submit_override(
        &mut self,
        status: Status,
        area: TextArea<'static>,
        (turn, who): (usize, String),
    ) -> Vec<Command> {
        let reason = area.lines().join("\n").trim().to_string();
        let blind = self.blind;
        let Some(t) = self.run.turns.iter_mut().find(|t| t.turn == turn) else {
            self.fail(format!(
                "turn {turn} is no longer on screen: override not saved"
            ));
            return Vec::new();
        };
        let from = t.shown().and_then(|a| a.verdict.as_ref().map(|v| v.status));
        // An override that changes nothing is refused (the dialog stays open); in blind
        // mode the verdict is hidden, so it is kept and shown as "confirmed".
        if from == Some(status) && !blind {
            self.status = format!(
                "turn {} is already {}: an override must change the verdict (+ agrees with it)",
                t.turn,
                status.as_str()
            );
            self.modal = Some(Modal::Override {
                target: Target::Turn(turn, who),
                status,
                reason: area,
            });
            return Vec::new();
        }
        t.review.override_to = Some(status);
        let what = format!("override → {} on turn {}", status.as_str(), t.turn);
        self.status = what.clone();
        self.said = Some(what);
        vec![review_save(
            t.review.queue(),
            Some(turn),
            ActionKind::Override,
            json!({"from": from, "to": status, "reason": reason, "speaker": t.speaker}),
        )]
    }

    /// A feedback note on the selected turn: line 1 what is wrong, the rest the fix.
    fn submit_feedback(
        &mut self,
        category: usize,
        text: TextArea<'static>,
        turn: usize,
    ) -> Vec<Command> {
        let lines = text.lines();
        let description = lines.first().cloned().unwrap_or_default();
        let fix = lines.get(1..).map(|l| l.join("\n")).unwrap_or_default();
        let Some(t) = self.run.turns.iter_mut().find(|t| t.turn == turn) else {
            self.fail(format!(
                "turn {turn} is no longer on screen: note not saved"
            ));
            return Vec::new();
        };
        t.review.notes += 1;
        let what = format!("feedback note on turn {}", t.turn);
        self.status = what.clone();
        self.said = Some(what);
        vec![review_save(
            t.review.queue(),
            Some(turn),
            ActionKind::Feedback,
            json!({"issue_type": CATEGORIES[category], "description": description, "suggested_fix": fix, "speaker": t.speaker}),
        )]
    }
}
