//! `kakeai serve --line`: the LINE webhook server (see `crate::serve`), and `kakeai serve
//! status`: its /healthz and /metrics read back. Exit codes: 0 stopped cleanly, 2 bad settings
//! or no LINE credentials, 3 the server failed (the address in use …).

use std::path::PathBuf;
use std::sync::Arc;

use clap::{Args, Subcommand};

use crate::llm::{ApiKind, LlmConfig};
use crate::serve::config::ServeConfig;
use crate::serve::{Services, metrics};
use crate::store::{Store, StoreHandle};
use crate::text::analyzer::{self, AnalyzerChoice};

#[derive(Args, Debug)]
#[command(args_conflicts_with_subcommands = true)]
pub struct ServeArgs {
    #[command(subcommand)]
    pub command: Option<ServeCommand>,
    /// Serve the LINE Messaging API webhook (the only channel so far).
    #[arg(long)]
    pub line: bool,
    /// Address to listen on (default from the config: 127.0.0.1:8080).
    #[arg(long)]
    pub listen: Option<String>,
    /// Who answers.
    #[arg(long, value_parser = ["yana", "ayu"])]
    pub character: Option<String>,
    /// The store (default: kakeai.db in the data dir).
    #[arg(long, env = "KAKEAI_DB")]
    pub db: Option<PathBuf>,
    /// Settings over the defaults (assets/serve/serve.toml); may hold the [line] secrets.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// LINE API base URL (default https://api.line.me; tests point it at a local fake).
    #[arg(long, value_name = "URL", env = "KAKEAI_LINE_API_BASE")]
    pub line_api_base: Option<String>,
    /// Model endpoint base URL (default from llm.toml).
    #[arg(long)]
    pub endpoint: Option<String>,
    #[arg(long)]
    pub model: Option<String>,
    #[arg(long, value_enum)]
    pub api: Option<ApiKind>,
    #[arg(long, value_enum, default_value = "auto", env = "KAKEAI_ANALYZER")]
    pub analyzer: AnalyzerChoice,
    #[command(flatten)]
    pub vault: super::vault::VaultArgs,
    /// No story vault: the scene text alone, no leak review.
    #[arg(long, conflicts_with_all = ["vault", "work"])]
    pub no_vault: bool,
}

#[derive(Subcommand, Debug)]
pub enum ServeCommand {
    /// Print a running server's health and numbers.
    Status {
        /// The server's base URL.
        #[arg(long, default_value = "http://127.0.0.1:8080")]
        url: String,
    },
}

pub fn run(args: ServeArgs) -> i32 {
    let fail = |code: i32, msg: String| {
        eprintln!("kakeai serve: {msg}");
        code
    };
    if let Some(ServeCommand::Status { url }) = &args.command {
        return status(url);
    }
    if !args.line {
        return fail(
            2,
            "say which channel to serve: --line (LINE Messaging API)".into(),
        );
    }
    let mut cfg = match ServeConfig::load(args.config.as_deref()) {
        Ok(c) => c,
        Err(e) => return fail(2, e),
    };
    if let Some(l) = &args.listen {
        cfg.listen = l.clone();
    }
    if let Some(c) = &args.character {
        cfg.character = c.clone();
    }
    if let Some(b) = args.line_api_base.clone() {
        cfg.api_base = b;
    }
    let (secret, token) = match cfg.secrets(&|v| std::env::var(v).ok()) {
        Ok(s) => s,
        Err(e) => return fail(2, e),
    };
    let rules = match crate::director::RuleSet::load(None) {
        Ok(r) => r,
        Err(e) => return fail(2, e.to_string()),
    };
    let Some(me) = rules.character(&cfg.character).cloned() else {
        return fail(2, format!("no character {} in the ruleset", cfg.character));
    };
    let safety = match crate::safety::SafetyRules::load() {
        Ok(s) => Arc::new(s),
        Err(e) => return fail(2, e.to_string()),
    };
    let scene = match crate::duo::DuoConfig::load() {
        Ok(d) => d.world,
        Err(e) => return fail(2, e.to_string()),
    };
    let vault = if args.no_vault {
        None
    } else {
        match crate::vault::open(args.vault.vault.as_deref(), args.vault.work.as_deref()) {
            Ok(w) => Some(crate::vault::SharedVault::new(w)),
            Err(e) => return fail(2, e.to_string()),
        }
    };
    let llm = match LlmConfig::load() {
        Ok(c) => c.with_flags(args.endpoint.clone(), args.model.clone(), args.api),
        Err(e) => return fail(2, e.to_string()),
    };
    if let Some(v) = &vault {
        crate::vault::semantic::configure(v, &llm, "kakeai serve");
    }
    let analyzer = match analyzer::open(args.analyzer, &mut |m| eprintln!("{m}")) {
        Ok(a) => a,
        Err(e) => return fail(2, e.to_string()),
    };
    let db = match Store::path_or_default(args.db.as_deref()) {
        Ok(p) => p,
        Err(e) => return fail(2, e),
    };
    let (store, ingress) = match (Store::open(&db), Store::open(&db)) {
        (Ok(a), Ok(b)) => (StoreHandle::spawn(a), StoreHandle::spawn(b)),
        (Err(e), _) | (_, Err(e)) => return fail(2, format!("{}: {e}", db.display())),
    };
    let api = match crate::serve::line_api::LineApi::new(&cfg.api_base, token, cfg.line_api.clone())
    {
        Ok(a) => a,
        Err(e) => return fail(2, e),
    };
    let rt = match crate::duo::driver::runtime() {
        Ok(rt) => rt,
        Err(e) => return fail(3, format!("cannot start the async runtime: {e}")),
    };
    // The pipeline's own runtime: answers never hold up an acknowledgement.
    let work = match crate::duo::driver::runtime() {
        Ok(rt) => rt,
        Err(e) => return fail(3, format!("cannot start the async runtime: {e}")),
    };
    let listen = cfg.listen.clone();
    let svc = Arc::new(Services {
        cfg,
        secret,
        store,
        ingress,
        api,
        llm,
        rules,
        me,
        safety,
        analyzer,
        vault,
        scene,
        metrics: Arc::new(metrics::Metrics::default()),
        work: Some(work.handle().clone()),
    });
    rt.block_on(async move {
        let listener = match tokio::net::TcpListener::bind(&listen).await {
            Ok(l) => l,
            Err(e) => return fail(3, format!("cannot listen on {listen}: {e}")),
        };
        let addr = listener
            .local_addr()
            .map(|a| a.to_string())
            .unwrap_or(listen);
        eprintln!(
            "kakeai serve: listening on http://{addr}{} (healthz, metrics) as {}",
            svc.cfg.webhook_path, svc.me.display_name
        );
        match crate::serve::server::run(svc, listener, shutdown_signal()).await {
            Ok(()) => {
                eprintln!("kakeai serve: stopped");
                0
            }
            Err(e) => fail(3, e),
        }
    })
}

/// SIGTERM or Ctrl-C.
async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let mut term = match signal(SignalKind::terminate()) {
            Ok(s) => s,
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
                return;
            }
        };
        tokio::select! {
            _ = term.recv() => {}
            _ = tokio::signal::ctrl_c() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

fn status(url: &str) -> i32 {
    let rt = match crate::duo::driver::runtime() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("kakeai serve status: {e}");
            return 3;
        }
    };
    rt.block_on(async {
        let base = url.trim_end_matches('/');
        let get = |p: &str| {
            let u = format!("{base}{p}");
            async move { reqwest::get(&u).await?.error_for_status()?.text().await }
        };
        let health = get("/healthz").await;
        let page = get("/metrics").await;
        match (health, page) {
            (Ok(h), Ok(page)) => {
                println!("health: {}", h.trim());
                for (k, v) in metrics::parse_text(&page) {
                    let k = k.trim_start_matches("kakeai_line_");
                    if k.contains("seconds") {
                        println!("{k:<40} {:.1} ms", v * 1000.0);
                    } else {
                        println!("{k:<40} {v}");
                    }
                }
                0
            }
            (Err(e), _) | (_, Err(e)) => {
                eprintln!("kakeai serve status: {base}: {e}");
                3
            }
        }
    })
}
