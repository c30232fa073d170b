//! `kakeai ingest FILE.jsonl`: conversation logs into the store (PII-masked), pattern uses
//! logged and resolved, dropouts found. Any bad line: every one is reported as FILE:LINE:COL,
//! nothing is written, exit 2. Writing goes in short batches (the lock is never held long); a
//! lock that stays held exits 4, and a re-run finishes the work without duplicating anything.
//!
//! With the model's second opinion on (see [`super::second`]), every user line is checked after
//! the rules and before anything is written; in fail-closed a line it could not check stops the
//! ingest at that line (exit 3, nothing ingested).

use std::io::{Read, Write};
use std::path::PathBuf;

use clap::Args;

use super::input;
use super::patterns::{Common, Fail, Format, WindowArgs, open, print_json};
use super::progress::{Progress, ProgressArgs, Unit};
use super::second::{self, Second, SecondArgs};
use crate::patterns::ingest::{self, IngestError, IngestOptions, LogMessage, Role};
use crate::safety::pii::{self, Masked};

#[derive(Args, Debug)]
pub struct IngestArgs {
    /// JSON Lines, one message per line: {conversation_id, user_id, role: "user"|"bot", text,
    /// timestamp (RFC 3339 or unix seconds), pattern_id?, character?}; `-` reads stdin.
    pub file: PathBuf,
    #[command(flatten)]
    pub common: Common,
    #[command(flatten)]
    pub window: WindowArgs,
    #[command(flatten)]
    pub second: SecondArgs,
    #[command(flatten)]
    pub progress: ProgressArgs,
}

pub fn run(args: IngestArgs) -> i32 {
    let mut err = |m: &str| eprintln!("kakeai ingest: {m}");
    match ingest_file(&args, &mut std::io::stdout().lock(), &mut err) {
        Ok(code) => code,
        Err(Fail(code, m)) => {
            err(&m);
            code
        }
    }
}

/// The input, line by line through the 16 MiB line limit: a longer line (or an endless one,
/// `/dev/zero`) stops the reading at its line, nothing ingested.
fn read_lines(name: &str, reader: Box<dyn Read>) -> Result<Vec<u8>, Fail> {
    let mut r = std::io::BufReader::new(reader);
    let (mut bytes, mut line, mut n) = (Vec::new(), Vec::new(), 0usize);
    loop {
        n += 1;
        match crate::limits::read_line(&mut r, &mut line)
            .map_err(|e| Fail(2, format!("{name}:{n}: cannot read: {e}")))?
        {
            Ok(false) => return Ok(bytes),
            Ok(true) => {
                bytes.extend_from_slice(&line);
                bytes.push(b'\n');
            }
            Err(_) => {
                return Err(Fail(
                    2,
                    format!(
                        "{name}:{n}: line longer than the limit of {} bytes; nothing ingested",
                        crate::limits::MAX_LINE_BYTES
                    ),
                ));
            }
        }
    }
}

/// An ingest error as the command reports it: a line's problem at `name:line` (exit 2).
fn ingest_fail(name: &str, e: IngestError) -> Fail {
    match e {
        IngestError::Line { line, message } => {
            Fail(2, format!("{name}:{line}: {message}; nothing ingested"))
        }
        IngestError::Pattern(e) => e.into(),
    }
}

/// Every message masked by the rules, each user line then checked by the model's second
/// opinion (bot lines are the sisters' own words). In fail-closed the first line it could not
/// check stops the ingest (exit 3, `name:line` and why); in fail-open the rules' masking stands
/// for it and stderr says how many went unchecked.
fn checked(
    second: &Second,
    name: &str,
    messages: &[LogMessage],
    progress: ProgressArgs,
    err: &mut dyn FnMut(&str),
) -> Result<Vec<Masked>, Fail> {
    let mut masked: Vec<Masked> = messages
        .iter()
        .map(|m| pii::shared().mask(&m.text))
        .collect();
    let asked: Vec<usize> = (0..messages.len())
        .filter(|&i| {
            messages[i].role == Role::User && crate::dataset::mask::worth_asking(&messages[i].text)
        })
        .collect();
    let outcomes = second.check(asked.iter().map(|&i| masked[i].clone()).collect(), progress);
    let (answered, mut unchecked) = (outcomes.len(), 0);
    for (&i, (after, why)) in asked.iter().zip(outcomes) {
        if let Some(why) = why {
            if second.fail_closed() {
                let place = format!("{name}:{}", messages[i].line);
                let text = second::refusal(&place, &why, "nothing ingested");
                return Err(Fail(second::EXIT_UNCHECKED, text));
            }
            unchecked += 1;
        }
        masked[i] = after;
    }
    if answered < asked.len() {
        // Never expected: a line without an answer is not stored as if checked.
        let place = format!("{name}:{}", messages[asked[answered]].line);
        let why = "no answer was returned for it";
        return Err(Fail(
            second::EXIT_UNCHECKED,
            second::refusal(&place, why, "nothing ingested"),
        ));
    }
    if unchecked > 0 {
        err(&second::unchecked_note(unchecked, asked.len()));
    }
    Ok(masked)
}

fn ingest_file(
    args: &IngestArgs,
    out: &mut dyn Write,
    err: &mut dyn FnMut(&str),
) -> Result<i32, Fail> {
    let (name, reader) = input::open(Some(&args.file)).map_err(|e| Fail(2, e))?;
    let bytes = read_lines(&name, reader)?;
    // Invalid UTF-8 is refused at its line:col, before anything is parsed or written.
    let text = crate::limits::utf8(std::path::Path::new(&name), bytes)
        .map_err(|e| Fail(2, format!("{e}; nothing ingested")))?;
    let messages = match ingest::parse_log(&text) {
        Ok(m) => m,
        Err(bad) => {
            for b in &bad {
                err(&b.render(&name));
            }
            return Err(Fail(
                2,
                format!("{name}: {} bad line(s); nothing ingested", bad.len()),
            ));
        }
    };
    let store = open(args.common.db.as_deref())?;
    let second = Second::from_args(args.second).map_err(|e| Fail(2, e))?;
    let masked = match &second {
        Some(s) => {
            // The store's checks first: a file it would refuse costs no model time.
            ingest::validate(store.db(), &messages).map_err(|e| ingest_fail(&name, e))?;
            Some(checked(s, &name, &messages, args.progress, err)?)
        }
        None => None,
    };
    let opts = IngestOptions {
        window_secs: args.window.secs(),
        as_of: args.window.as_of(),
        // The file's name only: a full path can carry a user's name (/home/…).
        source: args
            .file
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| name.clone()),
    };
    let shown = Progress::start(
        "ingest",
        Some(messages.len() as u64),
        Unit::Items("messages"),
        args.progress,
    );
    let mut written = |n: usize| shown.inc(n as u64);
    let report = match &masked {
        Some(m) => ingest::ingest_masked(store.db(), &messages, m, &opts, &mut written),
        None => ingest::ingest_with(store.db(), &messages, &opts, &mut written),
    };
    shown.finish();
    let report = report.map_err(|e| ingest_fail(&name, e))?;
    match args.common.format {
        Format::Json => print_json(out, &report)?,
        Format::Table => {
            writeln!(
                out,
                "{} message(s) in {} conversation(s) ({} already there, {} masked)",
                report.messages, report.conversations, report.duplicates, report.masked
            )?;
            writeln!(
                out,
                "{} pattern use(s): {} success, {} failure, {} pending; {} dropout(s)",
                report.uses, report.successes, report.failures, report.pending, report.dropouts
            )?;
        }
    }
    Ok(0)
}
