//! Names found by the sentence around them (names_context) and the cues added with the dev2
//! set: every shape in every script, generated, beside the common words of the same shape
//! that must stay. The names here are invented for these tests and are in no list.

use super::PiiKind::*;
use super::tests_reported::{found, masks, names_found};

/// One invented person in every script: (surname, full name) pairs.
const PEOPLE: [(&str, &str); 6] = [
    ("鶴巻", "鶴巻なぎさ"),
    ("つるまき", "つるまき なぎさ"),
    ("ツルマキ", "ツルマキ ナギサ"),
    ("Tsurumaki", "Nagisa Tsurumaki"),
    ("汐見", "汐見 凪"),
    ("シオミ", "シオミ・ナギ"),
];

#[test]
fn two_people_before_a_relationship_verb() {
    let verbs = [
        "が付き合ってるらしい",
        "が結婚するって",
        "が別れたって",
        "が離婚したらしい",
    ];
    let leads = ["", "え、", "クラスの", "昨日"];
    for (i, (a, _)) in PEOPLE.iter().enumerate() {
        let (b, _) = PEOPLE[(i + 1) % PEOPLE.len()];
        for verb in verbs {
            for lead in leads {
                let text = format!("{lead}{a}と{b}{verb}");
                assert_eq!(names_found(&text), [*a, b], "{text}");
            }
        }
    }
}

#[test]
fn pairs_of_common_words_stay() {
    for text in [
        "猫と犬が仲良しで困る",
        "兄と姉が結婚した",
        "先輩と後輩が付き合ってるらしい",
        "私と彼が付き合って三年",
        "僕と彼女が別れた話",
        "父と母が離婚した",
        "うちの両親が離婚した",
        "あいつとこいつが付き合ってる？",
        "東京と大阪が別れるわけない",
        "仕事と家庭が両立できない",
    ] {
        assert!(found(text).is_empty(), "{text}: {:?}", found(text));
    }
}

#[test]
fn a_signature_after_from() {
    for (_, full) in PEOPLE {
        for frame in ["from {}", "ありがとう！\nfrom {}", "またね from {}"] {
            let text = frame.replace("{}", full);
            assert_eq!(names_found(&text), [full], "{text}");
        }
    }
}

#[test]
fn from_a_place_or_a_sender_stays() {
    for text in [
        "from 東京",
        "from Japan with love",
        "from 大阪府",
        "メッセージ from 運営",
        "from home",
        "fromの使い方",
    ] {
        assert!(found(text).is_empty(), "{text}: {:?}", found(text));
    }
}

#[test]
fn a_name_called_out_before_a_greeting() {
    let names = [
        "汐見なぎさ",
        "つるまきなぎさ",
        "ツルマキナギサ",
        "Nagisa Tsurumaki",
    ];
    for name in names {
        for greeting in [
            "、元気にしてる？",
            "、久しぶり！",
            "、お疲れさま",
            "、おはよう",
        ] {
            let text = format!("{name}{greeting}");
            assert_eq!(names_found(&text), [name], "{text}");
        }
    }
}

#[test]
fn a_word_before_a_greeting_stays() {
    for text in [
        "みんな、元気？",
        "最近、元気？",
        "今日も、元気ない",
        "誕生日、おめでとう",
        "昨日はありがとう、今度おごる",
        "あのね、聞いて",
        "ほんとに、今日つらい",
        "ハロー、元気？",
        "大丈夫、元気だよ",
        "卒業式、おめでとう",
        "明日ひま、聞いて",
        "それな、今",
        "ママ、元気？",
        "やなちゃん、おはよう",
    ] {
        assert!(found(text).is_empty(), "{text}: {:?}", found(text));
    }
}

#[test]
fn a_surname_before_an_affiliation_introduces_its_writer() {
    let affiliations = [
        "、なぎさ台高校の二年です",
        "。ミナト工業㈱で働いています",
        "。株式会社シオサイに勤めています",
    ];
    for sur in ["鶴巻", "汐見", "鶴巻なぎさ"] {
        for aff in affiliations {
            let text = format!("{sur}です{aff}");
            assert_eq!(names_found(&text), [sur], "{text}");
        }
    }
    for text in [
        "派遣です。倉庫で働いています",
        "営業です、東京で働いてます",
        "新卒です。株式会社シオサイに勤めています",
    ] {
        assert!(names_found(text).is_empty(), "{text}: {:?}", found(text));
    }
}

#[test]
fn an_unlisted_kanji_before_a_listed_one_keeps_the_whole_surname() {
    // 島, 林 and 原 are listed surnames; 鮎島, 柊林 and 椚原 are not.
    for sur in ["鮎島", "柊林", "椚原"] {
        for cue in ["くん", "さん", "課長", "先生"] {
            masks(
                &format!("さっき{sur}{cue}から"),
                &format!("さっき[氏名]{cue}から"),
            );
        }
    }
}

#[test]
fn long_full_names_and_kana_given_names_before_an_honorific() {
    masks("御厨谷蒼真さんの結婚式", "[氏名]さんの結婚式");
    masks("汐見ゆずさんに会った", "[氏名]さんに会った");
    masks("町のみさきさんに会った", "町の[氏名]さんに会った");
    assert!(found("必ずさん").len() <= 1);
}

#[test]
fn a_contact_name_before_a_phone_number_may_end_like_a_verb() {
    for name in ["つるまきはる", "汐見かおる", "ツルマキ ワタル"] {
        let text = format!("連絡先：{name} 090-1234-5678");
        assert_eq!(names_found(&text), [name], "{text}");
    }
}

#[test]
fn a_company_named_by_its_business_context() {
    for (text, company) in [
        ("シオサイって会社、知ってる？", "シオサイ"),
        ("勤務先：ミナトテック", "ミナトテック"),
        ("汐見ホールディングスの最終面接", "汐見ホールディングス"),
        ("なぎさ信用金庫に勤めてます", "なぎさ信用金庫"),
        ("ミナト証券の内定もらった", "ミナト証券"),
        ("翠嶺社の面接", "翠嶺社"),
        ("銀杏堂に就職決まった", "銀杏堂"),
        ("Mizuho-Laboのインターン行く", "Mizuho-Labo"),
    ] {
        let got: Vec<String> = found(text)
            .into_iter()
            .filter(|(k, _)| *k == Company)
            .map(|(_, s)| s)
            .collect();
        assert_eq!(got, [company], "{text}: {:?}", found(text));
    }
    for text in [
        "証券会社って大変？",
        "ネット証券で株を買った",
        "グループで行こう",
        "事務所に寄ってから帰る",
        "ホテルでバイトしてる",
        "会社の面接受けた",
        "神社で働いてる",
        "食堂でバイトしてる",
        "講堂で働いてる",
        "子会社に転職した",
        "本社に出向",
        "公会堂で働いてる",
    ] {
        let got: Vec<_> = found(text)
            .into_iter()
            .filter(|(k, _)| *k == Company)
            .collect();
        assert!(got.is_empty(), "{text}: {got:?}");
    }
}
