//! Personal data out of every export: each text field of a run (topic, lines, guidance, the
//! judge's words, findings, reviewer notes and edits) and of each dataset record (prompts,
//! history, chosen/rejected, completions) goes through the store's PII masker
//! ([`crate::safety::pii::shared`]), the one the report uses too.
//!
//! How each text is masked is a [`TextMask`]: the rules ([`Rules`]); or, for an export that
//! adds the model's second opinion, [`Collect`] (the rules, remembering every text, for a first
//! pass that learns what to ask) and then [`Table`] (the texts as checked, for the pass that
//! writes).

use std::cell::{Cell, RefCell};
use std::collections::{HashMap, HashSet};

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

/// How an export masks one text.
pub trait TextMask {
    fn text(&self, s: &str) -> String;
}

/// The rules alone.
pub struct Rules;

impl TextMask for Rules {
    fn text(&self, s: &str) -> String {
        crate::safety::pii::shared().mask(s).masked_text
    }
}

/// Whether a text is worth a model's look: one with nothing but white space has no personal
/// data to find.
pub fn worth_asking(s: &str) -> bool {
    s.chars().any(|c| !c.is_whitespace())
}

/// The rules, remembering each distinct text worth asking about with its rule-masked form, in
/// the order first met.
#[derive(Default)]
pub struct Collect {
    seen: RefCell<HashSet<String>>,
    texts: RefCell<Vec<(String, String)>>,
    /// What it returned: a text masked once (a prompt, before it is fitted) is not a new
    /// text to ask about when the record is masked.
    outputs: RefCell<HashSet<String>>,
}

impl Collect {
    /// Every distinct (original, rule-masked) text met.
    pub fn into_texts(self) -> Vec<(String, String)> {
        self.texts.into_inner()
    }
}

impl TextMask for Collect {
    fn text(&self, s: &str) -> String {
        if self.outputs.borrow().contains(s) {
            return s.to_string();
        }
        let masked = Rules.text(s);
        self.outputs.borrow_mut().insert(masked.clone());
        if worth_asking(s) && self.seen.borrow_mut().insert(s.to_string()) {
            self.texts
                .borrow_mut()
                .push((s.to_string(), masked.clone()));
        }
        masked
    }
}

/// Texts as already masked (original → masked); a text that is one of those masked forms
/// stays as it is (masked once already); any other text is masked by the rules and counted
/// ([`Table::misses`]), so the caller can tell it was not checked.
pub struct Table {
    masked: HashMap<String, String>,
    done: HashSet<String>,
    misses: Cell<usize>,
}

impl Table {
    pub fn new(masked: HashMap<String, String>) -> Table {
        Table {
            done: masked.values().cloned().collect(),
            masked,
            misses: Cell::new(0),
        }
    }

    /// How many texts worth asking about were not in the table.
    pub fn misses(&self) -> usize {
        self.misses.get()
    }
}

impl TextMask for Table {
    fn text(&self, s: &str) -> String {
        match self.masked.get(s) {
            Some(m) => m.clone(),
            None if self.done.contains(s) => s.to_string(),
            None => {
                if worth_asking(s) {
                    self.misses.set(self.misses.get() + 1);
                }
                Rules.text(s)
            }
        }
    }
}

/// One text, masked by the rules.
pub fn text(s: &str) -> String {
    Rules.text(s)
}

/// Every string of `v` masked by the rules, except the values of [`STRUCTURAL`] keys.
pub fn value(v: &mut Value) {
    value_with(v, &Rules)
}

/// [`value`], each string masked by `m`.
pub fn value_with(v: &mut Value, m: &dyn TextMask) {
    match v {
        Value::String(s) => *s = m.text(s),
        Value::Array(a) => a.iter_mut().for_each(|x| value_with(x, m)),
        Value::Object(o) => {
            for (k, x) in o.iter_mut() {
                if !(STRUCTURAL.contains(&k.as_str()) && x.is_string()) {
                    value_with(x, m);
                }
            }
        }
        _ => {}
    }
}

fn opt(s: &mut Option<String>, m: &dyn TextMask) {
    if let Some(t) = s {
        *t = m.text(t);
    }
}

fn opt_value(v: &mut Option<Value>, m: &dyn TextMask) {
    if let Some(x) = v {
        value_with(x, m);
    }
}

/// A copy of the run with every text field masked by the rules (for `export --format
/// jsonl|md`).
pub fn record(rec: &RunRecord) -> RunRecord {
    record_with(rec, &Rules)
}

/// [`record`], each text masked by `m`.
pub fn record_with(rec: &RunRecord, m: &dyn TextMask) -> RunRecord {
    let mut r = rec.clone();
    r.run.topic = m.text(&r.run.topic);
    opt(&mut r.run.error, m);
    for t in &mut r.turns {
        t.text = m.text(&t.text);
        opt(&mut t.hook, m);
    }
    for a in &mut r.attempts {
        opt(&mut a.text, m);
        opt(&mut a.guidance, m);
        opt(&mut a.judge_raw, m);
        opt(&mut a.error, m);
        opt_value(&mut a.verdict, m);
        opt_value(&mut a.judge, m);
    }
    for a in &mut r.actions {
        value_with(&mut a.payload, m);
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Generated values: the first pass collects each distinct non-blank string once (keys of
    /// structure left out), and a table made from what it collected masks the value exactly
    /// as the rules did, with no miss; a table missing one text counts each of its uses.
    #[test]
    fn a_table_from_the_collected_texts_masks_as_collected() {
        let mut rng = fastrand::Rng::with_seed(43);
        let words = ["田中さん", "みさき", " ", "", "海", "090-1234-5678", "やな"];
        for _ in 0..100 {
            let mut pick = || words[rng.usize(..words.len())].to_string();
            let v = json!({
                "text": pick(), "role": pick(), "history": [pick(), pick(), {"content": pick()}],
                "n": 3, "again": pick(),
            });
            let (mut by_rules, mut collected) = (v.clone(), v.clone());
            value(&mut by_rules);
            let c = Collect::default();
            value_with(&mut collected, &c);
            assert_eq!(collected, by_rules);
            let texts = c.into_texts();
            let originals: HashSet<&String> = texts.iter().map(|(o, _)| o).collect();
            assert_eq!(originals.len(), texts.len(), "each text once");
            assert!(texts.iter().all(|(o, m)| worth_asking(o) && *m == text(o)));
            assert!(
                !originals.contains(&v["role"].as_str().unwrap().to_string()) || {
                    // The role's string may also appear in a text field.
                    [
                        &v["text"],
                        &v["history"][0],
                        &v["history"][1],
                        &v["history"][2]["content"],
                        &v["again"],
                    ]
                    .iter()
                    .any(|x| x == &&v["role"])
                }
            );
            let table = Table::new(texts.iter().cloned().collect());
            let mut from_table = v.clone();
            value_with(&mut from_table, &table);
            assert_eq!(from_table, by_rules);
            assert_eq!(table.misses(), 0);
            if let Some((gone, _)) = texts.first() {
                let uses = [
                    &v["text"],
                    &v["history"][0],
                    &v["history"][1],
                    &v["history"][2]["content"],
                    &v["again"],
                ]
                .iter()
                .filter(|x| x.as_str() == Some(gone.as_str()))
                .count();
                let mut fewer: HashMap<String, String> = texts.iter().cloned().collect();
                fewer.remove(gone);
                let table = Table::new(fewer);
                let mut again = v.clone();
                value_with(&mut again, &table);
                assert_eq!(again, by_rules);
                assert_eq!(table.misses(), uses);
            }
        }
    }
}
