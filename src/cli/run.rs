//! `kakeai run --headless`: one duo run against a live endpoint, printed as JSON Lines events
//! (run_start, turn_start, token, attempt_done, turn_commit, run_done) and stored in the run
//! store. Exit 0 on completion, 3 when the endpoint fails, 2 on usage errors, 4 when the
//! store could not be written (locked by another writer for too long, disk full …: the run
//! ends failed, and nothing unsaved was printed as committed), 130 on Ctrl-C (the run is
//! recorded `stopped`).

use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use serde_json::json;

use crate::director::RuleSet;
use crate::duo::backend::Backend;
use crate::duo::driver::{Driver, Notice, run_record};
use crate::duo::{DuoConfig, Effect, Exhaustion, RunEnd, RunSpec, Session};
use crate::llm::{ApiKind, Client, LlmConfig};
use crate::store::{Store, StoreHandle};
use crate::text::analyzer::{self, AnalyzerChoice};

#[derive(Args, Debug)]
pub struct RunArgs {
    /// Run without the workbench, printing one JSON event per line.
    #[arg(long)]
    pub headless: bool,
    /// What the sisters talk about.
    #[arg(long)]
    pub topic: String,
    /// Turns in the run (default from duo.toml: 12).
    #[arg(long)]
    pub turns: Option<usize>,
    /// Attempts per turn, the first included (default from duo.toml: 3).
    #[arg(long)]
    pub attempts: Option<usize>,
    /// What to commit when every attempt was RETRY.
    #[arg(long, value_enum)]
    pub exhaustion: Option<Exhaustion>,
    /// Skip the LLM 5-aspect judge (static rules only).
    #[arg(long)]
    pub no_judge: bool,
    /// Also print every streamed token as a `token` event.
    #[arg(long)]
    pub tokens: bool,
    /// Endpoint base URL (default from llm.toml: http://127.0.0.1:11434).
    #[arg(long)]
    pub endpoint: Option<String>,
    #[arg(long)]
    pub model: Option<String>,
    /// Wire protocol; detected when not given.
    #[arg(long, value_enum)]
    pub api: Option<ApiKind>,
    /// Write the events to this file instead of stdout.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// The run store (default: kakeai.db in the data dir).
    #[arg(long, env = "KAKEAI_DB")]
    pub db: Option<PathBuf>,
    /// Extra rules file merged over the defaults and your config.
    #[arg(long)]
    pub rules: Option<PathBuf>,
    #[arg(long, value_enum, default_value = "auto", env = "KAKEAI_ANALYZER")]
    pub analyzer: AnalyzerChoice,
    #[command(flatten)]
    pub vault: super::vault::VaultArgs,
    /// Run without a story vault: the prompts get the scene text alone and no leak review
    #[arg(long, conflicts_with_all = ["vault", "work"])]
    pub no_vault: bool,
}

pub fn run(args: RunArgs) -> i32 {
    let fail = |code: i32, msg: String| {
        eprintln!("kakeai run: {msg}");
        code
    };
    if !args.headless {
        return fail(
            2,
            "to watch a run live, open the workbench (`kakeai`, then n); pass --headless to print the run as JSON lines".into(),
        );
    }
    if args.topic.trim().is_empty() {
        return fail(2, "--topic must not be empty".into());
    }
    let rules = match RuleSet::load(args.rules.as_deref()) {
        Ok(r) => r,
        Err(e) => return fail(2, e.to_string()),
    };
    let duo = match DuoConfig::load() {
        Ok(d) => d,
        Err(e) => return fail(2, e.to_string()),
    };
    // Which vault the run is made under, stored with it so `compare` replays under the same.
    let mut vault_stamp = serde_json::Value::Null;
    let vault = if args.no_vault {
        None
    } else {
        match crate::vault::open(args.vault.vault.as_deref(), args.vault.work.as_deref()) {
            Ok(w) => {
                vault_stamp = crate::vault::stamp::stamp(&w);
                for m in w
                    .warnings
                    .iter()
                    .chain(w.foreshadowing_warnings(None).iter())
                {
                    eprintln!("kakeai run: vault warning: {m}");
                }
                Some(crate::vault::SharedVault::new(w))
            }
            Err(e) => return fail(2, e.to_string()),
        }
    };
    let llm = match LlmConfig::load() {
        Ok(c) => c.with_flags(args.endpoint.clone(), args.model.clone(), args.api),
        Err(e) => return fail(2, e.to_string()),
    };
    if let Some(v) = &vault {
        crate::vault::semantic::configure(v, &llm, "kakeai run");
    }
    let spec = RunSpec {
        topic: args.topic.trim().to_string(),
        max_turns: args.turns.unwrap_or(duo.max_turns),
        max_attempts: args.attempts.unwrap_or(duo.max_attempts),
        exhaustion: args.exhaustion.unwrap_or(duo.exhaustion),
        judge: !args.no_judge,
    };
    if spec.max_turns == 0 || spec.max_attempts == 0 {
        return fail(2, "--turns and --attempts must be at least 1".into());
    }
    let mut out: Box<dyn Write + Send> = match &args.out {
        Some(p) => match std::fs::File::create(p) {
            Ok(f) => Box::new(std::io::BufWriter::new(f)),
            Err(e) => return fail(2, format!("{}: {e}", p.display())),
        },
        None => Box::new(std::io::stdout()),
    };
    let analyzer = match analyzer::open(args.analyzer, &mut |m| eprintln!("{m}")) {
        Ok(a) => a,
        Err(e) => return fail(2, e.to_string()),
    };
    // A file (created when missing) or a PostgreSQL URL (exit 3 when it cannot be reached).
    let shown = Store::target_or_default(args.db.as_deref())
        .map(|p| crate::store::target::mask(&p.display().to_string()))
        .unwrap_or_default();
    let store = match Store::open_existing(args.db.as_deref(), true) {
        Ok(s) => StoreHandle::spawn(s),
        Err((e, code)) => return fail(code, e),
    };
    let rt = match crate::duo::driver::runtime() {
        Ok(rt) => rt,
        Err(e) => return fail(2, format!("cannot start the async runtime: {e}")),
    };
    rt.block_on(async move {
        let client = match Client::new(llm) {
            Ok(c) => c,
            Err(e) => return fail(2, e.to_string()),
        };
        if let Some(v) = &vault {
            crate::vault::semantic::judge_with(v, &client);
        }
        let info = match client.ensure_model().await {
            Ok(i) => i,
            Err(e) => return fail(3, e.to_string()),
        };
        // Say which context the budget uses when the server is Ollama's /v1 (issue 21).
        if client.facts(info.api).await.ollama_v1 {
            eprintln!(
                "kakeai run: this is Ollama's /v1, which cannot take num_ctx: budgeting for \
                 Ollama's default context ({} tokens); the endpoint without /v1 uses num_ctx",
                client.context_tokens()
            );
        }
        let cfg = client.config().clone();
        let session = Session::new(spec.clone(), duo, rules);
        let new = run_record(
            &spec,
            &session,
            (
                cfg.endpoint.clone(),
                cfg.model.clone(),
                info.api.to_string(),
            ),
            Some(&cfg),
            json!({"analyzer": analyzer.kind(), "vault": vault_stamp}),
        );
        let run_id = match store.call(move |s| s.create_run(&new)).await {
            Ok(id) => id,
            Err(e) => return fail(2, format!("{shown}: {e}")),
        };
        let mut printer = Printer {
            out: &mut out,
            tokens: args.tokens,
            turns: 0,
            attempts: 0,
            error: None,
            overflow: false,
            store_error: None,
            fitted: 0,
            vault_lost: 0,
        };
        printer.emit(json!({
            "event": "run_start", "run_id": run_id, "model": cfg.model, "endpoint": cfg.endpoint,
            "api": info.api, "topic": spec.topic, "max_turns": spec.max_turns,
        }));
        // A load or a restarting server shows on stderr with its elapsed time.
        let progress = tokio::spawn(super::progress::waiting(
            client.clone(),
            "kakeai run",
            Duration::from_secs(5),
        ));
        let driver = Driver {
            backend: Backend::Live(client),
            store: store.clone(),
            analyzer,
            run_id,
            save_every: Duration::from_millis(500),
            vault,
        };
        let mut sink = |n: Notice<'_>| printer.notice(n, run_id);
        let ended = {
            let drive = driver.drive(session, None, &mut sink);
            tokio::pin!(drive);
            tokio::select! {
                end = &mut drive => Some(end),
                _ = tokio::signal::ctrl_c() => None,
            }
        };
        progress.abort();
        let Some(end) = ended else {
            // The drive was dropped mid-way; its queued writes still run first (one writer,
            // in order), then the run is marked stopped with its streaming attempt.
            let why = "stopped: interrupted by Ctrl-C";
            let r = store.call(move |s| s.stop_run(run_id, why)).await;
            if let Err(e) = &r {
                eprintln!("kakeai run: could not save to the store: {e}");
            }
            printer.emit(json!({
                "event": "run_done", "run_id": run_id, "status": "stopped",
                "turns": printer.turns, "attempts": printer.attempts, "error": why,
            }));
            let _ = printer.out.flush();
            return if r.is_ok() {
                130
            } else {
                crate::store::write::EXIT_STORE
            };
        };
        let _ = printer.out.flush();
        if let Some(e) = printer.store_error {
            return fail(
                crate::store::write::EXIT_STORE,
                format!("the run ended failed: {e}"),
            );
        }
        match end {
            RunEnd::Failed => fail(
                3,
                crate::text::sanitize::for_terminal(
                    &printer
                        .error
                        .unwrap_or_else(|| "the endpoint failed".into()),
                )
                .into_owned(),
            ),
            RunEnd::Stopped if printer.overflow => 5,
            _ => 0,
        }
    })
}

struct Printer<'a> {
    out: &'a mut Box<dyn Write + Send>,
    tokens: bool,
    turns: usize,
    attempts: usize,
    error: Option<String>,
    /// A prompt did not fit the context: the run stopped there (exit 5).
    overflow: bool,
    /// Set when a write failed for good: the run failed and the exit code says so.
    store_error: Option<String>,
    /// Requests whose prompt left something out to fit the context, and those that lost
    /// vault sections (in `run_done`).
    fitted: usize,
    vault_lost: usize,
}

impl Printer<'_> {
    fn emit(&mut self, v: serde_json::Value) {
        let _ = writeln!(self.out, "{v}");
        let _ = self.out.flush();
    }

    fn notice(&mut self, n: Notice<'_>, run_id: i64) {
        match n {
            Notice::Token {
                turn,
                attempt,
                delta,
            } if self.tokens => self
                .emit(json!({"event": "token", "turn": turn, "attempt": attempt, "text": delta})),
            Notice::Token { .. } => {}
            Notice::StoreError(e) => {
                let e = crate::text::sanitize::for_terminal(&e).into_owned();
                eprintln!("kakeai run: could not save to the store: {e}");
                self.store_error = Some(e);
            }
            Notice::Fitted { turn, attempt, fit } => {
                self.fitted += 1;
                self.vault_lost += usize::from(fit.lost_vault());
                self.emit(json!({
                    "event": "fitted", "turn": turn, "attempt": attempt,
                    "history": fit.history, "vault": fit.vault, "guidance": fit.guidance,
                    "summary": fit.summary(),
                }))
            }
            Notice::Warning(w) => {
                eprintln!("kakeai run: warning: {w}");
                self.emit(json!({"event": "warning", "message": w}))
            }
            Notice::Effect(e) => self.effect(e, run_id),
        }
    }

    fn effect(&mut self, e: &Effect, run_id: i64) {
        match e {
            Effect::TurnStarted { turn, speaker } => {
                self.emit(json!({"event": "turn_start", "turn": turn, "speaker": speaker}))
            }
            Effect::AttemptDone(a) => {
                self.attempts += 1;
                let findings: Vec<_> = a.verdict.reported_findings().collect();
                self.emit(json!({
                    "event": "attempt_done", "turn": a.turn, "speaker": a.speaker,
                    "attempt": a.attempt, "text": a.text, "verdict": a.verdict.status,
                    "findings": findings, "tone": a.verdict.tone,
                    "lines": a.verdict.lines, "sentences": a.verdict.sentences,
                    "topics": a.verdict.topics,
                    "judge": a.judge.as_ref().and_then(|j| j.scores.as_ref()),
                    "judge_status": a.judge.as_ref().map(|j| j.status),
                    "guidance": a.guidance, "tokens": a.stats.tokens,
                    "first_token_ms": a.stats.first_token_ms, "latency_ms": a.stats.latency_ms,
                    "tokens_per_s": a.stats.tokens_per_s(),
                    "fell_back": a.stats.fell_back, "capped": a.stats.capped,
                    "fallback": a.stats.fallback, "length_cut": a.stats.length_cut,
                    "prompt_tokens": a.stats.prompt_tokens, "fit": a.stats.fit,
                }))
            }
            Effect::Unsuitable { rejected } => {
                let message = crate::duo::session::unsuitable_message(*rejected);
                eprintln!("kakeai run: {message}");
                self.emit(
                    json!({"event": "model_unsuitable", "rejected": rejected, "message": message}),
                )
            }
            Effect::AttemptFailed {
                turn,
                attempt,
                error,
            } => {
                self.attempts += 1;
                if crate::llm::budget::is_overflow(error) {
                    self.overflow = true;
                    self.emit(json!({"event": "context_overflow", "turn": turn, "attempt": attempt, "message": error}))
                } else {
                    self.error = Some(error.clone());
                    self.emit(json!({"event": "attempt_failed", "turn": turn, "attempt": attempt, "error": error}))
                }
            }
            Effect::TurnCommitted(t) => {
                self.turns += 1;
                self.emit(json!({
                    "event": "turn_commit", "turn": t.turn, "speaker": t.speaker,
                    "attempt": t.attempt, "text": t.text, "verdict": t.verdict.status,
                    "exhausted": t.flags.exhausted, "futile": t.flags.futile,
                    "withheld": t.flags.withheld,
                    "hook": t.hook, "depth": t.depth, "step": t.step,
                }))
            }
            Effect::RunDone { status, error } => self.emit(json!({
                "event": "run_done", "run_id": run_id, "status": status.as_str(),
                "turns": self.turns, "attempts": self.attempts, "error": error,
                "fitted_requests": self.fitted, "vault_lost_requests": self.vault_lost,
            })),
            _ => {}
        }
    }
}
