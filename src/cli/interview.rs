//! `kakeai interview NAME --headless [--script answers.txt]`: one interview against a live
//! endpoint, one JSON object per event on stdout, the last `{"event":"done", …}`. Exit 0 when
//! the interview finished (also through the fallback questions), 1 when the answers ran out
//! first, 2 on usage or config errors, 4 when the store could not be written.

use std::io::{BufRead, Write};
use std::path::PathBuf;

use clap::Args;

use crate::director::RuleSet;
use crate::interview::{InterviewConfig, Machine, Outcome, Runner, config, store as istore};
use crate::llm::{ApiKind, Client, LlmConfig};
use crate::store::{Store, StoreHandle};
use crate::text::analyzer::{self, AnalyzerChoice};

#[derive(Args, Debug)]
pub struct InterviewArgs {
    /// The interview: <config dir>/interviews/NAME.toml, or the bundled `sample`.
    pub name: String,
    /// Run without the workbench, printing one JSON event per line.
    #[arg(long)]
    pub headless: bool,
    /// The user's answers, one per line (default: stdin).
    #[arg(long)]
    pub script: Option<PathBuf>,
    /// Start in fallback mode: the three fixed questions, no model.
    #[arg(long)]
    pub fallback: bool,
    #[arg(long)]
    pub endpoint: Option<String>,
    #[arg(long)]
    pub model: Option<String>,
    #[arg(long, value_enum)]
    pub api: Option<ApiKind>,
    #[arg(long, env = "KAKEAI_DB")]
    pub db: Option<PathBuf>,
    /// Extra rules file merged over the defaults and your config.
    #[arg(long)]
    pub rules: Option<PathBuf>,
    #[arg(long, value_enum, default_value = "auto", env = "KAKEAI_ANALYZER")]
    pub analyzer: AnalyzerChoice,
    #[command(flatten)]
    pub vault: super::vault::VaultArgs,
    /// Interview without a story vault: her replies get no leak review (said on stderr)
    #[arg(long, conflicts_with_all = ["vault", "work"])]
    pub no_vault: bool,
}

fn load_answers(script: Option<&PathBuf>) -> Result<Vec<String>, String> {
    let text = match script {
        Some(p) => crate::limits::read_string(p).map_err(|e| format!("{}: {e}", p.display()))?,
        None => {
            let mut s = String::new();
            for l in std::io::stdin().lock().lines() {
                s.push_str(&l.map_err(|e| format!("stdin: {e}"))?);
                s.push('\n');
            }
            s
        }
    };
    Ok(text
        .lines()
        .map(|l| l.trim_end_matches('\r').to_string())
        .filter(|l| !l.trim().is_empty())
        .collect())
}

pub fn run(args: InterviewArgs) -> i32 {
    let fail = |code: i32, msg: String| {
        eprintln!("kakeai interview: {msg}");
        code
    };
    if !args.headless {
        return fail(
            2,
            "open the workbench (`kakeai`, chat, then I) for a live interview; pass --headless to run one from a script".into(),
        );
    }
    let cfg: InterviewConfig = match config::load(&args.name) {
        Ok(c) => c,
        Err(e) => return fail(2, e.to_string()),
    };
    let rules = match RuleSet::load(args.rules.as_deref()) {
        Ok(r) => r,
        Err(e) => return fail(2, e.to_string()),
    };
    let llm = match LlmConfig::load() {
        Ok(c) => c.with_flags(args.endpoint.clone(), args.model.clone(), args.api),
        Err(e) => return fail(2, e.to_string()),
    };
    // Her replies are reviewed against the story vault as in a run; a vault that cannot be
    // opened stops here (never an interview silently without its leak review).
    let vault = if args.no_vault {
        eprintln!("kakeai interview: --no-vault: her replies get no leak review");
        None
    } else {
        match crate::vault::open(args.vault.vault.as_deref(), args.vault.work.as_deref()) {
            Ok(w) => Some(crate::vault::SharedVault::new(w)),
            Err(e) => return fail(2, e.to_string()),
        }
    };
    let answers = match load_answers(args.script.as_ref()) {
        Ok(a) => a,
        Err(e) => return fail(2, e),
    };
    let analyzer = match analyzer::open(args.analyzer, &mut |m| eprintln!("{m}")) {
        Ok(a) => a,
        Err(e) => return fail(2, e.to_string()),
    };
    let store = match Store::open_or_default(args.db.as_deref()) {
        Ok(s) => StoreHandle::spawn(s),
        Err(e) => return fail(2, e),
    };
    let rt = match crate::duo::driver::runtime() {
        Ok(rt) => rt,
        Err(e) => return fail(2, format!("cannot start the async runtime: {e}")),
    };
    rt.block_on(async move {
        let (model, endpoint) = (llm.model.clone(), llm.endpoint.clone());
        // A client that cannot even be built is a failed model: the fallback questions run.
        let client = if args.fallback {
            None
        } else {
            match Client::new(llm) {
                Ok(c) => Some(c),
                Err(e) => {
                    eprintln!("kakeai interview: {e}; using the fallback questions");
                    None
                }
            }
        };
        let fallback = args.fallback || client.is_none();
        let mut machine = Machine::new(&cfg, fallback);
        let (name, sister, state) = (
            cfg.name.clone(),
            cfg.sister.clone(),
            machine.state.as_str().to_string(),
        );
        let id = match store
            .call(move |s| istore::create(s, &name, &sister, &model, &endpoint, &state))
            .await
        {
            Ok(id) => id,
            Err(e) => return fail(crate::store::write::EXIT_STORE, e.to_string()),
        };
        let runner = Runner {
            cfg,
            client,
            rules,
            analyzer,
            store,
            interview_id: id,
            vault,
        };
        let (tx, mut next_answer) = tokio::sync::mpsc::unbounded_channel();
        for a in answers {
            let _ = tx.send(a);
        }
        drop(tx);
        let mut out = std::io::stdout();
        let mut emit = |e: &crate::interview::Event| {
            if let Ok(line) = serde_json::to_string(e) {
                let _ = writeln!(out, "{line}");
                let _ = out.flush();
            }
        };
        match runner.run(&mut machine, &mut next_answer, &mut emit).await {
            Ok(Outcome::Finished { .. }) => 0,
            Ok(Outcome::Unfinished) => fail(
                1,
                "the script ended before the interview finished (it is saved unfinished)".into(),
            ),
            Err(e) => fail(crate::store::write::EXIT_STORE, e.to_string()),
        }
    })
}
