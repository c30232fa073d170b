//! Does a model's answer echo its own prompt instead of answering? One place for the LLM
//! judge (director) and the safety Layer 4 judge: a text field (reason, suggestion) that is a
//! known template placeholder (assets/llm/template_placeholders.txt), or any substantial copy
//! of the judge's own prompt text (char n-gram overlap with its fixed parts: a stretch of
//! `MIN_RUN_CHARS` or more, or most of the field), makes the reply unreadable.
//!
//! Compared after folding: NFKC, katakana → hiragana, lower case, whitespace and punctuation
//! removed — so 「短い理由」, "短い 理由。" and "(短い理由)" are the same copy.

use std::sync::OnceLock;

use super::fold::fold_str;

const PLACEHOLDERS: &str = include_str!("../../../../assets/llm/template_placeholders.txt");

/// A copied stretch of the instructions counts from this many folded chars (shorter ones are
/// ordinary words both may use).
const MIN_COPY_CHARS: usize = 6;

/// Char n-gram size for the overlap measure (folded chars).
const NGRAM: usize = 4;
/// A stretch of consecutive shared n-grams this long (folded chars) is a copy, whatever
/// surrounds it: 「それぞれ上の観点の点数、1〜5の整数」 copied inside a longer reason.
pub const MIN_RUN_CHARS: usize = 10;
/// Or this share of a field's n-grams found in the prompt (fields of `MIN_RUN_CHARS` or more).
const MIN_COVERAGE: f64 = 0.6;

/// The folded form compared: no whitespace, no punctuation or brackets.
pub fn fold_for_echo(s: &str) -> String {
    fold_str(s)
        .chars()
        .filter(|c| !c.is_whitespace() && !c.is_ascii_punctuation() && !is_ja_punct(*c))
        .collect()
}

fn is_ja_punct(c: char) -> bool {
    matches!(
        c,
        '、' | '。'
            | '「'
            | '」'
            | '『'
            | '』'
            | '（'
            | '）'
            | '【'
            | '】'
            | '・'
            | '〜'
            | '～'
            | '！'
            | '？'
            | '：'
            | '，'
            | '．'
    )
}

fn placeholders() -> &'static [String] {
    static LIST: OnceLock<Vec<String>> = OnceLock::new();
    LIST.get_or_init(|| {
        PLACEHOLDERS
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .map(|l| {
                let f = fold_for_echo(l);
                // "…" / "..." fold to nothing but punctuation: keep them literally.
                if f.is_empty() { l.to_string() } else { f }
            })
            .collect()
    })
}

/// Why `field` is a copy of the template rather than an answer, if it is. `instructions` is
/// the part of the prompt that describes the answer (what a lazy model copies from).
pub fn template_echo(field: &str, instructions: &str) -> Option<String> {
    let trimmed = field.trim();
    if trimmed.is_empty() {
        return None;
    }
    let f = fold_for_echo(trimmed);
    if placeholders()
        .iter()
        .any(|p| *p == f || (f.is_empty() && p == trimmed))
    {
        return Some(format!("返答がテンプレートの「{trimmed}」を写しています"));
    }
    let prompt = fold_for_echo(instructions);
    if f.chars().count() >= MIN_COPY_CHARS && prompt.contains(&f) {
        return Some(format!("返答が指示文の「{trimmed}」を写しています"));
    }
    let (run, coverage) = overlap(&f, &prompt);
    if run.chars().count() >= MIN_RUN_CHARS
        || (f.chars().count() >= MIN_RUN_CHARS && coverage >= MIN_COVERAGE)
    {
        return Some(format!(
            "返答が指示文の「{run}」を写しています（{}%が指示文と同じ）",
            (coverage * 100.0).round()
        ));
    }
    None
}

/// The longest stretch of `field` found verbatim in `prompt` (both folded; a true common
/// substring, not stitched fragments), and the share of the field's n-grams found in `prompt`.
fn overlap(field: &str, prompt: &str) -> (String, f64) {
    let line: Vec<char> = field.chars().collect();
    let src: Vec<char> = prompt.chars().collect();
    if line.len() < NGRAM || src.len() < NGRAM {
        return (String::new(), 0.0);
    }
    // Longest common substring, one DP row at a time (fields are short, prompts ~1–2k chars).
    let (mut best, mut best_end) = (0usize, 0usize);
    let mut prev = vec![0usize; src.len() + 1];
    let mut cur = vec![0usize; src.len() + 1];
    for (i, a) in line.iter().enumerate() {
        for (j, b) in src.iter().enumerate() {
            cur[j + 1] = if a == b { prev[j] + 1 } else { 0 };
            if cur[j + 1] > best {
                best = cur[j + 1];
                best_end = i + 1;
            }
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    let grams: std::collections::HashSet<&[char]> = src.windows(NGRAM).collect();
    let windows = line.windows(NGRAM);
    let total = windows.len();
    let covered = windows.filter(|w| grams.contains(w)).count();
    (
        line[best_end - best..best_end].iter().collect(),
        covered as f64 / total as f64,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const INSTR: &str = "reason には、そう判定した理由を一文で書いてください。";

    #[test]
    fn placeholders_in_any_spelling_are_echoes() {
        for s in [
            "短い理由",
            " 短い理由。",
            "「短い理由」",
            "改善案（問題がなければ空文字）",
            "改善案(問題がなければ空文字)",
            "Reason",
            "…",
            "...",
        ] {
            assert!(template_echo(s, "").is_some(), "{s}");
        }
    }

    #[test]
    fn copied_instructions_are_echoes_and_answers_are_not() {
        assert!(template_echo("そう判定した理由を一文で書いてください", INSTR).is_some());
        assert!(template_echo("そう判定した理由", INSTR).is_some());
        for s in [
            "",
            "相手を脅す言い方で、冗談の合図がない",
            "理由は特にない冗談",
            "天気を尋ねているだけ",
            // Shares a short run with the instructions, too short to be a copy.
            "一文",
        ] {
            assert!(template_echo(s, INSTR).is_none(), "{s}");
        }
    }
}
