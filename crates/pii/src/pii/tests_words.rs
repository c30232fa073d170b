//! Words that take a name's cue without being a name, found on real chat-style lines (the
//! duo-talk corpus, half A; half B only measures): a verb before くんだ, たくさん, one kanji
//! before 様 (模様), deities and pets with 様/ちゃん, kin words after うちの, what the writer
//! does after 私、, a katakana word before ですか, a clause in brackets. Each generated over
//! words and frames, beside the names of the same shape that must still be found.

use super::PiiKind::*;
use super::tests_reported::found;

fn names(text: &str) -> Vec<String> {
    found(text)
        .into_iter()
        .filter(|(k, _)| *k == Name)
        .map(|(_, s)| s)
        .collect()
}

fn none(text: &str) {
    assert!(names(text).is_empty(), "{text}: {:?}", names(text));
}

fn one(text: &str, name: &str) {
    assert_eq!(names(text), [name], "{text}");
}

#[test]
fn a_verb_before_kunda_is_no_name() {
    let verbs = [
        "行",
        "書",
        "着",
        "聞",
        "歩",
        "働",
        "泣",
        "咲",
        "拭",
        "落ち着",
        "届",
    ];
    let tails = [
        "くんだ",
        "くんだよね",
        "くんですか",
        "くんじゃない？",
        "くんだって",
    ];
    let leads = ["明日は", "あゆ、一緒に", "どこに", ""];
    for v in verbs {
        for t in tails {
            for l in leads {
                none(&format!("{l}{v}{t}"));
            }
        }
    }
    for (n, t) in [
        ("翔", "くんだよ"),
        ("蓮", "くんが来た"),
        ("颯", "くんじゃない？"),
    ] {
        one(&format!("それ、{n}{t}"), n);
    }
}

#[test]
fn takusan_is_no_name() {
    for lead in ["", "結構", "盛りだ", "めっちゃ", "まだ"] {
        for tail in ["たくさん食べた", "たくさんある", "たくさんだね"] {
            let text = format!("{lead}{tail}").replace("だた", "だ");
            none(&text);
        }
    }
    none("イベントが盛りだくさんでした");
}

#[test]
fn one_kanji_before_sama_is_a_word_unless_listed() {
    for w in [
        "模様", "仕様", "同様", "異様", "王様", "神様", "本殿", "御殿",
    ] {
        for frame in ["その{}が好き", "{}の話", "面白い{}ですね"] {
            none(&frame.replace("{}", w));
        }
    }
    one("林様にお伝えください", "林");
    one("担当の鷲尾様にお伝えください", "鷲尾");
}

#[test]
fn deities_and_pets_are_no_names() {
    let words = [
        "八幡様",
        "お稲荷様",
        "観音様",
        "猫ちゃん",
        "子猫ちゃん",
        "三毛猫さん",
        "柴犬くん",
        "わんちゃん",
        "ワンちゃん",
        "ねこちゃん",
        "ニャンコちゃん",
    ];
    for w in words {
        for frame in [
            "{}かわいい",
            "地元の{}は賑やか",
            "あ、{}がいる",
            "{}の写真撮った",
        ] {
            none(&frame.replace("{}", w));
        }
    }
}

#[test]
fn kin_words_after_a_leading_word_are_no_names() {
    for lead in ["うちの", "そういえば", "あのね、うちの", "なんか"] {
        for kin in ["じいちゃん", "おばあちゃん", "ばあちゃん", "おじいさん"] {
            none(&format!("{lead}{kin}が来た"));
        }
    }
    one("うちのみさきちゃんが熱出した", "みさき");
}

#[test]
fn what_the_writer_does_after_watashi_is_no_name() {
    let leads = ["私、", "あたし、", "僕、", "俺、"];
    let rests = [
        "なんか、海行きたい",
        "その時、何が原因だったか覚えてる",
        "乗り物酔いして、ぐったりしてた",
        "まだ未成年じゃないよ",
        "雪道苦手なんだよね",
        "負けなかったもん！",
        "最近全然どこにも行ってないから",
        "生体が特殊で、飲めないんです",
    ];
    for l in leads {
        for r in rests {
            none(&format!("覚えてる？ {l}{r}"));
        }
    }
    for (l, n) in [
        ("私、", "佐藤"),
        ("俺、", "タナカ"),
        ("僕、", "あわづゆず"),
        ("私、", "鰐淵 凛"),
    ] {
        one(&format!("{l}{n}です。よろしく"), n);
    }
}

#[test]
fn a_katakana_word_before_desuka_is_no_name() {
    for w in [
        "カレー",
        "マジ",
        "チョコバナナ",
        "ラーメン",
        "ストロングゼロ",
    ] {
        for frame in [
            "姉様、{}ですか！",
            "え、{}ですね。",
            "あ、{}ですよ",
            "{}ですごいね",
        ] {
            none(&frame.replace("{}", w));
        }
    }
    one("タナカです。よろしくお願いします", "タナカ");
    one("サトウです！", "サトウ");
}

#[test]
fn a_clause_in_brackets_or_after_namae_ga_is_no_name() {
    none("姉様が気になる「最初に何が起こるか」ですが、例えば");
    none("「どこで食べるか」ですね");
    for rest in [
        "ないの？",
        "いいね",
        "ないからこそ、想像が膨らむ",
        "わからない",
    ] {
        none(&format!("え、なんで名前が{rest}"));
    }
    assert_eq!(
        names("鮫島いおり（刑部）です、よろしく"),
        ["鮫島いおり", "刑部"]
    );
}
