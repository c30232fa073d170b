//! `kakeai pii mask`: rule-based PII masking of one text (json) or of `{"id","text"}` lines
//! (jsonl), printing the masked text, the items with char spans, and the original's keyed
//! digest (HMAC-SHA-256 under the installation secret; never a plain hash).
//!
//! Exit codes: 0 done; 2 bad input (nothing printed); 3 `--llm fail-closed` and the model pass
//! failed for at least one message — everything is printed, those messages carry `"review"`,
//! and the result must not be taken as clean.

use std::io::{Read, Write};
use std::path::PathBuf;

use clap::{Args, Subcommand, ValueEnum};
use serde::{Deserialize, Deserializer, Serialize};

use super::input::{self, BadLine};
use crate::safety::pii::{DigestKey, Masked, PiiMasker};

/// Exit code when a fail-closed model pass failed for some message.
pub const EXIT_REVIEW: i32 = 3;

#[derive(Subcommand, Debug)]
pub enum PiiCommand {
    /// Mask 氏名, 電話番号, メールアドレス, 住所, 会社名 and 学校名 (rules; `--llm` adds a model pass).
    Mask(MaskArgs),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// The whole input is one text (a single trailing newline is not part of it); one object out.
    Json,
    /// One `{"id": …, "text": "…"}` object per line; one object per line out, `id` first.
    /// Any malformed line: every bad line is reported, nothing is printed, exit 2.
    Jsonl,
}

/// The optional model pass after the rules (seed 003 §6) and what a failure of it means.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LlmPass {
    /// A failed pass keeps the rules' result and flags the message (`"review"` in the output).
    FailClosed,
    /// A failed pass keeps the rules' result silently.
    FailOpen,
}

#[derive(Args, Debug)]
pub struct MaskArgs {
    /// Input file; `-` or nothing reads stdin.
    pub file: Option<PathBuf>,
    #[arg(long, value_enum, default_value = "json")]
    pub format: Format,
    /// Also ask the model for what the rules missed; it sees only the rule-masked text.
    #[arg(long, value_enum)]
    pub llm: Option<LlmPass>,
    /// Endpoint base URL for --llm (default from llm.toml).
    #[arg(long)]
    pub endpoint: Option<String>,
    #[arg(long)]
    pub model: Option<String>,
}

/// Asks the model about one rule-masked text and merges its answer (or its failure).
struct ModelPass {
    client: crate::llm::Client,
    mode: crate::safety::pii::PiiLlmMode,
    rt: tokio::runtime::Runtime,
}

impl ModelPass {
    fn new(args: &MaskArgs) -> Result<Option<ModelPass>, String> {
        use crate::safety::pii::PiiLlmMode;
        let Some(pass) = args.llm else {
            return Ok(None);
        };
        let cfg = crate::llm::LlmConfig::load()
            .map_err(|e| e.to_string())?
            .with_flags(args.endpoint.clone(), args.model.clone(), None);
        let client = crate::llm::Client::new(cfg).map_err(|e| e.to_string())?;
        let rt = crate::duo::driver::runtime()
            .map_err(|e| format!("cannot start the async runtime: {e}"))?;
        let mode = match pass {
            LlmPass::FailClosed => PiiLlmMode::FailClosed,
            LlmPass::FailOpen => PiiLlmMode::FailOpen,
        };
        Ok(Some(ModelPass { client, mode, rt }))
    }

    fn apply(&self, masked: Masked) -> (Masked, Option<String>) {
        let limit = self.client.config().timeouts.request();
        self.rt.block_on(crate::safety::pii::second::second_opinion(
            &self.client,
            masked,
            self.mode,
            limit,
        ))
    }
}

/// One `--format jsonl` input line. Other fields are ignored.
#[derive(Debug, Deserialize)]
struct Line {
    #[serde(default, deserialize_with = "scalar")]
    id: Option<serde_json::Value>,
    text: String,
}

/// `id` may be any JSON scalar; an object or array is refused where it stands.
fn scalar<'de, D: Deserializer<'de>>(d: D) -> Result<Option<serde_json::Value>, D::Error> {
    let v = serde_json::Value::deserialize(d)?;
    if v.is_object() || v.is_array() {
        return Err(serde::de::Error::custom(
            "expected `id` to be a string, number, boolean or null",
        ));
    }
    Ok(Some(v))
}

#[derive(Serialize)]
struct IdMasked<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<&'a serde_json::Value>,
    #[serde(flatten)]
    masked: &'a Masked,
    /// The keyed digest of the original text.
    original_digest: String,
    /// lindera-ipadic or fallback (issue 26 §1: the fallback's recall is lower).
    analyzer: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    analyzer_note: Option<&'static str>,
    /// Fail-closed `--llm` only: why this message needs a human look.
    #[serde(skip_serializing_if = "Option::is_none")]
    review: Option<String>,
}

pub fn run(cmd: PiiCommand) -> i32 {
    let PiiCommand::Mask(args) = cmd;
    let mut err = |m: &str| eprintln!("kakeai pii: {m}");
    match mask(&args, &mut std::io::stdout().lock(), &mut err) {
        Ok(code) => code,
        Err(e) => {
            err(&e);
            2
        }
    }
}

/// Masks the whole input; returns the exit code (0; 2 after reporting bad lines; 3 when a
/// fail-closed model pass failed).
pub fn mask(
    args: &MaskArgs,
    out: &mut dyn Write,
    err: &mut dyn FnMut(&str),
) -> Result<i32, String> {
    let (name, reader) = input::open(args.file.as_deref())?;
    let masker = PiiMasker::with_dictionary();
    let analyzer = masker.analyzer_kind();
    let note = (analyzer == crate::text::AnalyzerKind::Fallback)
        .then_some(crate::safety::pii::FALLBACK_NOTE);
    let key: &DigestKey = crate::safety::pii::installation_key().map_err(|e| e.to_string())?;
    let pass = ModelPass::new(args)?;
    let run = |text: &str| {
        let m = masker.mask(text);
        match &pass {
            Some(p) => p.apply(m),
            None => (m, None),
        }
    };
    let w = |e: std::io::Error| e.to_string();
    match args.format {
        Format::Json => {
            let text = crate::limits::read_input(&name, reader)?;
            let text = text
                .strip_suffix('\n')
                .map(|t| t.strip_suffix('\r').unwrap_or(t))
                .unwrap_or(&text);
            let (masked, review) = run(text);
            let flagged = review.is_some();
            let s = serde_json::to_string(&IdMasked {
                id: None,
                original_digest: masked.digest(key),
                analyzer: analyzer.as_str(),
                analyzer_note: note,
                masked: &masked,
                review,
            })
            .map_err(|e| e.to_string())?;
            writeln!(out, "{s}").map_err(w)?;
            Ok(exit_code(flagged, err))
        }
        Format::Jsonl => {
            let lines = read_lines(&name, reader, err)?;
            let Some(lines) = lines else { return Ok(2) };
            let mut flagged = false;
            for (id, text) in lines {
                let (masked, review) = run(&text);
                flagged |= review.is_some();
                let s = serde_json::to_string(&IdMasked {
                    id: Some(&id),
                    original_digest: masked.digest(key),
                    analyzer: analyzer.as_str(),
                    analyzer_note: note,
                    masked: &masked,
                    review,
                })
                .map_err(|e| e.to_string())?;
                writeln!(out, "{s}").map_err(w)?;
            }
            Ok(exit_code(flagged, err))
        }
    }
}

/// 3 (and a note on stderr) when a fail-closed model pass failed: the result is not clean.
fn exit_code(flagged: bool, err: &mut dyn FnMut(&str)) -> i32 {
    if flagged {
        err(
            "the model pass failed; the rules' result is marked \"review\" and is not clean (exit 3)",
        );
        EXIT_REVIEW
    } else {
        0
    }
}

/// All records, or `None` after reporting every bad line (nothing half-written).
fn read_lines(
    name: &str,
    reader: Box<dyn Read>,
    err: &mut dyn FnMut(&str),
) -> Result<Option<Vec<(serde_json::Value, String)>>, String> {
    let mut records = Vec::new();
    let mut bad = false;
    // Through the input limits: an endless input (`/dev/zero`) stops at its line.
    for (n, line) in crate::limits::read_input_lines(name, reader)?
        .into_iter()
        .enumerate()
    {
        let lineno = n + 1;
        let t = crate::limits::strip_bom(&line).trim_end_matches('\r');
        if t.trim().is_empty() {
            continue;
        }
        if !t.trim_start().starts_with('{') {
            let col = t.len() - t.trim_start().len() + 1;
            err(&BadLine {
                col: Some(col),
                message: "expected a JSON object like {\"id\": 1, \"text\": \"…\"}".into(),
            }
            .render(name, lineno));
            bad = true;
            continue;
        }
        match serde_json::from_str::<Line>(t) {
            Ok(l) => {
                let id =
                    l.id.unwrap_or_else(|| serde_json::Value::String(lineno.to_string()));
                records.push((id, l.text));
            }
            Err(e) => {
                let what = e.to_string();
                let what = what.split(" at line ").next().unwrap_or(&what).to_string();
                err(&BadLine {
                    col: Some(super::input::char_column(t, e.column())),
                    message: what,
                }
                .render(name, lineno));
                bad = true;
            }
        }
    }
    Ok((!bad).then_some(records))
}
