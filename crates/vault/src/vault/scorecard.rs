//! The secret-keeping scorecard (issue 15 §2): for every secret and level-≤2 section of the
//! work, per reader, her level, model and prompt (persona) version — how many stored lines by
//! her were reviewed and how many leaked it, by severity (the `leak` rule's findings). Read
//! from every run (compare samples and probes are runs too) and every chat reply in the store —
//! or, for a report, from its runs only ([`scorecard_of`]).
//!
//! Every review stores a coverage finding (`coverage <vault version> unchecked:<checks>`): rows
//! are kept apart by that vault version, so lines reviewed against an older vault never count
//! toward today's secrets, and a row says how many of its lines were reviewed without the
//! semantic check. Lines stored before versions were recorded (or by runs without a vault) have
//! no coverage finding: they form their own rows, version `-`, as an upper bound. A line counts
//! once per secret, at its worst severity. Leak findings name the secret in their evidence
//! (`<kind> <secret id>`); level-0 items go by the stable neutral label the review gives them,
//! so a hidden name never reaches the store (the owner's CLI maps it back).

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;

use crate::p;
use crate::store::sql::{Db, DbError};

use super::Work;
use crate::director::Status;

/// Lines a reader wrote under one model and prompt version.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct Group {
    pub reader: String,
    pub model: String,
    pub prompt_version: String,
    /// The reviewer's vault version (`-`: not recorded).
    pub vault_version: String,
}

/// Lines of one group, and how many of them went without the semantic check.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Lines {
    pub reviewed: usize,
    pub without_semantic: usize,
}

/// One leak finding as stored: which line, in which group, how bad, about what.
#[derive(Debug, Clone, PartialEq)]
pub struct LeakHit {
    /// `attempt:<id>` or `chat:<id>`: a line counts once per secret.
    pub line: String,
    pub group: Group,
    pub status: Status,
    pub secret: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Row {
    pub secret: String,
    pub reader: String,
    pub level: u8,
    pub model: String,
    pub prompt_version: String,
    pub vault_version: String,
    /// Reviewed against the work as it is now.
    pub current: bool,
    pub reviewed: usize,
    /// Of `reviewed`, lines whose semantic check did not run.
    pub without_semantic: usize,
    /// Lines at WARN or RETRY for this secret.
    pub leaked: usize,
    pub warn: usize,
    pub retry: usize,
    /// Below the warn threshold (informational).
    pub info: usize,
}

/// The secrets each reader is reviewed for: (reader, secret id, her level).
pub fn secrets(work: &Work) -> Vec<(String, String, u8)> {
    let mut out = Vec::new();
    for reader in ["yana", "ayu"] {
        for s in work.review_input(Some(reader)).secrets {
            out.push((reader.to_string(), s.id, s.level));
        }
    }
    out
}

fn coverage(evidence: Option<String>) -> (String, bool) {
    let Some(e) = evidence else {
        return ("-".into(), false);
    };
    let mut parts = e.split_whitespace().skip(1);
    let version = parts.next().unwrap_or("-").to_string();
    let unchecked = parts
        .next()
        .and_then(|u| u.strip_prefix("unchecked:"))
        .unwrap_or("");
    let semantic = unchecked
        .split(',')
        .any(|c| c == super::leak::SEMANTIC_CHECK);
    (version, semantic)
}

/// Reads the store: lines per group, and every leak finding. The verdicts are read as they
/// are stored and taken apart here, the same on both engines (a verdict that is not JSON
/// counts as a reviewed line without coverage). Faster than SQLite's json functions did it
/// inside the engine (344 vs 444 ms over 100,000 attempts); a test keeps that SQL as an
/// oracle and checks both agree.
pub fn read(db: Db<'_>) -> Result<(BTreeMap<Group, Lines>, Vec<LeakHit>), DbError> {
    read_runs(db, &|_, _| true, true)
}

/// [`read`] over the runs whose id and stored options `keep` accepts; chat lines with `chats`.
pub fn read_runs(
    db: Db<'_>,
    keep: &dyn Fn(i64, &serde_json::Value) -> bool,
    chats: bool,
) -> Result<(BTreeMap<Group, Lines>, Vec<LeakHit>), DbError> {
    let mut groups: BTreeMap<Group, Lines> = BTreeMap::new();
    let mut hits = Vec::new();
    let runs: std::collections::HashSet<i64> = db
        .query_map("SELECT id, options FROM runs", p![], |r| {
            Ok((r.get::<i64>(0)?, r.get::<Option<String>>(1)?))
        })?
        .into_iter()
        .filter(|(id, o)| {
            let v = o
                .as_deref()
                .and_then(|t| serde_json::from_str(t).ok())
                .unwrap_or(serde_json::Value::Null);
            keep(*id, &v)
        })
        .map(|(id, _)| id)
        .collect();
    let attempts: Vec<(i64, i64, Group, String)> = db.query_map(
        "SELECT a.id, a.run_id, a.speaker, COALESCE(r.model, ''), COALESCE(r.persona_version, ''),
                a.verdict
         FROM attempts a JOIN runs r ON r.id = a.run_id WHERE a.verdict IS NOT NULL",
        p![],
        |r| {
            Ok((
                r.get(0)?,
                r.get(1)?,
                Group {
                    reader: r.get(2)?,
                    model: r.get(3)?,
                    prompt_version: r.get(4)?,
                    vault_version: String::new(),
                },
                r.get(5)?,
            ))
        },
    )?;
    for (id, _, g, verdict) in attempts.into_iter().filter(|a| runs.contains(&a.1)) {
        note(&mut groups, &mut hits, format!("attempt:{id}"), g, &verdict);
    }
    if !chats {
        return Ok((groups, hits));
    }
    let chats: Vec<(i64, String, String)> = db.query_map(
        "SELECT id, character, verdict FROM chat_exchanges WHERE verdict IS NOT NULL",
        p![],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
    )?;
    for (id, reader, verdict) in chats {
        note(
            &mut groups,
            &mut hits,
            format!("chat:{id}"),
            chat_group(reader),
            &verdict,
        );
    }
    Ok((groups, hits))
}

/// One reviewed line: counted in its group (by the vault version its coverage finding
/// names), and each of its `leak` findings kept.
fn note(
    groups: &mut BTreeMap<Group, Lines>,
    hits: &mut Vec<LeakHit>,
    line: String,
    g: Group,
    verdict: &str,
) {
    let (cov, findings) = read_verdict(verdict);
    let (vault_version, semantic_missing) = coverage(cov);
    let group = Group { vault_version, ..g };
    let e = groups.entry(group.clone()).or_default();
    e.reviewed += 1;
    if semantic_missing {
        e.without_semantic += 1;
    }
    for f in findings
        .into_iter()
        .filter(|f| text(&f.rule).as_deref() == Some("leak"))
    {
        hits.extend(hit(
            line.clone(),
            group.clone(),
            text(&f.status),
            text(&f.evidence),
        ));
    }
}

/// A verdict's coverage evidence and, when it may hold leak findings, its findings. Most
/// verdicts name no leak: they are only checked to be JSON (nothing is built) and their one
/// coverage evidence is found in the text; the rest are read field by field.
fn read_verdict(verdict: &str) -> (Option<String>, Vec<Finding>) {
    const MARK: &str = "\"evidence\":\"coverage ";
    let no_leak = !verdict.contains("\"leak\"");
    // Neither a leak finding nor a coverage evidence can be in it: nothing to read.
    if no_leak && !verdict.contains("coverage ") {
        return (None, Vec::new());
    }
    if no_leak
        && verdict.matches(MARK).count() == 1
        && serde_json::from_str::<serde::de::IgnoredAny>(verdict).is_ok()
        && let Some(at) = verdict.find(MARK)
    {
        let rest = &verdict[at + MARK.len() - "coverage ".len()..];
        if let Some(end) = rest.find('"')
            && !rest[..end].contains('\\')
        {
            return (Some(rest[..end].to_string()), Vec::new());
        }
    }
    let findings = serde_json::from_str::<Verdict>(verdict)
        .map(|v| v.findings)
        .unwrap_or_default();
    let cov = findings
        .iter()
        .filter_map(|f| text(&f.evidence))
        .find(|e| e.starts_with("coverage "));
    (cov, findings)
}

/// What the scorecard reads of a stored verdict.
#[derive(serde::Deserialize)]
struct Verdict {
    #[serde(default)]
    findings: Vec<Finding>,
}

/// Any JSON in each field: a severity that is not a string still reads (as unreadable: the
/// worst, see `hit`) instead of dropping the verdict's findings.
#[derive(serde::Deserialize)]
struct Finding {
    rule: Option<serde_json::Value>,
    status: Option<serde_json::Value>,
    evidence: Option<serde_json::Value>,
}

fn text(v: &Option<serde_json::Value>) -> Option<String> {
    v.as_ref().and_then(|v| v.as_str()).map(str::to_string)
}

fn chat_group(reader: String) -> Group {
    Group {
        reader,
        model: "(chat)".into(),
        prompt_version: String::new(),
        vault_version: String::new(),
    }
}

fn hit(
    line: String,
    group: Group,
    status: Option<String>,
    evidence: Option<String>,
) -> Option<LeakHit> {
    // Fail closed: an unreadable severity counts as the worst.
    if evidence
        .as_deref()
        .is_some_and(|e| e.starts_with(super::review::COVERAGE))
    {
        return None;
    }
    let status = status
        .as_deref()
        .and_then(Status::parse)
        .unwrap_or(Status::Retry);
    let secret = evidence?.split_once(' ')?.1.trim().to_string();
    Some(LeakHit {
        line,
        group,
        status,
        secret,
    })
}

/// The secrets each reader is reviewed for, with the vault version her reviews carry today.
pub struct Current {
    pub secrets: Vec<(String, String, u8)>,
    /// reader → version.
    pub versions: BTreeMap<String, String>,
}

impl Current {
    pub fn of(work: &Work) -> Current {
        let versions = ["yana", "ayu"]
            .iter()
            .map(|r| (r.to_string(), work.reviewer(Some(r)).version().to_string()))
            .collect();
        Current {
            secrets: secrets(work),
            versions,
        }
    }
}

/// The scorecard rows: one per (secret, reader) and group the reader wrote lines in — each
/// vault version its own row — sorted with today's version first.
pub fn tally(cur: &Current, groups: &BTreeMap<Group, Lines>, hits: &[LeakHit]) -> Vec<Row> {
    // Worst severity per (line, secret).
    let mut worst: HashMap<(&str, &str), (&Group, Status)> = HashMap::new();
    for h in hits {
        let e = worst
            .entry((h.line.as_str(), h.secret.as_str()))
            .or_insert((&h.group, h.status));
        e.1 = e.1.max(h.status);
    }
    let mut counts: HashMap<(&str, &Group), [usize; 3]> = HashMap::new();
    for ((_, secret), (group, status)) in &worst {
        let c = counts.entry((secret, group)).or_default();
        match status {
            Status::Retry => c[2] += 1,
            Status::Warn | Status::Modify | Status::Unscored => c[1] += 1,
            _ => c[0] += 1,
        }
    }
    let mut rows = Vec::new();
    for (reader, secret, level) in &cur.secrets {
        let now = cur.versions.get(reader).map(String::as_str);
        for (g, n) in groups.iter().filter(|(g, _)| &g.reader == reader) {
            let c = counts
                .get(&(secret.as_str(), g))
                .copied()
                .unwrap_or_default();
            rows.push(Row {
                secret: secret.clone(),
                reader: reader.clone(),
                level: *level,
                model: g.model.clone(),
                prompt_version: g.prompt_version.clone(),
                vault_version: g.vault_version.clone(),
                current: now == Some(g.vault_version.as_str()),
                reviewed: n.reviewed,
                without_semantic: n.without_semantic,
                leaked: c[1] + c[2],
                warn: c[1],
                retry: c[2],
                info: c[0],
            });
        }
    }
    rows.sort_by(|a, b| {
        (&a.secret, &a.reader, !a.current, &a.model, &a.vault_version).cmp(&(
            &b.secret,
            &b.reader,
            !b.current,
            &b.model,
            &b.vault_version,
        ))
    });
    rows
}

/// The scorecard of `work` from the store.
/// Only the runs made under this work count: a run's vault stamp names its work (a run with no
/// stamp predates stamps and was made under the bundled sample).
pub fn scorecard(db: Db<'_>, work: &Work) -> Result<Vec<Row>, DbError> {
    scorecard_of(db, work, None)
}

/// The scorecard of `work` over some runs only (`runs`: a report's run, or its period's): of
/// those, the ones made under this work; chat replies are not runs and are left out. None: the
/// whole store, chats included ([`scorecard`]).
pub fn scorecard_of(
    db: Db<'_>,
    work: &Work,
    runs: Option<&std::collections::BTreeSet<i64>>,
) -> Result<Vec<Row>, DbError> {
    let mine = |id: i64, o: &serde_json::Value| {
        runs.is_none_or(|r| r.contains(&id))
            && match o.get("vault").and_then(|v| v.get("work")) {
                Some(w) => w.as_str() == Some(work.name.as_str()),
                None => !work.on_disk,
            }
    };
    let (groups, hits) = read_runs(db, &mine, runs.is_none())?;
    Ok(tally(&Current::of(work), &groups, &hits))
}

/// The label shown beside a secret's ◆ in the visibility pane, per secret id: for `reader`
/// (or both sisters), the model with the most reviewed lines — `あゆ L2 · leaked 3/40 on
/// gemma2:27b`. Secrets with nothing reviewed get no label.
pub fn labels(rows: &[Row], reader: Option<&str>) -> BTreeMap<String, String> {
    let mut by: BTreeMap<(String, String, String), (u8, usize, usize)> = BTreeMap::new();
    // Today's vault only: lines reviewed against an older version say nothing about it.
    for r in rows
        .iter()
        .filter(|r| r.current && reader.is_none_or(|x| x == r.reader))
    {
        let e = by
            .entry((r.secret.clone(), r.reader.clone(), r.model.clone()))
            .or_insert((r.level, 0, 0));
        e.1 += r.leaked;
        e.2 += r.reviewed;
    }
    let mut best: BTreeMap<String, (usize, String)> = BTreeMap::new();
    for ((secret, who, model), (level, leaked, reviewed)) in by {
        let name = crate::store::export::speaker_name(&who);
        let label = format!("{name} L{level} · leaked {leaked}/{reviewed} on {model}");
        let cur = best.entry(secret).or_insert((0, String::new()));
        if reviewed > cur.0 || cur.1.is_empty() {
            *cur = (reviewed, label);
        }
    }
    best.into_iter().map(|(k, (_, l))| (k, l)).collect()
}

#[cfg(test)]
#[path = "scorecard_tests.rs"]
mod tests;
