//! Real turns into tune's cases: each turn is analysed once and judged by the Director under
//! the current rules; every threshold candidate of the grid re-runs only its own rule
//! (`director::rejudge_rule`) on that verdict, so a candidate is exactly what the Director
//! would say with that one value changed in the rules file.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::search::Grid;
use super::{Candidate, Case, Label, severity_candidates};
use crate::config::ConfigError;
use crate::director::ruleset::RuleData;
use crate::director::{self, ContextTurn, RuleId, RuleSet, Status, ToneMode, Verdict};
use crate::text::{Analysis, Analyzer};

/// One turn of a run, in run order; `label` is None for turns nobody labelled (they are
/// still context for the next turns).
#[derive(Debug, Clone, Default)]
pub struct Turn {
    pub run: String,
    pub turn: u32,
    /// Character id, name or alias.
    pub speaker: String,
    pub text: String,
    pub label: Option<Label>,
    /// The 5-aspect judge's mean on the line, when it was scored (its status follows the
    /// rules' `[judge]` cut-offs, which tune may propose).
    pub judge_mean: Option<f64>,
    /// The run's topic (the judge is asked about the line in it).
    pub topic: String,
    /// The line may never be shown as an example: the leak review or another never-leak rule
    /// spoke on it, or it was withheld (a fallback line stands in its place).
    pub guarded: bool,
}

/// How many earlier turns of the same run the context rules see.
const CONTEXT_TURNS: usize = 4;

struct Judged {
    case: Case,
    judge_mean: Option<f64>,
    speaker: String,
    analysis: Arc<Analysis>,
    context: Vec<ContextTurn>,
    verdict: Verdict,
}

/// Judges every labelled turn and builds the severity and threshold candidates.
pub fn build(
    rules: &RuleSet,
    analyzer: &dyn Analyzer,
    turns: &[Turn],
    grid: &Grid,
) -> Result<(Vec<Case>, Vec<Candidate>), ConfigError> {
    let judged = judge_all(rules, analyzer, turns);
    let cases: Vec<Case> = judged.iter().map(|j| j.case.clone()).collect();
    let mut cands = severity_candidates(&cases);
    cands.extend(word_candidates(rules, analyzer, &judged)?);
    cands.extend(judge_candidates(&rules.data, &judged, grid));
    for (rule, key, before, after, data) in threshold_variants(&rules.data, grid) {
        let variant = RuleSet::from_data(data)?;
        let statuses = judged
            .iter()
            .map(|j| rejudged(&variant, analyzer, j, rule))
            .collect();
        cands.push(Candidate {
            rule,
            key,
            before,
            after,
            statuses,
        });
    }
    Ok((cases, cands))
}

fn judge_all(rules: &RuleSet, analyzer: &dyn Analyzer, turns: &[Turn]) -> Vec<Judged> {
    let mut out = Vec::new();
    let mut history: Vec<(String, ContextTurn)> = Vec::new();
    for t in turns {
        let Some(speaker) = rules.character(&t.speaker).cloned() else {
            continue;
        };
        let analysis = Arc::new(Analysis::new(&t.text));
        let context: Vec<ContextTurn> = history
            .iter()
            .rev()
            .take_while(|(run, _)| *run == t.run)
            .take(CONTEXT_TURNS)
            .map(|(_, c)| c.clone())
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        if let Some(label) = &t.label {
            let verdict = director::judge(rules, analyzer, &speaker, &analysis, &context);
            let mut base = by_rule(&verdict);
            if let Some(m) = t.judge_mean {
                base.insert(
                    RuleId::Judge,
                    director::judge::status_of_mean(m, &rules.data.judge),
                );
            }
            out.push(Judged {
                judge_mean: t.judge_mean,
                case: Case {
                    run: t.run.clone(),
                    turn: t.turn,
                    label: label.clone(),
                    base,
                },
                speaker: speaker.id.clone(),
                analysis: analysis.clone(),
                context,
                verdict,
            });
        }
        history.push((
            t.run.clone(),
            ContextTurn {
                speaker: speaker.id.clone(),
                analysis,
            },
        ));
    }
    out
}

/// Endings each sister's reviewers keep where the tone rule fired, each re-judged by the tone
/// rule with the ending added to her list (`tune::words`).
fn word_candidates(
    rules: &RuleSet,
    analyzer: &dyn Analyzer,
    judged: &[Judged],
) -> Result<Vec<Candidate>, ConfigError> {
    use super::words;
    let lines: Vec<words::Line> = judged
        .iter()
        .map(|j| words::Line {
            speaker: &j.speaker,
            analysis: &j.analysis,
            usable: j.case.label.usable,
            tone: j
                .case
                .base
                .get(&RuleId::Tone)
                .copied()
                .unwrap_or(Status::Pass),
        })
        .collect();
    let mut out = Vec::new();
    for (id, ending) in words::candidates(&rules.data, &lines) {
        let Some(data) = words::with_ending(&rules.data, &id, &ending) else {
            continue;
        };
        let variant = RuleSet::from_data(data)?;
        out.push(Candidate {
            rule: words::RULE,
            key: words::key(&id),
            before: "as written".into(),
            after: format!("+{ending}"),
            statuses: judged
                .iter()
                .map(|j| rejudged(&variant, analyzer, j, words::RULE))
                .collect(),
        });
    }
    Ok(out)
}

/// The judge's cut-offs: every (retry_below, pass_from) pair of the grid that differs from the
/// rules' own, over the lines the judge scored.
fn judge_candidates(data: &RuleData, judged: &[Judged], grid: &Grid) -> Vec<Candidate> {
    if judged.iter().all(|j| j.judge_mean.is_none()) {
        return Vec::new();
    }
    let now = (data.judge.retry_below, data.judge.pass_from);
    let mut out = Vec::new();
    for &r in &grid.judge_retry_below {
        for &p in grid.judge_pass_from.iter().filter(|&&p| p >= r) {
            if (r - now.0).abs() < 1e-9 && (p - now.1).abs() < 1e-9 {
                continue;
            }
            let rule = crate::director::ruleset::JudgeRule {
                retry_below: r,
                pass_from: p,
                examples: Vec::new(),
            };
            out.push(Candidate {
                rule: RuleId::Judge,
                key: "judge.retry_below/pass_from".into(),
                before: format!("{}/{}", now.0, now.1),
                after: format!("{r}/{p}"),
                statuses: judged
                    .iter()
                    .map(|j| {
                        j.judge_mean
                            .map_or(Status::Pass, |m| director::judge::status_of_mean(m, &rule))
                    })
                    .collect(),
            });
        }
    }
    out
}

/// The worst status of each rule that fired.
fn by_rule(v: &Verdict) -> BTreeMap<RuleId, Status> {
    let mut m: BTreeMap<RuleId, Status> = BTreeMap::new();
    for f in &v.findings {
        let e = m.entry(f.rule).or_insert(f.status);
        *e = (*e).max(f.status);
    }
    m
}

fn rejudged(variant: &RuleSet, analyzer: &dyn Analyzer, j: &Judged, rule: RuleId) -> Status {
    let Some(speaker) = variant.data.characters.get(&j.speaker) else {
        return Status::Retry;
    };
    let mut v = j.verdict.clone();
    director::rejudge_rule(
        variant,
        analyzer,
        speaker,
        &j.analysis,
        &j.context,
        rule,
        &mut v,
    );
    by_rule(&v).get(&rule).copied().unwrap_or(Status::Pass)
}

type Variant = (RuleId, String, String, String, RuleData);

/// Every grid value that differs from the current one, as a full copy of the rules.
fn threshold_variants(data: &RuleData, grid: &Grid) -> Vec<Variant> {
    let mut out = Vec::new();
    for &n in grid.lines_retry.iter().filter(|&&n| n != data.lines.retry) {
        let mut d = data.clone();
        d.lines.retry = n;
        out.push((
            RuleId::Lines,
            "lines.retry".into(),
            data.lines.retry.to_string(),
            n.to_string(),
            d,
        ));
    }
    if data.tone_mode == ToneMode::Markers {
        let mut d = data.clone();
        d.tone_mode = ToneMode::Violations;
        out.push((
            RuleId::Tone,
            "tone_mode".into(),
            "markers".into(),
            "violations".into(),
            d,
        ));
    }
    let now = (data.scatter.retry_sentences, data.scatter.retry_topics);
    for &s in &grid.scatter_retry_sentences {
        for &t in grid.scatter_retry_topics.iter().filter(|&&t| (s, t) != now) {
            let mut d = data.clone();
            d.scatter.retry_sentences = s;
            d.scatter.retry_topics = t;
            out.push((
                RuleId::Scatter,
                "scatter.retry_sentences/retry_topics".into(),
                format!("{}/{}", now.0, now.1),
                format!("{s}/{t}"),
                d,
            ));
        }
    }
    out
}
