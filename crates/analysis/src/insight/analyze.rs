//! Analysis of finished interviews (seed 003 §8): user messages (no `[スキップ]`) → RAKE
//! keywords → LLM themes (re-asked once when unreadable) → merged insight cards. An interview
//! whose themes could not be had is marked `not_analysed` with the reason, and analysed again
//! next time; its keywords are still kept.

use std::sync::Arc;

use serde::Serialize;

use super::cards::Deck;
use super::rake::{self, Keyword};
use super::store as cstore;
use super::themes::{self, Theme};
use crate::interview::store as istore;
use crate::llm::{ChatRequest, Client, Message, ResponseFormat};
use crate::store::{StoreError, StoreHandle};
use crate::text::Analyzer;

/// Themes of one conversation's text. Err: why there are none (the endpoint failed, or the
/// output was unreadable twice).
pub async fn themes_for(client: Option<&Client>, text: &str) -> Result<Vec<Theme>, String> {
    let Some(client) = client else {
        return Err("no model endpoint".into());
    };
    let mut msgs = vec![Message::system(themes::PROMPT), Message::user(text)];
    for attempt in 0..2 {
        let c = client
            .chat(&ChatRequest::judge(msgs.clone(), ResponseFormat::Text))
            .await
            .map_err(|e| e.to_string())?;
        let t = themes::parse(&c.text);
        if !t.is_empty() {
            return Ok(t);
        }
        if attempt == 0 {
            msgs.push(Message::assistant(c.text));
            msgs.push(Message::user(themes::REASK));
        }
    }
    Err("the model's themes were unreadable twice".into())
}

#[derive(Debug, Clone, Serialize)]
pub struct Skipped {
    pub interview_id: i64,
    pub reason: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub scope: String,
    pub interviews: usize,
    pub analysed: Vec<i64>,
    pub not_analysed: Vec<Skipped>,
    pub keywords: Vec<Keyword>,
    #[serde(skip)]
    pub deck: Deck,
}

/// The RAKE settings for a scope of `n` conversations: a phrase must recur from 5 on.
pub fn min_count(n: usize) -> usize {
    if n >= 5 { 2 } else { 1 }
}

/// Analyses the finished interviews named `name` that are not analysed yet, merges their
/// themes into the scope's cards and saves them.
pub async fn interviews(
    store: &StoreHandle,
    client: Option<&Client>,
    analyzer: Arc<dyn Analyzer>,
    name: String,
) -> Result<Report, StoreError> {
    let scope = format!("interview:{name}");
    let n2 = name.clone();
    let rows = store.call(move |s| istore::finished(s, Some(&n2))).await?;
    let sc = scope.clone();
    let mut deck = store.call(move |s| cstore::load(s, &sc)).await?;
    let mut all = Vec::new();
    let mut report = Report {
        scope: scope.clone(),
        interviews: rows.len(),
        analysed: Vec::new(),
        not_analysed: Vec::new(),
        keywords: Vec::new(),
        deck: Deck::default(),
    };
    for row in rows {
        let id = row.id;
        let msgs = store.call(move |s| istore::user_messages(s, id)).await?;
        all.extend(msgs.iter().cloned());
        if row.analysis == "done" {
            continue;
        }
        let kw = rake::keywords(analyzer.as_ref(), &msgs, 1, 10);
        let kw = serde_json::to_value(&kw).unwrap_or_default();
        let text = msgs.join("\n");
        let (status, why) = if text.trim().is_empty() {
            (
                "not_analysed",
                Some("the user said nothing to analyse".to_string()),
            )
        } else {
            match themes_for(client, &text).await {
                Ok(ts) => {
                    for t in &ts {
                        deck.add(t, &format!("interview:{id}"));
                    }
                    ("done", None)
                }
                Err(e) => ("not_analysed", Some(e)),
            }
        };
        match &why {
            None => report.analysed.push(id),
            Some(r) => report.not_analysed.push(Skipped {
                interview_id: id,
                reason: r.clone(),
            }),
        }
        let (sc, d) = (scope.clone(), deck.clone());
        store
            .call(move |s| {
                cstore::save(s, &sc, &d)?;
                istore::set_analysis(s, id, status, why.as_deref(), &kw)
            })
            .await?;
    }
    report.keywords = rake::keywords(analyzer.as_ref(), &all, min_count(report.interviews), 15);
    report.deck = deck;
    Ok(report)
}
