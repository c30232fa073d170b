//! Topic boundaries (seed 001 §6.2) and conversation keywords, from morphemes.
//!
//! Topics: 〜について, 〜の話 and (名詞)は(活用語). Only sentences that contain a candidate
//! outside quotes are tokenised — the analyzer is the expensive part of judging a line.

use super::analysis::Analysis;
use super::analyzer::{Analyzer, Morpheme, NounKind, Pos};
use super::chars::{is_alnum, is_hiragana, is_kanji, is_katakana};
use super::sentences::Sentence;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TopicMarker {
    /// 〜について
    About,
    /// 〜の話
    Talk,
    /// (名詞)は(活用語)
    Wa,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Topic {
    pub head: String,
    pub marker: TopicMarker,
    /// Char offsets into the normalised text.
    pub start: usize,
    pub end: usize,
}

/// Nouns too generic to be a topic or a loop keyword.
const STOP_NOUNS: [&str; 18] = [
    // 〜の話はもうしました: the talk itself is not another topic.
    "話",
    "お話",
    "こと",
    "もの",
    "ところ",
    "感じ",
    "気持ち",
    "本当",
    "ほんと",
    "みたい",
    "よう",
    "方",
    "人",
    "時",
    "何",
    "なに",
    "そう",
    "一緒",
];

fn is_run_noun(m: &Morpheme) -> bool {
    matches!(m.pos, Pos::Noun(_) | Pos::Prefix)
}

/// The run starts with the honorific prefix お/ご, alone or fused into the noun (お昼).
fn honorific(run: &[Morpheme]) -> bool {
    run.first()
        .is_some_and(|m| m.surface.starts_with(['お', 'ご', '御']))
}

/// A noun run that can be a topic or keyword. 副詞可能 nouns (お昼, 夕方, 今日) count only
/// when `adverbial_ok`: topics allow them (お昼についてですが、), keywords do not.
fn run_is_topical(run: &[Morpheme], adverbial_ok: bool) -> bool {
    let counts = |m: &Morpheme| {
        m.pos.is_content_noun() || (adverbial_ok && m.pos == Pos::Noun(NounKind::Adverbial))
    };
    run.iter().any(counts)
        && !run.iter().all(|m| {
            matches!(
                m.pos,
                Pos::Noun(NounKind::Pronoun | NounKind::Number | NounKind::Dependent) | Pos::Prefix
            ) || (!adverbial_ok && m.pos == Pos::Noun(NounKind::Adverbial))
        })
}

fn surface(run: &[Morpheme]) -> String {
    run.iter().map(|m| m.surface.as_str()).collect()
}

/// Hiragana that, right before は, show it is part of a compound particle or a greeting
/// (では, には, とは, のは, からは, こんにちは, …) — those は never open a topic.
const NOT_TOPIC_BEFORE_WA: [char; 8] = ['で', 'に', 'と', 'の', 'ら', 'ち', 'て', 'か'];

fn is_wordish(c: char) -> bool {
    is_kanji(c) || is_katakana(c) || is_alnum(c) || c == 'ー' || c == '・'
}

/// Topic candidates in one sentence: (marker, char offset of the marker, marker length).
fn candidates(a: &Analysis, s: &Sentence) -> Vec<(TopicMarker, usize, usize)> {
    let mut out = Vec::new();
    let text = a.norm.slice(s.start, s.end);
    let sbyte = a.norm.byte_range(s.start, s.end).start;
    for (needle, marker) in [
        ("について", TopicMarker::About),
        ("の話", TopicMarker::Talk),
        ("のお話", TopicMarker::Talk),
        ("は", TopicMarker::Wa),
    ] {
        for (b, _) in text.match_indices(needle) {
            let p = a.norm.char_at_byte(sbyte + b);
            if p == s.start || a.norm.masked.get(p).copied().unwrap_or(true) {
                continue;
            }
            let prev = a.chars[p - 1];
            if marker == TopicMarker::Wa && NOT_TOPIC_BEFORE_WA.contains(&prev) {
                continue;
            }
            if !(is_wordish(prev) || is_hiragana(prev)) {
                continue;
            }
            out.push((marker, p, needle.chars().count()));
        }
    }
    out
}

/// Finds topics by tokenising only a short window around each candidate: the noun run before
/// the marker and a few chars after it. Whole-line tokenisation would dominate judging time.
pub fn find_topics(a: &Analysis, analyzer: &dyn Analyzer) -> Vec<Topic> {
    let mut out = Vec::new();
    for s in &a.sentences {
        for (marker, p, mlen) in candidates(a, s) {
            // Back over the noun (kanji/katakana, and kana inside it: お祭り, 朝ごはん) and a
            // little more, so the analyzer sees the word whole.
            let mut ws = p;
            while ws > s.start
                && p - ws < 12
                && (is_wordish(a.chars[ws - 1]) || is_hiragana(a.chars[ws - 1]))
            {
                ws -= 1;
            }
            let we = (p + mlen + 6).min(s.end);
            let toks = analyzer.tokenize(a.norm.slice(ws, we));
            let Some(k) = toks.iter().position(|m| ws + m.start == p) else {
                continue;
            };
            let mut r0 = k;
            while r0 > 0 && is_run_noun(&toks[r0 - 1]) {
                r0 -= 1;
            }
            if r0 == k {
                continue;
            }
            let run = &toks[r0..k];
            // 〜について and 〜の話 name a topic whatever the noun (お昼についてですが、). Before
            // は a time noun frames the sentence (昔は, 去年は, 午前中は) unless an honorific
            // prefix makes it a thing (お昼は, IPADIC's one token).
            let adverbial_ok = marker != TopicMarker::Wa || honorific(run);
            if !run_is_topical(run, adverbial_ok) || a.norm.any_masked(ws + run[0].start, p) {
                continue;
            }
            let ok = match marker {
                TopicMarker::About => true,
                TopicMarker::Talk => {
                    toks[k].surface == "の"
                        && toks.get(k + 1).is_some_and(|m| {
                            m.surface.starts_with('話')
                                || m.surface.starts_with("お話")
                                || (m.surface == "お"
                                    && toks.get(k + 2).is_some_and(|n| n.surface.starts_with('話')))
                        })
                }
                TopicMarker::Wa => {
                    toks[k].surface == "は"
                        && toks[k].pos == Pos::Particle
                        && toks[k + 1..]
                            .iter()
                            .find(|m| !matches!(m.pos, Pos::Adverb) && m.surface != "、")
                            .is_some_and(|m| m.pos.is_conjugating())
                }
            };
            let head = surface(run);
            if ok && !STOP_NOUNS.contains(&head.as_str()) {
                out.push(Topic {
                    head,
                    marker,
                    start: ws + run[0].start,
                    end: p,
                });
            }
        }
    }
    out.sort_by_key(|t| t.start);
    out
}

pub fn find_keywords(a: &Analysis, analyzer: &dyn Analyzer) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for w in keyword_occurrences(a, analyzer) {
        if !out.contains(&w) {
            out.push(w);
        }
    }
    out
}

/// Every occurrence of a keyword as a whole noun run outside quotes, in text order: 京都 in
/// 東京都 or 京都府 is not an occurrence of 京都 (topic_loop counts these).
pub fn keyword_occurrences(a: &Analysis, analyzer: &dyn Analyzer) -> Vec<String> {
    let toks = analyzer.tokenize(a.text());
    let mut out: Vec<String> = Vec::new();
    let mut k = 0;
    while k < toks.len() {
        if !is_run_noun(&toks[k]) {
            k += 1;
            continue;
        }
        let a0 = k;
        while k < toks.len() && is_run_noun(&toks[k]) {
            k += 1;
        }
        let run = &toks[a0..k];
        if !run_is_topical(run, false) || a.norm.any_masked(run[0].start, run[run.len() - 1].end) {
            continue;
        }
        let w = surface(run);
        if w.chars().count() >= 2 && !STOP_NOUNS.contains(&w.as_str()) {
            out.push(w);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::analyzer::fallback::FallbackAnalyzer;

    fn heads(s: &str) -> Vec<String> {
        let a = Analysis::new(s);
        find_topics(&a, &FallbackAnalyzer)
            .into_iter()
            .map(|t| t.head)
            .collect()
    }

    #[test]
    fn finds_the_three_patterns() {
        assert_eq!(heads("金閣寺についてです。"), vec!["金閣寺"]);
        assert_eq!(heads("清水寺の話もしたいです。"), vec!["清水寺"]);
        assert_eq!(heads("京都は広いですね。"), vec!["京都"]);
    }

    #[test]
    fn ignores_particles_inside_words_and_quotes() {
        assert!(heads("こんにちは、あゆ！").is_empty());
        assert!(heads("まだ完成ではないよ。").is_empty());
        assert!(heads("「京都は広い」って本に書いてあった。").is_empty());
    }

    #[test]
    fn keywords_skip_conjugated_kanji() {
        let a = Analysis::new("絶対行くよ！スペース・マウンテンは最高だし、金閣寺も。");
        let k = find_keywords(&a, &FallbackAnalyzer);
        assert!(k.contains(&"スペース・マウンテン".to_string()), "{k:?}");
        assert!(k.contains(&"金閣寺".to_string()), "{k:?}");
        assert!(!k.iter().any(|w| w.contains('行')), "{k:?}");
    }
}
