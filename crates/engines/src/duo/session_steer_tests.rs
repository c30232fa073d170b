//! Steering (issue 13 §1): who gets which guidance, what an exhausted RETRY line may move, and
//! how long an owner instruction lives.

use super::tests::{commits, finding, generate_of, kw, pass, play, session, spec, verdict};
use super::*;
use crate::director::RuleId;

fn last_prompt(p: &Prompt) -> String {
    p.messages
        .last()
        .map(|m| m.content.clone())
        .unwrap_or_default()
}

/// Every rule's WARN on やな's turn-1 line: a critique of her line reaches her turn 3 and not
/// あゆ's turn 2; a conversation finding reaches あゆ's turn 2 and not やな's turn 3.
#[test]
fn each_finding_reaches_the_sister_it_is_for() {
    // Seeded (fastrand): the same cases on every run.
    let mut rng = fastrand::Rng::with_seed(0x5eed_u64);
    let mut seed: u64;
    for (n, rule) in RuleId::ALL.into_iter().enumerate() {
        seed = rng.u64(..);
        let marker = format!("指摘{n}号{}", seed >> 48);
        let mut s = session(spec(4, 2, Exhaustion::Best, false));
        s.start();
        let out = play(
            &mut s,
            "一",
            verdict(vec![finding(rule, Status::Warn, &marker)]),
            &["桜"],
            None,
        );
        let (t2, who2, _, g2, p2) = generate_of(&out).unwrap();
        assert_eq!((t2, who2.as_str()), (2, "ayu"));
        let out = play(&mut s, "二", pass(), &["桜"], None);
        let (t3, who3, _, g3, p3) = generate_of(&out).unwrap();
        assert_eq!((t3, who3.as_str()), (3, "yana"));
        // A leak finding reaches her worded neutrally, whatever its message named.
        let marker = if rule == RuleId::Leak {
            assert!(!format!("{g2:?}").contains(&marker));
            crate::vault::leak::neutral_messages().0
        } else {
            marker
        };
        let has = |g: &[String]| g.iter().any(|x| x.contains(&marker));
        if policy::for_next_speaker(rule) {
            assert!(has(&g2) && !has(&g3), "{rule:?}: {g2:?} / {g3:?}");
            let g = g2.iter().find(|x| x.contains(&marker)).unwrap();
            assert!(g.contains("ターン1・やな"), "{g}");
            assert!(last_prompt(&p2).contains(&marker));
        } else {
            assert!(!has(&g2) && has(&g3), "{rule:?}: {g2:?} / {g3:?}");
            assert!(!last_prompt(&p2).contains(&marker));
            assert!(last_prompt(&p3).contains(&marker));
            let g = g3.iter().find(|x| x.contains(&marker)).unwrap();
            assert!(g.starts_with("あなたの前の発言（ターン1）"), "{g}");
            assert_eq!(policy::kind_of(g), policy::GuidanceKind::OwnLine);
        }
        // Her next committed line replaces the critique: it does not reach turn 5.
        let out = play(&mut s, "三", pass(), &["桜"], None);
        let (_, _, _, g4, _) = generate_of(&out).unwrap();
        let out = play(&mut s, "四", pass(), &["桜"], None);
        assert!(!has(&g4), "{rule:?}");
        assert!(generate_of(&out).is_none(), "the run ended at turn 4");
    }
}

fn exhaust(s: &mut Session, attempts: usize, keywords: &[&str]) -> Vec<Effect> {
    let mut out = Vec::new();
    for i in 0..attempts {
        // Different reasons each time, so the retries are not futile.
        let v = verdict(vec![finding(
            RuleId::Tone,
            Status::Retry,
            &format!("理由{i}"),
        )]);
        out = play(s, &format!("案{i}"), v, keywords, None);
    }
    out
}

/// A RETRY line committed because the attempts ran out (best, last, or chosen while held)
/// leaves hook, depth, loop history and the Director's context where they were.
#[test]
fn an_exhausted_retry_moves_no_state() {
    for (policy, attempts) in [
        (Exhaustion::Best, 1),
        (Exhaustion::Best, 3),
        (Exhaustion::Last, 2),
        (Exhaustion::Hold, 2),
    ] {
        let mut s = session(spec(4, attempts, policy, true));
        s.start();
        play(&mut s, "桜がきれいだね！", pass(), &["桜"], None);
        let before = s.topic().clone();
        let mut out = exhaust(&mut s, attempts, &["金閣寺"]);
        if policy == Exhaustion::Hold {
            assert_eq!(s.state(), State::Held);
            out = s.handle(Event::Choose { attempt: 1 });
        }
        let c = commits(&out);
        assert_eq!(c.len(), 1, "{policy:?}");
        assert!(c[0].flags.exhausted);
        assert_eq!(s.topic(), &before, "{policy:?}");
        assert_eq!(c[0].hook.as_deref(), Some("桜"));
        assert_eq!(c[0].depth, before.depth);
        assert_eq!(s.committed().count(), 2);
        let ctx: Vec<&str> = s.context().map(|r| r.text.as_str()).collect();
        assert_eq!(ctx, ["桜がきれいだね！"], "{policy:?}");
        // やな's next line is judged against her own last accepted line, not the partner's
        // rejected one: the judge gets no partner line.
        let out = play(&mut s, "そうだね！", pass(), &["桜"], None);
        let asked = out.iter().find_map(|e| match e {
            Effect::LlmJudge { partner_last, .. } => Some(partner_last.clone()),
            _ => None,
        });
        assert_eq!(asked, Some(None), "{policy:?}");
    }
}

/// Committed after an accepted line, the same keywords do move the hook: the test above is
/// about the RETRY, not about the keywords.
#[test]
fn an_accepted_line_with_the_same_keywords_moves_the_hook() {
    let mut s = session(spec(3, 1, Exhaustion::Best, false));
    s.start();
    play(&mut s, "一", pass(), &["桜"], None);
    play(&mut s, "二", pass(), &["金閣寺"], None);
    assert_eq!(s.topic().hook.as_deref(), Some("金閣寺"));
    assert_eq!(s.context().count(), 2);
}

#[test]
fn retry_guidance_names_the_rejected_attempt() {
    let mut s = session(spec(2, 3, Exhaustion::Best, false));
    s.start();
    play(&mut s, "一", pass(), &[], None);
    let out = play(
        &mut s,
        "二",
        verdict(vec![finding(RuleId::Praise, Status::Retry, "褒めすぎ")]),
        &[],
        None,
    );
    let (_, _, attempt, g, _) = generate_of(&out).unwrap();
    assert_eq!(attempt, 2);
    assert!(g[0].contains("ターン2・案1"), "{g:?}");
    assert_eq!(policy::kind_of(&g[0]), policy::GuidanceKind::Retry);
}

/// An owner instruction given while turn 1 is under way is for turn 2: every attempt of it,
/// also after the turn is held and regenerated, and never turn 3.
#[test]
fn an_owner_instruction_stays_until_its_turn_is_committed() {
    let has = |out: &[Effect]| {
        let (_, _, _, _, p) = generate_of(out).unwrap();
        last_prompt(&p).contains("【オーナー指示】\n鳩の話を")
    };
    let mut s = session(spec(3, 2, Exhaustion::Hold, false));
    s.start();
    s.handle(Event::Inject("鳩の話を".into()));
    let out = play(&mut s, "一", pass(), &[], None);
    assert!(has(&out), "turn 2, attempt 1");
    let out = exhaust(&mut s, 1, &[]);
    assert!(has(&out), "turn 2, attempt 2");
    exhaust(&mut s, 1, &[]);
    assert_eq!(s.state(), State::Held);
    let out = s.handle(Event::Regenerate { turn: 2 });
    assert!(has(&out), "turn 2 regenerated");
    let out = play(&mut s, "二", pass(), &[], None);
    assert!(!has(&out), "turn 3");
}

/// Paused before a turn's first prompt: the instruction is for that turn.
#[test]
fn an_owner_instruction_while_paused_between_turns_is_for_the_waiting_turn() {
    let mut s = session(spec(3, 2, Exhaustion::Best, false));
    s.start();
    s.handle(Event::Pause);
    play(&mut s, "一", pass(), &[], None);
    assert_eq!(s.state(), State::Paused);
    s.handle(Event::Inject("雨の話を".into()));
    let out = s.handle(Event::Resume);
    let (turn, _, _, _, p) = generate_of(&out).unwrap();
    assert_eq!(turn, 2);
    assert!(last_prompt(&p).contains("雨の話を"));
    let _ = kw(&[]);
}
