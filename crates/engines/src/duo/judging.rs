//! The Director loop's two judging steps as plain functions, shared by the run driver and the
//! paired comparison (`compare`): the static verdict of one line (rules, prompt echo, world
//! view, vault leak review, token-limit cut) and the LLM judge's prompt for it.

use std::sync::Arc;

use super::cut::LengthCut;
use crate::director::judge::{self, JudgeInput};
use crate::director::{self, ContextTurn, RuleSet, Verdict};
use crate::llm::Message;
use crate::text::{Analysis, Analyzer};
use crate::vault::SharedVault;

/// Everything the static verdict of one line depends on.
pub struct StaticInput<'a> {
    pub rules: &'a RuleSet,
    pub analyzer: &'a dyn Analyzer,
    pub vault: Option<&'a SharedVault>,
    pub speaker: &'a str,
    pub text: &'a str,
    pub analysis: &'a Arc<Analysis>,
    /// The accepted lines before it (exhausted RETRY lines left out).
    pub context: &'a [ContextTurn],
    /// The instruction parts of the prompt that produced it (for `prompt_echo`).
    pub scaffold: &'a [String],
    pub length_cut: Option<&'a LengthCut>,
}

/// The static verdict and the line's keywords; None when the ruleset does not know the speaker.
pub fn static_verdict(i: &StaticInput<'_>) -> Option<(Verdict, Vec<String>)> {
    let ch = i.rules.character(i.speaker)?;
    let mut verdict = director::judge(i.rules, i.analyzer, ch, i.analysis, i.context);
    // prompt_echo: the line against the instruction parts of its own prompt.
    verdict.findings.extend(director::rules::prompt_echo::check(
        i.analysis,
        &i.rules.data.prompt_echo,
        i.scaffold,
    ));
    // L5: meta talk that breaks the fiction (AI, model, prompt …) is a RETRY.
    if let Some(s) = crate::safety::Sister::parse(&ch.id) {
        verdict.findings.extend(
            crate::safety::SafetyRules::shared()
                .worldview
                .check(i.text, s),
        );
    }
    // Director rule `leak`: the speaker's text against the vault as she sees it.
    if let Some(v) = i.vault {
        let reviewer = v.reviewer(&ch.id);
        let review = reviewer.review(i.text);
        verdict.findings.extend(crate::vault::review::findings(
            &review,
            reviewer.input(),
            reviewer.config(),
        ));
    }
    // A reply the token limit cut is never committed silently (issue 13 §4).
    if let Some(cut) = i.length_cut {
        verdict.findings.push(super::cut::finding(cut));
    }
    verdict.status = Verdict::status_of(&verdict.findings);
    let keywords = i.analysis.keywords(i.analyzer).to_vec();
    Some((verdict, keywords))
}

/// The LLM judge's messages for `text` spoken by `speaker`.
pub fn judge_messages(
    rules: &RuleSet,
    topic: &str,
    world: &str,
    speaker: &str,
    text: &str,
    partner_last: Option<&str>,
) -> Vec<Message> {
    let (name, role, partner) = match rules.character(speaker) {
        Some(c) => {
            let p = rules
                .character(&c.partner)
                .map(|p| p.display_name.clone())
                .unwrap_or_default();
            (c.display_name.clone(), c.role.clone(), p)
        }
        None => (speaker.to_string(), String::new(), String::new()),
    };
    let names: Vec<(&str, &str)> = rules
        .data
        .characters
        .iter()
        .map(|(id, c)| (id.as_str(), c.display_name.as_str()))
        .collect();
    judge::prompt(&JudgeInput {
        speaker_name: &name,
        speaker_role: &role,
        partner_name: &partner,
        topic,
        world,
        partner_last,
        text,
        examples: &rules.data.judge.examples,
        names: &names,
    })
}
