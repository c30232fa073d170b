//! Layer 1 over the keyword variants (text::variants): a kanji word the safety data lists is
//! caught when written in kana, with the real IPADIC readings when MeCab sources are here.

use crate::text::testing::ipadic;
use crate::text::variants::Dict;

#[test]
fn layer_one_catches_a_kanji_word_written_in_kana() {
    use crate::safety::{Sister, UserContext, data, pipeline::SafetyJudge};
    let Some(a) = ipadic() else { return };
    let sources = data::load_sources(None).unwrap();
    let judge = SafetyJudge::from_sources_with(&sources, Dict::from(a)).unwrap();
    let plain = SafetyJudge::from_sources_with(&sources, Dict::none()).unwrap();
    let ctx = UserContext::default();
    let layer1 = |j: &SafetyJudge, text: &str| {
        let out = j.judge(text, Sister::Yana, &ctx);
        (
            out.trace[0].outcome,
            out.trace[0]
                .hits
                .iter()
                .map(|h| h.entry.clone())
                .collect::<Vec<_>>(),
        )
    };
    let (kanji, hits) = layer1(&judge, "お前を殺すぞ");
    assert!(hits.contains(&"殺す".to_string()), "{hits:?}");
    for text in ["お前をころすぞ", "お前をコロスぞ", "お前をｺﾛｽぞ"] {
        let (outcome, hits) = layer1(&judge, text);
        assert_eq!(outcome, kanji, "{text}");
        assert!(hits.contains(&"殺す".to_string()), "{text}: {hits:?}");
        // Without a dictionary the reading is not checked.
        let (_, none) = layer1(&plain, text);
        assert!(!none.contains(&"殺す".to_string()), "{text}: {none:?}");
    }
    let (_, hits) = layer1(&judge, "ところすごいね");
    assert!(!hits.contains(&"殺す".to_string()), "{hits:?}");
}
