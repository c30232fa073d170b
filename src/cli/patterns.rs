//! `kakeai patterns …`: the プロレス reply-pattern DB from the command line — add, list (scored
//! and ranked), best match, usage outcomes and 👍/👎, import/export, dropouts and
//! counterfactual drafts. Exit 0 ok, 1 "nothing found / nothing changed", 2 bad input, 3 the
//! endpoint failed, 4 the store stayed locked by another writer (or could not be written).

mod args;
mod draft;
mod gate;
mod show;

use std::io::Write;
use std::path::Path;

pub use args::*;

use crate::patterns::stamp;
use crate::patterns::{self as pat, NewPattern, PatternError, exchange};
use crate::store::Store;

/// A failed command: its exit code and one line for stderr.
pub struct Fail(pub i32, pub String);

impl From<PatternError> for Fail {
    fn from(e: PatternError) -> Fail {
        Fail(
            store_code(crate::store::write::BusyCheck::is_busy(&e)),
            e.to_string(),
        )
    }
}

/// Exit code of a failed store operation: a lock still held after waiting is not bad input.
pub(crate) fn store_code(busy: bool) -> i32 {
    if busy {
        crate::store::write::EXIT_STORE
    } else {
        2
    }
}

impl From<std::io::Error> for Fail {
    fn from(e: std::io::Error) -> Fail {
        Fail(2, e.to_string())
    }
}

impl From<serde_json::Error> for Fail {
    fn from(e: serde_json::Error) -> Fail {
        Fail(2, e.to_string())
    }
}

pub fn run(cmd: PatternsCommand) -> i32 {
    let mut out = std::io::stdout().lock();
    let mut err = |m: &str| eprintln!("kakeai patterns: {m}");
    match dispatch(cmd, &mut out, &mut err) {
        Ok(code) => code,
        Err(Fail(code, m)) => {
            err(&m);
            code
        }
    }
}

fn dispatch(
    cmd: PatternsCommand,
    out: &mut dyn Write,
    err: &mut dyn FnMut(&str),
) -> Result<i32, Fail> {
    match cmd {
        PatternsCommand::Add(a) => add(&a, out, err),
        PatternsCommand::List(a) => list(&a, out),
        PatternsCommand::Best(a) => best(&a, out),
        PatternsCommand::Use(a) => use_(&a, out),
        PatternsCommand::Feedback(a) => feedback(&a, out),
        PatternsCommand::Outcome(a) => outcome(&a, out, err),
        PatternsCommand::Import(a) => import(&a, out, err),
        PatternsCommand::Export(a) => export(&a, out),
        PatternsCommand::Dropouts(a) => dropouts(&a, out),
        PatternsCommand::Draft(a) => draft::draft(&a, out),
        PatternsCommand::Accept(a) => draft::accept(&a, out, err),
    }
}

/// Opens (creating if needed) the store for a command that writes.
pub(crate) fn open(db: Option<&Path>) -> Result<Store, Fail> {
    let path = Store::target_or_default(db).map_err(|e| Fail(2, e))?;
    if is_url(&path) {
        return Store::open_existing(Some(&path), true).map_err(|(e, code)| Fail(code, e));
    }
    Store::open(&path).map_err(|e| {
        Fail(
            store_code(crate::store::write::BusyCheck::is_busy(&e)),
            e.to_string(),
        )
    })
}

/// Opens the store for a command that only reads; `None` when there is none yet (reading must
/// not create one).
pub(crate) fn open_existing(db: Option<&Path>) -> Result<Option<Store>, Fail> {
    let path = Store::target_or_default(db).map_err(|e| Fail(2, e))?;
    if is_url(&path) {
        return Store::open_existing(Some(&path), false)
            .map(Some)
            .map_err(|(e, code)| Fail(code, e));
    }
    if !path.exists() {
        return Ok(None);
    }
    Store::open(&path)
        .map(Some)
        .map_err(|e| Fail(2, e.to_string()))
}

/// `--db` names a PostgreSQL database.
fn is_url(p: &Path) -> bool {
    matches!(
        crate::store::target::classify(p),
        Ok(crate::store::target::Target::Postgres(_))
    )
}

pub(crate) fn print_json(out: &mut dyn Write, v: &impl serde::Serialize) -> Result<(), Fail> {
    serde_json::to_writer(&mut *out, v)?;
    writeln!(out)?;
    Ok(())
}

fn add(a: &AddArgs, out: &mut dyn Write, err: &mut dyn FnMut(&str)) -> Result<i32, Fail> {
    let new = NewPattern {
        character: Some(a.character),
        user_message_type: a.message_type.clone(),
        user_message_example: a.example.clone(),
        bot_response: a.response.clone(),
        bot_response_type: Some(a.response_type),
        counts: Default::default(),
        is_counterfactual: a.counterfactual,
    };
    new.validate()?;
    match gate::Gate::load()?.check(Some(a.character), &a.response) {
        Ok(Some(note)) => err(&note),
        Ok(None) => {}
        Err(why) => return Err(Fail(2, format!("not added: {why}"))),
    }
    let store = open(a.common.db.as_deref())?;
    let p = pat::add(store.db(), &new)?;
    let scored = pat::scored(store.db(), p.pattern_id)?;
    match a.common.format {
        Format::Json => print_json(out, &scored)?,
        Format::Table => writeln!(
            out,
            "added pattern {} ({}, {}): {}",
            p.pattern_id, p.character, p.bot_response_type, p.bot_response
        )?,
    }
    Ok(0)
}

fn list(a: &ListArgs, out: &mut dyn Write) -> Result<i32, Fail> {
    let mut rows = match open_existing(a.common.db.as_deref())? {
        Some(store) => pat::list_scored(store.db(), a.character, a.sort)?,
        None => Vec::new(),
    };
    if let Some(n) = a.limit {
        rows.truncate(n);
    }
    match a.common.format {
        Format::Json => print_json(out, &rows)?,
        Format::Table => show::patterns(&rows, out)?,
    }
    Ok(0)
}

fn best(a: &BestArgs, out: &mut dyn Write) -> Result<i32, Fail> {
    let Some(store) = open_existing(a.common.db.as_deref())? else {
        return none_found(a.common.format, out);
    };
    let q = pat::BestQuery {
        character: a.character,
        message: &a.message,
        min_success: a.min_success,
        message_type: a.message_type.as_deref(),
    };
    let Some(m) = pat::best_match(store.db(), &q)? else {
        return none_found(a.common.format, out);
    };
    let scored = pat::scored(store.db(), m.pattern.pattern_id)?;
    match a.common.format {
        Format::Json => {
            let mut v = serde_json::to_value(&scored)?;
            if let Some(o) = v.as_object_mut() {
                o.insert("match_key".into(), m.match_key.into());
                o.insert("relevance".into(), m.relevance.into());
                o.insert("type_matched".into(), m.type_matched.into());
            }
            print_json(out, &v)?;
        }
        Format::Table => {
            writeln!(
                out,
                "pattern {} ({}, {}, rank {}, success {:.2}, likes {:.2}, relevance {:.2})",
                m.pattern.pattern_id,
                m.pattern.character,
                m.pattern.bot_response_type,
                scored.rank.as_str(),
                m.pattern.success_rate,
                m.pattern.like_rate,
                m.relevance
            )?;
            writeln!(out, "{}", m.pattern.bot_response)?;
        }
    }
    Ok(0)
}

fn none_found(format: Format, out: &mut dyn Write) -> Result<i32, Fail> {
    match format {
        Format::Json => writeln!(out, "null")?,
        Format::Table => writeln!(out, "no pattern qualifies")?,
    }
    Ok(1)
}

fn use_(a: &UseArgs, out: &mut dyn Write) -> Result<i32, Fail> {
    let store = open(a.common.db.as_deref())?;
    let log_id = pat::record_use(
        store.db(),
        &pat::NewUse {
            pattern_id: a.pattern,
            conversation_id: a.conversation.clone(),
            user_id: a.user.clone(),
            user_message: a.message.clone(),
            bot_response: None,
            character: None,
            at: a.at.unwrap_or_else(stamp::now_ms),
        },
    )?;
    let p = pat::get(store.db(), a.pattern)?;
    match a.common.format {
        Format::Json => print_json(
            out,
            &serde_json::json!({"log_id": log_id, "pattern_id": p.pattern_id,
                "character": p.character, "bot_response": p.bot_response}),
        )?,
        Format::Table => writeln!(out, "log {log_id}: {}", p.bot_response)?,
    }
    Ok(0)
}

/// The command line's spellings of a vote; anything else is kept as given so the library
/// can refuse it by value.
fn vote(s: &str) -> Result<i64, Fail> {
    match s.trim() {
        "+1" | "1" | "👍" | "up" => Ok(1),
        "-1" | "−1" | "👎" | "down" => Ok(-1),
        other => match other.parse::<i64>() {
            Ok(n) => Err(PatternError::BadFeedback(n).into()),
            Err(_) => Err(Fail(
                2,
                format!("feedback must be +1 (👍) or -1 (👎), not {other:?}"),
            )),
        },
    }
}

fn feedback(a: &FeedbackArgs, out: &mut dyn Write) -> Result<i32, Fail> {
    let value = vote(&a.value)?;
    let store = open(a.common.db.as_deref())?;
    let change = pat::feedback(store.db(), a.log, value)?;
    match a.common.format {
        Format::Json => print_json(out, &change)?,
        Format::Table => {
            let thumb = if value == 1 { "👍" } else { "👎" };
            match &change.pattern {
                Some(p) => writeln!(
                    out,
                    "log {}: {thumb} — pattern {}: {} 👍 / {} 👎 (like rate {:.2})",
                    a.log, p.pattern_id, p.like_count, p.dislike_count, p.like_rate
                )?,
                None => writeln!(out, "log {}: {thumb}", a.log)?,
            }
        }
    }
    Ok(0)
}

fn outcome(a: &OutcomeArgs, out: &mut dyn Write, err: &mut dyn FnMut(&str)) -> Result<i32, Fail> {
    let obs = match a.reply_at {
        Some(at) => pat::Observation::Replied {
            at,
            continued: a.continued,
        },
        None => pat::Observation::Silent {
            as_of: a.window.as_of(),
        },
    };
    let store = open(a.common.db.as_deref())?;
    let r = pat::resolve_use(store.db(), a.log, obs, a.window.secs())?;
    match a.common.format {
        Format::Json => {
            let mut v = serde_json::to_value(r)?;
            if let Some(o) = v.as_object_mut() {
                o.insert("log_id".into(), a.log.into());
            }
            print_json(out, &v)?;
        }
        Format::Table => match r {
            pat::Resolution::Success {
                reaction_time_seconds,
                continued,
            } => writeln!(
                out,
                "log {}: success (replied after {reaction_time_seconds} s{})",
                a.log,
                if continued { ", banter went on" } else { "" }
            )?,
            pat::Resolution::Failure => writeln!(out, "log {}: failure (dropout)", a.log)?,
            pat::Resolution::Pending => writeln!(out, "log {}: pending", a.log)?,
        },
    }
    if r == pat::Resolution::Pending {
        err(&format!(
            "log {}: the {}-minute window is still open; nothing recorded",
            a.log, a.window.window_minutes
        ));
        return Ok(1);
    }
    Ok(0)
}

fn import(a: &ImportArgs, out: &mut dyn Write, err: &mut dyn FnMut(&str)) -> Result<i32, Fail> {
    let name = a.file.display().to_string();
    let text = crate::limits::read_text(&a.file, crate::limits::MAX_LINE_BYTES as u64 * 4)
        .map_err(|e| Fail(2, e.to_string()))?;
    let lines = match exchange::parse_file(&text) {
        Ok(l) => l,
        Err(bad) => {
            for b in &bad {
                err(&b.render(&name));
            }
            return Err(Fail(
                2,
                format!("{name}: {} bad line(s); nothing imported", bad.len()),
            ));
        }
    };
    let gate = gate::Gate::load()?;
    let (mut refused, mut warned) = (0, 0);
    for (line, p, _) in &lines {
        match gate.check(p.character, &p.bot_response) {
            Ok(Some(_)) => warned += 1,
            Ok(None) => {}
            Err(why) => {
                refused += 1;
                err(&format!("{name}:{line}: bot_response: {why}"));
            }
        }
    }
    if refused > 0 {
        return Err(Fail(
            2,
            format!("{name}: {refused} reply(ies) the bot would never say; nothing imported"),
        ));
    }
    if warned > 0 {
        err(&format!(
            "{name}: {warned} of {} replies are judged WARN (`kakeai check` shows why); they are usable",
            lines.len()
        ));
    }
    let store = open(a.common.db.as_deref())?;
    let report = exchange::import(store.db(), &lines, a.skip_duplicates)?;
    for (line, existing) in &report.duplicates {
        err(&format!(
            "{name}:{line}: duplicate of pattern {existing} (same user_message_type, \
             bot_response and character)"
        ));
    }
    match a.common.format {
        Format::Json => print_json(out, &report)?,
        Format::Table if report.written => writeln!(
            out,
            "imported {} pattern(s){}",
            report.imported.len(),
            if report.duplicates.is_empty() {
                String::new()
            } else {
                format!(", skipped {} duplicate(s)", report.duplicates.len())
            }
        )?,
        Format::Table => writeln!(out, "nothing imported")?,
    }
    if !report.duplicates.is_empty() && !a.skip_duplicates {
        err(&format!(
            "{name}: {} duplicate(s); nothing imported (--skip-duplicates imports the rest)",
            report.duplicates.len()
        ));
        return Ok(1);
    }
    Ok(0)
}

fn export(a: &ExportArgs, out: &mut dyn Write) -> Result<i32, Fail> {
    let records = match open_existing(a.db.as_deref())? {
        Some(store) => exchange::export(store.db())?,
        None => Vec::new(),
    };
    match a.format {
        ExportFormat::Jsonl => {
            for r in &records {
                print_json(out, r)?;
            }
        }
        ExportFormat::Json => print_json(out, &records)?,
        ExportFormat::Table => show::records(&records, out)?,
    }
    Ok(0)
}

fn dropouts(a: &DropoutsArgs, out: &mut dyn Write) -> Result<i32, Fail> {
    let rows = match open_existing(a.common.db.as_deref())? {
        Some(store) => pat::dropouts::dropouts(store.db(), a.window.secs(), a.window.as_of())?,
        None => Vec::new(),
    };
    match a.common.format {
        Format::Json => print_json(out, &rows)?,
        Format::Table => show::dropouts(&rows, out)?,
    }
    Ok(0)
}
