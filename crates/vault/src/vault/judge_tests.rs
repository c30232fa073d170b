//! The model judge's pure parts: what it asks, how it reads an answer, which secrets it asks
//! about, and what a review says afterwards — over generated secrets, answers and failures.

use super::*;
use crate::vault::leak::{Importance, MODEL_CHECK, ReviewConfig, ReviewResult, Reviewer};

fn secret(i: usize, level: u8, importance: Importance) -> LeakSecret {
    LeakSecret {
        id: format!("SEC-{i:02}"),
        entity: format!("人物{i}"),
        content: format!("人物{i}は秘密の場所{i}で別の名前を使って暮らしている"),
        level,
        importance,
        // Kana only: no reading to look up, so the review is the same with or without the
        // dictionary (a kanji keyword without one is a check that did not run).
        forbidden_keywords: vec![format!("ばしょ{i}")],
        allowed_expressions: vec![],
        subtlety: 5,
    }
}

fn input(secrets: Vec<LeakSecret>) -> ReviewInput {
    ReviewInput {
        secrets,
        ..ReviewInput::default()
    }
}

const IMPORTANCE: [Importance; 4] = [
    Importance::Low,
    Importance::Medium,
    Importance::High,
    Importance::Critical,
];

#[test]
fn answers_are_read_as_yes_no_or_neither() {
    let yes = [
        "はい",
        "はい。",
        " はい\n",
        "「はい」",
        "**はい**",
        "Yes",
        "yes.",
        "TRUE",
    ];
    let no = [
        "いいえ",
        "いいえ。",
        "「いいえ」",
        "No",
        "no",
        "False",
        "　いいえ",
    ];
    let neither = [
        "",
        "たぶん",
        "わかりません",
        "秘密です",
        "maybe",
        "え？",
        "い",
        "は",
    ];
    for a in yes {
        assert_eq!(parse(a), Some(true), "{a:?}");
    }
    for a in no {
        assert_eq!(parse(a), Some(false), "{a:?}");
    }
    for a in neither {
        assert_eq!(parse(a), None, "{a:?}");
    }
}

/// The judge's prompt carries the secret and the line, once each; nothing else of the vault.
#[test]
fn the_request_names_one_secret_and_the_line() {
    let mut rng = fastrand::Rng::with_seed(38);
    for i in 0..50 {
        let s = secret(i, rng.u8(0..2), IMPORTANCE[rng.usize(0..4)]);
        let line: String = (0..rng.usize(1..60))
            .map(|_| rng.char('ぁ'..='ん'))
            .collect();
        let r = request(&s, &line);
        assert_eq!(r.messages.len(), 2);
        let user = &r.messages[1].content;
        assert_eq!(user.matches(s.content.as_str()).count(), 1);
        assert!(user.contains(line.as_str()));
        assert!(r.messages[0].content.contains("「はい」か「いいえ」"));
        assert_eq!(r.temperature, Some(0.0));
        assert!(r.max_tokens.is_some_and(|m| m <= 16));
        let other = secret(i + 100, 0, Importance::High);
        assert!(!user.contains(other.content.as_str()));
    }
}

/// Only secrets of level 0 and 1 are asked about, most important first, at most `max`; the
/// count of those that needed asking is kept so a partial judge says so.
#[test]
fn the_plan_asks_about_hidden_secrets_most_important_first() {
    let mut rng = fastrand::Rng::with_seed(381);
    for _ in 0..100 {
        let n = rng.usize(1..10);
        let secrets: Vec<LeakSecret> = (0..n)
            .map(|i| secret(i, rng.u8(0..4), IMPORTANCE[rng.usize(0..4)]))
            .collect();
        let hidden: Vec<usize> = (0..n).filter(|&i| secrets[i].level <= 1).collect();
        let inp = input(secrets);
        let review = Reviewer::new(&inp, &ReviewConfig::default()).review("今日はいい天気だね。");
        let max = rng.usize(1..8);
        match plan(&review, &inp, "今日はいい天気だね。", max) {
            Ok((asked, total)) => {
                assert_eq!(total, hidden.len());
                assert_eq!(asked.len(), hidden.len().min(max));
                assert!(asked.iter().all(|i| hidden.contains(i)));
                let imp: Vec<Importance> =
                    asked.iter().map(|&i| inp.secrets[i].importance).collect();
                assert!(imp.windows(2).all(|w| w[0] <= w[1]), "{imp:?}");
                // Nothing left out is more important than what was asked.
                let worst = imp.last().copied();
                for &h in &hidden {
                    if !asked.contains(&h) {
                        assert!(Some(inp.secrets[h].importance) >= worst);
                    }
                }
            }
            Err(reason) => {
                assert!(hidden.is_empty(), "{reason}");
            }
        }
    }
}

#[test]
fn nothing_is_asked_for_an_empty_or_already_rejected_line() {
    let inp = input(vec![secret(1, 0, Importance::High)]);
    let reviewer = Reviewer::new(&inp, &ReviewConfig::default());
    for text in ["", "　", "。。。", "……"] {
        assert!(
            plan(&reviewer.review(text), &inp, text, 6).is_err(),
            "{text:?}"
        );
    }
    // The forbidden keyword rejects it already: the judge is not needed.
    let leak = "ばしょ1に住んでるんだって";
    let r = reviewer.review(leak);
    assert_eq!(r.result, ReviewResult::Rejected);
    assert!(plan(&r, &inp, leak, 6).is_err());
    // Emoji alone are something to judge.
    assert!(plan(&reviewer.review("🏝️🤫"), &inp, "🏝️🤫", 6).is_ok());
}

/// Yes is a critical issue naming the secret (never its content); any failure makes the check
/// not run, so the line is never plainly approved; all no with every secret asked is approved.
#[test]
fn answers_settle_the_review() {
    let mut rng = fastrand::Rng::with_seed(3838);
    for _ in 0..200 {
        let n = rng.usize(1..6);
        let inp = input((0..n).map(|i| secret(i, 0, Importance::High)).collect());
        let text = "今日は商店街でコロッケを買ったよ。";
        let mut review = Reviewer::new(&inp, &ReviewConfig::default()).review(text);
        let asked: Vec<usize> = (0..n).collect();
        let answers: Vec<Result<bool, String>> = (0..n)
            .map(|_| match rng.u8(0..10) {
                0 => Err("connection refused".into()),
                1..=2 => Ok(true),
                _ => Ok(false),
            })
            .collect();
        let yes = answers.iter().filter(|a| matches!(a, Ok(true))).count();
        let failed = answers.iter().any(|a| a.is_err());
        record(&mut review, &inp, text, &asked, n, answers);
        let judged: Vec<&LeakIssue> = review
            .issues
            .iter()
            .filter(|i| i.kind == IssueKind::ModelJudged)
            .collect();
        assert_eq!(judged.len(), yes);
        for i in &judged {
            assert_eq!(i.span, [0, text.chars().count()]);
            let s = inp
                .secrets
                .iter()
                .find(|s| Some(&s.id) == i.secret_id.as_ref());
            assert!(s.is_some_and(|s| !i.detail.contains(s.content.as_str())));
        }
        if yes > 0 {
            assert_eq!(review.result, ReviewResult::Rejected);
        } else if failed {
            assert_eq!(review.result, ReviewResult::ApprovedWithoutSemantic);
        } else {
            assert_eq!(review.result, ReviewResult::Approved);
        }
        assert_eq!(review.judge.failed(), failed);
        assert_eq!(review.unchecked.iter().any(|c| c == MODEL_CHECK), failed);
    }
}

/// A judge that asked about only some of the secrets says so and never counts as complete.
#[test]
fn a_partial_judge_is_named() {
    let inp = input((0..4).map(|i| secret(i, 0, Importance::High)).collect());
    let text = "今日は商店街でコロッケを買ったよ。";
    let mut review = Reviewer::new(&inp, &ReviewConfig::default()).review(text);
    record(
        &mut review,
        &inp,
        text,
        &[0, 1],
        4,
        vec![Ok(false), Ok(false)],
    );
    assert!(!review.judge.complete());
    assert!(review.unchecked.iter().any(|c| c == MODEL_CHECK));
    assert_eq!(review.result, ReviewResult::ApprovedWithoutSemantic);
    let f = crate::vault::review::coverage(&review);
    assert!(f.message.contains("4件中2件"), "{}", f.message);
    assert_eq!(f.status, crate::director::Status::Warn);
}

/// Reviews stored before the judge existed read as "no judge", never as one that ran.
#[test]
fn an_old_stored_review_has_no_judge() {
    let inp = input(vec![secret(1, 0, Importance::High)]);
    let review = Reviewer::new(&inp, &ReviewConfig::default()).review("こんにちは。");
    let mut v = serde_json::to_value(&review).unwrap();
    v.as_object_mut().unwrap().remove("judge");
    let back: Review = serde_json::from_value(v).unwrap();
    assert_eq!(back.judge, JudgeStatus::Disabled);
    assert!(!back.judge.complete());
}
