use super::*;
use crate::director::judge::JudgeScores;
use crate::director::{Finding, RuleId, ToneScore};
use crate::text::AnalyzerKind;

pub(super) fn spec(turns: usize, attempts: usize, exhaustion: Exhaustion, judge: bool) -> RunSpec {
    RunSpec {
        topic: "川沿いの桜並木".into(),
        max_turns: turns,
        max_attempts: attempts,
        exhaustion,
        judge,
    }
}

pub(super) fn session(s: RunSpec) -> Session {
    Session::new(
        s,
        DuoConfig::builtin().unwrap(),
        RuleSet::builtin().unwrap(),
    )
}

pub(super) fn verdict(findings: Vec<Finding>) -> Verdict {
    Verdict {
        status: Verdict::status_of(&findings),
        findings,
        tone: ToneScore::default(),
        lines: 1,
        sentences: 1,
        topics: 0,
        ruleset: "test".into(),
        analyzer: AnalyzerKind::Fallback,
    }
}

pub(super) fn finding(rule: RuleId, status: Status, msg: &str) -> Finding {
    Finding::new(rule, status, msg.into(), format!("{msg}を直す"))
}

pub(super) fn pass() -> Verdict {
    verdict(vec![])
}

fn retry(msg: &str) -> Verdict {
    verdict(vec![finding(RuleId::Tone, Status::Retry, msg)])
}

pub(super) fn kw(words: &[&str]) -> Vec<String> {
    words.iter().map(|w| w.to_string()).collect()
}

/// The one Generate effect in a batch: (turn, speaker, attempt, guidance, prompt).
pub(super) fn generate_of(
    effects: &[Effect],
) -> Option<(usize, String, usize, Vec<String>, Prompt)> {
    effects.iter().find_map(|e| match e {
        Effect::Generate {
            turn,
            speaker,
            attempt,
            prompt,
            guidance,
        } => Some((
            *turn,
            speaker.clone(),
            *attempt,
            guidance.clone(),
            prompt.clone(),
        )),
        _ => None,
    })
}

/// Plays one attempt through: generated text → static verdict → (judge) — returns all effects.
pub(super) fn play(
    s: &mut Session,
    text: &str,
    v: Verdict,
    keywords: &[&str],
    judge: Option<JudgeOutcome>,
) -> Vec<Effect> {
    let c = s.current().expect("an attempt in flight").clone();
    let mut out = Vec::new();
    out.extend(s.on_token(c.turn, c.attempt, text));
    out.extend(s.handle(Event::Generated {
        turn: c.turn,
        attempt: c.attempt,
        text: text.into(),
        stats: GenStats::default(),
    }));
    let judged = s.handle(Event::StaticJudged {
        turn: c.turn,
        attempt: c.attempt,
        verdict: v,
        keywords: kw(keywords),
        analysis: std::sync::Arc::new(crate::text::Analysis::new(text)),
    });
    let asks_judge = judged.iter().any(|e| matches!(e, Effect::LlmJudge { .. }));
    out.extend(judged);
    if asks_judge {
        let outcome = judge.unwrap_or_else(|| scored(4.5));
        out.extend(s.handle(Event::LlmJudged {
            turn: c.turn,
            attempt: c.attempt,
            outcome,
        }));
    }
    out
}

fn scored(mean: f64) -> JudgeOutcome {
    let rule = RuleSet::builtin().unwrap().data.judge.clone();
    JudgeOutcome::scored(
        JudgeScores {
            frame: mean,
            roleplay: mean,
            connection: mean,
            density: mean,
            naturalness: mean,
            mean,
            reason: String::new(),
            suggestion: String::new(),
        },
        &rule,
        vec!["{}".into()],
    )
}

pub(super) fn commits(effects: &[Effect]) -> Vec<TurnRecord> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::TurnCommitted(r) => Some((**r).clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn sisters_alternate_and_the_run_completes_at_max_turns() {
    let mut s = session(spec(4, 3, Exhaustion::Best, true));
    let first = s.start();
    assert!(matches!(&first[0], Effect::TurnStarted { turn: 1, speaker } if speaker == "yana"));
    let mut all = first;
    for i in 0..4 {
        all.extend(play(&mut s, &format!("発言{i}"), pass(), &[], None));
    }
    let speakers: Vec<String> = commits(&all).iter().map(|c| c.speaker.clone()).collect();
    assert_eq!(speakers, ["yana", "ayu", "yana", "ayu"]);
    assert!(matches!(
        all.last(),
        Some(Effect::RunDone {
            status: RunEnd::Completed,
            ..
        })
    ));
    assert_eq!(s.state(), State::Done(RunEnd::Completed));
    assert!(s.current().is_none());
}

#[test]
fn retry_regenerates_with_the_reasons_and_never_moves_topic_state() {
    let mut s = session(spec(3, 3, Exhaustion::Best, true));
    s.start();
    play(&mut s, "一つ目", pass(), &["桜"], None);
    let before = s.topic().clone();
    let out = play(&mut s, "失敗", retry("口調が違う"), &["花火", "屋台"], None);
    assert!(
        !out.iter().any(|e| matches!(e, Effect::LlmJudge { .. })),
        "judge skipped on static RETRY"
    );
    let (turn, _, attempt, guidance, prompt) = generate_of(&out).unwrap();
    assert_eq!((turn, attempt), (2, 2));
    assert!(
        guidance
            .iter()
            .any(|g| g.contains("口調が違う") && g.contains("口調が違うを直す"))
    );
    assert!(
        prompt
            .messages
            .last()
            .unwrap()
            .content
            .contains("口調が違う")
    );
    assert_eq!(
        s.topic(),
        &before,
        "a RETRY attempt must not advance the topic"
    );
    assert_eq!(s.committed().count(), 1);
    let out = play(&mut s, "二つ目", pass(), &["桜", "川"], None);
    let c = commits(&out);
    assert_eq!(
        (c[0].turn, c[0].attempt, c[0].flags.exhausted),
        (2, 2, false)
    );
    assert_eq!(s.topic().hook.as_deref(), Some("桜"));
    assert_eq!(s.topic().depth, 1);
}

#[test]
fn exhaustion_best_picks_the_least_severe_attempt() {
    let mut s = session(spec(3, 3, Exhaustion::Best, false));
    s.start();
    play(
        &mut s,
        "案1",
        verdict(vec![
            finding(RuleId::Tone, Status::Retry, "a"),
            finding(RuleId::Praise, Status::Retry, "b"),
        ]),
        &[],
        None,
    );
    play(&mut s, "案2", retry("c"), &[], None);
    let out = play(
        &mut s,
        "案3",
        verdict(vec![
            finding(RuleId::Lines, Status::Retry, "d"),
            finding(RuleId::Setting, Status::Retry, "e"),
        ]),
        &[],
        None,
    );
    let c = commits(&out);
    assert_eq!(c.len(), 1);
    assert_eq!((c[0].attempt, c[0].text.as_str()), (2, "案2"));
    assert!(c[0].flags.exhausted && !c[0].flags.futile);
    // The committed RETRY's reasons are a critique of やな's line: not for あゆ …
    let (turn, speaker, _, guidance, _) = generate_of(&out).unwrap();
    assert_eq!((turn, speaker.as_str()), (2, "ayu"));
    assert!(!guidance.iter().any(|g| g.contains('c')), "{guidance:?}");
    // … but for やな's own next turn, naming the line they come from.
    let out = play(&mut s, "二", pass(), &[], None);
    let (turn, speaker, _, guidance, _) = generate_of(&out).unwrap();
    assert_eq!((turn, speaker.as_str()), (3, "yana"));
    assert!(
        guidance
            .iter()
            .any(|g| g.starts_with("あなたの前の発言（ターン1）") && g.contains('c')),
        "{guidance:?}"
    );
}

#[test]
fn exhaustion_last_commits_the_last_attempt() {
    let mut s = session(spec(1, 2, Exhaustion::Last, false));
    s.start();
    play(&mut s, "案1", retry("x"), &[], None);
    let out = play(
        &mut s,
        "案2",
        verdict(vec![
            finding(RuleId::Tone, Status::Retry, "y"),
            finding(RuleId::Lines, Status::Retry, "z"),
        ]),
        &[],
        None,
    );
    assert_eq!(commits(&out)[0].text, "案2");
}

#[test]
fn the_same_reason_twice_is_futile_and_stops_early() {
    let mut s = session(spec(2, 3, Exhaustion::Best, false));
    s.start();
    play(&mut s, "案1", retry("同じ理由"), &[], None);
    let out = play(&mut s, "案2", retry("同じ理由"), &[], None);
    let c = commits(&out);
    assert_eq!(c.len(), 1, "no third attempt");
    assert!(c[0].flags.futile && c[0].flags.exhausted);
}

#[test]
fn a_conversation_warn_steers_the_next_turn_only() {
    let mut s = session(spec(4, 3, Exhaustion::Best, false));
    s.start();
    let loop_warn = verdict(vec![finding(RuleId::TopicLoop, Status::Warn, "話題が二つ")]);
    let out = play(&mut s, "少し散漫", loop_warn, &[], None);
    assert_eq!(commits(&out)[0].verdict.status, Status::Warn);
    let (_, _, _, guidance, prompt) = generate_of(&out).unwrap();
    assert!(guidance.iter().any(|g| g.contains("話題が二つ")));
    assert!(
        prompt
            .messages
            .last()
            .unwrap()
            .content
            .contains("【ディレクターからの指示】")
    );
    let out = play(&mut s, "よし", pass(), &[], None);
    let (_, _, _, guidance, _) = generate_of(&out).unwrap();
    assert!(!guidance.iter().any(|g| g.contains("話題が二つ")));
}

#[test]
fn judge_runs_after_static_rules_and_unscored_is_never_pass() {
    let mut s = session(spec(2, 3, Exhaustion::Best, true));
    s.start();
    let out = play(
        &mut s,
        "ふつうの発言",
        pass(),
        &[],
        Some(JudgeOutcome::unscored(
            "JSONが読めません".into(),
            vec!["よい発言です".into()],
        )),
    );
    let c = commits(&out);
    assert_eq!(c[0].verdict.status, Status::Unscored);
    assert!(
        c[0].verdict
            .findings
            .iter()
            .any(|f| f.rule == RuleId::Judge)
    );
    // A low judge score is a RETRY like any other.
    let out = play(&mut s, "薄い発言", pass(), &[], Some(scored(3.0)));
    assert!(commits(&out).is_empty());
    let (_, _, attempt, guidance, _) = generate_of(&out).unwrap();
    assert_eq!(attempt, 2);
    assert!(guidance.iter().any(|g| g.contains("LLM評価")));
}

#[test]
fn judge_off_commits_on_static_verdict() {
    let mut s = session(spec(1, 3, Exhaustion::Best, false));
    s.start();
    let out = play(&mut s, "発言", pass(), &[], None);
    assert!(!out.iter().any(|e| matches!(e, Effect::LlmJudge { .. })));
    assert_eq!(commits(&out)[0].verdict.status, Status::Pass);
}

#[test]
fn hold_waits_for_the_reviewer_to_choose() {
    let mut s = session(spec(2, 2, Exhaustion::Hold, false));
    s.start();
    play(&mut s, "案1", retry("a"), &[], None);
    let out = play(&mut s, "案2", retry("b"), &[], None);
    assert!(
        out.iter()
            .any(|e| matches!(e, Effect::Held { turn: 1, attempts } if attempts == &vec![1, 2]))
    );
    assert_eq!(s.state(), State::Held);
    assert!(s.handle(Event::Choose { attempt: 7 }).is_empty());
    let out = s.handle(Event::Choose { attempt: 1 });
    let c = commits(&out);
    assert_eq!(c[0].text, "案1");
    assert!(c[0].flags.held);
    assert_eq!(generate_of(&out).unwrap().0, 2);
}

#[test]
fn pause_lets_the_current_turn_finish_then_waits() {
    let mut s = session(spec(3, 3, Exhaustion::Best, false));
    s.start();
    assert!(s.handle(Event::Pause).is_empty(), "an attempt is in flight");
    let out = play(&mut s, "一つ目", pass(), &[], None);
    assert_eq!(commits(&out).len(), 1);
    assert!(generate_of(&out).is_none());
    assert!(matches!(out.last(), Some(Effect::Paused)));
    assert_eq!(s.state(), State::Paused);
    let out = s.handle(Event::Resume);
    assert!(matches!(out[0], Effect::Resumed));
    assert_eq!(generate_of(&out).unwrap().0, 2);
}

#[test]
fn stop_cancels_the_started_attempt_and_ignores_late_results() {
    let mut s = session(spec(3, 3, Exhaustion::Best, false));
    s.start();
    assert!(matches!(
        s.on_token(1, 1, "わ"),
        Some(Effect::AttemptStarted { .. })
    ));
    assert!(s.on_token(1, 1, "！").is_none());
    assert_eq!(s.current().unwrap().text, "わ！");
    let out = s.handle(Event::Stop);
    assert!(matches!(out[0], Effect::Cancel));
    assert!(matches!(
        out[1],
        Effect::AttemptCancelled {
            turn: 1,
            attempt: 1,
            ref text,
        } if text == "わ！"
    ));
    assert!(matches!(
        out[2],
        Effect::RunDone {
            status: RunEnd::Stopped,
            ..
        }
    ));
    let late = s.handle(Event::Generated {
        turn: 1,
        attempt: 1,
        text: "わ！".into(),
        stats: GenStats::default(),
    });
    assert!(late.is_empty());
}

#[test]
fn owner_instruction_applies_to_the_next_turn_only() {
    let mut s = session(spec(3, 3, Exhaustion::Best, false));
    s.start();
    s.handle(Event::Inject("お弁当の話をして".into()));
    let out = play(&mut s, "一つ目", pass(), &[], None);
    let (_, _, _, _, p) = generate_of(&out).unwrap();
    assert!(
        p.messages
            .last()
            .unwrap()
            .content
            .contains("【オーナー指示】\nお弁当の話をして")
    );
    let out = play(&mut s, "二つ目", pass(), &[], None);
    let (_, _, _, _, p) = generate_of(&out).unwrap();
    assert!(
        !p.messages
            .last()
            .unwrap()
            .content
            .contains("【オーナー指示】")
    );
}

#[test]
fn regenerate_rolls_back_later_turns_and_topic_state() {
    let mut s = session(spec(5, 3, Exhaustion::Best, false));
    s.start();
    play(&mut s, "一", pass(), &["桜"], None);
    let topic_before_2 = s.topic().clone();
    play(&mut s, "二", pass(), &["桜"], None);
    play(&mut s, "三", pass(), &["屋台"], None);
    assert_eq!(s.topic().hook.as_deref(), Some("屋台"));
    let out = s.handle(Event::Regenerate { turn: 2 });
    assert!(matches!(out[0], Effect::Cancel));
    assert!(
        out.iter()
            .any(|e| matches!(e, Effect::Truncated { from_turn: 2 }))
    );
    let (turn, speaker, attempt, _, _) = generate_of(&out).unwrap();
    assert_eq!(
        (turn, speaker.as_str(), attempt),
        (2, "ayu", 2),
        "attempt numbers never repeat"
    );
    assert_eq!(s.topic(), &topic_before_2);
    assert_eq!(s.committed().count(), 1);
    // A finished run can be regenerated too.
    for t in ["二'", "三'", "四", "五"] {
        play(&mut s, t, pass(), &[], None);
    }
    assert_eq!(s.state(), State::Done(RunEnd::Completed));
    let out = s.handle(Event::Regenerate { turn: 5 });
    assert_eq!(generate_of(&out).unwrap().2, 2);
    assert_eq!(s.state(), State::Running);
    assert!(s.handle(Event::Regenerate { turn: 9 }).is_empty());
}

#[test]
fn a_failed_generation_ends_the_run_as_failed() {
    let mut s = session(spec(3, 3, Exhaustion::Best, false));
    s.start();
    let out = s.handle(Event::GenerationFailed {
        turn: 1,
        attempt: 1,
        error: "接続できません".into(),
    });
    assert!(matches!(out[0], Effect::AttemptFailed { .. }));
    assert!(
        matches!(&out[1], Effect::RunDone { status: RunEnd::Failed, error: Some(e) } if e == "接続できません")
    );
    assert_eq!(s.state(), State::Done(RunEnd::Failed));
}

#[test]
fn a_non_stream_reply_still_starts_the_attempt() {
    let mut s = session(spec(1, 3, Exhaustion::Best, false));
    s.start();
    let out = s.handle(Event::Generated {
        turn: 1,
        attempt: 1,
        text: "わ！".into(),
        stats: GenStats::default(),
    });
    assert!(matches!(out[0], Effect::AttemptStarted { .. }));
    assert!(matches!(&out[1], Effect::StaticJudge { text, .. } if text == "わ！"));
}
