use super::*;
use crate::director::judge::{JudgeOutcome, JudgeScores};
use crate::duo::Effect;
use crate::duo::records::{AttemptRecord, GenStats, TurnFlags, TurnRecord};
use crate::duo::topic::DepthStep;
use crate::text::Analysis;
use crate::text::analyzer::fallback::FallbackAnalyzer;

fn field(key: &str) -> usize {
    fields().iter().position(|f| f.key == key).unwrap()
}

/// A run view with one committed line per text, judged with `rules`.
pub(crate) fn view(
    rules: &RuleSet,
    lines: &[(&str, &str)],
    judge: Option<JudgeOutcome>,
) -> RunView {
    let mut run = RunView::default();
    let mut context: Vec<ContextTurn> = Vec::new();
    for (i, (speaker, text)) in lines.iter().enumerate() {
        let turn = i + 1;
        let c = rules.character(speaker).unwrap();
        let a = Arc::new(Analysis::new(text));
        // As the driver does: judged against the committed lines before it.
        let mut v = director::judge(rules, &FallbackAnalyzer, c, &a, &context);
        context.push(ContextTurn {
            speaker: speaker.to_string(),
            analysis: a,
        });
        if let Some(f) = judge.as_ref().and_then(|j| j.finding()) {
            v.findings.push(f);
            v.status = Verdict::status_of(&v.findings);
        }
        run.apply(&Effect::TurnStarted {
            turn,
            speaker: speaker.to_string(),
        });
        run.apply(&Effect::Generate {
            turn,
            speaker: speaker.to_string(),
            attempt: 1,
            prompt: crate::duo::prompt::Prompt {
                messages: vec![],
                dropped: 0,
                chars: 0,
                hash: String::new(),
            },
            guidance: vec![],
        });
        run.apply(&Effect::AttemptDone(Box::new(AttemptRecord {
            turn,
            speaker: speaker.to_string(),
            attempt: 1,
            text: text.to_string(),
            verdict: v.clone(),
            judge: judge.clone(),
            guidance: vec![],
            prompt_hash: String::new(),
            stats: GenStats::default(),
            keywords: vec![],
            analysis: None,
        })));
        run.apply(&Effect::TurnCommitted(Box::new(TurnRecord {
            turn,
            speaker: speaker.to_string(),
            attempt: 1,
            text: text.to_string(),
            verdict: v,
            flags: TurnFlags::default(),
            hook: None,
            depth: 0,
            step: DepthStep::Discover,
        })));
    }
    run
}

const SIX_LINES: &str = "わ！\n見て！\nあれ！\nほら！\nすごい！\nね！";

#[test]
fn lowering_a_threshold_flips_verdicts_without_retokenising() {
    let rules = RuleSet::builtin().unwrap();
    let mut run = view(
        &rules,
        &[("yana", SIX_LINES), ("ayu", "はい、そうですね。")],
        None,
    );
    assert_eq!(run.turns[0].status(), Some(Status::Warn), "6 lines: WARN");
    let analyzer: Arc<dyn Analyzer> = Arc::new(FallbackAnalyzer);
    let mut cache = AnalysisCache::new();
    // Lines RETRY from 6: the first turn flips to RETRY.
    let mut stricter = rules.clone();
    for _ in 0..2 {
        stricter = adjust(&stricter, field("lines.retry"), -1.0).unwrap();
    }
    assert_eq!(stricter.data.lines.retry, 6);
    assert_ne!(stricter.version, rules.version);
    let rj = rejudge(&mut run, &stricter, &analyzer, &mut cache);
    assert_eq!(rj.judged, 2);
    assert_eq!(rj.flipped, vec![(1, Status::Warn, Status::Retry)]);
    // Back to the defaults: flips back; the second pass reuses the cached analyses.
    let (_, misses_before) = cache.stats();
    let rj = rejudge(&mut run, &rules, &analyzer, &mut cache);
    assert_eq!(rj.flipped, vec![(1, Status::Retry, Status::Warn)]);
    assert_eq!(cache.stats().1, misses_before, "no new analyses");
}

#[test]
fn agreement_counts_overrides_in_a_confusion_matrix() {
    let rules = RuleSet::builtin().unwrap();
    let mut run = view(
        &rules,
        &[
            ("yana", SIX_LINES),
            ("ayu", "はい、そうですね。"),
            ("yana", "わ！ほんとだね！"),
        ],
        None,
    );
    run.turns[0].review.override_to = Some(Status::Retry); // rules: WARN
    run.turns[2].review.override_to = Some(Status::Pass); // rules: PASS
    let analyzer: Arc<dyn Analyzer> = Arc::new(FallbackAnalyzer);
    let rj = rejudge(&mut run, &rules, &analyzer, &mut AnalysisCache::new());
    assert_eq!(rj.overrides(), 2);
    assert_eq!(rj.agreed(), 1);
    assert_eq!(rj.confusion[2][1], 1, "reviewer RETRY, rules WARN");
    assert_eq!(rj.confusion[0][0], 1);
}

#[test]
fn judge_findings_survive_a_rejudge_and_judge_thresholds_are_editable() {
    let rules = RuleSet::builtin().unwrap();
    let scores = JudgeScores {
        frame: 3.0,
        roleplay: 3.0,
        connection: 3.0,
        density: 3.0,
        naturalness: 3.0,
        mean: 3.0,
        reason: String::new(),
        suggestion: String::new(),
    };
    let judged = JudgeOutcome::scored(scores, &rules.data.judge, vec![]);
    let mut run = view(&rules, &[("yana", "わ！ほんとだね！")], Some(judged));
    assert_eq!(run.turns[0].status(), Some(Status::Retry));
    let analyzer: Arc<dyn Analyzer> = Arc::new(FallbackAnalyzer);
    let rj = rejudge(&mut run, &rules, &analyzer, &mut AnalysisCache::new());
    assert!(rj.flipped.is_empty(), "the judge's RETRY is kept: {rj:?}");
    let lenient = adjust(&rules, field("judge.retry_below"), -6.0).unwrap();
    assert_eq!(lenient.data.judge.retry_below, 2.9);
    let mode = adjust(&rules, field("tone_mode"), 1.0).unwrap();
    assert_eq!(mode.data.tone_mode, ToneMode::Violations);
}

#[test]
fn save_writes_the_values_and_keeps_the_rest_of_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rules.toml");
    std::fs::write(&path, "[praise]\nevaluation_words = [\"すごい\"]\n").unwrap();
    let rules = adjust(&RuleSet::builtin().unwrap(), field("lines.warn"), 1.0).unwrap();
    crate::tui::runtime::save_rules_file(&rules, &path).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let t: toml::Table = text.parse().unwrap();
    assert_eq!(t["lines"]["warn"].as_integer(), Some(7));
    assert_eq!(t["praise"]["evaluation_words"][0].as_str(), Some("すごい"));
    assert_eq!(t["tone_mode"].as_str(), Some("markers"));
    assert!(!path.with_extension("toml.tmp").exists());
    // The saved file loads back as the same ruleset values.
    let merged = crate::config::load_toml_table(&path, &text).unwrap();
    assert_eq!(merged["judge"]["pass_from"].as_float(), Some(4.0));
}

/// Sorted findings, so the incremental path (which appends) compares with the full one.
fn canonical(
    run: &RunView,
) -> Vec<(
    Option<Status>,
    Vec<String>,
    Option<crate::director::ToneScore>,
)> {
    run.turns
        .iter()
        .map(|t| {
            let v = t.attempts[0].verdict.as_ref();
            let mut fs: Vec<String> = v
                .map(|v| v.findings.iter().map(|f| format!("{:?}", f)).collect())
                .unwrap_or_default();
            fs.sort();
            (v.map(|v| v.status), fs, v.map(|v| v.tone))
        })
        .collect()
}

#[test]
fn re_running_only_the_edited_rule_equals_a_full_re_judge() {
    let rules = RuleSet::builtin().unwrap();
    let lines: &[(&str, &str)] = &[
        ("yana", SIX_LINES),
        ("ayu", "はい、そうですね。姉様の言う通りです。"),
        (
            "yana",
            "えー、それって本当？ 商店街の話なんだけど、駅の話もあるし、天気の話もしたいな。",
        ),
        ("ayu", "了解です。データによると、次の角を右です。"),
        ("yana", "あゆって、すごく賢いね！"),
    ];
    let judged = JudgeOutcome::scored(
        JudgeScores {
            frame: 3.0,
            roleplay: 4.0,
            connection: 4.0,
            density: 3.0,
            naturalness: 4.0,
            mean: 3.6,
            reason: String::new(),
            suggestion: String::new(),
        },
        &rules.data.judge,
        vec![],
    );
    let analyzer: Arc<dyn Analyzer> = Arc::new(FallbackAnalyzer);
    let mut compared = 0;
    for (i, f) in fields().iter().enumerate() {
        for steps in [-2.0, -1.0, 1.0, 2.0] {
            // An edit that would put a WARN threshold above its RETRY one is refused.
            let Ok(edited) = adjust(&rules, i, steps) else {
                continue;
            };
            let mut full = view(&rules, lines, Some(judged.clone()));
            let mut part = view(&rules, lines, Some(judged.clone()));
            let a = rejudge(&mut full, &edited, &analyzer, &mut AnalysisCache::new());
            let b = rejudge_only(
                &mut part,
                &edited,
                &analyzer,
                &mut AnalysisCache::new(),
                Some((f.rule, rules.version.as_str())),
            );
            assert_eq!(canonical(&full), canonical(&part), "{} {steps:+}", f.key);
            assert_eq!(a.flipped, b.flipped, "{} {steps:+}", f.key);
            compared += a.flipped.len();
        }
    }
    assert!(
        compared > 0,
        "some edits must flip something, or the comparison proves little"
    );
}
