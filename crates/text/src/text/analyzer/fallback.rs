//! The dictionary-free analyzer: character-class segmentation with a few kana heuristics.
//!
//! It exists so a fresh machine works without MeCab IPADIC. It knows runs of kanji, katakana,
//! latin/digits and hiragana; a kanji run followed by okurigana is guessed to be a conjugating
//! stem (行く, 広い) rather than a noun, which keeps junk keywords such as 絶対行 out; a hiragana
//! particle right after a noun is split off so (名詞)は(活用語) can be found.

use super::{Analyzer, AnalyzerKind, Morpheme, NounKind, Pos};
use crate::text::chars::{is_alnum, is_hiragana, is_kanji, is_katakana};

pub struct FallbackAnalyzer;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    Kanji,
    Katakana,
    Hiragana,
    Alnum,
    Space,
    Symbol,
}

fn class(c: char) -> Class {
    if is_kanji(c) {
        Class::Kanji
    } else if is_katakana(c) || c == 'ー' {
        Class::Katakana
    } else if is_hiragana(c) {
        Class::Hiragana
    } else if is_alnum(c) {
        Class::Alnum
    } else if c.is_whitespace() {
        Class::Space
    } else {
        Class::Symbol
    }
}

/// Particles that may follow a noun, longest first.
const PARTICLES: [&str; 16] = [
    "について",
    "として",
    "から",
    "まで",
    "より",
    "って",
    "は",
    "が",
    "を",
    "に",
    "で",
    "と",
    "も",
    "へ",
    "や",
    "の",
];

/// Hiragana that, right after a kanji run, show the run is a noun: the particles except や,
/// which often begins okurigana (賑やか, 穏やか), plus the copula だ/です.
fn follows_noun(h: &str) -> bool {
    h.starts_with('だ') || PARTICLES.iter().any(|p| *p != "や" && h.starts_with(p))
}

const PRONOUNS: [&str; 16] = [
    "私",
    "僕",
    "俺",
    "君",
    "彼",
    "彼女",
    "わたし",
    "あたし",
    "これ",
    "それ",
    "あれ",
    "どれ",
    "ここ",
    "そこ",
    "あそこ",
    "みんな",
];

const TIME_WORDS: [&str; 8] = ["今日", "明日", "昨日", "今", "最近", "今度", "今年", "毎日"];

fn noun_kind(surface: &str) -> NounKind {
    if PRONOUNS.contains(&surface) {
        NounKind::Pronoun
    } else if TIME_WORDS.contains(&surface) {
        NounKind::Adverbial
    } else if surface
        .chars()
        .all(|c| c.is_ascii_digit() || ('０'..='９').contains(&c))
    {
        NounKind::Number
    } else {
        NounKind::General
    }
}

impl Analyzer for FallbackAnalyzer {
    fn kind(&self) -> AnalyzerKind {
        AnalyzerKind::Fallback
    }

    fn tokenize(&self, text: &str) -> Vec<Morpheme> {
        let chars: Vec<char> = text.chars().collect();
        // 1. runs of one class; katakana words joined by ・ stay one run.
        let mut runs: Vec<(usize, usize, Class)> = Vec::new();
        let mut i = 0;
        while i < chars.len() {
            let cl = class(chars[i]);
            let mut j = i + 1;
            while j < chars.len() {
                let cj = class(chars[j]);
                let joins_katakana = cl == Class::Katakana
                    && chars[j] == '・'
                    && chars
                        .get(j + 1)
                        .is_some_and(|&n| class(n) == Class::Katakana);
                if cj == cl || joins_katakana {
                    j += 1;
                } else {
                    break;
                }
            }
            runs.push((i, j, cl));
            i = j;
        }
        // 2. classify runs into morphemes.
        let mut out: Vec<Morpheme> = Vec::with_capacity(runs.len() + 4);
        let push = |out: &mut Vec<Morpheme>, s: usize, e: usize, pos: Pos| {
            out.push(Morpheme {
                start: s,
                end: e,
                surface: chars[s..e].iter().collect(),
                pos,
                lemma: None,
            });
        };
        for (k, &(s, e, cl)) in runs.iter().enumerate() {
            let next_hira = runs
                .get(k + 1)
                .filter(|r| r.2 == Class::Hiragana)
                .map(|r| chars[r.0..r.1].iter().collect::<String>());
            match cl {
                Class::Kanji => {
                    let surface: String = chars[s..e].iter().collect();
                    // や/と/も often begin okurigana (賑やか, 頼もしい), so only the unambiguous
                    // case particles (and だ/です) mark the kanji run as a noun.
                    let okurigana = next_hira.as_deref().is_some_and(|h| !follows_noun(h));
                    if okurigana && !PRONOUNS.contains(&surface.as_str()) {
                        push(&mut out, s, e, Pos::Conjugating);
                    } else {
                        push(&mut out, s, e, Pos::Noun(noun_kind(&surface)));
                    }
                }
                Class::Katakana | Class::Alnum => {
                    push(&mut out, s, e, Pos::Noun(NounKind::General));
                }
                Class::Space => {}
                Class::Symbol => push(&mut out, s, e, Pos::Symbol),
                Class::Hiragana => {
                    let run: String = chars[s..e].iter().collect();
                    let after_noun = out.last().is_some_and(|m| matches!(m.pos, Pos::Noun(_)));
                    let after_topic_wa = out
                        .last()
                        .is_some_and(|m| m.pos == Pos::Particle && m.surface == "は");
                    let mut at = s;
                    if let Some(pr) = PRONOUNS.iter().find(|p| run.starts_with(**p)) {
                        let l = pr.chars().count();
                        push(&mut out, s, s + l, Pos::Noun(NounKind::Pronoun));
                        at = s + l;
                    } else if after_noun
                        && let Some(p) = PARTICLES.iter().find(|p| run.starts_with(**p))
                    {
                        let l = p.chars().count();
                        push(&mut out, s, s + l, Pos::Particle);
                        at = s + l;
                    } else if after_topic_wa
                        || out.last().is_some_and(|m| m.pos == Pos::Conjugating)
                    {
                        let sentence_final = matches!(chars[s], 'ね' | 'よ' | 'な' | 'か' | 'さ');
                        let pos = if sentence_final && e - s <= 2 {
                            Pos::Particle
                        } else {
                            Pos::Conjugating
                        };
                        push(&mut out, s, e, pos);
                        continue;
                    }
                    if at < e {
                        // After a particle split, what follows は is a predicate if it is not
                        // itself a particle.
                        let pos = if out.last().is_some_and(|m| m.surface == "は")
                            && !PARTICLES
                                .iter()
                                .any(|p| chars[at..e].iter().collect::<String>().starts_with(p))
                        {
                            Pos::Conjugating
                        } else {
                            Pos::Other
                        };
                        push(&mut out, at, e, pos);
                    }
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(s: &str) -> Vec<(String, Pos)> {
        FallbackAnalyzer
            .tokenize(s)
            .into_iter()
            .map(|m| (m.surface, m.pos))
            .collect()
    }

    #[test]
    fn noun_topic_particle_predicate() {
        let t = toks("京都は広いですね");
        assert_eq!(t[0], ("京都".into(), Pos::Noun(NounKind::General)));
        assert_eq!(t[1], ("は".into(), Pos::Particle));
        assert!(t[2].1.is_conjugating());
    }

    #[test]
    fn kanji_with_okurigana_is_not_a_noun() {
        let t = toks("絶対行くよ");
        assert!(t.iter().all(|(_, p)| !matches!(p, Pos::Noun(_))));
    }

    #[test]
    fn katakana_with_middle_dot_is_one_noun() {
        let t = toks("スペース・マウンテンに行こう");
        assert_eq!(t[0].0, "スペース・マウンテン");
    }

    #[test]
    fn offsets_are_char_offsets() {
        let m = FallbackAnalyzer.tokenize("あ　金閣寺");
        let last = m.last().map(|m| (m.start, m.end));
        assert_eq!(last, Some((2, 5)));
    }
}
