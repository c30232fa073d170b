//! `kakeai safety judge` (Layers 1–4 on user messages) and `kakeai safety check-reply`
//! (Layer 5 on the sisters' replies), both JSON Lines in and out.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::path::PathBuf;

use clap::{Args, Subcommand, ValueEnum};
use serde::{Deserialize, Serialize};

use super::input::{self, BadLine};
use crate::llm::{ApiKind, Client, LlmConfig};
use crate::safety::{
    ClientLlm, Judgment, L4Mode, L4Skip, SafetyRules, Sister, UserContext, WorldviewChecker,
};

#[derive(Subcommand, Debug)]
pub enum SafetyCommand {
    /// Judge user messages with the five layers (L1–L4): block or respond, and why.
    ///
    /// Input: one JSON object per line, {"id": …, "text": "…"}, optionally with "character"
    /// ("yana"|"ayu"), "user_id" (earlier lines of the same user build their history: answered
    /// messages count as previous_messages, blocks among their last 10 as recent_flags, three
    /// answered ones make them returning — as in chat mode and the bot), and
    /// "returning", "previous_messages", "recent_flags" to set that history outright.
    /// Every text is PII-masked first (as in chat mode): the layers and the model see only
    /// `[氏名]`-style tokens.
    /// Output: one {"id", "action", "layer", "reason", "context_type", "trace"} per line.
    /// Exit 0 when nothing was blocked, 1 when something was, 2 on bad input.
    Judge(JudgeArgs),
    /// Check the sisters' replies for meta talk that breaks the fiction (Layer 5).
    ///
    /// Input: {"id": …, "text": "…"} per line, optionally with "character". Output: one
    /// {"id", "status", "findings", "correction"} per line. Exit 1 when a reply has findings.
    CheckReply(CheckReplyArgs),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CharacterArg {
    Yana,
    Ayu,
}

impl From<CharacterArg> for Sister {
    fn from(c: CharacterArg) -> Sister {
        match c {
            CharacterArg::Yana => Sister::Yana,
            CharacterArg::Ayu => Sister::Ayu,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum L4Arg {
    OnRaise,
    Always,
    Off,
}

#[derive(Args, Debug)]
pub struct JudgeArgs {
    /// Input file; `-` or nothing reads stdin.
    pub file: Option<PathBuf>,
    /// The sister the messages are sent to (a line's "character" wins).
    #[arg(long, value_enum, default_value = "yana")]
    pub character: CharacterArg,
    /// Do not ask the LLM: Layer 4 is skipped and the static result stands.
    #[arg(long)]
    pub no_llm: bool,
    /// When Layer 4 runs (default from policy.toml: on-raise).
    #[arg(long, value_enum)]
    pub l4: Option<L4Arg>,
    /// Endpoint base URL (default from llm.toml).
    #[arg(long)]
    pub endpoint: Option<String>,
    #[arg(long)]
    pub model: Option<String>,
    #[arg(long, value_enum)]
    pub api: Option<ApiKind>,
}

#[derive(Args, Debug)]
pub struct CheckReplyArgs {
    /// Input file; `-` or nothing reads stdin.
    pub file: Option<PathBuf>,
    /// The sister who spoke (a line's "character" wins).
    #[arg(long, value_enum, default_value = "yana")]
    pub character: CharacterArg,
}

/// One input line. Other fields (a log's timestamp, role …) are ignored.
#[derive(Debug, Deserialize)]
struct Line {
    #[serde(default)]
    id: Option<serde_json::Value>,
    text: String,
    #[serde(default)]
    character: Option<String>,
    #[serde(default)]
    user_id: Option<String>,
    #[serde(default)]
    returning: Option<bool>,
    #[serde(default)]
    previous_messages: Option<usize>,
    #[serde(default)]
    recent_flags: Option<usize>,
}

struct Record {
    id: serde_json::Value,
    line: Line,
    sister: Sister,
}

#[derive(Serialize)]
struct Out<'a> {
    id: &'a serde_json::Value,
    #[serde(flatten)]
    judgment: &'a Judgment,
}

pub fn run(cmd: SafetyCommand) -> i32 {
    let mut err = |m: &str| eprintln!("kakeai safety: {m}");
    let out = &mut std::io::stdout().lock();
    let result = match cmd {
        SafetyCommand::Judge(a) => judge(&a, out, &mut err),
        SafetyCommand::CheckReply(a) => check_reply(&a, out, &mut err),
    };
    result.unwrap_or_else(|e| {
        err(&e);
        2
    })
}

fn load_rules() -> Result<SafetyRules, String> {
    SafetyRules::load().map_err(|e| e.to_string())
}

/// Layers 1–4 over every line; returns the exit code.
pub fn judge(
    args: &JudgeArgs,
    out: &mut dyn Write,
    err: &mut dyn FnMut(&str),
) -> Result<i32, String> {
    let mut rules = load_rules()?;
    if let Some(m) = args.l4 {
        rules.judge.policy_mut().l4 = match m {
            L4Arg::OnRaise => L4Mode::OnRaise,
            L4Arg::Always => L4Mode::Always,
            L4Arg::Off => L4Mode::Off,
        };
    }
    let (name, reader) = input::open(args.file.as_deref())?;
    let Some(records) = read_records(&name, reader, args.character.into(), err)? else {
        return Ok(2);
    };
    let llm = if args.no_llm {
        None
    } else {
        let cfg = LlmConfig::load().map_err(|e| e.to_string())?.with_flags(
            args.endpoint.clone(),
            args.model.clone(),
            args.api,
        );
        Some(ClientLlm {
            client: Client::new(cfg).map_err(|e| e.to_string())?,
        })
    };
    let rt = match &llm {
        Some(_) => Some(
            crate::duo::driver::runtime()
                .map_err(|e| format!("cannot start the async runtime: {e}"))?,
        ),
        None => None,
    };
    let mut users: HashMap<String, History> = HashMap::new();
    let mut down: Option<String> = None;
    let mut blocked_any = false;
    let masker = crate::safety::pii::shared();
    for r in records {
        let ctx = context_of(&r.line, r.line.user_id.as_ref().and_then(|u| users.get(u)));
        let judge = &rules.judge;
        // The same masking as chat mode and ingest: no layer, and no model, sees raw PII.
        let text = masker.mask(&r.line.text).masked_text;
        let staged = judge.stage(&text, r.sister, &ctx);
        let j = match (&llm, &rt, judge.l4_messages(&staged), &down) {
            (Some(_), Some(_), Some(_), Some(why)) => {
                judge.finish_skipped(staged, L4Skip::EndpointDown(why.clone()))
            }
            (Some(llm), Some(rt), Some(messages), None) => {
                use crate::safety::ContextLlm;
                let reply = rt.block_on(llm.ask(messages, judge.policy().temperature));
                if let Err(e) = &reply
                    && e.endpoint_down
                {
                    err(&format!(
                        "Layer 4 unavailable, static results from here on: {}",
                        e.message
                    ));
                    down = Some(e.message.clone());
                }
                judge.finish_with(staged, reply)
            }
            _ => judge.finish_skipped(staged, L4Skip::NoLlm),
        };
        blocked_any |= j.is_blocked();
        if let Some(u) = &r.line.user_id {
            users.entry(u.clone()).or_default().record(j.is_blocked());
        }
        let s = serde_json::to_string(&Out {
            id: &r.id,
            judgment: &j,
        })
        .map_err(|e| e.to_string())?;
        writeln!(out, "{s}").map_err(|e| e.to_string())?;
    }
    Ok(i32::from(blocked_any))
}

/// What earlier lines of one user say about them: their turns, read by the same context
/// builder as chat mode and the bot (`chat::context`), so `recent_flags` counts blocks among the
/// last [`crate::chat::context::FLAG_WINDOW`] messages and three answered ones make a returning
/// user, exactly as there.
#[derive(Default)]
struct History {
    turns: Vec<crate::chat::context::Turn>,
}

impl History {
    fn record(&mut self, blocked: bool) {
        self.turns.push(crate::chat::context::Turn {
            blocked,
            ..Default::default()
        });
    }
}

fn context_of(line: &Line, h: Option<&History>) -> UserContext {
    let seen = h
        .map(|h| crate::chat::context::context(&h.turns).user)
        .unwrap_or_default();
    UserContext {
        returning: line.returning.unwrap_or(seen.returning),
        previous_messages: line.previous_messages.unwrap_or(seen.previous_messages),
        recent_flags: line.recent_flags.unwrap_or(seen.recent_flags),
    }
}

#[derive(Serialize)]
struct ReplyOut<'a> {
    id: &'a serde_json::Value,
    status: crate::director::Status,
    findings: Vec<crate::director::Finding>,
    correction: Option<String>,
}

/// Layer 5 over every line; returns the exit code.
pub fn check_reply(
    args: &CheckReplyArgs,
    out: &mut dyn Write,
    err: &mut dyn FnMut(&str),
) -> Result<i32, String> {
    let rules = load_rules()?;
    let wv: &WorldviewChecker = &rules.worldview;
    let (name, reader) = input::open(args.file.as_deref())?;
    let Some(records) = read_records(&name, reader, args.character.into(), err)? else {
        return Ok(2);
    };
    let mut any = false;
    for r in records {
        let findings = wv.check(&r.line.text, r.sister);
        any |= !findings.is_empty();
        let s = serde_json::to_string(&ReplyOut {
            id: &r.id,
            status: crate::director::Verdict::status_of(&findings),
            correction: wv.correct(&r.line.text, r.sister),
            findings,
        })
        .map_err(|e| e.to_string())?;
        writeln!(out, "{s}").map_err(|e| e.to_string())?;
    }
    Ok(i32::from(any))
}

/// All records, or `None` after reporting every bad line (nothing half-written).
fn read_records(
    name: &str,
    reader: Box<dyn Read>,
    default: Sister,
    err: &mut dyn FnMut(&str),
) -> Result<Option<Vec<Record>>, String> {
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
        match parse_line(t) {
            Ok(l) => match l.character.as_deref().map(Sister::parse) {
                Some(None) => {
                    let col = t
                        .find("\"character\"")
                        .map_or(1, |b| t[..b].chars().count() + 1);
                    err(&BadLine {
                        col: Some(col),
                        message: "`character` must be \"yana\" or \"ayu\"".into(),
                    }
                    .render(name, lineno));
                    bad = true;
                }
                s => records.push(Record {
                    id: l
                        .id
                        .clone()
                        .unwrap_or_else(|| serde_json::Value::String(lineno.to_string())),
                    sister: s.flatten().unwrap_or(default),
                    line: l,
                }),
            },
            Err(b) => {
                err(&b.render(name, lineno));
                bad = true;
            }
        }
    }
    Ok((!bad).then_some(records))
}

fn parse_line(t: &str) -> Result<Line, BadLine> {
    if !t.trim_start().starts_with('{') {
        return Err(BadLine {
            col: Some(t.chars().count() - t.trim_start().chars().count() + 1),
            message: "expected a JSON object like {\"id\": 1, \"text\": \"…\"}".into(),
        });
    }
    let l: Line = serde_json::from_str(t).map_err(|e| {
        let what = e.to_string();
        BadLine {
            col: Some(super::input::char_column(t, e.column())),
            message: what.split(" at line ").next().unwrap_or(&what).to_string(),
        }
    })?;
    if matches!(&l.id, Some(v) if v.is_object() || v.is_array()) {
        return Err(BadLine {
            col: t.find("\"id\"").map(|b| t[..b].chars().count() + 1),
            message: "expected `id` to be a string, number, boolean or null".into(),
        });
    }
    Ok(l)
}
