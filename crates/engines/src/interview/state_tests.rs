//! Property-style tests of the state machine over many generated conversations.

use super::config::InterviewConfig;
use super::state::*;

/// The seeded generator (fastrand): `next(n)` in `0..n`.
struct Lcg(fastrand::Rng);
impl Lcg {
    fn next(&mut self, n: usize) -> usize {
        self.0.usize(..n)
    }
}

const ANSWERS: [&str; 9] = [
    "はい",
    "お願いします",
    "献立です",
    "買い物、洗い物",
    "それだけです",
    SKIP,
    "冷蔵庫の野菜が余ります",
    "特にないです",
    "週末にまとめて作りたい",
];

fn cfg(max_turns: usize, max_deep: usize) -> InterviewConfig {
    let mut c = InterviewConfig::sample();
    c.max_turns = max_turns;
    c.max_deep = max_deep;
    c
}

#[test]
fn every_conversation_ends_by_the_turn_limit_and_states_only_move_forward() {
    let order = |s: State| match s {
        State::Intro => 0,
        State::Enumerate => 1,
        State::Recommend => 2,
        State::Choose => 3,
        State::Deepening => 4,
        State::SummaryCheck => 5,
        State::Fallback => 6,
        State::Done => 7,
    };
    let mut g = Lcg(fastrand::Rng::with_seed(7));
    for case in 0..2000 {
        let (max_turns, max_deep) = (1 + g.next(14), g.next(4));
        let c = cfg(max_turns, max_deep);
        let mut m = Machine::new(&c, false);
        assert_eq!(m.start(), Next::Model);
        let fail_at = if case % 3 == 0 {
            Some(g.next(10))
        } else {
            None
        };
        let mut prev = order(m.state);
        let mut deep_seen = 0;
        for turn in 1..=40 {
            let a = ANSWERS[g.next(ANSWERS.len())];
            let next = m.user(a);
            assert!(m.user_turns <= max_turns, "case {case}");
            assert!(
                order(m.state) >= prev,
                "case {case}: went back to {:?}",
                m.state
            );
            prev = order(m.state);
            assert!(m.deep <= max_deep.max(1), "case {case}");
            deep_seen = deep_seen.max(m.deep);
            assert!(!m.items.iter().any(|i| i == SKIP));
            if let Next::Finish { why, .. } = next {
                assert!(m.is_done());
                if why == Finish::TurnLimit {
                    assert_eq!(m.user_turns, max_turns, "case {case}");
                }
                break;
            }
            assert!(
                turn < max_turns,
                "case {case}: past the limit without finishing"
            );
            if fail_at == Some(turn) && !m.fallback_mode {
                let before = m.user_turns;
                match m.model_failed() {
                    Next::Fixed { question, .. } => assert_eq!(question, 1),
                    other => panic!("case {case}: {other:?}"),
                }
                assert_eq!((m.state, m.user_turns), (State::Fallback, before));
                prev = order(m.state);
            }
        }
        assert!(m.is_done(), "case {case}: unfinished after 40 answers");
    }
}

#[test]
fn fallback_asks_the_three_questions_in_order_then_thanks() {
    let c = cfg(12, 2);
    for skips in 0..8u32 {
        let mut m = Machine::new(&c, true);
        let mut asked = vec![];
        let mut next = m.start();
        let mut i = 0;
        loop {
            match next {
                Next::Fixed { question, text } => {
                    assert_eq!(text, c.fallback_questions[question - 1]);
                    asked.push(question);
                }
                Next::Finish { why, text } => {
                    assert_eq!(why, Finish::FallbackDone);
                    assert_eq!(text, c.closing_message);
                    break;
                }
                Next::Model => panic!("fallback never asks the model"),
            }
            let a = if skips & (1 << i) != 0 {
                SKIP
            } else {
                "献立です"
            };
            i += 1;
            next = m.user(a);
        }
        assert_eq!(asked, [1, 2, 3]);
        assert_eq!(m.answers.len(), 3 - skips.count_ones() as usize);
        assert_eq!(m.state, State::Done);
    }
}

#[test]
fn ending_words_and_opening_signals() {
    for w in ENDING_WORDS {
        assert!(has_ending_word(&format!("ほかには{w}です")));
    }
    for s in [
        "はい",
        "はい、お願いします",
        "始めてください",
        "OK!",
        "よろしく。",
    ] {
        assert!(is_opening_signal(s), "{s}");
    }
    for s in ["献立です", "はい、献立です", "いいですよ"] {
        assert!(!is_opening_signal(s), "{s}");
    }
    assert_eq!(
        items_of("献立、買い物・洗い物\n掃除"),
        ["献立", "買い物", "洗い物", "掃除"]
    );
    assert!(items_of(SKIP).is_empty());
}
