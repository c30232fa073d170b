//! The synchronous part of one paired turn: the baseline run's committed turns turned back into
//! session input, the session rebuilt in front of turn t (through the session FSM's own commit
//! step, `Session::rebuilt`), and A's committed line of turn t judged again with the static
//! rules of side B. What costs no generation — the "compare overhead" the bench measures.

use std::sync::Arc;

use crate::director::{ContextTurn, RuleSet, Verdict};
use crate::duo::judging::{StaticInput, static_verdict};
use crate::duo::records::{AttemptRecord, GenStats, TurnFlags};
use crate::duo::{DuoConfig, RunSpec, Session};
use crate::store::{AttemptRow, RunRecord, TurnRow};
use crate::text::{Analysis, Analyzer};
use crate::vault::SharedVault;

/// The baseline's committed turns as session input, oldest first: each with its stored verdict
/// (or, when the store has none readable, the verdict the baseline rules give it now) and its
/// keywords. Stops at the first gap in the turn numbers.
pub fn prior_turns(
    rec: &RunRecord,
    rules: &RuleSet,
    analyzer: &dyn Analyzer,
) -> Vec<(AttemptRecord, TurnFlags)> {
    let mut out: Vec<(AttemptRecord, TurnFlags)> = Vec::new();
    for t in &rec.turns {
        if t.turn as usize != out.len() + 1 {
            break;
        }
        let row = committed_attempt(rec, t);
        let analysis = Arc::new(Analysis::new(&t.text));
        let stored: Option<Verdict> = row
            .and_then(|a| a.verdict.clone())
            .and_then(|v| serde_json::from_value(v).ok());
        let verdict = match stored {
            Some(v) => v,
            None => {
                let ctx = context_of(&out);
                let input = StaticInput {
                    rules,
                    analyzer,
                    vault: None,
                    speaker: &t.speaker,
                    text: &t.text,
                    analysis: &analysis,
                    context: &ctx,
                    scaffold: &[],
                    length_cut: None,
                };
                match static_verdict(&input) {
                    Some((v, _)) => v,
                    None => break,
                }
            }
        };
        let keywords = analysis.keywords(analyzer).to_vec();
        out.push((
            AttemptRecord {
                turn: t.turn as usize,
                speaker: t.speaker.clone(),
                attempt: row.map(|a| a.attempt as usize).unwrap_or(1),
                text: t.text.clone(),
                verdict,
                judge: row
                    .and_then(|a| a.judge.clone())
                    .and_then(|j| serde_json::from_value(j).ok()),
                guidance: Vec::new(),
                prompt_hash: String::new(),
                stats: GenStats::default(),
                keywords,
                analysis: Some(analysis),
            },
            t.flags,
        ));
    }
    out
}

/// The attempt row a committed turn points at (by id, else the last attempt with its text).
pub fn committed_attempt<'a>(rec: &'a RunRecord, t: &TurnRow) -> Option<&'a AttemptRow> {
    let mut of_turn = rec.attempts_of(t.turn);
    match t.attempt_id {
        Some(id) => of_turn.find(|a| a.id == id),
        None => of_turn
            .filter(|a| a.text.as_deref() == Some(t.text.as_str()))
            .last(),
    }
}

/// Attempts the baseline used for a turn (done or failed ones; at least 1).
pub fn attempts_used(rec: &RunRecord, turn: u32) -> usize {
    rec.attempts_of(turn).count().max(1)
}

/// The accepted lines of `prior` as judging context (exhausted RETRY lines left out).
pub fn context_of(prior: &[(AttemptRecord, TurnFlags)]) -> Vec<ContextTurn> {
    prior
        .iter()
        .filter(|(a, _)| a.verdict.status < crate::director::Status::Retry)
        .map(|(a, _)| ContextTurn {
            speaker: a.speaker.clone(),
            analysis: a
                .analysis
                .clone()
                .unwrap_or_else(|| Arc::new(Analysis::new(&a.text))),
        })
        .collect()
}

/// A session rebuilt in front of turn `prior.len() + 1` and started (its first attempt's
/// prompt is built), with each speaker's world from `vault`.
pub fn started(
    spec: &RunSpec,
    duo: &DuoConfig,
    rules: &RuleSet,
    prior: &[(AttemptRecord, TurnFlags)],
    vault: Option<&SharedVault>,
) -> Session {
    let spec = RunSpec {
        max_turns: prior.len() + 1,
        ..spec.clone()
    };
    let mut s = Session::rebuilt(spec, duo.clone(), rules.clone(), prior.to_vec());
    if let Some(v) = vault {
        let (_, work) = v.get();
        let ids: Vec<String> = rules.data.characters.keys().cloned().collect();
        let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
        s.set_worlds(crate::vault::shared::worlds(&work, &duo.world, &ids));
    }
    let _ = s.start();
    s
}

/// A's line of turn `prior.len() + 1` judged by side B's static rules, with the prompt A's
/// line answered (`base_*`) for the prompt-echo check. Returns the verdict and keywords.
#[allow(clippy::too_many_arguments)]
pub fn rejudge_a(
    spec: &RunSpec,
    base_duo: &DuoConfig,
    base_rules: &RuleSet,
    rules_b: &RuleSet,
    prior: &[(AttemptRecord, TurnFlags)],
    vault: Option<&SharedVault>,
    analyzer: &dyn Analyzer,
    speaker: &str,
    text: &str,
) -> Option<(Verdict, Vec<String>)> {
    let a_session = started(spec, base_duo, base_rules, prior, vault);
    let scaffold = a_session
        .current()
        .map(|c| c.scaffold.clone())
        .unwrap_or_default();
    let ctx = context_of(prior);
    let analysis = Arc::new(Analysis::new(text));
    static_verdict(&StaticInput {
        rules: rules_b,
        analyzer,
        vault,
        speaker,
        text,
        analysis: &analysis,
        context: &ctx,
        scaffold: &scaffold,
        length_cut: None,
    })
}
