//! The runtime side of the runs browser and the review queue: pages, whole runs and search
//! hits are read through the store's single connection, off the UI task, and come back as
//! `UiMsg`s.

use crate::tui::Runtime;
use crate::tui::app::{Command, UiMsg};
use crate::tui::queue::BROWSE_PAGE;

/// Hits an all-runs search returns at most.
const HITS: usize = 500;

impl Runtime {
    /// A page of the runs browser, answered with the filter it was asked for.
    fn browse(&self, filter: String, offset: usize) {
        let (store, tx) = (self.services.store.clone(), self.tx.clone());
        let asked = filter.clone();
        tokio::spawn(async move {
            let r = store
                .call(move |s| s.browse(&asked, BROWSE_PAGE, offset))
                .await;
            let page = r.map_err(crate::tui::error::UiError::from);
            let _ = tx.send(UiMsg::Runs {
                filter,
                offset,
                page,
            });
        });
    }

    /// `/` over every run, answered with the needle searched.
    fn search_all(&self, needle: String) {
        let (store, tx) = (self.services.store.clone(), self.tx.clone());
        let asked = needle.clone();
        tokio::spawn(async move {
            let r = store.call(move |s| s.search_text(None, &asked, HITS)).await;
            let hits = r.map_err(crate::tui::error::UiError::from);
            let _ = tx.send(UiMsg::Found { needle, hits });
        });
    }

    pub(crate) fn runs_command(&mut self, cmd: Command) {
        let (store, tx) = (self.services.store.clone(), self.tx.clone());
        match cmd {
            Command::BrowseRuns { filter, offset } => self.browse(filter, offset),
            Command::OpenRun { id, turn } => {
                let ticket = self.app.tickets.next_open();
                tokio::spawn(async move {
                    let r = store
                        .call(move |s| crate::tui::reopen::open(s, id, turn))
                        .await;
                    let run = r.map(Box::new).map_err(crate::tui::error::UiError::from);
                    let _ = tx.send(UiMsg::RunOpened { ticket, run });
                });
            }
            Command::RefreshMarks { id } => {
                tokio::spawn(async move {
                    let r = store
                        .call(move |s| crate::tui::reopen::open(s, id, None))
                        .await;
                    let r = r.map(Box::new).map_err(crate::tui::error::UiError::from);
                    let _ = tx.send(UiMsg::MarksRefreshed(r));
                });
            }
            Command::OpenLatest => {
                let ticket = self.app.tickets.next_open();
                tokio::spawn(async move {
                    let r = store
                        .call(|s| match s.latest_run_id()? {
                            Some(id) => crate::tui::reopen::open(s, id, None).map(Some),
                            None => Ok(None),
                        })
                        .await;
                    match r {
                        Ok(Some(o)) => {
                            let run = Ok(Box::new(o));
                            let _ = tx.send(UiMsg::RunOpened { ticket, run });
                        }
                        Ok(None) => {}
                        Err(e) => {
                            let run = Err(e.into());
                            let _ = tx.send(UiMsg::RunOpened { ticket, run });
                        }
                    }
                });
            }
            Command::QueueNext => {
                let (Some(name), Some(me)) = (self.app.queue.clone(), self.app.reviewer.clone())
                else {
                    return;
                };
                let ticket = self.app.tickets.next_open();
                tokio::spawn(async move {
                    use crate::tui::app::status::Level;
                    let r = store.call(move |s| claim_and_open(s, &name, &me)).await;
                    let notice = match r {
                        Ok((msg, Some(opened))) => {
                            let run = Ok(Box::new(opened));
                            let _ = tx.send(UiMsg::RunOpened { ticket, run });
                            UiMsg::Notice(Level::Info, msg)
                        }
                        Ok((msg, None)) => UiMsg::Notice(Level::Warn, msg),
                        Err(e) => UiMsg::Notice(Level::Error, format!("queue: {e}")),
                    };
                    let _ = tx.send(notice);
                });
            }
            Command::SearchAll(needle) => self.search_all(needle),
            _ => {}
        }
    }
}

/// Claims the next item of queue `name` for `me` (one immediate transaction) and opens its run
/// at its turn: `(what to tell the reviewer, the opened run)`. Nothing left, or a pairwise item
/// (judged from `kakeai queue judge` or the compare view): a message and no run.
fn claim_and_open(
    s: &mut crate::store::Store,
    name: &str,
    me: &str,
) -> Result<(String, Option<crate::tui::queue::Opened>), crate::store::StoreError> {
    use crate::annotate::db;
    let now = crate::patterns::stamp::now_ms();
    let err = crate::store::invalid;
    let Some(c) = db::claim(s, name, me, now).map_err(err)? else {
        return Ok((format!("queue {name}: nothing left for {me}"), None));
    };
    let p = db::progress(s, name, now).map_err(err)?;
    let mine = p.per_reviewer.get(me).copied().unwrap_or(0);
    let secs = (c.until_ms - now).max(0) / 1000;
    if c.pairwise {
        return Ok((
            format!(
                "queue {name}: comparison {} turn {} — judge it with `kakeai queue judge {name} --turn {} --choice A|B|tie --reason …` (yours for {secs} s)",
                c.subject, c.turn, c.turn
            ),
            None,
        ));
    }
    let opened = crate::tui::reopen::open(s, c.subject, Some(c.turn as usize))?;
    Ok((
        format!(
            "queue {name}: run {} turn {} ({}) — yours for {secs} s · {mine} judged by you · {}/{} done",
            c.subject, c.turn, c.speaker, p.done, p.items
        ),
        Some(opened),
    ))
}
