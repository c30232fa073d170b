//! `prompt_echo` (issue 13 §4): a line that reads back the prompt that produced it — its persona,
//! section headers, Director guidance, owner instruction or reply guide — → RETRY. Measured as
//! char n-gram overlap with those instruction parts (the world, topic and partner's line are not
//! given to it: talking about them is the point). A run of `min_run` chars found verbatim, or
//! `min_coverage` of the line's n-grams, is an echo. Replaces a fixed list of markers for
//! everything the prompt says; `prompt_leak` keeps the chat-template tokens.

use std::collections::HashSet;

use super::super::finding::{Finding, RuleId, Status};
use super::super::messages;
use super::super::ruleset::PromptEchoRule;
use crate::text::Analysis;
use crate::text::normalize::normalize;

/// Chars that carry no wording: they neither start nor end a compared n-gram's meaning.
fn is_filler(c: char) -> bool {
    c.is_whitespace() || matches!(c, '・' | '-' | '－' | '―')
}

fn folded(text: &str) -> Vec<char> {
    normalize(text, &[])
        .text
        .chars()
        .filter(|c| !is_filler(*c))
        .collect()
}

/// Echo findings for a line against the instruction parts of its prompt.
pub fn check(a: &Analysis, rule: &PromptEchoRule, scaffold: &[String]) -> Vec<Finding> {
    let n = rule.ngram.max(2);
    // Original text (a script-format unwrap must not hide an echo), without spacing.
    let line = folded(&a.original);
    if line.len() < n || scaffold.is_empty() {
        return Vec::new();
    }
    let mut grams: HashSet<&[char]> = HashSet::new();
    let parts: Vec<Vec<char>> = scaffold.iter().map(|s| folded(s)).collect();
    for p in &parts {
        for w in p.windows(n) {
            grams.insert(w);
        }
    }
    let hit: Vec<bool> = line.windows(n).map(|w| grams.contains(w)).collect();
    let covered = hit.iter().filter(|&&h| h).count();
    // The longest stretch of consecutive matching n-grams: a common run of k + n - 1 chars.
    let (mut best, mut best_at, mut run) = (0usize, 0usize, 0usize);
    for (i, &h) in hit.iter().enumerate() {
        run = if h { run + 1 } else { 0 };
        if run > best {
            best = run;
            best_at = i + 1 - run;
        }
    }
    let run_chars = if best == 0 { 0 } else { best + n - 1 };
    let coverage = covered as f64 / hit.len() as f64;
    let echo =
        run_chars >= rule.min_run || (line.len() >= rule.min_run && coverage >= rule.min_coverage);
    if !echo {
        return Vec::new();
    }
    let shown: String = line[best_at..best_at + run_chars].iter().collect();
    let (m, s) = messages::prompt_echo(&shown);
    vec![
        Finding::new(RuleId::PromptEcho, Status::Retry, m, s).with_evidence(format!(
            "run {run_chars}, {}% of {n}-grams",
            (coverage * 100.0).round()
        )),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule() -> PromptEchoRule {
        PromptEchoRule::default()
    }

    fn scaffold() -> Vec<String> {
        vec![
            "【キャラクター設定】\nあなたは「やな」です。姉。明るく好奇心旺盛。".into(),
            "【ディレクターからの指示】".into(),
            "- あなたの前の発言（ターン3）への指摘: やならしい口調が弱めです。".into(),
            "次のやなの発言だけを書いてください。1〜3文、50〜80文字程度。".into(),
        ]
    }

    fn echo(text: &str) -> bool {
        !check(&Analysis::new(text), &rule(), &scaffold()).is_empty()
    }

    #[test]
    fn read_back_instructions_are_echoes() {
        for t in [
            "ディレクターからの指示は、口調を直すことだね！",
            "次のやなの発言だけを書いてください。",
            "わかった！ あなたは「やな」です。姉。明るく好奇心旺盛。",
            "やならしい口調が弱めです。",
        ] {
            assert!(echo(t), "{t}");
        }
    }

    #[test]
    fn ordinary_lines_are_not() {
        for t in [
            "わ！福引の列、すっごい長いね！",
            "やなの番だね。何を書こうかな？",
            "発言の前に深呼吸しよっか。",
            "うん",
        ] {
            assert!(!echo(t), "{t}");
        }
        assert!(
            check(
                &Analysis::new("次のやなの発言だけを書いてください。"),
                &rule(),
                &[]
            )
            .is_empty()
        );
    }
}
