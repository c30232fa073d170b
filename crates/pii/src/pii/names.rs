//! Personal names: a surname from the list (assets/safety/surnames.txt), optionally followed by
//! a given name in kanji or kana, next to a cue — an honorific after it (田中さん, 田中 さん,
//! 佐藤さゆりさん), a self-introduction after it (佐藤と申します, 私は鈴木です) or 名前は before
//! it. A surname without a cue is left alone (山田 alone may be a place; 出身は金沢です is one),
//! but a surname followed by a listed given name (assets/safety/given_names.txt) is a full
//! name wherever it stands as a whole kanji run (山田太郎って, 俺、伊藤大輔。). The honorific
//! itself is kept.

use rustc_hash::FxHashSet as HashSet;

use super::address::PREFECTURES;
use super::view::{View, is_edge, is_han};

const BUILTIN: &str = include_str!("../../../../assets/safety/surnames.txt");
const GIVEN: &str = include_str!("../../../../assets/safety/given_names.txt");

/// Words that may stand before `は` in `◯◯は田中です` for it to introduce a person; other
/// topics (出身は金沢です, 最寄りは中野です) name a place.
const SPEAKERS: [&str; 30] = [
    "私",
    "わたし",
    "わたくし",
    "あたし",
    "僕",
    "ぼく",
    "俺",
    "おれ",
    "オレ",
    "自分",
    "うち",
    "名前",
    "苗字",
    "名字",
    "担当",
    "担当者",
    "当方",
    "こちら",
    "彼",
    "彼女",
    "上司",
    "店長",
    "相手",
    "主人",
    "夫",
    "妻",
    "友達",
    "友人",
    "先生",
    "本名",
];

/// Kana runs after a surname that are not a given name (田中のおばさん, 佐藤だけです).
const NOT_KANA_GIVEN: [&str; 22] = [
    "おば",
    "おじ",
    "ばあ",
    "じい",
    "にい",
    "ねえ",
    "かあ",
    "とう",
    "おにい",
    "おねえ",
    "おばあ",
    "おじい",
    "たち",
    "ども",
    "だけ",
    "まで",
    "から",
    "より",
    "など",
    "ばかり",
    "しか",
    "くらい",
];

fn is_kana(c: char) -> bool {
    crate::text::chars::is_hiragana(c) || crate::text::chars::is_katakana(c)
}

/// A kana run that can be a given name: not a particle and a word after a surname.
fn kana_given_ok(g: &str) -> bool {
    !g.starts_with([
        'の', 'と', 'が', 'は', 'を', 'に', 'で', 'へ', 'も', 'や', 'っ', 'ー',
    ]) && !g.contains('の')
        && !NOT_KANA_GIVEN.contains(&g)
}

/// Titles that may directly follow a name; a "given name" equal to one is the title itself
/// (田中先生です is 田中 + 先生, not a person called 田中先生).
const TITLES: [&str; 6] = ["先生", "先輩", "教授", "社長", "部長", "課長"];

/// Chars that end shop and company words, never a given name (中村屋さん, 山田電機さん).
const NOT_GIVEN_END: &str = "屋店堂社組亭園館院局署所駅町村市区県機業事";

/// What may stand right before `◯◯です` for it to be a self-introduction.
const INTRO_LEADS: [&str; 3] = ["はじめまして", "初めまして", "どうも"];

pub(super) struct Names {
    surnames: HashSet<String>,
    max_len: usize,
    given: HashSet<String>,
}

impl Names {
    pub fn builtin() -> Names {
        let mut n = Names {
            surnames: HashSet::default(),
            max_len: 0,
            given: GIVEN
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty() && !l.starts_with('#'))
                .map(str::to_string)
                .collect(),
        };
        n.extend(
            BUILTIN
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty() && !l.starts_with('#')),
        );
        n
    }

    /// Adds surnames; entries that are empty or hold anything but kanji are ignored (names
    /// are matched on kanji runs only).
    pub fn extend<I: IntoIterator<Item = S>, S: AsRef<str>>(&mut self, names: I) {
        for name in names {
            let name = name.as_ref().trim();
            if name.is_empty() || !name.chars().all(is_han) {
                continue;
            }
            self.max_len = self.max_len.max(name.chars().count());
            self.surnames.insert(name.to_string());
        }
    }

    pub fn len(&self) -> usize {
        self.surnames.len()
    }

    pub fn contains(&self, surname: &str) -> bool {
        self.surnames.contains(surname)
    }

    /// Whether the given-name list holds `given`.
    pub fn given_contains(&self, given: &str) -> bool {
        self.given.contains(given)
    }

    /// Start of the longest surname that ends at `end` and starts at or after `lo`.
    fn ending_at(&self, v: &View, lo: usize, end: usize) -> Option<usize> {
        let longest = self.max_len.min(end - lo);
        (1..=longest)
            .rev()
            .map(|n| end - n)
            .find(|&s| self.surnames.contains(v.slice(s, end)))
    }

    /// End of the longest surname that starts at `start` and ends at or before `hi`.
    fn starting_at(&self, v: &View, start: usize, hi: usize) -> Option<usize> {
        let longest = self.max_len.min(hi - start);
        (1..=longest)
            .rev()
            .map(|n| start + n)
            .find(|&e| self.surnames.contains(v.slice(start, e)))
    }

    /// The name that ends right before a cue at char `p`: returns its start. `weak` cues (です)
    /// need a surname of two or more kanji that is not also a prefecture (広島です).
    fn before(&self, v: &View, p: usize, weak: bool) -> Option<usize> {
        // 佐藤さゆりさん, 高橋ゆうこと申します: a kana given name right after a kanji surname.
        let kana = v.run_before(p, 4, is_kana);
        if p - kana >= 2 && kana_given_ok(v.slice(kana, p)) {
            let run = v.run_before(kana, 8, is_han);
            if let Some(s) = self.ending_at(v, run, kana)
                && (kana - s >= 2 || !weak)
                && !(weak && PREFECTURES.contains(&v.slice(s, kana)))
            {
                return Some(s);
            }
        }
        let run = v.run_before(p, 8, is_han);
        if run == p {
            return None;
        }
        let acceptable = |s: usize, end: usize, given: usize| {
            let surname = v.slice(s, end);
            let len = end - s;
            if given > 0 && len < 2 {
                return false;
            }
            let g = v.slice(p - given, p);
            if TITLES.iter().any(|t| g.ends_with(t))
                || g.contains(['様', '君', '氏', '殿'])
                || g.chars().last().is_some_and(|c| NOT_GIVEN_END.contains(c))
            {
                return false;
            }
            !weak || (len >= 2 && !PREFECTURES.contains(&surname))
        };
        for given in 0..=3.min(p - run - 1) {
            let end = p - given;
            if let Some(s) = self.ending_at(v, run, end)
                && acceptable(s, end, given)
            {
                return Some(s);
            }
        }
        // 田中 太郎さん: a given name of up to three kanji after one space.
        let given = p - run;
        if given <= 3 && run >= 2 && v.at(run - 1) == Some(' ') {
            let end = run - 1;
            let run2 = v.run_before(end, 8, is_han);
            if run2 < end
                && let Some(s) = self.ending_at(v, run2, end)
                && acceptable(s, end, given)
            {
                return Some(s);
            }
        }
        None
    }

    /// 田中さん, 山田太郎様, 佐藤先生: the name before an honorific at `[p, q)`.
    pub fn honorific(&self, v: &View, p: usize, q: usize) -> Option<(usize, usize)> {
        let next = v.at(q);
        let cue = v.slice(p, q);
        let not_a_cue = match cue {
            "様" => next.is_some_and(|c| "子々式相態変".contains(c)),
            "君" => next.is_some_and(|c| "主臨".contains(c)),
            "氏" => next == Some('族'),
            _ => false,
        };
        if not_a_cue {
            return None;
        }
        // 田中 さん, 田中　さん: one space between the name and the honorific.
        let p = if p > 0 && v.at(p - 1) == Some(' ') {
            p - 1
        } else {
            p
        };
        self.before(v, p, false).map(|s| (s, p))
    }

    /// 佐藤と申します, 鈴木といいます: the name before a strong self-introduction at `p`.
    pub fn introduced(&self, v: &View, p: usize) -> Option<(usize, usize)> {
        self.before(v, p, false).map(|s| (s, p))
    }

    /// 私は鈴木です, 営業部の山田です, 高橋です。: `です` at `p` introduces a name only at the
    /// start of a sentence, right after は or の, or after an opening greeting.
    pub fn self_intro(&self, v: &View, p: usize) -> Option<(usize, usize)> {
        let s = self.before(v, p, true)?;
        let speaker_before = |wa: usize| {
            SPEAKERS.iter().any(|w| {
                let n = w.chars().count();
                wa >= n
                    && v.slice(wa - n, wa) == *w
                    && (wa == n || !v.at(wa - n - 1).is_some_and(is_han))
            })
        };
        let lead_ok = s == 0
            || v.at(s - 1).is_some_and(|c| is_edge(c) || c == 'の')
            || (v.at(s - 1) == Some('は') && speaker_before(s - 1))
            || INTRO_LEADS.iter().any(|w| {
                let n = w.chars().count();
                s >= n && v.slice(s - n, s) == *w
            });
        lead_ok.then_some((s, p))
    }

    /// 名前は山田太郎: the name after `名前は` ending at `q`.
    pub fn after_name_is(&self, v: &View, q: usize) -> Option<(usize, usize)> {
        let start = v.run_after(q, 2, |c| c == ' ' || c == '「');
        let run_end = v.run_after(start, 7, is_han);
        if run_end == start {
            return None;
        }
        let end = self.starting_at(v, start, run_end)?;
        let rest = run_end - end;
        Some((start, if rest <= 3 { run_end } else { end }))
    }

    /// 山田太郎って知ってる？, 俺、伊藤大輔。: a whole kanji run made of a surname of two or
    /// more kanji and a listed given name, with no cue.
    pub fn full_names(&self, v: &View, out: &mut Vec<(usize, usize)>) {
        let n = v.len();
        let mut i = 0;
        while i < n {
            if !is_han(v.chars[i]) {
                i += 1;
                continue;
            }
            let e = v.run_after(i, 64, is_han);
            if (3..=6).contains(&(e - i)) {
                for sl in 2..=self.max_len.min(e - i - 1) {
                    if self.surnames.contains(v.slice(i, i + sl))
                        && self.given.contains(v.slice(i + sl, e))
                    {
                        out.push((i, e));
                        break;
                    }
                }
            }
            i = e;
        }
    }
}
