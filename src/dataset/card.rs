//! The dataset card written beside an export (`README.md` in the output's folder, or
//! `NAME.README.md` when that name is taken by something else): counts per source and sister,
//! what was left out and why, the filters, ruleset versions, models and the date.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::{Format, Options, Tally};

/// Where the card of `out` goes.
pub fn path_for(out: &Path) -> PathBuf {
    let dir = out
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let plain = dir.join("README.md");
    let name = out
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    // A card from an earlier export of the same folder is ours to replace; anything else is not.
    let ours = std::fs::read_to_string(&plain)
        .map(|s| s.starts_with(HEADER))
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
            "the 【世界設定】 part of every prompt is replaced by a notice (--redact-vault); \
             nothing else was checked for vault text"
        } else {
            "prompts are as the model saw them, vault text included (not checked)"
        }
    );
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
    if f.is_empty() {
        f.push("none".into());
    }
    f
}
