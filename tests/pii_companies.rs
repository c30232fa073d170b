//! Companies in chat about work (issue 26 §1; crates/pii/src/pii/orgs.rs, org_forms.rs): where a
//! legal form's name starts and ends in running text, a company addressed with さん, heads
//! the dictionary knows as a name (白樺|運輸), and the generic heads that stay (冷凍食品,
//! 国際物流). Generated from names and frames written here, none of them a tuning set's.

mod common;

use common::pii::{found, score};
use kakeai::safety::pii::{PiiKind, PiiMasker};

/// Companies written for these tests: kanji, katakana, latin and mixed heads.
const NAMES: [&str; 5] = [
    "霧島精機",
    "ハルカゼ物産",
    "Nordwind",
    "朝凪フーズ",
    "藍沢運輸",
];
const PREFIXES: [&str; 5] = ["株式会社", "㈱", "(株)", "有限会社", "合同会社"];
/// What stands before the company: a clause ending in a particle pair, time words.
const LEADS: [&str; 6] = ["内定もらったのは", "明日", "今朝", "先日", "結局", "実は"];
/// What follows it: a verb whose first kanji is glued to the name, 宛て, a particle.
const TAILS: [&str; 5] = [
    "辞めたんだ",
    "宛てに送りました",
    "の人から電話",
    "に入社した",
    "だけ受かった",
];

fn maskers() -> Vec<(&'static str, PiiMasker)> {
    let mut out = vec![("rules", PiiMasker::new())];
    if let Some(an) = common::lindera_arc() {
        out.push(("lindera", PiiMasker::new().with_analyzer(an)));
    }
    out
}

#[test]
fn a_legal_form_before_the_name_starts_the_span_and_the_sentence_stays_out() {
    for (which, m) in maskers() {
        let mut bad = Vec::new();
        let mut n = 0;
        for p in PREFIXES {
            for name in NAMES {
                for lead in LEADS {
                    for tail in TAILS {
                        let company = format!("{p}{name}");
                        let text = format!("{lead}{company}{tail}");
                        n += 1;
                        if found(&m, &text, PiiKind::Company) != [company.clone()] {
                            bad.push((text.clone(), found(&m, &text, PiiKind::Company)));
                        }
                    }
                }
            }
        }
        assert!(
            bad.is_empty(),
            "{which}: {} of {n} wrong: {bad:?}",
            bad.len()
        );
    }
}

#[test]
fn a_company_addressed_with_san_is_a_company_without_the_honorific() {
    let frames = [
        "{}さんから請求書が届きました",
        "明日{}さんと打ち合わせです",
        "{}さんの担当の方に伝えます",
        "{}さまへの納品は来週",
    ];
    for (which, m) in maskers() {
        for name in [
            "霧島精機",
            "ハルカゼ物産",
            "藍沢運輸",
            "朝凪フーズ",
            "みのり建設",
        ] {
            for f in frames {
                let text = f.replace("{}", name);
                assert_eq!(
                    found(&m, &text, PiiKind::Company),
                    [name],
                    "{which}: {text}"
                );
                assert!(
                    found(&m, &text, PiiKind::Name).is_empty(),
                    "{which}: {text}"
                );
            }
        }
    }
}

#[test]
fn latin_names_of_several_words_before_a_cue() {
    for (which, m) in maskers() {
        for name in ["Nordwind Labs", "Blue Quarry Design", "Mori Works"] {
            for f in ["{}でインターンしてた", "{}の説明会に行った", "{}に転職した"]
            {
                let text = f.replace("{}", name);
                assert_eq!(
                    found(&m, &text, PiiKind::Company),
                    [name],
                    "{which}: {text}"
                );
            }
        }
    }
}

#[test]
fn generic_heads_stay_even_in_talk_about_work() {
    let generic = [
        "冷凍食品に出向になった",
        "国際物流の面接どうだった？",
        "精密機械の支店が近所にできた",
        // (Not 中央銀行で働いてる友達: since the judge gates the labeller's guesses, a bank a
        // friend works at reads as a workplace, and masking an ambiguous workplace is the safe
        // side of that doubt.)
        "地方銀行さんから請求書が来てます",
        "ペット保険の社長が地元の人",
        "待機電力の監視は工場の担当です",
        "消費電力が大きい製品は売れない",
    ];
    for (which, m) in maskers() {
        for text in generic {
            assert!(
                found(&m, text, PiiKind::Company).is_empty(),
                "{which}: {text}: {:?}",
                found(&m, text, PiiKind::Company)
            );
        }
    }
}

/// Lindera only: a head the dictionary files as a place or a person too, though it reads a
/// common word here (白樺, 若竹, 高砂: 名詞,一般 and 固有名詞), names a company in a message
/// about work — wherever the work word stands — and nowhere else.
#[test]
fn heads_the_dictionary_knows_as_names_in_talk_about_work() {
    let Some(an) = common::lindera_arc() else {
        return;
    };
    for head in ["白樺", "若竹", "高砂", "桔梗", "銀杏"] {
        assert!(an.has_proper_entry(head), "{head}");
    }
    for word in ["冷凍", "待機", "精密", "ペット"] {
        assert!(!an.has_proper_entry(word), "{word}");
    }
    let m = PiiMasker::new().with_analyzer(an);
    let work = [
        "{}の決算がやばいって上司が言ってた",
        "父が{}を定年退職した",
        "うちの会社、{}と合併するらしい",
        "{}のボーナス、今年は少ないって",
    ];
    for head in ["白樺", "若竹", "高砂", "桔梗", "銀杏"] {
        for form in ["運輸", "建設", "電機", "製菓"] {
            let name = format!("{head}{form}");
            for f in work {
                let text = f.replace("{}", &name);
                assert_eq!(
                    found(&m, &text, PiiKind::Company),
                    std::slice::from_ref(&name),
                    "{text}"
                );
            }
        }
    }
    // The same compounds where nothing is about work: a temple's wood, a tree.
    for text in [
        "木造建築の寺が多い",
        "このお寺は木造建築で有名",
        "待機電力って地味に高い",
    ] {
        assert!(found(&m, text, PiiKind::Company).is_empty(), "{text}");
    }
}

/// Lindera only: names IPADIC files whole as one organisation (トピー工業, ホリエ電機: one
/// 名詞,固有名詞,組織 entry each) are companies before any cue.
#[test]
fn a_name_the_dictionary_reads_whole_as_an_organisation() {
    let Some(an) = common::lindera_arc() else {
        return;
    };
    let m = PiiMasker::new().with_analyzer(an);
    for name in ["トピー工業", "ホリエ電機", "セイカ食品", "ツカサ工業"] {
        for f in ["{}さんに入って3年目", "{}の株買った", "昨日{}の前を通った"]
        {
            let text = f.replace("{}", name);
            assert_eq!(found(&m, &text, PiiKind::Company), [name], "{text}");
        }
    }
}

/// dev8 (tests/fixtures/pii_dev8; tuning only, never reported as held-out): companies in 45
/// frames about work written for it, half A's companies and names invented there, with 90
/// generic look-alikes. Floors a little under the measured figures.
#[test]
fn dev8_tuning_set() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/pii_dev8/dev8.jsonl"
    );
    let text = std::fs::read_to_string(path).expect("dev8.jsonl");
    for (which, m) in maskers() {
        let (p, r, gold) = score(&m, &text, PiiKind::Company, "会社名");
        println!("dev8 companies ({which}): P {p:.3} R {r:.3} of {gold}");
        assert!(gold >= 250, "{gold}");
        // Measured 1.000 / 0.893 lindera, 1.000 / 0.789 rules (0.894 / 0.748 and
        // 0.880 / 0.626 before).
        let floor = if which == "lindera" { 0.88 } else { 0.77 };
        assert!(p >= 0.98 && r >= floor, "{which}: P {p:.3} R {r:.3}");
    }
}

/// Lindera only: in a message about work, a head read as an unknown or proper word, or a
/// hiragana word, names a company with no cue beside it; katakana or kanji common words alone
/// (ウェブ|デザイン, 待機|電力) stay, and so do pronouns (それ).
#[test]
fn a_message_about_work_is_context_for_heads_that_look_like_names() {
    let Some(an) = common::lindera_arc() else {
        return;
    };
    let m = PiiMasker::new().with_analyzer(an);
    for name in [
        "クロスミナ技研",
        "ヴェルノア製薬",
        "すずかぜ急便",
        "みのり建設",
    ] {
        for f in [
            "うちの会社、{}と合併するらしい",
            "兄は{}の経理やってる",
            "{}、ボーナス出たらしい",
        ] {
            let text = f.replace("{}", name);
            assert_eq!(found(&m, &text, PiiKind::Company), [name], "{text}");
        }
    }
    for text in [
        "ウェブデザインの会社に転職した",
        "シェアハウスの上司",
        "それ食品の担当に聞いて",
        "待機電力、上司に言われて測った",
    ] {
        assert!(found(&m, text, PiiKind::Company).is_empty(), "{text}");
    }
}

/// A kana name ending in い right before an industry word (ゆうあい運輸) with a business cue;
/// the short forms 介護, ロジ, エンジ in a business context; a katakana form inside a longer
/// katakana word (ロジ|テック, エンジ|ニア) is no form.
#[test]
fn kana_names_in_i_short_forms_and_forms_inside_words() {
    for (which, m) in maskers() {
        for name in ["ゆうあい運輸", "しんせい建設", "たいせい電機"] {
            for f in [
                "{}の営業やってます",
                "夫は{}に勤めてます",
                "{}から内定もらった",
            ] {
                let text = f.replace("{}", name);
                assert_eq!(
                    found(&m, &text, PiiKind::Company),
                    [name],
                    "{which}: {text}"
                );
            }
        }
        for name in ["あけぼの介護", "紅林ロジ", "大鷹エンジ"] {
            for f in ["母は{}に勤めてます", "{}の倉庫でバイト", "{}に派遣されてる"]
            {
                let text = f.replace("{}", name);
                assert_eq!(
                    found(&m, &text, PiiKind::Company),
                    [name],
                    "{which}: {text}"
                );
            }
        }
        for text in [
            "システムエンジニアに転職した",
            "訪問介護に勤めてます",
            "エンジ色のセーター",
            "すごい建設現場だった",
        ] {
            assert!(
                found(&m, text, PiiKind::Company).is_empty(),
                "{which}: {text}: {:?}",
                found(&m, text, PiiKind::Company)
            );
        }
    }
}
