//! Company names (株式会社◯◯, ◯◯株式会社, 有限会社, (株), ㈱ …) and school names
//! (◯◯大学, ◯◯高校, ◯◯中学校 …): a legal form or school suffix found by the marker automaton,
//! and a name run of kanji / katakana / latin letters beside it. Particles, punctuation and
//! spaces end the run, so 東京の大学 has no name and is left alone. A name may also be written
//! in kana (株式会社みらい工房, 有限会社すずき商店, みなと小学校): a kana run joins when it is
//! whole, not a particle or an adjective (すごい大学, みんなと高校 stay). Common short school
//! names (東大, 早稲田; assets/safety/school_names.txt) need no suffix.

use crate::text::chars::{is_hiragana, is_katakana};

use super::view::{View, is_edge, is_org_char};
use super::{Cand, PiiKind};

/// Leading words that are not part of the name that follows them (今年東京大学に → 東京大学).
/// No single kanji here: 秋田大学 and 春日部高校 start with one.
const LEADING_NOISE: [&str; 41] = [
    "再来年",
    "明後日",
    "明日",
    "一昨日",
    "今朝",
    "今夜",
    "昨夜",
    "先日",
    "本日",
    "今回",
    "前回",
    "次回",
    "今年",
    "去年",
    "昨年",
    "来年",
    "今度",
    "今春",
    "来春",
    "昨春",
    "今秋",
    "当時",
    "将来",
    "現在",
    "元々",
    "結局",
    "無事",
    "毎日",
    "昨日",
    "今日",
    "先月",
    "今月",
    "来月",
    "先週",
    "今週",
    "来週",
    "息子",
    "長男",
    "長女",
    "次男",
    "次女",
];

/// Words that say what kind of school or company, not which one: a name made only of these
/// (県立高校, 有名私立大学, 大手株式会社) is no name.
const GENERIC: [&str; 96] = [
    "国公立",
    "出身",
    "併願",
    "本命",
    "希望",
    "受験",
    "合格",
    "推薦",
    "理系",
    "文系",
    "四年制",
    "近場",
    "母校",
    "入学",
    "卒業",
    "志望校",
    "第三志望",
    "滑り止め",
    "国立",
    "私立",
    "公立",
    "県立",
    "都立",
    "府立",
    "道立",
    "市立",
    "区立",
    "町立",
    "村立",
    "有名",
    "名門",
    "地元",
    "近所",
    "某",
    "志望",
    "第一志望",
    "第二志望",
    "一流",
    "二流",
    "三流",
    "難関",
    "上位",
    "中堅",
    "底辺",
    "普通",
    "一般",
    "海外",
    "外国",
    "地方",
    "工業",
    "商業",
    "農業",
    "水産",
    "総合",
    "単科",
    "進学",
    "夜間",
    "通信制",
    "定時制",
    "全日制",
    "通信",
    "付属",
    "附属",
    "女子",
    "男子",
    "共学",
    "新設",
    "伝統",
    "医科",
    "看護",
    "芸術",
    "教育",
    "美術",
    "音楽",
    "体育",
    "小中",
    "中高",
    "小",
    "中",
    "高",
    "大",
    "同",
    "別",
    "他",
    "各",
    "本",
    "当",
    "母",
    "旧",
    "元",
    "前",
    "新",
    "大手",
    "中小",
    "上場",
    "外資",
];

/// What may follow 株式会社 without being a company name (株式会社化, 株式会社勤務).
const NOT_A_COMPANY_NAME: [&str; 10] = [
    "勤務", "設立", "化", "形態", "組織", "登記", "制度", "法", "員", "等",
];

/// Strips generic words from the end and noise words from the front of `[s, e)`; returns the
/// start of what is left, or `None` when nothing specific is left.
pub(super) fn specific_start(v: &View, s: usize, e: usize) -> Option<usize> {
    // Compared as strings; a word's length in chars is counted only when it matched.
    let mut end = e;
    'right: while end > s {
        let run = v.slice(s, end);
        for g in GENERIC {
            if run.ends_with(g) {
                end -= g.chars().count();
                continue 'right;
            }
        }
        break;
    }
    let mut start = s;
    'left: while start < end {
        let run = v.slice(start, end);
        for w in LEADING_NOISE {
            if run.starts_with(w) {
                start += w.chars().count();
                continue 'left;
            }
        }
        break;
    }
    (start < end).then_some(start)
}

fn is_company_char(c: char) -> bool {
    is_org_char(c) || c.is_ascii_digit() || c == '&'
}

/// A legal form at chars `[ms, me)`: the name may stand before it, after it, or both.
pub(super) fn company(v: &View, ms: usize, me: usize, out: &mut Vec<Cand>) {
    let mut bs = v.run_before(ms, 20, is_company_char);
    // A number glued in front (a phone number: 03-1234-5678テスト商事株式会社) is not the name.
    while bs < ms && v.chars[bs].is_ascii_digit() {
        bs += 1;
    }
    // みどり物産有限会社: kana join only a specific name between them and the legal form.
    if bs == ms || specific_start(v, bs, ms).is_some() {
        bs = kana_lead(v, bs, bs < ms);
    }
    let before = if bs < ms {
        specific_start(v, bs, ms)
    } else {
        None
    };
    let mut ae = v.run_after(kana_tail(v, me), 24, is_company_char);
    // Latin names may hold spaces: 株式会社ABC Japan.
    while ae > me
        && v.at(ae) == Some(' ')
        && v.at(ae - 1).is_some_and(|c| c.is_ascii_alphanumeric())
        && v.at(ae + 1).is_some_and(|c| c.is_ascii_alphabetic())
    {
        ae = v.run_after(ae + 1, 24, is_company_char);
    }
    let ae = verb_stem_trimmed(v, me, ae);
    let after_ok = ae > me
        && !NOT_A_COMPANY_NAME
            .iter()
            .any(|w| v.slice(me, ae).starts_with(w))
        && specific_start(v, me, ae).is_some();
    // 内定は|らったのは㈱藤波運送: a name on both sides where the one before is kana only —
    // the kana are the sentence around the company, the name is the one after.
    let before = before.filter(|&b| !(after_ok && v.slice(b, ms).chars().all(is_hiragana)));
    match (before, after_ok) {
        (None, false) => {}
        (b, a) => out.push(Cand::new(
            PiiKind::Company,
            b.unwrap_or(ms),
            if a { ae } else { me },
        )),
    }
}

/// Kana that follow a noun as a particle, not as a verb's okurigana (交通|で, 交通|の). Not
/// `KANA_STOPS`: its っ is okurigana here (入った, 行って).
const PARTICLES: &str = "のがをにでともはへやかよねだ";

/// Kanji that open a verb or a trailing word, never end a name (辞める, 宛て, 製, 向け);
/// a name's own last kanji (カエデ堂, ミドリ屋) is not among them.
const VERB_STEMS: &str =
    "辞宛製向行来出見言入受落勤働止使買売送届頼呼決変始終続通選休帰待持作書読聞話";

/// The end of a name run `[me, ae)` without a verb's or a suffix's one kanji glued to a
/// katakana or latin name ((株)中央フーズ|辞めて, 株式会社Bluewave|宛て, ㈱ABC|製の): a listed
/// kanji after a non-kanji name char, before kana or the end, is not the name's.
fn verb_stem_trimmed(v: &View, me: usize, ae: usize) -> usize {
    let is_kanji = crate::text::chars::is_kanji;
    // After a kanji name only before its okurigana (㈱ルミナス製薬|辞めて).
    let glued = ae >= me + 2
        && v.at(ae - 1).is_some_and(|c| VERB_STEMS.contains(c))
        && (v.at(ae - 2).is_some_and(|c| !is_kanji(c))
            && v.at(ae).is_none_or(|c| !is_company_char(c))
            || v.at(ae)
                .is_some_and(|c| is_hiragana(c) && !PARTICLES.contains(c)));
    if glued { ae - 1 } else { ae }
}

/// A legal form written before the name only (一般社団法人◯◯).
pub(super) fn company_after(v: &View, ms: usize, me: usize, out: &mut Vec<Cand>) {
    let ae = v.run_after(kana_tail(v, me), 24, is_company_char);
    let ae = verb_stem_trimmed(v, me, ae);
    if ae > me && specific_start(v, me, ae).is_some() {
        out.push(Cand::new(PiiKind::Company, ms, ae));
    }
}

/// A school suffix at chars `[ms, me)`: the name must stand right before it, and the suffix
/// must not be the start of a student word (大学生, 高校生, 大学院生).
pub(super) fn school(v: &View, ms: usize, me: usize, out: &mut Vec<Cand>) {
    if v.at(me) == Some('生') {
        return;
    }
    named_before(v, ms, me, PiiKind::School, out);
}

/// A form at chars `[ms, me)` with the name right before it (◯◯大学, ◯◯出版社, ◯◯商事):
/// kanji, katakana or latin letters, or a whole kana name, not only generic words.
pub(super) fn named_before(v: &View, ms: usize, me: usize, kind: PiiKind, out: &mut Vec<Cand>) {
    named_before_word(v, ms, me, kind, false, out);
}

/// [`named_before`], where `word` says the form at `[ms, me)` is an industry word that is
/// itself the name's core (みらい|電設): a kana name of three kana or more ending in い may
/// stand right before it (an adjective's kanji stem keeps 安い|保険 out; an adjective in
/// kana, すごい, needs a business cue as any head does).
pub(super) fn named_before_word(
    v: &View,
    ms: usize,
    me: usize,
    kind: PiiKind,
    word: bool,
    out: &mut Vec<Cand>,
) {
    let mut bs = v.run_before(ms, 16, is_org_char);
    // みなと小学校, 市立みなみ小学校: a kana name, and what stands before it.
    let k = if bs == ms || specific_start(v, bs, ms).is_some() {
        kana_lead(v, bs, bs < ms || word)
    } else {
        // Only generic words before the suffix (ひばり|女子|高校): a kana name may stand before
        // them — not a phrase ending in の (ふつうの女子高校).
        let k = kana_lead(v, bs, false);
        if k < bs && v.at(bs - 1) != Some('の') {
            k
        } else {
            bs
        }
    };
    if k < bs {
        bs = v.run_before(k, 16, is_org_char);
    }
    if bs == ms {
        return;
    }
    bs = joined_place(v, bs);
    if let Some(s) = specific_start(v, bs, ms) {
        out.push(Cand::new(kind, s, me));
    }
}

/// What follows 勤務先は without being a company's name (秘密, 都内, 未定).
const NOT_NAMED: [&str; 16] = [
    "秘密",
    "内緒",
    "未定",
    "非公開",
    "自宅",
    "在宅",
    "地元",
    "近所",
    "実家",
    "海外",
    "本社",
    "支店",
    "工場",
    "病院",
    "役所",
    "会社",
];

/// A company name right after a phrase that names one (勤務先：ミナトテック): kanji,
/// katakana or latin up to a particle, a pause or the end; not only generic words.
pub(super) fn named_after(v: &View, q: usize, out: &mut Vec<Cand>) {
    let s = v.run_after(q, 2, |c| c == ' ');
    let e = v.run_after(s, 20, is_company_char);
    let ends = v
        .at(e)
        .is_none_or(|c| is_edge(c) || "でにのだ".contains(c) || c == '(' || c == '（');
    let word = v.slice(s, e);
    let vague = NOT_NAMED.contains(&word)
        || super::address::place_like(word)
        || word.ends_with(['内', '外']);
    if e > s && ends && !vague && specific_start(v, s, e) == Some(s) {
        out.push(Cand::new(PiiKind::Company, s, e));
    }
}

/// Katakana and latin words that stand before a business cue without being a company name:
/// workplaces, countries and cities (コンビニでバイト, アメリカで働いて).
pub(super) const NOT_BARE: [&str; 79] = [
    // Jobs before に転職 / に就職 (エンジニアに転職した): what one became, not where.
    "エンジニア",
    "システムエンジニア",
    "プログラマー",
    "デザイナー",
    "ライター",
    "カメラマン",
    "トレーナー",
    "インストラクター",
    "コンサルタント",
    "ナース",
    "ヘルパー",
    "スタッフ",
    "マネージャー",
    "ディレクター",
    "プランナー",
    "エディター",
    "アナリスト",
    "セラピスト",
    "パティシエ",
    "バイト",
    "アルバイト",
    "パート",
    "インターン",
    "フリーランス",
    "コンビニ",
    "カフェ",
    "スーパー",
    "ホテル",
    "レストラン",
    "デパート",
    "ファミレス",
    "パチンコ",
    "ドラッグストア",
    "ガソリンスタンド",
    "アパレル",
    "メーカー",
    "ベンチャー",
    "スタートアップ",
    "ブラック",
    "ホワイト",
    "ベンチャー企業",
    "チェーン",
    "フランチャイズ",
    "テレビ",
    "ゲーム",
    "アメリカ",
    "イギリス",
    "フランス",
    "ドイツ",
    "カナダ",
    "オーストラリア",
    "ハワイ",
    "アジア",
    "ヨーロッパ",
    "シンガポール",
    "ニューヨーク",
    "ロンドン",
    "パリ",
    "ソウル",
    "タイ",
    "ベトナム",
    "インド",
    "リモート",
    "テレワーク",
    "チーム",
    "グループ",
    "ブランド",
    "サロン",
    "プロジェクト",
    "システム",
    "サイト",
    "アプリ",
    "サービス",
    "イベント",
    "ショップ",
    "ジム",
    "クラブ",
    "サークル",
    "バンド",
];

/// A bare company name (no form, no industry word) right before a business cue at `p`:
/// katakana of three or more, or latin beginning with a capital (Quillstone, AURORA,
/// Mizuho-Labo), standing alone — after the start, a pause or a particle.
pub(super) fn bare_before(v: &View, p: usize, out: &mut Vec<Cand>) {
    let Some(last) = v.at(p.wrapping_sub(1)) else {
        return;
    };
    let (s, ok) = if is_katakana(last) {
        let s = v.run_before(p, 16, |c| is_katakana(c) && c != '・');
        (s, p - s >= 3)
    } else if last.is_ascii_alphanumeric() {
        let word = |end| {
            v.run_before(end, 24, |c| {
                c.is_ascii_alphanumeric() || matches!(c, '-' | '&')
            })
        };
        let mut s = word(p);
        // Kazemachi Labs, Orbit Design: capitalised words before it, one space apart.
        while s >= 2
            && v.at(s - 1) == Some(' ')
            && v.at(s - 2).is_some_and(|c| c.is_ascii_alphanumeric())
        {
            let w = word(s - 1);
            if !v.at(w).is_some_and(|c| c.is_ascii_uppercase()) {
                break;
            }
            s = w;
        }
        (
            s,
            v.at(s).is_some_and(|c| c.is_ascii_uppercase()) && p - s >= 3,
        )
    } else {
        return;
    };
    let word = v.slice(s, p);
    // 明日Pelvoraの担当者が: a time word before it is no part of it.
    let alone = s == 0
        || super::names_cue::after_time_word(v, s)
        || v.at(s - 1)
            .is_some_and(|c| is_edge(c) || "はがもをにで".contains(c));
    let common = NOT_BARE.contains(&word)
        || NOT_BARE
            .iter()
            .any(|w| w.eq_ignore_ascii_case(word) && w.is_ascii());
    if ok && alone && !common {
        out.push(Cand::new(PiiKind::Company, s, p));
    }
}

/// Place-name endings joined by が or の (南が丘, 星ヶ浦, 緑の森): the name starts before them.
const JOINED_ENDS: &str = "丘台原浜谷崎関森宮里沢峰島坂野";

/// `bs` moved before `◯◯が` when the name at `bs` is a place ending (南が|丘).
fn joined_place(v: &View, bs: usize) -> usize {
    let joined = bs >= 2
        && matches!(v.at(bs - 1), Some('が' | 'の'))
        && v.at(bs).is_some_and(|c| JOINED_ENDS.contains(c))
        && v.at(bs - 2).is_some_and(crate::text::chars::is_kanji);
    if joined {
        v.run_before(bs - 1, 8, crate::text::chars::is_kanji)
    } else {
        bs
    }
}

/// Kana that end a kana name read outward from the suffix or legal form: particles.
const KANA_STOPS: &str = "のはがをにでへもやかねよっ";

/// Kana words right after a legal form that are not a name (株式会社だから, 株式会社として).
const NOT_A_KANA_NAME: [&str; 21] = [
    "さん",
    "さま",
    "くん",
    "ちゃん",
    "たち",
    "だ",
    "じゃ",
    "です",
    "でし",
    "とか",
    "とは",
    "として",
    "なので",
    "なら",
    "なん",
    "しか",
    "さえ",
    "ばかり",
    "まで",
    "より",
    "みたい",
];

/// Words a kana run may end in that make it a phrase, not a name (みんなと, ともだちと).
const NOT_A_KANA_LEAD: [&str; 14] = [
    "ちゃん",
    "きちん",
    "みんな",
    "ともだち",
    "かれ",
    "かのじょ",
    "あなた",
    "きみ",
    "ぼく",
    "わたし",
    "おれ",
    "あいつ",
    "こいつ",
    "だれ",
];

/// Kana words that open a sentence and stand before anything (そういえば大学の…).
const ADVERBS: [&str; 20] = [
    "そういえば",
    "やっぱり",
    "たぶん",
    "きっと",
    "もう",
    "まだ",
    "また",
    "ぜんぜん",
    "ちょっと",
    "いつか",
    "いつも",
    "ところで",
    "ただ",
    "とりあえず",
    "なんか",
    "あと",
    "それで",
    "だから",
    "でも",
    "じゃあ",
];

fn is_name_kana(c: char) -> bool {
    is_hiragana(c) && !KANA_STOPS.contains(c)
}

/// The start of a whole kana name ending at `at`, or `at`: two to six kana that follow a
/// non-kana char or a particle, and do not end like an adjective, a verb or `◯◯と`.
fn kana_lead(v: &View, at: usize, before_core: bool) -> usize {
    let k = kana_run_start(v, at, 6);
    // Cut by the length limit inside a longer kana run: a phrase, not a name.
    let cut_short = at - k == 6 && v.at(k.wrapping_sub(1)).is_some_and(is_hiragana);
    if at - k < 2 || cut_short {
        return at;
    }
    // Only generic words may stand glued before a kana name (市立みなみ小学校); a name or a
    // noun there means the kana are an honorific or a particle (田中さんと青葉台高校).
    let pre = v.run_before(k, 16, is_org_char);
    if pre < k && specific_start(v, pre, k).is_some() {
        return at;
    }
    let run = v.slice(k, at);
    if ["さん", "くん", "ちゃん", "さま"]
        .iter()
        .any(|h| run.contains(h))
        || ADVERBS.iter().any(|w| run.ends_with(w))
    {
        return at;
    }
    // あの高校, うちの大学, ぼくの会社: a demonstrative or a pronoun with の, not a name.
    let possessive = run.strip_suffix('の').is_some_and(|r| {
        r.chars().count() <= 2
            || [
                "うち",
                "わたし",
                "ぼく",
                "おれ",
                "みんな",
                "あなた",
                "かれ",
                "かのじょ",
                "あたし",
            ]
            .contains(&r)
    });
    // A name may end in い (みらい電設) when a specific name core follows it (`before_core`:
    // すごい大学 has none), it opens the message or follows a particle, and it is no adjective
    // or verb form (新しい, 行きたい, 少ない, 〜っぽい).
    let opens = k == 0
        || v.at(k - 1)
            .is_some_and(|c| "がはをにもでと、。 ".contains(c));
    let name_in_i = before_core
        && run.ends_with('い')
        && run.chars().count() >= 3
        && opens
        && !["しい", "ない", "たい", "ぽい", "らしい", "くない", "ほしい"]
            .iter()
            .any(|w| run.ends_with(w));
    // …or in a long vowel う (ほうしょう商事, こうよう出版), never a verb there (思う, 言う).
    let name_in_u = opens
        && run.chars().count() >= 3
        && run
            .strip_suffix('う')
            .and_then(|r| r.chars().last())
            .is_some_and(|c| "ょゅおこそとのほもよろごぞどぼぽう".contains(c));
    // 内定もらったのは|㈱…: a clause that ends in a particle pair is a phrase, not a name.
    let phrase = [
        "のは", "には", "では", "とは", "のが", "にも", "でも", "のも", "って",
    ]
    .iter()
    .any(|w| run.ends_with(w));
    let bad_end = possessive
        || phrase
        || (run.ends_with('い') && !name_in_i)
        || (run.ends_with('う') && !name_in_u)
        || run.ends_with(['な', 'く', 'た', 'だ', 'る', 'ず', 'で', 'に', 'を'])
        || run
            .strip_suffix('と')
            .is_some_and(|r| r.chars().count() < 2 || NOT_A_KANA_LEAD.contains(&r));
    if bad_end { at } else { k }
}

/// The start of the hiragana run ending at `at` (at most `max` long), cut before a particle
/// that follows a non-kana char (うちの子は|かもめ小学校): a particle char inside a kana run is
/// part of the name (かもめ, あけぼの, ひまわり).
pub(super) fn kana_run_start(v: &View, at: usize, max: usize) -> usize {
    let mut k = at;
    while k > 0 && at - k < max {
        let c = v.chars[k - 1];
        if !is_hiragana(c) {
            break;
        }
        // A particle cannot open the message: at the start it is part of the word.
        // …and after a space or a mark neither (まるやま かのん): only after a word.
        let after_non_kana = k >= 2 && {
            let w = v.chars[k - 2];
            crate::text::chars::is_kanji(w)
                || crate::text::chars::is_katakana(w)
                || w.is_ascii_alphanumeric()
        };
        if KANA_STOPS.contains(c) && after_non_kana {
            break;
        }
        k -= 1;
    }
    k
}

/// The end of a kana name starting at `at` (after a legal form), or `at`. Its first kana may
/// be a particle's (株式会社|はなみずき保険, ㈱のぞみ建設) when no other particle follows in
/// the run and a kanji or katakana word closes it: 株式会社はもう, 株式会社はいいよ stay.
fn kana_tail(v: &View, at: usize) -> usize {
    let opens_with_stop = v
        .at(at)
        .is_some_and(|c| is_hiragana(c) && KANA_STOPS.contains(c));
    if opens_with_stop {
        let k = v.run_after(at + 1, 5, is_name_kana);
        let closed = v
            .at(k)
            .is_some_and(|c| crate::text::chars::is_kanji(c) || is_katakana(c));
        let run = v.slice(at, k);
        let phrase = run.ends_with(['い', 'く', 'た', 'な', 'て']);
        return if k - at >= 3 && closed && !phrase {
            k
        } else {
            at
        };
    }
    let k = v.run_after(at, 6, is_name_kana);
    let run = v.slice(at, k);
    if k - at < 2 || NOT_A_KANA_NAME.iter().any(|w| run.starts_with(w)) {
        at
    } else {
        k
    }
}

/// A short school name at chars `[ms, me)` (東大, 早稲田): no name char right before it, and
/// right after it no kanji but those of 東大生, 東大卒, 早稲田出身 … (東大寺, 明大前 stay).
pub(super) fn short_school(v: &View, ms: usize, me: usize, out: &mut Vec<Cand>) {
    let before_ok = !v.at(ms.wrapping_sub(1)).is_some_and(is_company_char);
    let after_ok = v.at(me).is_none_or(|c| {
        !(crate::text::chars::is_kanji(c)
            || c.is_ascii_alphanumeric()
            || crate::text::chars::is_katakana(c))
            || "生卒院出志合受入在義".contains(c)
    });
    if before_ok && after_ok {
        out.push(Cand::new(PiiKind::School, ms, me));
    }
}
