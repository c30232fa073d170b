//! Rule tuning: the editable thresholds, re-judging every loaded turn from cached analyses when
//! one changes, which verdicts flipped, agreement with the reviewer's overrides, and saving the
//! edit to the user's rules file (atomic write, other keys in it kept).

use crate::tui::error::UiError;
use std::sync::Arc;

use crate::config::ConfigError;
use crate::director::ruleset::{RuleData, ToneMode};
use crate::director::{self, ContextTurn, RuleId, RuleSet, Status, Verdict};
use crate::text::{AnalysisCache, Analyzer};

use super::verbs::Input;
use super::view::RunView;

/// One editable value: its dotted key in rules.toml, and how to read and change it.
pub struct Field {
    pub key: &'static str,
    pub step: f64,
    /// The one rule this value feeds: an edit re-runs only that rule.
    pub rule: RuleId,
    get: fn(&RuleData) -> f64,
    set: fn(&mut RuleData, f64),
}

impl Field {
    pub fn get(&self, d: &RuleData) -> f64 {
        (self.get)(d)
    }

    pub fn show(&self, d: &RuleData) -> String {
        match self.key {
            "tone_mode" => match d.tone_mode {
                ToneMode::Markers => "markers".into(),
                ToneMode::Violations => "violations".into(),
            },
            _ if self.step < 1.0 => format!("{:.1}", self.get(d)),
            _ => format!("{}", self.get(d) as i64),
        }
    }
}

macro_rules! int_field {
    ($key:literal, $rule:ident, $($path:ident).+) => {
        Field {
            key: $key,
            step: 1.0,
            rule: RuleId::$rule,
            get: |d| d.$($path).+ as f64,
            set: |d, v| d.$($path).+ = v.max(0.0) as usize,
        }
    };
}

pub fn fields() -> Vec<Field> {
    vec![
        Field {
            key: "tone_mode",
            step: 1.0,
            rule: RuleId::Tone,
            get: |d| f64::from(u8::from(d.tone_mode == ToneMode::Violations)),
            set: |d, v| {
                d.tone_mode = if v.rem_euclid(2.0) >= 1.0 {
                    ToneMode::Violations
                } else {
                    ToneMode::Markers
                }
            },
        },
        int_field!("lines.warn", Lines, lines.warn),
        int_field!("lines.retry", Lines, lines.retry),
        int_field!("scatter.warn_sentences", Scatter, scatter.warn_sentences),
        int_field!("scatter.warn_topics", Scatter, scatter.warn_topics),
        int_field!("scatter.retry_sentences", Scatter, scatter.retry_sentences),
        int_field!("scatter.retry_topics", Scatter, scatter.retry_topics),
        int_field!("topic_loop.turns", TopicLoop, topic_loop.turns),
        int_field!(
            "early_topic_shift.min_turns",
            EarlyTopicShift,
            early_topic_shift.min_turns
        ),
        Field {
            key: "judge.retry_below",
            step: 0.1,
            rule: RuleId::Judge,
            get: |d| d.judge.retry_below,
            set: |d, v| d.judge.retry_below = (v.clamp(1.0, 5.0) * 10.0).round() / 10.0,
        },
        Field {
            key: "judge.pass_from",
            step: 0.1,
            rule: RuleId::Judge,
            get: |d| d.judge.pass_from,
            set: |d, v| d.judge.pass_from = (v.clamp(1.0, 5.0) * 10.0).round() / 10.0,
        },
    ]
}

/// The ruleset with field `i` moved by `steps` steps.
pub fn adjust(rules: &RuleSet, i: usize, steps: f64) -> Result<RuleSet, ConfigError> {
    let fs = fields();
    let f = &fs[i.min(fs.len() - 1)];
    let mut data = (*rules.data).clone();
    let v = f.get(&data) + steps * f.step;
    (f.set)(&mut data, v);
    super::thresholds::check_order(&data)?;
    RuleSet::from_data(data)
}

/// What a re-judge changed and how it agrees with the reviewer.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Rejudge {
    /// The run it was computed on (set by the workbench): its turn numbers mean nothing in
    /// another run.
    pub run_id: Option<i64>,
    /// (turn, before, after) for every shown attempt whose verdict changed.
    pub flipped: Vec<(usize, Status, Status)>,
    pub judged: usize,
    /// Rows: the reviewer's verdict, columns: the rules' (PASS, WARN, RETRY).
    pub confusion: [[usize; 3]; 3],
}

impl Rejudge {
    pub fn overrides(&self) -> usize {
        self.confusion.iter().flatten().sum()
    }
    pub fn agreed(&self) -> usize {
        (0..3).map(|i| self.confusion[i][i]).sum()
    }
}

fn bucket(s: Status) -> usize {
    match s {
        Status::Info | Status::Pass => 0,
        Status::Warn | Status::Modify | Status::Unscored => 1,
        Status::Retry => 2,
    }
}

/// Re-judges the shown attempt of every turn with `rules`, reusing cached analyses (no
/// re-tokenising), keeps each attempt's LLM-judge finding, and updates the view in place.
/// Turns only read earlier analyses, so the work is split across the cores.
pub fn rejudge(
    run: &mut RunView,
    rules: &RuleSet,
    analyzer: &Arc<dyn Analyzer>,
    cache: &mut AnalysisCache,
) -> Rejudge {
    rejudge_only(run, rules, analyzer, cache, None)
}

/// `rejudge`, re-running only rule `only.0` when the edit concerned that rule alone: a verdict
/// made under the previous ruleset `only.1` keeps every other finding (same analysis, same
/// context, same rules); any other verdict is judged in full.
pub fn rejudge_only(
    run: &mut RunView,
    rules: &RuleSet,
    analyzer: &Arc<dyn Analyzer>,
    cache: &mut AnalysisCache,
    only: Option<(RuleId, &str)>,
) -> Rejudge {
    // Pass 1 (in order): each turn's analysis, and the committed lines before it.
    let mut context: Vec<ContextTurn> = Vec::new();
    let mut jobs: Vec<Option<(Arc<crate::text::Analysis>, usize)>> = Vec::new();
    for t in &mut run.turns {
        let idx = t.committed.unwrap_or(t.attempts.len().saturating_sub(1));
        let Some(a) = t.attempts.get_mut(idx).filter(|a| a.verdict.is_some()) else {
            jobs.push(None);
            continue;
        };
        let an = Arc::clone(
            a.analysis
                .get_or_insert_with(|| cache.get_or_analyze(&a.text)),
        );
        jobs.push(Some((Arc::clone(&an), context.len())));
        if t.committed.is_some() {
            context.push(ContextTurn {
                speaker: t.speaker.clone(),
                analysis: an,
            });
        }
    }
    // Pass 2 (in parallel): judge each turn against its slice of the context.
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .clamp(1, 8);
    let chunk = run.turns.len().div_ceil(threads).max(256);
    let context = &context;
    let parts: Vec<Rejudge> = std::thread::scope(|s| {
        let handles: Vec<_> = run
            .turns
            .chunks_mut(chunk)
            .zip(jobs.chunks(chunk))
            .map(|(turns, jobs)| {
                s.spawn(move || judge_chunk(turns, jobs, context, rules, analyzer, only))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    });
    let mut out = Rejudge::default();
    for p in parts {
        out.judged += p.judged;
        out.flipped.extend(p.flipped);
        for (r, row) in p.confusion.iter().enumerate() {
            for (c, n) in row.iter().enumerate() {
                out.confusion[r][c] += n;
            }
        }
    }
    out
}

fn judge_chunk(
    turns: &mut [super::view::TurnView],
    jobs: &[Option<(Arc<crate::text::Analysis>, usize)>],
    context: &[ContextTurn],
    rules: &RuleSet,
    analyzer: &Arc<dyn Analyzer>,
    only: Option<(RuleId, &str)>,
) -> Rejudge {
    let (only, prev_version) = match only {
        Some((r, v)) => (Some(r), v),
        None => (None, ""),
    };
    let mut out = Rejudge::default();
    for (t, job) in turns.iter_mut().zip(jobs) {
        let (Some((an, before)), Some(ch)) = (job, rules.character(&t.speaker)) else {
            continue;
        };
        let idx = t.committed.unwrap_or(t.attempts.len().saturating_sub(1));
        let Some(a) = t.attempts.get_mut(idx) else {
            continue;
        };
        let Some(old) = a.verdict.as_ref().map(|v| v.status) else {
            continue;
        };
        // The judge's status follows the thresholds being tuned; its scores stay.
        if let Some(j) = a.judge.as_mut()
            && let Some(s) = &j.scores
        {
            j.status = s.status(&rules.data.judge);
        }
        let ctx = &context[..*before];
        let v = match (only, a.verdict.take()) {
            // A verdict made under other rules (a stored run) gets a full re-judge.
            (Some(RuleId::Judge), Some(mut v)) if v.ruleset == prev_version => {
                v.findings.retain(|f| f.rule != RuleId::Judge);
                v.findings
                    .extend(a.judge.as_ref().and_then(|j| j.finding()));
                v.status = Verdict::status_of(&v.findings);
                v.ruleset = rules.version.clone();
                v
            }
            (Some(rule), Some(mut v)) if v.ruleset == prev_version => {
                director::rejudge_rule(rules, analyzer.as_ref(), ch, an, ctx, rule, &mut v);
                v
            }
            (_, prev) => {
                let mut v: Verdict = director::judge(rules, analyzer.as_ref(), ch, an, ctx);
                v.findings
                    .extend(a.judge.as_ref().and_then(|j| j.finding()));
                // Leak, world-view and prompt-echo findings come from the vault, the safety
                // data and the prompt, not the ruleset's text rules: a rule edit keeps them.
                if let Some(prev) = prev {
                    v.findings.extend(prev.findings.into_iter().filter(|f| {
                        matches!(
                            f.rule,
                            RuleId::Leak | RuleId::Worldview | RuleId::PromptEcho
                        )
                    }));
                }
                v.status = Verdict::status_of(&v.findings);
                v
            }
        };
        out.judged += 1;
        if v.status != old {
            out.flipped.push((t.turn, old, v.status));
        }
        if let Some(human) = t.review.override_to {
            out.confusion[bucket(human)][bucket(v.status)] += 1;
        }
        a.verdict = Some(v);
    }
    out
}

/// The user's rules file with the edited fields written in, keeping whatever else it holds:
/// `existing` is its text (None: no file yet). Pure; the runtime reads and writes the file.
pub fn merged(
    rules: &RuleSet,
    path: &std::path::Path,
    existing: Option<&str>,
) -> Result<String, UiError> {
    let mut table = match existing {
        Some(text) => crate::config::load_toml_table(path, text)
            .map_err(|e| UiError::Refused(e.to_string()))?,
        None => toml::Table::new(),
    };
    for f in fields() {
        let value = match f.key {
            "tone_mode" => toml::Value::String(f.show(&rules.data)),
            _ if f.step < 1.0 => toml::Value::Float(f.get(&rules.data)),
            _ => toml::Value::Integer(f.get(&rules.data) as i64),
        };
        let mut parts: Vec<&str> = f.key.split('.').collect();
        let leaf = parts.pop().unwrap_or(f.key);
        let mut t = &mut table;
        for p in parts {
            let entry = t
                .entry(p.to_string())
                .or_insert_with(|| toml::Value::Table(toml::Table::new()));
            let Some(inner) = entry.as_table_mut() else {
                return Err(UiError::Refused(format!(
                    "{}: `{p}` is not a table",
                    path.display()
                )));
            };
            t = inner;
        }
        t.insert(leaf.to_string(), value);
    }
    toml::to_string(&table).map_err(|e| UiError::Refused(e.to_string()))
}

/// What a key in the rules pane asks of the workbench.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RulesAsk {
    /// Handled here (the selected field moved) or not the pane's key.
    Nothing,
    /// Change field `field` by `steps` steps and re-judge.
    Adjust { field: usize, steps: f64 },
    /// Write the edited rules to the user's rules file.
    Save,
}

/// The rules pane's own verbs, bound in `[pane.rules]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RulesVerb {
    NextField,
    PrevField,
    Raise,
    Lower,
    Save,
    /// Learn proposals from the team's labels (the tune section).
    Propose,
    NextProposal,
    PrevProposal,
    Accept,
}

impl super::verbs::Verbs for RulesVerb {
    const ALL: &'static [(&'static str, Self, &'static str)] = &[
        ("next_field", RulesVerb::NextField, "select the next value"),
        (
            "prev_field",
            RulesVerb::PrevField,
            "select the previous value",
        ),
        (
            "raise",
            RulesVerb::Raise,
            "raise the value, re-judge every turn",
        ),
        (
            "lower",
            RulesVerb::Lower,
            "lower the value, re-judge every turn",
        ),
        ("save", RulesVerb::Save, "save the rules to your rules.toml"),
        (
            "propose",
            RulesVerb::Propose,
            "learn rule changes from the team's labels (held-out evidence)",
        ),
        (
            "next_proposal",
            RulesVerb::NextProposal,
            "select the next proposal",
        ),
        (
            "prev_proposal",
            RulesVerb::PrevProposal,
            "select the previous proposal",
        ),
        (
            "accept",
            RulesVerb::Accept,
            "accept the proposal: adopt it and write rules.tune.toml",
        ),
    ];
}

/// The rules pane's own verbs over its selected field.
pub fn rules_key(field: &mut usize, verb: RulesVerb) -> RulesAsk {
    let n = fields().len();
    match verb {
        RulesVerb::NextField => *field = (*field + 1) % n,
        RulesVerb::PrevField => *field = (*field + n - 1) % n,
        RulesVerb::Raise => {
            return RulesAsk::Adjust {
                field: *field,
                steps: 1.0,
            };
        }
        RulesVerb::Lower => {
            return RulesAsk::Adjust {
                field: *field,
                steps: -1.0,
            };
        }
        RulesVerb::Save => return RulesAsk::Save,
        RulesVerb::Propose
        | RulesVerb::NextProposal
        | RulesVerb::PrevProposal
        | RulesVerb::Accept => {}
    }
    RulesAsk::Nothing
}

/// The rules pane's room: the selected field and what the last change re-judged.
#[derive(Default)]
pub struct RulesRoom {
    pub field: usize,
    /// The flips of the last change, on the run it was computed on.
    pub rejudge: Option<Rejudge>,
    /// The tune section: proposals learned from the team's labels.
    pub tune: super::tune_room::TuneState,
}

impl RulesRoom {
    /// The last change's flips when they were computed on `run` (the run now open); None
    /// after another run was opened.
    pub fn rejudge_of(&self, run: Option<i64>) -> Option<&Rejudge> {
        self.rejudge.as_ref().filter(|r| r.run_id == run)
    }

    /// Its verbs: pick a field, change its value (the workbench re-judges), save the rules.
    /// `blind`: the tune section's verbs are refused (it learns from the whole team's labels).
    pub fn act(
        &mut self,
        input: Input<RulesVerb>,
        rules: &RuleSet,
        blind: bool,
    ) -> crate::tui::panes::Ask {
        use crate::tui::panes::Ask;
        let Input::Verb(verb) = input else {
            return Ask::NotMine;
        };
        if blind && is_tune_verb(verb) {
            return Ask::Done(Some(super::tune_room::BLIND_REFUSAL.into()));
        }
        if let Some(ask) = self.tune_verb(verb, rules) {
            return ask;
        }
        match rules_key(&mut self.field, verb) {
            RulesAsk::Nothing => Ask::Done(None),
            RulesAsk::Adjust { field, steps } => match adjust(rules, field, steps) {
                Ok(r) => Ask::Rejudge(Box::new(r), fields().get(field).map(|f| f.rule)),
                Err(e) => Ask::Fail(UiError::Refused(e.to_string())),
            },
            RulesAsk::Save => Ask::Run(
                None,
                vec![crate::tui::command::Command::SaveRules(Box::new(
                    rules.clone(),
                ))],
            ),
        }
    }
}

/// The tune section's verbs (learn, pick, accept).
fn is_tune_verb(verb: RulesVerb) -> bool {
    matches!(
        verb,
        RulesVerb::Propose | RulesVerb::NextProposal | RulesVerb::PrevProposal | RulesVerb::Accept
    )
}

impl RulesRoom {
    /// The tune section's verbs; None for the others.
    fn tune_verb(&mut self, verb: RulesVerb, rules: &RuleSet) -> Option<crate::tui::panes::Ask> {
        use super::tune_room::TuneState;
        use crate::tui::command::Command;
        use crate::tui::panes::Ask;
        Some(match verb {
            RulesVerb::Propose => {
                self.tune = TuneState::Learning;
                Ask::Run(
                    Some("learning from the team's labels …".into()),
                    vec![Command::Tune],
                )
            }
            RulesVerb::NextProposal => {
                self.tune.step(1);
                Ask::Done(None)
            }
            RulesVerb::PrevProposal => {
                self.tune.step(-1);
                Ask::Done(None)
            }
            RulesVerb::Accept => match self.tune.accept(rules, &crate::store::time::now_iso()) {
                None => Ask::Done(Some("no proposal to accept (T learns them)".into())),
                Some(Err(e)) => Ask::Fail(e),
                Some(Ok(super::tune_room::Accepted { overlay, rules })) => Ask::Run(
                    Some("accepted: judging the run again …".into()),
                    vec![Command::AcceptTune {
                        overlay,
                        rules: Box::new(rules),
                    }],
                ),
            },
            _ => return None,
        })
    }
}

#[cfg(test)]
#[path = "tuning_tests.rs"]
pub(crate) mod tests;
