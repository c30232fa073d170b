//! Whether a line may be said: the Director's static rules, `prompt_echo` against the prompt's
//! instruction parts, L5 (the world view) and the vault's leak review — the same checks for a
//! model line, a pattern line and her fallback line, in the workbench and on LINE.
//!
//! A line is **usable** when its verdict is PASS or WARN (INFO findings never count). RETRY,
//! MODIFY and UNSCORED are not usable: a check that asks for another line, or could not say, never
//! lets a line out (fail closed).

use std::sync::Arc;

use crate::director::{self, Character, RuleSet, Status, Verdict};
use crate::safety::{SafetyRules, Sister};
use crate::text::{Analysis, Analyzer};
use crate::vault::SharedVault;

/// Only PASS and WARN lines are shown to a user or sent.
pub fn usable(v: &Verdict) -> bool {
    matches!(v.status, Status::Pass | Status::Warn)
}

/// The rules behind a verdict's status, e.g. `leak ×5, prompt_echo`.
pub fn blocking_rules(v: &Verdict) -> String {
    let mut counts: Vec<(String, usize)> = Vec::new();
    for f in v.findings.iter().filter(|f| f.status == v.status) {
        let name = serde_json::to_value(f.rule)
            .ok()
            .and_then(|j| j.as_str().map(str::to_string))
            .unwrap_or_else(|| format!("{:?}", f.rule));
        match counts.iter_mut().find(|(n, _)| *n == name) {
            Some((_, c)) => *c += 1,
            None => counts.push((name, 1)),
        }
    }
    counts
        .into_iter()
        .map(|(n, c)| if c > 1 { format!("{n} ×{c}") } else { n })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Everything the judgement reads.
pub struct Checks<'a> {
    pub rules: &'a RuleSet,
    pub analyzer: &'a dyn Analyzer,
    pub safety: &'a SafetyRules,
    /// None: no story vault, so no leak review (said at start by the caller).
    pub vault: Option<&'a SharedVault>,
}

impl Checks<'_> {
    /// The verdict on `reply` said by `me` after `history` (user, her reply pairs, blocked
    /// turns already left out), `scaffold` being the prompt's instruction parts (empty for a
    /// stored line). Also returns L5's trace line when it fired, with the in-character fix.
    pub fn judge(
        &self,
        me: &Character,
        history: &[(String, String)],
        reply: &str,
        scaffold: &[String],
    ) -> (Verdict, Option<String>) {
        let sister = Sister::parse(&me.id).unwrap_or(Sister::Yana);
        let a = Analysis::new(reply);
        let context: Vec<director::ContextTurn> = history
            .iter()
            .flat_map(|(u, r)| [("user", u), (me.id.as_str(), r)])
            .filter(|(_, t)| !t.is_empty())
            .map(|(who, t)| director::ContextTurn {
                speaker: who.to_string(),
                analysis: Arc::new(Analysis::new(t)),
            })
            .collect();
        let mut v = director::judge(self.rules, self.analyzer, me, &a, &context);
        v.findings.extend(director::rules::prompt_echo::check(
            &a,
            &self.rules.data.prompt_echo,
            scaffold,
        ));
        let l5 = self.safety.worldview.check(reply, sister);
        let trace = (!l5.is_empty()).then(|| {
            let mut s = format!("L5 worldview: {} meta word(s) break the fiction", l5.len());
            if let Some(fix) = self.safety.worldview.correct(reply, sister) {
                s.push_str(&format!(" — in character: {fix}"));
            }
            s
        });
        v.findings.extend(l5);
        if let Some(vault) = self.vault {
            let r = vault.reviewer(&me.id);
            v.findings.extend(crate::vault::review::findings(
                &r.review(reply),
                r.input(),
                r.config(),
            ));
        }
        v.status = Verdict::status_of(&v.findings);
        (v, trace)
    }
}
