//! Addresses finer than a prefecture: 都道府県 + 市区町村 (+ 町名, 丁目, 番地, 号, building),
//! a 市区町村 chain with a block number and no prefecture, a town name right before a full
//! block number (道玄坂2-10-7, みなとみらい3-4-1; `address_town`), and 〒 postal codes.

use regex::Regex;

use super::view::{View, is_han};
use super::{Cand, PiiKind};

/// The 47 prefectures without their 都/道/府/県 suffix (北海道 is whole).
pub(super) const PREFECTURES: [&str; 47] = [
    "北海道",
    "青森",
    "岩手",
    "宮城",
    "秋田",
    "山形",
    "福島",
    "茨城",
    "栃木",
    "群馬",
    "埼玉",
    "千葉",
    "東京",
    "神奈川",
    "新潟",
    "富山",
    "石川",
    "福井",
    "山梨",
    "長野",
    "岐阜",
    "静岡",
    "愛知",
    "三重",
    "滋賀",
    "京都",
    "大阪",
    "兵庫",
    "奈良",
    "和歌山",
    "鳥取",
    "島根",
    "岡山",
    "広島",
    "山口",
    "徳島",
    "香川",
    "愛媛",
    "高知",
    "福岡",
    "佐賀",
    "長崎",
    "熊本",
    "大分",
    "宮崎",
    "鹿児島",
    "沖縄",
];

/// A prefecture's name at the start, or a word ending like a place (…市, …町): what the name
/// rules leave alone (from 東京, 東京と大阪, 勤め先は都内).
pub(super) fn place_like(word: &str) -> bool {
    PREFECTURES.iter().any(|p| word.starts_with(p))
        || word.ends_with(['都', '道', '府', '県', '市', '区', '町', '村'])
}

/// Kanji and katakana: the chars of a municipality or town name.
const K: &str = r"\x{4E00}-\x{9FFF}\x{3400}-\x{4DBF}\x{F900}-\x{FAFF}々〆ヶ\x{30A1}-\x{30FA}ー";

/// Municipalities written (partly) in hiragana; a general hiragana run would swallow particles
/// (東京都のある町).
const HIRAGANA_CITIES: &str = "さいたま|つくばみらい|つくば|いわき|ひたちなか|かすみがうら|ふじみ|\
     あわじ|いちき|みどり|いなべ|かほく|あわら|みよし|うきは|えびの|たつの|むつ|つがる|にかほ|\
     せたな|えりも|みなかみ|ときがわ|みやき|あま";

/// Words that end an address without belonging to it (東京都渋谷区在住 → 東京都渋谷区).
const TRAILERS: [&str; 20] = [
    "在住", "在勤", "在学", "出身", "付近", "周辺", "近辺", "方面", "界隈", "近郊", "勤務", "近",
    "辺", "内", "駅", "生", "育", "在", "-", "・",
];

fn pattern() -> String {
    let mut prefs: Vec<String> = Vec::with_capacity(47);
    for p in PREFECTURES {
        prefs.push(match p {
            "北海道" => p.to_string(),
            "東京" => format!("{p}都"),
            "京都" | "大阪" => format!("{p}府"),
            _ => format!("{p}県"),
        });
    }
    let pref = prefs.join("|");
    let name = format!("(?:{HIRAGANA_CITIES}|[{K}]){{1,8}}");
    let muni = format!("(?:{name}[市区町村郡]){{1,3}}");
    // の and が join town names (丸の内, 霞が関) and block numbers (3番地の2).
    let tail = format!("(?:[{K}0-9A-Za-z\\-・]+(?:[のが][{K}0-9A-Za-z\\-・]+)*)?");
    let num = "(?:[0-9]+|[一二三四五六七八九十]+)(?:丁目|番地)(?:の[0-9]+)?|[0-9]+-[0-9]+";
    // A town written in kana (あざみ野, みなとみらい) joins only when a block number follows.
    let kana_town = format!("[ぁ-ゖ{K}]{{1,10}}?(?:{num}){tail}");
    // Kyoto: 京都市中京区河原町通三条上ル下丸屋町123 — streets and directions (上ル, 下る,
    // 西入ル, 東入) up to the first number.
    let kyoto = format!(
        "(?:京都府)?京都市[{K}]{{1,3}}区[{K}ぁ-ゖ]{{0,12}}?(?:通|上ル|下ル|上る|下る|上が|下が|入ル|入る|西入|東入)[{K}ぁ-ゖ]{{0,16}}?[0-9]+(?:番地?(?:の[0-9]+)?|-[0-9]+)?"
    );
    // A postcode joins the address written after it (〒150-0001 東京都渋谷区…).
    let zip = "〒 ?[0-9]{3}-?[0-9]{4}";
    format!(
        "(?:{zip} ?)?(?:{kyoto}|(?:{pref}){muni}(?:{kana_town}|{tail})|{muni}[{K}0-9ぁ-ゖ]{{0,12}}?(?:{num}){tail})|{zip}"
    )
}

pub(super) struct Address {
    re: Regex,
}

impl Address {
    pub fn new() -> Address {
        // Built from constants and covered by the unit tests: a failure is a programming error.
        Address {
            re: Regex::new(&pattern()).expect("address pattern compiles"),
        }
    }

    pub fn find(&self, v: &View, out: &mut Vec<Cand>) {
        if !v.has_address_marker {
            return;
        }
        for m in self.re.find_iter(&v.norm) {
            let s = v.char_at(m.start());
            let mut e = trim_trailers(v, s, v.char_at(m.end()));
            e = extend_building(v, e);
            let has_pref = PREFECTURES.iter().any(|p| v.slice(s, e).starts_with(p));
            if e > s && (has_pref || !looks_like_a_score(v.slice(s, e))) {
                out.push(Cand::new(PiiKind::Address, s, e));
            }
        }
        super::address_town::find(v, out);
    }
}

/// Words of a match report: a 市区町村 chain followed by them and `3-1` is a score
/// (横浜市大会決勝3-1), not an address.
fn looks_like_a_score(m: &str) -> bool {
    [
        "大会", "試合", "決勝", "予選", "対戦", "勝", "負", "戦", "点", "回",
    ]
    .iter()
    .any(|w| m.contains(w))
}

fn trim_trailers(v: &View, s: usize, mut e: usize) -> usize {
    'outer: loop {
        for t in TRAILERS {
            let n = t.chars().count();
            if e >= s + n + 2 && v.slice(e - n, e) == t {
                e -= n;
                continue 'outer;
            }
        }
        return e;
    }
}

/// "…1-2-3 メゾン渋谷101": a building name after one space, when it carries a room number.
pub(super) fn extend_building(v: &View, e: usize) -> usize {
    let ends_in_number = v
        .at(e.wrapping_sub(1))
        .is_some_and(|c| c.is_ascii_digit() || matches!(c, '号' | '番' | '地' | '目'));
    let starts_building = v.at(e + 1).is_some_and(|c| {
        c.is_ascii_alphabetic() || crate::text::chars::is_katakana(c) || is_han(c)
    });
    if !(ends_in_number && v.at(e) == Some(' ') && starts_building) {
        return e;
    }
    // A building carries a room or floor number (メゾン渋谷101, 森タワー52階, 3F).
    let end = v.run_after(e + 1, 30, |c| {
        is_han(c)
            || crate::text::chars::is_katakana(c)
            || c.is_ascii_alphanumeric()
            || matches!(c, '-' | 'の' | 'ノ' | 'ヶ')
    });
    let last_digit = (e + 1..end).rev().find(|&i| v.chars[i].is_ascii_digit());
    match last_digit {
        // Through the number and its unit (階, 号室, F), not beyond.
        Some(d) => {
            let unit = v.run_after(d + 1, 2, |c| matches!(c, '階' | '号' | '室' | 'F' | 'f'));
            unit.max(d + 1)
        }
        None => e,
    }
}
