//! Issue 13 §2: the Director's rules at their edges, each reproduction as a table in both
//! directions (fixtures written for kakeai).

mod common;

use common::{judge, judge_v, judge_with, rule_status};
use kakeai::director::{RuleId, Status, ToneMode};
use kakeai::text::analyzer::fallback::FallbackAnalyzer;

use Status::{Info, Pass, Retry, Warn};

#[test]
fn contradiction_question_tails_must_end_the_sentence() {
    let cases = [
        // A statement that flips the meaning, whatever follows the negation.
        ("あゆはまだ未成年じゃないから、お酒はだめだよ。", Retry),
        ("まだ未成年じゃないかもしれない。", Retry),
        ("まだ未成年じゃないので、入れるよ。", Retry),
        ("まだ未成年じゃないのに、変だね。", Retry),
        ("まだ未成年じゃない。", Retry),
        // A question or confirmation, possibly softened.
        ("まだ未成年じゃないか。", Pass),
        ("まだ未成年じゃないの？", Pass),
        ("まだ未成年じゃないのかな。", Pass),
        ("まだ未成年じゃないよね〜", Pass),
        ("まだ未成年じゃないでしょ！", Pass),
        ("まだ未成年じゃないっけ", Pass),
        ("まだ未成年じゃないかなあ。", Pass),
    ];
    for (text, want) in cases {
        let v = judge("yana", text);
        assert_eq!(rule_status(&v, RuleId::Contradiction), want, "{text}");
    }
}

#[test]
fn an_unmatched_opening_bracket_does_not_stop_sentence_splitting() {
    let v = judge(
        "ayu",
        "港は広いです。「灯台は白いです。船も多いです。夜は静かです。",
    );
    assert_eq!(v.sentences, 4);
    let v = judge("yana", "ねえ(笑 これ見て！すごい！きれい！やばい！");
    assert_eq!(v.sentences, 4);
    assert!(rule_status(&v, RuleId::Scatter) >= Warn, "{:?}", v.findings);
    // Seed §6.1 (issue 26 §2): a terminator ends a sentence inside balanced brackets too.
    let v = judge("yana", "「すごい！」って言ったよね。");
    assert_eq!(v.sentences, 2);
}

#[test]
fn praise_retry_needs_an_evaluation_word_and_the_partner() {
    let cases = [
        ("あなたの答えは正しいです。", Warn),
        ("その考えは合ってると思う。", Warn),
        ("あなたの答えは完璧です。", Retry),
        ("その答え、素晴らしいですね。", Retry),
        ("素晴らしい眺めですね。", Warn),
        ("正しい手順を調べました。", Pass),
        // Different sentences: no RETRY.
        ("あなたの答えを調べました。完璧な地図ですね。", Warn),
    ];
    for (text, want) in cases {
        let v = judge("ayu", text);
        assert_eq!(rule_status(&v, RuleId::Praise), want, "{text}");
    }
}

#[test]
fn a_labelled_script_line_is_unwrapped_and_judged_inside() {
    let v = judge("yana", "やな：「わ！すっごい景色だね！」");
    assert_eq!(rule_status(&v, RuleId::ScriptFormat), Info);
    assert_eq!(
        rule_status(&v, RuleId::PromptLeak),
        Pass,
        "{:?}",
        v.findings
    );
    assert!(v.tone.score >= 2, "{:?}", v.tone);
    assert_eq!(v.status, Pass, "{:?}", v.findings);
    // Two labelled lines are a script of both parts: still a leak.
    let v = judge("yana", "やな：「わ！」\nあゆ：「はい、そうですね。」");
    assert_eq!(rule_status(&v, RuleId::PromptLeak), Retry);
}

#[test]
fn topic_loop_counts_tokens_outside_quotes() {
    let an = &FallbackAnalyzer;
    let count = |text: &str| {
        let v = judge_with(an, ToneMode::Markers, "yana", text, &[("ayu", "はい。")]);
        rule_status(&v, RuleId::TopicLoop)
    };
    assert_eq!(
        count("京都の話だね。東京都に住んで、京都府にも行ったよね。"),
        Pass
    );
    assert_eq!(count("「京都、京都」って京都の人が言ってたね！"), Pass);
    assert_eq!(count("京都だね。京都に行って、京都で遊ぶ！"), Warn);
}

/// Seed §4.2: the body contains the ending — at a sentence end or before a quotative or
/// conjunctive particle — and the guards against false hits stay.
#[test]
fn tone_endings_before_particles_both_directions() {
    let marker = |speaker: &str, text: &str| judge(speaker, text).tone.marker;
    let hits = [
        ("yana", "雨かなって思ったら晴れた！"),
        ("yana", "無理かもと思ったんだ"),
        ("yana", "寒いよねって話してた"),
        ("yana", "いいかもだけど、高い"),
        ("yana", "来るかなーって待ってた"),
        ("ayu", "昨日行きましたけど、閉まっていた"),
        ("ayu", "見えませんから、近づこう"),
        ("ayu", "晴れるでしょうと言っていた"),
    ];
    for (s, t) in hits {
        assert_eq!(marker(s, t), 1, "{s}: {t}");
    }
    let misses = [
        ("yana", "静かな町だ"),
        ("yana", "静かなところに住みたい"),
        ("yana", "静かなとき本を読む"),
        ("yana", "かもしれない"),
        ("yana", "かもめが飛んでる"),
        ("ayu", "ましたがって"),
        ("ayu", "ますます難しい"),
    ];
    for (s, t) in misses {
        assert_eq!(marker(s, t), 0, "{s}: {t}");
    }
    // Violation endings stay sentence-final: じゃんけん is not じゃん.
    let v = judge_v("ayu", "じゃんけんで決めましょう。");
    assert_eq!(rule_status(&v, RuleId::Tone), Pass, "{:?}", v.findings);
}

#[test]
fn a_line_that_is_not_mostly_japanese_is_a_retry() {
    let cases = [
        ("I'm glad to assist you with that!", Retry),
        ("mgladtoassistyouwith", Retry),
        ("Sure! 福引 is fun.", Retry),
        ("Привет, как дела?", Retry),
        ("カフェのWi-Fiが速いね！", Pass),
        ("OKだよ、行こう！", Pass),
        ("OK!", Pass),
        ("「Hello world, nice to meet you」って書いてあるね！", Pass),
        ("1234、5678！", Pass),
    ];
    for (text, want) in cases {
        let v = judge("yana", text);
        assert_eq!(rule_status(&v, RuleId::Language), want, "{text}");
    }
}
