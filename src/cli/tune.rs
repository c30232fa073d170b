//! `kakeai tune`: the Director learns the team's reviewers. Reads the labels in force (gold,
//! then the majority of k reviewers, then single marks) of a turn queue or of runs, re-judges
//! the labelled turns under candidate rule changes, and reports held-out agreement (folds by
//! run) before → after with the proposals and their evidence. `--write` saves the accepted
//! proposals as a rules overlay with provenance (and a compare variant beside it).
//! Exit 0 with proposals or none, 2 bad input (too few labels, a malformed rules file, an
//! unknown queue), 3 the store cannot be read.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use crate::director::RuleSet;
use crate::store::Store;
use crate::text::analyzer::{self, AnalyzerChoice};
use crate::tune::overlay::{self, Provenance};
use crate::tune::rejudge::build;
use crate::tune::search::{Proposal, Report, Settings, tune};
use crate::tune::source::{self, Selection, SourceError};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TuneFormat {
    Table,
    Json,
}

#[derive(Args, Debug)]
pub struct TuneArgs {
    /// A turn queue: its items and their labels (gold first)
    #[arg(long, conflicts_with = "runs", required_unless_present = "runs")]
    pub queue: Option<String>,
    /// Runs to read labels from: ids and ranges (3,5,9-12) or `all`
    #[arg(long, value_name = "SEL")]
    pub runs: Option<String>,
    /// Held-out folds (by run)
    #[arg(long)]
    pub folds: Option<usize>,
    #[arg(long, value_enum, default_value = "table")]
    pub format: TuneFormat,
    /// Rules to tune from (merged over the defaults and your rules.toml, as `run --rules`)
    #[arg(long, value_name = "PATH")]
    pub rules: Option<PathBuf>,
    /// Write the proposals as a rules overlay here (and PATH's `.variant.toml` for compare)
    #[arg(long, value_name = "PATH")]
    pub write: Option<PathBuf>,
    /// Only these proposals go into --write (their rules, e.g. scatter,tone; default: all)
    #[arg(long, value_delimiter = ',', value_name = "RULES")]
    pub accept: Vec<String>,
    /// The run store (default: kakeai.db in the data dir), or a postgresql:// URL
    #[arg(long, env = "KAKEAI_DB")]
    pub db: Option<PathBuf>,
    #[arg(long, value_enum, default_value = "auto", env = "KAKEAI_ANALYZER")]
    pub analyzer: AnalyzerChoice,
    /// Also tune the 5-aspect judge's few-shot examples: chosen from gold-labelled lines and
    /// measured by asking the model again on held-out lines (two judge calls per line)
    #[arg(long)]
    pub judge: bool,
    /// The model for --judge (default: your config, as `run`)
    #[arg(long, requires = "judge")]
    pub endpoint: Option<String>,
    #[arg(long, requires = "judge")]
    pub model: Option<String>,
    #[arg(long, value_enum, requires = "judge")]
    pub api: Option<crate::llm::ApiKind>,
}

struct Fail(i32, String);

pub fn run(args: TuneArgs) -> i32 {
    match go(&args) {
        Ok(()) => 0,
        Err(Fail(code, msg)) => {
            say!("kakeai tune: {msg}");
            code
        }
    }
}

/// `3,5,9-12` or `all` (empty list).
pub fn parse_runs(sel: &str) -> Result<Vec<i64>, String> {
    if sel.trim() == "all" {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    for part in sel.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let bad = || format!("--runs: `{part}` is not a run id, a range (9-12) or `all`");
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (i64, i64) =
                    (a.parse().map_err(|_| bad())?, b.parse().map_err(|_| bad())?);
                if a > b || b - a > 100_000 {
                    return Err(bad());
                }
                out.extend(a..=b);
            }
            None => out.push(part.parse().map_err(|_| bad())?),
        }
    }
    if out.is_empty() {
        return Err("--runs names no run".into());
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

fn go(args: &TuneArgs) -> Result<(), Fail> {
    let sel = match (&args.queue, &args.runs) {
        (Some(q), _) => Selection::Queue(q.clone()),
        (None, Some(r)) => Selection::Runs(parse_runs(r).map_err(|e| Fail(2, e))?),
        (None, None) => return Err(Fail(2, "name --queue NAME or --runs SEL".into())),
    };
    let rules = RuleSet::load(args.rules.as_deref()).map_err(|e| Fail(2, e.to_string()))?;
    let mut settings = Settings::default();
    if let Some(k) = args.folds {
        if k < 2 {
            return Err(Fail(2, "--folds must be at least 2".into()));
        }
        settings.folds = k;
    }
    let store =
        Store::open_existing(args.db.as_deref(), false).map_err(|(e, code)| Fail(code, e))?;
    let loaded = source::load(&store, &sel).map_err(|e| match e {
        SourceError::Store(e) => Fail(3, e.to_string()),
        e => Fail(2, e.to_string()),
    })?;
    for n in &loaded.notes {
        say!("kakeai tune: note: {n}");
    }
    let an =
        analyzer::open(args.analyzer, &mut |m| say!("{m}")).map_err(|e| Fail(2, e.to_string()))?;
    let (cases, cands) = build(&rules, an.as_ref(), &loaded.turns, &settings.grid)
        .map_err(|e| Fail(2, e.to_string()))?;
    let mut report =
        tune(&cases, &cands, &settings).map_err(|e| Fail(2, format!("{e}; no proposals")))?;
    if args.judge {
        super::tune_judge::examples(args, &rules, &loaded.turns, &settings, &mut report)
            .map_err(|(code, e)| Fail(code, e))?;
    }
    let chosen = accepted(&report, &args.accept)?;
    match args.format {
        TuneFormat::Json => println!("{}", json(&report)),
        TuneFormat::Table => print!("{}", table(&report, &loaded.source)),
    }
    if let Some(path) = &args.write {
        write(path, &report, &chosen, &loaded.source, &rules)?;
    }
    Ok(())
}

fn accepted<'a>(report: &'a Report, accept: &[String]) -> Result<Vec<&'a Proposal>, Fail> {
    for a in accept {
        if !report.proposals.iter().any(|p| &p.rule == a) {
            return Err(Fail(2, format!("--accept {a}: no proposal for that rule")));
        }
    }
    Ok(report
        .proposals
        .iter()
        .filter(|p| accept.is_empty() || accept.contains(&p.rule))
        .collect())
}

/// The JSON contract: labels, folds, agreement before/after, proposals — plus the evidence.
pub fn json(r: &Report) -> String {
    serde_json::to_string_pretty(r).unwrap_or_default()
}

/// The human table: held-out figures first, then each proposal with its evidence.
pub fn table(r: &Report, source: &str) -> String {
    let mut s = format!(
        "tune over {source}: {} labelled turns, {} folds by run\n\
         held-out κ (usable/unusable vs labels): {:.3} → {:.3}  (spread {:.3}; folds {})\n\
         held-out turns flipped right/wrong: {}/{}  (sign test p = {:.2e})\n",
        r.labels,
        r.folds,
        r.agreement_before,
        r.agreement_after,
        r.spread,
        r.fold_after
            .iter()
            .zip(&r.fold_before)
            .map(|(a, b)| format!("{b:.2}→{a:.2}"))
            .collect::<Vec<_>>()
            .join(" "),
        r.flipped_right,
        r.flipped_wrong,
        r.p_value,
    );
    if let Some(e) = &r.judge_examples {
        s.push_str(&super::tune_judge::table(e));
    }
    if r.proposals.is_empty() {
        s.push_str("no proposal holds up on held-out folds: the rules stay as they are\n");
        return s;
    }
    s.push_str("\nproposals (rule  change  before → after  support/against  folds):\n");
    for p in &r.proposals {
        s.push_str(&format!(
            "  {:<18} {:<38} {} → {}  {}/{}  {}/{}\n",
            p.rule,
            p.change,
            p.before,
            p.after,
            p.support.len(),
            p.against.len(),
            p.chosen_in_folds,
            r.folds
        ));
        if !p.against.is_empty() {
            let shown: Vec<&str> = p.against.iter().take(5).map(String::as_str).collect();
            s.push_str(&format!(
                "      flips the wrong way: {}\n",
                shown.join(", ")
            ));
        }
    }
    s.push_str("\nheld-out RETRY precision/recall per rule (before → after):\n");
    for (rule, b) in &r.retry_before {
        if let Some(a) = r.retry_after.get(rule) {
            s.push_str(&format!("  {rule:<18} {} → {}\n", pr(b), pr(a)));
        }
    }
    s
}

fn write(
    path: &std::path::Path,
    report: &Report,
    chosen: &[&Proposal],
    source: &str,
    rules: &RuleSet,
) -> Result<(), Fail> {
    if chosen.is_empty() {
        return Err(Fail(1, "nothing to write: no proposal held up".into()));
    }
    let prov = Provenance {
        source: source.to_string(),
        date: crate::store::time::now_iso(),
        ruleset: rules.version.clone(),
    };
    let text =
        overlay::render(report, chosen, &prov, &rules.data).map_err(|e| Fail(2, e.to_string()))?;
    let variant = overlay::render_variant(report, chosen, &prov, &rules.data)
        .map_err(|e| Fail(2, e.to_string()))?;
    let vpath = path.with_extension("variant.toml");
    std::fs::write(path, text).map_err(|e| Fail(3, format!("{}: {e}", path.display())))?;
    std::fs::write(&vpath, variant).map_err(|e| Fail(3, format!("{}: {e}", vpath.display())))?;
    say!(
        "kakeai tune: wrote {} (use it: --rules {0}) and {}\n  prove it on the retry loop: kakeai compare --run ID --variant {1}",
        path.display(),
        vpath.display()
    );
    Ok(())
}

fn pr(p: &crate::tune::eval::PrecisionRecall) -> String {
    let f = |x: Option<f64>| x.map_or("—".to_string(), |v| format!("{v:.2}"));
    format!(
        "{} RETRY, P {} R {}",
        p.retries,
        f(p.precision),
        f(p.recall)
    )
}
