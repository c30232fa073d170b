//! The single writer: a dedicated thread owns the `Store` and runs queued jobs in order; each
//! caller gets its reply only after its job (and so its commit) is done.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::mpsc;

use super::{Store, StoreError};

type Job = Box<dyn FnOnce(&mut Store) + Send>;

/// A cheap, cloneable handle to the store thread. The thread ends when the last handle drops.
#[derive(Clone)]
pub struct StoreHandle {
    tx: mpsc::Sender<Job>,
}

impl StoreHandle {
    pub fn spawn(store: Store) -> StoreHandle {
        let (tx, rx) = mpsc::channel::<Job>();
        let spawned = std::thread::Builder::new()
            .name("kakeai-store".into())
            .spawn(move || {
                let mut store = store;
                for job in rx {
                    job(&mut store);
                }
            });
        // If the thread cannot start, `rx` is gone and every call answers `Closed`.
        drop(spawned);
        StoreHandle { tx }
    }

    /// Queues `f` now (calls run in the order they were made, even if their futures are awaited
    /// later or together) and resolves once it has run.
    pub fn call<R: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Store) -> Result<R, StoreError> + Send + 'static,
    ) -> impl Future<Output = Result<R, StoreError>> + Send + 'static {
        let (reply, answer) = tokio::sync::oneshot::channel();
        let queued = self.queue(f, move |r| {
            let _ = reply.send(r);
        });
        async move {
            queued?;
            answer.await.map_err(|_| StoreError::Closed)?
        }
    }

    /// Like [`call`](Self::call) for synchronous code. Blocks the thread: do not use it from
    /// inside an async task.
    pub fn call_blocking<R: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Store) -> Result<R, StoreError> + Send + 'static,
    ) -> Result<R, StoreError> {
        let (reply, answer) = mpsc::sync_channel(1);
        self.queue(f, move |r| {
            let _ = reply.send(r);
        })?;
        answer.recv().map_err(|_| StoreError::Closed)?
    }

    fn queue<R: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Store) -> Result<R, StoreError> + Send + 'static,
        reply: impl FnOnce(Result<R, StoreError>) + Send + 'static,
    ) -> Result<(), StoreError> {
        let job: Job = Box::new(move |store: &mut Store| {
            // A panicking job must not take the writer down with it; SQLite rolls back any
            // transaction the job left open when it is dropped.
            let result = catch_unwind(AssertUnwindSafe(|| f(store)))
                .unwrap_or_else(|p| Err(StoreError::Panicked(panic_text(p.as_ref()))));
            reply(result);
        });
        self.tx.send(job).map_err(|_| StoreError::Closed)
    }
}

fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}
