//! Keyword variants (issue 16 §3, seed 000 §3, seed 004 §5): a keyword matches however a
//! writer spells it — hiragana or katakana, full or half width, a long-vowel mark for a vowel
//! (コーボー = こうぼう), spaces or middle dots between its letters (工　房, 工・房), okurigana
//! left out or added (引っ越し / 引越し / 引越), and, for a keyword with kanji, its reading in
//! kana (殺す ↔ ころす / コロス) taken from the analyzer's dictionary once per keyword list.
//!
//! A text is prepared once (`LooseText`: the loose view and the okurigana skeleton); a keyword
//! list is compiled once (`KeywordSet`, its readings on first use). A reading only counts on
//! token boundaries of the text, so 「ところすごい」 (ところ｜すごい) does not contain ころす.

use std::fmt;
use std::sync::{Arc, OnceLock};

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};

use super::fold::{Folded, fold_char};
use crate::text::analyzer::{Analyzer, AnalyzerKind};

/// The dictionary keyword readings come from (none: readings are not checked).
#[derive(Clone, Default)]
pub struct Dict(Option<Arc<dyn Analyzer>>);

impl fmt::Debug for Dict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Some(a) => write!(f, "Dict({})", a.kind()),
            None => f.write_str("Dict(none)"),
        }
    }
}

impl Dict {
    pub fn none() -> Dict {
        Dict(None)
    }

    /// Readings from `analyzer` when it has a dictionary (the fallback has none).
    pub fn from(analyzer: Arc<dyn Analyzer>) -> Dict {
        Dict((analyzer.kind() == AnalyzerKind::LinderaIpadic).then_some(analyzer))
    }

    /// The IPADIC dictionary through the one path every command uses
    /// ([`crate::text::analyzer::dictionary`]): built from MeCab sources on first use.
    pub fn installed() -> Dict {
        Dict(crate::text::analyzer::dictionary())
    }

    /// Are readings checked at all?
    pub fn has_readings(&self) -> bool {
        self.0.is_some()
    }

    pub fn analyzer(&self) -> Option<&dyn Analyzer> {
        self.0.as_deref()
    }
}

fn is_kanji(c: char) -> bool {
    matches!(c, '\u{4E00}'..='\u{9FFF}' | '\u{3400}'..='\u{4DBF}' | '々' | '〆')
}

fn is_hiragana(c: char) -> bool {
    matches!(c, '\u{3041}'..='\u{3096}')
}

/// Separators a writer puts between letters: whitespace and middle dots.
fn is_separator(c: char) -> bool {
    c.is_whitespace() || matches!(c, '・' | '·' | '‧' | '•' | '∙')
}

/// Hiragana that are particles, never okurigana: a run holding one is kept.
fn is_particle(c: char) -> bool {
    matches!(
        c,
        'の' | 'が' | 'を' | 'に' | 'と' | 'へ' | 'や' | 'も' | 'で' | 'は'
    )
}

/// The vowel a long-vowel mark after `prev` stands for (お段 → う, え段 → い, as written).
fn long_vowel(prev: char) -> Option<char> {
    const ROWS: [(&str, char); 5] = [
        ("ぁあかがさざただなはばぱまゃやらゎわ", 'あ'),
        ("ぃいきぎしじちぢにひびぴみりゐ", 'い'),
        ("ぅうくぐすずっつづぬふぶぷむゅゆるゔ", 'う'),
        ("ぇえけげせぜてでねへべぺめれゑ", 'い'),
        ("ぉおこごそぞとどのほぼぽもょよろを", 'う'),
    ];
    ROWS.iter()
        .find(|(row, _)| row.contains(prev))
        .map(|(_, v)| *v)
}

/// One view of a text: its chars as a string, and each char's source range.
#[derive(Debug, Clone, Default)]
pub struct View {
    pub string: String,
    bytes: Vec<u32>,
    /// Per char: `[start, end)` in the source chars.
    src: Vec<(u32, u32)>,
    /// Per char: written in hiragana (not folded from katakana).
    hira: Vec<bool>,
}

impl View {
    fn push(&mut self, c: char, from: (u32, u32), hira: bool) {
        self.bytes.push(self.string.len() as u32);
        self.string.push(c);
        self.src.push(from);
        self.hira.push(hira);
    }

    fn finish(&mut self) {
        self.bytes.push(self.string.len() as u32);
    }

    fn char_at(&self, byte: usize) -> usize {
        match self.bytes.binary_search(&(byte as u32)) {
            Ok(i) | Err(i) => i,
        }
    }

    /// Source range of the view's chars `[start, end)` (non-empty).
    fn source(&self, start: usize, end: usize) -> (usize, usize) {
        let s = self.src.get(start).map_or(0, |r| r.0 as usize);
        let e = self
            .src
            .get(end.max(start + 1) - 1)
            .map_or(s, |r| r.1 as usize);
        (s, e)
    }

    fn chars(&self) -> impl Iterator<Item = char> + '_ {
        self.string.chars()
    }
}

/// Symbols a writer slips between the letters of a word to hide it (工/房, 形-見, 物＊置,
/// こう、ぼう): dropped after a Japanese letter in the stretched view.
fn is_slipped_symbol(c: char) -> bool {
    matches!(
        c,
        '/' | '／'
            | '-'
            | '‐'
            | '－'
            | '*'
            | '＊'
            | '、'
            | '，'
            | ','
            | '_'
            | '＿'
            | '\''
            | '’'
            | '+'
            | '＋'
            | '|'
    )
}

fn is_japanese_letter(c: char) -> bool {
    is_kanji(c) || is_hiragana(c) || matches!(c, '\u{30A1}'..='\u{30FA}')
}

/// The loose view of NFKC chars: kana and case folded, separators
/// between non-latin letters dropped, long-vowel marks spelled as their vowel.
fn loose_view(chars: impl Iterator<Item = char>) -> View {
    view_of(chars, false)
}

/// The stretched view: the loose view with long-vowel marks after a kana dropped (かたーみ,
/// うーみぞーい: a word stretched in speech, not a long vowel of its reading) and symbols
/// slipped between Japanese letters dropped.
fn stretched_view(chars: impl Iterator<Item = char>) -> View {
    view_of(chars, true)
}

fn view_of(chars: impl Iterator<Item = char>, stretched: bool) -> View {
    let mut v = View::default();
    let mut last: Option<char> = None;
    for (i, written) in chars.enumerate() {
        let c = fold_char(written);
        let at = (i as u32, i as u32 + 1);
        if is_separator(c) && !last.is_some_and(|l| l.is_ascii_alphanumeric()) {
            // Belongs to nothing: a keyword never starts or ends in one.
            continue;
        }
        // A comma between kanji is a clause break (料理、帳尻), between kana a held breath
        // (こう、ぼう): only the latter is dropped.
        let comma = matches!(c, '、' | '，' | ',');
        let kana_before = last.is_some_and(|l| is_japanese_letter(l) && !is_kanji(l));
        if stretched
            && last.is_some_and(is_japanese_letter)
            && (matches!(c, 'ー' | '〜' | '～' | '~') || is_slipped_symbol(c))
            && (!comma || kana_before)
        {
            continue;
        }
        let c = match c {
            'ー' | '〜' | '～' => last.and_then(long_vowel).unwrap_or(c),
            c => c,
        };
        v.push(c, at, is_hiragana(written));
        last = Some(c);
    }
    v.finish();
    v
}

/// The okurigana skeleton of a loose view: a run of one or two hiragana between two kanji is
/// left out unless it holds a particle (引っ越し → 引越し, but 料理の帳 stays).
fn skeleton_view(loose: &View) -> View {
    let chars: Vec<char> = loose.chars().collect();
    let mut v = View::default();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if loose.hira[i] && i > 0 && is_kanji(chars[i - 1]) {
            let run = loose.hira[i..].iter().take_while(|h| **h).count();
            let next = chars.get(i + run).copied();
            if run <= 2
                && next.is_some_and(is_kanji)
                && !chars[i..i + run].iter().any(|c| is_particle(*c))
            {
                i += run;
                continue;
            }
        }
        v.push(c, loose.src[i], loose.hira[i]);
        i += 1;
    }
    v.finish();
    v
}

/// A keyword's skeleton: interior okurigana left out as in a text, and trailing kana after
/// its last kanji too (引っ越し → 引越). Only for keywords with two or more kanji.
fn keyword_skeleton(word: &str) -> Option<String> {
    let v = loose_view(Folded::new(word.trim()).plain.chars());
    let sk = skeleton_view(&v);
    let n = trailing_kana(&sk);
    let chars: Vec<char> = sk.chars().collect();
    let core = &chars[..chars.len() - n];
    (core.last().is_some_and(|c| is_kanji(*c))
        && core.iter().filter(|c| is_kanji(**c)).count() >= 2)
        .then(|| core.iter().collect())
}

/// Trailing okurigana of a keyword: one or two hiragana (as written, no particle) after a kanji.
fn trailing_kana(v: &View) -> usize {
    let n = v.hira.iter().rev().take_while(|h| **h).count();
    let chars: Vec<char> = v.chars().collect();
    let ok = n <= 2
        && chars.len() > n
        && is_kanji(chars[chars.len() - n - 1])
        && !chars[chars.len() - n..].iter().any(|c| is_particle(*c));
    if ok { n } else { 0 }
}

/// Casual spellings of a loose form: the い of ている/でいる dropped as people type it
/// (生きている → 生きてる, 住んでいた → 住んでた). The form itself is not included.
pub fn casual_forms(form: &str) -> Vec<String> {
    let chars: Vec<char> = form.chars().collect();
    let mut out = String::with_capacity(form.len());
    let mut changed = false;
    for (i, &c) in chars.iter().enumerate() {
        let dropped = c == 'い'
            && i > 0
            && matches!(chars[i - 1], 'て' | 'で')
            && chars
                .get(i + 1)
                .is_some_and(|n| matches!(n, 'る' | 'た' | 'て' | 'ま' | 'な'));
        if dropped {
            changed = true;
        } else {
            out.push(c);
        }
    }
    if changed { vec![out] } else { Vec::new() }
}

/// Spellings of a keyword with kanji that mix kanji and kana, word by word (北の島 →
/// きたの島, 北のしま, きたのしま), from the dictionary's reading of each word; at most 32.
fn mixed_forms(analyzer: &dyn Analyzer, word: &str) -> Vec<String> {
    let tokens = analyzer.tokenize(word);
    let parts: Vec<(String, Option<String>)> = tokens
        .iter()
        .map(|t| {
            let reading = t
                .surface
                .chars()
                .any(is_kanji)
                .then(|| analyzer.reading(&t.surface))
                .flatten()
                .map(|r| loose_str(&r));
            (loose_str(&t.surface), reading)
        })
        .collect();
    let mut forms = vec![String::new()];
    for (surface, reading) in &parts {
        let mut next = Vec::new();
        for f in &forms {
            next.push(format!("{f}{surface}"));
            if let Some(r) = reading
                && next.len() < 32
            {
                next.push(format!("{f}{r}"));
            }
        }
        forms = next;
    }
    forms
}

/// The loose form of a keyword (or a reading).
pub fn loose_str(s: &str) -> String {
    loose_view(Folded::new(s.trim()).plain.chars()).string
}

/// A text prepared for variant matching, once; positions are chars of the source view it was
/// built from.
#[derive(Debug, Clone, Default)]
pub struct LooseText {
    pub loose: View,
    pub skeleton: View,
    /// Stretching marks and slipped symbols dropped (see [`stretched_view`]).
    pub stretched: View,
}

impl LooseText {
    /// From the chars of an NFKC view (kana and case are folded here; katakana is told apart
    /// from hiragana for okurigana).
    pub fn new(chars: impl Iterator<Item = char> + Clone) -> LooseText {
        let stretched = stretched_view(chars.clone());
        let loose = loose_view(chars);
        let skeleton = skeleton_view(&loose);
        LooseText {
            loose,
            skeleton,
            stretched,
        }
    }
}

/// How a keyword was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    /// Its spelling (after the loose folding).
    Spelling,
    /// With okurigana added or left out.
    Okurigana,
    /// Its reading, in kana, on token boundaries.
    Reading,
}

/// A hit of keyword `entry` at source chars `[start, end)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VariantHit {
    pub entry: usize,
    pub start: usize,
    pub end: usize,
    pub via: Via,
}

type Automaton = Option<(AhoCorasick, Vec<usize>)>;

fn automaton(forms: &[(String, usize)]) -> Result<Automaton, String> {
    if forms.is_empty() {
        return Ok(None);
    }
    let ac = AhoCorasickBuilder::new()
        .match_kind(MatchKind::Standard)
        .build(forms.iter().map(|f| f.0.as_str()))
        .map_err(|e| format!("cannot build the keyword matcher: {e}"))?;
    Ok(Some((ac, forms.iter().map(|f| f.1).collect())))
}

/// A compiled keyword list.
#[derive(Debug, Clone, Default)]
pub struct KeywordSet {
    /// Per entry: its loose form ("" for an entry that is not matched here).
    pub forms: Vec<String>,
    spelling: Automaton,
    okurigana: Automaton,
    /// Per entry: trailing okurigana a skeleton hit may extend over.
    trailing: Vec<usize>,
    dict: Dict,
    /// Reading forms (all kana; on token boundaries) and mixed forms (kanji and kana: 北のしま,
    /// no boundary needed), computed on first use (once per list).
    readings: Arc<OnceLock<(Automaton, Automaton)>>,
}

impl KeywordSet {
    /// `words` in order; `None` entries are placeholders (kept for numbering, never matched).
    pub fn new<'a>(
        words: impl IntoIterator<Item = Option<&'a str>>,
        dict: Dict,
    ) -> Result<KeywordSet, String> {
        let (mut forms, mut trailing) = (Vec::new(), Vec::new());
        let (mut spelled, mut skel) = (Vec::new(), Vec::new());
        for (i, w) in words.into_iter().enumerate() {
            let Some(w) = w else {
                forms.push(String::new());
                trailing.push(0);
                continue;
            };
            let form = loose_str(w);
            if form.is_empty() {
                return Err(format!("the word {w:?} is empty after normalisation"));
            }
            if let Some(s) = keyword_skeleton(w) {
                skel.push((s, i));
            }
            spelled.push((form.clone(), i));
            for c in casual_forms(&form) {
                spelled.push((c, i));
            }
            trailing.push(trailing_kana(&loose_view(
                Folded::new(w.trim()).plain.chars(),
            )));
            forms.push(form);
        }
        Ok(KeywordSet {
            forms,
            spelling: automaton(&spelled)?,
            okurigana: automaton(&skel)?,
            trailing,
            dict,
            readings: Arc::new(OnceLock::new()),
        })
    }

    /// Are readings part of the matching (a dictionary is at hand)?
    pub fn readings_checked(&self) -> bool {
        self.dict.has_readings()
    }

    fn reading_automaton(&self) -> &(Automaton, Automaton) {
        self.readings.get_or_init(|| {
            let Some(a) = self.dict.analyzer() else {
                return (None, None);
            };
            let (mut list, mut mixed) = (Vec::new(), Vec::new());
            for (i, form) in self.forms.iter().enumerate() {
                if !form.chars().any(is_kanji) {
                    continue;
                }
                let mut readings: Vec<String> = mixed_forms(a, form);
                if let Some(r) = a.reading(form) {
                    readings.push(loose_str(&r));
                }
                let casual: Vec<String> = readings.iter().flat_map(|r| casual_forms(r)).collect();
                readings.extend(casual);
                readings.sort();
                readings.dedup();
                for r in readings {
                    if r.chars().count() < 2 || r == *form {
                        continue;
                    }
                    if r.chars().any(is_kanji) {
                        mixed.push((r, i));
                    } else {
                        list.push((r, i));
                    }
                }
            }
            (
                automaton(&list).ok().flatten(),
                automaton(&mixed).ok().flatten(),
            )
        })
    }

    /// Every hit (overlapping ones included) in source chars, one per entry and span, sorted.
    /// `boundaries(start, end)` says whether source chars `[start, end)` start and end on
    /// token boundaries (asked only for reading hits).
    pub fn find(
        &self,
        t: &LooseText,
        accept: &dyn Fn(usize, &View, usize, usize) -> bool,
        boundaries: &dyn Fn(usize, usize) -> bool,
    ) -> Vec<VariantHit> {
        let mut out = Vec::new();
        // `dropped_ok`: a reading hit that spans a dropped mark or symbol (こうぼ～う) is a
        // spelling no word has by accident, so its token boundaries are not asked for.
        let mut run = |auto: &Automaton, view: &View, via: Via, dropped_ok: bool| {
            let Some((ac, ids)) = auto else { return };
            for m in ac.find_overlapping_iter(&view.string) {
                let Some(&entry) = ids.get(m.pattern().as_usize()) else {
                    continue;
                };
                let (s, mut e) = (view.char_at(m.start()), view.char_at(m.end()));
                if !accept(entry, view, s, e) {
                    continue;
                }
                if via == Via::Okurigana {
                    // 引越 found in 引越しの: the span takes the okurigana too.
                    let n = self.trailing.get(entry).copied().unwrap_or(0);
                    let more = view.string[view.bytes[e] as usize..]
                        .chars()
                        .take(n)
                        .take_while(|c| is_hiragana(*c) && !is_particle(*c))
                        .count();
                    e += more;
                }
                let (start, end) = view.source(s, e);
                let dropped = dropped_ok && end - start > e - s;
                if via == Via::Reading && !dropped && !boundaries(start, end) {
                    continue;
                }
                out.push(VariantHit {
                    entry,
                    start,
                    end,
                    via,
                });
            }
        };
        run(&self.spelling, &t.loose, Via::Spelling, false);
        run(&self.spelling, &t.stretched, Via::Spelling, false);
        run(&self.okurigana, &t.skeleton, Via::Okurigana, false);
        if self.dict.has_readings() {
            let (reading, mixed) = self.reading_automaton();
            run(reading, &t.loose, Via::Reading, false);
            run(reading, &t.stretched, Via::Reading, true);
            run(mixed, &t.loose, Via::Spelling, false);
        }
        out.sort_by_key(|h| (h.start, h.end, h.entry, h.via as u8));
        out.dedup_by_key(|h| (h.start, h.end, h.entry));
        out
    }
}

impl View {
    /// The chars just before and after view chars `[s, e)`.
    pub fn around(&self, s: usize, e: usize) -> (Option<char>, Option<char>) {
        let before = self
            .string
            .get(..self.bytes[s] as usize)
            .and_then(|x| x.chars().next_back());
        let after = self
            .bytes
            .get(e)
            .and_then(|&b| self.string.get(b as usize..))
            .and_then(|x| x.chars().next());
        (before, after)
    }
}

/// Token-boundary test for reading hits on `text` (chars `[start, end)`): the sentence
/// around the hit is tokenized and both ends must fall between tokens.
pub fn on_token_boundaries(
    analyzer: &dyn Analyzer,
    text: &[char],
    start: usize,
    end: usize,
) -> bool {
    const REACH: usize = 48;
    let stop = |c: &char| matches!(c, '\n' | '。' | '！' | '？' | '!' | '?');
    let from = text[..start]
        .iter()
        .rev()
        .take(REACH)
        .position(stop)
        .map_or(start.saturating_sub(REACH), |p| start - p);
    let to = text[end.min(text.len())..]
        .iter()
        .take(REACH)
        .position(stop)
        .map_or((end + REACH).min(text.len()), |p| end + p);
    let window: String = text[from..to].iter().collect();
    let tokens = analyzer.tokenize(&window);
    let (s, e) = (start - from, end - from);
    let starts = s == 0 || tokens.iter().any(|t| t.start == s) || tokens.iter().any(|t| t.end == s);
    let ends =
        e == to - from || tokens.iter().any(|t| t.end == e) || tokens.iter().any(|t| t.start == e);
    starts && ends
}

#[cfg(test)]
#[path = "variants_tests.rs"]
mod tests;
