//! `kakeai check`: the contract other tools and tests rely on (see README). JSONL or plain text
//! in, one JSON verdict per input line out (or a table); exit 0/1/2.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::sync::Arc;

use clap::{Args, ValueEnum};
use serde::Serialize;
use unicode_width::UnicodeWidthStr;

use super::input::{BadLine, Record, parse_line};
use crate::director::{self, ContextTurn, Finding, RuleSet, Status, ToneMode, ToneScore};
use crate::text::analyzer::{self, AnalyzerChoice};
use crate::text::{AnalysisCache, Analyzer, AnalyzerKind};

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
    match run_inner(&args, &mut std::io::stdout().lock(), &mut |m| {
        eprintln!("{m}")
    }) {
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
    let (name, reader): (String, Box<dyn Read>) = match &args.file {
        None => ("<stdin>".into(), Box::new(std::io::stdin())),
        Some(p) if p.as_os_str() == "-" => ("<stdin>".into(), Box::new(std::io::stdin())),
        Some(p) => {
            let f = std::fs::File::open(p).map_err(|e| format!("{}: {e}", p.display()))?;
            (p.display().to_string(), Box::new(f))
        }
    };
    let mut judge = Judge {
        rules: &rules,
        analyzer: analyzer.as_ref(),
        cache: AnalysisCache::new(),
    };
    let mut counts = [0usize; 4]; // pass, warn, retry, other
    let mut rows: Vec<Row> = Vec::new();
    let mut bad_input = false;
    let mut failed = false;
    let threshold = match args.fail_on {
        FailOn::Retry => Some(Status::Retry),
        FailOn::Warn => Some(Status::Warn),
        FailOn::Never => None,
    };
    // Split on bytes so one line that is not UTF-8 is reported and the rest still judged.
    for (n, line) in BufReader::new(reader).split(b'\n').enumerate() {
        let lineno = n + 1;
        let line = match line.map(String::from_utf8) {
            Ok(Ok(mut l)) => {
                if l.ends_with('\r') {
                    l.pop();
                }
                l
            }
            Ok(Err(e)) => {
                let at = e.utf8_error().valid_up_to() + 1;
                err(&BadLine::msg(format!("not valid UTF-8 (byte {at})")).render(&name, lineno));
                bad_input = true;
                continue;
            }
            Err(e) => {
                err(&BadLine::msg(format!("cannot read: {e}")).render(&name, lineno));
                bad_input = true;
                break;
            }
        };
        let record = match parse_line(&line, args.speaker.as_deref()) {
            Ok(Some(r)) => r,
            Ok(None) => continue,
            Err(b) => {
                err(&b.render(&name, lineno));
                bad_input = true;
                continue;
            }
        };
        match judge.record(&record, lineno) {
            Ok((speaker, verdict, id)) => {
                let o = Output {
                    id,
                    speaker: &speaker,
                    verdict: verdict.status,
                    lines: verdict.lines,
                    sentences: verdict.sentences,
                    topics: verdict.topics,
                    tone: verdict.tone,
                    findings: verdict.reported_findings().collect(),
                    ruleset: &verdict.ruleset,
                    analyzer: verdict.analyzer,
                };
                let slot = match verdict.status {
                    Status::Pass | Status::Info => 0,
                    Status::Warn => 1,
                    Status::Retry => 2,
                    _ => 3,
                };
                counts[slot] += 1;
                if threshold.is_some_and(|t| verdict.status >= t) {
                    failed = true;
                }
                match args.format {
                    Format::Jsonl => {
                        let s = serde_json::to_string(&o).map_err(|e| e.to_string())?;
                        writeln!(out, "{s}").map_err(|e| e.to_string())?;
                    }
                    Format::Table => rows.push(Row::from(&o, &record.text)),
                }
            }
            Err(msg) => {
                err(&BadLine::msg(msg).render(&name, lineno));
                bad_input = true;
            }
        }
    }
    if args.format == Format::Table {
        print_table(out, &rows, counts, &rules.version, analyzer.kind())
            .map_err(|e| e.to_string())?;
    }
    Ok(if bad_input {
        2
    } else if failed {
        1
    } else {
        0
    })
}

struct Judge<'a> {
    rules: &'a RuleSet,
    analyzer: &'a dyn Analyzer,
    cache: AnalysisCache,
}

impl Judge<'_> {
    fn record(
        &mut self,
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

struct Row {
    id: String,
    speaker: String,
    verdict: Status,
    tone: u8,
    counts: String,
    text: String,
    why: String,
}

impl Row {
    fn from(o: &Output, text: &str) -> Row {
        let id = match &o.id {
            serde_json::Value::String(s) => s.clone(),
            v => v.to_string(),
        };
        let why = o
            .findings
            .iter()
            .filter(|f| f.status != Status::Info)
            .map(|f| format!("{}: {}", f.rule, f.message))
            .collect::<Vec<_>>()
            .join(" / ");
        Row {
            id,
            speaker: o.speaker.to_string(),
            verdict: o.verdict,
            tone: o.tone.score,
            counts: format!("{}/{}/{}", o.lines, o.sentences, o.topics),
            text: text.replace('\n', "⏎"),
            why,
        }
    }
}

/// Truncates to a display width, marking the cut with …
fn fit(s: &str, width: usize) -> String {
    if s.width() <= width {
        return format!("{s}{}", " ".repeat(width - s.width()));
    }
    let mut out = String::new();
    let mut w = 0;
    for c in s.chars() {
        let cw = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
        if w + cw + 1 > width {
            break;
        }
        out.push(c);
        w += cw;
    }
    out.push('…');
    w += 1;
    out + &" ".repeat(width.saturating_sub(w))
}

fn print_table(
    out: &mut dyn Write,
    rows: &[Row],
    counts: [usize; 4],
    ruleset: &str,
    analyzer: AnalyzerKind,
) -> std::io::Result<()> {
    writeln!(
        out,
        "{} {} {} {} {} {}  findings",
        fit("id", 6),
        fit("speaker", 7),
        fit("verdict", 8),
        fit("tone", 4),
        fit("l/s/t", 7),
        fit("text", 36)
    )?;
    for r in rows {
        writeln!(
            out,
            "{} {} {} {} {} {}  {}",
            fit(&r.id, 6),
            fit(&r.speaker, 7),
            fit(r.verdict.as_str(), 8),
            fit(&format!("{}/3", r.tone), 4),
            fit(&r.counts, 7),
            fit(&r.text, 36),
            r.why
        )?;
    }
    let total: usize = counts.iter().sum();
    writeln!(
        out,
        "\n{total} lines: PASS {} · WARN {} · RETRY {}{}   (ruleset {ruleset}, analyzer {analyzer})",
        counts[0],
        counts[1],
        counts[2],
        if counts[3] > 0 {
            format!(" · other {}", counts[3])
        } else {
            String::new()
        }
    )
}
