//! `prompt_leak`: prompt scaffolding echoed in a line (section markers, chat-template tokens,
//! Director notes, a speaker label opening a line) → RETRY.

use super::super::finding::{Finding, RuleId, Status};
use super::super::lexicon::Cat;
use super::super::{Input, messages};
use super::{at, hits, pattern};

pub fn check(input: &Input) -> Vec<Finding> {
    let mut out = Vec::new();
    for h in hits(input, Cat::Leak) {
        let marker = pattern(input, h);
        let (m, s) = messages::prompt_leak(marker.trim());
        out.push(
            at(
                input,
                Finding::new(RuleId::PromptLeak, Status::Retry, m, s),
                h.start,
                h.end,
            )
            .with_evidence(marker.trim()),
        );
    }
    let chars = &input.a.chars;
    for h in hits(input, Cat::SpeakerLabel) {
        // Only at the start of a line (after optional spaces).
        let line_start = chars[..h.start]
            .iter()
            .rev()
            .take_while(|&&c| c != '\n')
            .all(|c| c.is_whitespace());
        if line_start {
            let label = pattern(input, h);
            let (m, s) = messages::speaker_label(label);
            out.push(
                at(
                    input,
                    Finding::new(RuleId::PromptLeak, Status::Retry, m, s),
                    h.start,
                    h.end,
                )
                .with_evidence(label),
            );
        }
    }
    out
}
