//! Names the surname list cannot know (issue 26 §1), found by their cue alone: a name in
//! katakana (ヤマモト タクヤさん, ﾀﾅｶ様), hiragana (きたむら ようすけ先生, みさきさん), romaji
//! (Taro Aoki先生, Miyamotoくん) or unlisted kanji (猿渡さん, 小鳥遊ゆうなさん) before an
//! honorific or a self-introduction, after 名前は, or after 俺、/僕、/私、. This is the
//! fallback's rule; the lindera path adds the dictionary's 人名 (see `proper`).

use crate::text::chars::{is_hiragana, is_kanji, is_katakana};

use super::view::{View, is_edge};

/// Hiragana words that stand before さん/ちゃん/くん without being a name (みなさん,
/// ねえさん, あかちゃん) or that end a phrase (もうちゃんと).
pub(super) const NOT_KANA_NAMES: [&str; 74] = [
    // kakeai's own characters (seed 000): やな and あゆ are not people.
    "やな",
    "あゆ",
    // Kin and polite words with お (おばあちゃん, おかあさん, おまわりさん).
    "おかあ",
    "おとう",
    "おにい",
    "おねえ",
    "おばあ",
    "おじい",
    "おば",
    "おじ",
    "おく",
    "おくさ",
    "おきゃく",
    "おじょう",
    "おまわり",
    "おいしゃ",
    "おひめ",
    "おうじ",
    "おほし",
    "おつき",
    "おてんと",
    "おつかれ",
    "おはよう",
    "ありがと",
    "みな",
    "みんな",
    "あなた",
    "かれ",
    "かのじょ",
    "だれ",
    "どなた",
    "ねえ",
    "にい",
    "ばあ",
    "じい",
    "かあ",
    "とう",
    "あか",
    "もう",
    "まだ",
    "また",
    "ちょっと",
    "きっと",
    "ずっと",
    "やっと",
    "もっと",
    "そう",
    "こう",
    "どう",
    "うん",
    "はい",
    "いや",
    "ほら",
    "おまえ",
    "あんた",
    "あの",
    "この",
    "その",
    "それ",
    "これ",
    "あれ",
    "どれ",
    "あいつ",
    "こいつ",
    "そいつ",
    "あのね",
    "ところで",
    "そういえば",
    "みなさん",
    // Pets called with ちゃん (わんちゃん, ねこちゃん).
    "わん",
    "にゃん",
    "ねこ",
    "いぬ",
    "うさ",
];

/// Katakana words used with さん that are roles, not names (コックさん, サンタさん).
pub(super) const NOT_KATA_NAMES: [&str; 20] = [
    "ママ",
    "パパ",
    "コック",
    "サンタ",
    "ナース",
    "ドライバー",
    "ガイド",
    "スタッフ",
    "オーナー",
    "マスター",
    "ファン",
    "アイドル",
    "ケーキ",
    "パン",
    "ワン",
    "ニャン",
    "ネコ",
    "イヌ",
    "ワンコ",
    "ニャンコ",
];

/// Last kanji of words that are roles or kin, not names (店員さん, 運転手さん, お母さん).
const ROLE_ENDS: &str = "員者手屋師士官長主人方客母父兄姉弟妹娘婦夫皆様嫁婿孫職友家医匠神奥彼仏諸貴店堂社組亭園館院局署所駅市区県機業事";

/// Work words that take さん without being a name (編集さん, 受付さん, 建設さん).
pub(super) const ROLE_WORDS: [&str; 26] = [
    "編集",
    "営業",
    "事務",
    "受付",
    "担当",
    "広報",
    "総務",
    "人事",
    "経理",
    "秘書",
    "建設",
    "工事",
    "清掃",
    "警備",
    "配達",
    "郵便",
    "宅配",
    "管理",
    "設計",
    "窓口",
    "大工",
    "庭師",
    "植木",
    "電気",
    "旦那",
    "若旦那",
];

/// Words ending in 子 that are not names (息子さん, 様子).
const NOT_KO_NAMES: [&str; 17] = [
    "息子", "女子", "男子", "弟子", "双子", "様子", "調子", "王子", "菓子", "帽子", "学生", "先生",
    "校生", "院生", "年生", "級生", "入生",
];

/// Leading time words that are not part of a name (昨日小鳥遊さん → 小鳥遊).
pub(super) const LEADING_NOISE: [&str; 12] = [
    "昨日", "今日", "明日", "先日", "今朝", "昨夜", "今度", "今夜", "去年", "今年", "毎日", "最近",
];

/// Whether chars `..s` end with a leading time word (昨日|かぶらぎ, 明日|Pelvoraの).
pub(super) fn after_time_word(v: &View, s: usize) -> bool {
    let head = v.slice(0, s);
    LEADING_NOISE.iter().any(|w| head.ends_with(w))
}

/// Kanji that end the stem of a godan く verb: 行くんだ, 落ち着くんだ hold no 行くん.
const KU_STEMS: &str = "行書着聞歩働驚置泣咲引弾吹巻抱開磨焼描浮向招除欠続叩届解導築嘆敷履拭渇傾突頷退効動乾覗湧紡呟囁躓呻閃剥";

/// Last kanji of animals called with ちゃん/さん (猫ちゃん, 三毛猫さん, 子犬ちゃん).
pub(super) const ANIMAL_ENDS: &str = "猫犬兎猿豚狸狐虎象";

/// Honorifics that a single unlisted kanji before them makes a word (模様, 仕様, 本殿, 彼氏).
const WORD_AFTER_ONE_KANJI: [&str; 4] = ["様", "さま", "殿", "氏"];

/// Gods and shrines called with 様 (八幡様, お稲荷様, 観音様).
const DEITIES: [&str; 17] = [
    "八幡",
    "天神",
    "稲荷",
    "観音",
    "地蔵",
    "弁天",
    "大黒",
    "恵比寿",
    "不動",
    "薬師",
    "明神",
    "権現",
    "天狗",
    "閻魔",
    "菩薩",
    "如来",
    "大仏",
];

/// Whether the name `[s, e)` found before the honorific `cue` is a word with it instead:
/// 行くんだ (a verb), たくさん, 模様 / 本殿 (one unlisted kanji before 様 or 殿), 猫ちゃん.
/// `listed`: the name is in the surname list (林様 stays a name).
pub(super) fn honorific_word(v: &View, s: usize, e: usize, cue: &str, listed: bool) -> bool {
    let word = v.slice(s, e).trim_end();
    let one_kanji = word.chars().count() == 1 && word.chars().all(is_kanji);
    let last = word.chars().last();
    let deity = matches!(cue, "様" | "さま") && DEITIES.contains(&word);
    deity
        || (cue == "殿" && !listed)
        || (cue == "くん" && one_kanji && last.is_some_and(|c| KU_STEMS.contains(c)))
        || (cue == "さん" && (word.ends_with("たく") || word.ends_with("だく")))
        || (cue == "ちゃん" && word == "赤")
        || (cue == "氏" && word.ends_with('彼'))
        || (one_kanji && !listed && WORD_AFTER_ONE_KANJI.contains(&cue))
        || last.is_some_and(|c| ANIMAL_ENDS.contains(c))
}

fn is_kata(c: char) -> bool {
    is_katakana(c) && c != '・'
}

fn is_latin(c: char) -> bool {
    c.is_ascii_alphabetic()
}

/// The start of a run of `class` ending at `end`, optionally extended over one space (or ・)
/// to a second run of the same class: a full name with a gap.
fn run_with_gap(v: &View, end: usize, max: usize, class: fn(char) -> bool) -> usize {
    let s = v.run_before(end, max, class);
    if s == end || s < 2 || !matches!(v.at(s - 1), Some(' ' | '・')) {
        return s;
    }
    let s2 = v.run_before(s - 1, max, class);
    if s2 < s - 1 { s2 } else { s }
}

/// A katakana name ending at `p`.
fn katakana(v: &View, p: usize) -> Option<usize> {
    let s = run_with_gap(v, p, 8, is_kata);
    let word = v.slice(s, p);
    (p - s >= 2 && !NOT_KATA_NAMES.contains(&word)).then_some(s)
}

/// A romaji name ending at `p` (Taro Aoki, MIZUNO Makoto, Miyamoto): words of two or more
/// letters, the first upper case.
fn romaji(v: &View, p: usize) -> Option<usize> {
    let s = run_with_gap(v, p, 16, is_latin);
    let words_ok = v
        .slice(s, p)
        .split(' ')
        .all(|w| w.len() >= 2 && w.starts_with(|c: char| c.is_ascii_uppercase()));
    (p > s
        && words_ok
        && !v
            .at(s.wrapping_sub(1))
            .is_some_and(|c| c.is_ascii_alphanumeric()))
    .then_some(s)
}

/// The start of a hiragana word ending at `at`: cut before a particle that follows a
/// non-kana char (友達の|ゆい), at most `max` long.
fn hira_start(v: &View, at: usize, max: usize) -> usize {
    let s = super::orgs::kana_run_start(v, at, max);
    // 昨日|かぶらぎ: after a time word, か/と/や… open a name rather than end a phrase.
    let full = v.run_before(at, max, is_hiragana);
    let s = if full < s
        && v.at(full).is_some_and(|c| "かやねよと".contains(c))
        && after_time_word(v, full)
    {
        full
    } else {
        s
    };
    // No word starts with っ/ん/ー: the particle cut was wrong (昨日|はっとり).
    if s > 0 && s < at && matches!(v.at(s), Some('っ' | 'ん' | 'ー')) && is_hiragana(v.chars[s - 1])
    {
        s - 1
    } else {
        s
    }
}

fn hira_word_ok(w: &str) -> bool {
    let n = w.chars().count();
    (2..=10).contains(&n)
        && !w.starts_with(['ご', 'っ', 'ー', 'ん'])
        && !w.ends_with(['く', 'だ', 'ず', 'て', 'で', 'の'])
        && !NOT_KANA_NAMES
            .iter()
            .any(|n| w == *n || (n.starts_with('お') && w.starts_with(n)))
}

/// A hiragana word that stands where a name may without being one (みんな, あいつ, ちょっと).
pub(super) fn is_common_kana_word(w: &str) -> bool {
    w.chars().all(is_hiragana) && !hira_word_ok(w)
}

/// A kanji-led word that may be a name: no role or kin ending (店員, 母), no 〜子 word
/// (息子, 様子), not a time word alone (昨日).
pub(super) fn kanji_word_ok(w: &str) -> bool {
    let last_kanji = w.chars().rev().find(|&c| is_kanji(c));
    let kana_tail = w.chars().last().is_some_and(is_hiragana);
    !LEADING_NOISE.contains(&w)
        && (kana_tail || !last_kanji.is_some_and(|c| ROLE_ENDS.contains(c)))
        && !NOT_KO_NAMES.iter().any(|n| w.ends_with(n))
}

/// Words that open a hiragana run before a name or a kin word without being part of it.
const KANA_LEADS: [&str; 16] = [
    "うちの",
    "わたしの",
    "あたしの",
    "ぼくの",
    "おれの",
    "そういえば",
    "ところで",
    "あのね",
    "なんか",
    "やっぱり",
    "でも",
    "ねえ",
    "あと",
    "じつは",
    "たしか",
    "きのう",
];

/// A hiragana name ending at `p`, with an optional hiragana surname one space before it.
fn hiragana(v: &View, p: usize) -> Option<usize> {
    let first = hira_start(v, p, 9);
    let mut s = first;
    // うちのじいちゃん, そういえばおばあちゃん: a leading word is no part of the name.
    'lead: loop {
        let run = v.slice(s, p);
        for w in KANA_LEADS {
            if run.starts_with(w) && p - s > w.chars().count() {
                s += w.chars().count();
                continue 'lead;
            }
        }
        break;
    }
    // Glued to hiragana before it, it is the end of a word — unless that is the particle の
    // after kanji (隣の席の|ゆづきさん).
    let after_no =
        s > first || (s >= 2 && v.at(s - 1) == Some('の') && v.at(s - 2).is_some_and(is_kanji));
    if !hira_word_ok(v.slice(s, p))
        || (v.at(s.wrapping_sub(1)).is_some_and(is_hiragana) && !after_no)
    {
        return None;
    }
    if s >= 3 && v.at(s - 1) == Some(' ') {
        let s2 = hira_start(v, s - 1, 6);
        // A surname may end in の (ほしの あけみ).
        let sur = v.slice(s2, s - 1);
        let sur_ok = hira_word_ok(sur) || (sur.ends_with('の') && sur.chars().count() >= 2);
        if s2 < s - 1 && sur_ok {
            return Some(s2);
        }
    }
    Some(s)
}

/// A kana given name right after kanji (粟津ゆず, 小鳥遊ゆうな): looser than a word on its own
/// (ゆず, しず end like adverbs only when they stand alone).
fn given_after_kanji_ok(w: &str) -> bool {
    let n = w.chars().count();
    (2..=4).contains(&n)
        && !w.starts_with(['ご', 'っ', 'ー', 'ん'])
        && !w.ends_with(['て', 'で', 'の', 'だ'])
        && !NOT_KANA_NAMES.contains(&w)
}

/// Kanji not in the surname list (猿渡, 小鳥遊), optionally with a kana given name (小鳥遊ゆうな):
/// one to four kanji after leading time words, not ending like a role or kin word.
fn kanji(v: &View, p: usize) -> Option<usize> {
    let g = hira_start(v, p, 4);
    let given = if p - g >= 2 && given_after_kanji_ok(v.slice(g, p)) {
        g
    } else {
        p
    };
    let mut end = given;
    // 中村 かのん: a kana given name after one space.
    if given < p
        && given >= 2
        && v.at(given - 1) == Some(' ')
        && v.at(given - 2).is_some_and(is_kanji)
    {
        end = given - 1;
    }
    // 桐生 くみ子, 丸山 葵: kanji (and kana) given name after one space.
    let kanji_or_kana = |c: char| is_kanji(c) || is_hiragana(c);
    if given == p {
        let gs = v.run_before(p, 4, kanji_or_kana);
        // …but 轟木 澪のお母さん: a given name holds no の.
        if gs < p
            && gs >= 2
            && v.at(gs - 1) == Some(' ')
            && v.at(gs - 2).is_some_and(is_kanji)
            && !v.slice(gs, p).contains('の')
        {
            end = gs - 1;
        }
    }
    let run = v.run_before(end, 6, is_kanji);
    if run == end {
        return None;
    }
    let mut s = run;
    'noise: loop {
        for w in LEADING_NOISE {
            if v.slice(s, end).starts_with(w) && end - s >= w.chars().count() {
                s += w.chars().count();
                continue 'noise;
            }
        }
        break;
    }
    if s == end {
        // Only time words before a kana name (昨日はっとりさん): the kana name alone.
        return (given < p).then_some(given);
    }
    // With a given name one space after it (染谷 拓人, 中村 かのん) it has a name's shape:
    // no role ending to check (拓人 is a given name, not 友人).
    let spaced = end < p && v.at(end) == Some(' ');
    let last = if spaced { '　' } else { v.at(given - 1)? };
    let word = v.slice(s, given);
    let polite_prefix = v
        .at(s.wrapping_sub(1))
        .is_some_and(|c| matches!(c, 'お' | 'ご'));
    let ok = (1..=5).contains(&(end - s))
        && !ROLE_WORDS.contains(&word)
        && !ROLE_ENDS.contains(last)
        && !NOT_KO_NAMES.iter().any(|w| word.ends_with(w))
        && !polite_prefix;
    ok.then_some(s)
}

/// A name of any script ending right before a strong cue at `p` (an honorific, と申します).
pub(super) fn before_strong(v: &View, p: usize) -> Option<(usize, usize)> {
    let p = if p > 0 && v.at(p - 1) == Some(' ') {
        p - 1
    } else {
        p
    };
    let c = v.at(p.checked_sub(1)?)?;
    let s = if is_kata(c) {
        katakana(v, p)
    } else if is_latin(c) {
        romaji(v, p)
    } else if is_hiragana(c) {
        kanji(v, p).or_else(|| hiragana(v, p))
    } else if is_kanji(c) {
        kanji(v, p)
    } else {
        None
    }?;
    Some((s, p))
}

/// `◯◯です` (the name ends at `p`, です ends at `q`) as a self-introduction: a name after
/// 僕、/俺、/私、/私は or at the start of a sentence — a katakana or romaji one only in an
/// introduction or alone at the start before a pause (カレーですか stays a word).
pub(super) fn before_desu(v: &View, p: usize, q: usize) -> Option<(usize, usize)> {
    let c = v.at(p.checked_sub(1)?)?;
    let s = if is_kata(c) {
        katakana(v, p)
    } else if is_latin(c) {
        romaji(v, p)
    } else if is_hiragana(c) {
        // Hiragana only as a full name with a space (たかはし けんとです): a single word
        // before です is too often a word (そうです) — unless the message introduces its
        // writer (…です。よろしくお願いします) and the word is no common one.
        let intro = self_introduction(v);
        kanji(v, p).filter(|_| intro).or_else(|| {
            hiragana(v, p).filter(|&s| {
                let w = v.slice(s, p);
                // …and not an honorific's word (ゆうりさんです: the honorific rule's).
                !["さん", "ちゃん", "くん"].iter().any(|h| w.ends_with(h))
                    && (w.contains(' ')
                        || (intro && w.chars().count() >= 3 && !NOT_INTRO_WORDS.contains(&w)))
            })
        })
    } else if is_kanji(c) && self_introduction(v) {
        kanji(v, p).filter(|&s| !NOT_INTRO_KANJI.contains(&v.slice(s, p)))
    } else {
        None
    }?;
    // A katakana or romaji word before です is a name only in an introduction, or alone at
    // the start before a pause (カレーですか, マジですごい, …、ストロングゼロですね stay).
    let foreign = is_kata(c) || is_latin(c);
    let pause_after = v
        .at(q)
        .is_none_or(|c| matches!(c, '、' | '。' | '！' | '!' | '.' | ',' | ' ' | '\n'));
    let lead_ok = if foreign {
        first_person_before(v, s) || self_introduction(v) || (s == 0 && pause_after)
    } else {
        // 先ほどお電話した枡谷です, 引き継ぎました鍬田です: the writer described by a clause.
        let described = ["した", "ました", "いたしました"]
            .iter()
            .any(|w| v.slice(0, s).ends_with(w))
            && self_introduction(v)
            && p - s >= 2;
        s == 0 || v.at(s - 1).is_some_and(is_edge) || first_person_before(v, s) || described
    };
    // 担当の蕪木伊吹です。よろしく…: a role with の before the name of a writer introducing
    // themselves.
    let role_no = s >= 2 && v.at(s - 1) == Some('の') && self_introduction(v) && {
        let before = v.slice(0, s - 1);
        ROLE_WORDS.iter().any(|w| before.ends_with(w))
            || [
                "担当者",
                "営業部",
                "総務部",
                "人事部",
                "新人",
                "新入社員",
                "後任",
            ]
            .iter()
            .any(|w| before.ends_with(w))
    };
    (lead_ok || role_no).then_some((s, p))
}

/// Hiragana words that stand before です in a self-introduction without being a name.
const NOT_INTRO_WORDS: [&str; 14] = [
    "わたし",
    "あたし",
    "こちら",
    "そちら",
    "はじめて",
    "ひさしぶり",
    "おひさしぶり",
    "よろしく",
    "ありがとう",
    "だいじょうぶ",
    "ほんとう",
    "しんじん",
    "はじめまして",
    "おねがい",
];

/// Kanji words that stand before です in a self-introduction without being a name (派遣です。
/// …で働いています).
const NOT_INTRO_KANJI: [&str; 44] = [
    "初投稿",
    "初参加",
    "新人",
    "新入り",
    "派遣",
    "営業",
    "事務",
    "経理",
    "総務",
    "人事",
    "正社員",
    "契約",
    "無職",
    "自営",
    "浪人",
    "既婚",
    "独身",
    "元気",
    "残業",
    "休み",
    "本当",
    "大丈夫",
    "無理",
    "了解",
    "結構",
    "同感",
    "賛成",
    "反対",
    "最高",
    "最悪",
    "初心者",
    "以上",
    "一緒",
    "新卒",
    "中途",
    "夜勤",
    "日勤",
    "週末",
    "毎日",
    "今日",
    "昨日",
    "明日",
    "今年",
    "春",
];

/// Words by which a message introduces its writer.
pub(super) const INTRO_WORDS: &[&str] = &[
    "よろしく",
    "はじめまして",
    "初めまして",
    "申します",
    "宜しく",
    // An affiliation right after the name: a writer saying who they are.
    "で働いて",
    "に勤めて",
    "に勤務して",
    "の一年です",
    "の二年です",
    "の三年です",
    "年生です",
    "から来ました",
    "を担当して",
    "お世話になります",
    "初投稿",
    // A greeting that opens a message (お疲れさまです、鈴木です / こんにちは、…です).
    "こんにちは、",
    "こんばんは、",
    "おはようございます、",
    "お疲れさまです",
    "お疲れ様です",
    "おつかれさまです",
    // dev6: a form, a profile, a writer taking over or calling back
    "自己紹介",
    "引き継ぎました",
    "お電話した",
    "ご連絡しました",
    "ご連絡いたしました",
];

/// The message introduces its writer: よろしく / はじめまして / 初めまして / 申します. The
/// masker sets this from its scan; a view made elsewhere looks for itself.
fn self_introduction(v: &View) -> bool {
    *v.intro
        .get_or_init(|| INTRO_WORDS.iter().any(|w| v.norm.contains(w)))
}

/// Readings and asides that stand in brackets without being a name ((笑), (仮)).
const NOT_BRACKETED: [&str; 14] = [
    "笑",
    "汗",
    "泣",
    "涙",
    "爆",
    "怒",
    "謎",
    "仮",
    "仮名",
    "本名",
    "旧姓",
    "偽名",
    "敬称略",
    "匿名",
];

/// A name-like run in brackets or quotes ending right before `p` (鮫島いおり（刑部）です,
/// 「イッシキ」って名字): `(position of the opening bracket, the inner span)`.
pub(super) fn bracketed_before(v: &View, p: usize) -> Option<(usize, (usize, usize))> {
    let close = p.checked_sub(1)?;
    let open_of = match v.at(close)? {
        ')' | '）' => ['(', '（'],
        '」' => ['「', '「'],
        '』' => ['『', '『'],
        _ => return None,
    };
    let open = (close.saturating_sub(16)..close)
        .rev()
        .find(|&i| v.at(i).is_some_and(|c| open_of.contains(&c)))?;
    let inner = v.slice(open + 1, close);
    let n = close - open - 1;
    let one_class = [is_kata_or_space, is_latin_or_space, is_kanji_or_kana]
        .iter()
        .any(|f| inner.chars().all(f));
    // Kanji and kana read as a name once: kanji then kana (鮫島いおり) or one script alone —
    // not a clause that switches back and forth (「最初に何が起こるか」ですが).
    let switches = inner
        .chars()
        .filter(|&c| c != ' ')
        .collect::<Vec<_>>()
        .windows(2)
        .filter(|w| is_kanji(w[0]) != is_kanji(w[1]))
        .count();
    let ok = (1..=14).contains(&n)
        && one_class
        && switches <= 1
        && !inner.starts_with(' ')
        && !NOT_BRACKETED.contains(&inner)
        && !NOT_KANA_NAMES.contains(&inner);
    ok.then_some((open, (open + 1, close)))
}

fn is_kata_or_space(c: char) -> bool {
    is_katakana(c) || c == ' '
}

fn is_latin_or_space(c: char) -> bool {
    is_latin(c) || c == ' '
}

fn is_kanji_or_kana(c: char) -> bool {
    is_kanji(c) || is_hiragana(c) || c == ' '
}

/// After I'm / I am / This is at `q`: a name of any script up to a comma, a full stop or the
/// end; a romanised one must start upper case and not be a common English word.
pub(super) fn after_english(v: &View, q: usize) -> Option<(usize, usize)> {
    let c = v.at(q)?;
    if is_latin(c) {
        let e = v.run_after(q, 30, |c| is_latin(c) || c == ' ');
        let name = v.slice(q, e).trim_end();
        let e = q + name.chars().count();
        let words: Vec<&str> = name.split(' ').collect();
        let ok = (1..=3).contains(&words.len())
            && words.iter().all(|w| {
                w.len() >= 2
                    && w.starts_with(|c: char| c.is_ascii_uppercase())
                    && !NOT_ENGLISH_NAMES.contains(&w.to_ascii_lowercase().as_str())
            })
            && v.at(e)
                .is_none_or(|c| matches!(c, ',' | '.' | '!' | '、' | '。' | '\n'));
        return ok.then_some((q, e));
    }
    after_lead(v, q)
}

/// Capitalised English words that follow I'm / This is without being a name.
const NOT_ENGLISH_NAMES: [&str; 16] = [
    "japanese", "japan", "from", "not", "so", "very", "sorry", "happy", "fine", "ok", "okay",
    "here", "back", "home", "the", "tired",
];

/// The script class a name starting with `c` is read in: katakana, latin, or kanji and
/// hiragana together; None for anything else.
fn name_class(c: char) -> Option<fn(char) -> bool> {
    if is_kata(c) {
        Some(is_kata)
    } else if is_latin(c) {
        Some(is_latin)
    } else if is_kanji(c) || is_hiragana(c) {
        Some(|c| is_kanji(c) || is_hiragana(c))
    } else {
        None
    }
}

/// After 妹の / 友達の at `q`: a full name (two words apart by a space or ・, any script) or a
/// romanised one, then a particle. A single word is left to the lists and the dictionary —
/// 妹の部屋が, 友達のスマホが are no names.
pub(super) fn after_relation(v: &View, q: usize) -> Option<(usize, usize)> {
    let c = v.at(q)?;
    let class = name_class(c)?;
    let max = if is_latin(c) { 16 } else { 8 };
    let first = v.run_after(q, max, class);
    let gap = matches!(v.at(first), Some(' ' | '・')) && v.at(first + 1).is_some_and(class);
    let mut e = if gap {
        v.run_after(first + 1, max, class)
    } else {
        first
    };
    // A kanji/kana run reads on into the sentence (たくとが遊びに): the name ends at the
    // first particle that a kanji or a pause follows.
    if is_kanji(c) || is_hiragana(c) {
        let from = if gap { first + 2 } else { q + 1 };
        if let Some(i) = (from..e).find(|&i| {
            v.at(i).is_some_and(|c| "がはとにをもの".contains(c))
                && v.at(i + 1).is_some_and(|n| is_kanji(n) || is_kata(n))
        }) {
            e = i;
        }
    }
    let latin_ok = is_latin(c)
        && v.slice(q, e)
            .split(' ')
            .all(|w| w.len() >= 2 && w.starts_with(|c: char| c.is_ascii_uppercase()));
    let after = v.slice(e, (e + 2).min(v.len()));
    let particle = [
        "が", "は", "と", "に", "を", "も", "か", "っ", "、", "。", "の",
    ]
    .iter()
    .any(|w| after.starts_with(w));
    ((gap || latin_ok) && particle && e > first + 1).then_some((q, e))
}

/// 僕、/俺、/私、/私は/わたし、right before `s`.
fn first_person_before(v: &View, s: usize) -> bool {
    [
        "僕、",
        "俺、",
        "私、",
        "私は",
        "僕は",
        "俺は",
        "わたし、",
        "あたし、",
        "うち、",
    ]
    .iter()
    .any(|w| v.slice(s.saturating_sub(w.chars().count()), s) == *w)
}

/// After 名前は / 俺、/ 僕、/ 私、 at `q`: a name of any script up to the end of the phrase
/// (。、！？ です って と 申 だ or the end).
pub(super) fn after_lead(v: &View, q: usize) -> Option<(usize, usize)> {
    let start = v.run_after(q, 2, |c| c == ' ' || c == '「');
    let c = v.at(start)?;
    let class = name_class(c)?;
    let mut e = v.run_after(start, 10, class);
    if matches!(v.at(e), Some(' ' | '・')) && v.at(e + 1).is_some_and(class) {
        e = v.run_after(e + 1, 10, class);
    }
    // A kana run may carry the predicate (佐々木です): cut it there.
    const ENDS: [&str; 10] = [
        "です", "って", "と申", "とい", "と言", "だよ", "だ。", "っす", "なん", "じゃ",
    ];
    if let Some(cut) =
        (start + 1..e).find(|&i| ENDS.iter().any(|w| v.slice(i, (i + 2).min(v.len())) == *w))
    {
        e = cut;
    }
    // The phrase must end right there.
    let rest = v.slice(e, (e + 2).min(v.len()));
    // …or a phone number, a reading in brackets or a comma follows (連絡先：X 090…).
    let then_number = v.at(e) == Some(' ')
        && v.at(e + 1)
            .is_some_and(|c| c.is_ascii_digit() || matches!(c, '+' | '〇' | '('));
    let ends = e == v.len()
        || v.at(e).is_some_and(|c| {
            matches!(
                c,
                '。' | '、' | '！' | '？' | '!' | '?' | '」' | '.' | ',' | '（' | '(' | '\n'
            )
        })
        || then_number
        || ENDS.iter().any(|w| rest.starts_with(w));
    // In a kanji+kana run, the kana after the name are its given name only if they end there.
    let name = v.slice(start, e);
    let ok = ends
        && (2..=16).contains(&(e - start))
        && !["学生", "会社員", "社会人", "主婦", "秘密", "内緒"]
            .iter()
            .any(|w| name.starts_with(w))
        && (then_number || !name.ends_with(['い', 'た', 'だ', 'る', 'ね', 'よ']));
    ok.then_some((start, e))
}

/// After 俺、/ 僕、/ 私、 at `q`: a name only when the sentence says it (俺、伊藤大輔。/ 私、
/// サトウです / 僕、たかはし けんとだよ) and it has a name's shape — 私、なんか、/ あたし、
/// 乗り物酔いして、/ 私、雪道苦手なんだ are what the writer does or feels.
pub(super) fn after_first_person(v: &View, q: usize) -> Option<(usize, usize)> {
    let (s, e) = after_lead(v, q)?;
    const SAID: [&str; 13] = [
        "です",
        "だよ",
        "だ。",
        "っす",
        "と申",
        "って言",
        "とい",
        "と言",
        "。",
        "！",
        "!",
        "\n",
        "（",
    ];
    let rest = v.slice(e, (e + 3).min(v.len()));
    let said = e == v.len() || SAID.iter().any(|w| rest.starts_with(w));
    let name = v.slice(s, e);
    let kanji_head = name.chars().take_while(|&c| is_kanji(c)).count();
    let tail = v.slice(s + kanji_head, e);
    let shaped = match v.at(s)? {
        c if is_kanji(c) => {
            tail.is_empty()
                || (tail.chars().all(is_hiragana) && given_after_kanji_ok(tail))
                || tail.starts_with(' ') && tail[1..].chars().all(|c| is_kanji(c) || is_hiragana(c))
        }
        // Kana before です may end like an adverb (あわづゆずです, とまべち さくです).
        c if is_hiragana(c) => name.split(' ').all(|w| {
            w.chars().all(is_hiragana)
                && (hira_word_ok(w) || (rest.starts_with("です") && kana_name_before_desu(w)))
        }),
        _ => true,
    };
    (said && shaped).then_some((s, e))
}

/// A hiragana name right before です, which may end like an adverb (あわづゆず).
fn kana_name_before_desu(w: &str) -> bool {
    (2..=10).contains(&w.chars().count())
        && !w.starts_with(['ご', 'っ', 'ー', 'ん'])
        && !w.ends_with(['て', 'で', 'の', 'だ'])
        && !NOT_KANA_NAMES.contains(&w)
}

/// Hiragana that stands after 名前が / 名前は as what is said of the name, not the name
/// (名前がないの, 名前がいいね).
const NOT_NAME_IS: [&str; 8] = [
    "ない",
    "ある",
    "いい",
    "わから",
    "ちが",
    "おなじ",
    "かわい",
    "なが",
];

/// After 名前は / 名前が at `q`: [`after_lead`], less a predicate read as a hiragana name.
pub(super) fn after_name_is(v: &View, q: usize) -> Option<(usize, usize)> {
    after_lead(v, q).filter(|&(s, e)| {
        let name = v.slice(s, e);
        !(name.chars().all(is_hiragana) && NOT_NAME_IS.iter().any(|w| name.starts_with(w)))
    })
}

/// A full or romanised name opening the message, a comma and a greeting (サメジマ リツ、元気に
/// してる？): a name called out.
/// `greeting`: whether the message holds any of [`GREETINGS`] (the masker's scan knows).
pub(super) fn vocative(v: &View, greeting: bool) -> Option<(usize, usize)> {
    // Cheap first: most messages hold no greeting after a comma.
    if !v.has_comma || !(greeting || v.norm.contains('歳')) {
        return None;
    }
    let greeted = |e: usize, greetings: &[&str]| {
        let rest = v.slice(e, (e + 6).min(v.len()));
        greetings.iter().any(|g| rest.starts_with(g))
    };
    if let Some((s, e)) = after_relation(v, 0) {
        // 日下部 蓮、18歳です: a full name and an age.
        let aged = v.at(e) == Some('、')
            && v.slice(e + 1, (e + 5).min(v.len())).contains('歳')
            && v.at(e + 1).is_some_and(|c| c.is_ascii_digit());
        return (greeted(e, &GREETINGS) || aged).then_some((s, e));
    }
    // One word with no gap reads as a name only before a real greeting (not 、今 / 、聞いて:
    // それな、今).
    let class = name_class(v.at(0)?)?;
    let e = v.run_after(0, 12, |c| class(c) || c == ' ');
    let (s, e) = super::names_context::called_out(v, e)?;
    greeted(e, &GREETINGS[..GREETINGS.len() - 2]).then_some((s, e))
}

/// A greeting after a name called out (サメジマ リツ、元気？).
pub(super) const GREETINGS: [&str; 12] = [
    "、元気",
    "、久しぶり",
    "、おひさ",
    "、おはよう",
    "、こんにちは",
    "、こんばんは",
    "、ありがとう",
    "、おめでとう",
    "、お疲れ",
    "、おつかれ",
    "、聞いて",
    "、今",
];
