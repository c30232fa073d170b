//! The runtime side of the runs browser and the review queue: pages, whole runs and search
//! hits are read through the store's single connection, off the UI task, and come back as
//! `UiMsg`s.

use super::Runtime;
use super::app::{Command, UiMsg};
use super::queue::BROWSE_PAGE;

/// Hits an all-runs search returns at most.
const HITS: usize = 500;

impl Runtime {
    pub(super) fn runs_command(&mut self, cmd: Command) {
        let (store, tx) = (self.services.store.clone(), self.tx.clone());
        match cmd {
            Command::BrowseRuns { filter, offset } => {
                tokio::spawn(async move {
                    let r = store
                        .call(move |s| s.browse(&filter, BROWSE_PAGE, offset))
                        .await;
                    let _ = tx.send(UiMsg::Runs(r.map_err(|e| e.to_string())));
                });
            }
            Command::OpenRun { id, turn } => {
                tokio::spawn(async move {
                    let r = store.call(move |s| super::reopen::open(s, id, turn)).await;
                    let _ = tx.send(UiMsg::RunOpened(r.map(Box::new).map_err(|e| e.to_string())));
                });
            }
            Command::RefreshMarks { id } => {
                tokio::spawn(async move {
                    let r = store.call(move |s| super::reopen::open(s, id, None)).await;
                    let r = r.map(Box::new).map_err(|e| e.to_string());
                    let _ = tx.send(UiMsg::MarksRefreshed(r));
                });
            }
            Command::OpenLatest => {
                tokio::spawn(async move {
                    let r = store
                        .call(|s| match s.latest_run_id()? {
                            Some(id) => super::reopen::open(s, id, None).map(Some),
                            None => Ok(None),
                        })
                        .await;
                    match r {
                        Ok(Some(o)) => {
                            let _ = tx.send(UiMsg::RunOpened(Ok(Box::new(o))));
                        }
                        Ok(None) => {}
                        Err(e) => {
                            let _ = tx.send(UiMsg::RunOpened(Err(e.to_string())));
                        }
                    }
                });
            }
            Command::SearchAll(needle) => {
                tokio::spawn(async move {
                    let r = store
                        .call(move |s| s.search_text(None, &needle, HITS))
                        .await;
                    let _ = tx.send(UiMsg::Found(r.map_err(|e| e.to_string())));
                });
            }
            _ => {}
        }
    }
}
