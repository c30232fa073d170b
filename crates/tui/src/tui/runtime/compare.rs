//! Loading a comparison for the compare view (on the store actor).

use crate::compare::db;
use crate::tui::Runtime;
use crate::tui::app::UiMsg;
use crate::tui::compare_open::CompareAsk;
use crate::tui::compare_view::CompareView;
use crate::tui::error::UiError;

impl Runtime {
    pub(crate) fn open_compare(&mut self, ask: CompareAsk) {
        let (store, tx) = (self.services.store.clone(), self.tx.clone());
        let ticket = self.app.tickets.next_compare();
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
                (Ok(None), CompareAsk::Id(id)) => {
                    Err(UiError::Missing(format!("no comparison {id}")))
                }
                (Ok(None), CompareAsk::OfRun(run)) => Err(UiError::Missing(format!(
                    "run {run} has no comparison yet (kakeai compare --run {run} --variant FILE)"
                ))),
                (Err(e), _) => Err(e.into()),
            };
            let view = Box::new(msg);
            let _ = tx.send(UiMsg::Compare { ticket, view });
        });
    }
}
