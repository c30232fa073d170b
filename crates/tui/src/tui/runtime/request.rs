//! Reading the stored request of the attempt the request view shows.

use crate::tui::Runtime;
use crate::tui::app::UiMsg;
use crate::tui::request_view::Key;

impl Runtime {
    pub(crate) fn load_request(&mut self, key: Key) {
        let (store, tx) = (self.services.store.clone(), self.tx.clone());
        tokio::spawn(async move {
            let (run, turn, attempt) = key;
            let r = store
                .call(move |s| s.request_at(run, turn as u32, attempt as u32))
                .await;
            let _ = tx.send(UiMsg::Request(
                key,
                r.map_err(crate::tui::error::UiError::from),
            ));
        });
    }
}
