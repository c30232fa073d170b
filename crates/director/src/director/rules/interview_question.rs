//! `interview_question` (issue 12 §1): an interviewer's reply asks at most one question and is
//! at most `max_chars` characters long. Data: assets/rules/interview.toml. Not part of
//! `run_all`: only interview replies are checked, with [`check`] after the usual judgment.

use std::sync::OnceLock;

use serde::Deserialize;

use super::super::finding::{Finding, RuleId, Status, Verdict};

const DATA: &str = include_str!("../../../../../assets/rules/interview.toml");

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InterviewRule {
    pub max_chars: usize,
    pub max_questions: usize,
    pub question_endings: Vec<String>,
    too_long: String,
    too_long_fix: String,
    many_questions: String,
    many_questions_fix: String,
}

pub fn data() -> &'static InterviewRule {
    static D: OnceLock<InterviewRule> = OnceLock::new();
    D.get_or_init(|| toml::from_str(DATA).expect("assets/rules/interview.toml parses"))
}

/// Questions in `text`: sentences ending in ？/? (a run of them counts once), or in a
/// question ending (ですか。) without a mark.
pub fn count_questions(text: &str, r: &InterviewRule) -> usize {
    let mut n = 0;
    let mut sentence = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if matches!(c, '？' | '?') {
            n += 1;
            while chars
                .peek()
                .is_some_and(|c| matches!(c, '？' | '?' | '！' | '!'))
            {
                chars.next();
            }
            sentence.clear();
        } else if matches!(c, '。' | '！' | '!' | '\n') {
            let s = sentence.trim_end();
            if r.question_endings.iter().any(|e| s.ends_with(e.as_str())) {
                n += 1;
            }
            sentence.clear();
        } else {
            sentence.push(c);
        }
    }
    let s = sentence.trim_end();
    if !s.is_empty() && r.question_endings.iter().any(|e| s.ends_with(e.as_str())) {
        n += 1;
    }
    n
}

pub fn check(text: &str) -> Vec<Finding> {
    let r = data();
    let mut out = Vec::new();
    let len = text.chars().count();
    let fill = |t: &str, n: usize| {
        t.replace("{n}", &n.to_string())
            .replace("{max}", &r.max_chars.to_string())
    };
    if len > r.max_chars {
        out.push(
            Finding::new(
                RuleId::InterviewQuestion,
                Status::Retry,
                fill(&r.too_long, len),
                fill(&r.too_long_fix, len),
            )
            .with_evidence(len.to_string()),
        );
    }
    let q = count_questions(text, r);
    if q > r.max_questions {
        out.push(
            Finding::new(
                RuleId::InterviewQuestion,
                Status::Retry,
                fill(&r.many_questions, q),
                fill(&r.many_questions_fix, q),
            )
            .with_evidence(q.to_string()),
        );
    }
    out
}

/// Adds the rule's findings to a verdict made by `director::judge` and recomputes its status.
pub fn apply(text: &str, v: &mut Verdict) {
    v.findings.retain(|f| f.rule != RuleId::InterviewQuestion);
    v.findings.extend(check(text));
    v.status = Verdict::status_of(&v.findings);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_question_passes_two_fail_and_length_is_capped() {
        let r = data();
        for (t, n) in [
            ("どんな時に困りますか？", 1),
            ("なるほど。どんな時に困りますか？？", 1),
            ("いつですか？誰とですか？", 2),
            ("いつ作りますか。誰と食べますか。", 2),
            ("ありがとうございます。", 0),
        ] {
            assert_eq!(count_questions(t, r), n, "{t}");
            assert_eq!(check(t).is_empty(), n <= 1, "{t}");
        }
        let long = "あ".repeat(r.max_chars) + "？";
        assert_eq!(check(&long).len(), 1);
        assert!(check(&"あ".repeat(r.max_chars)).is_empty());
    }
}
