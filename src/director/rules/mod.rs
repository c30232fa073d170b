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

/// True when a tone ending counts (seed 001 §4.2): at its sentence's end, or followed (after
/// optional softeners) by a quotative/conjunctive particle from `tone_endings.followers` that
/// itself ends a word — 雨かなって思った counts, 静かなところ and じゃんけん do not.
pub(crate) fn ends_phrase(input: &Input, h: Hit, pattern: &str) -> bool {
    if is_sentence_final(input, h, pattern) {
        return true;
    }
    let last = pattern.chars().last();
    if last.is_some_and(crate::text::chars::is_terminator) {
        return false;
    }
    let chars = &input.a.chars;
    let follows_at = |i: usize| {
        let rest = &chars[i..];
        input.rules.tone_endings.followers.iter().any(|f| {
            let n = f.chars().count();
            n > 0
                && rest.len() >= n
                && rest.iter().take(n).copied().eq(f.chars())
                && rest
                    .get(n)
                    .is_none_or(|&c| !crate::text::chars::is_hiragana(c))
        })
    };
    // The particle may come right after the ending or after softeners (かなーって); っ is
    // both a softener and the start of って, so every position of the run is tried.
    let mut i = h.end;
    loop {
        if i < chars.len() && follows_at(i) {
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
