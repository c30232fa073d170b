//! The conversations pane's store work: reading the bot's conversations and caches, and
//! saving a reviewer's 👍/👎 or override on a bot reply (each write queued before the reload
//! that shows it).

use crate::serve::review;
use crate::tui::Runtime;
use crate::tui::app::{Command, UiMsg};
use crate::tui::error::UiError;

impl Runtime {
    /// A pane's read of the store, queued now (after any write already queued) and answered
    /// to its room.
    pub(crate) fn load_room(&self, pane: crate::tui::panes::Pane) {
        use crate::tui::panes::RoomMsg;
        let Some(load) = pane.loader() else { return };
        let tx = self.tx.clone();
        let call = self.services.store.call(move |s| Ok(load(s)));
        tokio::spawn(async move {
            let msg = call
                .await
                .unwrap_or_else(|e| RoomMsg::Failed(pane, e.into()));
            let _ = tx.send(UiMsg::Room(msg));
        });
    }

    pub(crate) fn conversations_command(&mut self, cmd: Command) {
        let (store, tx) = (self.services.store.clone(), self.tx.clone());
        // Store calls are queued when made (not when awaited): each write is queued before the
        // reload that shows it.
        let reload = || self.load_room(crate::tui::panes::Pane::Conversations);
        match cmd {
            Command::LineThumb { id, up } => {
                let call = store.call(move |s| review::thumb(s, id, up));
                tokio::spawn(async move {
                    let r = call.await;
                    let _ = tx.send(UiMsg::outcome(match r {
                        Ok(Some(_)) => Ok(format!(
                            "{} saved ✓ (the pattern's like_rate too)",
                            if up { "👍" } else { "👎" }
                        )),
                        Ok(None) => Ok(format!("{} saved ✓", if up { "👍" } else { "👎" })),
                        Err(e) => Err(UiError::Store(format!("👍/👎 NOT saved: {e}"))),
                    }));
                });
                reload();
            }
            Command::LineOverride { id, status, note } => {
                let call = store.call(move |s| {
                    review::set_override(s, id, Some(status.as_str()))?;
                    review::set_note(s, id, &note)
                });
                tokio::spawn(async move {
                    let r = call.await;
                    let _ = tx.send(UiMsg::outcome(match r {
                        Ok(()) => Ok(format!("override → {} saved ✓", status.as_str())),
                        Err(e) => Err(UiError::Store(format!("override NOT saved: {e}"))),
                    }));
                });
                reload();
            }
            _ => {}
        }
    }
}
