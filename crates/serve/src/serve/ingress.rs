//! Group commit for the acknowledgement path: concurrent webhook requests queue their events
//! here; one task writes everything queued so far in a single transaction (`store::accept`) and
//! hands each request its own results. Under load that is one commit per batch instead of one
//! per request, and a request is still answered only after its events are committed.

use tokio::sync::{mpsc, oneshot};

use super::store::{self, NewEvent};
use crate::store::StoreHandle;

type Accepted = Vec<Option<Option<i64>>>;
type Waiting = (Vec<NewEvent>, oneshot::Sender<Result<Accepted, String>>);

/// The most requests one transaction takes.
const BATCH: usize = 256;

#[derive(Clone)]
pub struct Ingress {
    tx: mpsc::UnboundedSender<Waiting>,
}

impl Ingress {
    /// `lease`: the new messages are held by this instance (see `lease`).
    pub fn start(store: StoreHandle, lease: Option<super::lease::Lease>) -> Ingress {
        let (tx, mut rx) = mpsc::unbounded_channel::<Waiting>();
        tokio::spawn(async move {
            while let Some(first) = rx.recv().await {
                let mut batch = vec![first];
                while batch.len() < BATCH {
                    match rx.try_recv() {
                        Ok(w) => batch.push(w),
                        Err(_) => break,
                    }
                }
                let sizes: Vec<usize> = batch.iter().map(|(e, _)| e.len()).collect();
                let (all, replies): (Vec<Vec<NewEvent>>, Vec<_>) = batch.into_iter().unzip();
                let all: Vec<NewEvent> = all.into_iter().flatten().collect();
                let hold = lease.clone();
                let r = store
                    .call(move |s| store::accept_held(s, &all, hold.as_ref()))
                    .await;
                match r {
                    Ok(results) => {
                        let mut it = results.into_iter();
                        for (n, reply) in sizes.into_iter().zip(replies) {
                            let _ = reply.send(Ok(it.by_ref().take(n).collect()));
                        }
                    }
                    Err(e) => {
                        for reply in replies {
                            let _ = reply.send(Err(e.to_string()));
                        }
                    }
                }
            }
        });
        Ingress { tx }
    }

    /// Commits `events`; per event, its stored message id when new, None for a duplicate.
    pub async fn accept(&self, events: Vec<NewEvent>) -> Result<Accepted, String> {
        let (reply, answer) = oneshot::channel();
        self.tx
            .send((events, reply))
            .map_err(|_| "the ingress writer has stopped".to_string())?;
        answer
            .await
            .map_err(|_| "the ingress writer has stopped".to_string())?
    }
}
