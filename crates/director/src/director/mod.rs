//! The Director (seed 001): static rules over a cached `Analysis`, producing a `Verdict`.

pub mod finding;
pub mod judge;
pub mod lexicon;
pub mod messages;
pub mod rules;
pub mod ruleset;
mod words;

use std::sync::Arc;

pub use finding::{Finding, RuleId, Status, ToneScore, Verdict};
pub use ruleset::{Character, RuleSet, ToneMode};

use crate::text::{Analysis, Analyzer};

/// A previous, committed turn given as context (oldest first).
#[derive(Debug, Clone)]
pub struct ContextTurn {
    /// Character id of the speaker.
    pub speaker: String,
    pub analysis: Arc<Analysis>,
}

/// Everything a rule may look at. Rules are pure functions of this.
pub struct Input<'a> {
    pub a: &'a Analysis,
    pub hits: &'a [lexicon::Hit],
    pub character: &'a Character,
    pub rules: &'a ruleset::RuleData,
    pub analyzer: &'a dyn Analyzer,
    pub context: &'a [ContextTurn],
}

/// Re-runs one rule on a verdict made earlier from the same analysis: its findings are
/// replaced, the tone score too for `tone`, and the status recomputed.
pub fn rejudge_rule(
    rules: &RuleSet,
    analyzer: &dyn Analyzer,
    speaker: &Character,
    a: &Analysis,
    context: &[ContextTurn],
    rule: RuleId,
    verdict: &mut Verdict,
) {
    let hits = rules
        .lexicon(&speaker.id)
        .map(|l| l.hits(a))
        .unwrap_or_default();
    let input = Input {
        a,
        hits: &hits,
        character: speaker,
        rules: &rules.data,
        analyzer,
        context,
    };
    let (mut findings, tone) = rules::run_one(&input, rule);
    apply_severity(&rules.data, &mut findings);
    verdict.findings.retain(|f| f.rule != rule);
    verdict.findings.extend(findings);
    if let Some(t) = tone {
        verdict.tone = t;
    }
    verdict.status = Verdict::status_of(&verdict.findings);
    verdict.ruleset = rules.version.clone();
}

/// Judges one utterance by `speaker` (a character id, name or alias).
pub fn judge(
    rules: &RuleSet,
    analyzer: &dyn Analyzer,
    speaker: &Character,
    a: &Analysis,
    context: &[ContextTurn],
) -> Verdict {
    let hits = rules
        .lexicon(&speaker.id)
        .map(|l| l.hits(a))
        .unwrap_or_default();
    let input = Input {
        a,
        hits: &hits,
        character: speaker,
        rules: &rules.data,
        analyzer,
        context,
    };
    let (mut findings, tone, topics) = rules::run_all(&input);
    apply_severity(&rules.data, &mut findings);
    Verdict {
        status: Verdict::status_of(&findings),
        findings,
        tone,
        lines: a.lines,
        sentences: a.sentences.len(),
        topics,
        ruleset: rules.version.clone(),
        analyzer: analyzer.kind(),
    }
}

/// The rules file's `[severity]` on each finding: a rule set `off` still shows what it saw, as
/// INFO, with the reason in its message.
pub fn apply_severity(data: &ruleset::RuleData, findings: &mut [Finding]) {
    if data.severity.is_empty() {
        return;
    }
    for f in findings.iter_mut() {
        if let Some(sev) = data.severity.get(&f.rule) {
            let s = sev.apply(f.status);
            if s != f.status {
                f.message = format!(
                    "{}（[severity] {} = \"{}\"）",
                    f.message,
                    f.rule,
                    sev.as_str()
                );
                f.status = s;
            }
        }
    }
}
