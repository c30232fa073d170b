//! The judgement a pattern's reply passes before it is stored (`patterns add`, `accept`,
//! `import`): the Director's static rules and L5 (the world view) through `chat::verdict`, as
//! the bot judges every line before saying it. A reply that is not usable (RETRY, MODIFY,
//! UNSCORED) is refused with its findings — the bot would skip it anyway; a WARN is stored with
//! a note. (No story vault is read here: the bot's leak review still runs on every use.)

use std::sync::Arc;

use super::Fail;
use crate::director::RuleSet;
use crate::patterns::Character;
use crate::safety::SafetyRules;
use crate::text::Analyzer;
use crate::text::analyzer::{self, AnalyzerChoice};

pub struct Gate {
    rules: RuleSet,
    safety: SafetyRules,
    analyzer: Arc<dyn Analyzer>,
}

impl Gate {
    /// The rules, the safety data and the analyzer ($KAKEAI_ANALYZER: auto, lindera, fallback).
    pub fn load() -> Result<Gate, Fail> {
        let choice = match std::env::var("KAKEAI_ANALYZER").ok().as_deref() {
            Some("fallback") => AnalyzerChoice::Fallback,
            Some("lindera") => AnalyzerChoice::Lindera,
            _ => AnalyzerChoice::Auto,
        };
        Ok(Gate {
            rules: RuleSet::load(None).map_err(|e| Fail(2, e.to_string()))?,
            safety: SafetyRules::load().map_err(|e| Fail(2, e.to_string()))?,
            analyzer: analyzer::open(choice, &mut |m| eprintln!("{m}"))
                .map_err(|e| Fail(2, e.to_string()))?,
        })
    }

    /// Ok(None): usable and clean; Ok(Some(note)): usable with a WARN; Err(why): refused.
    /// A reply with no character is judged as each sister's and must pass both.
    pub fn check(
        &self,
        character: Option<Character>,
        text: &str,
    ) -> Result<Option<String>, String> {
        let who: Vec<&str> = match character {
            Some(c) => vec![c.as_str()],
            None => vec!["yana", "ayu"],
        };
        let mut notes = Vec::new();
        for id in who {
            let Some(me) = self.rules.character(id) else {
                return Err(format!("no persona for {id} in the ruleset"));
            };
            let (v, _) = crate::chat::Checks {
                rules: &self.rules,
                analyzer: self.analyzer.as_ref(),
                safety: &self.safety,
                vault: None,
            }
            .judge(me, &[], text, &[]);
            let findings: Vec<String> = v
                .reported_findings()
                .filter(|f| f.status >= crate::director::Status::Warn)
                .map(|f| format!("{}: {}", f.status, f.message))
                .collect();
            if !crate::chat::usable(&v) {
                return Err(format!(
                    "the reply is judged {} for {id} ({}) — the bot would never say it: {}",
                    v.status,
                    crate::chat::verdict::blocking_rules(&v),
                    findings.join(" / ")
                ));
            }
            if !findings.is_empty() {
                notes.push(format!("{id}: {}", findings.join(" / ")));
            }
        }
        Ok((!notes.is_empty()).then(|| format!("stored with WARN — {}", notes.join("; "))))
    }
}
