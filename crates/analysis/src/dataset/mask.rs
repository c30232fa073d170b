//! Personal data out of every export: each text field of a run (topic, lines, guidance, the
//! judge's words, findings, reviewer notes and edits) and of each dataset record (prompts,
//! history, chosen/rejected, completions) goes through the store's PII masker
//! ([`crate::safety::pii::shared`]), the one the report uses too.

use serde_json::Value;

use crate::store::RunRecord;

/// Keys whose values are structure (rule names, statuses, kinds, roles, times), not text.
const STRUCTURAL: &[&str] = &[
    "rule",
    "status",
    "kind",
    "role",
    "state",
    "severity",
    "speaker",
    "source",
    "origin",
    "started_at",
    "created_at",
    "committed_at",
    "ended_at",
    "model",
    "api",
    "id",
];

/// One text, masked.
pub fn text(s: &str) -> String {
    crate::safety::pii::shared().mask(s).masked_text
}

/// Every string of `v` masked, except the values of [`STRUCTURAL`] keys.
pub fn value(v: &mut Value) {
    match v {
        Value::String(s) => *s = text(s),
        Value::Array(a) => a.iter_mut().for_each(value),
        Value::Object(o) => {
            for (k, x) in o.iter_mut() {
                if !(STRUCTURAL.contains(&k.as_str()) && x.is_string()) {
                    value(x);
                }
            }
        }
        _ => {}
    }
}

fn opt(s: &mut Option<String>) {
    if let Some(t) = s {
        *t = text(t);
    }
}

fn opt_value(v: &mut Option<Value>) {
    if let Some(x) = v {
        value(x);
    }
}

/// A copy of the run with every text field masked (for `export --format jsonl|md`).
pub fn record(rec: &RunRecord) -> RunRecord {
    let mut r = rec.clone();
    r.run.topic = text(&r.run.topic);
    opt(&mut r.run.error);
    for t in &mut r.turns {
        t.text = text(&t.text);
        opt(&mut t.hook);
    }
    for a in &mut r.attempts {
        opt(&mut a.text);
        opt(&mut a.guidance);
        opt(&mut a.judge_raw);
        opt(&mut a.error);
        opt_value(&mut a.verdict);
        opt_value(&mut a.judge);
    }
    for a in &mut r.actions {
        value(&mut a.payload);
    }
    r
}
