//! The dataset card written beside an export, one per format (`README.dpo.md`,
//! `README.kto.md`, `README.sft.md` in the output's folder, or `NAME.README.md` when that name
//! holds the card of another file): counts per source and sister, what was left out and why,
//! the filters, the licence, who reviewed, what each field and label means, prompt sizes in
//! estimated tokens, ruleset versions, models and the date.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::{Format, Options, Tally};

/// Where the card of `out` (a `format` export) goes: the folder's card of that format, unless
/// it describes another file (then one named after `out`, so no export's card is lost).
pub fn path_for(out: &Path, format: Format) -> PathBuf {
    let dir = out
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let plain = dir.join(format!("README.{}.md", format.as_str()));
    let name = out
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    // This file's card from an earlier export is ours to replace; anything else is not.
    let ours = std::fs::read_to_string(&plain)
        .map(|s| s.starts_with(&format!("{HEADER}: `{name}` ")))
        .unwrap_or(true);
    if ours {
        plain
    } else {
        dir.join(format!("{name}.README.md"))
    }
}

const HEADER: &str = "# kakeai preference dataset";

/// The card's markdown.
pub fn render(format: Format, file: &str, o: &Options, t: &Tally, date: &str) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{HEADER}: `{file}` ({})\n",
        format.as_str().to_uppercase()
    );
    let _ = writeln!(
        s,
        "Written {date} by `kakeai export --format {}`.\n",
        format.as_str()
    );
    let _ = writeln!(
        s,
        "Load it with `datasets.load_dataset(\"json\", data_files=\"{file}\")`; each record's \
         `metadata` names its run, turn, attempts, ruleset version, model and who judged it.\n"
    );
    let _ = writeln!(s, "## Records: {} from {} runs\n", t.total(), t.runs);
    let _ = writeln!(s, "| source · sister | records |\n|---|---:|");
    for (k, n) in &t.records {
        let _ = writeln!(s, "| {k} | {n} |");
    }
    let _ = writeln!(s, "\n## Left out\n");
    if t.skipped.is_empty() {
        let _ = writeln!(s, "nothing");
    }
    for (why, n) in &t.skipped {
        let _ = writeln!(s, "- {n} × {why}");
    }
    let _ = writeln!(s, "\n## Licence\n");
    let _ = writeln!(
        s,
        "{}",
        match &o.license {
            Some(l) => format!("licence: {l} (as stated by whoever exported it, `--license`)"),
            None => "licence: not stated — ask the team that owns the store before sharing it \
                     (`--license ID` states one)"
                .to_string(),
        }
    );
    let _ = writeln!(s, "\n## Reviewers\n");
    if t.reviewers.is_empty() {
        let _ = writeln!(s, "none: every record was judged by the Director alone");
    } else {
        let names: Vec<&str> = t.reviewers.iter().map(String::as_str).collect();
        let _ = writeln!(
            s,
            "{} (their marks decided the `reviewers` records; `metadata.judged_by` names who \
             judged each one)",
            names.join(", ")
        );
    }
    if t.gold > 0 {
        let _ = writeln!(
            s,
            "\n{} record(s) take a lead's gold label from adjudication (`queue adjudicate`): it \
             decides them before any reviewer's mark or the Director (`metadata.judged_by.gold` \
             names the queue, the lead and the reason)",
            t.gold
        );
    }
    let _ = writeln!(s, "\n## Fields and labels\n");
    let _ = writeln!(s, "{}", meanings(format, o));
    let _ = writeln!(s, "\n## Prompt size\n");
    let _ = writeln!(s, "{}", sizes(o, t));
    let _ = writeln!(s, "\n## Filters\n");
    for line in filters(o) {
        let _ = writeln!(s, "- {line}");
    }
    let list = |set: &std::collections::BTreeSet<String>| {
        if set.is_empty() {
            "(none recorded)".to_string()
        } else {
            set.iter().cloned().collect::<Vec<_>>().join(", ")
        }
    };
    let _ = writeln!(s, "\n## Provenance\n");
    let _ = writeln!(s, "- ruleset versions: {}", list(&t.ruleset_versions));
    let _ = writeln!(s, "- models: {}", list(&t.models));
    let _ = writeln!(
        s,
        "- personal data: every text field of every record (prompt, history, chosen, rejected, \
         completion) went through the store's PII masker on export; `metadata` holds ids only\n\
         - leaks: a line whose stored verdict holds a `leak` RETRY finding is only a rejected \
         example (never chosen, a KTO true or an SFT completion) and is replaced by `{}` in every \
         prompt's history (checked against the stored verdicts of the exported runs only)\n\
         - vault: {}",
        super::records::WITHHELD,
        if o.redact_vault {
            "--redact-vault: the 【世界設定】 part of every prompt is replaced by a notice, and in \
             every field of every record the words of each run's own vault that are not for \
             everyone (secret ids, forbidden keywords and their readings, secret contents and \
             allowed expressions, lines of sections below level 3) are replaced by ［伏字］. \
             Found by exact match only: a paraphrase of a secret is not found"
        } else {
            "prompts are as the model saw them, vault text included (not checked)"
        }
    );
    s
}

/// What each field and label of `format` means.
fn meanings(format: Format, o: &Options) -> String {
    let source = "`metadata.source`: `director` — kakeai's Director (its rules and judge) \
                  decided; `reviewers` — people's marks decided, overriding the Director.";
    let body = match format {
        Format::Dpo => "- `prompt`: the messages the model was sent when it wrote the rejected \
             line (system, then the conversation)\n\
             - `chosen`: a line accepted for the same turn (a Director PASS/WARN written after \
             its guidance, or the version reviewers accepted)\n\
             - `rejected`: a line the Director judged RETRY, or reviewers rejected"
            .to_string(),
        Format::Kto => "- `prompt`: the messages the model was sent\n\
             - `completion`: her line\n\
             - `label`: `true` — the line is fine as she would say it (a Director PASS, or most \
             of its reviewers 👍/PASS); `false` — it must not be said (a Director RETRY, most \
             reviewers 👎/RETRY, or a line the leak review rejected); ties are left out"
            .to_string(),
        Format::Sft if o.sft_prompt_completion => "- `prompt`: the messages the model was sent\n\
             - `completion`: her accepted line (a Director PASS no reviewer rejected): the only \
             text trained on (TRL's completion-only loss)"
            .to_string(),
        Format::Sft => "- `messages`: the messages the model was sent, then her accepted line \
             (a Director PASS no reviewer rejected) as the last `assistant` message. Her \
             earlier lines in it were not all accepted and TRL trains on every assistant \
             message by default: export with `--sft-form prompt-completion` to train on the \
             accepted line only"
            .to_string(),
    };
    format!("{body}\n- {source}")
}

/// Prompt sizes in estimated tokens, and what `--max-prompt-tokens` did.
fn sizes(o: &Options, t: &Tally) -> String {
    let mut n = t.prompt_tokens.clone();
    n.sort_unstable();
    let mut s = format!(
        "Estimated as characters × {} tokens per character (kakeai's chars→tokens ratio, \
         `tokens_per_char` in llm.toml; no model tokenizer was run — count with yours before \
         choosing `max_length`).",
        o.tokens_per_char
    );
    if let (Some(lo), Some(hi)) = (n.first(), n.last()) {
        let _ = write!(
            s,
            " Prompts: min {lo}, median {}, max {hi} tokens.",
            n[n.len() / 2]
        );
    }
    match o.max_prompt_tokens {
        Some(max) => {
            let _ = write!(
                s,
                " `--max-prompt-tokens {max}`: {} prompts lost {} history messages, oldest \
                 first, as a run's prompt does; prompts that did not fit even without history \
                 are left out (see above).",
                t.trimmed, t.trimmed_messages
            );
        }
        None => s.push_str(" Not trimmed (`--max-prompt-tokens N` trims the oldest history)."),
    }
    s
}

fn filters(o: &Options) -> Vec<String> {
    let mut f = Vec::new();
    let mut add = |cond: bool, text: String| {
        if cond {
            f.push(text)
        }
    };
    add(
        o.since.is_some(),
        format!("since {}", o.since.clone().unwrap_or_default()),
    );
    add(
        o.until.is_some(),
        format!("until {}", o.until.clone().unwrap_or_default()),
    );
    add(!o.runs.is_empty(), format!("runs {:?}", o.runs));
    add(
        o.sister.is_some(),
        format!("sister {}", o.sister.clone().unwrap_or_default()),
    );
    add(
        o.reviewer.is_some(),
        format!("reviewer {}", o.reviewer.clone().unwrap_or_default()),
    );
    add(
        o.min_reviewers > 0,
        format!("min reviewers {}", o.min_reviewers),
    );
    add(
        o.agreement_min.is_some(),
        format!("agreement ≥ {}", o.agreement_min.unwrap_or(0.0)),
    );
    add(
        !o.exclude_rules.is_empty(),
        format!("excluded rules {}", o.exclude_rules.join(",")),
    );
    add(o.director_only, "Director judgements only".into());
    add(o.reviewers_only, "reviewer judgements only".into());
    add(o.redact_vault, "vault redacted".into());
    add(
        o.include_samples,
        "comparison and vault-probe sample runs included".into(),
    );
    if f.is_empty() {
        f.push("none".into());
    }
    f
}
