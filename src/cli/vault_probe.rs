//! `kakeai vault scorecard` and `kakeai vault probe` (issue 15 §2). A probe is a set of stored
//! runs (one per question, `options.probe` names the secret): the partner's question is turn 1,
//! the probed sister answers in turn 2 through the run driver — vault context in her prompt,
//! every attempt judged with the static rules including `leak` — so the scorecard reads probe
//! lines like any other. One attempt per question (the model's first answer is what a probe
//! measures) and no LLM judge. Exit 0, 2 bad input, 3 endpoint failed.

use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use serde_json::json;

use super::vault::VaultArgs;
use crate::director::{RuleSet, Status};
use crate::duo::backend::Backend;
use crate::duo::driver::{Driver, Notice, run_record};
use crate::duo::records::{AttemptRecord, GenStats, TurnFlags};
use crate::duo::{DuoConfig, Effect, Exhaustion, RunEnd, RunSpec, Session};
use crate::llm::{Client, LlmConfig};
use crate::store::{Store, StoreHandle};
use crate::text::analyzer::{self, AnalyzerChoice};
use crate::vault::{probe as p, scorecard as sc};

#[derive(Args, Debug)]
pub struct ScorecardArgs {
    #[command(flatten)]
    pub vault: VaultArgs,
    #[arg(long, value_enum, default_value = "table")]
    pub format: super::compare::OutFormat,
    #[arg(long, env = "KAKEAI_DB")]
    pub db: Option<std::path::PathBuf>,
}

#[derive(Args, Debug)]
pub struct ProbeArgs {
    #[command(flatten)]
    pub vault: VaultArgs,
    /// The secret (its id) or section (its key, e.g. world_settings/家/屋根裏)
    #[arg(long)]
    pub secret: String,
    #[arg(long, value_name = "yana|ayu")]
    pub reader: String,
    /// Questions asked (one stored run each)
    #[arg(long, default_value_t = 5)]
    pub runs: usize,
    #[arg(long)]
    pub endpoint: Option<String>,
    #[arg(long)]
    pub model: Option<String>,
    #[arg(long, env = "KAKEAI_DB")]
    pub db: Option<std::path::PathBuf>,
    #[arg(long, value_enum, default_value = "auto", env = "KAKEAI_ANALYZER")]
    pub analyzer: AnalyzerChoice,
    #[command(flatten)]
    pub progress: super::progress::ProgressArgs,
}

/// What a probe conversation is about, as far as the sisters are told.
const PROBE_TOPIC: &str = "いつもの雑談";

fn fail(code: i32, msg: impl std::fmt::Display) -> i32 {
    let m = msg.to_string();
    eprintln!("kakeai vault: {}", crate::text::sanitize::for_terminal(&m));
    code
}

pub fn scorecard(a: ScorecardArgs) -> i32 {
    let work = match crate::vault::open(a.vault.vault.as_deref(), a.vault.work.as_deref()) {
        Ok(w) => w,
        Err(e) => return fail(2, e),
    };
    let store = match Store::open_or_default(a.db.as_deref()) {
        Ok(s) => s,
        Err(e) => return fail(2, e),
    };
    let rows = match sc::scorecard(store.db(), &work) {
        Ok(r) => r,
        Err(e) => return fail(2, e),
    };
    let mut out = std::io::stdout().lock();
    match write_rows(
        &mut out,
        &rows,
        &work,
        a.format == super::compare::OutFormat::Json,
    ) {
        Ok(()) => 0,
        // `vault scorecard | head`: the reader left; nothing more to say.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => 0,
        Err(e) => fail(2, format!("cannot write the scorecard: {e}")),
    }
}

/// The scorecard as a table padded by display width (a level-0 label is followed, for the
/// owner only, by the item it stands for), or as JSON with `owner_key`.
pub(crate) fn write_rows(
    out: &mut dyn std::io::Write,
    rows: &[sc::Row],
    work: &crate::vault::Work,
    as_json: bool,
) -> std::io::Result<()> {
    use crate::text::width::{pad, truncate};
    let owners: std::collections::BTreeMap<&str, String> = rows
        .iter()
        .filter_map(|r| Some((r.secret.as_str(), work.hidden_owner(&r.secret)?)))
        .collect();
    if as_json {
        let rows: Vec<serde_json::Value> = rows
            .iter()
            .map(|r| {
                let mut v = serde_json::to_value(r).unwrap_or_default();
                if let Some(k) = owners.get(r.secret.as_str()) {
                    v["owner_key"] = json!(k);
                }
                v
            })
            .collect();
        let text = serde_json::to_string_pretty(&json!({ "rows": rows })).unwrap_or_default();
        return writeln!(out, "{text}");
    }
    let cell = |s: &str, w: usize| pad(truncate(&crate::text::sanitize::for_terminal(s), w), w);
    writeln!(
        out,
        "{}  {}  level  {}  {}  {}  reviewed  no-sem  leaked  warn  retry",
        pad("secret", 24),
        pad("reader", 6),
        pad("model", 18),
        pad("prompt", 6),
        pad("vault", 9),
    )?;
    for r in rows {
        let version = if r.current {
            format!("{}*", r.vault_version)
        } else {
            r.vault_version.clone()
        };
        writeln!(
            out,
            "{}  {}  L{:<4}  {}  {}  {}  {:>8}  {:>6}  {:>6}  {:>4}  {:>5}",
            cell(&r.secret, 24),
            cell(&r.reader, 6),
            r.level,
            cell(&r.model, 18),
            cell(&r.prompt_version, 6),
            cell(&version, 9),
            r.reviewed,
            r.without_semantic,
            r.leaked,
            r.warn,
            r.retry
        )?;
    }
    if !owners.is_empty() {
        writeln!(
            out,
            "\nlevel-0 labels (for you only; the model never sees these names):"
        )?;
        for (label, key) in &owners {
            writeln!(
                out,
                "  {label} = {}",
                crate::text::sanitize::for_terminal(key)
            )?;
        }
    }
    writeln!(
        out,
        "\nvault: the version each line was reviewed against (* = the vault as it is now; - = not recorded). \
         no-sem: lines reviewed without the semantic check."
    )
}

pub fn probe(a: ProbeArgs) -> i32 {
    if !["yana", "ayu"].contains(&a.reader.as_str()) {
        return fail(2, "--reader must be yana or ayu");
    }
    if a.runs == 0 {
        return fail(2, "--runs must be at least 1");
    }
    let work = match crate::vault::open(a.vault.vault.as_deref(), a.vault.work.as_deref()) {
        Ok(w) => w,
        Err(e) => return fail(2, e),
    };
    let target = match p::target(&work, &a.secret, &a.reader) {
        Ok(t) => t,
        Err(e) => return fail(2, e),
    };
    let (rules, mut duo, llm) = match (RuleSet::load(None), DuoConfig::load(), LlmConfig::load()) {
        (Ok(r), Ok(d), Ok(l)) => (r, d, l),
        (Err(e), _, _) | (_, Err(e), _) | (_, _, Err(e)) => return fail(2, e),
    };
    let asker = p::asker(&a.reader);
    // The asker speaks turn 1, the probed sister answers in turn 2.
    duo.first_speaker = asker.to_string();
    let llm = llm.with_flags(a.endpoint.clone(), a.model.clone(), None);
    let analyzer = match analyzer::open(a.analyzer, &mut |m| eprintln!("{m}")) {
        Ok(x) => x,
        Err(e) => return fail(2, e),
    };
    let store = match Store::open_or_default(a.db.as_deref()) {
        Ok(s) => StoreHandle::spawn(s),
        Err(e) => return fail(2, e),
    };
    let vault = crate::vault::SharedVault::new(work.clone());
    crate::vault::semantic::configure(&vault, &llm, "kakeai vault probe");
    let rt = match crate::duo::driver::runtime() {
        Ok(rt) => rt,
        Err(e) => return fail(2, e),
    };
    rt.block_on(async {
        let client = match Client::new(llm) {
            Ok(c) => c,
            Err(e) => return fail(2, e),
        };
        crate::vault::semantic::judge_with(&vault, &client);
        let info = match client.ensure_model().await {
            Ok(i) => i,
            Err(e) => return fail(3, e),
        };
        let cfg = client.config().clone();
        let mut lines = Vec::new();
        let mut leaked = 0;
        let shown = super::progress::Progress::start(
            "probe",
            Some(a.runs as u64),
            super::progress::Unit::Items("runs"),
            a.progress,
        );
        for n in 0..a.runs {
            let q = p::question(&target, n);
            let spec = RunSpec {
                // The topic goes into the prompt: never the secret's id (it is in the options).
                topic: PROBE_TOPIC.to_string(),
                max_turns: 2,
                max_attempts: 1,
                exhaustion: Exhaustion::Best,
                judge: false,
            };
            let prior = vec![(
                asked(&rules, analyzer.as_ref(), asker, &q),
                TurnFlags::default(),
            )];
            let session = Session::rebuilt(spec.clone(), duo.clone(), rules.clone(), prior);
            let new = run_record(
                &spec,
                &session,
                (
                    cfg.endpoint.clone(),
                    cfg.model.clone(),
                    info.api.to_string(),
                ),
                Some(&cfg),
                json!({"probe": target.id, "reader": a.reader, "question": q}),
            );
            let run_id = match store.call(move |s| s.create_run(&new)).await {
                Ok(id) => id,
                Err(e) => return fail(2, e),
            };
            let driver = Driver {
                backend: Backend::Live(client.clone()),
                store: store.clone(),
                analyzer: analyzer.clone(),
                run_id,
                save_every: Duration::from_millis(500),
                vault: Some(Arc::clone(&vault)),
            };
            let mut done: Vec<AttemptRecord> = Vec::new();
            let mut error = None;
            let mut sink = |n: Notice<'_>| match n {
                Notice::Effect(Effect::AttemptDone(r)) => done.push((**r).clone()),
                Notice::Effect(Effect::AttemptFailed { error: e, .. }) => error = Some(e.clone()),
                Notice::StoreError(e) => error = Some(e),
                _ => {}
            };
            let end = driver.drive(session, None, &mut sink).await;
            if end == RunEnd::Failed {
                return fail(3, error.unwrap_or_else(|| "the endpoint failed".into()));
            }
            shown.inc(1);
            for r in done {
                let worst = r
                    .verdict
                    .findings
                    .iter()
                    .filter(|f| {
                        f.rule == crate::director::RuleId::Leak
                            && f.evidence
                                .as_deref()
                                .and_then(|e| e.split_once(' '))
                                .is_some_and(|(_, id)| id.trim() == target.review_id)
                    })
                    .map(|f| f.status)
                    .max();
                let leak = worst.filter(|s| *s >= Status::Warn);
                leaked += usize::from(leak.is_some());
                let (others, why) = why_of(&r.verdict, &target.review_id, leak.is_some());
                shown.line(&format!(
                    "run {run_id}: {} {}",
                    r.verdict.status,
                    if leak.is_some() { "leaked" } else { "kept" }
                ));
                lines.push(json!({
                    "run_id": run_id, "question": q, "text": r.text,
                    "status": r.verdict.status, "leak": leak,
                    "other_leaks": others, "why": why,
                }));
            }
        }
        shown.finish();
        let rows = store
            .call(move |s| sc::scorecard(s.db(), &work).map_err(crate::store::StoreError::from))
            .await;
        let rows: Vec<sc::Row> = match rows {
            Ok(r) => r
                .into_iter()
                .filter(|r| r.secret == target.review_id && r.reader == a.reader)
                .collect(),
            Err(e) => return fail(2, e),
        };
        let out = json!({
            "secret": target.id, "reader": a.reader, "level": target.level,
            "model": cfg.model, "runs": a.runs, "leaked": leaked, "lines": lines,
            "scorecard": rows,
        });
        println!("{}", serde_json::to_string_pretty(&out).unwrap_or_default());
        0
    })
}

/// The asker's question as a committed turn 1 (judged by the static rules, for the record).
fn asked(
    rules: &RuleSet,
    analyzer: &dyn crate::text::Analyzer,
    asker: &str,
    q: &str,
) -> AttemptRecord {
    let analysis = Arc::new(crate::text::Analysis::new(q));
    let input = crate::duo::judging::StaticInput {
        rules,
        analyzer,
        vault: None,
        speaker: asker,
        text: q,
        analysis: &analysis,
        context: &[],
        scaffold: &[],
        length_cut: None,
    };
    let (verdict, keywords) = crate::duo::judging::static_verdict(&input).unwrap_or_else(|| {
        let v = crate::director::judge(
            rules,
            analyzer,
            rules.character("yana").expect("the ruleset defines やな"),
            &analysis,
            &[],
        );
        (v, Vec::new())
    });
    // The question is the asker's line whatever the rules think of it.
    let mut verdict = verdict;
    verdict.status = Status::Pass;
    verdict.findings.clear();
    AttemptRecord {
        turn: 1,
        speaker: asker.to_string(),
        attempt: 1,
        text: q.to_string(),
        verdict,
        judge: None,
        guidance: Vec::new(),
        prompt_hash: String::new(),
        stats: GenStats::default(),
        keywords,
        analysis: Some(analysis),
    }
}

/// What else a probed line's verdict says: the other secrets it leaked (their labels, at WARN
/// or worse) and, when it kept the target, why its status is what it is — so a `"leak": null`
/// on a rejected line never stands without a reason.
fn why_of(v: &crate::director::Verdict, target: &str, leaked: bool) -> (Vec<String>, String) {
    use crate::director::RuleId;
    let mut others: Vec<String> = v
        .findings
        .iter()
        .filter(|f| f.rule == RuleId::Leak && f.status >= Status::Warn)
        .filter(|f| !crate::vault::review::is_coverage(f))
        .filter_map(|f| {
            f.evidence
                .as_deref()?
                .split_once(' ')
                .map(|(_, id)| id.trim().to_string())
        })
        .filter(|id| id != target)
        .collect();
    others.sort();
    others.dedup();
    let rules: Vec<&str> = v
        .findings
        .iter()
        .filter(|f| f.status >= Status::Warn && !crate::vault::review::is_coverage(f))
        .map(|f| f.rule.as_str())
        .collect();
    let why = if leaked {
        "this secret leaked".to_string()
    } else if !others.is_empty() {
        format!("kept this secret; leaked another: {}", others.join(", "))
    } else if rules.is_empty() {
        "kept this secret".to_string()
    } else {
        format!("kept this secret; {} by {}", v.status, rules.join(", "))
    };
    (others, why)
}

#[cfg(test)]
mod why_tests {
    use super::why_of;
    use crate::director::{Finding, RuleId, Status, ToneScore, Verdict};

    fn verdict(findings: Vec<Finding>) -> Verdict {
        Verdict {
            status: Verdict::status_of(&findings),
            findings,
            tone: ToneScore::default(),
            lines: 1,
            sentences: 1,
            topics: 0,
            ruleset: "r".into(),
            analyzer: crate::text::AnalyzerKind::Fallback,
        }
    }

    fn leak(status: Status, id: &str) -> Finding {
        Finding::new(RuleId::Leak, status, "m".into(), "s".into())
            .with_evidence(format!("forbidden_keyword {id}"))
    }

    /// A kept secret always says why the line is what it is: another secret leaked, another
    /// rule, or nothing at all.
    #[test]
    fn a_kept_secret_says_why() {
        let v = verdict(vec![
            leak(Status::Retry, "非公開の設定#aaaaaa"),
            leak(Status::Info, "SEC-B"),
        ]);
        let (others, why) = why_of(&v, "SEC-A", false);
        assert_eq!(others, vec!["非公開の設定#aaaaaa".to_string()]);
        assert!(why.contains("leaked another: 非公開の設定#aaaaaa"), "{why}");
        let tone = Finding::new(RuleId::Tone, Status::Retry, "m".into(), "s".into());
        let (others, why) = why_of(&verdict(vec![tone]), "SEC-A", false);
        assert!(
            others.is_empty() && why == "kept this secret; RETRY by tone",
            "{why}"
        );
        let (_, why) = why_of(&verdict(vec![]), "SEC-A", false);
        assert_eq!(why, "kept this secret");
        let (others, why) = why_of(&verdict(vec![leak(Status::Warn, "SEC-A")]), "SEC-A", true);
        assert!(others.is_empty() && why == "this secret leaked", "{why}");
    }
}
