//! `kakeai serve --line`: the sisters on LINE (seed 000 §2.1, §4) with seed 002's response
//! judgment and skip cache. `server` takes webhooks (signature first, 200 at once after the
//! masked event is committed), `worker` answers them in order per chat, `checker` decides in
//! groups whether to speak, `line_api` talks to LINE; the rest are pure cores.

pub mod cache_store;
pub mod checker;
pub mod config;
pub mod config_secrets;
pub mod events;
pub mod ingress;
pub mod judgment;
pub mod lease;
pub mod line_api;
pub mod listen;
pub mod metrics;
pub mod oplog;
pub mod outbox;
pub mod pii_pass;
pub mod pipeline;
pub mod ready;
pub mod review;
pub mod server;
pub mod signature;
pub mod store;
pub mod worker;

use std::sync::Arc;

use crate::director::{Character, RuleSet};
use crate::llm::LlmConfig;
use crate::safety::SafetyRules;
use crate::store::StoreHandle;
use crate::text::Analyzer;
use crate::vault::SharedVault;

/// Everything a request, a worker and the checker share.
pub struct Services {
    pub cfg: config::ServeConfig,
    pub secret: config::Secret,
    /// The pipeline's store thread.
    pub store: StoreHandle,
    /// A second connection for the acknowledgement path, so a 200 never waits behind the
    /// pipeline's writes (SQLite WAL: the two serialise only on the short commit).
    pub ingress: StoreHandle,
    pub api: line_api::LineApi,
    pub llm: LlmConfig,
    pub rules: RuleSet,
    pub me: Character,
    pub safety: Arc<SafetyRules>,
    pub analyzer: Arc<dyn Analyzer>,
    pub vault: Option<Arc<SharedVault>>,
    pub scene: String,
    pub metrics: Arc<metrics::Metrics>,
    /// The operator's log (stderr and `kakeai-serve.log`).
    pub log: Arc<oplog::OpLog>,
    /// The LINE API as the last send found it (for /readyz).
    pub line_health: Arc<ready::LineHealth>,
    /// The store as this instance's calls find it (for /healthz and the log).
    pub store_health: Arc<ready::StoreHealth>,
    /// The runtime the pipeline (workers, checker) runs on, apart from the one answering HTTP,
    /// so acknowledgements never queue behind answers; None: the current runtime.
    pub work: Option<tokio::runtime::Handle>,
    /// This instance's hold on the messages it answers (several instances on one store).
    pub lease: lease::Lease,
}

impl Services {
    /// Spawns pipeline work on [`Services::work`].
    pub fn spawn<F>(&self, fut: F) -> tokio::task::JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        match &self.work {
            Some(h) => h.spawn(fut),
            None => tokio::spawn(fut),
        }
    }

    /// Her names: a group message containing one counts as a mention.
    pub fn names(&self) -> Vec<String> {
        let mut v = vec![self.me.display_name.clone()];
        v.extend(self.me.aliases.iter().cloned());
        v
    }
}
