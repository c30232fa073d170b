//! `setting` (seed 001 §3 設定整合性): expressions implying the sisters live apart → RETRY.
//! Listed phrases (一人暮らし, 別居, あゆの家 …) fire as strings; living apart said any other
//! way (別々に住んでる, 離れて暮らしていました, 一緒に住んでない) is found by meaning in `living`.

use super::super::finding::{Finding, RuleId, Status};
use super::super::lexicon::Cat;
use super::super::{Input, messages};
use super::{at, hits, living};

pub fn check(input: &Input) -> Vec<Finding> {
    let mut spans: Vec<(usize, usize)> = hits(input, Cat::Setting)
        .map(|h| (h.start, h.end))
        .collect();
    for (s, e) in living::find(input.a, input.analyzer, &input.rules.setting.living) {
        // A listed phrase already reported there (一人暮らし) is not reported twice.
        if !spans.iter().any(|&(ps, pe)| ps < e && s < pe) {
            spans.push((s, e));
        }
    }
    spans
        .into_iter()
        .map(|(s, e)| {
            let phrase = input.a.norm.slice(s, e);
            let (m, sug) = messages::setting(phrase);
            at(
                input,
                Finding::new(RuleId::Setting, Status::Retry, m, sug),
                s,
                e,
            )
            .with_evidence(phrase)
        })
        .collect()
}
