//! The command line: one file per subcommand. `main` returns the process exit code.

pub mod analyze;
pub mod bench;
pub mod check;
pub mod compare;
pub mod compare_unpaired;
pub mod db;
pub mod dict;
pub mod docs;
pub mod doctor;
pub mod export;
pub mod import;
pub mod ingest;
pub mod input;
pub mod interview;
pub mod patterns;
pub mod pii;
pub mod progress;
pub mod queue;
pub mod report;
pub mod run;
pub mod runs;
pub mod safety;
pub mod second;
pub mod serve;
pub mod serve_ops;
pub mod tune;
pub mod tune_judge;
pub mod vault;
pub mod vault_probe;

use clap::{Parser, Subcommand};

#[derive(Parser, Debug)]
#[command(
    name = "kakeai",
    version,
    about = "kakeai (掛け合い) — a workbench for tuning やな/あゆ AI character dialogue",
    long_about = "kakeai judges every line of a やな/あゆ duo conversation with the Director's \
                  rules (seed 001) and explains each verdict in Japanese."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    #[command(flatten)]
    pub workbench: WorkbenchArgs,
}

/// Options of the workbench (`kakeai` with no subcommand).
#[derive(clap::Args, Debug)]
pub struct WorkbenchArgs {
    /// Replay the bundled demo run (no model needed).
    #[arg(long)]
    pub demo: bool,
    /// Theme: dark, light, high-contrast, or one of yours in <config_dir>/themes/.
    #[arg(long)]
    pub theme: Option<String>,
    /// Endpoint base URL (default from llm.toml: http://127.0.0.1:11434).
    #[arg(long)]
    pub endpoint: Option<String>,
    #[arg(long)]
    pub model: Option<String>,
    #[arg(long, value_enum)]
    pub api: Option<crate::llm::ApiKind>,
    /// The run store (default: kakeai.db in the data dir).
    #[arg(long, env = "KAKEAI_DB")]
    pub db: Option<std::path::PathBuf>,
    #[arg(long, value_enum, default_value = "auto", env = "KAKEAI_ANALYZER")]
    pub analyzer: crate::text::analyzer::AnalyzerChoice,
    /// Replay a stored run (its id, see `kakeai runs`) or a recording file through the pipeline.
    #[arg(long, value_name = "RUN_ID|FILE")]
    pub replay: Option<String>,
    /// Draw the first frame, then quit (to time start-up).
    #[arg(long, hide = true)]
    pub exit_after_first_frame: bool,
    /// Demo replay speed factor (2 = twice as fast).
    #[arg(long, default_value_t = 1.0)]
    pub replay_speed: f64,
    /// The story vault (seed 004): a work folder or a folder of works. Default: $KAKEAI_VAULT,
    /// else <data dir>/vault when it exists, else the bundled sample
    #[arg(long, value_name = "DIR")]
    pub vault: Option<std::path::PathBuf>,
    /// Which work of the vault
    #[arg(long, value_name = "NAME")]
    pub work: Option<String>,
    /// Your name as a reviewer, stored on every 👍/👎, override, feedback and undo
    /// (default: $KAKEAI_REVIEWER, else unnamed)
    #[arg(long, env = "KAKEAI_REVIEWER")]
    pub reviewer: Option<String>,
    /// Open a stored comparison's view (see `kakeai compare`)
    #[arg(long, value_name = "ID")]
    pub compare: Option<i64>,
    /// Review from a shared queue (see `kakeai queue`): `m` claims the next item you have not
    /// judged and nobody else holds, and opens its run at that turn (needs --reviewer)
    #[arg(long, value_name = "NAME", env = "KAKEAI_QUEUE")]
    pub queue: Option<String>,
    /// Blind review: hide the Director's verdict on a turn until you judged it (👍/👎 or
    /// override) (default: $KAKEAI_BLIND=1)
    /// (1/true/yes: on; 0/false/no/off or empty: off; any other value: on, the safe side)
    #[arg(long, env = "KAKEAI_BLIND", value_parser = clap::builder::FalseyValueParser::new())]
    pub blind: bool,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Judge utterances (JSON Lines or plain text) with the Director's static rules.
    Check(check::CheckArgs),
    /// Manage the IPADIC dictionary used by the lindera analyzer.
    #[command(subcommand)]
    Dict(dict::DictCommand),
    /// Show the effective ruleset (defaults merged with your rules file) and its version.
    Rules(RulesArgs),
    /// Measure judging speed (cold and warm) on a corpus.
    Bench(bench::BenchArgs),
    /// Import other tools' run logs into the run store.
    #[command(subcommand)]
    Import(import::ImportCommand),
    /// Export one stored run as JSON Lines or a markdown transcript.
    Export(export::ExportArgs),
    /// List stored runs (id, start, topic, model, turns, status, source).
    Runs(runs::RunsArgs),
    /// Learn the reviewers: rule changes that agree better with the labels on held-out runs.
    Tune(tune::TuneArgs),
    /// Run a やな/あゆ conversation against a live endpoint (`--headless` prints JSON events).
    Run(run::RunArgs),
    /// Secret visibility: filtered context per sister, leak review (seed 004)
    #[command(subcommand)]
    Vault(vault::VaultCommand),
    /// Mask personal information (氏名, 電話番号, 住所 …) in user messages.
    #[command(subcommand)]
    Pii(pii::PiiCommand),
    /// Five-layer safety judgment of user messages; world-view check of replies.
    #[command(subcommand)]
    Safety(safety::SafetyCommand),
    /// The プロレス reply-pattern DB: add, list, best, feedback, outcome, import/export, dropouts.
    #[command(subcommand)]
    Patterns(patterns::PatternsCommand),
    /// Ingest conversation logs (JSON Lines), PII-masked, for pattern outcomes and dropouts.
    Ingest(ingest::IngestArgs),
    /// The sisters on LINE: `serve --line` (webhook server), `serve status`.
    Serve(serve::ServeArgs),
    /// A sister interviews you (seed 003): `--headless --script answers.txt` prints JSON events.
    Interview(interview::InterviewArgs),
    /// Keywords, themes and insight cards from finished interviews or reviewers' feedback.
    Analyze(analyze::AnalyzeArgs),
    /// Compare a stored run with a variant turn by turn (or two variants on topics).
    Compare(compare::CompareArgs),
    /// Check the LLM endpoint and a run's budget: reachable, model, context, system role, load
    /// (once, with its seconds on stderr), tokens per character, whether the first turn and a
    /// retry fit the context as the run fits them, embeddings, judge JSON — each ✓/!/✗ with the
    /// fix; exit 0 only when a run would work.
    Doctor(doctor::DoctorArgs),
    /// Shared review queues: several reviewers, k per item, leases (create, next, show, watch).
    #[command(subcommand)]
    Queue(queue::QueueCommand),
    /// The run store itself: status (engine, schema, pending migrations, rows) and migrate.
    #[command(subcommand)]
    Db(db::DbCommand),
    /// A self-contained HTML page for a run or a comparison, to open and share.
    Report(report::ReportArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(docs::CompletionsArgs),
    /// Write man pages for kakeai and every subcommand into a folder.
    Man(docs::ManArgs),
    /// Print the book's command reference (markdown) from the command definitions.
    #[command(hide = true)]
    Reference,
}

#[derive(clap::Args, Debug)]
pub struct RulesArgs {
    /// Extra rules file merged over the defaults and your config.
    #[arg(long)]
    pub rules: Option<std::path::PathBuf>,
}

pub fn main() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return code;
        }
    };
    if !matches!(cli.command, Some(Command::Serve(_))) {
        quiet_on_closed_pipe();
    }
    match cli.command {
        None => {
            use std::io::IsTerminal;
            if std::io::stdout().is_terminal() && std::io::stdin().is_terminal() {
                let w = cli.workbench;
                return crate::tui::run(crate::tui::Options {
                    demo: w.demo,
                    theme: w.theme,
                    db: w.db,
                    endpoint: w.endpoint,
                    model: w.model,
                    api: w.api,
                    analyzer: w.analyzer,
                    replay_speed: w.replay_speed,
                    replay: w.replay,
                    exit_after_first_frame: w.exit_after_first_frame,
                    vault: w.vault,
                    work: w.work,
                    reviewer: w.reviewer,
                    compare: w.compare,
                    blind: w.blind,
                    queue: w.queue,
                });
            }
            // Not a terminal (a pipe, a script): say what the commands are instead.
            print_short_help();
            0
        }
        Some(Command::Check(args)) => check::run(args),
        Some(Command::Dict(cmd)) => dict::run(cmd),
        Some(Command::Rules(args)) => rules(args),
        Some(Command::Bench(args)) => bench::run(args),
        Some(Command::Import(cmd)) => import::run(cmd),
        Some(Command::Export(args)) => export::run(args),
        Some(Command::Runs(args)) => runs::run(args),
        Some(Command::Tune(args)) => tune::run(args),
        Some(Command::Run(args)) => run::run(args),
        Some(Command::Vault(cmd)) => vault::run(cmd),
        Some(Command::Pii(cmd)) => pii::run(cmd),
        Some(Command::Safety(cmd)) => safety::run(cmd),
        Some(Command::Patterns(cmd)) => patterns::run(cmd),
        Some(Command::Ingest(args)) => ingest::run(args),
        Some(Command::Serve(args)) => serve::run(args),
        Some(Command::Interview(args)) => interview::run(args),
        Some(Command::Analyze(args)) => analyze::run(args),
        Some(Command::Compare(args)) => compare::run(args),
        Some(Command::Doctor(args)) => doctor::run(args),
        Some(Command::Queue(cmd)) => queue::run(cmd),
        Some(Command::Db(cmd)) => db::run(cmd),
        Some(Command::Report(args)) => report::run(args),
        Some(Command::Completions(args)) => docs::completions(args),
        Some(Command::Man(args)) => docs::man(args),
        Some(Command::Reference) => docs::reference(),
    }
}

/// A closed pipe (`kakeai runs | head`) ends the process quietly, as it ends any Unix filter
/// (SIGPIPE, exit 141), instead of a panic in `println!` (exit 101) or a "bad input" exit 2.
/// Not for `serve`: a peer closing its socket must never stop the server.
fn quiet_on_closed_pipe() {
    #[cfg(unix)]
    // SAFETY: called once at start-up, before any thread is spawned; restoring the default
    // disposition of SIGPIPE has no other effect on the process.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

fn print_short_help() {
    let version = env!("CARGO_PKG_VERSION");
    println!("kakeai {version} — やな/あゆ dialogue workbench\n");
    println!("Run it in a terminal for the workbench (kakeai, or kakeai --demo). Commands:\n");
    println!("  kakeai check [FILE|-] --speaker yana|ayu   judge lines with the Director's rules");
    println!(
        "  kakeai doctor                              is the LLM endpoint ready? (start here)"
    );
    println!("  kakeai run --headless --topic TEXT         a live やな/あゆ run, as JSON lines");
    println!(
        "        [--endpoint URL --model M]           (default http://127.0.0.1:11434, gemma2:27b)"
    );
    println!("  kakeai runs | export --run ID              stored runs; one run as jsonl or md");
    println!("  kakeai import duo-talk FILE                import a duo-talk run log");
    println!("  kakeai dict install [--from DIR]           build the IPADIC dictionary (optional)");
    println!(
        "  kakeai vault context [--reader yana|ayu]   what a sister is told of the story's secrets"
    );
    println!("  kakeai vault review [FILE|-]               check a text for leaked secrets");
    println!(
        "  kakeai pii mask [FILE|-] [--format jsonl]  mask names, phones, addresses … in messages"
    );
    println!("  kakeai safety judge [FILE|-] [--no-llm]    five-layer judgment of user messages");
    println!("  kakeai patterns list|best|import|dropouts  the プロレス reply-pattern DB");
    println!("  kakeai ingest FILE                         conversation logs → outcomes, dropouts");
    println!("  kakeai serve --line                        the LINE webhook server (serve status)");
    println!("  kakeai interview sample --headless         a sister interviews you (JSON events)");
    println!("  kakeai analyze --interview NAME|--feedback keywords, themes, insight cards");
    println!("  kakeai rules                               show the effective ruleset");
    println!("  kakeai bench [CORPUS]                      measure judging speed\n");
    println!(
        "Example:  echo 'わ！この坂、海まで見えるじゃん！' | kakeai check --speaker yana --format table"
    );
    println!("More:     kakeai --help, kakeai check --help");
}

fn rules(args: RulesArgs) -> i32 {
    match crate::director::RuleSet::load(args.rules.as_deref()) {
        Ok(r) => {
            println!("# ruleset {}", r.version);
            if let Some(p) = crate::director::ruleset::user_rules_path() {
                let state = if p.exists() { "merged" } else { "not present" };
                println!("# user rules file: {} ({state})", p.display());
            }
            print!("{}", r.to_toml());
            0
        }
        Err(e) => {
            eprintln!("kakeai: {e}");
            2
        }
    }
}
