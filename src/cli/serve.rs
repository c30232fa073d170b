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
    /// Address for /metrics (and /healthz) — monitoring only, never the public proxy's
    /// (default from the config: 127.0.0.1:9464; "" turns it off).
    #[arg(long, value_name = "ADDR")]
    pub metrics_listen: Option<String>,
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
    /// Print a running server's health, readiness and numbers.
    Status {
        /// The server's monitoring address (default: http://<metrics_listen> of --config, else
        /// http://127.0.0.1:9464).
        #[arg(long)]
        url: Option<String>,
        /// The serve config file the server runs with (its `metrics_listen` gives the URL).
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
    },
    /// Delete everything stored about one LINE user (or group/room): their messages and her
    /// replies, their webhook events, the judgment cache and the conversation log the patterns
    /// learn from. Stop the server first or run it while serving (SQLite WAL).
    Forget {
        /// The LINE userId (U…), groupId (C…) or roomId (R…).
        id: String,
        /// The store (default: kakeai.db in the data dir).
        #[arg(long, env = "KAKEAI_DB")]
        db: Option<PathBuf>,
    },
}

pub fn run(args: ServeArgs) -> i32 {
    let fail = |code: i32, msg: String| {
        crate::say!("kakeai serve: {msg}");
        code
    };
    match &args.command {
        Some(ServeCommand::Status { url, config }) => {
            return status(url.as_deref(), config.as_deref());
        }
        Some(ServeCommand::Forget { id, db }) => {
            return super::serve_ops::forget(id, db.as_deref());
        }
        None => {}
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
    if let Some(m) = &args.metrics_listen {
        cfg.http.metrics_listen = m.clone();
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
    let (vault, vault_note, vault_dir) = match open_vault(&args) {
        Ok(v) => v,
        Err(e) => return fail(2, e),
    };
    let llm = match LlmConfig::load() {
        Ok(c) => c.with_flags(
            args.endpoint.clone().or(cfg.model.endpoint.clone()),
            args.model.clone().or(cfg.model.model.clone()),
            args.api.or(cfg.model.api),
        ),
        Err(e) => return fail(2, e.to_string()),
    };
    if let Some(v) = &vault {
        crate::vault::semantic::configure(v, &llm, "kakeai serve");
    }
    let analyzer = match analyzer::open(args.analyzer, &mut |m| crate::say!("{m}")) {
        Ok(a) => a,
        Err(e) => return fail(2, e.to_string()),
    };
    // The masker every message passes through, built now on the analyzer just opened with its
    // name readings read: the first message must not wait for it, and the operator sees which
    // analyzer masks.
    crate::say!(
        "kakeai serve: PII masking with {}",
        crate::safety::pii::shared().warm().analyzer_kind().as_str()
    );
    // A file or a PostgreSQL URL (several instances share one store): two connections, the
    // pipeline's and the acknowledgement path's.
    let lease_seconds = cfg.lease_seconds;
    let open = || Store::open_existing(args.db.as_deref(), true);
    // The operator's log beside an SQLite store; for a URL (never a file name) in the data dir.
    let log_dir = match Store::target_or_default(args.db.as_deref())
        .and_then(|p| crate::store::target::classify(&p))
    {
        Ok(crate::store::target::Target::File(p)) => p
            .parent()
            .map(std::path::Path::to_path_buf)
            .unwrap_or_else(|| ".".into()),
        _ => crate::config::data_dir().unwrap_or_else(|| ".".into()),
    };
    let (mut first, second) = match open().and_then(|a| Ok((a, open()?))) {
        Ok(both) => both,
        Err((e, code)) => return fail(code, e),
    };
    // One PII key per store: an instance whose key file is not the store's would store
    // digests nobody else can match (refused before it writes one).
    let key_file = crate::safety::pii::keyfile::key_path()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| "the PII key file".into());
    match crate::safety::pii::installation_key() {
        Ok(k) => match crate::store::pii_key::check(&mut first, k, &key_file) {
            Ok(Ok(())) => {}
            Ok(Err(why)) => return fail(2, why),
            Err(e) => return fail(e.exit_code(), format!("checking the PII key: {e}")),
        },
        Err(e) => return fail(2, e.to_string()),
    }
    let (store, ingress) = (StoreHandle::spawn(first), StoreHandle::spawn(second));
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
    let metrics_listen = cfg.http.metrics_listen.clone();
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
        log: Arc::new(crate::serve::oplog::OpLog::in_dir(&log_dir)),
        line_health: Arc::new(crate::serve::ready::LineHealth::default()),
        store_health: Arc::new(crate::serve::ready::StoreHealth::default()),
        work: Some(work.handle().clone()),
        lease: crate::serve::lease::Lease::new(lease_seconds),
    });
    if let Err(e) = check_lines(&svc) {
        return fail(2, e);
    }
    rt.block_on(async move {
        let listener = match tokio::net::TcpListener::bind(&listen).await {
            Ok(l) => l,
            Err(e) => return bind_failed("listen", "--listen", &listen, &e),
        };
        let addr = listener
            .local_addr()
            .map(|a| a.to_string())
            .unwrap_or(listen);
        crate::say!("kakeai serve: {vault_note}");
        crate::say!(
            "kakeai serve: model {} at {} · log {}",
            svc.llm.model,
            svc.llm.endpoint,
            svc.log
                .path()
                .map_or("stderr only".into(), |p| p.display().to_string())
        );
        #[cfg(unix)]
        if let Some(hup) = super::serve_ops::listen_hangups() {
            tokio::spawn(super::serve_ops::hangups(
                svc.clone(),
                hup,
                vault_dir.clone(),
                args.vault.work.clone(),
            ));
        }
        let monitor = if metrics_listen.trim().is_empty() {
            None
        } else {
            match tokio::net::TcpListener::bind(&metrics_listen).await {
                Ok(l) => Some(l),
                Err(e) => {
                    return bind_failed("metrics_listen", "--metrics-listen", &metrics_listen, &e);
                }
            }
        };
        crate::say!(
            "kakeai serve: listening on http://{addr}{} (and /healthz) as {}",
            svc.cfg.webhook_path,
            svc.me.display_name
        );
        match monitor.as_ref().and_then(|m| m.local_addr().ok()) {
            Some(m) => crate::say!("kakeai serve: metrics on http://{m}/metrics (keep it private)"),
            None => crate::say!("kakeai serve: metrics off (metrics_listen = \"\")"),
        }
        match crate::serve::server::run(svc, listener, monitor, shutdown_signal()).await {
            Ok(()) => {
                crate::say!("kakeai serve: stopped");
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

/// The story vault a bot runs with: `--vault DIR`, else the writer's own vault ($KAKEAI_VAULT,
/// else <data dir>/vault) when it exists, else `--no-vault` must say there is none — the bundled
/// sample is never used silently. Returns it and the line said at start.
type Opened = (
    Option<Arc<crate::vault::SharedVault>>,
    String,
    Option<PathBuf>,
);

fn open_vault(args: &ServeArgs) -> Result<Opened, String> {
    if args.no_vault {
        return Ok((
            None,
            "vault: none (--no-vault) — her prompt has only the scene, no leak review".into(),
            None,
        ));
    }
    let dir = match args.vault.vault.clone() {
        Some(d) => d,
        None => match crate::vault::load::user_vault_dir().filter(|d| d.is_dir()) {
            Some(d) => d,
            None => {
                return Err(
                    "no story vault: pass --vault DIR (your vault), or --no-vault to run without one; \
                     the bundled sample vault is a demo and is never used by the bot"
                        .into(),
                );
            }
        },
    };
    let work = crate::vault::load::load_vault(&dir, args.vault.work.as_deref())
        .map_err(|e| e.to_string())?;
    let note = format!("vault: {} (leak review on)", dir.display());
    Ok((Some(crate::vault::SharedVault::new(work)), note, Some(dir)))
}

/// Her fixed lines (the fallback, the text-only note) are judged before the server starts: a
/// line that is not usable could never be sent, so the server refuses to start.
fn check_lines(svc: &Services) -> Result<(), String> {
    let lines = svc.cfg.lines();
    for (name, text) in [
        ("fallback", &lines.fallback),
        ("text_only", &lines.text_only),
    ] {
        let (v, _) = crate::serve::pipeline::checks(svc).judge(&svc.me, &[], text, &[]);
        if !crate::chat::usable(&v) {
            return Err(format!(
                "[lines.{}] {name} = {text:?} is judged {} ({}): it could never be sent; change it",
                svc.cfg.character,
                v.status.as_str(),
                crate::chat::verdict::blocking_rules(&v)
            ));
        }
    }
    Ok(())
}

fn status(url: Option<&str>, config: Option<&std::path::Path>) -> i32 {
    let url = match (url, config) {
        (Some(u), _) => u.to_string(),
        (None, Some(p)) => match ServeConfig::load(Some(p)) {
            Ok(c) if c.http.metrics_listen.trim().is_empty() => {
                crate::say!(
                    "kakeai serve status: metrics_listen is off in {}",
                    p.display()
                );
                return 2;
            }
            Ok(c) => format!("http://{}", c.http.metrics_listen),
            Err(e) => {
                crate::say!("kakeai serve status: {e}");
                return 2;
            }
        },
        (None, None) => "http://127.0.0.1:9464".to_string(),
    };
    let url = url.as_str();
    let rt = match crate::duo::driver::runtime() {
        Ok(rt) => rt,
        Err(e) => {
            crate::say!("kakeai serve status: {e}");
            return 3;
        }
    };
    rt.block_on(async {
        let base = url.trim_end_matches('/');
        let get = |p: &str| {
            let u = format!("{base}{p}");
            async move { reqwest::get(&u).await?.error_for_status()?.text().await }
        };
        let ready = match reqwest::get(format!("{base}/readyz")).await {
            Ok(r) => r.text().await.unwrap_or_default(),
            Err(e) => format!("(no answer: {e})"),
        };
        let health = get("/healthz").await;
        let page = get("/metrics").await;
        match (health, page) {
            (Ok(h), Ok(page)) => {
                let mut out = format!("health: {}\nready: {}\n", h.trim(), ready.trim());
                for (k, v) in metrics::parse_text(&page) {
                    out.push_str(&metrics::status_line(&k, v));
                    out.push('\n');
                }
                print_or_quiet(&out)
            }
            (Err(e), _) | (_, Err(e)) => {
                crate::say!("kakeai serve status: {base}: {e}");
                3
            }
        }
    })
}

/// Writes `text` to stdout. A reader that went away (`serve status | head -5`) ends it quietly
/// with exit 0, as it ends ripgrep: `serve` keeps SIGPIPE ignored (a peer's closed socket must
/// never stop the server), so the closed pipe arrives here as an error, never as a panic.
pub(crate) fn print_or_quiet(text: &str) -> i32 {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => 0,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => 0,
        Err(e) => {
            crate::say!("kakeai serve status: cannot write the answer: {e}");
            3
        }
    }
}

/// A listener that could not be had, naming the setting: an address another process holds is a
/// setting to change (exit 2, which the systemd unit does not restart on — two instances on the
/// default `metrics_listen` would otherwise loop), anything else exit 3.
fn bind_failed(key: &str, flag: &str, addr: &str, e: &std::io::Error) -> i32 {
    if e.kind() == std::io::ErrorKind::AddrInUse {
        crate::say!(
            "kakeai serve: cannot listen on {addr} ({key}): another process (another instance?) \
             has it — give each instance its own `{key}` in its --config, or {flag} ADDR{}",
            if key == "metrics_listen" {
                " (\"\" turns /metrics and /healthz off)"
            } else {
                ""
            }
        );
        return 2;
    }
    crate::say!("kakeai serve: cannot listen on {addr} ({key}): {e}");
    3
}
