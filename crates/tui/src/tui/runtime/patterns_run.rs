//! The runtime side of the patterns pane and of pattern replies in chat: every query and write
//! goes through the store's single writer, off the UI task, and reports back as a `UiMsg`.

use crate::patterns::counterfactual::{self as cf, Persona};
use crate::patterns::{self as pat, Character, NewPattern, ResponseType};
use crate::store::{Store, StoreError};
use crate::tui::Runtime;
use crate::tui::app::{Command, Promotion, UiMsg};
use crate::tui::error::UiError;
use crate::tui::panes::RoomMsg;
use crate::tui::patterns::DropoutRow;

fn se(e: impl std::fmt::Display) -> StoreError {
    StoreError::Invalid(e.to_string())
}

/// The dropout window of seed 000 §7 (a user who does not answer within it has left).
pub const WINDOW_SECS: i64 = 30 * 60;

fn dropouts(s: &mut Store) -> Result<Vec<DropoutRow>, StoreError> {
    let now = pat::stamp::now_ms();
    let list = pat::dropouts::dropouts(s.db(), WINDOW_SECS, now).map_err(se)?;
    let mut out = Vec::new();
    for d in list {
        let stored = cf::stored_drafts(s.db(), d.dropout_id).map_err(se)?;
        let message_type = stored.iter().find_map(|sd| sd.user_message_type.clone());
        let drafts = stored
            .into_iter()
            .map(|sd| (sd.bot_response_type.as_str().to_string(), sd.text))
            .collect();
        out.push(DropoutRow {
            id: d.dropout_id,
            character: d
                .character
                .map(|c| c.as_str().to_string())
                .unwrap_or_default(),
            user_line: d.user_text.unwrap_or_default(),
            bot_line: d.bot_text,
            drafts,
            message_type,
        });
    }
    Ok(out)
}

impl Runtime {
    fn reload_dropouts(&self) {
        let (store, tx) = (self.services.store.clone(), self.tx.clone());
        tokio::spawn(async move {
            let r = store.call(dropouts).await.map_err(UiError::from);
            let _ = tx.send(UiMsg::Room(RoomMsg::Dropouts(r)));
        });
    }

    /// 👍/👎 on a pattern reply: recorded on its usage-log row (seed §6.1), then the list
    /// is reloaded so the pane shows the new like rate.
    pub(crate) fn pattern_feedback(&mut self, usage_id: i64, up: bool) {
        let (store, tx) = (self.services.store.clone(), self.tx.clone());
        let value = if up { 1 } else { -1 };
        tokio::spawn(async move {
            let r = store
                .call(move |s| {
                    pat::usage::feedback(s.db(), usage_id, value)
                        .map(|_| ())
                        .map_err(se)
                })
                .await;
            let msg = match r {
                Ok(()) => Ok(format!(
                    "pattern feedback {} saved ✓",
                    if up { "👍" } else { "👎" }
                )),
                Err(e) => Err(UiError::Store(format!("pattern feedback NOT saved: {e}"))),
            };
            let _ = tx.send(UiMsg::outcome(msg));
            let r = store
                .call(crate::tui::patterns::read_rows)
                .await
                .map_err(UiError::from);
            let _ = tx.send(UiMsg::Room(RoomMsg::Patterns(r)));
        });
    }

    pub(crate) fn patterns_command(&mut self, cmd: Command) {
        match cmd {
            Command::LoadDropouts => self.reload_dropouts(),
            Command::DraftCounterfactuals { dropout } => self.draft(dropout),
            Command::AcceptCounterfactual {
                dropout,
                kind,
                message_type,
                text,
            } => {
                let (store, tx) = (self.services.store.clone(), self.tx.clone());
                tokio::spawn(async move {
                    let r = store
                        .call(move |s| {
                            let t = ResponseType::parse(&kind)
                                .ok_or_else(|| se(format!("unknown reply type {kind}")))?;
                            cf::accept(
                                s.db(),
                                &cf::Accept {
                                    dropout_id: dropout,
                                    bot_response_type: t,
                                    text: Some(&text),
                                    character: None,
                                    user_message_type: Some(&message_type),
                                    window_secs: WINDOW_SECS,
                                    as_of: pat::stamp::now_ms(),
                                },
                            )
                            .map_err(se)
                        })
                        .await;
                    let msg = match r {
                        Ok(p) => Ok(format!(
                            "pattern #{} added (counterfactual) ✓",
                            p.pattern_id
                        )),
                        Err(e) => Err(UiError::Store(format!("not accepted: {e}"))),
                    };
                    let _ = tx.send(UiMsg::outcome(msg));
                    let r = store
                        .call(crate::tui::patterns::read_rows)
                        .await
                        .map_err(UiError::from);
                    let _ = tx.send(UiMsg::Room(RoomMsg::Patterns(r)));
                    let r = store.call(dropouts).await.map_err(UiError::from);
                    let _ = tx.send(UiMsg::Room(RoomMsg::Dropouts(r)));
                });
            }
            Command::Promote(p) => self.promote(*p),
            _ => {}
        }
    }

    fn draft(&mut self, dropout: i64) {
        let (store, tx, llm) = (
            self.services.store.clone(),
            self.tx.clone(),
            self.services.llm.clone(),
        );
        let rules = self.app.rules.clone();
        tokio::spawn(async move {
            let found = store
                .call(move |s| {
                    pat::dropouts::dropout(s.db(), dropout, WINDOW_SECS, pat::stamp::now_ms())
                        .map_err(se)
                })
                .await;
            let d = match found {
                Ok(d) => d,
                Err(e) => return send_drafts(&tx, dropout, Err(e.into())),
            };
            let who = d.character.unwrap_or(Character::Yana);
            let Some(persona) = rules.character(who.as_str()) else {
                return send_drafts(
                    &tx,
                    dropout,
                    Err(UiError::Missing(format!("no persona for {who}"))),
                );
            };
            let messages = cf::draft_prompt(
                &Persona::from_character(persona),
                d.user_text.as_deref(),
                &d.bot_text,
            );
            let model = llm.model.clone();
            let drafts = match cf::request(llm, messages).await {
                Ok(d) => d,
                Err(e) => return send_drafts(&tx, dropout, Err(UiError::Model(e.to_string()))),
            };
            let list: Vec<(String, String)> = drafts
                .drafts
                .iter()
                .map(|x| (x.bot_response_type.as_str().to_string(), x.text.clone()))
                .collect();
            let message_type = drafts.user_message_type.clone();
            let saved = store
                .call(move |s| cf::save_drafts(s.db(), dropout, &drafts, Some(&model)).map_err(se))
                .await;
            match saved {
                Ok(()) => send_drafts(&tx, dropout, Ok((message_type, list))),
                Err(e) => send_drafts(&tx, dropout, Err(e.into())),
            }
        });
    }

    fn promote(&mut self, p: Promotion) {
        let (store, tx) = (self.services.store.clone(), self.tx.clone());
        tokio::spawn(async move {
            let r = store
                .call(move |s| {
                    let new = NewPattern {
                        character: Character::parse(&p.character),
                        user_message_type: p.user_message_type,
                        user_message_example: p.user_message_example,
                        bot_response: p.bot_response,
                        bot_response_type: ResponseType::parse(&p.bot_response_type),
                        counts: Default::default(),
                        is_counterfactual: false,
                    };
                    pat::db::add(s.db(), &new).map_err(se)
                })
                .await;
            let msg = match r {
                Ok(p) => Ok(format!("pattern #{} added ✓", p.pattern_id)),
                Err(e) => Err(UiError::Store(format!("not promoted: {e}"))),
            };
            let _ = tx.send(UiMsg::outcome(msg));
            let r = store
                .call(crate::tui::patterns::read_rows)
                .await
                .map_err(UiError::from);
            let _ = tx.send(UiMsg::Room(RoomMsg::Patterns(r)));
        });
    }
}

fn send_drafts(
    tx: &tokio::sync::mpsc::UnboundedSender<UiMsg>,
    dropout: i64,
    drafts: Result<crate::tui::command::DraftSet, UiError>,
) {
    let _ = tx.send(UiMsg::Room(RoomMsg::Drafts { dropout, drafts }));
}
