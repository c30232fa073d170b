use unicode_normalization::UnicodeNormalization;

use super::*;

const CAT: &str = "あゆは昔、姉に内緒で猫を拾って隠れて飼っていた";
const LETTER: &str = "やなは東京の音楽大学から届いた合格通知を机の引き出しに隠している";

#[test]
fn folding_unifies_width_and_case_and_maps_back() {
    let f = Folded::new("ＡＢＣ　abc ｶﾞｯｺｳ");
    assert_eq!(f.as_string(), "abc abc ガッコウ");
    // ｶﾞ (two original chars) became one ガ.
    let ga = f.chars.iter().position(|&c| c == 'ガ').unwrap();
    assert_eq!(f.to_original(ga, ga + 1), (8, 10));
    assert_eq!(f.to_original(ga, f.chars.len()), (8, 13));
    assert_eq!(f.orig_len, 13);
}

#[test]
fn per_char_folding_equals_whole_string_nfkc() {
    for text in [
        "ﾊﾟﾝを２個、㍻の「ＡＢＣ」か\u{3099}①ｳﾞｧｲｵﾘﾝ",
        "あゆは昔、姉に内緒で猫を拾った。ﾔﾅはｺｰﾋｰを３杯飲む！？",
        "Ｃａｆé ｶﾌｪ ㌢ ﬁne",
    ] {
        let whole: String = text.nfkc().flat_map(char::to_lowercase).collect();
        assert_eq!(Folded::new(text).as_string(), whole, "{text}");
    }
}

#[test]
fn one_char_may_become_several() {
    let f = Folded::new("㍻です");
    assert_eq!(f.as_string(), "平成です");
    assert_eq!(f.to_original(0, 2), (0, 1));
    assert_eq!(f.to_original(2, 3), (1, 2));
    assert_eq!(f.to_original(4, 4), (3, 3));
}

#[test]
fn core_keeps_letters_and_digits_only() {
    assert_eq!(
        fold_core("「ＯＫ、あゆ！」　３時ね。"),
        "okあゆ3時ね".chars().collect::<Vec<_>>()
    );
    assert_eq!(
        fold_core("すごーい々"),
        "すごーい々".chars().collect::<Vec<_>>()
    );
}

#[test]
fn identical_disjoint_and_empty() {
    assert!((similarity(CAT, "あゆ", CAT) - 1.0).abs() < 1e-9);
    assert_eq!(similarity(CAT, "あゆ", "おはよう！"), 0.0);
    assert_eq!(similarity(CAT, "あゆ", "。。。"), 0.0);
    assert_eq!(similarity("", "あゆ", CAT), 0.0);
}

#[test]
fn paraphrases_reach_the_critical_threshold_and_unrelated_lines_do_not() {
    let leaks = [
        (
            CAT,
            "あゆ",
            "昔、あゆはお姉ちゃんに内緒で拾った猫をこっそり飼っていた。",
        ),
        (CAT, "あゆ", "内緒で猫を拾って飼っていた。"),
        (CAT, "あゆ", "あゆは昔、姉に隠れて猫を飼っていた。"),
        (
            LETTER,
            "やな",
            "やなは東京の大学から届いた通知を机の引き出しに隠している。",
        ),
        (LETTER, "やな", "やなは音楽大学の合格通知を隠している。"),
        (
            "アイラは実は王族の血筋",
            "アイラ",
            "アイラは実は王族の血を引いている。",
        ),
    ];
    for (secret, entity, line) in leaks {
        let v = similarity(secret, entity, line);
        assert!(v > 0.55, "{v:.3} {line}");
    }
    let unrelated = [
        (CAT, "あゆ", "あゆは昨日、姉と一緒に買い物に行っていた。"),
        (CAT, "あゆ", "窓の外で、猫が一匹こちらを見ていた。"),
        (CAT, "あゆ", "あゆは昔から隠し事が苦手だった。"),
        (CAT, "あゆ", "ねえ、あゆ。昔のこと覚えてる？"),
        (LETTER, "やな", "お姉ちゃん、東京に行っちゃうの？"),
        (LETTER, "やな", "やなは郵便受けを気にしている。"),
        (
            "アイラは実は王族の血筋",
            "アイラ",
            "アイラは実は料理が得意だ。",
        ),
    ];
    for (secret, entity, line) in unrelated {
        let v = similarity(secret, entity, line);
        assert!(v < 0.35, "{v:.3} {line}");
    }
}

#[test]
fn a_secret_inside_a_long_sentence_is_fully_contained() {
    let entity = fold_core("あゆ");
    let secret = Profile::new(&fold_core(CAT), &entity);
    let long = format!(
        "雨の日の放課後、図書室で本を返したあとに思い出したけれど、{CAT}ことを、今でも誰にも話していない。"
    );
    let score = compare(&secret, &Profile::new(&fold_core(&long), &[]));
    assert!((score.containment - 1.0).abs() < 1e-9);
    // Dice alone would call this a weak match: the padding dilutes it.
    assert!(score.dice < 0.6, "{score:?}");
    assert_eq!(score.value(), score.containment);
}

#[test]
fn dice_wins_only_for_sentences_lighter_than_the_secret() {
    let entity = fold_core("あゆ");
    let secret = Profile::new(&fold_core(CAT), &entity);
    let short = Profile::new(&fold_core("内緒で猫を拾って飼っていた。"), &[]);
    let score = compare(&secret, &short);
    assert!(short.weight() < secret.weight());
    assert!(score.dice > score.containment, "{score:?}");
    assert_eq!(score.value(), score.dice);
}

#[test]
fn naming_the_entity_is_not_leaking_her_secret() {
    let line = "アイラは実は料理が得意だ。";
    let secret = "アイラは実は王族の血筋";
    let with = similarity(secret, "アイラ", line);
    let without = similarity(secret, "", line);
    assert!(with < without, "{with:.3} vs {without:.3}");
}

#[test]
fn hiragana_bigrams_weigh_half_and_kanji_also_count_alone() {
    let p = Profile::new(&fold_core("ってた"), &[]);
    assert!((p.weight() - 2.0 * HIRAGANA_WEIGHT).abs() < 1e-9);
    // 内, 緒 and the bigram 内緒.
    let p = Profile::new(&fold_core("内緒"), &[]);
    assert!((p.weight() - (2.0 * KANJI_WEIGHT + 1.0)).abs() < 1e-9);
    // Entity features are discounted wherever they occur in the secret.
    let p = Profile::new(&fold_core("あゆ"), &fold_core("あゆ"));
    assert!((p.weight() - HIRAGANA_WEIGHT * ENTITY_WEIGHT).abs() < 1e-9);
}

#[test]
fn segments_do_not_join_across_a_gap() {
    let joined = Profile::new(&fold_core("内緒猫"), &[]);
    let parts = Profile::from_segments(
        [fold_core("内緒").as_slice(), fold_core("猫").as_slice()],
        &[],
    );
    // 緒猫 exists only when joined.
    assert!((joined.weight() - parts.weight() - 1.0).abs() < 1e-9);
}
