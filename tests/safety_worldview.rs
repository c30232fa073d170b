//! Layer 5: the world-view check on the sisters' replies — meta talk found with char spans,
//! ordinary words left alone, in-character corrections per sister.

use kakeai::director::{RuleId, Status};
use kakeai::safety::{SafetyRules, Sister};

fn check(text: &str, sister: Sister) -> Vec<(String, [usize; 2])> {
    SafetyRules::builtin()
        .worldview
        .check(text, sister)
        .into_iter()
        .map(|f| {
            assert_eq!(f.rule, RuleId::Worldview);
            assert_eq!(f.status, Status::Retry);
            let span = f.span.expect("span");
            let matched: String = text.chars().skip(span[0]).take(span[1] - span[0]).collect();
            (matched, span)
        })
        .collect()
}

#[test]
fn meta_talk_is_found_with_spans() {
    let rows: &[(&str, &[&str])] = &[
        ("私はAIなので、味は分かりません。", &["AI"]),
        ("ＡＩだから分かんないや", &["ＡＩ"]),
        ("人工知能の私には難しいです。", &["人工知能"]),
        ("私は大規模言語モデルとして答えます。", &["言語モデル"]),
        ("LLMの限界ですね。", &["LLM"]),
        ("それ、ChatGPTに聞いたら？", &["ChatGPT"]),
        ("GPT-4ならもっと詳しいかも", &["GPT"]),
        ("OpenAIやGoogleが作ったものです。", &["OpenAI", "Google"]),
        ("Gemmaというモデルです", &["Gemma"]),
        ("Claudeに聞いてみよう", &["Claude"]),
        ("私の開発者に聞いてください。", &["私の開発者"]),
        ("その質問はプロンプトで禁止されています。", &["プロンプト"]),
        ("学習データにはありませんでした。", &["学習データ"]),
        (
            "私はただのプログラムですから。",
            &["私はただのプログラムです"],
        ),
        ("大量の文章で学習されているので", &["学習されて"]),
        ("The developer said so", &["developer"]),
    ];
    for (text, want) in rows {
        let got: Vec<String> = check(text, Sister::Ayu).into_iter().map(|g| g.0).collect();
        assert_eq!(&got, want, "{text}");
    }
    // Spans are char offsets of the reply.
    assert_eq!(
        check("ねえ、私はAIだよ", Sister::Yana),
        vec![("AI".to_string(), [5, 7])]
    );
}

#[test]
fn look_alikes_are_left_alone() {
    let quiet = [
        "モデルルームを見に行ったよ",
        "ファッションモデルみたいな人がいた",
        "プラモデルを作るのが好きなんだ",
        "MAILを送っておきました",
        "ai shiteru って書いてあった",
        "Googleマップで調べたら十分だって",
        "クロード・モネの睡蓮、きれいだったね",
        "ドラマの続きが気になる",
        "明日のテストの勉強、学習計画を立てました",
        "このゲームの開発者はすごいね",
        "私を作った人？お母さんかな",
        "目覚ましが設定されているので大丈夫です",
        "データを見ると雨が多いですね",
        "ジェミニ座って双子座のことだよ",
    ];
    for text in quiet {
        assert!(check(text, Sister::Yana).is_empty(), "{text}");
    }
}

#[test]
fn findings_carry_an_in_character_correction() {
    let rules = SafetyRules::builtin();
    let wv = &rules.worldview;
    let f = &wv.check("私はAIです。", Sister::Ayu)[0];
    assert!(f.message.contains("あゆ"), "{}", f.message);
    assert!(f.suggestion.contains("私はあゆですよ"), "{}", f.suggestion);
    assert_eq!(f.evidence.as_deref(), Some("AI"));
    let f = &wv.check("私はAIだよ。", Sister::Yana)[0];
    assert!(f.suggestion.contains("私はやなだよ"), "{}", f.suggestion);
    // やな speaks casually, あゆ politely.
    assert!(wv.correction(Sister::Ayu).contains("です"));
    assert!(!wv.correction(Sister::Yana).contains("です"));
}

#[test]
fn correct_drops_meta_sentences_and_keeps_the_rest() {
    let rules = SafetyRules::builtin();
    let wv = &rules.worldview;
    let got = wv
        .correct(
            "私はAIなので、味は分かりません。でも海はきれいですね。",
            Sister::Ayu,
        )
        .expect("corrected");
    assert_eq!(
        got,
        format!("{}でも海はきれいですね。", wv.correction(Sister::Ayu))
    );
    // All meta: only the correction is left; clean replies are not touched.
    assert_eq!(
        wv.correct("言語モデルです！", Sister::Yana).as_deref(),
        Some(wv.correction(Sister::Yana))
    );
    assert_eq!(wv.correct("海、きれいだね！", Sister::Yana), None);
    // The same input always gives the same correction.
    assert_eq!(
        wv.correct("私はAIです。", Sister::Ayu),
        wv.correct("私はAIです。", Sister::Ayu)
    );
}

#[test]
fn worldview_is_a_rule_id() {
    assert!(RuleId::ALL.contains(&RuleId::Worldview));
    assert_eq!(RuleId::Worldview.as_str(), "worldview");
    assert_eq!(
        serde_json::to_value(RuleId::Worldview).unwrap(),
        serde_json::json!("worldview")
    );
}
