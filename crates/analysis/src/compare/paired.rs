//! Paired mode: for each turn t of a stored run (A), side B generates turn t again — K samples,
//! the full Director loop through the run driver — facing the conversation A's line faced, and
//! A's line is judged again under B's rules (static rules and the same LLM judge).

use std::sync::Arc;
use std::time::Duration;

use super::outcome::{Side, TurnRow, change, diff};
use super::prepare::{attempts_used, prior_turns, rejudge_a};
use super::variant::Applied;
use crate::director::{RuleSet, Status, Verdict};
use crate::duo::backend::Backend;
use crate::duo::driver::{Driver, Notice};
use crate::duo::{AttemptRecord, DuoConfig, Effect, RunEnd, RunSpec, TurnRecord};
use crate::store::{RunRecord, StoreHandle};
use crate::text::Analyzer;
use crate::vault::SharedVault;

/// Everything one paired comparison needs.
pub struct Paired {
    pub baseline: RunRecord,
    pub base_rules: RuleSet,
    pub base_duo: DuoConfig,
    pub b: Applied,
    pub spec: RunSpec,
    pub vault: Option<Arc<SharedVault>>,
    pub analyzer: Arc<dyn Analyzer>,
    pub backend: Backend,
    pub store: StoreHandle,
    pub from: usize,
    pub to: usize,
    /// One stored run per sample, where B's attempts go.
    pub sample_runs: Vec<i64>,
}

/// Why a comparison stopped.
#[derive(Debug)]
pub enum PairedError {
    /// The endpoint failed (exit 3).
    Endpoint(String),
    /// The store or the input could not be used (exit 2).
    Other(String),
}

impl Paired {
    /// Runs every turn from `from` to `to`; `progress` hears each finished row.
    pub async fn run(
        &self,
        progress: &mut dyn FnMut(&TurnRow),
    ) -> Result<Vec<TurnRow>, PairedError> {
        let prior_all = prior_turns(&self.baseline, &self.base_rules, self.analyzer.as_ref());
        let mut rows = Vec::new();
        for t in self.from..=self.to.min(prior_all.len()) {
            let prior = &prior_all[..t - 1];
            let (a_rec, a_flags) = &prior_all[t - 1];
            let a = self.side_a(prior, a_rec, a_flags.exhausted).await?;
            let mut b = Vec::new();
            for run_id in &self.sample_runs {
                b.push(self.side_b(prior, *run_id).await?);
            }
            let row = TurnRow {
                turn: t,
                speaker: a_rec.speaker.clone(),
                change: change(&a, &b),
                diff: diff(&a.text, b.first().map(|s| s.text.as_str()).unwrap_or("")),
                a,
                b,
            };
            progress(&row);
            rows.push(row);
        }
        Ok(rows)
    }

    async fn side_a(
        &self,
        prior: &[(AttemptRecord, crate::duo::TurnFlags)],
        a: &AttemptRecord,
        exhausted: bool,
    ) -> Result<Side, PairedError> {
        let (mut verdict, _) = rejudge_a(
            &self.spec,
            &self.base_duo,
            &self.base_rules,
            &self.b.rules,
            prior,
            self.vault.as_deref(),
            self.analyzer.as_ref(),
            &a.speaker,
            &a.text,
        )
        .ok_or_else(|| PairedError::Other(format!("unknown speaker `{}`", a.speaker)))?;
        if let Some(v) = &self.vault {
            crate::vault::semantic::amend(&mut verdict, v, &a.speaker, &a.text).await;
        }
        let mut judge = None;
        if self.spec.judge && verdict.status != Status::Retry {
            let partner_last = prior
                .iter()
                .rev()
                .find(|(r, _)| r.verdict.status < Status::Retry)
                .filter(|(r, _)| r.speaker != a.speaker)
                .map(|(r, _)| r.text.clone());
            let messages = crate::duo::judging::judge_messages(
                &self.b.rules,
                &self.spec.topic,
                &self.b.duo.world,
                &a.speaker,
                &a.text,
                partner_last.as_deref(),
            );
            let outcome = self
                .backend
                .judge(a.turn, 0, messages, &self.b.rules.data.judge)
                .await;
            if let Some(f) = outcome.finding() {
                verdict.findings.push(f);
            }
            verdict.status = Verdict::status_of(&verdict.findings);
            judge = Some(outcome);
        }
        Ok(Side::new(
            &a.text,
            &verdict,
            judge.as_ref(),
            exhausted && verdict.status == Status::Retry,
            attempts_used(&self.baseline, a.turn as u32),
        ))
    }

    async fn side_b(
        &self,
        prior: &[(AttemptRecord, crate::duo::TurnFlags)],
        run_id: i64,
    ) -> Result<Side, PairedError> {
        let session = session_b(self, prior);
        let driver = Driver {
            backend: self.backend.clone(),
            store: self.store.clone(),
            analyzer: self.analyzer.clone(),
            run_id,
            save_every: Duration::from_millis(500),
            vault: self.vault.clone(),
        };
        let mut attempts: Vec<AttemptRecord> = Vec::new();
        let mut committed: Option<TurnRecord> = None;
        let mut error: Option<String> = None;
        let mut store_error: Option<String> = None;
        let mut sink = |n: Notice<'_>| match n {
            Notice::Effect(Effect::AttemptDone(a)) => attempts.push((**a).clone()),
            Notice::Effect(Effect::TurnCommitted(t)) => committed = Some((**t).clone()),
            Notice::Effect(Effect::AttemptFailed { error: e, .. }) => error = Some(e.clone()),
            Notice::StoreError(e) => store_error = Some(e),
            _ => {}
        };
        let end = driver.drive(session, None, &mut sink).await;
        if let Some(e) = store_error {
            return Err(PairedError::Other(format!(
                "could not save to the store: {e}"
            )));
        }
        let Some(t) = committed.filter(|_| end == RunEnd::Completed) else {
            let e = error.unwrap_or_else(|| format!("the turn ended {}", end.as_str()));
            return Err(PairedError::Endpoint(e));
        };
        let judge = attempts
            .iter()
            .find(|a| a.attempt == t.attempt)
            .and_then(|a| a.judge.clone());
        Ok(Side::new(
            &t.text,
            &t.verdict,
            judge.as_ref(),
            t.flags.exhausted,
            attempts.len(),
        ))
    }
}

/// B's session for the turn after `prior`, not yet started (the driver starts it).
fn session_b(p: &Paired, prior: &[(AttemptRecord, crate::duo::TurnFlags)]) -> crate::duo::Session {
    let spec = RunSpec {
        max_turns: prior.len() + 1,
        ..p.spec.clone()
    };
    crate::duo::Session::rebuilt(spec, p.b.duo.clone(), p.b.rules.clone(), prior.to_vec())
}
