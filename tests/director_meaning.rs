//! Issue 26 §2: Director rules that match meaning, proven with generated variants
//! (inflections × clause frames). This is the *tuning* half: the code was shaped on these.
//! The other half, never used while writing the code, is `director_heldout.rs`.
//!
//! Every case runs on the fallback analyzer (always) and on lindera + IPADIC when the MeCab
//! sources are there (required under CI=true, see `common::lindera`).

mod common;

use common::{judge_with, rule_status};
use kakeai::director::{RuleId, Status, ToneMode};
use kakeai::text::Analyzer;
use kakeai::text::analyzer::fallback::FallbackAnalyzer;

fn analyzers() -> Vec<&'static dyn Analyzer> {
    static FB: FallbackAnalyzer = FallbackAnalyzer;
    let mut v: Vec<&'static dyn Analyzer> = vec![&FB];
    v.extend(common::lindera());
    v
}

fn setting(an: &dyn Analyzer, text: &str) -> Status {
    rule_status(
        &judge_with(an, ToneMode::Markers, "yana", text, &[]),
        RuleId::Setting,
    )
}

/// Inflections of 住む and 暮らす (tuning half).
const LIVE: [&str; 12] = [
    "住む",
    "住んでる",
    "住んでいます",
    "住んだ",
    "住みたい",
    "住もう",
    "暮らす",
    "暮らしてる",
    "暮らしています",
    "暮らした",
    "暮らしたい",
    "暮らそう",
];
/// Words that place the living apart, and what may stand between them and the verb.
const APART: [&str; 4] = ["別々に", "離れて", "一人で", "別々の家に"];
const BETWEEN: [&str; 3] = ["", "東京に", "海の近くに"];
/// Clause frames around "cue + verb".
const FRAMES: [&str; 4] = [
    "{}。",
    "実はね、{}。",
    "{}けど、寂しくないよ。",
    "姉様とは今、{}ね。",
];

#[test]
fn living_apart_fires_in_every_inflection_and_frame() {
    for an in analyzers() {
        let mut missed = Vec::new();
        for v in LIVE {
            for cue in APART {
                for mid in BETWEEN {
                    for f in FRAMES {
                        let t = f.replace("{}", &format!("{cue}{mid}{v}"));
                        if setting(an, &t) != Status::Retry {
                            missed.push(t);
                        }
                    }
                }
            }
        }
        assert!(
            missed.is_empty(),
            "{}: {} missed: {missed:?}",
            an.kind(),
            missed.len()
        );
    }
}

#[test]
fn not_living_together_fires_and_living_together_does_not() {
    for an in analyzers() {
        for t in [
            "あゆとは一緒に住んでないよ。",
            "もう一緒に暮らしていません。",
        ] {
            assert_eq!(setting(an, t), Status::Retry, "{}: {t}", an.kind());
        }
        for t in [
            "あゆと一緒に住んでるよ。",
            "ずっと一緒に暮らしてます。",
            "別々に住んでないよ、一緒だよ。",
            "離れて暮らしたくないな。",
        ] {
            assert_eq!(setting(an, t), Status::Pass, "{}: {t}", an.kind());
        }
    }
}

/// Nouns and other verbs next to the same cues must not fire.
#[test]
fn the_same_cues_with_other_meanings_do_not_fire() {
    for an in analyzers() {
        for t in [
            "離れて歩くと迷子になるよ。",
            "一人で住所を書くのは初めて。",
            "別々に払おうか。",
            "一人で散歩して家に帰った。",
            "離れている町に住む人も来るんだって。",
            "住所は別々に書いてね。",
            "この町に住んでる人は優しいね。",
        ] {
            assert_eq!(setting(an, t), Status::Pass, "{}: {t}", an.kind());
        }
    }
}

#[test]
fn hitori_gurashi_and_bekkyo_fire_as_words() {
    for an in analyzers() {
        for t in [
            "一人暮らしって大変？",
            "別居って言葉、知ってる？",
            "一人住まいも楽しそう。",
        ] {
            assert_eq!(setting(an, t), Status::Retry, "{}: {t}", an.kind());
        }
    }
}

fn topics(an: &dyn Analyzer, text: &str) -> usize {
    judge_with(an, ToneMode::Markers, "ayu", text, &[]).topics
}

/// Topic heads (tuning half), one a 副詞可能 noun behind a prefix (お昼).
const HEADS: [&str; 5] = ["お昼", "港", "灯台", "商店街", "天気"];
/// Every seed §6.2 form, inflected.
const TOPIC_FORMS: [&str; 14] = [
    "についてですが、少しだけ。",
    "についてです。",
    "についてでした。",
    "について話したいです。",
    "については知りません。",
    "についての話です。",
    "の話です。",
    "の話をしましょう。",
    "の話でした。",
    "の話なんですけど。",
    "は広いです。",
    "は広かったです。",
    "は賑やかでした。",
    "は見えますか。",
];

#[test]
fn every_topic_form_is_a_boundary() {
    for an in analyzers() {
        let mut missed = Vec::new();
        for h in HEADS {
            for f in TOPIC_FORMS {
                // 天気は広い is odd Japanese but the same form; keep the grid full.
                let t = format!("{h}{f}");
                if topics(an, &t) != 1 {
                    missed.push(t);
                }
            }
        }
        assert!(
            missed.is_empty(),
            "{}: {} missed: {missed:?}",
            an.kind(),
            missed.len()
        );
    }
}

#[test]
fn three_topics_in_four_sentences_retry_with_the_issue_example() {
    for an in analyzers() {
        let v = judge_with(
            an,
            ToneMode::Markers,
            "ayu",
            "お昼についてですが、港の食堂です。灯台の話もしましょう。商店街は賑やかです。では行きましょう。",
            &[],
        );
        assert_eq!(v.topics, 3, "{}", an.kind());
        assert_eq!(rule_status(&v, RuleId::Scatter), Status::Retry);
    }
}

fn marker(an: &dyn Analyzer, speaker: &str, text: &str) -> u8 {
    judge_with(an, ToneMode::Markers, speaker, text, &[])
        .tone
        .marker
}

#[test]
fn tone_endings_count_anywhere_in_the_text() {
    let cases = [
        ("ayu", "少し長すぎましたでしょうか"),
        ("ayu", "もう閉まりましたよね。"),
        ("ayu", "そうでしょうか。"),
        ("ayu", "行きませんか、明日。"),
        ("yana", "あゆも言ってたよね、笑。"),
        ("yana", "雨かな、どうだろ。"),
        ("yana", "それ、いいかもー、なんて。"),
    ];
    for an in analyzers() {
        for (who, t) in cases {
            assert_eq!(marker(an, who, t), 1, "{}: {who} {t}", an.kind());
        }
    }
}

#[test]
fn endings_inside_words_still_do_not_count() {
    let cases = [
        ("yana", "静かなところだね。"),
        ("yana", "かなり寒いね。"),
        ("yana", "かもめが飛んでる。"),
        ("yana", "「いいかも」って言われた。"),
        ("ayu", "「そうでしょうか」と言われました…"),
    ];
    for an in analyzers() {
        for (who, t) in cases {
            let v = judge_with(an, ToneMode::Markers, who, t, &[]);
            let expect = u8::from(t.ends_with('…') && who == "ayu");
            // あゆ's ました outside the quote counts; nothing inside a word or quote does.
            assert_eq!(v.tone.marker, expect, "{}: {who} {t}", an.kind());
        }
    }
}

/// Seed §6.1: every 。！？ ends a sentence; §2.1's quote exclusion covers tone and praise only.
#[test]
fn terminators_inside_quotes_end_sentences() {
    for (t, n) in [
        ("「すごい！」と言った。", 2),
        ("あゆが「見て！あれ！」って。", 3),
        ("（笑った。）そうだね。", 2),
        ("「やっほー！」「元気？」", 2),
        ("わ！見て。", 2),
    ] {
        let v = common::judge("yana", t);
        assert_eq!(v.sentences, n, "{t}");
    }
}
