//! Keywords written in halves: the pieces of each keyword shape, the halves a text gives, and
//! the review over generated lines — halves of most keywords, or one compound written apart, are
//! hints; one common kanji, or pieces of one keyword only, are not.

use super::*;
use crate::vault::leak::{Importance, LeakSecret, ReviewConfig, ReviewResult, Reviewer};

fn chars(s: &str) -> Vec<char> {
    s.chars().collect()
}

fn kanji_of(p: &[Piece]) -> Vec<(String, Place)> {
    p.iter().map(|p| (p.kanji.iter().collect(), p.at)).collect()
}

#[test]
fn pieces_follow_the_keywords_shape() {
    assert_eq!(
        kanji_of(&pieces(0, "工房")),
        [("工".into(), Place::Front), ("房".into(), Place::Back)]
    );
    assert_eq!(
        kanji_of(&pieces(0, "料理帳")),
        [
            ("料".into(), Place::Front),
            ("理帳".into(), Place::Back),
            ("料理".into(), Place::Front),
            ("帳".into(), Place::Back)
        ]
    );
    assert_eq!(
        kanji_of(&pieces(0, "引っ越し")),
        [("引".into(), Place::Whole), ("越".into(), Place::Whole)]
    );
    // One kanji says too little; kana alone has no kanji piece.
    assert!(pieces(0, "春から").is_empty());
    assert!(pieces(0, "こうぼう").is_empty());
}

#[test]
fn one_kanji_counts_only_standing_alone() {
    let p = pieces(0, "工房");
    assert_eq!(halves_present(&chars("「工」のつく場所"), &p, 1), [0b01]);
    assert_eq!(halves_present(&chars("工場で働く"), &p, 1), [0]);
    assert_eq!(halves_present(&chars("工の字と房の字"), &p, 1), [0b11]);
    // The keyword whole is the keyword check's to find, not a pair of halves.
    let p = pieces(0, "料理帳");
    assert_eq!(halves_present(&chars("祖母の料理帳"), &p, 1), [0]);
    assert_eq!(halves_present(&chars("料理の帳面"), &p, 1), [0b01]);
    assert_eq!(halves_present(&chars("料理の帳"), &p, 1), [0b11]);
}

#[test]
fn hinted_needs_a_compound_apart_or_most_keywords() {
    assert!(hinted(&[0b11, 0, 0], 3));
    assert!(hinted(&[0b01, 0b10, 0], 3));
    assert!(!hinted(&[0b01, 0, 0], 3));
    assert!(!hinted(&[0b01, 0b01, 0, 0], 4));
    assert!(hinted(&[0b01, 0b01, 0b10, 0], 4));
}

fn yana() -> ReviewInput {
    ReviewInput {
        secrets: vec![LeakSecret {
            id: "SEC-YANA-01".into(),
            entity: "やな".into(),
            content: "やなは春から海沿いの町の工房で働くことが決まっている".into(),
            level: 0,
            importance: Importance::Critical,
            forbidden_keywords: vec![
                "工房".into(),
                "海沿い".into(),
                "引っ越し".into(),
                "春から".into(),
            ],
            allowed_expressions: vec![],
            subtlety: 7,
        }],
        ..Default::default()
    }
}

/// Generated lines: an opener, halves of two keywords (or one compound written apart), a
/// closer — every one flagged; the same frames with one common kanji only — none.
#[test]
fn halves_of_the_keywords_are_flagged_and_one_common_kanji_is_not() {
    let cfg = ReviewConfig::default();
    let r = Reviewer::with_dict(&yana(), &cfg, crate::safety::variants::Dict::none());
    let openers = ["ねえ、", "実はさ、", "", "あゆには内緒だけど、"];
    let closers = ["なんだ。", "かもね。", "って感じ。", "…まあいいや。"];
    let leaks = [
        "海の近くの、工がつくところで働くの",
        "「工」の字に「房」って書くとこ",
        "海が見える町に引っ張られて越すの",
        "引いて越す準備、海のほうに",
        "工ってつくお店、海のそばの",
    ];
    let innocent = [
        "海に行きたいな",
        "工場見学、楽しかった",
        "春から新しいドラマが始まる",
        "この坂、引き返そうか",
        "海沿いじゃない公園",
    ];
    for o in openers {
        for c in closers {
            for l in leaks {
                let line = format!("{o}{l}{c}");
                let rv = r.review(&line);
                let flagged = matches!(rv.result, ReviewResult::Rejected | ReviewResult::Warning);
                assert!(flagged, "{line}: {:?}", rv.issues);
            }
            for l in &innocent[..4] {
                let line = format!("{o}{l}{c}");
                let rv = r.review(&line);
                assert!(
                    !rv.issues
                        .iter()
                        .any(|i| i.detail.contains("分けて書かれて")),
                    "{line}: {:?}",
                    rv.issues
                );
            }
        }
    }
}
