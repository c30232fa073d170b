//! Leak review folds keyword variants (issue 16 §3): the observed approvals of 「こうぼう」
//! 「コウボウ」「ひっこし」「工　房」 are rejections now; innocent lines stay approved; without a
//! dictionary the review says readings were not checked. And `forbidden_keywords_global`
//! (seed 004 §6.2).

use super::*;
use crate::safety::variants::Dict;

fn input() -> ReviewInput {
    ReviewInput {
        secrets: vec![LeakSecret {
            id: "SEC-YANA-01".into(),
            entity: "やな".into(),
            content: "やなは春から海沿いの町の工房で働くことが決まっている".into(),
            level: 0,
            importance: Importance::Critical,
            forbidden_keywords: vec!["工房".into(), "海沿い".into(), "引っ越し".into()],
            allowed_expressions: vec![],
            subtlety: 7,
        }],
        settings: vec![],
        forbidden_keywords_global: vec!["禁忌の魔法".into(), "最終兵器".into()],
        keyword_readings: Default::default(),
    }
}

fn ipadic() -> Option<Dict> {
    crate::text::testing::ipadic().map(Dict::from)
}

fn keyword_spans(r: &Review) -> Vec<[usize; 2]> {
    r.issues
        .iter()
        .filter(|i| i.kind == IssueKind::ForbiddenKeyword)
        .map(|i| i.span)
        .collect()
}

#[test]
fn observed_approvals_are_rejected() {
    let cfg = ReviewConfig::default();
    let mut cases = vec![
        ("工　房", false),
        ("工・房", false),
        ("引越し", false),
        ("引越", false),
    ];
    cases.extend([
        ("こうぼう", true),
        ("コウボウ", true),
        ("ひっこし", true),
        ("ｺｳﾎﾞｳ", true),
    ]);
    let dicts: Vec<Dict> = [Some(Dict::none()), ipadic()]
        .into_iter()
        .flatten()
        .collect();
    for dict in dicts {
        let reviewer = Reviewer::with_dict(&input(), &cfg, dict.clone());
        for (word, reading) in &cases {
            let text = format!("ねえ、{word}の話って本当？");
            let r = reviewer.review(&text);
            let expect = !reading || dict.has_readings();
            let span = [3, 3 + word.chars().count()];
            assert_eq!(
                keyword_spans(&r).contains(&span),
                expect,
                "{dict:?} {text}: {:#?}",
                r.issues
            );
            if expect {
                assert_eq!(r.result, ReviewResult::Rejected, "{text}");
            }
            let status = if dict.has_readings() {
                ReadingsStatus::Checked
            } else {
                ReadingsStatus::NotChecked
            };
            assert_eq!(r.readings, status);
        }
        for text in [
            "けっこうぼうっとしてた。",
            "工作室は暖房が効いている。",
            "弘法も筆の誤り。",
        ] {
            assert!(
                keyword_spans(&reviewer.review(text)).is_empty(),
                "{dict:?} {text}"
            );
        }
    }
}

#[test]
fn global_keywords_are_forbidden_in_every_spelling() {
    let reviewer = Reviewer::with_dict(&input(), &ReviewConfig::default(), Dict::none());
    for text in [
        "あれは禁忌の魔法だよ。",
        "最　終　兵　器？",
        "最終 兵器！",
        "最終・兵器",
    ] {
        let r = reviewer.review(text);
        let hit = r
            .issues
            .iter()
            .find(|i| i.kind == IssueKind::ForbiddenKeyword);
        let hit = hit.unwrap_or_else(|| panic!("{text}: {:#?}", r.issues));
        assert_eq!(hit.secret_id, None);
        assert!(
            hit.detail.contains("作品全体の禁止キーワード"),
            "{}",
            hit.detail
        );
        assert_eq!(r.result, ReviewResult::Rejected);
    }
    assert!(reviewer.review("魔法の話をしよう。").issues.is_empty());
}
