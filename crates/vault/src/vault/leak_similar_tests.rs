//! The similarity check at each importance threshold, and both explicit-hint rules.

use super::super::super::tests::{CAT, LETTER, of, run, secret, v, world};
use super::content_words;
use crate::vault::leak::checks::round3;
use crate::vault::leak::*;
use crate::vault::similarity::similarity;

/// Sentences about the cat secret, by rising score: each importance threshold has one just
/// below and one just above it (within 0.07).
const LADDER: [&str; 6] = [
    "実はね、私、お姉ちゃんに内緒で猫を飼ってたんだ。",
    "昔、内緒で猫を飼っていたんだ。",
    "昔、あゆはお姉ちゃんに内緒で拾った猫をこっそり飼っていた。",
    "姉に内緒で猫を拾った。",
    "あゆは内緒で猫を拾って飼っていた。",
    "あゆは昔、姉に内緒で拾った猫を飼っていた。",
];

#[test]
fn similarity_flags_sentences_above_each_importance_threshold() {
    let scores: Vec<f64> = LADDER.iter().map(|s| similarity(CAT, "あゆ", s)).collect();
    assert!(scores.windows(2).all(|w| w[0] < w[1]), "{scores:?}");
    let cfg = ReviewConfig::default();
    for importance in [
        Importance::Critical,
        Importance::High,
        Importance::Medium,
        Importance::Low,
    ] {
        let th = cfg.thresholds.get(importance);
        let below = scores
            .iter()
            .copied()
            .filter(|&s| s <= th)
            .fold(0.0, f64::max);
        let above = scores
            .iter()
            .copied()
            .filter(|&s| s > th)
            .fold(1.0, f64::min);
        assert!(
            th - below < 0.07 && above - th < 0.07,
            "{importance:?}: {below} {above}"
        );
        let mut s = secret("SEC-CAT", "あゆ", CAT, 1);
        s.importance = importance;
        let input = ReviewInput {
            secrets: vec![s],
            settings: vec![],
            ..Default::default()
        };
        for (line, &score) in LADDER.iter().zip(&scores) {
            let r = review(line, &input, &cfg);
            let hits = of(&r, IssueKind::Similarity);
            assert_eq!(
                hits.len(),
                usize::from(score > th),
                "{importance:?} {score} {line}"
            );
            if let Some(hit) = hits.first() {
                assert_eq!(hit.severity, Severity::High);
                assert_eq!(hit.score, Some(round3(score)));
                assert_eq!(
                    hit.detail,
                    format!("秘密SEC-CATとの類似度が{score:.2}です（閾値{th:.2}）")
                );
                assert_eq!(hit.span, [0, line.chars().count()]);
            }
        }
    }
}

#[test]
fn explicit_hints_by_score_band_and_by_content_words() {
    let cfg = ReviewConfig::default();
    // 0.42 for the letter (threshold 0.60): too explicit for a level-2 secret.
    let line = "やなは机の引き出しに何かを隠している。";
    let score = similarity(LETTER, "やな", line);
    assert!(
        score > cfg.explicit_hint_threshold && score <= 0.60,
        "{score}"
    );
    let r = run(line);
    let hints = of(&r, IssueKind::ExplicitHint);
    assert_eq!(hints.len(), 1);
    assert_eq!(hints[0].severity, Severity::Medium);
    assert_eq!(hints[0].secret_id.as_deref(), Some("SEC-002"));
    assert_eq!(r.result, ReviewResult::Warning);

    // Below the band, but two of the secret's three content words (東京, 音楽大学; 合格通知)
    // in one sentence.
    let line = "東京の音楽大学って、どんなところなんだろう。";
    assert!(similarity(LETTER, "やな", line) <= cfg.explicit_hint_threshold);
    let r = run(line);
    let hints = of(&r, IssueKind::ExplicitHint);
    assert_eq!(hints.len(), 1, "{:#?}", r.issues);
    assert!(hints[0].detail.contains("2つ"), "{}", hints[0].detail);
    assert_eq!(hints[0].score, None);
    // One content word is not a hint. For a level-1 secret (the reader must not guess it)
    // the same sentence is a latent hint (潜在的暗示, seed 004 §6.3), not an explicit one.
    assert!(run("東京って遠いね。").issues.is_empty());
    let mut input = world();
    input.secrets[1].level = 1;
    let r = review(line, &input, &cfg);
    assert!(
        of(&r, IssueKind::ExplicitHint).is_empty(),
        "{:#?}",
        r.issues
    );
    let latent = of(&r, IssueKind::LatentHint);
    assert_eq!(latent.len(), 1, "{:#?}", r.issues);
    assert_eq!(latent[0].severity, Severity::Medium);
    assert!(
        latent[0].detail.contains("潜在的暗示"),
        "{}",
        latent[0].detail
    );
    assert_eq!(r.result, ReviewResult::Warning);
    // And by score: the letter line above, for a level-0 secret.
    input.secrets[1].level = 0;
    let r = review("やなは机の引き出しに何かを隠している。", &input, &cfg);
    let latent = of(&r, IssueKind::LatentHint);
    assert_eq!(latent.len(), 1, "{:#?}", r.issues);
    assert!(latent[0].score.is_some());
}

#[test]
fn content_words_hint_only_when_they_are_most_of_the_secret() {
    let content = "やなは放課後、駅前の喫茶店で古い地図を燃やした";
    assert_eq!(
        content_words(content, "やな"),
        v(&["放課後", "駅前", "喫茶店", "地図"])
    );
    let mut s = secret("SEC-MAP", "やな", content, 2);
    s.importance = Importance::Low;
    let input = ReviewInput {
        secrets: vec![s],
        settings: vec![],
        ..Default::default()
    };
    // Scores out of the way: only the word rule can hint.
    let cfg = ReviewConfig {
        explicit_hint_threshold: 1.0,
        ..ReviewConfig::default()
    };
    let hints = |line: &str| {
        let r = review(line, &input, &cfg);
        assert!(of(&r, IssueKind::Similarity).is_empty(), "{line}");
        of(&r, IssueKind::ExplicitHint).len()
    };
    // Two of four: only where it happened.
    assert_eq!(hints("雨の日、二人は駅前の喫茶店に入った。"), 0);
    // Three of four: where, when and what.
    assert_eq!(
        hints("放課後になると、駅前の喫茶店でずっと地図ばかり見ていたよね。"),
        1
    );
}

#[test]
fn a_hint_never_repeats_a_stronger_issue() {
    // Keyword and content words in one sentence: the keyword is reported, not a hint too.
    let r = run("東京の音楽大学の合格通知だよ。");
    assert!(!of(&r, IssueKind::ForbiddenKeyword).is_empty());
    assert!(
        of(&r, IssueKind::ExplicitHint).is_empty(),
        "{:#?}",
        r.issues
    );
}

/// A secret's words spread over two neighbouring sentences, neither enough alone, are one
/// hint over both; with a sentence between them, or one word only, nothing.
#[test]
fn a_secret_split_over_two_sentences_is_a_hint() {
    let words = content_words(LETTER, "やな");
    assert!(words.len() >= 3, "{words:?}");
    let openers = ["ねえ、", "そういえば", "", "実は"];
    let closers = ["の話、知ってる？", "ってすごいよね", "かあ", "のことだけど"];
    let mut rng = fastrand::Rng::with_seed(4242);
    for level in [0u8, 1, 2] {
        let input = ReviewInput {
            secrets: vec![secret("SEC-LETTER", "やな", LETTER, level)],
            settings: vec![],
            ..ReviewInput::default()
        };
        for _ in 0..30 {
            let i = rng.usize(0..words.len());
            let j = (i + 1 + rng.usize(0..words.len() - 1)) % words.len();
            let one = format!(
                "{}{}{}。",
                rng.choice(openers).unwrap(),
                words[i],
                rng.choice(closers).unwrap()
            );
            let two = format!(
                "{}{}{}。",
                rng.choice(openers).unwrap(),
                words[j],
                rng.choice(closers).unwrap()
            );
            let split = |r: &Review| {
                r.issues
                    .iter()
                    .any(|x| x.detail.contains("分割"))
                    .then_some(())
            };
            let together = format!("{one}{two}");
            let r = review(&together, &input, &ReviewConfig::default());
            assert!(split(&r).is_some(), "{together}: {:?}", r.issues);
            assert_ne!(r.result, ReviewResult::Approved, "{together}");
            let apart = format!("{one}今日は晴れだね。{two}");
            let r = review(&apart, &input, &ReviewConfig::default());
            assert!(split(&r).is_none(), "{apart}: {:?}", r.issues);
            let r = review(&one, &input, &ReviewConfig::default());
            assert!(split(&r).is_none(), "{one}");
        }
    }
}
