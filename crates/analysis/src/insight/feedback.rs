//! Insight cards from reviewers' feedback notes and overrides on duo runs (issue 12 §2,
//! `kakeai analyze --feedback`). No model is asked: notes are grouped by (sister, category),
//! so "やな's tone drifts" is one card whose frequency is its number of notes.
//!
//! - Category: a feedback note's `issue_type`; an override is `override_to_<status>`.
//! - Theme: 「やな: tone_drift」, plus the phrase the notes share — the best RAKE keyword of the
//!   group's descriptions and run topics that occurs in at least half of them — in （）.
//! - JTBD: the most frequent suggested fix; summary: how many notes over how many runs.
//! - Quotes: the descriptions (or override reasons), PII-masked. Severity: an override to
//!   RETRY is high, one to PASS (the Director was too strict) low, a note medium.
//! - Sources: one per action (`run:3/action:17`), so re-analysing never double counts.

use std::collections::BTreeMap;

use crate::p;
use serde::Serialize;

use super::cards::{Card, Deck};
use super::rake;
use super::themes::Severity;
use crate::store::{Store, StoreError};
use crate::text::Analyzer;

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Note {
    pub action_id: i64,
    pub run_id: i64,
    pub topic: String,
    pub speaker: String,
    pub category: String,
    pub text: String,
    pub fix: String,
    pub severity: Severity,
}

/// Feedback and override actions (of one run, or all).
pub fn notes(s: &Store, run: Option<i64>) -> Result<Vec<Note>, StoreError> {
    let rows = s.db().query_map(
        "SELECT a.id, a.run_id, r.topic, a.kind, a.payload FROM actions a
         JOIN runs r ON r.id = a.run_id
         WHERE a.kind IN ('feedback', 'override') AND (CAST(?1 AS BIGINT) IS NULL OR a.run_id = ?1)
         ORDER BY a.id",
        p![run],
        |r| {
            Ok((
                r.get::<i64>(0)?,
                r.get::<i64>(1)?,
                r.get::<String>(2)?,
                r.get::<String>(3)?,
                r.get::<String>(4)?,
            ))
        },
    )?;
    let masker = crate::safety::pii::shared();
    Ok(rows
        .into_iter()
        .map(|(action_id, run_id, topic, kind, payload)| {
            let p: serde_json::Value = serde_json::from_str(&payload).unwrap_or_default();
            let s = |k: &str| p[k].as_str().unwrap_or("").trim().to_string();
            let (category, text, fix, severity) = if kind == "override" {
                let to = s("to").to_lowercase();
                let sev = match to.as_str() {
                    "retry" => Severity::High,
                    "pass" => Severity::Low,
                    _ => Severity::Medium,
                };
                (format!("override_to_{to}"), s("reason"), String::new(), sev)
            } else {
                let c = s("issue_type");
                let c = if c.is_empty() { "other".into() } else { c };
                (c, s("description"), s("suggested_fix"), Severity::Medium)
            };
            Note {
                action_id,
                run_id,
                topic,
                speaker: s("speaker"),
                category,
                text: masker.mask(&text).masked_text,
                fix: masker.mask(&fix).masked_text,
                severity,
            }
        })
        .collect())
}

fn sister(id: &str) -> &str {
    match id {
        "yana" => "やな",
        "ayu" => "あゆ",
        "" => "（不明）",
        other => other,
    }
}

/// One card per (sister, category).
pub fn cards(analyzer: &dyn Analyzer, notes: &[Note]) -> Deck {
    let mut groups: BTreeMap<(String, String), Vec<&Note>> = BTreeMap::new();
    for n in notes {
        groups
            .entry((n.speaker.clone(), n.category.clone()))
            .or_default()
            .push(n);
    }
    let mut deck = Deck::default();
    for ((speaker, category), g) in groups {
        let texts: Vec<String> = g
            .iter()
            .map(|n| format!("{}。{}", n.text, n.topic))
            .collect();
        let shared = rake::keywords(analyzer, &texts, 1, 20)
            .into_iter()
            .find(|k| {
                let n = texts
                    .iter()
                    .filter(|t| rake::normalise(t).contains(&k.phrase))
                    .count();
                g.len() >= 2 && n * 2 >= g.len()
            });
        let mut theme = format!("{}: {category}", sister(&speaker));
        if let Some(k) = shared {
            theme.push_str(&format!("（{}）", k.phrase));
        }
        let mut fixes: BTreeMap<&str, usize> = BTreeMap::new();
        for n in &g {
            if !n.fix.is_empty() {
                *fixes.entry(n.fix.as_str()).or_default() += 1;
            }
        }
        let jtbd = fixes
            .iter()
            .max_by_key(|(f, c)| (**c, std::cmp::Reverse(*f)))
            .map(|(f, _)| f.to_string())
            .unwrap_or_default();
        let runs: std::collections::BTreeSet<i64> = g.iter().map(|n| n.run_id).collect();
        deck.merge_card(Card {
            theme,
            jtbd,
            summary: format!("{}件の指摘（{}回の実行）", g.len(), runs.len()),
            severity: g
                .iter()
                .map(|n| n.severity)
                .max()
                .unwrap_or(Severity::Medium),
            freq: g.len(),
            quotes: g
                .iter()
                .map(|n| n.text.clone())
                .filter(|t| !t.is_empty())
                .collect(),
            sources: g
                .iter()
                .map(|n| format!("run:{}/action:{}", n.run_id, n.action_id))
                .collect(),
        });
    }
    deck
}
