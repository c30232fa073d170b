//! Every miss and false positive a new user reported on the first masker, as observed.

use super::PiiKind::{self, *};
use super::shared;

/// What was masked in `text`: each item's kind and the characters it covered.
pub(super) fn found(text: &str) -> Vec<(PiiKind, String)> {
    shared()
        .mask(text)
        .items
        .iter()
        .map(|i| {
            let s: String = text
                .chars()
                .skip(i.span[0])
                .take(i.span[1] - i.span[0])
                .collect();
            (i.kind, s)
        })
        .collect()
}

/// The spans found as names in `text`.
pub(super) fn names_found(text: &str) -> Vec<String> {
    found(text)
        .into_iter()
        .filter(|(k, _)| *k == Name)
        .map(|(_, s)| s)
        .collect()
}

/// `text` masks to exactly `want`.
#[track_caller]
pub(super) fn masks(text: &str, want: &str) {
    assert_eq!(
        shared().mask(text).masked_text,
        want,
        "{text}: {:?}",
        found(text)
    );
}

#[test]
fn names_in_kana_without_honorific_and_with_a_space() {
    masks("佐藤さゆりさんに会った", "[氏名]さんに会った");
    masks("高橋ゆうこと申します", "[氏名]と申します");
    masks("山田太郎って知ってる？", "[氏名]って知ってる？");
    masks("田中 さんが来た", "[氏名] さんが来た");
    masks("田中　さんが来た", "[氏名]　さんが来た");
    masks("俺、伊藤大輔。", "俺、[氏名]。");
    masks("My name is Kenichi Sato", "My name is [氏名]");
    masks("Hi, call me Ken!", "Hi, call me [氏名]!");
    masks("Mr. Tanaka said hi", "Mr. [氏名] said hi");
}

#[test]
fn phones_with_dots_and_spaces() {
    for (text, want) in [
        ("090.1234.5678に", "[電話番号]に"),
        ("090-1234 5678です", "[電話番号]です"),
        ("080 9876 5432", "[電話番号]"),
        ("０９０．１２３４．５６７８", "[電話番号]"),
    ] {
        masks(text, want);
    }
}

#[test]
fn addresses_whose_block_number_must_not_stay_visible() {
    masks(
        "神奈川県横浜市青葉区あざみ野1-2-3に住んでる",
        "[住所]に住んでる",
    );
    masks("青葉区あざみ野1-2-3です", "[住所]です");
    masks("家は道玄坂2-10-7だよ", "家は[住所]だよ");
    masks("札幌市中央区北1条西2丁目にある", "[住所]にある");
    masks("横浜のみなとみらい3-4-1に来て", "横浜の[住所]に来て");
}

#[test]
fn kana_companies_and_schools_and_short_school_names() {
    masks("株式会社みらい工房で働いてる", "[会社名]で働いてる");
    masks("有限会社すずき商店の者です", "[会社名]の者です");
    masks("みなと小学校に通ってた", "[学校名]に通ってた");
    masks("東大に受かった", "[学校名]に受かった");
    masks("早稲田に行きたい", "[学校名]に行きたい");
    masks("東大生です", "[学校名]生です");
    for stays in ["東大寺に行った", "明大前で降りる"] {
        assert!(found(stays).is_empty(), "{stays}: {:?}", found(stays));
    }
}

#[test]
fn a_phone_glued_to_a_company_masks_both() {
    masks(
        "03-1234-5678テスト商事株式会社まで",
        "[電話番号][会社名]まで",
    );
    masks("090-1234-5678株式会社みらい工房", "[電話番号][会社名]");
}

#[test]
fn look_alikes_stay() {
    for text in [
        "国公立大学を目指してる",
        "出身大学はどこ？",
        "併願大学も考えなきゃ",
        "試合は3-1で勝った！",
        "2-1で負けた",
        "横浜市大会決勝3-1で優勝",
        "出身は金沢です",
        "最寄りは中野です",
        "2024-01-15に会おう",
        "I'm Japanese",
        "そういえば大学どうだった？",
        "みんなと高校の話をした",
    ] {
        assert!(found(text).is_empty(), "{text}: {:?}", found(text));
    }
}

#[test]
fn card_numbers_with_the_luhn_check() {
    masks(
        "カードは4111 1111 1111 1111です",
        "カードは[カード番号]です",
    );
    masks("4111-1111-1111-1111", "[カード番号]");
    masks("4111111111111111", "[カード番号]");
    masks("Amex 3782 822463 10005", "Amex [カード番号]");
    // One digit off fails Luhn: not a card (and too long for a phone).
    assert!(found("4111 1111 1111 1112").is_empty());
    assert!(found("注文番号4111111111111111-2").is_empty());
    assert_eq!(found("4111 1111 1111 1111")[0].0, Card);
}
