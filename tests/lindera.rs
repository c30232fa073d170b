//! The analyzer-dependent checks again with lindera + IPADIC. Skipped (with a note) when the
//! MeCab IPADIC sources are missing — but under CI=true that is a failure (see common::lindera).

mod common;

use common::{judge_with, rule_status};
use kakeai::director::{RuleId, Status, ToneMode};
use kakeai::text::analyzer::{NounKind, Pos};
use kakeai::text::{Analysis, AnalyzerKind};

#[test]
fn lindera_finds_topics_with_pos() {
    let Some(an) = common::lindera() else { return };
    assert_eq!(an.kind(), AnalyzerKind::LinderaIpadic);
    let heads = |t: &str| -> Vec<String> {
        Analysis::new(t)
            .topics(an)
            .iter()
            .map(|t| t.head.clone())
            .collect()
    };
    assert_eq!(heads("京都は広いですね。"), vec!["京都"]);
    assert_eq!(
        heads("港についてです。灯台の話もしましょう。"),
        vec!["港", "灯台"]
    );
    // は after a noun but followed by a noun, not a conjugating word: no topic.
    assert!(heads("今日は雨。").is_empty());
    // Greetings and compound particles are not topics.
    assert!(heads("こんにちは、あゆ！それではまた。").is_empty());
    // An adverb between は and the predicate is skipped.
    assert_eq!(heads("灯台はとても古いです。"), vec!["灯台"]);
}

#[test]
fn lindera_scatter_boundaries() {
    let Some(an) = common::lindera() else { return };
    let j = |t: &str| judge_with(an, ToneMode::Markers, "ayu", t, &[]);
    let v = j("港についてです。灯台の話もしましょう。商店街は賑やかです。では帰ります。");
    assert_eq!((v.sentences, v.topics), (4, 3));
    assert_eq!(rule_status(&v, RuleId::Scatter), Status::Retry);
    assert_eq!(v.analyzer, AnalyzerKind::LinderaIpadic);
    let v = j("港は広いです。船も見えます。");
    assert_eq!(rule_status(&v, RuleId::Scatter), Status::Pass);
}

#[test]
fn lindera_pos_mapping_and_offsets() {
    let Some(an) = common::lindera() else { return };
    let m = an.tokenize("あの　灯台は古い");
    let t: Vec<(&str, usize, usize)> = m
        .iter()
        .map(|m| (m.surface.as_str(), m.start, m.end))
        .collect();
    assert!(t.contains(&("灯台", 3, 5)), "{t:?}");
    let toudai = m.iter().find(|m| m.surface == "灯台").map(|m| m.pos);
    assert_eq!(toudai, Some(Pos::Noun(NounKind::General)));
    let furui = m.iter().find(|m| m.surface == "古い").map(|m| m.pos);
    assert_eq!(furui, Some(Pos::Adjective));
}

#[test]
fn lindera_keywords_drive_topic_loop() {
    let Some(an) = common::lindera() else { return };
    let ctx = common::FERRIS_WHEEL_TURNS;
    let v = judge_with(
        an,
        ToneMode::Markers,
        "ayu",
        common::FERRIS_WHEEL_AGAIN,
        &ctx,
    );
    assert_eq!(rule_status(&v, RuleId::TopicLoop), Status::Warn);
    let kw = Analysis::new("絶対行くよ！あの観覧車に。");
    let kw = kw.keywords(an);
    assert!(kw.iter().any(|w| w == "観覧車"), "{kw:?}");
    assert!(
        !kw.iter().any(|w| w.contains('行')),
        "no junk keyword like 絶対行: {kw:?}"
    );
}

#[test]
fn check_builds_the_dictionary_on_first_use() {
    if common::lindera().is_none() {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kakeai"))
        .args(["check", "--speaker", "ayu", "--analyzer", "auto", "-"])
        .env("KAKEAI_DATA_DIR", dir.path())
        .env("KAKEAI_CONFIG_DIR", dir.path().join("config"))
        .env_remove("KAKEAI_ANALYZER")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run kakeai");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("building the IPADIC dictionary"), "{err}");
    assert!(dir.path().join("ipadic").is_dir());
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kakeai"))
        .args(["check", "--speaker", "ayu"])
        .env("KAKEAI_DATA_DIR", dir.path())
        .env("KAKEAI_CONFIG_DIR", dir.path().join("config"))
        .env_remove("KAKEAI_ANALYZER")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write;
            c.stdin
                .take()
                .map(|mut s| s.write_all("灯台は古いです。\n".as_bytes()));
            c.wait_with_output()
        })
        .expect("run kakeai");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("\"analyzer\":\"lindera-ipadic\""),
        "{stdout}"
    );
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("building"),
        "built only once"
    );
}

/// The kinds `proper_nouns` reads from each word's details are cached per word id: a second
/// pass over the same texts (every word then cached) and a fresh analyzer (nothing cached)
/// give the same tokens, and the proper-noun kinds still come through.
#[test]
fn lindera_proper_noun_kinds_are_the_same_cached_and_fresh() {
    let Some(an) = common::lindera() else { return };
    let texts = [
        "田中さんと佐藤花子さんが東京駅で待ってる",
        "株式会社サンプルの鈴木部長、京都に出張だって",
        "今日は雨だから家でのんびりしよう。ｶﾞﾝﾊﾞﾙ！",
        "ノヴァリスの面接、山本くんも来るらしい",
    ];
    let first: Vec<_> = texts.iter().map(|t| an.proper_nouns(t)).collect();
    let again: Vec<_> = texts.iter().map(|t| an.proper_nouns(t)).collect();
    assert_eq!(first, again);
    let dir = std::env::temp_dir().join("kakeai-test-ipadic");
    let fresh = kakeai::text::analyzer::lindera::LinderaAnalyzer::load(&dir).unwrap();
    let fresh: Vec<_> = texts
        .iter()
        .map(|t| kakeai::text::Analyzer::proper_nouns(&fresh, t))
        .collect();
    assert_eq!(first, fresh);
    use kakeai::text::analyzer::ProperKind;
    let kinds: Vec<ProperKind> = first.iter().flatten().map(|p| p.kind).collect();
    for k in [
        ProperKind::Surname,
        ProperKind::Place,
        ProperKind::Common,
        ProperKind::NotNoun,
    ] {
        assert!(kinds.contains(&k), "{k:?} in {kinds:?}");
    }
}
