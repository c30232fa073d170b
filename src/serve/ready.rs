//! `GET /readyz`: whether the bot can answer now — the model (its server answers and has the
//! model), the store (a query runs), the LINE API (the last send went through; unknown before
//! the first). 200 when all are usable, else 503; the body says which and why, as JSON.
//! `/healthz` stays a liveness check (the process answers HTTP).

use std::sync::Mutex;

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
