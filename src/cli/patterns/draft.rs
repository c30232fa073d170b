//! `kakeai patterns draft` (the LLM writes three counterfactual replies to a dropout) and
//! `kakeai patterns accept` (a reviewer keeps one, as written or edited).

use std::io::Write;

use clap::Args;

use super::args::{parse_character, parse_type};
use super::{Common, Fail, Format, WindowArgs, open, print_json};
use crate::llm::{ApiKind, LlmConfig};
use crate::patterns::counterfactual::{self as cf, Drafts, Persona};
use crate::patterns::{self as pat, Character, ResponseType};

#[derive(Args, Debug)]
pub struct DraftArgs {
    #[command(flatten)]
    pub common: Common,
    /// The dropout's id (see `kakeai patterns dropouts`).
    #[arg(long)]
    pub dropout: i64,
    /// Who answers, when the log does not say.
    #[arg(long, value_parser = parse_character)]
    pub character: Option<Character>,
    /// Endpoint base URL (default from llm.toml).
    #[arg(long)]
    pub endpoint: Option<String>,
    #[arg(long)]
    pub model: Option<String>,
    #[arg(long, value_enum)]
    pub api: Option<ApiKind>,
    #[command(flatten)]
    pub window: WindowArgs,
}

#[derive(Args, Debug)]
pub struct AcceptArgs {
    #[command(flatten)]
    pub common: Common,
    #[arg(long)]
    pub dropout: i64,
    /// Which draft: プロレス受け, 流し or カウンター (uke, nagashi, counter).
    #[arg(long = "type", value_parser = parse_type)]
    pub response_type: ResponseType,
    /// The reply as edited by the reviewer (default: the draft as written).
    #[arg(long)]
    pub text: Option<String>,
    #[arg(long, value_parser = parse_character)]
    pub character: Option<Character>,
    /// user_message_type (default: the one the LLM suggested with its drafts).
    #[arg(long)]
    pub message_type: Option<String>,
    #[command(flatten)]
    pub window: WindowArgs,
}

pub(super) fn draft(a: &DraftArgs, out: &mut dyn Write) -> Result<i32, Fail> {
    let store = open(a.common.db.as_deref())?;
    let conn = store.db();
    let d = pat::dropouts::dropout(conn, a.dropout, a.window.secs(), a.window.as_of())?;
    let character = match a.character.or(d.character) {
        Some(c) => c,
        None => match d.pattern_id {
            Some(p) => pat::get(conn, p)?.character,
            None => {
                return Err(Fail(
                    2,
                    format!(
                        "dropout {}: the log does not say who spoke; pass --character",
                        a.dropout
                    ),
                ));
            }
        },
    };
    let rules = crate::director::RuleSet::load(None).map_err(|e| Fail(2, e.to_string()))?;
    let persona = rules
        .character(character.as_str())
        .ok_or_else(|| Fail(2, format!("no persona for {character} in the ruleset")))?;
    let messages = cf::draft_prompt(
        &Persona::from_character(persona),
        d.user_text.as_deref(),
        &d.bot_text,
    );
    let llm = LlmConfig::load()
        .map_err(|e| Fail(2, e.to_string()))?
        .with_flags(a.endpoint.clone(), a.model.clone(), a.api);
    let model = llm.model.clone();
    let rt = crate::duo::driver::runtime()
        .map_err(|e| Fail(2, format!("cannot start the async runtime: {e}")))?;
    let drafts = rt.block_on(ask(llm, messages))?;
    cf::save_drafts(conn, a.dropout, &drafts, Some(&model))?;
    match a.common.format {
        Format::Json => print_json(
            out,
            &serde_json::json!({
                "dropout_id": a.dropout,
                "character": character,
                "user_message_type": drafts.user_message_type,
                "drafts": drafts.drafts,
            }),
        )?,
        Format::Table => {
            writeln!(out, "dropout {} ({character})", a.dropout)?;
            if let Some(u) = &d.user_text {
                writeln!(out, "  user: {u}")?;
            }
            writeln!(out, "  bot:  {}  (then silence)", d.bot_text)?;
            if let Some(k) = &drafts.user_message_type {
                writeln!(out, "  message type: {k}")?;
            }
            for dr in &drafts.drafts {
                writeln!(out, "  {}: {}", dr.bot_response_type, dr.text)?;
            }
            writeln!(
                out,
                "keep one: kakeai patterns accept --dropout {} --type TYPE [--text \"…\"]",
                a.dropout
            )?;
        }
    }
    Ok(0)
}

/// One call, and one re-ask when the reply cannot be read. Endpoint failures exit 3.
async fn ask(llm: LlmConfig, messages: Vec<crate::llm::Message>) -> Result<Drafts, Fail> {
    cf::request(llm, messages).await.map_err(|e| match e {
        cf::DraftError::Config(m) => Fail(2, m),
        cf::DraftError::Endpoint(m) | cf::DraftError::Unreadable(m) => Fail(3, m),
    })
}

pub(super) fn accept(
    a: &AcceptArgs,
    out: &mut dyn Write,
    err: &mut dyn FnMut(&str),
) -> Result<i32, Fail> {
    let gate = super::gate::Gate::load()?;
    let note = std::cell::RefCell::new(None);
    let check = |c: Option<Character>, text: &str| {
        gate.check(c, text).map(|n| {
            *note.borrow_mut() = n;
        })
    };
    let store = open(a.common.db.as_deref())?;
    let p = cf::accept_checked(
        store.db(),
        &cf::Accept {
            dropout_id: a.dropout,
            bot_response_type: a.response_type,
            text: a.text.as_deref(),
            character: a.character,
            user_message_type: a.message_type.as_deref(),
            window_secs: a.window.secs(),
            as_of: a.window.as_of(),
        },
        &check,
    )
    .map_err(|e| match e {
        pat::PatternError::Invalid {
            field: "bot_response",
            ..
        } => Fail(2, format!("not added: {e}")),
        pat::PatternError::Invalid {
            field: "user_message_type",
            ..
        } => Fail(2, format!("{e} (pass --message-type)")),
        pat::PatternError::Invalid {
            field: "character", ..
        } => Fail(2, format!("{e} (pass --character)")),
        e => e.into(),
    })?;
    if let Some(n) = note.borrow().as_deref() {
        err(n);
    }
    match a.common.format {
        Format::Json => print_json(out, &pat::scored(store.db(), p.pattern_id)?)?,
        Format::Table => writeln!(
            out,
            "added counterfactual pattern {} ({}, {}): {}",
            p.pattern_id, p.character, p.bot_response_type, p.bot_response
        )?,
    }
    Ok(0)
}
