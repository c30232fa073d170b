//! `kakeai compare`: a stored run (A) against a variant (B), turn by turn — or, with `--topics`,
//! two variants run from scratch on the same topics — and `--show ID` to reopen a stored
//! comparison. Exit 0 ok, 1 regression (with `--fail-on-regression`), 2 bad input, 3 endpoint
//! failed (see README "Comparing variants").

use std::path::PathBuf;

use clap::{Args, ValueEnum};
use serde_json::json;

use super::progress::{Progress, ProgressArgs, Unit};
use crate::compare::db::{self, Header, Stored};
use crate::compare::outcome::TurnRow;
use crate::compare::paired::{Paired, PairedError};
use crate::compare::{EXIT_BAD_INPUT, EXIT_ENDPOINT, EXIT_OK, EXIT_REGRESSION, Variant, report};
use crate::director::RuleSet;
use crate::duo::backend::Backend;
use crate::duo::driver::run_record;
use crate::duo::{DuoConfig, Exhaustion, RunSpec, Session};
use crate::llm::{Client, LlmConfig};
use crate::store::{Store, StoreHandle};
use crate::text::analyzer::{self, AnalyzerChoice};

#[derive(Args, Debug)]
pub struct CompareArgs {
    /// The stored baseline run (A); see `kakeai runs`
    #[arg(long, conflicts_with_all = ["show", "topics"])]
    pub run: Option<i64>,
    /// The variant file (B); twice with --topics (A then B)
    #[arg(long, value_name = "FILE")]
    pub variant: Vec<PathBuf>,
    #[arg(long, value_name = "N")]
    pub from_turn: Option<usize>,
    #[arg(long, value_name = "M")]
    pub to_turn: Option<usize>,
    /// Candidates generated per turn for B
    #[arg(long, default_value_t = 1)]
    pub samples: usize,
    /// Endpoint for B and for the judge (default: the variant's [llm], else llm.toml)
    #[arg(long)]
    pub endpoint: Option<String>,
    #[arg(long)]
    pub model: Option<String>,
    #[arg(long, value_enum, default_value = "table")]
    pub format: OutFormat,
    /// Exit 1 when B regressed (see README)
    #[arg(long)]
    pub fail_on_regression: bool,
    /// Reopen a stored comparison
    #[arg(long, value_name = "ID", conflicts_with_all = ["run", "topics"])]
    pub show: Option<i64>,
    /// Unpaired mode: one topic per line, both variants run from scratch on each
    #[arg(long, value_name = "FILE")]
    pub topics: Option<PathBuf>,
    /// Unpaired mode: runs per topic and variant
    #[arg(long, default_value_t = 1)]
    pub runs: usize,
    /// Unpaired mode: turns per run (default: duo.toml)
    #[arg(long)]
    pub turns: Option<usize>,
    /// The run store (default: kakeai.db in the data dir)
    #[arg(long, env = "KAKEAI_DB")]
    pub db: Option<PathBuf>,
    #[arg(long, value_enum, default_value = "auto", env = "KAKEAI_ANALYZER")]
    pub analyzer: AnalyzerChoice,
    /// The vault to compare under (as for `run`); default: the variant's, else the vault the
    /// baseline run was made under (stored with it), else the writer's default.
    #[command(flatten)]
    pub vault: super::vault::VaultArgs,
    #[command(flatten)]
    pub progress: ProgressArgs,
}

#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub enum OutFormat {
    Json,
    Table,
    Md,
}

pub(super) fn fail(code: i32, msg: impl std::fmt::Display) -> i32 {
    eprintln!(
        "kakeai compare: {}",
        crate::text::sanitize::for_terminal(&msg.to_string())
    );
    code
}

pub fn print(s: &Stored, f: OutFormat) {
    match f {
        OutFormat::Json => println!("{}", report::json(s)),
        OutFormat::Table => print!("{}", report::table(s)),
        OutFormat::Md => print!("{}", report::markdown(s)),
    }
}

/// [`print`], with the reviewers' pairwise preferences beside the Director's when there are any
/// (JSON: always, as `"reviewers"`).
fn print_with_reviewers(s: &Stored, f: OutFormat, t: &crate::annotate::pairwise::Tally) {
    match f {
        OutFormat::Json => {
            let mut v: serde_json::Value =
                serde_json::from_str(&report::json(s)).unwrap_or(serde_json::Value::Null);
            if let Some(o) = v.as_object_mut() {
                o.insert("reviewers".into(), json!(t));
            }
            println!("{v}");
        }
        _ => {
            print(s, f);
            if t.reviewers > 0 {
                println!("{}", t.line());
            }
        }
    }
}

pub fn run(args: CompareArgs) -> i32 {
    let mut store = match Store::open_existing(args.db.as_deref(), true) {
        Ok(s) => s,
        Err((e, code)) => return fail(code, e),
    };
    if let Some(id) = args.show {
        return match db::load(&store, id) {
            Ok(Some(s)) => {
                let tally = match crate::annotate::pairwise::tally(store.db(), id) {
                    Ok(t) => t,
                    Err(e) => return fail(EXIT_BAD_INPUT, e),
                };
                print_with_reviewers(&s, args.format, &tally);
                EXIT_OK
            }
            Ok(None) => fail(EXIT_BAD_INPUT, format!("no comparison {id}")),
            Err(e) => fail(EXIT_BAD_INPUT, e),
        };
    }
    if args.topics.is_some() {
        return super::compare_unpaired::run(&args, store);
    }
    let Some(run_id) = args.run else {
        return fail(
            EXIT_BAD_INPUT,
            "give --run ID --variant FILE, --topics FILE or --show ID",
        );
    };
    let [variant_path] = args.variant.as_slice() else {
        return fail(
            EXIT_BAD_INPUT,
            "paired mode takes exactly one --variant FILE",
        );
    };
    let variant = match Variant::load(variant_path) {
        Ok(v) => v,
        Err(e) => return fail(EXIT_BAD_INPUT, e),
    };
    if args.samples == 0 {
        return fail(EXIT_BAD_INPUT, "--samples must be at least 1");
    }
    let baseline = match store.load_run(run_id) {
        Ok(r) => r,
        Err(e) => return fail(EXIT_BAD_INPUT, format!("run {run_id}: {e}")),
    };
    let last = baseline.turns.len();
    let from = args.from_turn.unwrap_or(1);
    let to = args.to_turn.unwrap_or(last);
    if last == 0 || from == 0 || from > to || to > last {
        return fail(
            EXIT_BAD_INPUT,
            format!(
                "run {run_id} has {last} committed turns; --from-turn {from} --to-turn {to} is out of range"
            ),
        );
    }
    let base = match (RuleSet::load(None), DuoConfig::load(), LlmConfig::load()) {
        (Ok(r), Ok(d), Ok(l)) => (r, d, l),
        (Err(e), _, _) | (_, Err(e), _) | (_, _, Err(e)) => return fail(EXIT_BAD_INPUT, e),
    };
    if baseline
        .run
        .ruleset_version
        .as_deref()
        .is_some_and(|v| v != base.0.version)
    {
        eprintln!(
            "kakeai compare: note: run {run_id} was made under ruleset {}, the baseline rules are now {}",
            baseline.run.ruleset_version.as_deref().unwrap_or("?"),
            base.0.version
        );
    }
    let mut applied = match variant.apply(&base.0, &base.1, &base.2) {
        Ok(a) => a,
        Err(e) => return fail(EXIT_BAD_INPUT, e),
    };
    applied.llm = applied
        .llm
        .with_flags(args.endpoint.clone(), args.model.clone(), None);
    let vault = match paired_vault(&variant, &args.vault, run_id, &baseline.run.options) {
        Ok(v) => v,
        Err(e) => return fail(EXIT_BAD_INPUT, e),
    };
    let opts = &baseline.run.options;
    let spec = RunSpec {
        topic: baseline.run.topic.clone(),
        max_turns: last,
        max_attempts: if applied.duo.max_attempts != base.1.max_attempts {
            applied.duo.max_attempts
        } else {
            opts["max_attempts"]
                .as_u64()
                .map(|n| n as usize)
                .unwrap_or(base.1.max_attempts)
                .max(1)
        },
        // Nobody is there to resolve a hold: the best attempt is committed instead.
        exhaustion: match serde_json::from_value(opts["exhaustion"].clone()) {
            Ok(Exhaustion::Hold) | Err(_) => Exhaustion::Best,
            Ok(e) => e,
        },
        judge: opts["judge"].as_bool().unwrap_or(true),
    };
    let analyzer = match analyzer::open(args.analyzer, &mut |m| eprintln!("{m}")) {
        Ok(a) => a,
        Err(e) => return fail(EXIT_BAD_INPUT, e),
    };
    let rt = match crate::duo::driver::runtime() {
        Ok(rt) => rt,
        Err(e) => {
            return fail(
                EXIT_BAD_INPUT,
                format!("cannot start the async runtime: {e}"),
            );
        }
    };
    let header = Header {
        kind: "paired".into(),
        baseline_run: Some(run_id),
        variant_name: variant.name.clone(),
        variant_path: Some(variant_path.display().to_string()),
        variant_text: variant.text.clone(),
        variant_hash: variant.hash.clone(),
        model: Some(applied.llm.model.clone()),
        endpoint: Some(applied.llm.endpoint.clone()),
        options: json!({
            "from_turn": from, "to_turn": to, "samples": args.samples,
            "significance": variant.significance,
            "must_not_regress": variant.must_not_regress,
            "max_attempts": spec.max_attempts, "judge": spec.judge,
            "baseline_ruleset": base.0.version, "variant_ruleset": applied.rules.version,
            "analyzer": analyzer.kind(),
        }),
        sample_runs: Vec::new(),
    };
    let id = match db::create(&mut store, &header) {
        Ok(id) => id,
        Err(e) => return fail(EXIT_BAD_INPUT, e),
    };
    let handle = StoreHandle::spawn(store);
    rt.block_on(async {
        let client = match Client::new(applied.llm.clone()) {
            Ok(c) => c,
            Err(e) => return fail(EXIT_BAD_INPUT, e),
        };
        if let Some(v) = &vault {
            crate::vault::semantic::judge_with(v, &client);
        }
        let info = match client.ensure_model().await {
            Ok(i) => i,
            Err(e) => return fail(EXIT_ENDPOINT, e),
        };
        let cfg = client.config().clone();
        let probe_session = Session::new(spec.clone(), applied.duo.clone(), applied.rules.clone());
        let mut sample_runs = Vec::new();
        for k in 1..=args.samples {
            let new = run_record(
                &spec,
                &probe_session,
                (cfg.endpoint.clone(), cfg.model.clone(), info.api.to_string()),
                Some(&cfg),
                json!({"compare": id, "sample": k, "baseline_run": run_id, "variant": variant.name}),
            );
            match handle.call(move |s| s.create_run(&new)).await {
                Ok(r) => sample_runs.push(r),
                Err(e) => return fail(EXIT_BAD_INPUT, e),
            }
        }
        let runs = sample_runs.clone();
        if let Err(e) = handle.call(move |s| db::set_sample_runs(s, id, &runs)).await {
            return fail(EXIT_BAD_INPUT, e);
        }
        let paired = Paired {
            baseline,
            base_rules: base.0.clone(),
            base_duo: base.1.clone(),
            b: applied.clone(),
            spec: spec.clone(),
            vault,
            analyzer,
            backend: Backend::Live(client),
            store: handle.clone(),
            from,
            to,
            sample_runs,
        };
        // Each finished turn is queued to the store at once (in order, before the summary),
        // and named on the terminal above the progress bar.
        let total = (to.min(last) + 1).saturating_sub(from) as u64;
        let shown = Progress::start("compare", Some(total), Unit::Items("turns"), args.progress);
        let rows = paired
            .run(&mut |row| {
                shown.line(&turn_line(row));
                shown.inc(1);
                let row = row.clone();
                drop(handle.call(move |s| db::add_turn(s, id, &row)));
            })
            .await;
        shown.finish();
        let rows = match rows {
            Ok(r) => r,
            Err(PairedError::Endpoint(e)) => return fail(EXIT_ENDPOINT, format!("comparison {id}: {e}")),
            Err(PairedError::Other(e)) => return fail(EXIT_BAD_INPUT, format!("comparison {id}: {e}")),
        };
        let summary = crate::compare::outcome::summarise(
            &rows,
            variant.significance,
            &variant.must_not_regress,
        );
        let s2 = summary.clone();
        if let Err(e) = handle.call(move |s| db::set_summary(s, id, &s2)).await {
            return fail(EXIT_BAD_INPUT, e);
        }
        let stored = handle.call(move |s| db::load(s, id)).await;
        match stored {
            Ok(Some(s)) if s.turns.len() == rows.len() => print(&s, args.format),
            _ => return fail(EXIT_BAD_INPUT, format!("comparison {id} could not be read back")),
        }
        if args.fail_on_regression && summary.regression {
            eprintln!("kakeai compare: regression: {}", crate::compare::outcome::headline(&summary));
            return EXIT_REGRESSION;
        }
        EXIT_OK
    })
}

/// One finished turn for the terminal: `turn 3 yana  A PASS → B RETRY  worse` (every sample).
pub fn turn_line(row: &TurnRow) -> String {
    let b: Vec<String> = row
        .b
        .iter()
        .map(|s| {
            let ex = if s.exhausted { " (exhausted)" } else { "" };
            format!("{}{ex}", s.status)
        })
        .collect();
    let change = match row.change {
        crate::compare::outcome::Change::Better => "better",
        crate::compare::outcome::Change::Same => "same",
        crate::compare::outcome::Change::Worse => "worse",
    };
    format!(
        "turn {} {}  A {} → B {}  {change}",
        row.turn,
        row.speaker,
        row.a.status,
        b.join(" / ")
    )
}

/// Where the paired comparison's vault comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum VaultSource {
    /// --vault/--work on the command line.
    Flags,
    /// The variant file's [vault] table.
    Variant,
    /// The folder stored with the baseline run.
    Stored(PathBuf),
    /// Nothing named one: the writer's default (or the bundled sample).
    Default,
}

/// Which vault a paired comparison uses: the flags, else the variant's, else the baseline's.
pub fn vault_source(
    v: &Variant,
    flags: &super::vault::VaultArgs,
    options: &serde_json::Value,
) -> VaultSource {
    if flags.vault.is_some() || flags.work.is_some() {
        VaultSource::Flags
    } else if v.no_vault || v.vault_dir.is_some() || v.vault_work.is_some() {
        VaultSource::Variant
    } else if let Some((dir, _)) = crate::vault::stamp::stored_source(options) {
        VaultSource::Stored(dir)
    } else {
        VaultSource::Default
    }
}

/// The vault of a paired comparison (see `vault_source`); a stored vault folder that is gone is
/// refused, and one whose files changed since the run is warned about loudly.
fn paired_vault(
    v: &Variant,
    flags: &super::vault::VaultArgs,
    run_id: i64,
    options: &serde_json::Value,
) -> Result<Option<std::sync::Arc<crate::vault::SharedVault>>, String> {
    let w = match vault_source(v, flags, options) {
        VaultSource::Variant | VaultSource::Default => {
            return open_vault(v).map_err(|e| e.to_string());
        }
        VaultSource::Flags => crate::vault::open(flags.vault.as_deref(), flags.work.as_deref())
            .map_err(|e| e.to_string())?,
        VaultSource::Stored(dir) => {
            if !dir.is_dir() {
                return Err(format!(
                    "run {run_id} was made under the vault at {}, which is gone; pass --vault DIR to compare under another",
                    dir.display()
                ));
            }
            let w = crate::vault::open(Some(&dir), None).map_err(|e| e.to_string())?;
            eprintln!(
                "kakeai compare: under run {run_id}'s vault: {} (work {})",
                dir.display(),
                w.name
            );
            w
        }
    };
    if let Some(m) = crate::vault::stamp::changed(options, &w) {
        eprintln!("kakeai compare: WARNING: {m}");
    }
    for m in &w.warnings {
        eprintln!("kakeai compare: vault warning: {m}");
    }
    Ok(Some(crate::vault::SharedVault::new(w)))
}

/// The vault side B (and the re-judging of A) uses: the variant's, else the writer's default.
pub fn open_vault(
    v: &Variant,
) -> Result<Option<std::sync::Arc<crate::vault::SharedVault>>, crate::config::ConfigError> {
    if v.no_vault {
        return Ok(None);
    }
    let w = crate::vault::open(v.vault_dir.as_deref(), v.vault_work.as_deref())?;
    for m in &w.warnings {
        eprintln!("kakeai compare: vault warning: {m}");
    }
    let shared = crate::vault::SharedVault::new(w);
    // Embeddings from the user's llm.toml (a variant's llm table changes the chat model only).
    let llm = crate::llm::LlmConfig::load()?;
    crate::vault::semantic::configure(&shared, &llm, "kakeai compare");
    Ok(Some(shared))
}

#[cfg(test)]
#[path = "compare_vault_tests.rs"]
mod vault_tests;
