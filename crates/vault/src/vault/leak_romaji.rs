//! Romaji disguises of a forbidden keyword: `koubou`, `Kōbō`, `KOBO`, `kou-bou`, `ｋｏｕｂｏｕ`
//! for 工房 (reading こうぼう). Every kana reading of a keyword (the keyword itself when it is
//! kana, the writer's `reading`s) is written in Hepburn, then both it and the text's Latin words
//! are brought to one canonical spelling — Kunrei and Hepburn alike (si/shi, tu/tsu, zi/ji),
//! long vowels in any spelling (ou, oo, oh, ō, ô, uu, ei), `m` before b/p, `n'` — and a keyword
//! matches only a whole run of one to four consecutive words, never part of a word (`karaoke`
//! holds no おけ). Readings shorter than four canonical letters are not matched (too many
//! innocent English words).

/// Hiragana (katakana folded first) to Hepburn romaji; None when `s` holds anything else.
pub fn kana_to_romaji(s: &str) -> Option<String> {
    let chars: Vec<char> = s
        .chars()
        .map(crate::safety::fold::kana_fold)
        .filter(|c| !c.is_whitespace())
        .collect();
    let mut out = String::new();
    let mut i = 0;
    let mut double_next = false;
    while i < chars.len() {
        let c = chars[i];
        if c == 'っ' {
            double_next = true;
            i += 1;
            continue;
        }
        if c == 'ー' {
            if let Some(v) = out.chars().last().filter(|v| "aiueo".contains(*v)) {
                out.push(v);
            }
            i += 1;
            continue;
        }
        // A syllable with a small ゃゅょぁぃぅぇぉ after it.
        let two: String = chars[i..(i + 2).min(chars.len())].iter().collect();
        let (syl, used) = match syllable(&two) {
            Some(r) if two.chars().count() == 2 => (r, 2),
            _ => (syllable(&c.to_string())?, 1),
        };
        if double_next {
            if let Some(f) = syl.chars().next().filter(|f| !"aiueon".contains(*f)) {
                out.push(if f == 'c' { 't' } else { f });
            }
            double_next = false;
        }
        out.push_str(syl);
        i += used;
    }
    Some(out)
}

fn syllable(k: &str) -> Option<&'static str> {
    const BASE: &str = "あ a い i う u え e お o か ka き ki く ku け ke こ ko さ sa し shi す su せ se そ so \
た ta ち chi つ tsu て te と to な na に ni ぬ nu ね ne の no は ha ひ hi ふ fu へ he ほ ho \
ま ma み mi む mu め me も mo や ya ゆ yu よ yo ら ra り ri る ru れ re ろ ro わ wa を o ん n \
が ga ぎ gi ぐ gu げ ge ご go ざ za じ ji ず zu ぜ ze ぞ zo だ da ぢ ji づ zu で de ど do \
ば ba び bi ぶ bu べ be ぼ bo ぱ pa ぴ pi ぷ pu ぺ pe ぽ po ゔ vu ぁ a ぃ i ぅ u ぇ e ぉ o ゃ ya ゅ yu ょ yo \
きゃ kya きゅ kyu きょ kyo しゃ sha しゅ shu しょ sho ちゃ cha ちゅ chu ちょ cho にゃ nya にゅ nyu にょ nyo \
ひゃ hya ひゅ hyu ひょ hyo みゃ mya みゅ myu みょ myo りゃ rya りゅ ryu りょ ryo ぎゃ gya ぎゅ gyu ぎょ gyo \
じゃ ja じゅ ju じょ jo びゃ bya びゅ byu びょ byo ぴゃ pya ぴゅ pyu ぴょ pyo ふぁ fa ふぃ fi ふぇ fe ふぉ fo \
てぃ ti でぃ di しぇ she ちぇ che じぇ je うぃ wi うぇ we";
    static TABLE: std::sync::OnceLock<std::collections::HashMap<&'static str, &'static str>> =
        std::sync::OnceLock::new();
    let t = TABLE.get_or_init(|| {
        let v: Vec<&str> = BASE.split_whitespace().collect();
        let mut m = std::collections::HashMap::new();
        for p in v.chunks(2) {
            if let [k, r] = p {
                m.insert(*k, *r);
            }
        }
        m
    });
    t.get(k).copied()
}

/// One spelling for every romanisation of the same kana (see the module doc).
pub fn canonical(s: &str) -> String {
    let mut t: String = s
        .chars()
        .filter_map(|c| {
            let c = latin(c)?.to_ascii_lowercase();
            Some(match c {
                'ā' | 'â' => 'a',
                'ī' | 'î' => 'i',
                'ū' | 'û' => 'u',
                'ē' | 'ê' => 'e',
                'ō' | 'ô' => 'o',
                c if c.is_ascii_alphabetic() => c,
                _ => return None,
            })
        })
        .collect();
    for (from, to) in [
        ("tch", "tty"),
        ("cch", "tty"),
        ("shi", "si"),
        ("sh", "sy"),
        ("chi", "ti"),
        ("ch", "ty"),
        ("tsu", "tu"),
        ("dzu", "zu"),
        ("du", "zu"),
        ("di", "zi"),
        ("fu", "hu"),
        ("ji", "zi"),
        ("j", "zy"),
        ("mb", "nb"),
        ("mp", "np"),
        ("mm", "nm"),
        ("ou", "o"),
        ("oh", "o"),
        ("ei", "e"),
    ] {
        t = t.replace(from, to);
    }
    // Any vowel written twice is one long vowel.
    let mut out = String::with_capacity(t.len());
    for c in t.chars() {
        if "aiueo".contains(c) && out.ends_with(c) {
            continue;
        }
        out.push(c);
    }
    out
}

/// A Latin letter (full width folded), or a macron / circumflex vowel; None for anything else.
fn latin(c: char) -> Option<char> {
    let c = match c {
        '\u{FF21}'..='\u{FF3A}' | '\u{FF41}'..='\u{FF5A}' => char::from_u32(c as u32 - 0xFEE0)?,
        c => c,
    };
    let lower = c.to_lowercase().next().unwrap_or(c);
    (c.is_ascii_alphabetic() || "āīūēōâîûêô".contains(lower)).then_some(lower)
}

/// Shortest canonical reading matched.
pub const MIN_LETTERS: usize = 4;

/// The Latin words of `text` as (start, end) original char ranges: runs of letters, a run ending
/// at anything but letters; words of one phrase are joined by spaces, hyphens, `・`, `'`.
fn words(text: &[char]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < text.len() {
        if latin(text[i]).is_some() {
            let s = i;
            while i < text.len() && latin(text[i]).is_some() {
                i += 1;
            }
            out.push((s, i));
        } else {
            i += 1;
        }
    }
    out
}

/// Can two words belong to one romanised phrase (only joiners between them)?
fn joined(text: &[char], a: (usize, usize), b: (usize, usize)) -> bool {
    b.0 - a.1 <= 2
        && text[a.1..b.0]
            .iter()
            .all(|c| matches!(c, ' ' | '\u{3000}' | '-' | '‐' | '・' | '\'' | '’' | '_'))
}

/// Romaji forms of the keywords, each with its owner.
#[derive(Default)]
pub struct Romaji {
    entries: Vec<(String, usize)>,
}

impl Romaji {
    /// `readings`: (kana reading, owner) pairs; owners are whatever the caller indexes by.
    pub fn new(readings: impl IntoIterator<Item = (String, usize)>) -> Romaji {
        let mut entries: Vec<(String, usize)> = readings
            .into_iter()
            .filter_map(|(r, o)| Some((canonical(&kana_to_romaji(&r)?), o)))
            .filter(|(c, _)| c.chars().count() >= MIN_LETTERS)
            .collect();
        entries.sort();
        entries.dedup();
        Romaji { entries }
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Every (owner, start, end) — original char offsets — where a run of one to four whole
    /// Latin words spells a keyword.
    pub fn find(&self, text: &[char]) -> Vec<(usize, usize, usize)> {
        if self.entries.is_empty() {
            return Vec::new();
        }
        let ws = words(text);
        let mut out = Vec::new();
        for i in 0..ws.len() {
            let mut letters = String::new();
            for j in i..(i + 4).min(ws.len()) {
                if j > i && !joined(text, ws[j - 1], ws[j]) {
                    break;
                }
                letters.extend(&text[ws[j].0..ws[j].1]);
                let c = canonical(&letters);
                for (_, owner) in self.entries.iter().filter(|(e, _)| *e == c) {
                    out.push((*owner, ws[i].0, ws[j].1));
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_romanisation_of_a_reading_is_one_spelling() {
        let cases = [
            (
                "こうぼう",
                &[
                    "koubou",
                    "Kōbō",
                    "KOBO",
                    "kou-bou",
                    "ｋｏｕｂｏｕ",
                    "Kohboh",
                    "kôbô",
                    "koobou",
                ][..],
            ),
            (
                "ものおき",
                &["monooki", "mono oki", "MONO-OKI", "monōki"][..],
            ),
            ("ひっこし", &["hikkoshi", "hikkosi", "Hikkoshi"][..]),
            ("ふういん", &["fuuin", "fūin", "huuin", "fu-in", "FUIN"][..]),
            ("しんぶん", &["shimbun", "shinbun", "sinbun"][..]),
            ("まっちゃ", &["matcha", "maccha", "mattya"][..]),
            ("じゅんび", &["junbi", "zyunbi", "jumbi"][..]),
            ("フーイン", &["fuuin", "fūin"][..]),
        ];
        for (kana, spellings) in cases {
            let want = canonical(&kana_to_romaji(kana).unwrap());
            for s in spellings {
                assert_eq!(canonical(s), want, "{kana} / {s}");
            }
        }
    }

    #[test]
    fn whole_words_only_and_short_readings_are_skipped() {
        let r = Romaji::new([("こうぼう".to_string(), 0), ("おけ".to_string(), 1)]);
        let text: Vec<char> = "Ashita kara Kōbō de hataraku".chars().collect();
        let hits = r.find(&text);
        assert_eq!(hits.len(), 1);
        let (o, s, e) = hits[0];
        assert_eq!(
            (o, text[s..e].iter().collect::<String>()),
            (0, "Kōbō".to_string())
        );
        for innocent in [
            "karaoke ni ikou",
            "kobold",
            "a kou bout",
            "Koubouya-san",
            "OK",
        ] {
            let t: Vec<char> = innocent.chars().collect();
            assert!(r.find(&t).is_empty(), "{innocent}");
        }
        // Split by a hyphen or a space inside one phrase still counts.
        let t: Vec<char> = "kou-bou no hanashi".chars().collect();
        assert_eq!(r.find(&t).len(), 1);
    }
}
