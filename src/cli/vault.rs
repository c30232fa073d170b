//! `kakeai vault context|review`: what each sister would be told about the story's settings,
//! and whether a text leaks what she must not say.

use std::path::PathBuf;

use clap::{Args, Subcommand, ValueEnum};

use crate::vault::{self, Work};

#[derive(Subcommand, Debug)]
pub enum VaultCommand {
    /// Print the filtered context a reader would receive (seed 004 §4)
    Context(ContextArgs),
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
    /// json: {context, hints, forbidden_keywords, prompt}; text: exactly the prompt text
    #[arg(long, value_enum, default_value = "json")]
    pub format: Format,
}

pub fn run(cmd: VaultCommand) -> i32 {
    match cmd {
        VaultCommand::Context(a) => context(a),
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

fn context(a: ContextArgs) -> i32 {
    let w = match open(&a.vault) {
        Ok(w) => w,
        Err(code) => return code,
    };
    if let Some(r) = &a.reader
        && !["yana", "ayu"].contains(&r.as_str())
    {
        eprintln!("kakeai vault: --reader must be yana or ayu, got `{r}`");
        return 2;
    }
    warn(&w, a.reader.as_deref());
    let c = w.context(a.reader.as_deref());
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
