//! `contradiction` (seed 001 §3 論理矛盾): a double negation whose meaning flips, e.g.
//! まだ未成年じゃない — an adverb of continuation, a word with a negating prefix, then a negation
//! → RETRY. A question or confirmation after it (まだ未成年じゃない？, …じゃないよね) is natural and
//! passes — only when that tail ends the sentence: …じゃないから、 is a statement, not a か.

use super::super::finding::{Finding, RuleId, Status};
use super::super::lexicon::Cat;
use super::super::{Input, messages};
use super::{at, hits, is_soft_tail, sentence_index};
use crate::text::chars::is_kanji;

pub fn check(input: &Input) -> Vec<Finding> {
    let r = &input.rules.contradiction;
    let a = input.a;
    let mut out = Vec::new();
    for adv in hits(input, Cat::ContraAdverb) {
        let Some(si) = sentence_index(input, adv.start) else {
            continue;
        };
        let sentence = a.sentences[si];
        let negation = hits(input, Cat::ContraNegation).find(|n| {
            n.start >= adv.end
                && n.end <= sentence.body_end.max(sentence.end)
                && n.start - adv.end <= r.within
        });
        let Some(neg) = negation else { continue };
        // A kanji word beginning with a negating prefix between the two.
        let prefixed = (adv.end..neg.start).any(|i| {
            let c = a.chars[i];
            r.negating_prefixes.iter().any(|p| p.starts_with(c))
                && (i == adv.end || !is_kanji(a.chars[i - 1]))
                && a.chars.get(i + 1).is_some_and(|&n| is_kanji(n))
        });
        if !prefixed {
            continue;
        }
        let question = sentence.terminator == Some('？')
            || r.question_tails.iter().any(|q| {
                let n = q.chars().count();
                neg.end + n <= sentence.body_end
                    && a.norm.slice(neg.end, neg.end + n) == q.as_str()
                    && (neg.end + n..sentence.body_end)
                        .all(|i| is_final_particle(a.chars[i]) || a.norm.masked[i])
            });
        if question {
            continue;
        }
        let phrase = a.norm.slice(adv.start, neg.end).to_string();
        let (m, s) = messages::contradiction(&phrase);
        out.push(
            at(
                input,
                Finding::new(RuleId::Contradiction, Status::Retry, m, s),
                adv.start,
                neg.end,
            )
            .with_evidence(phrase),
        );
    }
    out
}

/// 終助詞 and softeners that may follow a question or confirmation tail (じゃないのかな, じゃないよね).
fn is_final_particle(c: char) -> bool {
    is_soft_tail(c) || matches!(c, 'か' | 'の' | 'さ' | 'わ' | 'ぞ' | 'ぜ' | 'あ')
}
