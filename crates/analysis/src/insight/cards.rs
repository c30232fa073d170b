//! Insight cards (seed 003 §8 step 5): themes merged by name into cards that count how often
//! a theme came up and keep the quotes behind it, with a confidence and an H/M/L label.
//!
//! - Merge key: the theme name lower-cased with whitespace, punctuation and brackets removed
//!   (「献立 決め」 and 献立決め are one card).
//! - `freq` = the number of conversations (or feedback notes) that raised the theme; a theme
//!   seen again from the same source is not counted twice. `quotes` = distinct evidence quotes,
//!   the first `max_quotes` kept.
//! - confidence = 0.7·min(freq / freq_full, 1) + 0.3·min(quotes / quotes_full, 1), with
//!   freq_full = 5 and quotes_full = 3 (assets/insight/cards.toml); H ≥ 0.7, M ≥ 0.4, else L.
//!   So one conversation with three quotes is 0.44 (M), three with three quotes 0.72 (H).
//! - Severity: the highest any merged theme had. JTBD and summary: the first non-empty one.

use std::collections::HashMap;
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

use super::themes::{Severity, Theme};

const DATA: &str = include_str!("../../../../assets/insight/cards.toml");

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CardRules {
    pub freq_weight: f64,
    pub quotes_weight: f64,
    pub freq_full: f64,
    pub quotes_full: f64,
    pub high: f64,
    pub medium: f64,
    pub max_quotes: usize,
}

pub fn rules() -> &'static CardRules {
    static R: OnceLock<CardRules> = OnceLock::new();
    R.get_or_init(|| toml::from_str(DATA).expect("assets/insight/cards.toml parses"))
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Card {
    pub theme: String,
    pub jtbd: String,
    pub summary: String,
    pub severity: Severity,
    pub freq: usize,
    pub quotes: Vec<String>,
    /// Where the theme came from (`interview:12`, `run:3`), one entry per counted source.
    pub sources: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Label {
    H,
    M,
    L,
}

impl Label {
    pub fn as_str(self) -> &'static str {
        match self {
            Label::H => "H",
            Label::M => "M",
            Label::L => "L",
        }
    }
}

pub fn confidence(freq: usize, quotes: usize) -> f64 {
    let r = rules();
    r.freq_weight * (freq as f64 / r.freq_full).min(1.0)
        + r.quotes_weight * (quotes as f64 / r.quotes_full).min(1.0)
}

pub fn label(confidence: f64) -> Label {
    let r = rules();
    if confidence >= r.high {
        Label::H
    } else if confidence >= r.medium {
        Label::M
    } else {
        Label::L
    }
}

impl Card {
    pub fn confidence(&self) -> f64 {
        confidence(self.freq, self.quotes.len())
    }

    pub fn label(&self) -> Label {
        label(self.confidence())
    }
}

/// The merge key of a theme name.
pub fn key(theme: &str) -> String {
    theme
        .chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

/// Cards indexed by key, for merging many themes at once.
#[derive(Debug, Default, Clone)]
pub struct Deck {
    pub cards: Vec<Card>,
    index: HashMap<String, usize>,
}

impl Deck {
    pub fn new(cards: Vec<Card>) -> Deck {
        let mut d = Deck::default();
        for c in cards {
            d.merge_card(c);
        }
        d
    }

    /// Merges one theme seen in `source`.
    pub fn add(&mut self, t: &Theme, source: &str) {
        // The common case — a theme already on a card — merges in place without copying the
        // theme's texts.
        if let Some(&i) = self.index.get(&key(&t.theme)) {
            let max_quotes = rules().max_quotes;
            let e = &mut self.cards[i];
            if !e.sources.iter().any(|s| s == source) {
                e.sources.push(source.to_string());
                e.freq += 1;
            }
            for q in &t.evidence {
                if e.quotes.len() < max_quotes && !e.quotes.contains(q) {
                    e.quotes.push(q.clone());
                }
            }
            e.severity = e.severity.max(t.severity);
            if e.jtbd.is_empty() {
                e.jtbd = t.jtbd.clone();
            }
            if e.summary.is_empty() {
                e.summary = t.summary.clone();
            }
            return;
        }
        self.merge_card(Card {
            theme: t.theme.trim().to_string(),
            jtbd: t.jtbd.clone(),
            summary: t.summary.clone(),
            severity: t.severity,
            freq: 1,
            quotes: t.evidence.clone(),
            sources: vec![source.to_string()],
        });
    }

    /// Merges a card: an existing theme adds its new sources and quotes, a new one is created.
    pub fn merge_card(&mut self, c: Card) {
        let max_quotes = rules().max_quotes;
        let k = key(&c.theme);
        if k.is_empty() {
            return;
        }
        match self.index.get(&k) {
            Some(&i) => {
                let e = &mut self.cards[i];
                for s in c.sources {
                    if !e.sources.contains(&s) {
                        e.sources.push(s);
                        e.freq += 1;
                    }
                }
                for q in c.quotes {
                    if e.quotes.len() < max_quotes && !e.quotes.contains(&q) {
                        e.quotes.push(q);
                    }
                }
                e.severity = e.severity.max(c.severity);
                if e.jtbd.is_empty() {
                    e.jtbd = c.jtbd;
                }
                if e.summary.is_empty() {
                    e.summary = c.summary;
                }
            }
            None => {
                let mut c = c;
                c.sources.dedup();
                c.freq = c.sources.len().max(1);
                let mut q: Vec<String> = Vec::new();
                for x in c.quotes.drain(..) {
                    if q.len() < max_quotes && !q.contains(&x) {
                        q.push(x);
                    }
                }
                c.quotes = q;
                self.index.insert(k, self.cards.len());
                self.cards.push(c);
            }
        }
    }

    /// The cards, most confident first (then severity, then name).
    pub fn ranked(&self) -> Vec<&Card> {
        let mut v: Vec<&Card> = self.cards.iter().collect();
        v.sort_by(|a, b| {
            b.confidence()
                .total_cmp(&a.confidence())
                .then(b.severity.cmp(&a.severity))
                .then(a.theme.cmp(&b.theme))
        });
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn theme(name: &str, quotes: &[&str], sev: Severity) -> Theme {
        Theme {
            theme: name.into(),
            jtbd: String::new(),
            summary: String::new(),
            severity: sev,
            evidence: quotes.iter().map(|q| q.to_string()).collect(),
        }
    }

    #[test]
    fn confidence_follows_the_formula_and_thresholds() {
        for f in 0..8 {
            for q in 0..6 {
                let want = 0.7 * (f as f64 / 5.0).min(1.0) + 0.3 * (q as f64 / 3.0).min(1.0);
                let c = confidence(f, q);
                assert!((c - want).abs() < 1e-12);
                let l = label(c);
                assert_eq!(l == Label::H, c >= 0.7);
                assert_eq!(l == Label::L, c < 0.4);
            }
        }
        assert_eq!(label(confidence(1, 3)), Label::M);
        assert_eq!(label(confidence(3, 3)), Label::H);
        assert_eq!(label(confidence(1, 1)), Label::L);
    }

    #[test]
    fn same_theme_merges_across_sources_but_not_within_one() {
        let mut d = Deck::default();
        d.add(
            &theme("献立 決め", &["毎晩悩む"], Severity::Low),
            "interview:1",
        );
        d.add(
            &theme("献立決め", &["毎晩悩む", "冷蔵庫を見る"], Severity::High),
            "interview:2",
        );
        d.add(
            &theme("「献立決め」", &["冷蔵庫を見る"], Severity::Low),
            "interview:2",
        );
        d.add(&theme("洗い物", &[], Severity::Low), "interview:2");
        assert_eq!(d.cards.len(), 2);
        let c = &d.cards[0];
        assert_eq!((c.freq, c.quotes.len(), c.severity), (2, 2, Severity::High));
        assert_eq!(d.ranked()[0].theme, "献立 決め");
    }
}
