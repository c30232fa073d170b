//! Preference datasets from a day of review (issue 25 §1): `kakeai export --format dpo|kto|sft`
//! writes JSON Lines that TRL and Hugging Face `datasets` read as they are, one run at a time
//! (constant memory), and a dataset card beside the file.
//!
//! - **DPO** (`prompt`, `chosen`, `rejected`, conversational): a Director RETRY attempt and the
//!   line accepted after it on the same turn (`director`); a line reviewers rejected and another
//!   version of the same turn they accepted (`reviewers`: an override to RETRY vs a pass, 👎 vs
//!   👍 on alternatives). The prompt is the rejected attempt's stored request — the exact
//!   messages the model saw when it went wrong; the accepted line was written after the
//!   Director's guidance was added, which is what the pair teaches the model to do unasked.
//! - **KTO** (`prompt`, `completion`, `label`): single judgements; reviewers outrank the
//!   Director; ties between reviewers are dropped.
//! - **SFT** (`messages`): committed PASS lines no reviewer rejected.
//!
//! Every record has `metadata` (run, turn, attempt ids, ruleset version, model, who judged).

pub mod card;
pub mod lines;
pub mod mask;
pub mod records;
pub mod redact;

use std::io::Write;

use serde_json::{Value, json};

use crate::store::{Store, StoreError};

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Dpo,
    Kto,
    Sft,
}

impl Format {
    pub fn as_str(self) -> &'static str {
        match self {
            Format::Dpo => "dpo",
            Format::Kto => "kto",
            Format::Sft => "sft",
        }
    }
}

/// What goes in.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Runs started at or after / before (ISO 8601 UTC text, as stored).
    pub since: Option<String>,
    pub until: Option<String>,
    pub runs: Vec<i64>,
    /// `yana` or `ayu`.
    pub sister: Option<String>,
    /// Only this reviewer's marks count.
    pub reviewer: Option<String>,
    /// Only items at least this many reviewers judged.
    pub min_reviewers: usize,
    /// Only items where at least this share of their reviewers agreed (0–1).
    pub agreement_min: Option<f64>,
    /// Drop items where one of these rules fired (WARN or worse) on a line involved.
    pub exclude_rules: Vec<String>,
    pub director_only: bool,
    pub reviewers_only: bool,
    /// Only items a lead decided a gold label for (adjudication).
    pub gold_only: bool,
    /// Replace the 【世界設定】 part of every prompt by a notice.
    pub redact_vault: bool,
    /// Take comparison and vault-probe sample runs too (left out unless named with `runs`).
    pub include_samples: bool,
    /// The licence the card states (an SPDX id or a name); None: "not stated".
    pub license: Option<String>,
    /// Prompts longer than this many (estimated) tokens lose their oldest history as a run's
    /// prompt does (`llm::budget::fit_prioritised`); still longer, the record is left out.
    pub max_prompt_tokens: Option<u32>,
    /// Tokens per character for the estimate (llm.toml `tokens_per_char`).
    pub tokens_per_char: f64,
    /// SFT as `prompt` + `completion` (only her accepted line is trained) instead of
    /// `messages` (TRL trains on every assistant line in it, her earlier ones included).
    pub sft_prompt_completion: bool,
}

/// What came out, and what was left out and why (for the card).
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Tally {
    /// (source, sister) → records.
    pub records: std::collections::BTreeMap<String, usize>,
    /// reason → items left out.
    pub skipped: std::collections::BTreeMap<String, usize>,
    pub runs: usize,
    pub ruleset_versions: std::collections::BTreeSet<String>,
    pub models: std::collections::BTreeSet<String>,
    /// Reviewers whose marks decided a record.
    pub reviewers: std::collections::BTreeSet<String>,
    /// Records whose label is a lead's gold label.
    pub gold: usize,
    /// Each record's prompt, in estimated tokens (after any trimming).
    pub prompt_tokens: Vec<usize>,
    /// Records whose prompt lost history to `max_prompt_tokens`, and the messages dropped.
    pub trimmed: usize,
    pub trimmed_messages: usize,
}

impl Tally {
    pub fn total(&self) -> usize {
        self.records.values().sum()
    }

    pub(crate) fn skip(&mut self, why: &str) {
        *self.skipped.entry(why.to_string()).or_default() += 1;
    }

    pub(crate) fn count(&mut self, source: &str, sister: &str) {
        *self
            .records
            .entry(format!("{source} · {sister}"))
            .or_default() += 1;
    }
}

#[derive(Debug, thiserror::Error)]
pub enum DatasetError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("writing the dataset: {0}")]
    Io(#[from] std::io::Error),
    #[error("{0}")]
    Invalid(String),
}

impl From<rusqlite::Error> for DatasetError {
    fn from(e: rusqlite::Error) -> Self {
        DatasetError::Store(e.into())
    }
}

/// The runs the options select, oldest first. Comparison and vault-probe samples are not
/// conversations anyone reviewed: left out (and counted) unless named or `include_samples`.
fn run_ids(store: &Store, o: &Options, tally: &mut Tally) -> Result<Vec<i64>, DatasetError> {
    let rows: Vec<(i64, String)> = store
        .db()
        .query_map(
            "SELECT id, options FROM runs WHERE (CAST(?1 AS TEXT) IS NULL OR started_at >= ?1)
               AND (CAST(?2 AS TEXT) IS NULL OR started_at < ?2) ORDER BY id",
            crate::p![o.since, o.until],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .map_err(crate::store::StoreError::from)?;
    let mut ids = Vec::new();
    for (id, options) in rows {
        let sample = crate::store::pg::read::sample_of(&options);
        if sample.is_some() && !o.include_samples && !o.runs.contains(&id) {
            tally.skip("run made by a comparison or a vault probe (--include-samples takes them)");
            continue;
        }
        ids.push(id);
    }
    if o.runs.is_empty() {
        return Ok(ids);
    }
    for r in &o.runs {
        if !ids.contains(r) && store.load_run(*r).is_err() {
            return Err(DatasetError::Invalid(format!(
                "no run with id {r} (see `kakeai runs`)"
            )));
        }
    }
    Ok(ids.into_iter().filter(|i| o.runs.contains(i)).collect())
}

/// Writes every record of `format` to `out`, run by run, masked by the rules; returns the
/// tally for the card.
pub fn export(
    store: &Store,
    format: Format,
    o: &Options,
    out: &mut dyn Write,
) -> Result<Tally, DatasetError> {
    export_with(store, format, o, out, &mask::Rules)
}

/// [`export`], each text masked by `mask`.
pub fn export_with(
    store: &Store,
    format: Format,
    o: &Options,
    out: &mut dyn Write,
    mask: &dyn mask::TextMask,
) -> Result<Tally, DatasetError> {
    if o.director_only && o.reviewers_only {
        return Err(DatasetError::Invalid(
            "--director-only and --reviewers-only exclude each other".into(),
        ));
    }
    if let Some(a) = o.agreement_min
        && !(0.0..=1.0).contains(&a)
    {
        return Err(DatasetError::Invalid(format!(
            "--agreement-min {a}: a share between 0 and 1"
        )));
    }
    let mut tally = Tally::default();
    for id in run_ids(store, o, &mut tally)? {
        let rec = store.load_run(id)?;
        let branches = store.branches(id)?;
        tally.runs += 1;
        if let Some(v) = &rec.run.ruleset_version {
            tally.ruleset_versions.insert(v.clone());
        }
        if let Some(m) = &rec.run.model {
            tally.models.insert(m.clone());
        }
        let (mut turns, ambiguous) = lines::read(&rec, &branches);
        attach_gold(store, id, &mut turns, &mut tally)?;
        if ambiguous {
            tally.skip(&format!(
                "run {id}: its stored regenerate actions and branches disagree, so its reviewer \
                 marks were not used"
            ));
        }
        let redactor = if o.redact_vault {
            match run_vault(&rec.run.options) {
                Ok(w) => Some(redact::Redactor::of(&w)),
                Err(e) => {
                    // Fail closed: a run whose vault cannot be read is not exported redacted.
                    tally.skip(&format!(
                        "run {id}: --redact-vault could not read its vault ({e}), so none of its \
                         records were written"
                    ));
                    continue;
                }
            }
        } else {
            None
        };
        let mut ctx = records::Ctx {
            redactor,
            store,
            rec: &rec,
            o,
            tally: &mut tally,
            out,
            leaked: records::leak_rejected_texts(&rec),
            mask,
        };
        for t in &turns {
            if o.sister.as_deref().is_some_and(|s| s != t.speaker) {
                continue;
            }
            match format {
                Format::Dpo => records::dpo(&mut ctx, t)?,
                Format::Kto => records::kto(&mut ctx, t)?,
                Format::Sft => records::sft(&mut ctx, t)?,
            }
        }
    }
    out.flush()?;
    Ok(tally)
}

/// Puts the gold labels of run `id`'s turns (from every turn queue) on their committed lines.
/// Two queues deciding one turn differently leave it undecided (counted), never one picked.
fn attach_gold(
    store: &Store,
    id: i64,
    turns: &mut [lines::TurnLines],
    tally: &mut Tally,
) -> Result<(), DatasetError> {
    let golds = crate::annotate::adjudicate::of_run(store.db(), id)?;
    for (turn, golds) in golds {
        let Some(gold) = crate::annotate::adjudicate::agreed(golds) else {
            tally.skip(&format!(
                "run {id} turn {turn}: gold labels of two queues disagree, so neither was used"
            ));
            continue;
        };
        let current = turns
            .iter_mut()
            .filter(|t| t.turn == turn)
            .flat_map(|t| t.versions.iter_mut())
            .find(|v| v.current);
        if let Some(v) = current {
            v.gold = Some(gold);
        }
    }
    Ok(())
}

/// The vault a run was made with (its stamp), else the writer's default.
fn run_vault(options: &serde_json::Value) -> Result<crate::vault::load::Work, String> {
    match crate::vault::stamp::stored_source(options) {
        Some((dir, work)) => crate::vault::open(Some(&dir), work.as_deref()),
        None => crate::vault::open(None, None),
    }
    .map_err(|e| e.to_string())
}

/// The notice that replaces the world section with `--redact-vault`.
pub const REDACTED: &str = "（この部分の世界設定は、データを外部に出すために伏せています）";

/// The stored request's messages, redacted when asked; None (and a reason) when there is no
/// usable request.
pub(crate) fn prompt_of(
    store: &Store,
    attempt_id: Option<i64>,
    redact: bool,
) -> Result<Result<Vec<Value>, &'static str>, DatasetError> {
    let Some(id) = attempt_id else {
        return Ok(Err("line without a stored attempt"));
    };
    let Some(req) = store.request_of(id)? else {
        return Ok(Err("attempt without a stored request"));
    };
    let Some(msgs) = req.get("messages").and_then(Value::as_array) else {
        return Ok(Err("stored request without messages"));
    };
    let mut msgs: Vec<Value> = msgs
        .iter()
        .map(|m| json!({"role": m["role"], "content": m["content"]}))
        .collect();
    if msgs.is_empty() || msgs.iter().any(|m| !m["content"].is_string()) {
        return Ok(Err("stored request without messages"));
    }
    if redact && !redact_world(&mut msgs) {
        return Ok(Err(
            "--redact-vault: the world section could not be located",
        ));
    }
    Ok(Ok(msgs))
}

/// Replaces what lies between 【世界設定】 and 【話題】 in the one message that holds them;
/// false (fail closed) unless exactly one message holds exactly one such section.
fn redact_world(msgs: &mut [Value]) -> bool {
    const OPEN: &str = "【世界設定】\n";
    const CLOSE: &str = "\n\n【話題】";
    let holders: Vec<usize> = msgs
        .iter()
        .enumerate()
        .filter(|(_, m)| {
            m["content"]
                .as_str()
                .is_some_and(|c| c.contains("【世界設定】"))
        })
        .map(|(i, _)| i)
        .collect();
    let [i] = holders[..] else {
        return false;
    };
    let c = msgs[i]["content"].as_str().unwrap_or_default().to_string();
    if c.matches("【世界設定】").count() != 1 || c.matches(CLOSE).count() != 1 {
        return false;
    }
    let (Some(a), Some(b)) = (c.find(OPEN), c.find(CLOSE)) else {
        return false;
    };
    if b < a + OPEN.len() {
        return false;
    }
    let redacted = format!("{}{REDACTED}{}", &c[..a + OPEN.len()], &c[b..]);
    msgs[i]["content"] = Value::String(redacted);
    true
}

#[cfg(test)]
mod tests;
