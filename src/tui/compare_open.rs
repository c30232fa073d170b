//! The compare view inside the workbench: opened by `kakeai --compare ID` or from the runs
//! browser (ctrl-o: the newest comparison of the selected run), drawn over the body, closed
//! with Esc or q. Loading happens on the store actor; the view itself is `compare_view`.

use super::Runtime;
use super::app::{Command, UiMsg};
use super::compare_view::CompareView;
use crate::compare::db;

/// What was asked for: a comparison id, or the newest comparison of a run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum CompareAsk {
    Id(i64),
    OfRun(i64),
}

impl Runtime {
    pub(super) fn open_compare(&mut self, ask: CompareAsk) {
        let (store, tx) = (self.services.store.clone(), self.tx.clone());
        tokio::spawn(async move {
            let r = store
                .call(move |s| {
                    let id = match ask {
                        CompareAsk::Id(id) => Some(id),
                        CompareAsk::OfRun(run) => db::latest_for_run(s, run)?,
                    };
                    match id {
                        Some(id) => db::load(s, id).map(|o| o.map(CompareView::new)),
                        None => Ok(None),
                    }
                })
                .await;
            let msg = match (r, ask) {
                (Ok(Some(v)), _) => Ok(v),
                (Ok(None), CompareAsk::Id(id)) => Err(format!("no comparison {id}")),
                (Ok(None), CompareAsk::OfRun(run)) => Err(format!(
                    "run {run} has no comparison yet (kakeai compare --run {run} --variant FILE)"
                )),
                (Err(e), _) => Err(e.to_string()),
            };
            let _ = tx.send(UiMsg::Compare(Box::new(msg)));
        });
    }
}

/// The command for a compare request.
pub fn command(ask: CompareAsk) -> Command {
    Command::OpenCompare(ask)
}
