//! The masking contract: spans, output shape, hashes, overlaps, idempotence, skip messages.

use super::{Masked, PiiItem, PiiKind, PiiMasker, SKIP_MESSAGE, sha256_hex, shared};

const FIXTURES: &[&str] = &[
    "田中さんに090-1234-5678で電話してね",
    "はじめまして、佐藤と申します。東京都渋谷区神南1-2-3に住んでいます",
    "メールはtaro@example.comか、ｈａｎａｋｏ＠ｅｘａｍｐｌｅ．ｊｐまで",
    "テスト商事株式会社の山田部長と、東京大学の鈴木先生",
    "横浜市港北区日吉1-2-3 メゾン日吉101号室",
    "私は鈴木です。青葉台高校の二年です",
    "〒150-0041 東京都渋谷区神南一丁目2番3号 (株)カキアイ",
    "ＴＥＬ０３（１２３４）５６７８、ＦＡＸ０３－１２３４－５６７９",
    "[氏名]さんから[電話番号]に電話があった",
    "今日は暑いね。アイス食べたい",
    "東京都に住んでる大学生です。25歳",
    "型番AB-1234-5678と2024-01-15の注文",
];

#[test]
fn sha256_is_of_the_original_text() {
    // Oracles from `printf %s 'テスト' | sha256sum` and `printf %s '' | sha256sum`.
    assert_eq!(
        sha256_hex("テスト"),
        "8a535a3f4dcd2c396db11b7c1e54221d04375c9f9be96bce47dc2fdb237e86c9"
    );
    assert_eq!(
        shared().mask("").original_sha256,
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    );
    // `printf %s '田中さんに電話' | sha256sum`: the hash is of the text before masking.
    let m = shared().mask("田中さんに電話");
    assert_eq!(m.masked_text, "[氏名]さんに電話");
    assert_eq!(
        m.original_sha256,
        "57744afabddcb4430e6d74126a9df396af9abfb4073db1fa95ca8009271ce989"
    );
}

#[test]
fn spans_are_char_offsets_into_the_original() {
    let text = "ＡＢＣ　田中さん、０３－１２３４－５６７８ ｔａｒｏ＠ｅｘａｍｐｌｅ．ｃｏｍ";
    let m = shared().mask(text);
    assert_eq!(
        m.items,
        vec![
            PiiItem {
                kind: PiiKind::Name,
                span: [4, 6]
            },
            PiiItem {
                kind: PiiKind::Phone,
                span: [9, 21]
            },
            PiiItem {
                kind: PiiKind::Email,
                span: [22, 38]
            },
        ]
    );
    assert_eq!(
        m.masked_text,
        "ＡＢＣ　[氏名]さん、[電話番号] [メールアドレス]"
    );
    let chars: Vec<char> = text.chars().collect();
    let slice = |i: &PiiItem| chars[i.span[0]..i.span[1]].iter().collect::<String>();
    assert_eq!(slice(&m.items[1]), "０３－１２３４－５６７８");
    assert_eq!(slice(&m.items[2]), "ｔａｒｏ＠ｅｘａｍｐｌｅ．ｃｏｍ");
}

#[test]
fn output_has_the_cli_shape() {
    let m = shared().mask("田中さん");
    let json = serde_json::to_string(&m).unwrap();
    // The plain SHA-256 never leaves the process: not in the JSON.
    assert_eq!(
        json,
        r#"{"pii_detected":true,"masked_text":"[氏名]さん","items":[{"kind":"氏名","span":[0,2]}]}"#
    );
    assert!(!json.contains(&sha256_hex("田中さん")));
    let back: Masked = serde_json::from_str(&json).unwrap();
    assert_eq!(back.items, m.items);
    assert_eq!(back.masked_text, m.masked_text);
}

#[test]
fn kinds_have_labels_tokens_and_serde_names() {
    for k in PiiKind::ALL {
        assert_eq!(k.token(), format!("[{}]", k.label()));
        assert_eq!(
            serde_json::to_value(k).unwrap(),
            serde_json::Value::String(k.label().into())
        );
        assert_eq!(PiiKind::from_token(k.token()), Some(k));
        assert_eq!(PiiKind::from_label(k.label()), Some(k));
    }
    assert_eq!(PiiKind::from_token("[地名]"), None);
}

#[test]
fn masking_is_idempotent() {
    for text in FIXTURES {
        let once = shared().mask(text);
        let twice = shared().mask(&once.masked_text);
        assert_eq!(twice.masked_text, once.masked_text, "{text}");
        assert!(twice.items.is_empty(), "{text}: {:?}", twice.items);
    }
}

#[test]
fn items_are_sorted_disjoint_and_the_text_is_rebuilt_from_them() {
    for text in FIXTURES {
        let m = shared().mask(text);
        let n = text.chars().count();
        for w in m.items.windows(2) {
            assert!(w[0].span[1] <= w[1].span[0], "{text}: {:?}", m.items);
        }
        assert!(
            m.items
                .iter()
                .all(|i| i.span[0] < i.span[1] && i.span[1] <= n)
        );
        assert_eq!(m.pii_detected, !m.items.is_empty());
        assert_eq!(super::apply(text, &m.items), m.masked_text);
    }
}

#[test]
fn existing_tokens_are_left_alone() {
    for text in [
        "[氏名]さんから[電話番号]に電話",
        "[学校名]に通う[会社名]の社員",
    ] {
        let m = shared().mask(text);
        assert!(!m.pii_detected, "{text}: {:?}", m.items);
        assert_eq!(m.masked_text, text);
    }
}

#[test]
fn the_skip_message_is_not_scanned() {
    for text in [SKIP_MESSAGE, "  [スキップ]\n"] {
        let m = shared().mask(text);
        assert!(!m.pii_detected);
        assert_eq!(m.masked_text, text);
        assert_eq!(m.original_sha256, sha256_hex(text));
    }
    let m = shared().mask("[スキップ] 田中さん");
    assert_eq!(
        m.masked_text, "[スキップ] [氏名]さん",
        "only the exact skip text"
    );
}

#[test]
fn the_longer_of_overlapping_spans_wins() {
    let text = "東京都文京区本郷7-3-1東京大学に来て";
    let m = shared().mask(text);
    assert_eq!(m.masked_text, "[住所]に来て", "{:?}", m.items);
    let m = shared().mask("株式会社田中さんと話す");
    assert_eq!(m.masked_text, "[会社名]さんと話す");
    let m = shared().mask("テスト商事株式会社の田中さんと青葉台高校で会う");
    assert_eq!(m.masked_text, "[会社名]の[氏名]さんと[学校名]で会う");
}

#[test]
fn messages_without_pii_come_back_unchanged() {
    for text in [
        "今日は暑いね。アイス食べたい",
        "やな、それ本当？",
        "2時に駅前で待ち合わせ",
        "",
        "ｗｗｗ　すごーーい！！",
        "Hello, how are you?",
    ] {
        let m = shared().mask(text);
        assert!(!m.pii_detected, "{text}: {:?}", m.items);
        assert_eq!(m.masked_text, text);
    }
}

#[test]
fn the_masker_is_shareable() {
    fn check<T: Send + Sync>() {}
    check::<PiiMasker>();
    let m = PiiMasker::default();
    let h = std::thread::spawn(move || m.mask("田中さん").masked_text);
    assert_eq!(h.join().unwrap(), "[氏名]さん");
}

#[test]
fn a_long_text_with_many_items_is_masked_whole() {
    let text = "田中さん、".repeat(5_000);
    let m = shared().mask(&text);
    assert_eq!(m.items.len(), 5_000);
    assert_eq!(m.items[4_999].span, [24_995, 24_997]);
    assert_eq!(m.masked_text, "[氏名]さん、".repeat(5_000));
}
