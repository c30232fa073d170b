//! Accepted proposals as a rules overlay: the TOML keys a rules file (or a compare variant's
//! `[rules]` table) takes, headed by where they came from (queue or runs, date, held-out
//! figures). Loading the overlay over the rules it was tuned on gives the Director the
//! proposals' verdicts exactly (tested in `tests.rs`).

use super::search::{Proposal, Report};
use crate::director::ruleset::RuleData;

/// Where the labels came from and when, for the overlay's header.
#[derive(Debug, Clone)]
pub struct Provenance {
    /// `queue main` or `runs 3,5,9`.
    pub source: String,
    /// RFC 3339, UTC.
    pub date: String,
    /// The ruleset version the proposals were measured against.
    pub ruleset: String,
}

/// Why a proposal cannot be written as a rules key.
#[derive(Debug, thiserror::Error, PartialEq)]
#[error("proposal {change} = {after} is not a rules-file key kakeai knows how to write")]
pub struct UnknownChange {
    pub change: String,
    pub after: String,
}

/// The overlay's TOML over `base` (the rules the proposals were measured against; a list
/// such as a sister's endings is written whole, as lists replace when rules files merge): a
/// header of comments, then one table per changed part.
pub fn render(
    report: &Report,
    chosen: &[&Proposal],
    prov: &Provenance,
    base: &RuleData,
) -> Result<String, UnknownChange> {
    let mut root = toml::Table::new();
    for p in chosen {
        set(&mut root, p, base)?;
    }
    let mut out = header(report, chosen, prov);
    out.push_str(&toml::to_string(&root).unwrap_or_default());
    Ok(out)
}

/// The same keys under `[rules]`, as `kakeai compare --variant` reads them.
pub fn render_variant(
    report: &Report,
    chosen: &[&Proposal],
    prov: &Provenance,
    base: &RuleData,
) -> Result<String, UnknownChange> {
    let mut rules = toml::Table::new();
    for p in chosen {
        set(&mut rules, p, base)?;
    }
    let mut root = toml::Table::new();
    root.insert("rules".into(), toml::Value::Table(rules));
    let mut out = header(report, chosen, prov);
    out.push_str(&toml::to_string(&root).unwrap_or_default());
    Ok(out)
}

fn header(report: &Report, chosen: &[&Proposal], prov: &Provenance) -> String {
    let mut h = format!(
        "# kakeai tune — accepted proposals ({}, {})\n\
         # measured against ruleset {}: {} labels, {} folds by run\n\
         # held-out κ {:.3} → {:.3} (spread {:.3}); held-out flips right/wrong {}/{}, p = {:.2e}\n",
        prov.source,
        prov.date,
        prov.ruleset,
        report.labels,
        report.folds,
        report.agreement_before,
        report.agreement_after,
        report.spread,
        report.flipped_right,
        report.flipped_wrong,
        report.p_value,
    );
    for p in chosen {
        h.push_str(&format!(
            "#   {} {}: {} → {} (supports {}, against {}, chosen in {} of {} folds)\n",
            p.rule,
            p.change,
            p.before,
            p.after,
            p.support.len(),
            p.against.len(),
            p.chosen_in_folds,
            report.folds
        ));
    }
    h.push('\n');
    h
}

fn table<'a>(root: &'a mut toml::Table, name: &str) -> &'a mut toml::Table {
    let v = root
        .entry(name.to_string())
        .or_insert_with(|| toml::Value::Table(toml::Table::new()));
    if !v.is_table() {
        *v = toml::Value::Table(toml::Table::new());
    }
    v.as_table_mut().expect("a table was just put here")
}

fn int(s: &str) -> Option<toml::Value> {
    s.parse::<i64>().ok().map(toml::Value::Integer)
}

/// One proposal into the table: the keys `rejudge` and `severity_candidates` name.
fn set(root: &mut toml::Table, p: &Proposal, base: &RuleData) -> Result<(), UnknownChange> {
    let unknown = || UnknownChange {
        change: p.change.clone(),
        after: p.after.clone(),
    };
    match p.change.as_str() {
        "lines.retry" => {
            let v = int(&p.after).ok_or_else(unknown)?;
            table(root, "lines").insert("retry".into(), v);
        }
        "judge.retry_below/pass_from" => {
            let (r, p) = p.after.split_once('/').ok_or_else(unknown)?;
            let num = |x: &str| x.parse::<f64>().ok().map(toml::Value::Float);
            let (r, p) = (num(r).ok_or_else(unknown)?, num(p).ok_or_else(unknown)?);
            let j = table(root, "judge");
            j.insert("retry_below".into(), r);
            j.insert("pass_from".into(), p);
        }
        "judge.examples" => {
            let list = toml::Value::try_from(&p.examples).map_err(|_| unknown())?;
            table(root, "judge").insert("examples".into(), list);
        }
        "tone_mode" => {
            root.insert("tone_mode".into(), toml::Value::String(p.after.clone()));
        }
        "scatter.retry_sentences/retry_topics" => {
            let (s, t) = p.after.split_once('/').ok_or_else(unknown)?;
            let (s, t) = (int(s).ok_or_else(unknown)?, int(t).ok_or_else(unknown)?);
            let sc = table(root, "scatter");
            sc.insert("retry_sentences".into(), s);
            sc.insert("retry_topics".into(), t);
        }
        c if c.starts_with("severity.") && ["off", "warn", "retry"].contains(&p.after.as_str()) => {
            table(root, "severity").insert(
                c["severity.".len()..].to_string(),
                toml::Value::String(p.after.clone()),
            );
        }
        c if c.starts_with("characters.") && c.ends_with(".tone.endings") => {
            let id = &c["characters.".len()..c.len() - ".tone.endings".len()];
            let ending = p.after.strip_prefix('+').ok_or_else(unknown)?;
            let mut list = base
                .characters
                .get(id)
                .ok_or_else(unknown)?
                .tone
                .endings
                .clone();
            // Earlier accepted endings of the same sister are already in `root`.
            if let Some(toml::Value::Array(now)) = root
                .get("characters")
                .and_then(|v| v.get(id))
                .and_then(|v| v.get("tone"))
                .and_then(|v| v.get("endings"))
            {
                list = now
                    .iter()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect();
            }
            if !list.iter().any(|e| e == ending) {
                list.push(ending.to_string());
            }
            let chars = table(root, "characters");
            let sister = table(chars, id);
            let tone = table(sister, "tone");
            tone.insert(
                "endings".into(),
                toml::Value::Array(list.into_iter().map(toml::Value::String).collect()),
            );
        }
        _ => return Err(unknown()),
    }
    Ok(())
}
