//! The conversations pane's store work: reading the bot's conversations and caches, and
//! saving a reviewer's 👍/👎 or override on a bot reply (each write queued before the reload
//! that shows it).

use crate::serve::review;
use crate::tui::Runtime;
use crate::tui::app::{Command, UiMsg};

impl Runtime {
    pub(crate) fn conversations_command(&mut self, cmd: Command) {
        let (store, tx) = (self.services.store.clone(), self.tx.clone());
        // Store calls are queued when made (not when awaited): each write is queued before the
        // reload that shows it.
        let reload = {
            let store = store.clone();
            let tx = tx.clone();
            move || {
                let now = crate::patterns::stamp::now_ms();
                let window = crate::serve::pipeline::WINDOW_SECS * 1000;
                let call = store.call(move |s| {
                    Ok((
                        review::conversations(s, now, window, 200)?,
                        crate::serve::store::all_caches(s)?,
                    ))
                });
                tokio::spawn(async move {
                    let r = call.await.map_err(|e| e.to_string());
                    let _ = tx.send(UiMsg::Conversations(r));
                })
            }
        };
        match cmd {
            Command::LoadConversations => {
                reload();
            }
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
                        Err(e) => Err(format!("👍/👎 NOT saved: {e}")),
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
                        Err(e) => Err(format!("override NOT saved: {e}")),
                    }));
                });
                reload();
            }
            _ => {}
        }
    }
}
