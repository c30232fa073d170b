//! Names in a name's slot, read with the analyzer (issue 26 §1, dev5): a word IPADIC tags as a
//! person (人名,姓 / 人名,名), as a small place (地域: most rare surnames are one), or does not
//! know at all (未知語: ウズラノ, hizume, 榁木), standing where a person stands — at the start
//! of a phrase and right before a particle (鶉野が遅れてくる, 樋爪、もう着いたって, 蛭間の
//! おかげ, sakuyaと遊んだ). A common word the dictionary knows (会社, 明日, 天気, 雨) is never
//! one, whatever follows: that is what the rules without a dictionary cannot tell, so this runs
//! with lindera only. The particles, leads and English words are data
//! (assets/safety/name_slots.toml).

use serde::Deserialize;

use crate::text::analyzer::{ProperKind, ProperNoun};
use crate::text::chars::{is_hiragana, is_kanji, is_katakana};

use super::address::place_like;
use super::names::Names;
use super::names_cue::is_common_kana_word;
use super::names_subject::{
    HIRA_LEADS, NOT_NAMES_HIRA, hira_word, kanji_name, katakana_name, romaji_like,
};
use super::view::{View, is_edge};

const SLOTS_TOML: &str = include_str!("../../../../assets/safety/name_slots.toml");

/// The lists of assets/safety/name_slots.toml.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Slots {
    particles: Vec<String>,
    place_particles: Vec<String>,
    leads: Vec<String>,
    owned: Vec<String>,
    thing_predicates: Vec<String>,
    english: Vec<String>,
}

impl Slots {
    pub fn new() -> Slots {
        // Embedded data checked by the tests: a failure here is a programming error.
        toml::from_str(SLOTS_TOML).expect("name_slots.toml parses")
    }

    /// Every run of name-like tokens in a name's slot: its span.
    pub fn find(
        &self,
        v: &View,
        toks: &[ProperNoun],
        names: &Names,
        out: &mut Vec<(usize, usize)>,
    ) {
        let mut i = 0;
        while i < toks.len() {
            let j = run_end(v, toks, i);
            if j > i
                && let Some(span) = self.slot(v, &toks[i..j], toks, names)
            {
                out.push(span);
            }
            i = j.max(i + 1);
        }
        self.hiragana(v, toks, out);
        // 蓼沼と|笹目と|鳰川で: the other names of a list one found name stands in.
        super::names_subject::siblings(v, names, out);
    }

    /// A hiragana name the dictionary reads as pieces (ひ|づめ, くつ|わ|だ, かも|しだ) or as a
    /// person or a place (こずえ, あかね), from a phrase's start to the first particle (not a
    /// pause): three kana or more, two tokens or more of nouns and one-kana fragments, no prefix
    /// (お|かあさん), no common word.
    fn hiragana(&self, v: &View, toks: &[ProperNoun], out: &mut Vec<(usize, usize)>) {
        // A pause is no particle here: なんか、 そっか、 ふふ、 are words.
        let Some(k) = toks.iter().position(|t| {
            let w = v.slice(t.start, t.end);
            t.kind == ProperKind::NotNoun && w != "、" && self.particles.iter().any(|p| p == w)
        }) else {
            return;
        };
        let e = toks[k].start;
        let mut s = v.run_before(e, 9, is_hiragana);
        if s >= 2 && v.at(s - 1) == Some(' ') && v.at(s - 2).is_some_and(is_hiragana) {
            s = v.run_before(s - 1, 9, is_hiragana);
        }
        // きのう|ひづめ, さっき|こずえ: a leading adverb is no part of the name.
        if let Some(w) = HIRA_LEADS
            .iter()
            .find(|w| v.slice(s, e).starts_with(**w) && e - s >= w.chars().count() + 3)
        {
            s += w.chars().count();
        }
        let inside: Vec<&ProperNoun> = toks[..k].iter().filter(|t| t.start >= s).collect();
        let aligned = inside.first().is_some_and(|t| t.start == s);
        let pieces = inside.iter().all(|t| {
            matches!(
                t.kind,
                ProperKind::Common
                    | ProperKind::Unknown
                    | ProperKind::Surname
                    | ProperKind::GivenName
                    | ProperKind::Person
                    | ProperKind::Place
            ) || t.end - t.start == 1
        });
        let named = inside.iter().any(|t| {
            matches!(
                t.kind,
                ProperKind::Surname | ProperKind::GivenName | ProperKind::Place
            )
        });
        let prefix = matches!(v.at(s), Some('お' | 'ご'));
        // これ|どこ: a piece that is a common word of its own.
        let common_piece = inside.iter().any(|t| {
            let w = v.slice(t.start, t.end);
            t.end - t.start >= 2 && (NOT_NAMES_HIRA.contains(&w) || is_common_kana_word(w))
        });
        let word_ok = v.slice(s, e).split(' ').all(|w| {
            let ws = s + v
                .slice(s, e)
                .find(w)
                .map_or(0, |b| v.slice(s, e)[..b].chars().count());
            hira_word(v, ws, ws + w.chars().count())
        });
        if e - s >= 3
            && aligned
            && pieces
            && (inside.len() >= 2 || named)
            && !prefix
            && !common_piece
            && word_ok
            && self.opens_phrase(v, s, toks)
        {
            let particle = v.slice(e, toks[k].end);
            let run: Vec<ProperNoun> = inside.into_iter().copied().collect();
            if !self.thing_like(v, &run, e, particle) {
                out.push((s, e));
            }
        }
    }

    /// The run's span when it has a name's signal, shape and slot.
    fn slot(
        &self,
        v: &View,
        run: &[ProperNoun],
        toks: &[ProperNoun],
        names: &Names,
    ) -> Option<(usize, usize)> {
        let (s, e) = (run.first()?.start, run.last()?.end);
        if e > v.len() || !run_signal(v, run) {
            return None;
        }
        let place_only = run.iter().all(|t| {
            matches!(t.kind, ProperKind::Place | ProperKind::Common) || t.end - t.start == 1
        }) && run.iter().any(|t| t.kind == ProperKind::Place);
        let particle = self.particle(v, s, e, place_only)?;
        if self.thing_like(v, run, e, particle) {
            return None;
        }
        let shaped = self.shaped(v, s, e, names) && !(place_only && place_like(v.slice(s, e)));
        // 樋爪、もう着いたって: called out at the start (or after ねえ), never inside a list
        // (甘口、辛口、それとも).
        let opens = if particle == "、" {
            s == 0
                || self
                    .leads
                    .iter()
                    .any(|w| v.slice(0, s).ends_with(w.as_str()))
        } else {
            self.opens_phrase(v, s, toks)
        };
        (shaped && opens).then_some((s, e))
    }

    /// The particle after a name ending at `e`: one of the list, の before a thing a person has
    /// (蛭間のおかげ, 鰐淵の送迎), and for a place the dictionary knows only the place particles —
    /// or です at the start (鶉野です、よろしく).
    fn particle(&self, v: &View, s: usize, e: usize, place_only: bool) -> Option<&str> {
        let rest = v.slice(e, v.len());
        let listed = self
            .particles
            .iter()
            .find(|p| rest.starts_with(p.as_str()))
            .map(String::as_str);
        let owned = || {
            rest.strip_prefix('の')
                .is_some_and(|r| self.owned.iter().any(|w| r.starts_with(w.as_str())))
                .then_some("の")
        };
        let p = listed.or_else(owned)?;
        let intro = ["です", "でした", "っす"].contains(&p)
            && (s == 0 || (v.at(s - 1) == Some('、') && s <= 8));
        (!place_only || intro || self.place_particles.iter().any(|w| w == p)).then_some(p)
    }

    /// What follows says a thing, not a person: ポケモンが好き, 水梨と書かれて, クミンを少し,
    /// or one kanji alone (鮎, 栞 — a word as often as a name).
    fn thing_like(&self, v: &View, run: &[ProperNoun], e: usize, particle: &str) -> bool {
        let after = v.slice(e + particle.chars().count(), v.len());
        let s = run.first().map_or(e, |t| t.start);
        let thing_said = ["が", "は", "も"].contains(&particle)
            && self
                .thing_predicates
                .iter()
                .any(|w| after.starts_with(w.as_str()));
        let naming = ["って", "と"].contains(&particle)
            && ["いう", "言う", "書", "読", "呼ば", "何"]
                .iter()
                .any(|w| after.starts_with(w));
        // A katakana word the dictionary does not know, as an object, is a thing.
        let kana_object = particle == "を"
            && run.iter().all(|t| t.kind == ProperKind::Unknown)
            && v.at(s).is_some_and(is_katakana);
        let one_kanji = run.len() == 1 && e - s == 1 && v.at(s).is_some_and(is_kanji);
        thing_said || naming || kana_object || one_kanji
    }

    /// What stands before `s` opens a phrase: the start, a pause, a lead word, or と joining
    /// two people (雫石と鶉野と).
    fn opens_phrase(&self, v: &View, s: usize, toks: &[ProperNoun]) -> bool {
        let before = v.slice(0, s);
        // 雫石と|鶉野: と joins two names only (白猫と黒鳥 stays).
        let joined = |c: char| match c {
            'と' => toks
                .iter()
                .any(|t| t.end + 1 == s && t.end > t.start + 1 && signal(v, t)),
            _ => "にはが".contains(c),
        };
        s == 0
            || v.at(s - 1).is_some_and(|c| is_edge(c) || c == '　')
            || self.leads.iter().any(|w| before.ends_with(w.as_str()))
            || (s >= 2
                && v.at(s - 1).is_some_and(joined)
                && v.at(s - 2).is_some_and(|c| is_kanji(c) || is_katakana(c)))
    }

    /// The word has a name's shape in its script: the predicate rules' own checks.
    fn shaped(&self, v: &View, s: usize, e: usize, names: &Names) -> bool {
        let word = v.slice(s, e);
        let first = word.chars().next().unwrap_or(' ');
        if is_kanji(first) {
            // One kanji is a name only when the dictionary says a person (丞, 澄).
            return e - s == 1 || kanji_name(v, e, names).is_some_and(|ks| ks <= s);
        }
        if is_katakana(first) {
            // A loanword: a long vowel, a small vowel, ッ or ヴ, or a long run (ストロングゼロ,
            // ターメリック, カルディ, ホップ); a name's katakana seldom has one.
            let loan = word.contains(['ー', 'ッ', 'ァ', 'ィ', 'ゥ', 'ェ', 'ォ', 'ヴ', 'ヮ'])
                || word.split(' ').any(|w| w.chars().count() > 6);
            return !loan && katakana_name(v, e) == Some(s);
        }
        if first.is_ascii_alphabetic() {
            return word.split(' ').all(|w| self.romaji_word(w));
        }
        false
    }

    /// A latin word read as a romaji name: four letters or more, spelt as romaji, no English.
    fn romaji_word(&self, w: &str) -> bool {
        let lower = w.to_ascii_lowercase();
        w.len() >= 4
            && w.chars().all(|c| c.is_ascii_alphabetic())
            && w[1..].chars().all(|c| c.is_ascii_lowercase())
            && romaji_like(w)
            && !self.english.contains(&lower)
    }
}

/// Honorifics written in romaji after a romaji name (uzurano kun, kamoshida san, akane chan,
/// kohaku kunが): both analyzers.
const ROMAJI_HONORIFICS: [&str; 6] = ["kun", "san", "chan", "sama", "senpai", "sensei"];

impl Slots {
    /// Every romaji name before a romaji honorific, one space apart or glued with a hyphen: its
    /// span (the honorific is kept, as after a kanji name). Both analyzers.
    pub fn romaji_honorific(&self, v: &View, out: &mut Vec<(usize, usize)>) {
        // Most messages hold no lowercase latin letter: one byte scan and out.
        if !v.norm.bytes().any(|b| b.is_ascii_lowercase()) {
            return;
        }
        let latin = |c: char| c.is_ascii_alphabetic();
        let mut i = 0;
        while i < v.len() {
            if !v.at(i).is_some_and(latin)
                || (i > 0 && v.at(i - 1).is_some_and(|c| c.is_ascii_alphanumeric()))
            {
                i += 1;
                continue;
            }
            let e = v.run_after(i, 20, latin);
            let gap = usize::from(matches!(v.at(e), Some(' ' | '-')));
            let h = v.run_after(e + gap, 8, latin);
            let honorific = v.slice(e + gap, h).to_ascii_lowercase();
            let word = v.slice(i, e);
            if gap == 1
                && ROMAJI_HONORIFICS.contains(&honorific.as_str())
                && !ROMAJI_HONORIFICS.contains(&word.to_ascii_lowercase().as_str())
                && e - i >= 3
                && word[1..].chars().all(|c| c.is_ascii_lowercase())
                && romaji_like(word)
                && !self.english.contains(&word.to_ascii_lowercase())
            {
                // akane hiyama san: a romaji given name one space before.
                let s = if i >= 2 && v.at(i - 1) == Some(' ') {
                    let s2 = v.run_before(i - 1, 20, latin);
                    let w2 = v.slice(s2, i - 1);
                    if s2 < i - 1
                        && romaji_like(w2)
                        && w2[1..].chars().all(|c| c.is_ascii_lowercase())
                    {
                        s2
                    } else {
                        i
                    }
                } else {
                    i
                };
                out.push((s, e));
            }
            i = e.max(i + 1);
        }
    }
}

/// The end (exclusive index) of the run of name-like tokens from `i`: people, places, unknown
/// words and one-kanji common nouns (舘|鼻, 透|真), glued or one space apart.
fn run_end(v: &View, toks: &[ProperNoun], i: usize) -> usize {
    let mut j = i;
    while j < toks.len() && name_like(v, &toks[j]) {
        let gap_ok = j == i || {
            let prev = toks[j - 1].end;
            toks[j].start == prev || (toks[j].start == prev + 1 && v.at(prev) == Some(' '))
        };
        if !gap_ok {
            break;
        }
        j += 1;
    }
    j
}

/// The run reads as a name's: a signal token, with one-kanji common nouns only after a given
/// name or a surname of two kanji or more (透|真); before a name or after a place or a word
/// they make a compound (菊|正宗, 日本|酒, 飛騨|牛, 辛|口), and runs of them alone are words
/// the dictionary splits (獣|臭, 瓶|体, 獺|祭).
fn run_signal(v: &View, run: &[ProperNoun]) -> bool {
    let glue = |t: &ProperNoun| t.kind == ProperKind::Common;
    let long = |t: &ProperNoun| t.end - t.start >= 2;
    run.first().is_some_and(|t| !glue(t))
        && run.iter().any(|t| signal(v, t))
        && run.windows(2).all(|w| {
            !glue(&w[1])
                || matches!(w[0].kind, ProperKind::GivenName | ProperKind::Person)
                || (w[0].kind == ProperKind::Surname && long(&w[0]))
                || glue(&w[0])
        })
}

fn name_like(v: &View, t: &ProperNoun) -> bool {
    match t.kind {
        ProperKind::Surname
        | ProperKind::GivenName
        | ProperKind::Person
        | ProperKind::Place
        | ProperKind::Unknown => true,
        ProperKind::Common => t.end - t.start == 1 && v.at(t.start).is_some_and(is_kanji),
        _ => false,
    }
}

/// A token that makes a run a name's: a person, a place, or a word the dictionary does not know
/// (a latin one only lowercase or capitalised: LINE, NHK are no names).
fn signal(v: &View, t: &ProperNoun) -> bool {
    match t.kind {
        ProperKind::Surname | ProperKind::GivenName | ProperKind::Person | ProperKind::Place => {
            true
        }
        ProperKind::Unknown => {
            let w = v.slice(t.start, t.end);
            !w.chars().skip(1).any(|c| c.is_ascii_uppercase())
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lists_parse_and_hold_no_duplicate() {
        let s = Slots::new();
        assert!(s.particles.len() >= 10 && s.leads.len() >= 20 && s.english.len() >= 100);
        let mut all = s.english.clone();
        all.sort();
        all.dedup();
        assert_eq!(all.len(), s.english.len());
        assert!(s.place_particles.iter().all(|p| s.particles.contains(p)));
        assert!(s.thing_predicates.len() >= 10);
    }

    fn romaji(text: &str) -> Vec<String> {
        let v = View::new(text);
        let mut out = Vec::new();
        Slots::new().romaji_honorific(&v, &mut out);
        out.iter()
            .map(|&(s, e)| v.slice(s, e).to_string())
            .collect()
    }

    /// A romaji name before a romaji honorific, in every frame; the honorific stays.
    #[test]
    fn romaji_names_before_a_romaji_honorific() {
        for name in ["tsugumi", "kaburagi", "Hanada", "mio", "akane hiyama"] {
            for h in ["kun", "san", "chan", "sama", "senpai", "Sensei"] {
                for frame in [
                    "{} {}と話した",
                    "昨日 {} {}が来た",
                    "{} {}、元気？",
                    "{}-{}に渡した",
                ] {
                    let text = frame.replacen("{}", name, 1).replacen("{}", h, 1);
                    assert_eq!(romaji(&text), vec![name.to_string()], "{text}");
                }
            }
        }
    }

    /// English before kun/san, a lone honorific and letters glued to digits stay.
    #[test]
    fn romaji_look_alikes_stay() {
        for text in [
            "kun と san の違い",
            "run san",
            "ABC san",
            "OK chan",
            "v2 kun",
            "san kun",
            "xyzzy san",
        ] {
            assert!(romaji(text).is_empty(), "{text}: {:?}", romaji(text));
        }
    }
}
