//! The meaning half of `setting` (issue 26 §2): a verb of living (住む, 暮らす — by the
//! analyzer's lemma, so in any inflection) with a cue of living apart (別々, 離れて, 一人で …)
//! before it in the same clause, or a cue of living together with the verb negated
//! (一緒に住んでない). Pure: the analysis, the analyzer and the rule data in, char spans out.
//!
//! With lindera the verb is found by its dictionary form and the clause by parts of speech (no
//! verb, adjective or auxiliary between cue and verb). The fallback analyzer has neither: it
//! matches a kanji stem followed by the kana an inflection starts with (住+ん, 暮ら+し), and
//! only the `gap_breaks` strings end the clause — so it misses kana-only verbs (すんでる) and
//! may fire across a relative clause the strings do not catch.

use serde::{Deserialize, Serialize};

use crate::text::Analysis;
use crate::text::analyzer::Morpheme;
use crate::text::analyzer::{Analyzer, AnalyzerKind, Pos};
use crate::text::chars::is_terminator;

/// Char spans (cue start, verb end) of every match, in text order.
pub fn find(a: &Analysis, an: &dyn Analyzer, r: &LivingRule) -> Vec<(usize, usize)> {
    let text = a.text();
    let present = |list: &[String]| {
        list.iter()
            .any(|c| !c.is_empty() && text.contains(c.as_str()))
    };
    // Tokenising is the slow part: only lines holding a cue get that far.
    if !present(&r.apart_cues) && !present(&r.together_cues) {
        return Vec::new();
    }
    let has_pos = an.kind() != AnalyzerKind::Fallback;
    let morphemes = if has_pos { a.morphemes(an) } else { &[] };
    let mut out = Vec::new();
    for (vs, ve) in verbs(a, morphemes, has_pos, r) {
        let cues = if negated(a, r, ve) {
            &r.together_cues
        } else {
            &r.apart_cues
        };
        if let Some(cs) = cue_before(a, morphemes, r, cues, vs) {
            out.push((cs, ve));
        }
    }
    out
}

/// Spans of the verbs of living: by lemma, or (fallback) by stem + okurigana.
fn verbs(a: &Analysis, ms: &[Morpheme], has_pos: bool, r: &LivingRule) -> Vec<(usize, usize)> {
    if has_pos {
        return ms
            .iter()
            .filter(|m| {
                m.pos == Pos::Verb && m.lemma.as_ref().is_some_and(|l| r.lemmas.contains(l))
            })
            .map(|m| (m.start, m.end))
            .collect();
    }
    let mut out: Vec<(usize, usize)> = Vec::new();
    for s in r.stems.iter().filter(|s| !s.stem.is_empty()) {
        for (start, end) in a.find_all(&s.stem) {
            if a.chars.get(end).is_some_and(|c| s.okurigana.contains(*c)) {
                out.push((start, end + 1));
            }
        }
    }
    out.sort_unstable();
    out
}

/// True when a negation follows the verb before its clause ends (住んでない, 暮らしていません).
fn negated(a: &Analysis, r: &LivingRule, from: usize) -> bool {
    const MAX_TAIL: usize = 16;
    let chars = &a.chars;
    let mut tail = String::new();
    let mut i = from;
    while i < chars.len() && i - from < MAX_TAIL {
        let c = chars[i];
        if c == '\n' || is_terminator(c) || starts_with_any(chars, i, &r.clause_ends) {
            break;
        }
        tail.push(c);
        i += 1;
    }
    r.negations
        .iter()
        .any(|n| !n.is_empty() && tail.contains(n.as_str()))
}

/// Where the nearest cue before the verb at `vs` starts, when only a short, predicate-free
/// gap lies between them.
fn cue_before(
    a: &Analysis,
    ms: &[Morpheme],
    r: &LivingRule,
    cues: &[String],
    vs: usize,
) -> Option<usize> {
    let mut best: Option<(usize, usize)> = None;
    for c in cues.iter().filter(|c| !c.is_empty()) {
        for (cs, ce) in a.find_all(c) {
            if ce <= vs && vs - ce <= r.max_gap && best.is_none_or(|(_, e)| ce > e) {
                best = Some((cs, ce));
            }
        }
    }
    let (cs, ce) = best?;
    let gap = &a.chars[ce..vs];
    if gap.iter().any(|&c| c == '\n' || is_terminator(c)) {
        return None;
    }
    if (ce..vs).any(|i| starts_with_any(&a.chars[..vs], i, &r.gap_breaks)) {
        return None;
    }
    let predicate = ms.iter().any(|m| {
        m.start >= ce
            && m.end <= vs
            && matches!(m.pos, Pos::Verb | Pos::Adjective | Pos::AuxVerb)
            // The copula's で after a noun cue (別々で住む) works as a particle.
            && m.surface != "で"
    });
    (!predicate).then_some(cs)
}

fn starts_with_any(chars: &[char], i: usize, list: &[String]) -> bool {
    list.iter().any(|s| {
        let n = s.chars().count();
        n > 0 && chars.len() >= i + n && chars[i..i + n].iter().copied().eq(s.chars())
    })
}

/// `setting` by meaning: a verb of living with a cue of living apart in the same clause.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LivingRule {
    /// Dictionary forms of the verbs (住む, 暮らす), matched on the analyzer's lemmas.
    pub lemmas: Vec<String>,
    /// For the fallback analyzer, which has no lemmas: stem + first kana of an inflection.
    pub stems: Vec<VerbStem>,
    pub apart_cues: Vec<String>,
    /// Cues that break the setting only with the verb negated (一緒に住んでない).
    pub together_cues: Vec<String>,
    pub negations: Vec<String>,
    pub clause_ends: Vec<String>,
    pub max_gap: usize,
    pub gap_breaks: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VerbStem {
    pub stem: String,
    /// The kana an inflection may start with right after the stem.
    pub okurigana: String,
}
