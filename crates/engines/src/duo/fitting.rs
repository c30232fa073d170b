//! What a line's prompt gave up to fit the model's context, per attempt: earlier messages of
//! the conversation, vault sections by level (the token budget's lighter rungs, see
//! `llm::budget::fit_prioritised`) and repeated guidance lines. Carried with the attempt's
//! stats, stored with its request, shown in the detail pane, the header, the headless events
//! and the run's report, so a prompt that lost its vault never does so silently.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::vault::Work;

/// What one attempt's prompt left out. Empty: the whole prompt was sent.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FitReport {
    /// Earlier conversation messages left out (the character budget's and the token budget's).
    #[serde(default)]
    pub history: usize,
    /// Vault sections left out, by level (3: given in full, 2: reference notes, 1: notices).
    #[serde(default)]
    pub vault: BTreeMap<u8, usize>,
    /// Director guidance lines that repeated an earlier one and were sent once.
    #[serde(default)]
    pub guidance: usize,
}

impl FitReport {
    pub fn is_empty(&self) -> bool {
        self.history == 0 && self.vault.values().all(|n| *n == 0) && self.guidance == 0
    }

    /// Whether vault sections were left out.
    pub fn lost_vault(&self) -> bool {
        self.vault.values().any(|n| *n > 0)
    }

    /// One line: `dropped to fit: 4 earlier messages · vault L3 ×2, L2 ×1 · 1 repeated guidance`.
    pub fn summary(&self) -> String {
        let mut parts = Vec::new();
        if self.history > 0 {
            parts.push(format!("{} earlier messages", self.history));
        }
        let vault: Vec<String> = self
            .vault
            .iter()
            .rev()
            .filter(|(_, n)| **n > 0)
            .map(|(l, n)| format!("L{l} ×{n}"))
            .collect();
        if !vault.is_empty() {
            parts.push(format!("vault {}", vault.join(", ")));
        }
        if self.guidance > 0 {
            parts.push(format!("{} repeated guidance", self.guidance));
        }
        if parts.is_empty() {
            return "nothing dropped to fit".into();
        }
        format!("dropped to fit: {}", parts.join(" · "))
    }
}

/// Sections left out by each lighter rung of `speaker`'s world, in the same order and with
/// the same skipping as `vault::shared::world_ladders` (a rung equal to the one before is not a
/// rung): rung `i` (1-based) left out `out[i - 1]`.
pub fn rung_drops(work: &Work, speaker: &str, drop_levels: &[u8]) -> Vec<BTreeMap<u8, usize>> {
    let full = work.context(Some(speaker));
    let count = |level: u8| match level {
        3 => full.context.len(),
        l => full.hint_levels.iter().filter(|h| **h == l).count(),
    };
    let mut out = Vec::new();
    let mut last = full.prompt.clone();
    for i in 1..=drop_levels.len() {
        let w = work.prompt_without(Some(speaker), &drop_levels[..i]);
        if w != last {
            out.push(
                drop_levels[..i]
                    .iter()
                    .map(|l| (*l, count(*l)))
                    .filter(|(_, n)| *n > 0)
                    .collect(),
            );
            last = w;
        }
    }
    out
}

/// [`rung_drops`] with the vault levels in the order assets/llm/budget.toml drops them.
pub fn rungs_of(work: &Work, speaker: &str) -> Vec<BTreeMap<u8, usize>> {
    let drop = &crate::llm::budget::Priorities::builtin().vault_drop_levels;
    rung_drops(work, speaker, drop)
}

/// Guidance lines that repeat an earlier one.
pub fn repeated(guidance: &[String]) -> usize {
    let mut seen = std::collections::HashSet::new();
    guidance.iter().filter(|g| !seen.insert(g.trim())).count()
}

/// The report for a prompt that dropped `built` history messages when it was built, then
/// `fitted` to the token budget, with `rungs` as from [`rung_drops`].
pub fn report(
    built: usize,
    fitted: crate::llm::budget::Fitted,
    rungs: &[BTreeMap<u8, usize>],
    guidance: usize,
) -> FitReport {
    let vault = match fitted.rung {
        0 => BTreeMap::new(),
        r => rungs.get(r - 1).cloned().unwrap_or_default(),
    };
    FitReport {
        history: built + fitted.dropped,
        vault,
        guidance,
    }
}

/// Counts a run's attempts that lost vault sections, to say so once when it keeps happening.
#[derive(Debug, Default)]
pub struct VaultLoss {
    attempts: usize,
    lost: usize,
    warned: bool,
}

impl VaultLoss {
    /// Notes one attempt's report; returns the warning the first time most of at least
    /// three attempts (and this one) lost vault sections.
    pub fn note(&mut self, fit: &FitReport, num_ctx: u32) -> Option<String> {
        self.attempts += 1;
        self.lost += usize::from(fit.lost_vault());
        if self.warned || !fit.lost_vault() || self.attempts < 3 || self.lost * 2 <= self.attempts {
            return None;
        }
        self.warned = true;
        Some(format!(
            "the vault does not fit: {} of {} requests so far left out vault sections to fit the \
             context ({num_ctx} tokens) — the sisters are writing without those settings; raise \
             num_ctx (and the server's context) or shorten the persona, world or vault context",
            self.lost, self.attempts
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeats_are_counted_once_each() {
        let g: Vec<String> = ["a", "b", "a", " a", "c", "b"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(repeated(&g), 3);
        assert_eq!(repeated(&[]), 0);
    }

    #[test]
    fn report_maps_the_rung_to_its_levels() {
        let rungs = vec![BTreeMap::from([(3, 2)]), BTreeMap::from([(3, 2), (2, 1)])];
        for (rung, want) in [(0usize, 0usize), (1, 2), (2, 3)] {
            let f = crate::llm::budget::Fitted { dropped: 4, rung };
            let r = report(1, f, &rungs, 0);
            assert_eq!(r.history, 5);
            assert_eq!(r.vault.values().sum::<usize>(), want);
            assert_eq!(r.lost_vault(), want > 0);
        }
        assert!(report(0, Default::default(), &rungs, 0).is_empty());
    }

    #[test]
    fn the_vault_warning_comes_once_and_only_when_it_keeps_happening() {
        let lost = FitReport {
            vault: BTreeMap::from([(3, 1)]),
            ..Default::default()
        };
        let kept = FitReport::default();
        let mut v = VaultLoss::default();
        assert!(v.note(&lost, 2048).is_none());
        assert!(v.note(&kept, 2048).is_none());
        assert!(v.note(&kept, 2048).is_none(), "1 of 3");
        assert!(v.note(&lost, 2048).is_none(), "2 of 4 is not most");
        let w = v.note(&lost, 2048).expect("3 of 5 is");
        assert!(w.contains("num_ctx") && w.contains("3 of 5"));
        let mut v = VaultLoss::default();
        let said: Vec<bool> = (0..10).map(|_| v.note(&lost, 2048).is_some()).collect();
        assert_eq!(said.iter().filter(|s| **s).count(), 1);
        assert!(said[2]);
    }
}
