//! Names found by the sentence around them rather than a cue glued to them: two people joined
//! by と before a relationship verb (鮫島と十文字が付き合ってるらしい), a signature after
//! `from` at the end of a message (from 栗林暖), and a name of any script called out at the
//! start before a greeting (粟津こはる、元気にしてる？). Each shape is written in one script
//! per word; common words of the same shape stay (猫と犬が…, from 東京, みんな、元気？).

use crate::text::chars::{is_hiragana, is_kanji, is_katakana};

use super::address::place_like as place;
use super::view::{View, is_edge};

/// Words that stand in a pair before a relationship verb without being a name.
pub(super) const NOT_PAIR_NAMES: [&str; 44] = [
    "先輩",
    "後輩",
    "友達",
    "友だち",
    "彼氏",
    "彼女",
    "元カレ",
    "元カノ",
    "同僚",
    "上司",
    "部下",
    "先生",
    "担任",
    "店長",
    "社長",
    "部長",
    "課長",
    "あいつ",
    "こいつ",
    "そいつ",
    "あの人",
    "その人",
    "みんな",
    "誰か",
    "私",
    "僕",
    "俺",
    "自分",
    "君",
    "あなた",
    "あたし",
    "わたし",
    "うち",
    "ぼく",
    "おれ",
    "運営",
    "事務局",
    "管理人",
    "公式",
    "スタッフ",
    "ハロー",
    "ヤッホー",
    "オッス",
    "マジ",
];

/// English words that follow `from` without being a name (from Japan, from home).
const NOT_SIGNATURE: [&str; 16] = [
    "japan", "tokyo", "osaka", "kyoto", "home", "work", "school", "iphone", "android", "my", "the",
    "now", "here", "there", "today", "mobile",
];

/// The script class of `c` for a name word: kanji and hiragana read together (粟津こはる).
fn word_class(c: char) -> u8 {
    if is_kanji(c) || is_hiragana(c) {
        1
    } else if is_katakana(c) && c != '・' {
        2
    } else if c.is_ascii_alphabetic() {
        3
    } else {
        0
    }
}

/// Whether `[s, e)` reads as one person's name: one or two words of one script (a space or ・
/// between them), kanji at most six, kana two to ten, romaji words capitalised; not a common
/// word of that shape.
fn name_shaped(v: &View, s: usize, e: usize) -> bool {
    let text = v.slice(s, e);
    let n = e - s;
    let Some(first) = v.at(s) else { return false };
    let class = word_class(first);
    let words: Vec<&str> = text.split([' ', '・']).collect();
    let same_class = text
        .chars()
        .all(|c| c == ' ' || c == '・' || word_class(c) == class);
    if class == 0 || !same_class || words.len() > 2 || words.iter().any(|w| w.is_empty()) {
        return false;
    }
    if NOT_PAIR_NAMES.contains(&text) || super::names_cue::is_common_kana_word(text) || place(text)
    {
        return false;
    }
    match class {
        1 => {
            let kanji = text.chars().filter(|&c| is_kanji(c)).count();
            let starts_kanji = is_kanji(first);
            // A kanji word is a name when its last kanji is no role or kin ending; hiragana
            // alone must be at least two chars and no particle-led word.
            (1..=10).contains(&n)
                && kanji <= 6
                && (!starts_kanji || super::names_cue::kanji_word_ok(text))
                && (starts_kanji || n >= 2)
        }
        2 => (2..=12).contains(&n),
        _ => words
            .iter()
            .all(|w| w.len() >= 2 && w.starts_with(|c: char| c.is_ascii_uppercase())),
    }
}

/// The left edge of the phrase ending at `p`: the message start, a sentence edge, or the
/// particle の/は after a kanji or katakana word (クラスの|栗林と…).
fn phrase_start(v: &View, p: usize) -> usize {
    let mut s = p;
    while s > 0 {
        let c = v.chars[s - 1];
        if is_edge(c) && c != ' ' && c != '・' {
            break;
        }
        if matches!(c, 'の' | 'は' | 'で')
            && s >= 2
            && v.at(s - 2).is_some_and(|b| is_kanji(b) || is_katakana(b))
        {
            break;
        }
        if word_class(c) == 0 && c != ' ' && c != '・' {
            break;
        }
        s -= 1;
    }
    // Leading time words are no part of a name (昨日栗林と…).
    for w in ["昨日", "今日", "最近", "実は", "なんか", "ねえ"] {
        if v.slice(s, p).starts_with(w) {
            s += w.chars().count();
        }
    }
    s
}

/// Two names joined by と before a relationship verb at `p` (the が): both spans.
pub(super) fn pair(v: &View, p: usize) -> Vec<(usize, usize)> {
    let s = phrase_start(v, p);
    let to: Vec<usize> = (s + 1..p.saturating_sub(1))
        .filter(|&i| v.at(i) == Some('と'))
        .collect();
    // A change of script at と is the surest split (栗林とIgari); else the first と with a
    // name of two or more chars before it.
    let split = to
        .iter()
        .copied()
        .find(|&i| {
            let (a, b) = (v.at(i - 1).map(word_class), v.at(i + 1).map(word_class));
            a != b || v.at(i - 1).is_some_and(|c| !is_hiragana(c))
        })
        .or_else(|| to.iter().copied().find(|&i| i - s >= 2));
    let Some(i) = split else { return Vec::new() };
    if name_shaped(v, s, i) && name_shaped(v, i + 1, p) {
        vec![(s, i), (i + 1, p)]
    } else {
        Vec::new()
    }
}

/// A signature at the end of the message after `from ` ending at `q`: the name up to the end
/// (or the end of its line).
pub(super) fn signature(v: &View, p: usize, q: usize) -> Option<(usize, usize)> {
    if p > 0 && !v.at(p - 1).is_some_and(is_edge) {
        return None;
    }
    let e = v.run_after(q, 24, |c| c != '\n');
    let e = q + v.slice(q, e).trim_end().chars().count();
    let name = v.slice(q, e);
    let not_name = place(name)
        || NOT_PAIR_NAMES.contains(&name)
        || NOT_SIGNATURE.contains(&name.split(' ').next()?.to_ascii_lowercase().as_str());
    let kanji_kana_full = v.at(q).is_some_and(is_kanji)
        && name
            .chars()
            .all(|c| is_kanji(c) || is_hiragana(c) || c == ' ');
    (!not_name && e > q && (name_shaped(v, q, e) || kanji_kana_full) && e - q <= 16)
        .then_some((q, e))
}

/// A single word called out at the start before a greeting (粟津こはる、元気にしてる？):
/// kanji with a kana given name, three or more kanji, or kana of three or more.
pub(super) fn called_out(v: &View, e: usize) -> Option<(usize, usize)> {
    let name = v.slice(0, e);
    let kanji = name.chars().filter(|&c| is_kanji(c)).count();
    let all_hira = name.chars().all(is_hiragana);
    let tail = name.chars().rev().take_while(|&c| is_hiragana(c)).count();
    let head = super::names_cue::LEADING_NOISE.contains(&v.slice(0, e - tail));
    // An honorific is the honorific rule's (みさきさん、/ やなちゃん、).
    let honorific = ["さん", "ちゃん", "くん", "さま", "様", "君"]
        .iter()
        .any(|h| name.ends_with(h));
    let ok = !honorific
        && name_shaped(v, 0, e)
        && match word_class(v.chars[0]) {
            3 => true,
            2 => e >= 3,
            // ほのか、元気？ — but not ほんとに、/ あのね、
            _ if all_hira => e >= 3 && !name.ends_with(['に', 'ね', 'よ', 'も', 'は', 'わ']),
            // 粟津こはる: two or three kanji and a kana given name; all kanji is too often a
            // word (誕生日、おめでとう).
            _ => kanji == e - tail && (2..=3).contains(&kanji) && (2..=4).contains(&tail) && !head,
        };
    ok.then_some((0, e))
}
