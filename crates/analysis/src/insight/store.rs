//! Insight cards in the run store (table `insight_cards`, migration 010), one row per
//! (scope, theme key); saving a deck replaces its scope's rows in one transaction.

use crate::p;

use super::cards::{Card, Deck, key};
use super::themes::Severity;
use crate::store::{Store, StoreError, time};

pub fn load(s: &Store, scope: &str) -> Result<Deck, StoreError> {
    let cards = s.db().query_map(
        "SELECT theme, jtbd, summary, severity, freq, quotes, sources FROM insight_cards
         WHERE scope = ?1 ORDER BY id",
        p![scope],
        |r| {
            let sev: String = r.get(3)?;
            let quotes: String = r.get(5)?;
            let sources: String = r.get(6)?;
            Ok(Card {
                theme: r.get(0)?,
                jtbd: r.get(1)?,
                summary: r.get(2)?,
                severity: Severity::parse(&sev),
                freq: r.get::<i64>(4)?.max(0) as usize,
                quotes: serde_json::from_str(&quotes).unwrap_or_default(),
                sources: serde_json::from_str(&sources).unwrap_or_default(),
            })
        },
    )?;
    Ok(Deck::new(cards))
}

/// Scopes that have cards, for the insights view's filter.
pub fn scopes(s: &Store) -> Result<Vec<String>, StoreError> {
    let db = s.db();
    Ok(db.query_map(
        &format!(
            "SELECT DISTINCT {scope} AS scope FROM insight_cards ORDER BY 1",
            scope = db.kind().bytewise("scope")
        ),
        p![],
        |r| r.get::<String>(0),
    )?)
}

pub fn save(s: &mut Store, scope: &str, deck: &Deck) -> Result<(), StoreError> {
    s.transact(|tx| {
        tx.execute("DELETE FROM insight_cards WHERE scope = ?1", p![scope])?;
        for c in &deck.cards {
            tx.execute(
                "INSERT INTO insight_cards (scope, theme_key, theme, jtbd, summary, severity,
                     freq, quotes, sources, updated_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                p![
                    scope,
                    key(&c.theme),
                    c.theme,
                    c.jtbd,
                    c.summary,
                    c.severity.as_str(),
                    c.freq as i64,
                    serde_json::to_string(&c.quotes).unwrap_or_default(),
                    serde_json::to_string(&c.sources).unwrap_or_default(),
                    time::now_iso()
                ],
            )?;
        }
        Ok(())
    })
}
