//! Performs the session's effects: streams lines from the LLM client, runs the Director's
//! static rules on cached analyses, asks the LLM judge, and writes every step to the store.
//! Network work runs in tasks that report back over a channel; cancelling drops the task.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::backend::Backend;
use super::records::RunEnd;
use super::session::{Effect, Event, RunSpec, Session, State};
use crate::director::ContextTurn;
use crate::llm::{LlmConfig, Message};
use crate::store::{
    AttemptOutcome, AttemptState, NewAttempt, NewRun, RunStatus, StoreHandle, TurnCommit,
};
use crate::text::{AnalysisCache, Analyzer};
use crate::vault::SharedVault;

/// What the driver reports to its sink (the headless printer, later the TUI).
pub enum Notice<'a> {
    Token {
        turn: usize,
        attempt: usize,
        delta: &'a str,
    },
    /// An effect whose store write (if it has one) committed: safe to acknowledge.
    Effect(&'a Effect),
    /// A write to the store failed after waiting for the lock and retrying: what it would have
    /// recorded is NOT acknowledged, and the run ends failed (a `RunDone` follows).
    StoreError(String),
    /// An attempt's prompt left something out to fit the context (sent when it is sent).
    Fitted {
        turn: usize,
        attempt: usize,
        fit: &'a super::fitting::FitReport,
    },
    /// Said once per run: most prompts lose their vault to fit the context, with the fix.
    Warning(String),
}

pub struct Driver {
    pub backend: Backend,
    pub store: StoreHandle,
    pub analyzer: Arc<dyn Analyzer>,
    pub run_id: i64,
    /// How often a streaming attempt's partial text is saved.
    pub save_every: Duration,
    /// The story vault: each speaker's filtered context goes into her prompt, and every
    /// attempt gets a leak review. None: the scene text alone, no leak rule.
    pub vault: Option<Arc<SharedVault>>,
}

enum Msg {
    Token {
        turn: usize,
        attempt: usize,
        delta: String,
    },
    /// A request went over the wire (its stored form) with what fitting gave up.
    Sent {
        turn: usize,
        attempt: usize,
        request: serde_json::Value,
        fit: super::fitting::FitReport,
    },
    Event(Event),
}

/// What a prompt had given up before the token budget: history left out when it was built,
/// its vault rungs' sections, repeated guidance (see `duo::fitting`).
#[derive(Clone, Default)]
struct FitBase {
    built: usize,
    rungs: Vec<std::collections::BTreeMap<u8, usize>>,
    guidance: usize,
}

/// Per-attempt bookkeeping the store needs.
struct Started {
    sent: Instant,
    id: Option<i64>,
    last_save: Instant,
    /// The exact request (messages and options), stored once the attempt has its row.
    request: Option<serde_json::Value>,
}

impl Driver {
    /// Runs `session` to its end (or, with `controls`, until the control channel closes after
    /// the end). Returns how the run ended.
    pub async fn drive(
        &self,
        mut session: Session,
        mut controls: Option<mpsc::UnboundedReceiver<Event>>,
        sink: &mut (dyn FnMut(Notice<'_>) + Send),
    ) -> RunEnd {
        let (tx, mut rx) = mpsc::unbounded_channel::<Msg>();
        let mut task: Option<JoinHandle<()>> = None;
        let mut attempts: HashMap<(usize, usize), Started> = HashMap::new();
        let mut cache = AnalysisCache::new();
        let mut vault_gen = 0;
        let mut vault_loss = super::fitting::VaultLoss::default();
        self.sync_vault(&mut session, &mut vault_gen);
        let mut queue: std::collections::VecDeque<Effect> = session.start().into();
        let mut ended = None;
        let mut store_failed = false;
        loop {
            while let Some(effect) = queue.pop_front() {
                let applied = self
                    .apply(
                        &effect,
                        &mut session,
                        &tx,
                        &mut task,
                        &mut attempts,
                        &mut cache,
                    )
                    .await;
                let more = match applied {
                    Ok(more) => more,
                    Err(e) => {
                        // Not acknowledged: the effect's write did not commit. The run stops
                        // here, failed, so nothing after it is acknowledged either.
                        sink(Notice::StoreError(e.clone()));
                        queue.clear();
                        if let Some(t) = task.take() {
                            t.abort();
                        }
                        let failed = self.fail_run(&e).await;
                        sink(Notice::Effect(&failed));
                        ended = Some(RunEnd::Failed);
                        store_failed = true;
                        break;
                    }
                };
                if let Effect::RunDone { status, .. } = &effect {
                    ended = Some(*status);
                }
                sink(Notice::Effect(&effect));
                queue.extend(more);
            }
            if store_failed {
                // The session may still think it runs; nothing more may be acknowledged.
                break;
            }
            // Without a reviewer nobody can resolve a hold: stop instead of waiting forever.
            if controls.is_none() && session.state() == State::Held {
                queue.extend(session.handle(Event::Stop));
                continue;
            }
            if ended.is_some() && controls.is_none() {
                break;
            }
            tokio::select! {
                Some(msg) = rx.recv() => match msg {
                    Msg::Token { turn, attempt, delta } => {
                        self.sync_vault(&mut session, &mut vault_gen);
                        queue.extend(session.on_token(turn, attempt, &delta));
                        sink(Notice::Token { turn, attempt, delta: &delta });
                        self.save_partial(&session, &mut attempts, turn, attempt);
                    }
                    Msg::Sent { turn, attempt, request, fit } => {
                        if !fit.is_empty() {
                            sink(Notice::Fitted { turn, attempt, fit: &fit });
                        }
                        if let Some(w) = vault_loss.note(&fit, self.num_ctx()) {
                            sink(Notice::Warning(w));
                        }
                        if let Err(e) = self.keep_request(&mut attempts, turn, attempt, request).await {
                            sink(Notice::StoreError(e));
                        }
                    }
                    Msg::Event(ev) => {
                        self.sync_vault(&mut session, &mut vault_gen);
                        queue.extend(session.handle(ev));
                    }
                },
                ctl = recv(&mut controls) => match ctl {
                    Some(ev) => {
                        self.sync_vault(&mut session, &mut vault_gen);
                        queue.extend(session.handle(ev));
                    }
                    None => {
                        controls = None;
                        if ended.is_some() {
                            break;
                        }
                    }
                },
            }
        }
        if let Some(t) = task.take() {
            t.abort();
        }
        ended.unwrap_or(RunEnd::Stopped)
    }

    /// Before the session may build a prompt: pick up a vault the writer saved since.
    fn sync_vault(&self, session: &mut Session, seen: &mut u64) {
        let Some(v) = &self.vault else { return };
        if v.generation() == *seen {
            return;
        }
        let (generation, work) = v.get();
        session.use_work(&work);
        *seen = generation;
    }

    #[allow(clippy::too_many_arguments)]
    async fn apply(
        &self,
        effect: &Effect,
        session: &mut Session,
        tx: &mpsc::UnboundedSender<Msg>,
        task: &mut Option<JoinHandle<()>>,
        attempts: &mut HashMap<(usize, usize), Started>,
        cache: &mut AnalysisCache,
    ) -> Result<Vec<Effect>, String> {
        let run_id = self.run_id;
        let report = |r: Result<(), String>| r;
        match effect {
            Effect::Generate {
                turn,
                attempt,
                prompt,
                speaker,
                guidance,
            } => {
                let now = Instant::now();
                // A live request is kept as it goes over the wire (`Msg::Sent`).
                let request = match &self.backend {
                    Backend::Replay(_) => Some(super::request_log::replay_json(&prompt.messages)),
                    Backend::Live(_) => None,
                };
                attempts.insert(
                    (*turn, *attempt),
                    Started {
                        sent: now,
                        id: None,
                        last_save: now,
                        request,
                    },
                );
                let base = FitBase {
                    built: prompt.dropped,
                    rungs: self.rungs_of(speaker),
                    guidance: super::fitting::repeated(guidance),
                };
                if let Some(t) = task.take() {
                    t.abort();
                }
                let lighter = super::prompt::lighter_systems(
                    &prompt.messages,
                    session.world_for(speaker),
                    session.world_ladder_for(speaker),
                );
                *task = Some(self.spawn_generation(
                    tx,
                    *turn,
                    *attempt,
                    prompt.messages.clone(),
                    lighter,
                    base,
                ));
            }
            Effect::AttemptStarted {
                turn,
                speaker,
                attempt,
                guidance,
                prompt_hash,
            } => {
                let st = attempts
                    .entry((*turn, *attempt))
                    .or_insert_with(|| Started {
                        sent: Instant::now(),
                        id: None,
                        last_save: Instant::now(),
                        request: None,
                    });
                let text = session
                    .current()
                    .map(|c| c.text.clone())
                    .unwrap_or_default();
                let new = NewAttempt {
                    run_id,
                    turn: *turn as u32,
                    speaker: speaker.clone(),
                    attempt: *attempt as u32,
                    tokens: u32::from(!text.is_empty()),
                    text,
                    guidance: (!guidance.is_empty()).then(|| guidance.join("\n")),
                    prompt_hash: Some(prompt_hash.clone()),
                    started_at: SystemTime::now() - st.sent.elapsed(),
                    first_token_ms: Some(st.sent.elapsed().as_millis() as u64),
                };
                let request = st.request.take();
                let saved = self.store.call(move |s| {
                    let id = s.start_attempt(&new)?;
                    if let Some(r) = &request {
                        s.save_request(id, r)?;
                    }
                    Ok(id)
                });
                match saved.await {
                    Ok(id) => st.id = Some(id),
                    Err(e) => report(Err(e.to_string()))?,
                }
            }
            Effect::StaticJudge {
                turn,
                speaker,
                attempt,
                text,
            } => {
                let rules = session.rules().clone();
                let a = cache.get_or_analyze(text);
                // Exhausted RETRY lines are not part of what the next line is judged against.
                let context: Vec<ContextTurn> = session
                    .context()
                    .map(|r| ContextTurn {
                        speaker: r.speaker.clone(),
                        analysis: cache.get_or_analyze(&r.text),
                    })
                    .collect();
                let current = session.current();
                let scaffold = current.map(|c| c.scaffold.clone()).unwrap_or_default();
                let input = super::judging::StaticInput {
                    rules: &rules,
                    analyzer: self.analyzer.as_ref(),
                    vault: self.vault.as_deref(),
                    speaker,
                    text,
                    analysis: &a,
                    context: &context,
                    scaffold: &scaffold,
                    length_cut: current.and_then(|c| c.stats().length_cut.as_ref()),
                };
                let Some((mut verdict, keywords)) = super::judging::static_verdict(&input) else {
                    return Ok(Vec::new());
                };
                // The semantic check (seed 004 §5.3) when an embedding model is configured.
                if let Some(v) = &self.vault {
                    crate::vault::semantic::amend(&mut verdict, v, speaker, text).await;
                }
                return Ok(session.handle(Event::StaticJudged {
                    turn: *turn,
                    attempt: *attempt,
                    verdict,
                    keywords,
                    analysis: a,
                }));
            }
            Effect::LlmJudge {
                turn,
                speaker,
                attempt,
                text,
                partner_last,
            } => {
                let rules = session.rules().clone();
                let messages = super::judging::judge_messages(
                    &rules,
                    &session.spec().topic,
                    &session.duo().world,
                    speaker,
                    text,
                    partner_last.as_deref(),
                );
                let (backend, tx) = (self.backend.clone(), tx.clone());
                let rule = rules.data.judge.clone();
                let (turn, attempt) = (*turn, *attempt);
                *task = Some(tokio::spawn(async move {
                    let outcome = backend.judge(turn, attempt, messages, &rule).await;
                    let _ = tx.send(Msg::Event(Event::LlmJudged {
                        turn,
                        attempt,
                        outcome,
                    }));
                }));
            }
            Effect::AttemptDone(rec) => {
                let id = self
                    .ensure_row(attempts, rec.turn, rec.attempt, &rec.speaker)
                    .await?;
                let outcome = AttemptOutcome {
                    state: AttemptState::Done,
                    text: rec.text.clone(),
                    tokens: Some(rec.stats.tokens),
                    status: Some(rec.verdict.status),
                    verdict: serde_json::to_value(&rec.verdict).ok(),
                    judge: rec
                        .judge
                        .as_ref()
                        .and_then(|j| serde_json::to_value(j).ok()),
                    judge_raw: rec.judge.as_ref().map(|j| j.raw.join("\n---\n")),
                    latency_ms: Some(rec.stats.latency_ms),
                    error: None,
                    fallback: rec
                        .stats
                        .fallback
                        .as_deref()
                        .map(|f| crate::text::sanitize::for_terminal(f).into_owned()),
                };
                report(self.finish(id, outcome).await)?;
            }
            Effect::AttemptFailed {
                turn,
                attempt,
                error,
            } => {
                let speaker = session.speaker_of(*turn);
                let id = self.ensure_row(attempts, *turn, *attempt, &speaker).await?;
                let mut o = AttemptOutcome::done(String::new());
                o.state = AttemptState::Failed;
                // Stored for display: nothing the server sent may steer a terminal.
                o.error = Some(crate::text::sanitize::for_terminal(error).into_owned());
                report(self.finish(id, o).await)?;
            }
            Effect::AttemptCancelled {
                turn,
                attempt,
                text,
            } => {
                let id = attempts.get(&(*turn, *attempt)).and_then(|s| s.id);
                // The session has already let go of the attempt: its text travels with the
                // effect, so a stop keeps every character that arrived.
                let mut o = AttemptOutcome::done(text.clone());
                o.state = AttemptState::Cancelled;
                report(self.finish(id, o).await)?;
            }
            Effect::TurnCommitted(rec) => {
                let commit = TurnCommit {
                    run_id,
                    turn: rec.turn as u32,
                    speaker: rec.speaker.clone(),
                    attempt_id: attempts.get(&(rec.turn, rec.attempt)).and_then(|s| s.id),
                    text: rec.text.clone(),
                    status: rec.verdict.status,
                    flags: rec.flags,
                    hook: rec.hook.clone(),
                    hook_depth: Some(u32::from(rec.depth)),
                };
                let r = self.store.call(move |s| s.commit_turn(&commit)).await;
                report(r.map_err(|e| e.to_string()))?;
            }
            Effect::Truncated { from_turn } => {
                let from = *from_turn as u32;
                let r = self
                    .store
                    // Set aside as a branch, not deleted (issue 14 §5).
                    .call(move |s| s.branch_off(run_id, from).map(drop))
                    .await;
                report(r.map_err(|e| e.to_string()))?;
            }
            Effect::Cancel => {
                if let Some(t) = task.take() {
                    t.abort();
                }
            }
            Effect::RunDone { status, error } => {
                let st = match status {
                    RunEnd::Completed => RunStatus::Completed,
                    RunEnd::Stopped => RunStatus::Stopped,
                    RunEnd::Failed => RunStatus::Failed,
                };
                let error = error
                    .as_deref()
                    .map(|e| crate::text::sanitize::for_terminal(e).into_owned());
                let r = self
                    .store
                    .call(move |s| s.finish_run(run_id, st, error.as_deref()))
                    .await;
                report(r.map_err(|e| e.to_string()))?;
            }
            Effect::TurnStarted { .. }
            | Effect::Held { .. }
            | Effect::Paused
            | Effect::Resumed
            | Effect::Unsuitable { .. } => {}
        }
        Ok(Vec::new())
    }

    /// The run after a write that failed for good: recorded failed if the store takes it (it
    /// may not: the same lock may still be held — then the next start marks it interrupted).
    async fn fail_run(&self, error: &str) -> Effect {
        let error = format!("could not save to the store: {error}");
        let (run_id, e) = (self.run_id, error.clone());
        let _ = self
            .store
            .call(move |s| s.finish_run(run_id, RunStatus::Failed, Some(&e)))
            .await;
        Effect::RunDone {
            status: RunEnd::Failed,
            error: Some(error),
        }
    }

    fn spawn_generation(
        &self,
        tx: &mpsc::UnboundedSender<Msg>,
        turn: usize,
        attempt: usize,
        messages: Vec<Message>,
        lighter: Vec<String>,
        base: FitBase,
    ) -> JoinHandle<()> {
        let (backend, tx) = (self.backend.clone(), tx.clone());
        tokio::spawn(async move {
            let tokens = tx.clone();
            let mut on_token = move |d: &str| {
                let _ = tokens.send(Msg::Token {
                    turn,
                    attempt,
                    delta: d.to_string(),
                });
            };
            let mut last_fit = None;
            let sent_tx = tx.clone();
            let mut on_sent = |sent: super::backend::Sent| {
                let fit =
                    super::fitting::report(base.built, sent.fitted, &base.rungs, base.guidance);
                let request = super::request_log::sent_json(&sent, &fit);
                last_fit = Some(fit.clone());
                let _ = sent_tx.send(Msg::Sent {
                    turn,
                    attempt,
                    request,
                    fit,
                });
            };
            let generated = backend
                .generate_observed(
                    turn,
                    attempt,
                    messages,
                    &lighter,
                    &mut on_sent,
                    &mut on_token,
                )
                .await;
            let ev = match generated {
                Ok((text, mut stats)) => Event::Generated {
                    turn,
                    attempt,
                    text,
                    stats: {
                        stats.fit = last_fit;
                        stats
                    },
                },
                Err(error) => Event::GenerationFailed {
                    turn,
                    attempt,
                    error,
                },
            };
            let _ = tx.send(Msg::Event(ev));
        })
    }

    /// Each lighter rung's dropped vault sections for `speaker` (none without a vault).
    fn rungs_of(&self, speaker: &str) -> Vec<std::collections::BTreeMap<u8, usize>> {
        let Some(v) = &self.vault else {
            return Vec::new();
        };
        let (_, work) = v.get();
        super::fitting::rungs_of(&work, speaker)
    }

    /// The context the live endpoint is budgeted against (0 for a replay).
    fn num_ctx(&self) -> u32 {
        match &self.backend {
            Backend::Live(c) => c.context_tokens(),
            Backend::Replay(_) => 0,
        }
    }

    /// Keeps the request an attempt sent: with its row once it has one (a resend after a
    /// refusal, or a fallback, replaces it: the last request is the one the reply came from).
    async fn keep_request(
        &self,
        attempts: &mut HashMap<(usize, usize), Started>,
        turn: usize,
        attempt: usize,
        request: serde_json::Value,
    ) -> Result<(), String> {
        let now = Instant::now();
        let st = attempts.entry((turn, attempt)).or_insert_with(|| Started {
            sent: now,
            id: None,
            last_save: now,
            request: None,
        });
        match st.id {
            None => {
                st.request = Some(request);
                Ok(())
            }
            Some(id) => self
                .store
                .call(move |s| s.save_request(id, &request))
                .await
                .map_err(|e| e.to_string()),
        }
    }

    /// Saves the streaming text now and then, so a crash loses at most the unsaved tail.
    fn save_partial(
        &self,
        session: &Session,
        attempts: &mut HashMap<(usize, usize), Started>,
        turn: usize,
        attempt: usize,
    ) {
        let Some(st) = attempts.get_mut(&(turn, attempt)) else {
            return;
        };
        let (Some(id), Some(c)) = (st.id, session.current()) else {
            return;
        };
        if st.last_save.elapsed() < self.save_every {
            return;
        }
        st.last_save = Instant::now();
        let text = c.text.clone();
        let n = text.chars().count() as u32;
        // Queued in order with the other writes; nobody needs to wait for it.
        drop(
            self.store
                .call(move |s| s.update_attempt_text(id, &text, n)),
        );
    }

    /// The attempt's row id, creating the row if no token ever arrived (a failed request).
    async fn ensure_row(
        &self,
        attempts: &mut HashMap<(usize, usize), Started>,
        turn: usize,
        attempt: usize,
        speaker: &str,
    ) -> Result<Option<i64>, String> {
        if let Some(id) = attempts.get(&(turn, attempt)).and_then(|s| s.id) {
            return Ok(Some(id));
        }
        let new = NewAttempt {
            run_id: self.run_id,
            turn: turn as u32,
            speaker: speaker.to_string(),
            attempt: attempt as u32,
            text: String::new(),
            tokens: 0,
            guidance: None,
            prompt_hash: None,
            started_at: SystemTime::now(),
            first_token_ms: None,
        };
        // A request that went out before the attempt failed is kept with it too.
        let request = attempts
            .get_mut(&(turn, attempt))
            .and_then(|s| s.request.take());
        let id = self
            .store
            .call(move |s| {
                let id = s.start_attempt(&new)?;
                if let Some(r) = &request {
                    s.save_request(id, r)?;
                }
                Ok(id)
            })
            .await
            .map_err(|e| e.to_string())?;
        if let Some(st) = attempts.get_mut(&(turn, attempt)) {
            st.id = Some(id);
        }
        Ok(Some(id))
    }

    async fn finish(&self, id: Option<i64>, o: AttemptOutcome) -> Result<(), String> {
        let Some(id) = id else {
            return Err("the attempt has no row in the store".into());
        };
        self.store
            .call(move |s| s.finish_attempt(id, &o))
            .await
            .map_err(|e| e.to_string())
    }
}

/// The async runtime runs are driven on (two workers: a generation task and the store replies).
pub fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
}

/// The run's row: what it talks about, where its words come from, the options that shaped it
/// (the spec's, the endpoint's sampling settings when live, plus `extra`), and the persona and
/// ruleset versions, so any stored run can be told apart from one made under other settings.
pub fn run_record(
    spec: &RunSpec,
    session: &Session,
    (endpoint, model, api): (String, String, String),
    llm: Option<&LlmConfig>,
    extra: serde_json::Value,
) -> NewRun {
    let rules = session.rules();
    let chars: Vec<_> = ["yana", "ayu"]
        .iter()
        .filter_map(|id| rules.character(id))
        .collect();
    let mut options = serde_json::json!({
        "max_turns": spec.max_turns,
        "max_attempts": spec.max_attempts,
        "exhaustion": spec.exhaustion,
        "judge": spec.judge,
    });
    if let Some(c) = llm {
        options["temperature"] = c.temperature.into();
        options["judge_temperature"] = c.judge_temperature.into();
        options["num_ctx"] = c.num_ctx.into();
        options["max_chars"] = c.max_chars.into();
    }
    if let (Some(o), Some(e)) = (options.as_object_mut(), extra.as_object()) {
        o.extend(e.iter().map(|(k, v)| (k.clone(), v.clone())));
    }
    NewRun {
        topic: spec.topic.clone(),
        model: Some(model),
        endpoint: Some(endpoint),
        api: Some(api),
        options,
        persona_version: Some(super::persona::version(&chars, &session.duo().world)),
        ruleset_version: Some(rules.version.clone()),
    }
}

async fn recv(controls: &mut Option<mpsc::UnboundedReceiver<Event>>) -> Option<Event> {
    match controls {
        Some(rx) => rx.recv().await,
        None => std::future::pending().await,
    }
}
