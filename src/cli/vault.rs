//! `kakeai vault context|review`: what each sister would be told about the story's settings,
//! and whether a text leaks what she must not say.

use std::path::PathBuf;

use clap::{Args, Subcommand, ValueEnum};

use crate::vault::leak::ReviewResult;
use crate::vault::{self, Work};

#[derive(Subcommand, Debug)]
pub enum VaultCommand {
    /// Print the filtered context a reader would receive (seed 004 §4)
    Context(ContextArgs),
    /// Check a text for leaked secrets (seed 004 §5–§6); exit 1 when rejected
    Review(ReviewArgs),
    /// Per secret, reader, level, model and prompt version: lines reviewed and leaks
    Scorecard(super::vault_probe::ScorecardArgs),
    /// Tempt a sister to disclose a secret N times against an endpoint; results join the scorecard
    Probe(super::vault_probe::ProbeArgs),
    /// Make a new work in one step: a visibility.yaml and a character file to fill in
    Init(InitArgs),
}

#[derive(Args, Debug)]
pub struct InitArgs {
    /// The work's name (its folder's name)
    pub name: String,
    /// The vault folder to make it in (default: $KAKEAI_VAULT, else <data dir>/vault)
    #[arg(long, value_name = "DIR")]
    pub vault: Option<PathBuf>,
}

/// The skeleton `vault init` writes: (path in the work, text).
const SKELETON: [(&str, &str); 2] = [
    (
        "_ai_control/visibility.yaml",
        include_str!("../../assets/vault/skeleton/_ai_control/visibility.yaml"),
    ),
    (
        "characters/主人公.md",
        include_str!("../../assets/vault/skeleton/characters/主人公.md"),
    ),
];

/// `vault init NAME`: refuses a name that is a path or exists already (nothing is
/// overwritten); the written work loads as it is.
fn init(a: InitArgs) -> i32 {
    let name = a.name.trim();
    let bad = name.is_empty()
        || name.starts_with('.')
        || name.starts_with('_')
        || name.contains(['/', '\\', ':'])
        || name.chars().any(char::is_control);
    if bad {
        say!(
            "kakeai vault init: `{}` is not a work name (no path, no leading . or _)",
            a.name
        );
        return 2;
    }
    let Some(root) = a.vault.or_else(vault::load::user_vault_dir) else {
        say!("kakeai vault init: no data directory; pass --vault DIR");
        return 2;
    };
    let dir = root.join(name);
    if dir.exists() {
        say!(
            "kakeai vault init: {} exists already; nothing was written",
            dir.display()
        );
        return 2;
    }
    for (rel, text) in SKELETON {
        let path = dir.join(rel);
        let written = path
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| std::fs::write(&path, text));
        if let Err(e) = written {
            say!("kakeai vault init: {}: {e}", path.display());
            return 3;
        }
    }
    if let Err(e) = vault::load::load_work_dir(&dir) {
        say!("kakeai vault init: the skeleton does not load: {e}");
        return 3;
    }
    println!("{}", dir.display());
    say!(
        "kakeai vault init: made work `{name}` in {}\n  next: edit {}, then `kakeai vault context --vault {} --work {name} --reader <id>` to see what a character gets",
        root.display(),
        dir.join("_ai_control/visibility.yaml").display(),
        root.display()
    );
    0
}

#[derive(Args, Debug)]
pub struct ReviewArgs {
    #[command(flatten)]
    pub vault: VaultArgs,
    /// The text to review (the whole file is one text); `-` or nothing reads stdin
    pub file: Option<PathBuf>,
    /// Who wrote it: her levels decide which secrets count (default: the common levels)
    #[arg(long, value_name = "yana|ayu")]
    pub reader: Option<String>,
    /// Skip the embedding check (the output says it was disabled)
    #[arg(long)]
    pub no_embed: bool,
    /// Endpoint for embeddings and the model judge (default: llm.toml)
    #[arg(long)]
    pub endpoint: Option<String>,
    /// Also ask the chat model, once per secret the reader may not know, whether the text
    /// reveals it (llm.toml `[leak_judge]`; runs, chat and the bot always ask when it is on)
    #[arg(long)]
    pub judge: bool,
    /// Embedding model (default: llm.toml `embed_model`; without one the semantic check does not
    /// run and the result says so: a chat model is not an embedding model)
    #[arg(long)]
    pub embed_model: Option<String>,
    /// The analyzer whose dictionary gives keyword readings (built on first use, as `check`)
    #[arg(long, value_enum, default_value = "auto", env = "KAKEAI_ANALYZER")]
    pub analyzer: crate::text::analyzer::AnalyzerChoice,
}

#[derive(Args, Debug, Clone)]
pub struct VaultArgs {
    /// The vault folder (a work folder, or a folder of works). Default: $KAKEAI_VAULT, else
    /// <data dir>/vault when it exists, else the bundled sample for やな and あゆ
    #[arg(long, value_name = "DIR")]
    pub vault: Option<PathBuf>,
    /// Which work of the vault (needed when it holds several)
    #[arg(long, value_name = "NAME")]
    pub work: Option<String>,
}

#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub enum Format {
    Json,
    Text,
}

#[derive(Args, Debug)]
pub struct ContextArgs {
    #[command(flatten)]
    pub vault: VaultArgs,
    /// The sister whose view to build; without it, the common levels (no reader overrides)
    #[arg(long, value_name = "yana|ayu")]
    pub reader: Option<String>,
    /// json: {context, hints, forbidden_keywords, prompt, withheld}; text: exactly the prompt
    /// text. Either way stderr reports, per reader, how many items were withheld at each level
    #[arg(long, value_enum, default_value = "json")]
    pub format: Format,
}

pub fn run(cmd: VaultCommand) -> i32 {
    match cmd {
        VaultCommand::Context(a) => context(a),
        VaultCommand::Review(a) => review(a),
        VaultCommand::Scorecard(a) => super::vault_probe::scorecard(a),
        VaultCommand::Probe(a) => super::vault_probe::probe(a),
        VaultCommand::Init(a) => init(a),
    }
}

pub(crate) fn open(a: &VaultArgs) -> Result<Work, i32> {
    vault::open(a.vault.as_deref(), a.work.as_deref()).map_err(|e| {
        eprintln!("kakeai vault: {e}");
        2
    })
}

/// Writer-facing warnings go to stderr so stdout stays exactly the context.
fn warn(w: &Work, reader: Option<&str>) {
    for m in w
        .warnings
        .iter()
        .chain(w.foreshadowing_warnings(reader).iter())
    {
        eprintln!("kakeai vault: warning: {m}");
    }
}

fn bad_reader(reader: &Option<String>) -> bool {
    match reader {
        Some(r) if !["yana", "ayu"].contains(&r.as_str()) => {
            eprintln!("kakeai vault: --reader must be yana or ayu, got `{r}`");
            true
        }
        _ => false,
    }
}

fn review(a: ReviewArgs) -> i32 {
    if bad_reader(&a.reader) {
        return 2;
    }
    let w = match open(&a.vault) {
        Ok(w) => w,
        Err(code) => return code,
    };
    let read = super::input::open(a.file.as_deref())
        .and_then(|(name, r)| crate::limits::read_input(&name, r));
    let text = match read {
        Ok(t) => t,
        Err(e) => {
            eprintln!("kakeai vault: {e}");
            return 2;
        }
    };
    // The same path as `check`: builds the IPADIC dictionary from MeCab sources on first use,
    // and keyword readings come from it.
    if let Err(e) = crate::text::analyzer::open(a.analyzer, &mut |m| eprintln!("{m}")) {
        eprintln!("kakeai vault: {e}");
        return 2;
    }
    let reviewer = w.reviewer(a.reader.as_deref());
    let judge = a.judge;
    let endpoint = a.endpoint.clone();
    let mut review = if a.no_embed {
        reviewer.review(&text)
    } else {
        let mut cfg = match crate::llm::LlmConfig::load() {
            Ok(c) => c,
            Err(e) => {
                eprintln!("kakeai vault: {e}");
                return 2;
            }
        };
        if let Some(e) = a.endpoint {
            // The endpoint asked for here is the one embeddings go to.
            cfg.endpoint = e;
            cfg.embed_endpoint = None;
        }
        if let Some(m) = a.embed_model {
            cfg.embed_model = Some(m);
        }
        // A chat model is not an embedding model: without `embed_model` the semantic check
        // does not run, and the result says so (never "全項目を実施").
        let embedder = crate::vault::semantic::Embedder::from_config(&cfg);
        let Some(client) = embedder.client() else {
            let mut r = reviewer.review(&text);
            if r.embeddings.missing() {
                r.embeddings = crate::vault::leak::EmbedStatus::Skipped {
                    reason: embedder.why_off().to_string(),
                };
                r.settle();
            }
            return print_review(&r);
        };
        match crate::duo::driver::runtime() {
            Ok(rt) => rt.block_on(reviewer.review_with_embeddings(&text, Some(client))),
            Err(e) => {
                eprintln!("kakeai vault: cannot start the async runtime: {e}");
                return 2;
            }
        }
    };
    if judge && let Err(code) = ask_judge(&mut review, &reviewer, &text, endpoint) {
        return code;
    }
    print_review(&review)
}

/// The model judge over `review` (`--judge`), with the chat model of llm.toml at `endpoint`.
fn ask_judge(
    review: &mut crate::vault::leak::Review,
    reviewer: &crate::vault::leak::Reviewer,
    text: &str,
    endpoint: Option<String>,
) -> Result<(), i32> {
    let cfg = crate::llm::LlmConfig::load().map_err(|e| {
        eprintln!("kakeai vault: {e}");
        2
    })?;
    let cfg = cfg.with_flags(endpoint, None, None);
    let judge = crate::vault::judge::Judge::from_config(&cfg);
    if judge.client().is_none() {
        eprintln!("kakeai vault: model judge off: {}", judge.why_off());
        return Ok(());
    }
    let rt = crate::duo::driver::runtime().map_err(|e| {
        eprintln!("kakeai vault: cannot start the async runtime: {e}");
        2
    })?;
    let deadline = tokio::time::Instant::now() + judge.limit();
    rt.block_on(judge.judge(review, reviewer.input(), text, deadline));
    Ok(())
}

/// The review as JSON on stdout; exit 1 when rejected, 0 for approved or warning.
fn print_review(review: &crate::vault::leak::Review) -> i32 {
    // One line for the writer: the result as it stands, and every check that did not run.
    let f = crate::vault::review::coverage(review);
    eprintln!("kakeai vault: {}", f.message);
    match serde_json::to_string_pretty(review) {
        Ok(s) => println!("{s}"),
        Err(e) => {
            eprintln!("kakeai vault: {e}");
            return 2;
        }
    }
    match review.result {
        ReviewResult::Rejected => 1,
        _ => 0,
    }
}

fn context(a: ContextArgs) -> i32 {
    if bad_reader(&a.reader) {
        return 2;
    }
    let w = match open(&a.vault) {
        Ok(w) => w,
        Err(code) => return code,
    };
    warn(&w, a.reader.as_deref());
    let c = w.context(a.reader.as_deref());
    // What each reader is not given, as counts: the writer sees at a glance her secrets hold.
    match a.reader.as_deref() {
        Some(r) => eprintln!("kakeai vault: {}", c.withheld.summary(r)),
        None => {
            eprintln!(
                "kakeai vault: {}",
                c.withheld.summary("everyone (common levels)")
            );
            for r in crate::store::SPEAKERS {
                eprintln!("kakeai vault: {}", w.context(Some(r)).withheld.summary(r));
            }
        }
    }
    match a.format {
        Format::Json => match serde_json::to_string_pretty(&c) {
            Ok(s) => println!("{s}"),
            Err(e) => {
                eprintln!("kakeai vault: {e}");
                return 2;
            }
        },
        Format::Text => println!("{}", c.prompt),
    }
    0
}
