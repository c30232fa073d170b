//! `kakeai export`: one stored run as JSON Lines or a markdown transcript, or preference
//! datasets for fine-tuning (`--format dpo|kto|sft`, see [`crate::dataset`]) over any runs.
//!
//! Every text is masked by the rules; with the model's second opinion on (see
//! [`super::second`]) the export runs twice: a first pass collects every distinct text, the
//! model checks each, and the second pass writes the texts as checked. In fail-closed a text it
//! could not check stops the export before anything is written (exit 3).

use std::io::Write;
use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::progress::ProgressArgs;
use super::second::{self, Second, SecondArgs};
use crate::dataset::mask::{Collect, Rules, Table, TextMask};
use crate::store::{Store, StoreError, export};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExportFormat {
    Jsonl,
    Md,
    /// Preference pairs (TRL's conversational format)
    Dpo,
    /// Single judgements with a label
    Kto,
    /// Accepted lines as chat messages
    Sft,
}

#[derive(Args, Debug)]
pub struct ExportArgs {
    /// The run id (see `kakeai runs`); for dpo/kto/sft any number of runs (default: all)
    #[arg(long = "run", value_delimiter = ',')]
    pub run: Vec<i64>,
    #[arg(long, value_enum, default_value = "jsonl")]
    pub format: ExportFormat,
    #[command(flatten)]
    pub dataset: DatasetArgs,
    /// The store file, or for jsonl and md a postgresql:// URL (default: <data dir>/kakeai.db).
    #[arg(long, env = "KAKEAI_DB")]
    pub db: Option<PathBuf>,
    /// Write here instead of stdout.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// jsonl and md only: personal data as stored, not masked (stated in the output's header)
    #[arg(long)]
    pub unmasked: bool,
    #[command(flatten)]
    pub second: SecondArgs,
    #[command(flatten)]
    pub progress: ProgressArgs,
}

/// Filters of the dataset formats (dpo, kto, sft).
#[derive(Args, Debug, Default)]
pub struct DatasetArgs {
    /// Runs started on or after (2026-11-23 or an ISO 8601 time, UTC)
    #[arg(long)]
    pub since: Option<String>,
    /// Runs started before this time; a date alone (2026-11-23) includes that whole day (UTC)
    #[arg(long)]
    pub until: Option<String>,
    /// yana or ayu (やな, あゆ)
    #[arg(long)]
    pub sister: Option<String>,
    /// Only this reviewer's marks
    #[arg(long)]
    pub reviewer: Option<String>,
    /// Only items at least N reviewers judged
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub min_reviewers: usize,
    /// Only items where at least this share of their reviewers agreed (0–1)
    #[arg(long, value_name = "A")]
    pub agreement_min: Option<f64>,
    /// Leave out items where one of these rules fired (e.g. leak,prompt_echo)
    #[arg(long, value_delimiter = ',')]
    pub exclude_rules: Vec<String>,
    #[arg(long)]
    pub director_only: bool,
    #[arg(long)]
    pub reviewers_only: bool,
    /// Only items a lead adjudicated (`queue adjudicate`); their gold label decides them
    #[arg(long)]
    pub gold_only: bool,
    /// Replace the world section (the vault's part) of every prompt by a notice
    #[arg(long)]
    pub redact_vault: bool,
    /// Take comparison and vault-probe sample runs too (left out unless named with --run)
    #[arg(long)]
    pub include_samples: bool,
    /// The licence the dataset card states (an SPDX id such as cc-by-4.0, or a name)
    #[arg(long, value_name = "ID")]
    pub license: Option<String>,
    /// Trim each prompt to N tokens (estimated with llm.toml's tokens_per_char): the oldest
    /// history goes first, as in a run; a prompt that does not fit without history is left out
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_prompt_tokens: Option<u32>,
    /// SFT records as chat `messages` (every assistant line trained) or `prompt-completion`
    /// (only her accepted line trained)
    #[arg(long, value_enum, default_value = "messages")]
    pub sft_form: SftForm,
}

/// The shape of SFT records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum SftForm {
    #[default]
    Messages,
    PromptCompletion,
}

pub fn run(args: ExportArgs) -> i32 {
    let dataset = match args.format {
        ExportFormat::Dpo => Some(crate::dataset::Format::Dpo),
        ExportFormat::Kto => Some(crate::dataset::Format::Kto),
        ExportFormat::Sft => Some(crate::dataset::Format::Sft),
        _ => None,
    };
    if let Err(e) = check_input(&args, dataset.is_some()) {
        eprintln!("kakeai export: {e}");
        return 2;
    }
    if let Some(f) = dataset {
        // The store first (exit 3 when its PostgreSQL server cannot be reached).
        let store = match Store::open_existing(args.db.as_deref(), false) {
            Ok(s) => s,
            Err((e, code)) => {
                eprintln!("kakeai export: {e}");
                return code;
            }
        };
        return match export_dataset(&args, f, &store) {
            Ok(()) => 0,
            Err((e, code)) => {
                eprintln!("kakeai export: {e}");
                code
            }
        };
    }
    match export_run(&args) {
        Ok(()) => 0,
        Err((e, code)) => {
            eprintln!("kakeai export: {e}");
            code
        }
    }
}

/// Bad input refused before anything is read or written: `--unmasked` on a dataset format, an
/// unknown `--exclude-rules` name, an output folder that does not exist.
fn check_input(args: &ExportArgs, dataset: bool) -> Result<(), String> {
    if dataset && args.unmasked {
        return Err("--unmasked: only for jsonl and md; datasets are always masked".into());
    }
    let known: Vec<&str> = crate::director::RuleId::ALL
        .iter()
        .map(|r| r.as_str())
        .collect();
    if let Some(bad) = args
        .dataset
        .exclude_rules
        .iter()
        .find(|r| !known.contains(&r.as_str()))
    {
        return Err(format!(
            "--exclude-rules {bad}: no such rule (known: {})",
            known.join(", ")
        ));
    }
    if let Some(out) = &args.out {
        let dir = out
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(std::path::Path::new("."));
        if !dir.is_dir() {
            return Err(format!(
                "--out {}: the folder {} does not exist",
                out.display(),
                dir.display()
            ));
        }
    }
    Ok(())
}

/// Writes `bytes` to `out` through a temporary file in the same folder, renamed into place:
/// a failed write never leaves half a file.
fn write_whole(out: &std::path::Path, bytes: &[u8]) -> Result<(), String> {
    let tmp = out.with_extension("partial");
    let res = std::fs::write(&tmp, bytes).and_then(|_| std::fs::rename(&tmp, out));
    if let Err(e) = res {
        let _ = std::fs::remove_file(&tmp);
        return Err(format!("{}: {e}", out.display()));
    }
    Ok(())
}

fn export_run(args: &ExportArgs) -> Result<(), (String, i32)> {
    // jsonl and md read one run (`Store::load_run`), on either engine.
    let store = Store::open_existing(args.db.as_deref(), false)?;
    export_one(args, &store)
}

/// The texts as the model's second opinion left them, made from what a first pass collected
/// (each distinct rule-masked text asked once), and how many it could not check (fail-open).
struct Checked {
    table: Table,
    unchecked: usize,
    total: usize,
}

impl Checked {
    /// Asks about every collected text; in fail-closed the first one that could not be
    /// checked refuses the export (exit 3).
    fn ask(
        second: &Second,
        texts: Vec<(String, String)>,
        progress: ProgressArgs,
    ) -> Result<Checked, (String, i32)> {
        let mut distinct: Vec<String> = Vec::new();
        let mut index = std::collections::HashMap::new();
        for (_, m) in &texts {
            index.entry(m.clone()).or_insert_with(|| {
                distinct.push(m.clone());
                distinct.len() - 1
            });
        }
        let total = distinct.len();
        let asked = distinct
            .iter()
            .map(|m| crate::safety::pii::already_masked(m))
            .collect();
        let outcomes = second.check(asked, progress);
        let mut after: Vec<String> = distinct.clone();
        let mut unchecked = 0;
        for (k, (m, why)) in outcomes.into_iter().enumerate() {
            match why {
                Some(why) if second.fail_closed() => {
                    let place = format!("text {} of {total}", k + 1);
                    let text = second::refusal(&place, &why, "nothing written");
                    return Err((text, second::EXIT_UNCHECKED));
                }
                Some(_) => unchecked += 1,
                None => after[k] = m.masked_text,
            }
        }
        let table = texts
            .into_iter()
            .map(|(o, m)| (o, after[index[&m]].clone()))
            .collect();
        Ok(Checked {
            table: Table::new(table),
            unchecked,
            total,
        })
    }

    /// After the writing pass: a text the first pass did not see (the store changed between
    /// them) was not checked — refused in fail-closed, counted in fail-open.
    fn finish(&self, second: &Second) -> Result<(), (String, i32)> {
        let missed = self.table.misses();
        if missed > 0 && second.fail_closed() {
            let why = "it was added to the store while the export ran";
            let text = second::refusal(&format!("{missed} text(s)"), why, "nothing written");
            return Err((text, second::EXIT_UNCHECKED));
        }
        if self.unchecked + missed > 0 {
            let note = second::unchecked_note(self.unchecked + missed, self.total + missed);
            eprintln!("kakeai export: {note}");
        }
        Ok(())
    }
}

/// The run's record masked: by the rules, or (second opinion on) with every text checked.
fn masked_record(
    args: &ExportArgs,
    rec: &crate::store::RunRecord,
) -> Result<crate::store::RunRecord, (String, i32)> {
    let Some(second) = Second::from_args(args.second).map_err(|e| (e, 2))? else {
        return Ok(crate::dataset::mask::record(rec));
    };
    let collect = Collect::default();
    crate::dataset::mask::record_with(rec, &collect);
    let checked = Checked::ask(&second, collect.into_texts(), args.progress)?;
    let masked = crate::dataset::mask::record_with(rec, &checked.table);
    checked.finish(&second)?;
    Ok(masked)
}

fn export_one(args: &ExportArgs, store: &Store) -> Result<(), (String, i32)> {
    let [run] = args.run[..] else {
        return Err((
            "--run N: one run for jsonl and md (see `kakeai runs`)".into(),
            2,
        ));
    };
    let rec = store.load_run(run).map_err(|e| match e {
        StoreError::NoSuchRun(id) => (format!("no run with id {id} (see `kakeai runs`)"), 2),
        other => (other.to_string(), 2),
    })?;
    let rec = if args.unmasked {
        rec
    } else {
        masked_record(args, &rec)?
    };
    let pii = if args.unmasked { "unmasked" } else { "masked" };
    let mut buf = Vec::new();
    match args.format {
        ExportFormat::Jsonl => {
            buf.extend(format!("{{\"record\":\"export\",\"pii\":\"{pii}\"}}\n").bytes());
            export::jsonl(&rec, &mut buf)
        }
        ExportFormat::Md => {
            let note = if args.unmasked {
                "personal data as stored (--unmasked)"
            } else {
                "personal data masked"
            };
            buf.extend(format!("<!-- kakeai export: {note} -->\n").bytes());
            export::markdown(&rec, &mut buf)
        }
        _ => unreachable!("dataset formats are written by export_dataset"),
    }
    .map_err(|e| (e.to_string(), 2))?;
    match &args.out {
        Some(p) => write_whole(p, &buf),
        None => std::io::stdout()
            .lock()
            .write_all(&buf)
            .map_err(|e| e.to_string()),
    }
    .map_err(|e| (e, 2))
}

/// `--format dpo|kto|sft`: the records to `--out`, the dataset card beside them. An export
/// with no record writes nothing and fails (exit 1) saying what was left out.
fn export_dataset(
    args: &ExportArgs,
    format: crate::dataset::Format,
    store: &Store,
) -> Result<(), (String, i32)> {
    let opts = options(args, format).map_err(|e| (e, 2))?;
    let out = args.out.as_deref().expect("options() checked --out");
    let second = Second::from_args(args.second).map_err(|e| (e, 2))?;
    let checked = match &second {
        Some(s) => Some(dataset_checked(s, args, format, &opts, store)?),
        None => None,
    };
    let mask: &dyn TextMask = match &checked {
        Some(c) => &c.table,
        None => &Rules,
    };
    // Written to a temporary file first: a failed export never leaves half a dataset behind.
    let tmp = out.with_extension("partial");
    let file = std::fs::File::create(&tmp).map_err(|e| (format!("{}: {e}", tmp.display()), 2))?;
    let mut w = std::io::BufWriter::new(file);
    let tally = crate::dataset::export_with(store, format, &opts, &mut w, mask);
    drop(w);
    let finished = match (&checked, &second) {
        (Some(c), Some(s)) => c.finish(s),
        _ => Ok(()),
    };
    if let Err(e) = finished {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    let tally = match tally {
        Ok(t) if t.total() > 0 => t,
        Ok(t) => {
            let _ = std::fs::remove_file(&tmp);
            return Err((empty_reason(format, &t), 1));
        }
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            return Err((e.to_string(), 2));
        }
    };
    std::fs::rename(&tmp, out).map_err(|e| (format!("{}: {e}", out.display()), 2))?;
    let card = crate::dataset::card::path_for(out, format);
    let name = out
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let text =
        crate::dataset::card::render(format, &name, &opts, &tally, &crate::store::time::now_iso());
    write_whole(&card, text.as_bytes()).map_err(|e| (e, 2))?;
    eprintln!(
        "kakeai export: {} {} records from {} runs → {} (card: {})",
        tally.total(),
        format.as_str(),
        tally.runs,
        out.display(),
        card.display()
    );
    Ok(())
}

/// The first pass of a dataset export with the second opinion on: the records to nowhere,
/// collecting their texts, then the model asked about each. An export with no record stops
/// here (exit 1) without asking.
fn dataset_checked(
    second: &Second,
    args: &ExportArgs,
    format: crate::dataset::Format,
    opts: &crate::dataset::Options,
    store: &Store,
) -> Result<Checked, (String, i32)> {
    let collect = Collect::default();
    let tally = crate::dataset::export_with(store, format, opts, &mut std::io::sink(), &collect)
        .map_err(|e| (e.to_string(), 2))?;
    if tally.total() == 0 {
        return Err((empty_reason(format, &tally), 1));
    }
    Checked::ask(second, collect.into_texts(), args.progress)
}

/// Why an export has no record: the runs read and the reasons items were left out.
fn empty_reason(format: crate::dataset::Format, t: &crate::dataset::Tally) -> String {
    let mut why: Vec<(&String, &usize)> = t.skipped.iter().collect();
    why.sort_by_key(|(_, n)| std::cmp::Reverse(**n));
    let left: Vec<String> = why
        .iter()
        .take(4)
        .map(|(w, n)| format!("{n} × {w}"))
        .collect();
    format!(
        "no {} records, nothing written: {} runs read{}{}",
        format.as_str(),
        t.runs,
        if left.is_empty() {
            " and none had a line judged for this format (review some, or loosen the filters)"
                .to_string()
        } else {
            format!("; left out: {}", left.join("; "))
        },
        if t.runs == 0 {
            " (no run matches --run/--since/--until; see `kakeai runs`)"
        } else {
            ""
        }
    )
}

/// The dataset options from the flags (bad values refused).
fn options(
    args: &ExportArgs,
    format: crate::dataset::Format,
) -> Result<crate::dataset::Options, String> {
    if args.out.is_none() {
        return Err(format!(
            "--format {}: name the file with --out (a dataset card is written beside it)",
            format.as_str()
        ));
    }
    let d = &args.dataset;
    let when = |flag: &str, v: &Option<String>| {
        v.as_deref()
            .map(|s| crate::annotate::parse_when(flag, s).map_err(|e| e.to_string()))
            .transpose()
    };
    let sister = d.sister.as_deref().map(|s| match s {
        "やな" | "yana" => Ok("yana".to_string()),
        "あゆ" | "ayu" => Ok("ayu".to_string()),
        s => Err(format!("--sister {s}: yana or ayu (やな, あゆ)")),
    });
    if d.sft_form != SftForm::Messages && format != crate::dataset::Format::Sft {
        return Err("--sft-form: only for --format sft".into());
    }
    let tokens_per_char = crate::llm::LlmConfig::load()
        .map_err(|e| e.to_string())?
        .tokens_per_char;
    Ok(crate::dataset::Options {
        since: when("--since", &d.since)?,
        until: when("--until", &d.until)?,
        runs: args.run.clone(),
        sister: sister.transpose()?,
        reviewer: d.reviewer.clone(),
        min_reviewers: d.min_reviewers,
        agreement_min: d.agreement_min,
        exclude_rules: d.exclude_rules.clone(),
        director_only: d.director_only,
        reviewers_only: d.reviewers_only,
        gold_only: d.gold_only,
        redact_vault: d.redact_vault,
        include_samples: d.include_samples,
        license: d.license.clone(),
        max_prompt_tokens: d.max_prompt_tokens,
        tokens_per_char,
        sft_prompt_completion: d.sft_form == SftForm::PromptCompletion,
    })
}

#[cfg(test)]
#[path = "export_tests.rs"]
mod tests;
