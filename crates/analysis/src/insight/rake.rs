//! RAKE keywords (Rose et al. 2010) over segmented Japanese (seed 003 §8 step 3).
//!
//! - Candidate phrases are maximal runs of content morphemes: nouns (not pronouns, numbers,
//!   adverbial or dependent nouns) and prefixes, not in the stop-word list, not a single kana.
//!   Everything else — particles, auxiliaries, verbs, adjectives, symbols, punctuation — and
//!   every stop word splits. Words of a phrase are joined without spaces (Japanese).
//! - Word score = degree / frequency, where frequency counts the word's occurrences in
//!   candidate phrases and degree adds the length (in words) of each phrase it occurs in.
//! - Phrase score = the sum of its words' scores; a phrase keeps its occurrence count.
//! - Ranking: score, then count, then the phrase. With `min_count` > 1 (used when a scope has
//!   ≥ 5 conversations) a phrase said only once is left out, so rare long compounds — RAKE's
//!   known bias — do not crowd out the topics many people mention.

use std::collections::HashMap;

use serde::Serialize;

use crate::text::analyzer::{Analyzer, Morpheme, NounKind, Pos};

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Keyword {
    pub phrase: String,
    pub score: f64,
    pub count: usize,
}

/// Full-width ASCII → ASCII, latin lower-cased, then seed 001 §2 normalisation.
pub fn normalise(text: &str) -> String {
    let folded: String = text
        .chars()
        .map(|c| match c {
            '！'..='～' if c != '！' && c != '？' => {
                char::from_u32(c as u32 - 0xFEE0).unwrap_or(c)
            }
            c => c,
        })
        .flat_map(char::to_lowercase)
        .collect();
    crate::text::normalize::normalize(&folded, &[]).text
}

fn is_content(pos: Pos) -> bool {
    match pos {
        Pos::Noun(k) => !matches!(
            k,
            NounKind::Dependent | NounKind::Pronoun | NounKind::Number | NounKind::Adverbial
        ),
        Pos::Prefix => true,
        _ => false,
    }
}

fn is_single_kana(s: &str) -> bool {
    let mut c = s.chars();
    matches!((c.next(), c.next()), (Some(ch), None) if ('\u{3041}'..='\u{30FF}').contains(&ch))
}

fn starts_with_kanji(s: &str) -> bool {
    s.chars()
        .next()
        .is_some_and(|c| ('\u{4E00}'..='\u{9FFF}').contains(&c))
}

/// A stem, one kana and a kanji noun written together (洗 い 物, 買 い 物, 食べ 物 as the
/// dictionary-free fallback splits them) are one noun, as IPADIC has them.
fn join_stem_nouns(ms: Vec<Morpheme>) -> Vec<Morpheme> {
    let mut out: Vec<Morpheme> = Vec::with_capacity(ms.len());
    let mut i = 0;
    while i < ms.len() {
        if let (Some(a), Some(b), Some(c)) = (ms.get(i), ms.get(i + 1), ms.get(i + 2))
            && matches!(a.pos, Pos::Conjugating | Pos::Verb)
            && starts_with_kanji(&a.surface)
            && b.surface.chars().count() == 1
            && is_single_kana(&b.surface)
            && matches!(c.pos, Pos::Noun(_))
            && starts_with_kanji(&c.surface)
            && a.end == b.start
            && b.end == c.start
        {
            out.push(Morpheme {
                start: a.start,
                end: c.end,
                surface: format!("{}{}{}", a.surface, b.surface, c.surface),
                pos: Pos::Noun(NounKind::General),
                lemma: None,
            });
            i += 3;
            continue;
        }
        out.push(ms[i].clone());
        i += 1;
    }
    out
}

/// The candidate phrases of one message (each a list of words).
pub fn candidates(
    analyzer: &dyn Analyzer,
    text: &str,
    stop: &std::collections::HashSet<String>,
) -> Vec<Vec<String>> {
    let norm = normalise(text);
    let mut out = Vec::new();
    let mut cur: Vec<String> = Vec::new();
    for m in join_stem_nouns(analyzer.tokenize(&norm)) {
        let w = m.surface.trim();
        let keep = !w.is_empty()
            && is_content(m.pos)
            && !stop.contains(w)
            && !is_single_kana(w)
            && w.chars().any(char::is_alphanumeric);
        if keep {
            cur.push(w.to_string());
        } else if !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    // A lone character (物, 合) is never a topic.
    out.retain(|p| p.concat().chars().count() > 1);
    out
}

/// RAKE scores of the given candidate phrases (the pure core).
pub fn score(phrases: &[Vec<String>], min_count: usize) -> Vec<Keyword> {
    let mut freq: HashMap<&str, f64> = HashMap::new();
    let mut deg: HashMap<&str, f64> = HashMap::new();
    for p in phrases {
        for w in p {
            *freq.entry(w).or_default() += 1.0;
            *deg.entry(w).or_default() += p.len() as f64;
        }
    }
    let mut seen: HashMap<String, Keyword> = HashMap::new();
    for p in phrases {
        let phrase = p.concat();
        let e = seen.entry(phrase.clone()).or_insert_with(|| Keyword {
            phrase,
            score: p.iter().map(|w| deg[w.as_str()] / freq[w.as_str()]).sum(),
            count: 0,
        });
        e.count += 1;
    }
    let mut v: Vec<Keyword> = seen
        .into_values()
        .filter(|k| k.count >= min_count)
        .collect();
    v.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then(b.count.cmp(&a.count))
            .then(a.phrase.cmp(&b.phrase))
    });
    v
}

/// Keywords of a set of messages: segmented, split, scored; the best `top`.
pub fn keywords(
    analyzer: &dyn Analyzer,
    messages: &[String],
    min_count: usize,
    top: usize,
) -> Vec<Keyword> {
    let stop = super::stopwords::japanese();
    let phrases: Vec<Vec<String>> = messages
        .iter()
        .flat_map(|m| candidates(analyzer, m, stop))
        .collect();
    let mut v = score(&phrases, min_count);
    v.truncate(top);
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    /// Phrases: [献立 作成] [献立] [買い物 リスト 作成] [買い物].
    /// freq: 献立 2, 作成 2, 買い物 2, リスト 1.
    /// deg: 献立 2+1 = 3, 作成 2+3 = 5, 買い物 3+1 = 4, リスト 3.
    /// word scores: 献立 1.5, 作成 2.5, 買い物 2.0, リスト 3.0.
    /// phrases: 買い物リスト作成 2+3+2.5 = 7.5, 献立作成 1.5+2.5 = 4.0, 買い物 2.0, 献立 1.5.
    #[test]
    fn scores_match_a_hand_computed_example() {
        let phrases = vec![
            p(&["献立", "作成"]),
            p(&["献立"]),
            p(&["買い物", "リスト", "作成"]),
            p(&["買い物"]),
        ];
        let k = score(&phrases, 1);
        let got: Vec<(&str, f64)> = k.iter().map(|k| (k.phrase.as_str(), k.score)).collect();
        assert_eq!(
            got,
            vec![
                ("買い物リスト作成", 7.5),
                ("献立作成", 4.0),
                ("買い物", 2.0),
                ("献立", 1.5)
            ]
        );
        assert!(score(&phrases, 2).is_empty(), "every phrase occurs once");
    }

    #[test]
    fn repeated_phrases_count_and_keep_their_score() {
        // Property: a phrase repeated n times keeps score len(phrase) when alone.
        for n in 1..6 {
            let phrases: Vec<Vec<String>> = (0..n).map(|_| p(&["冷蔵庫", "整理"])).collect();
            let k = score(&phrases, 1);
            assert_eq!(k.len(), 1);
            assert_eq!((k[0].score, k[0].count), (4.0, n));
        }
    }

    #[test]
    fn particles_verbs_and_stop_words_split_candidates() {
        let an = crate::text::analyzer::fallback::FallbackAnalyzer;
        let stop = super::super::stopwords::japanese();
        let c = candidates(&an, "冷蔵庫の野菜を使い切ることが難しいです。", stop);
        let flat: Vec<String> = c.iter().map(|p| p.concat()).collect();
        assert!(flat.contains(&"冷蔵庫".to_string()), "{flat:?}");
        assert!(flat.contains(&"野菜".to_string()), "{flat:?}");
        assert!(
            !flat.iter().any(|f| f.contains('の') || f == "こと"),
            "{flat:?}"
        );
        let c = candidates(&an, "洗い物と買い物が面倒です", stop);
        let flat: Vec<String> = c.iter().map(|p| p.concat()).collect();
        assert!(
            flat.contains(&"洗い物".to_string()) && flat.contains(&"買い物".to_string()),
            "{flat:?}"
        );
    }
}
