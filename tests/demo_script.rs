//! The bundled demo recording (assets/demo/run.jsonl) replays through the real Director and
//! judge reader: every attempt's recorded `expect` must be what the library decides today, so
//! the demo cannot silently drift from the rules it is meant to show.

mod common;

use std::collections::BTreeSet;
use std::sync::Arc;

use kakeai::director::{self, ContextTurn, RuleId, RuleSet, Status, Verdict};
use kakeai::duo::DuoConfig;
use kakeai::text::analyzer::fallback::FallbackAnalyzer;
use kakeai::text::{Analysis, Analyzer};
use serde_json::Value;

const RUN: &str = include_str!("../assets/demo/run.jsonl");
const README: &str = include_str!("../assets/demo/README.md");
const TURNS: usize = 12;

#[derive(Debug)]
struct Attempt {
    turn: usize,
    attempt: usize,
    text: String,
    judge: Judge,
    expect: Status,
    why: String,
}

#[derive(Debug)]
enum Judge {
    None,
    One(String),
    /// The first reply and the answer to the re-ask.
    Two(String, String),
}

fn load() -> (String, Vec<Attempt>) {
    let mut lines = RUN.lines().filter(|l| !l.trim().is_empty());
    let header: Value = serde_json::from_str(lines.next().expect("a header line")).unwrap();
    let topic = header["topic"].as_str().expect("topic").to_string();
    let attempts = lines
        .enumerate()
        .map(|(i, l)| {
            let v: Value =
                serde_json::from_str(l).unwrap_or_else(|e| panic!("line {}: {e}", i + 2));
            let at = |k: &str| {
                v[k].as_u64()
                    .unwrap_or_else(|| panic!("line {}: {k}", i + 2))
            };
            let judge = match &v["judge"] {
                Value::Null => Judge::None,
                Value::String(s) => Judge::One(s.clone()),
                Value::Array(a) => match a.as_slice() {
                    [Value::String(x), Value::String(y)] => Judge::Two(x.clone(), y.clone()),
                    other => panic!(
                        "line {}: judge list must hold two strings: {other:?}",
                        i + 2
                    ),
                },
                other => panic!(
                    "line {}: judge must be null, a string or two: {other}",
                    i + 2
                ),
            };
            Attempt {
                turn: at("turn") as usize,
                attempt: at("attempt") as usize,
                text: v["text"].as_str().expect("text").to_string(),
                judge,
                expect: Status::parse(v["expect"].as_str().expect("expect")).expect("a status"),
                why: v["why"].as_str().unwrap_or("").to_string(),
            }
        })
        .collect();
    (topic, attempts)
}

/// やな (the first speaker) on odd turns, あゆ on even ones.
fn speaker(turn: usize) -> &'static str {
    if turn % 2 == 1 { "yana" } else { "ayu" }
}

/// Static verdicts of every attempt, each judged against the lines committed before it and,
/// as the workbench does, leak-reviewed against the bundled vault as the speaker sees it. A
/// line is committed when its verdict (from `expect`, checked separately) is not RETRY.
fn static_verdicts(rules: &RuleSet, an: &dyn Analyzer, run: &[Attempt]) -> Vec<Verdict> {
    let mut context: Vec<ContextTurn> = Vec::new();
    let vault = kakeai::vault::sample();
    run.iter()
        .map(|a| {
            let c = rules.character(speaker(a.turn)).expect("known speaker");
            let mut v = director::judge(rules, an, c, &Analysis::new(&a.text), &context);
            let r = vault.reviewer(Some(&c.id));
            let leak = kakeai::vault::review::findings(&r.review(&a.text), r.input(), r.config());
            v.findings.extend(leak);
            v.status = Verdict::status_of(&v.findings);
            if a.expect != Status::Retry {
                context.push(ContextTurn {
                    speaker: c.id.clone(),
                    analysis: Arc::new(Analysis::new(&a.text)),
                });
            }
            v
        })
        .collect()
}

/// What the judge step decides, as the driver does it: read the reply; when it cannot be read,
/// read the answer to the re-ask; when neither reads, UNSCORED.
fn judge_status(rules: &RuleSet, j: &Judge, label: &str) -> Option<Status> {
    let rule = &rules.data.judge;
    match j {
        Judge::None => None,
        Judge::One(r) => Some(
            director::judge::parse(r)
                .unwrap_or_else(|e| panic!("{label}: a single judge reply must read: {e}"))
                .status(rule),
        ),
        Judge::Two(first, second) => {
            assert!(
                director::judge::parse(first).is_err(),
                "{label}: a re-ask is recorded, so the first reply must not read"
            );
            Some(match director::judge::parse(second) {
                Ok(s) => s.status(rule),
                Err(_) => Status::Unscored,
            })
        }
    }
}

fn label(a: &Attempt) -> String {
    format!(
        "turn {} attempt {} ({})",
        a.turn,
        a.attempt,
        speaker(a.turn)
    )
}

#[test]
fn every_attempt_gets_the_recorded_verdict() {
    let rules = RuleSet::builtin().unwrap();
    let (_, run) = load();
    let statics = static_verdicts(&rules, &FallbackAnalyzer, &run);
    for (a, v) in run.iter().zip(&statics) {
        let l = label(a);
        let judged = judge_status(&rules, &a.judge, &l);
        let status = if v.status == Status::Retry {
            assert!(
                judged.is_none(),
                "{l}: static RETRY never reaches the judge, so no reply can be recorded"
            );
            Status::Retry
        } else {
            let j =
                judged.unwrap_or_else(|| panic!("{l}: static {} needs a judge reply", v.status));
            v.status.max(j)
        };
        assert_eq!(
            status, a.expect,
            "{l}: {:?} / static findings {:?}",
            a.text, v.findings
        );
    }
}

#[test]
fn static_verdicts_do_not_depend_on_the_analyzer() {
    let Some(lindera) = common::lindera() else {
        return;
    };
    let rules = RuleSet::builtin().unwrap();
    let (_, run) = load();
    let fallback = static_verdicts(&rules, &FallbackAnalyzer, &run);
    let full = static_verdicts(&rules, lindera, &run);
    for ((a, f), l) in run.iter().zip(&fallback).zip(&full) {
        assert_eq!(
            f.status,
            l.status,
            "{}: fallback {:?} vs lindera {:?}",
            label(a),
            f.findings,
            l.findings
        );
    }
}

#[test]
fn turns_alternate_and_end_at_their_first_non_retry() {
    let (topic, run) = load();
    assert!(!topic.trim().is_empty());
    let max_attempts = DuoConfig::builtin().unwrap().max_attempts;
    let mut i = 0;
    for turn in 1..=TURNS {
        let mine: Vec<&Attempt> = run[i..].iter().take_while(|a| a.turn == turn).collect();
        assert!(!mine.is_empty(), "turn {turn} is missing or out of order");
        assert!(
            mine.len() <= max_attempts,
            "turn {turn}: more attempts than duo.toml allows"
        );
        for (k, a) in mine.iter().enumerate() {
            assert_eq!(a.attempt, k + 1, "{}: attempts count from 1", label(a));
            assert!(
                !a.text.trim().is_empty() && !a.why.trim().is_empty(),
                "{}",
                label(a)
            );
            let last = k + 1 == mine.len();
            assert_eq!(
                a.expect != Status::Retry,
                last,
                "{}: a turn ends at its first non-RETRY attempt, which is committed",
                label(a)
            );
        }
        i += mine.len();
    }
    assert_eq!(i, run.len(), "attempts after turn {TURNS}");
    // The speaker comes from the turn number; both sisters' character files must resolve.
    let rules = RuleSet::builtin().unwrap();
    let ids: Vec<&str> = (1..=TURNS)
        .map(|t| rules.character(speaker(t)).unwrap().id.as_str())
        .collect();
    assert!(ids.chunks(2).all(|p| p == ["yana", "ayu"]), "{ids:?}");
}

#[test]
fn the_run_shows_every_feature_it_is_meant_to() {
    let rules = RuleSet::builtin().unwrap();
    let (_, run) = load();
    let statics = static_verdicts(&rules, &FallbackAnalyzer, &run);
    let at = |turn: usize, attempt: usize| {
        run.iter()
            .position(|a| a.turn == turn && a.attempt == attempt)
    };
    let committed: Vec<&Attempt> = run.iter().filter(|a| a.expect != Status::Retry).collect();

    // Static RETRY on the first attempt, fixed by the second.
    let static_fixed = (1..=TURNS)
        .filter(|&t| {
            matches!((at(t, 1), at(t, 2)), (Some(i), Some(j))
                if statics[i].status == Status::Retry && run[j].expect != Status::Retry)
        })
        .count();
    assert!(
        static_fixed >= 2,
        "static RETRY fixed by attempt 2: {static_fixed}"
    );

    // The static RETRYs are for different reasons (tone, forbidden word, praise, lines …).
    let reasons: BTreeSet<RuleId> = statics
        .iter()
        .flat_map(|v| v.findings.iter())
        .filter(|f| f.status == Status::Retry)
        .map(|f| f.rule)
        .collect();
    assert!(reasons.len() >= 3, "{reasons:?}");
    assert!(
        reasons.contains(&RuleId::Leak),
        "a leak of a vault secret is caught: {reasons:?}"
    );

    // Static rules pass, the judge says RETRY, the next attempt passes.
    let judge_fixed = (0..run.len() - 1)
        .filter(|&i| {
            run[i].turn == run[i + 1].turn
                && statics[i].status == Status::Pass
                && run[i].expect == Status::Retry
                && run[i + 1].expect == Status::Pass
        })
        .count();
    assert!(judge_fixed >= 1, "judge RETRY then PASS: {judge_fixed}");

    let count = |s: Status| committed.iter().filter(|a| a.expect == s).count();
    assert!(count(Status::Warn) >= 2, "committed WARN lines");
    assert_eq!(count(Status::Unscored), 1, "exactly one UNSCORED line");
    assert!(
        committed
            .iter()
            .any(|a| a.expect == Status::Unscored && matches!(a.judge, Judge::Two(..))),
        "the UNSCORED line records both prose replies"
    );
    assert!(
        count(Status::Pass) >= TURNS / 2,
        "most committed lines pass"
    );
    assert!((17..=20).contains(&run.len()), "{} attempts", run.len());

    // The judge replies come in the shapes real models send.
    let replies: Vec<&str> = run
        .iter()
        .flat_map(|a| match &a.judge {
            Judge::None => vec![],
            Judge::One(r) => vec![r.as_str()],
            Judge::Two(x, y) => vec![x.as_str(), y.as_str()],
        })
        .collect();
    assert!(
        replies.iter().any(|r| r.trim_start().starts_with('{')),
        "bare JSON"
    );
    assert!(
        replies
            .iter()
            .any(|r| r.contains("```json") && !r.starts_with("```")),
        "fenced"
    );
    assert!(replies.iter().any(|r| !r.contains('{')), "prose only");
}

#[test]
fn the_readme_walks_through_every_turn() {
    for t in 1..=TURNS {
        assert!(
            README.contains(&format!("turn {t}:")),
            "README lacks turn {t}"
        );
    }
}
