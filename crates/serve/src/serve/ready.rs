//! `GET /readyz`: whether the bot can answer now — the model (its server answers and has the
//! model), the store (a query runs), the LINE API (the last send went through; unknown before
//! the first). 200 when all are usable, else 503; the body says which and why, as JSON.
//! `/healthz` is a liveness check: 200 while the process answers HTTP and its store has not
//! been unreachable for longer than `store_down_seconds` — past that it is 503, so a
//! supervisor (systemd's watchdog script, Kubernetes' liveness probe) restarts the instance.
//! (The instance reconnects by itself as soon as the database is back; the bound is for what
//! reconnecting cannot mend.)

use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::Services;

/// The LINE API's state as the sends see it.
#[derive(Default)]
pub struct LineHealth(Mutex<Option<Result<(), String>>>);

impl LineHealth {
    pub fn record(&self, r: Result<(), String>) {
        if let Ok(mut s) = self.0.lock() {
            *s = Some(r);
        }
    }

    fn get(&self) -> Option<Result<(), String>> {
        self.0.lock().ok().and_then(|s| s.clone())
    }
}

/// The store as this instance's own calls find it: since when (and why) they have failed with
/// no success in between.
#[derive(Default)]
pub struct StoreHealth(Mutex<Option<(Instant, String)>>);

impl StoreHealth {
    /// Notes a store call's outcome; the line for the operator's log when the state changed
    /// (the first failure, and the return), so an outage is two lines, not one per call.
    pub fn record(&self, r: Result<(), String>) -> Option<String> {
        let mut s = self.0.lock().unwrap_or_else(|p| p.into_inner());
        match (r, s.as_ref()) {
            (Ok(()), Some((since, _))) => {
                let line = format!(
                    "the store is back after {:.1} s unreachable",
                    since.elapsed().as_secs_f64()
                );
                *s = None;
                Some(line)
            }
            (Ok(()), None) => None,
            (Err(e), None) => {
                *s = Some((Instant::now(), e.clone()));
                Some(format!("the store cannot be used: {e} (retrying)"))
            }
            (Err(e), Some((since, _))) => {
                *s = Some((*since, e));
                None
            }
        }
    }

    /// How long the store has been failing, and the last reason; None while it works.
    pub fn down(&self) -> Option<(Duration, String)> {
        let s = self.0.lock().unwrap_or_else(|p| p.into_inner());
        s.as_ref()
            .map(|(since, why)| (since.elapsed(), why.clone()))
    }
}

/// `/healthz`: None (alive) or why not — the store unreachable beyond `bound`.
pub fn health(store: &StoreHealth, bound: Duration) -> Option<String> {
    store.down().filter(|(d, _)| *d > bound).map(|(d, why)| {
        format!(
            "the store has been unreachable for {:.0} s (store_down_seconds = {:.0}): {why}\n",
            d.as_secs_f64(),
            bound.as_secs_f64()
        )
    })
}

/// The readiness report and whether it is ready.
pub async fn report(svc: &Services) -> (bool, serde_json::Value) {
    let model = match crate::llm::Client::new(svc.llm.clone()) {
        Ok(c) => {
            match tokio::time::timeout(std::time::Duration::from_secs(5), c.ensure_model()).await {
                Ok(Ok(_)) => Ok(()),
                Ok(Err(e)) => Err(e.to_string()),
                Err(_) => Err("no answer within 5 s".to_string()),
            }
        }
        Err(e) => Err(e.to_string()),
    };
    let store = svc
        .store
        .call(|s| {
            Ok(s.db()
                .one::<i64>("SELECT COUNT(*) FROM line_events", crate::p![])?)
        })
        .await
        .map(|_| ())
        .map_err(|e| e.to_string());
    if let Some(line) = svc.store_health.record(store.clone()) {
        svc.log.write("store", &line);
    }
    let line = svc.line_health.get();
    let ready = model.is_ok() && store.is_ok() && !matches!(line, Some(Err(_)));
    let show = |r: &Result<(), String>| match r {
        Ok(()) => serde_json::json!({"ok": true}),
        Err(e) => serde_json::json!({"ok": false, "error": e}),
    };
    let body = serde_json::json!({
        "ready": ready,
        "model": {"endpoint": svc.llm.endpoint, "model": svc.llm.model, "state": show(&model)},
        "store": show(&store),
        "line_api": match &line {
            None => serde_json::json!({"ok": null, "note": "nothing sent yet"}),
            Some(r) => show(r),
        },
    });
    (ready, body)
}
