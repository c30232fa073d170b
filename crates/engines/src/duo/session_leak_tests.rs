//! A line the leak review rejected never travels on: it is committed as her fallback line
//! (marked `withheld`), no later prompt of either sister carries it, and no retry instruction
//! names the secret; a RETRY line committed because the attempts ran out reaches later prompts
//! as her fallback line too. Generated over policies, attempt counts, secrets and speakers.

use super::tests::{finding, generate_of, pass, play, session, spec, verdict};
use super::*;
use crate::director::{Finding, RuleId};

/// A leak finding as the vault review words one for a secret the speaker may know: it names the
/// keyword (the non-neutral wording), so a guidance line built from it would carry the secret.
fn leak(word: &str, n: usize) -> Finding {
    Finding::new(
        RuleId::Leak,
        Status::Retry,
        // A different wording each attempt, so the retries are not futile.
        format!("秘密「{word}」に触れています（{n}）"),
        format!("「{word}」を言わずに言い直す"),
    )
    .with_span(Some(0..word.len()))
    .with_evidence(format!("keyword secret-{word}"))
}

/// Every text a prompt carries, joined.
fn prompt_text(p: &Prompt) -> String {
    p.messages
        .iter()
        .map(|m| m.content.as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

const SECRETS: [&str; 4] = ["封印の鍵", "王家の血筋", "ミナト計画", "黒い手紙"];

#[test]
fn a_rejected_leak_is_never_committed_nor_carried() {
    let policies = [Exhaustion::Best, Exhaustion::Last, Exhaustion::Hold];
    for (n, secret) in SECRETS.iter().enumerate() {
        for policy in policies {
            for attempts in 1..=3 {
                // The leaking turn is やな's (turn 1) or あゆ's (turn 2).
                let leaking_turn = 1 + (n % 2);
                check_case(secret, policy, attempts, leaking_turn);
            }
        }
    }
}

fn check_case(secret: &str, policy: Exhaustion, attempts: usize, leaking_turn: usize) {
    let case = format!("{secret} {policy:?} ×{attempts} turn {leaking_turn}");
    let mut s = session(spec(6, attempts, policy, false));
    let mut out = s.start();
    if leaking_turn == 2 {
        out = play(&mut s, "見て、川が光ってる！", pass(), &["川"], None);
    }
    for i in 1..=attempts {
        let text = format!("実は{secret}のことなんだけど、案{i}");
        let v = verdict(vec![leak(secret, i)]);
        // Every regeneration's instruction: none names the secret.
        if let Some((_, _, _, guidance, prompt)) = generate_of(&out) {
            assert!(!guidance.join("").contains(secret), "{case}: {guidance:?}");
            assert!(!prompt_text(&prompt).contains(secret), "{case}");
        }
        out = play(&mut s, &text, v, &[], None);
    }
    if policy == Exhaustion::Hold {
        assert_eq!(s.state(), State::Held, "{case}");
        out = s.handle(Event::Choose { attempt: attempts });
    }
    let c: Vec<&TurnRecord> = out
        .iter()
        .filter_map(|e| match e {
            Effect::TurnCommitted(r) => Some(&**r),
            _ => None,
        })
        .collect();
    assert_eq!(c.len(), 1, "{case}");
    assert!(c[0].flags.withheld, "{case}");
    let fallback = s.fallback_of(&c[0].speaker);
    assert!(!fallback.is_empty());
    assert_eq!(c[0].text, fallback, "{case}");
    assert!(s.committed().all(|r| !r.text.contains(secret)), "{case}");
    // Every later request of both sisters, regenerations included, is free of it.
    let mut later = 0;
    for t in 0..3 {
        let (_, _, _, guidance, prompt) = generate_of(&out).expect("a next attempt");
        assert!(!prompt_text(&prompt).contains(secret), "{case} later {t}");
        assert!(!guidance.join("").contains(secret), "{case} later {t}");
        later += 1;
        let v = if t == 1 {
            verdict(vec![finding(RuleId::Tone, Status::Warn, "口調")])
        } else {
            pass()
        };
        out = play(&mut s, &format!("次の話{t}だよね！"), v, &["話"], None);
    }
    assert_eq!(later, 3, "{case}");
}

/// The same line without a leak finding is committed as said (nothing replaced).
#[test]
fn an_exhausted_line_without_a_leak_is_committed_as_said() {
    for attempts in 1..=3 {
        let mut s = session(spec(4, attempts, Exhaustion::Last, false));
        s.start();
        let mut out = Vec::new();
        for i in 1..=attempts {
            let v = verdict(vec![finding(
                RuleId::Tone,
                Status::Retry,
                &format!("口調{i}"),
            )]);
            out = play(&mut s, &format!("ごきげんよう{i}"), v, &[], None);
        }
        let committed = s.committed().last().unwrap();
        assert!(!committed.flags.withheld);
        assert_eq!(committed.text, format!("ごきげんよう{attempts}"));
        // …but later prompts carry her fallback line in its place, never the RETRY line.
        let (_, _, _, _, prompt) = generate_of(&out).unwrap();
        let text = prompt_text(&prompt);
        assert!(!text.contains("ごきげんよう"), "{text}");
        assert!(text.contains(&s.fallback_of("yana")), "{text}");
    }
}

/// A leak finding's guidance is neutral however it was worded, and never repeated.
#[test]
fn leak_guidance_is_neutral_and_not_repeated() {
    for secret in SECRETS {
        let v = verdict(vec![leak(secret, 1), leak(secret, 1), leak(secret, 1)]);
        let g = policy::retry_guidance(&v, 3, 1);
        assert!(!g.join("").contains(secret), "{g:?}");
        assert_eq!(g.len(), 2, "{g:?}");
        let carried = policy::intervention(&v, 3, "やな");
        assert!(!carried.own.join("").contains(secret));
        assert_eq!(carried.own.len(), 1, "{:?}", carried.own);
    }
}

/// A run whose attempts keep being rejected says so once, as soon as the streak reaches
/// [`UNSUITABLE_STREAK`] — across turns, whatever the attempts per turn; an accepted line resets
/// the streak, and a run with fewer rejections in a row never says it.
#[test]
fn a_run_that_is_mostly_rejected_says_so_once_early() {
    for attempts in 1..=4 {
        let mut s = session(spec(30, attempts, Exhaustion::Best, false));
        s.start();
        let mut said = Vec::new();
        let mut n = 0;
        while s.current().is_some() && n < 40 {
            n += 1;
            let v = verdict(vec![finding(
                RuleId::Tone,
                Status::Retry,
                &format!("口調{n}"),
            )]);
            let out = play(&mut s, &format!("案{n}"), v, &[], None);
            said.extend(out.iter().filter_map(|e| match e {
                Effect::Unsuitable { rejected } => Some((n, *rejected)),
                _ => None,
            }));
        }
        assert_eq!(
            said,
            [(UNSUITABLE_STREAK, UNSUITABLE_STREAK)],
            "×{attempts}"
        );
    }
    // One accepted line in every UNSUITABLE_STREAK attempts: never said.
    let mut s = session(spec(30, 3, Exhaustion::Best, false));
    s.start();
    for n in 1..=40 {
        let v = if n % UNSUITABLE_STREAK == 0 {
            pass()
        } else {
            verdict(vec![finding(
                RuleId::Tone,
                Status::Retry,
                &format!("口調{n}"),
            )])
        };
        let out = play(&mut s, &format!("案{n}"), v, &[], None);
        assert!(
            !out.iter().any(|e| matches!(e, Effect::Unsuitable { .. })),
            "{n}"
        );
        if s.current().is_none() {
            break;
        }
    }
}

/// A leak-rejected line's other findings may quote its words (a topic shift names the new
/// topic): none of them travels back as guidance, to her retry or her next turn.
#[test]
fn no_other_finding_of_a_leaked_line_travels_back() {
    for secret in SECRETS {
        let shift = Finding::new(
            RuleId::EarlyTopicShift,
            Status::Warn,
            format!("直前の話題を掘り下げる前に「{secret}」へ移っています"),
            String::new(),
        );
        let v = verdict(vec![leak(secret, 1), shift]);
        assert!(!policy::retry_guidance(&v, 2, 1).join("").contains(secret));
        let c = policy::intervention(&v, 2, "あゆ");
        assert!(!c.own.join("").contains(secret) && !c.next.join("").contains(secret));
    }
}
