//! Names written in kana that the dictionary reads as a person (issue 26 §1): a kana run that
//! is a surname's reading then a given name's reading in IPADIC (人名,姓 + 人名,名), with or
//! without a space or ・ between them — ほずみつむぎが, サトウ・ヒナ, ﾏｴﾀﾞ ｱｵｲ — standing as
//! a whole word: a katakana run whole; a hiragana run from a phrase's start (or after a
//! one-kana particle that follows a word) to a particle or an honorific. The cue rules need a
//! cue for a kana name; the readings need none, and cover the names the lists never held.
//! Only with an analyzer that has readings (lindera); the lists are data
//! (assets/safety/kana_names.toml).

use serde::Deserialize;
use unicode_normalization::UnicodeNormalization;

use crate::text::analyzer::{Analyzer, ProperKind, ProperNoun};
use crate::text::chars::{is_hiragana, is_kanji, is_katakana};

use super::names::Names;
use super::names_cue::NOT_KANA_NAMES;
use super::names_subject::NOT_NAMES_HIRA;
use super::proper::BUSINESS;
use super::view::View;

const KANA_TOML: &str = include_str!("../../../../assets/safety/kana_names.toml");
const GIVEN_KANA: &str = include_str!("../../../../assets/safety/given_kana.txt");

/// The lists of assets/safety/kana_names.toml.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct KanaNames {
    follow: Vec<String>,
    single_follow: Vec<String>,
    end_marks: Vec<String>,
    follow_kanji: Vec<String>,
    honorifics: Vec<String>,
    lead_particles: Vec<String>,
    lead_words: Vec<String>,
    hira_leads: Vec<String>,
    not_starts: Vec<String>,
    predicate_ends: Vec<String>,
    not_names: Vec<String>,
    /// Given names in katakana IPADIC does not know (assets/safety/given_kana.txt).
    #[serde(skip)]
    given_kana: rustc_hash::FxHashSet<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Script {
    Hira,
    Kata,
}

/// Half-width katakana count as katakana (`is_katakana` holds them).
fn script(c: char) -> Option<Script> {
    if is_hiragana(c) {
        Some(Script::Hira)
    } else if is_katakana(c) {
        Some(Script::Kata)
    } else {
        None
    }
}

/// A space or a middle dot between the two parts of a name.
fn is_separator(c: char) -> bool {
    matches!(c, ' ' | '・' | '･')
}

impl KanaNames {
    pub fn new() -> KanaNames {
        // Embedded data checked by the tests: a failure here is a programming error.
        let mut k: KanaNames = toml::from_str(KANA_TOML).expect("kana_names.toml parses");
        k.given_kana = GIVEN_KANA
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .map(str::to_string)
            .collect();
        k
    }

    /// The dictionary's given-name readings, and the popular names it is too old to know
    /// (`kana` in katakana).
    fn is_given(&self, kana: &str, an: &dyn Analyzer) -> bool {
        an.name_reading(kana).given || self.given_kana.contains(kana)
    }

    /// Every kana full name in `v`, as char spans.
    pub fn find(
        &self,
        v: &View,
        toks: &[ProperNoun],
        an: &dyn Analyzer,
        out: &mut Vec<(usize, usize)>,
    ) {
        let mut i = 0;
        while i < v.len() {
            let Some(sc) = v.at(i).and_then(script) else {
                i += 1;
                continue;
            };
            let e = run_end(v, i, sc);
            let found = match sc {
                Script::Kata => self.katakana(v, i, e, toks, an),
                Script::Hira => self.hiragana(v, i, e, toks, an),
            };
            out.extend(found);
            // A lone ・ is a run of none.
            i = e.max(i + 1);
        }
    }

    /// A katakana run is a name when all of it reads as one.
    fn katakana(
        &self,
        v: &View,
        s: usize,
        e: usize,
        toks: &[ProperNoun],
        an: &dyn Analyzer,
    ) -> Option<(usize, usize)> {
        let before = s.checked_sub(1).and_then(|p| v.at(p));
        // ア|サトウヒナ: a run glued to latin or digits is a product code, not a name.
        if before.is_some_and(|c| c.is_ascii_alphanumeric()) {
            return None;
        }
        let raw = v.slice(s, e);
        // Most katakana runs are loanwords: no name's reading opens them (half-width ones are
        // read after NFKC below).
        let half_width = raw.chars().any(|c| ('\u{FF66}'..='\u{FF9F}').contains(&c));
        if !half_width && !self.opens_with_a_name(raw, an) {
            return None;
        }
        let whole = self.ends_word(v, e) && self.reads_as_name(v, s, e, toks, an);
        (whole || self.alone(v, s, e, false, an)).then_some((s, e))
    }

    /// A kana run ending at `e` ends a word: no kanji follows, or an honorific one does.
    fn ends_word(&self, v: &View, e: usize) -> bool {
        if !v.at(e).is_some_and(|c| is_kanji(c) || c == '々') {
            return true;
        }
        let after = v.slice(e, v.len());
        self.follow_kanji
            .iter()
            .any(|k| after.starts_with(k.as_str()))
    }

    /// A hiragana run holds a name from its start (or after a one-kana particle that follows a
    /// word) up to a listed particle or honorific, or to its end.
    fn hiragana(
        &self,
        v: &View,
        s: usize,
        e: usize,
        toks: &[ProperNoun],
        an: &dyn Analyzer,
    ) -> Option<(usize, usize)> {
        let mut from = self.starts(v, s, e, toks);
        // Every name found here opens with a surname's or a given name's reading: a start with
        // none (most of ordinary text) is dropped after a few hash lookups.
        from.retain(|&(s, _)| self.opens_with_a_name(v.slice(s, e), an));
        if from.is_empty() {
            return None;
        }
        let full = from.iter().find_map(|&(s, strict)| {
            (s + 4..=e)
                .rev()
                .find(|&end| {
                    self.name_ends(v, end, e, strict) && self.reads_as_name(v, s, end, toks, an)
                })
                .map(|end| (s, end))
        });
        full.or_else(|| {
            from.iter().find_map(|&(s, strict)| {
                // Three kana at least (さの, めい are words as often), and no known word of two
                // kana or more runs across its end (ありが|とう, とて|も, なる|こと).
                (s + 3..=e)
                    .rev()
                    .find(|&end| {
                        !toks.iter().any(|t| {
                            t.start < end
                                && t.end > end
                                && t.end - t.start >= 2
                                && matches!(t.kind, ProperKind::Common | ProperKind::NotNoun)
                        }) && self.alone(v, s, end, strict, an)
                    })
                    .map(|end| (s, end))
            })
        })
    }

    /// Whether some prefix of two to eight kana of `run` reads as a surname or a given name. The run is read in katakana once; the prefixes are borrowed from it.
    fn opens_with_a_name(&self, run: &str, an: &dyn Analyzer) -> bool {
        let kata = to_katakana(run);
        kata.char_indices()
            .map(|(b, _)| b)
            .chain(std::iter::once(kata.len()))
            .skip(2)
            .take(7)
            .any(|b| {
                let p = &kata[..b];
                let r = an.name_reading(p);
                r.surname || r.given || self.given_kana.contains(p)
            })
    }

    /// Where a name may start in the hiragana run `[s, e)`, and whether it came after a word
    /// (then it must be followed by a particle: データがありますよ is a predicate).
    fn starts(&self, v: &View, s: usize, e: usize, toks: &[ProperNoun]) -> Vec<(usize, bool)> {
        let glued = s
            .checked_sub(1)
            .and_then(|p| v.at(p))
            .is_some_and(|c| c.is_alphanumeric() || c == '々' || c == 'ー');
        let mut from: Vec<(usize, bool)> = Vec::with_capacity(3);
        if !glued {
            from.push((s, false));
            // これ|ふしみはるかから, ねえ|たかのそうたろう: a leading word is no part of it.
            if let Some(w) = self
                .hira_leads
                .iter()
                .find(|w| v.slice(s, e).starts_with(w.as_str()))
            {
                from.push((s + w.chars().count(), false));
            }
            return from;
        }
        // 明日|にしむらじゅん, 朝|くどうともやを: a time word the analyzer cut off.
        if self
            .lead_words
            .iter()
            .any(|w| v.slice(0, s).ends_with(w.as_str()))
            && toks.iter().any(|t| t.end == s)
        {
            from.push((s, true));
        }
        // The particle is a word of its own (確保|でき|た is a verb, not で + きたの).
        if self.lead_particles.iter().any(|p| p == v.slice(s, s + 1))
            && toks.iter().any(|t| t.start == s && t.end == s + 1)
        {
            from.push((s + 1, true));
        }
        from
    }

    /// One part of a name alone in kana (よしだが, ハルカ、): the dictionary reads it as a
    /// surname or a given name and as no common word (しおり in hiragana, チカラ in katakana), and a
    /// particle a person takes follows — or, unless it came after a word, a pause or the
    /// message's end. A company's reading too (トヨタ, フジモト) needs a person's cue.
    fn alone(&self, v: &View, s: usize, end: usize, strict: bool, an: &dyn Analyzer) -> bool {
        let raw = v.slice(s, end);
        let hiragana = raw.chars().all(is_hiragana);
        let text = to_katakana(&raw.nfkc().collect::<String>());
        let r = an.name_reading(&text);
        if !(r.surname || r.given || self.given_kana.contains(&text)) {
            return false;
        }
        let after = v.slice(end, v.len());
        // A person's cue (an honorific, a call-out's pause) outweighs a company's reading
        // (フジモトさん, フジモト、…); a particle does not (トヨタが, トヨタって).
        let strong = self
            .honorifics
            .iter()
            .any(|h| after.starts_with(h.as_str()))
            || self
                .follow_kanji
                .iter()
                .any(|k| after.starts_with(k.as_str()))
            || (!strict && (after.is_empty() || after.starts_with(['、', ','])));
        let follows = strong
            || self
                .single_follow
                .iter()
                .any(|f| after.starts_with(f.as_str()));
        // ピーター, リー: a foreign name's shape (a long vowel, a small vowel, ヴ) is a famous
        // person or a word as often; three kana at least.
        let foreign = text.contains(['ー', 'ァ', 'ィ', 'ゥ', 'ェ', 'ォ', 'ヴ']);
        // In hiragana, a word the dictionary itself writes in kana (しおり, まあ); in katakana,
        // any word read so (ハンコ, チカラ, キセキ are 判子, 力, 奇跡 in katakana).
        let common = if hiragana { r.kana_word } else { r.word };
        follows
            && !foreign
            && !common
            && text.chars().count() >= 3
            && (strong || !r.company || hiragana)
            && !text.contains(is_separator)
            && self.word_ok(raw)
            && !self.not_names.iter().any(|w| w == raw)
            && !self
                .predicate_ends
                .iter()
                .any(|p| raw.ends_with(p.as_str()))
            && !self.not_starts.iter().any(|p| raw.starts_with(p.as_str()))
    }

    /// A hiragana name may end at `end` of a run ending at `e`: a listed particle or honorific
    /// follows inside the run, or the run ends there before an honorific kanji — or, unless
    /// the name came after a particle, before the message's end, a pause or a bracket.
    fn name_ends(&self, v: &View, end: usize, e: usize, after_particle: bool) -> bool {
        let rest = v.slice(end, e);
        if !rest.is_empty() {
            return self.follow.iter().any(|f| rest.starts_with(f.as_str()));
        }
        match v.at(e) {
            Some(c) if is_kanji(c) || c == '々' => self.ends_word(v, e),
            None => !after_particle,
            Some(_) => {
                let after = v.slice(e, e + 1);
                !after_particle && self.end_marks.iter().any(|m| m == after)
            }
        }
    }

    /// A kanji surname (a token the dictionary reads as 人名,姓, or one of the listed
    /// surnames) right before a kana given name the dictionary reads as one: 加藤ハナコが,
    /// 平野ゆうたって, 望月マアヤが — the whole name.
    pub fn surname_then_given(
        &self,
        v: &View,
        toks: &[ProperNoun],
        names: &Names,
        an: &dyn Analyzer,
        out: &mut Vec<(usize, usize)>,
    ) {
        for t in toks {
            // Kana after the token first: most tokens have none.
            let Some(sc) = v.at(t.end).and_then(script) else {
                continue;
            };
            let word = v.slice(t.start, t.end);
            let surname = t.kind == ProperKind::Surname
                || (word.chars().all(is_kanji) && names.contains(word));
            if !surname || v.at(t.end) == Some('・') {
                continue;
            }
            let e = run_end(v, t.end, sc);
            // 檜山|はま|だ: a particle may open a hiragana given name (はるか, のぞみ) only when
            // three kana or more follow it.
            let particle_first = sc == Script::Hira
                && self
                    .lead_particles
                    .iter()
                    .any(|p| v.slice(t.end, t.end + 1) == p);
            let given = |end: usize| {
                let raw = v.slice(t.end, end);
                let g = to_katakana(&raw.nfkc().collect::<String>());
                let short_after_particle = particle_first && end - t.end < 3;
                let predicate = self
                    .predicate_ends
                    .iter()
                    .any(|p| raw.ends_with(p.as_str()));
                !(g.contains(is_separator) || short_after_particle || predicate)
                    && self.given_ok(&g, an)
            };
            let found = match sc {
                // 早川モモコ見かけた: a katakana given name ends where the katakana does.
                Script::Kata => given(e).then_some(e),
                Script::Hira => (t.end + 2..=e)
                    .rev()
                    .find(|&end| self.name_ends(v, end, e, false) && given(end)),
            };
            // 霧島エンジに派遣されてる: a company's name, not a person's.
            let business = |end: usize| {
                BUSINESS
                    .iter()
                    .any(|b| v.slice(end, v.len()).starts_with(b))
            };
            if let Some(end) = found.filter(|&end| !business(end)) {
                out.push((t.start, end));
            }
        }
    }

    /// `[s, e)` reads as a surname then a given name (each two kana or more, not the same
    /// word twice), is no listed word, and the analyzer cut the text at both of its ends
    /// without reading all of it as one known word.
    fn reads_as_name(
        &self,
        v: &View,
        s: usize,
        e: usize,
        toks: &[ProperNoun],
        an: &dyn Analyzer,
    ) -> bool {
        let raw = v.slice(s, e);
        // Half-width katakana (ﾏｴﾀﾞ) in full width, voicing marks joined; then one script, so
        // that every lookup below borrows instead of converting.
        let text = to_katakana(&raw.nfkc().collect::<String>());
        let parts: Vec<&str> = text.split(is_separator).collect();
        let reads = match parts.as_slice() {
            // Four kana read as two names too often (なぎ|さと): five at least, unless a space
            // or a dot parts them.
            [whole] => {
                whole.chars().count() >= 5 && split_points(whole).any(|(a, b)| self.pair(a, b, an))
            }
            [a, b] => self.pair(a, b, an),
            _ => false,
        };
        // The costlier checks only for what reads as a name.
        reads
            && aligned(toks, s, e)
            && !self.not_names.iter().any(|w| w == raw)
            && !self
                .predicate_ends
                .iter()
                .any(|p| raw.ends_with(p.as_str()))
            && !self.not_starts.iter().any(|p| raw.starts_with(p.as_str()))
            && !is_word_not_name(&text, an)
    }

    /// `surname` and `given` in katakana. The hash lookups first: most splits read as no name.
    fn pair(&self, surname: &str, given: &str, an: &dyn Analyzer) -> bool {
        surname != given
            && an.name_reading(surname).surname
            && self.is_given(given, an)
            && self.word_ok(surname)
            && self.given_ok(given, an)
    }

    /// A given name's reading, no honorific at its end (ゆづき|さん).
    fn given_ok(&self, given: &str, an: &dyn Analyzer) -> bool {
        let h = to_hiragana(given);
        self.word_ok(given)
            && !self.honorifics.iter().any(|o| h.ends_with(o.as_str()))
            && self.is_given(given, an)
    }

    /// Two kana or more, no particle, no listed kana word (みんな, あいつ) in either script.
    fn word_ok(&self, w: &str) -> bool {
        let h = to_hiragana(w);
        let h = h.as_str();
        h.chars().count() >= 2
            && !self.follow.iter().any(|f| f == h)
            && !NOT_NAMES_HIRA.contains(&h)
            && !NOT_KANA_NAMES.contains(&h)
    }
}

/// The end of the same-script run from `s`, a single separator between two of its chars
/// included.
fn run_end(v: &View, s: usize, sc: Script) -> usize {
    let mut e = s;
    while e < v.len() {
        match v.at(e) {
            Some(c) if script(c) == Some(sc) && c != '・' && c != '･' => e += 1,
            Some(c)
                if is_separator(c)
                    && e > s
                    && v.at(e + 1).and_then(script) == Some(sc)
                    && !v.at(e - 1).is_some_and(is_separator) =>
            {
                e += 1
            }
            _ => break,
        }
    }
    e
}

/// Every way to cut `w` into two parts of two chars or more.
fn split_points(w: &str) -> impl Iterator<Item = (&str, &str)> {
    let n = w.chars().count();
    w.char_indices()
        .enumerate()
        .filter(move |&(k, _)| k >= 2 && n - k >= 2)
        .map(move |(_, (b, _))| (&w[..b], &w[b..]))
}

/// No one known word other than a person's covers all of `[s, e)` (ありがとう, なかなか are
/// words; マツモトキヨシ is a company). The analyzer's cuts inside a hiragana name are no guide (たなか|たい|ちん|ち).
fn aligned(toks: &[ProperNoun], s: usize, e: usize) -> bool {
    if toks.is_empty() {
        return false;
    }
    let one_word = toks.iter().any(|t| {
        t.start <= s
            && t.end >= e
            && !matches!(
                t.kind,
                ProperKind::Surname
                    | ProperKind::GivenName
                    | ProperKind::Person
                    | ProperKind::Unknown
            )
    });
    !one_word
}

/// A kana run whose whole reading is a common word's and no person's (みず|たまり reads as
/// 水溜り): no surname and given name, however it splits, and no one called out (ヒマワリ、).
pub(super) fn is_word_not_name(text: &str, an: &dyn Analyzer) -> bool {
    let flat: String = text.chars().filter(|&c| !is_separator(c)).collect();
    if !flat.chars().all(|c| script(c).is_some()) {
        return false;
    }
    let r = an.name_reading(&flat);
    r.word && !r.surname && !r.given
}

/// Hiragana to katakana; anything else as it is.
fn to_katakana(s: &str) -> String {
    s.chars().map(crate::text::chars::to_katakana).collect()
}

/// Katakana to hiragana; anything else as it is.
fn to_hiragana(s: &str) -> String {
    s.chars().map(crate::text::fold::kana_fold).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lists_parse_and_hold_no_duplicate() {
        let k = KanaNames::new();
        for (name, list) in [
            ("follow", &k.follow),
            ("single_follow", &k.single_follow),
            ("end_marks", &k.end_marks),
            ("follow_kanji", &k.follow_kanji),
            ("honorifics", &k.honorifics),
            ("lead_particles", &k.lead_particles),
            ("lead_words", &k.lead_words),
            ("hira_leads", &k.hira_leads),
            ("not_starts", &k.not_starts),
            ("predicate_ends", &k.predicate_ends),
            ("not_names", &k.not_names),
        ] {
            let set: std::collections::HashSet<&String> = list.iter().collect();
            assert_eq!(set.len(), list.len(), "{name} holds a duplicate");
            assert!(!list.is_empty(), "{name} is empty");
        }
        assert!(k.lead_particles.iter().all(|p| p.chars().count() == 1));
        assert!(k.given_kana.len() >= 100, "{}", k.given_kana.len());
        for g in &k.given_kana {
            assert!(
                g.chars().count() >= 2 && g.chars().all(|c| script(c) == Some(Script::Kata)),
                "{g} is no katakana given name"
            );
        }
    }

    #[test]
    fn every_split_leaves_two_kana_on_each_side() {
        let all: Vec<(&str, &str)> = split_points("ほずみつむぎ").collect();
        assert_eq!(
            all,
            [
                ("ほず", "みつむぎ"),
                ("ほずみ", "つむぎ"),
                ("ほずみつ", "むぎ")
            ]
        );
        assert_eq!(split_points("さとう").count(), 0);
        for n in 0..12 {
            let w: String = "あ".repeat(n);
            assert_eq!(split_points(&w).count(), n.saturating_sub(3));
        }
    }

    #[test]
    fn kana_scripts_convert_both_ways() {
        for w in ["ほずみつむぎ", "さとう ひな", "ゔぁ"] {
            assert_eq!(to_hiragana(&to_katakana(w)), w);
        }
        assert_eq!(to_katakana("たなかハナコ"), "タナカハナコ");
        assert_eq!(to_hiragana("ー・ｱ"), "ー・ｱ");
    }

    #[test]
    fn a_run_keeps_one_separator_between_its_kana() {
        let v = View::new("友達のほずみ つむぎが来た");
        assert_eq!(run_end(&v, 2, Script::Hira), 11);
        let v = View::new("サトウ・ヒナと");
        assert_eq!(run_end(&v, 0, Script::Kata), 6);
        // Two spaces end the run; so does a lone dot.
        let v = View::new("さとう  ひな");
        assert_eq!(run_end(&v, 0, Script::Hira), 3);
        let v = View::new("・");
        assert_eq!(run_end(&v, 0, Script::Kata), 0);
    }
}
