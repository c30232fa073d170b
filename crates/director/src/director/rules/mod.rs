//! The static rules, one file each, and the order they run in. Each rule is a pure function
//! `fn(&Input) -> Vec<Finding>` over the cached analysis and the lexicon hits.

pub mod contradiction;
pub mod early_topic_shift;
pub mod forbidden_word;
pub mod interview_question;
pub mod language;
pub mod lines;
pub mod living;
pub mod praise;
pub mod prompt_echo;
pub mod prompt_leak;
pub mod scatter;
pub mod setting;
pub mod tone;
pub mod topic_loop;

use super::finding::{Finding, RuleId, Status, ToneScore};
use super::lexicon::{Cat, Hit};
use super::{Input, messages};
use crate::text::sentences::Sentence;

/// Runs every rule; returns findings (PASS ones dropped), the tone score and the topic count.
pub fn run_all(input: &Input) -> (Vec<Finding>, ToneScore, usize) {
    let a = input.a;
    let mut out = Vec::new();
    if a.is_empty() {
        let (m, s) = messages::empty();
        out.push(Finding::new(RuleId::Empty, Status::Retry, m, s));
        return (out, ToneScore::default(), 0);
    }
    if a.script_format {
        let (m, s) = messages::script_format();
        out.push(Finding::new(RuleId::ScriptFormat, Status::Info, m, s));
    }
    out.extend(language::check(input));
    out.extend(lines::check(input));
    out.extend(setting::check(input));
    out.extend(praise::check(input));
    let (scatter, topics) = scatter::check(input);
    out.extend(scatter);
    out.extend(contradiction::check(input));
    let (tone_findings, tone) = tone::check(input);
    out.extend(tone_findings);
    out.extend(forbidden_word::check(input));
    out.extend(prompt_leak::check(input));
    // Seed §8 checks need the conversation so far.
    if !input.context.is_empty() {
        out.extend(topic_loop::check(input));
        out.extend(early_topic_shift::check(input));
    }
    out.retain(|f| f.status != Status::Pass);
    (out, tone, topics)
}

/// Runs one rule, as `run_all` would (PASS findings dropped). For re-judging after an edit
/// that only concerns that rule. Returns its findings and, for `tone`, the new tone score.
pub fn run_one(input: &Input, rule: RuleId) -> (Vec<Finding>, Option<ToneScore>) {
    if input.a.is_empty() {
        return (Vec::new(), None);
    }
    let with_context = !input.context.is_empty();
    let (mut out, tone) = match rule {
        RuleId::Language => (language::check(input), None),
        RuleId::Lines => (lines::check(input), None),
        RuleId::Setting => (setting::check(input), None),
        RuleId::Praise => (praise::check(input), None),
        RuleId::Scatter => (scatter::check(input).0, None),
        RuleId::Contradiction => (contradiction::check(input), None),
        RuleId::Tone => {
            let (f, t) = tone::check(input);
            (f, Some(t))
        }
        RuleId::ForbiddenWord => (forbidden_word::check(input), None),
        RuleId::PromptLeak => (prompt_leak::check(input), None),
        RuleId::TopicLoop if with_context => (topic_loop::check(input), None),
        RuleId::EarlyTopicShift if with_context => (early_topic_shift::check(input), None),
        _ => (Vec::new(), None),
    };
    out.retain(|f| f.status != Status::Pass);
    (out, tone)
}

/// Hits of one category.
pub(crate) fn hits(input: &Input, cat: Cat) -> impl Iterator<Item = Hit> {
    input.hits.iter().copied().filter(move |h| h.cat == cat)
}

/// Hits of one category outside quotes and parentheses.
pub(crate) fn visible_hits(input: &Input, cat: Cat) -> impl Iterator<Item = Hit> {
    hits(input, cat).filter(move |h| !input.a.norm.any_masked(h.start, h.end))
}

/// Index of the sentence containing char `pos`.
pub(crate) fn sentence_index(input: &Input, pos: usize) -> Option<usize> {
    let s = &input.a.sentences;
    let i = s.partition_point(|x| x.end <= pos);
    s.get(i).filter(|x| x.start <= pos).map(|_| i)
}

/// Chars that may trail a sentence-final ending: 終助詞-like softeners and elongations.
pub(crate) fn is_soft_tail(c: char) -> bool {
    matches!(
        c,
        'ね' | 'よ'
            | 'な'
            | 'あ'
            | 'ー'
            | '〜'
            | '～'
            | 'ぇ'
            | 'ぁ'
            | 'っ'
            | '…'
            | '‥'
            | '♪'
            | 'ん'
            | ' '
    )
}

/// True when the hit sits at the end of its sentence (seed 001 §4.2 語尾). A pattern ending in
/// ！/？ must end exactly on the sentence's terminator; otherwise only softeners (ね, よ, ー…) and
/// quoted material may stand between the hit and the terminator.
pub(crate) fn is_sentence_final(input: &Input, h: Hit, pattern: &str) -> bool {
    let a = input.a;
    let Some(si) = sentence_index(input, h.start) else {
        return false;
    };
    let s: &Sentence = &a.sentences[si];
    let last = pattern.chars().last();
    if let Some(t) = last.filter(|c| crate::text::chars::is_terminator(*c)) {
        return h.end == s.body_end + 1 && s.terminator == Some(t);
    }
    if h.end > s.body_end {
        return false;
    }
    (h.end..s.body_end).all(|i| is_soft_tail(a.chars[i]) || a.norm.masked[i])
}

/// True when a tone ending counts (seed 001 §4.2: the normalised body contains it, anywhere,
/// as an ending). With an analyzer that knows words, an ending that starts and ends on word
/// boundaries counts wherever it is (よね、笑。 ; 静かな and かなり do not). Without one — and
/// as well, with one — `counts_without_words` decides from the text around it.
pub(crate) fn ends_phrase(input: &Input, h: Hit, pattern: &str) -> bool {
    counts_without_words(input, h, pattern, 0) || on_word_boundaries(input, h)
}

fn on_word_boundaries(input: &Input, h: Hit) -> bool {
    use crate::text::AnalyzerKind;
    if input.analyzer.kind() == AnalyzerKind::Fallback {
        return false;
    }
    let ms = input.a.morphemes(input.analyzer);
    let starts = ms.binary_search_by_key(&h.start, |m| m.start).is_ok();
    let ends = h.end >= input.a.chars.len() || ms.iter().any(|m| m.end == h.end);
    starts && ends
}

/// The ending at its sentence's end, or followed (after optional softeners) by a
/// `tone_endings` follower or question mark that ends a word, or by another ending that counts
/// (ましたでしょうか). `depth` bounds the chain.
fn counts_without_words(input: &Input, h: Hit, pattern: &str, depth: u8) -> bool {
    use crate::text::chars::{is_hiragana, is_terminator};
    if is_sentence_final(input, h, pattern) {
        return true;
    }
    if pattern.chars().last().is_some_and(is_terminator) {
        return false;
    }
    let chars = &input.a.chars;
    let te = &input.rules.tone_endings;
    // A word ends at `j` when only softeners stand before a non-hiragana char or the end.
    let word_ends = |mut j: usize| {
        while j < chars.len() && is_soft_tail(chars[j]) && chars[j] != ' ' {
            j += 1;
        }
        chars.get(j).is_none_or(|&c| !is_hiragana(c))
    };
    let at = |i: usize, list: &[String]| {
        list.iter().any(|f| {
            let n = f.chars().count();
            n > 0
                && chars.len() >= i + n
                && chars[i..i + n].iter().copied().eq(f.chars())
                // A comma ends the word by itself; a particle must (けど, not けどう…).
                && (!f.chars().last().is_some_and(is_hiragana) || word_ends(i + n))
        })
    };
    let endings = &input.character.tone.endings;
    let chained = |i: usize| {
        depth < 3
            && visible_hits(input, Cat::ToneEnding)
                .filter(|n| n.start == i)
                .any(|n| {
                    endings
                        .get(n.idx as usize)
                        .is_some_and(|p| counts_without_words(input, n, p, depth + 1))
                })
    };
    let question_ok = !pattern.contains('か');
    // っ is both a softener and the start of って: every position of the run is tried.
    let mut i = h.end;
    loop {
        if i < chars.len()
            && (at(i, &te.followers) || (question_ok && at(i, &te.question_marks)) || chained(i))
        {
            return true;
        }
        if i < chars.len() && is_soft_tail(chars[i]) && chars[i] != ' ' {
            i += 1;
        } else {
            return false;
        }
    }
}

/// The pattern text of a hit.
pub(crate) fn pattern<'a>(input: &'a Input, h: Hit) -> &'a str {
    input.a.norm.slice(h.start, h.end)
}

/// A finding with its span mapped to the original text.
pub(crate) fn at(input: &Input, f: Finding, start: usize, end: usize) -> Finding {
    f.with_span(Some(input.a.span(start, end)))
}
