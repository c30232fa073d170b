//! `kakeai check`: the contract other tools and tests rely on (see README). JSONL or plain text
//! in, one JSON verdict per input line out (or a table); exit 0/1/2. Lines are judged on
//! several threads (`pipeline`), streamed back in input order.

mod pipeline;
mod table;
#[cfg(test)]
mod tests;

use std::hash::{Hash, Hasher};
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::sync::Arc;

use clap::{Args, ValueEnum};
use serde::Serialize;

use super::input::{BadLine, Record, parse_line};
use super::progress::{Progress, Unit};
use crate::director::{
    self, Character, ContextTurn, Finding, RuleSet, Status, ToneMode, ToneScore,
};
use crate::text::analyzer::{self, AnalyzerChoice};
use crate::text::{Analyzer, AnalyzerKind, SharedCache};
use pipeline::LineResult;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Jsonl,
    Table,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FailOn {
    Retry,
    Warn,
    Never,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ToneModeArg {
    Markers,
    Violations,
}

#[derive(Args, Debug)]
pub struct CheckArgs {
    /// Input file (JSON Lines or plain text); `-` or nothing reads stdin.
    pub file: Option<PathBuf>,
    /// Speaker for plain-text input and for records without one (yana|ayu|やな|あゆ).
    #[arg(long)]
    pub speaker: Option<String>,
    #[arg(long, value_enum, default_value = "jsonl")]
    pub format: Format,
    /// Exit 1 when any verdict reaches this status.
    #[arg(long, value_enum, default_value = "retry")]
    pub fail_on: FailOn,
    /// Extra rules file merged over the defaults and your config.
    #[arg(long)]
    pub rules: Option<PathBuf>,
    #[arg(long, value_enum)]
    pub tone_mode: Option<ToneModeArg>,
    #[arg(long, value_enum, default_value = "auto", env = "KAKEAI_ANALYZER")]
    pub analyzer: AnalyzerChoice,
    /// Judging threads (default: the machine's cores); output keeps the input's order.
    #[arg(long)]
    pub threads: Option<usize>,
    /// (A bar is shown only while the output goes to a file or pipe, and the input is a file.)
    #[command(flatten)]
    pub progress: super::progress::ProgressArgs,
}

/// One output line of `check --format jsonl`.
#[derive(Debug, Serialize)]
pub struct Output<'a> {
    pub id: serde_json::Value,
    pub speaker: &'a str,
    pub verdict: Status,
    pub lines: usize,
    pub sentences: usize,
    pub topics: usize,
    pub tone: ToneScore,
    pub findings: Vec<&'a Finding>,
    pub ruleset: &'a str,
    pub analyzer: AnalyzerKind,
}

pub fn run(args: CheckArgs) -> i32 {
    // One write per 64 KiB of output, not one per line (stdout alone is line-buffered).
    let mut out = std::io::BufWriter::with_capacity(64 * 1024, std::io::stdout().lock());
    match run_inner(&args, &mut out, &mut |m| eprintln!("{m}")) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("kakeai check: {e}");
            2
        }
    }
}

/// Judges the whole input; returns the exit code. Errors are usage problems (exit 2).
pub fn run_inner(
    args: &CheckArgs,
    out: &mut dyn Write,
    err: &mut dyn FnMut(&str),
) -> Result<i32, String> {
    let mut rules = RuleSet::load(args.rules.as_deref()).map_err(|e| e.to_string())?;
    if let Some(m) = args.tone_mode {
        let mode = match m {
            ToneModeArg::Markers => ToneMode::Markers,
            ToneModeArg::Violations => ToneMode::Violations,
        };
        rules = rules.with_tone_mode(mode).map_err(|e| e.to_string())?;
    }
    if let Some(s) = &args.speaker
        && rules.character(s).is_none()
    {
        return Err(format!(
            "unknown speaker `{s}`; known characters: {}",
            rules.known_speakers()
        ));
    }
    let analyzer = analyzer::open(args.analyzer, &mut |m| err(m)).map_err(|e| e.to_string())?;
    let (name, reader) = super::input::open(args.file.as_deref())?;
    // The bar shares the terminal with the verdicts only when they go elsewhere.
    let size = args
        .file
        .as_deref()
        .filter(|p| p.as_os_str() != "-")
        .and_then(|p| p.metadata().ok());
    let shown = match size {
        Some(m) if !std::io::stdout().is_terminal() => {
            Progress::start("check", Some(m.len()), Unit::Bytes, args.progress)
        }
        _ => Progress::hidden(),
    };
    let mut reader = shown.wrap_read(reader);
    let cache = SharedCache::new(CACHE_CAPACITY);
    let judge = Judge {
        rules: &rules,
        analyzer: analyzer.as_ref(),
        cache: &cache,
        name: &name,
        speaker: args.speaker.as_deref(),
        format: args.format,
        reuse: true,
    };
    let threads = match args.threads {
        Some(0) => return Err("--threads must be at least 1".into()),
        Some(n) => n,
        None => std::thread::available_parallelism().map_or(1, usize::from),
    };
    if args.format == Format::Table {
        table::header(out).map_err(|e| e.to_string())?;
    }
    let tally = pipeline::run(
        &mut reader,
        &name,
        threads,
        |line, lineno, buf| judge.line(line, lineno, buf),
        out,
        err,
    )
    .map_err(|e| e.to_string())?;
    shown.finish();
    if args.format == Format::Table {
        table::summary(out, &tally, &rules.version, analyzer.kind()).map_err(|e| e.to_string())?;
    }
    out.flush().map_err(|e| e.to_string())?;
    let threshold = match args.fail_on {
        FailOn::Retry => Some(Status::Retry),
        FailOn::Warn => Some(Status::Warn),
        FailOn::Never => None,
    };
    Ok(if tally.bad_input {
        2
    } else if threshold.is_some_and(|t| tally.worst.is_some_and(|w| w >= t)) {
        1
    } else {
        0
    })
}

/// Analyses kept for reuse (context turns and repeated lines): enough for a long conversation
/// log, small enough that memory stays flat on any input (about 2 KB per 100-char line).
const CACHE_CAPACITY: usize = 8 * 1024;

/// How every JSON output line starts before its id is filled in.
const ID_NULL: &str = "{\"id\":null";

fn output<'a>(
    id: serde_json::Value,
    speaker: &'a str,
    verdict: &'a director::Verdict,
) -> Output<'a> {
    Output {
        id,
        speaker,
        verdict: verdict.status,
        lines: verdict.lines,
        sentences: verdict.sentences,
        topics: verdict.topics,
        tone: verdict.tone,
        findings: verdict.reported_findings().collect(),
        ruleset: &verdict.ruleset,
        analyzer: verdict.analyzer,
    }
}

/// Judges single input lines; shared by every worker thread.
struct Judge<'a> {
    rules: &'a RuleSet,
    analyzer: &'a dyn Analyzer,
    cache: &'a SharedCache,
    /// The input's name in error messages.
    name: &'a str,
    speaker: Option<&'a str>,
    format: Format,
    /// Reuse the output of a line judged before (same text and speaker, no context).
    reuse: bool,
}

impl Judge<'_> {
    /// Judges one input line and appends its output (a JSON line or a table row) to `out`.
    /// `Ok(None)` for a blank line; `Err` is the `FILE:LINE[:COL]: …` line for stderr.
    fn line(&self, line: &str, lineno: usize, out: &mut Vec<u8>) -> LineResult {
        let record = match parse_line(line, self.speaker) {
            Ok(Some(r)) => r,
            Ok(None) => return Ok(None),
            Err(b) => return Err(b.render(self.name, lineno)),
        };
        if self.reuse && self.format == Format::Jsonl && record.context.is_empty() {
            let speaker = record.speaker.as_deref().unwrap_or_default();
            if let Some(character) = self.rules.character(speaker) {
                return self.reused(&record, character, lineno, out);
            }
        }
        let (speaker, verdict, id) = self
            .record(&record, lineno)
            .map_err(|msg| BadLine::msg(msg).render(self.name, lineno))?;
        let o = output(id, &speaker, &verdict);
        let written = match self.format {
            Format::Jsonl => serde_json::to_writer(&mut *out, &o)
                .map_err(std::io::Error::from)
                .and_then(|()| out.write_all(b"\n")),
            Format::Table => table::row(out, &o, &record.text),
        };
        written.map_err(|e| BadLine::msg(e.to_string()).render(self.name, lineno))?;
        Ok(Some(verdict.status))
    }

    /// A line without context: its verdict is a pure function of (text, speaker, rules,
    /// analyzer), so it is serialised once per text and speaker (kept with the text's analysis)
    /// and only the id is written per line.
    fn reused(
        &self,
        r: &Record,
        character: &Character,
        lineno: usize,
        out: &mut Vec<u8>,
    ) -> LineResult {
        let a = self.cache.get_or_analyze(&r.text);
        let mut h = std::collections::hash_map::DefaultHasher::new();
        ("check --format jsonl", &character.id, &self.rules.version).hash(&mut h);
        self.analyzer.kind().hash(&mut h);
        let tail = a.memo(h.finish(), || {
            let v = director::judge(self.rules, self.analyzer, character, &a, &[]);
            let mut full = serde_json::to_vec(&output(serde_json::Value::Null, &character.id, &v))
                .map_err(|e| e.to_string());
            if let Ok(f) = &mut full {
                // `{"id":null` is the same for every line; the rest is kept.
                f.drain(..ID_NULL.len());
            }
            full.map(|f| (f, v.status))
        });
        let (rest, status) = match &*tail {
            Ok(t) => t,
            Err(e) => return Err(BadLine::msg(e.clone()).render(self.name, lineno)),
        };
        out.extend_from_slice(&ID_NULL.as_bytes()[..ID_NULL.len() - "null".len()]);
        let id =
            r.id.clone()
                .unwrap_or_else(|| serde_json::Value::String(lineno.to_string()));
        serde_json::to_writer(&mut *out, &id)
            .map_err(|e| BadLine::msg(e.to_string()).render(self.name, lineno))?;
        out.extend_from_slice(rest);
        out.push(b'\n');
        Ok(Some(*status))
    }

    fn record(
        &self,
        r: &Record,
        lineno: usize,
    ) -> Result<(String, director::Verdict, serde_json::Value), String> {
        let speaker = r.speaker.as_deref().unwrap_or_default();
        let unknown = |s: &str| {
            format!(
                "unknown speaker `{s}`; known characters: {}",
                self.rules.known_speakers()
            )
        };
        let character = self
            .rules
            .character(speaker)
            .ok_or_else(|| unknown(speaker))?;
        let mut context = Vec::with_capacity(r.context.len());
        for c in &r.context {
            let ch = self
                .rules
                .character(&c.speaker)
                .ok_or_else(|| unknown(&c.speaker))?;
            context.push(ContextTurn {
                speaker: ch.id.clone(),
                analysis: self.cache.get_or_analyze(&c.text),
            });
        }
        let a: Arc<_> = self.cache.get_or_analyze(&r.text);
        let v = director::judge(self.rules, self.analyzer, character, &a, &context);
        let id =
            r.id.clone()
                .unwrap_or_else(|| serde_json::Value::String(lineno.to_string()));
        Ok((character.id.clone(), v, id))
    }
}
