//! Does a model's answer echo its own prompt instead of answering? One place for the LLM
//! judge (director) and the safety Layer 4 judge: a text field (reason, suggestion) that is a
//! known template placeholder (assets/llm/template_placeholders.txt), or a stretch of the
//! prompt's own answer instructions copied back, makes the reply unreadable.
//!
//! Compared after folding: NFKC, katakana → hiragana, lower case, whitespace and punctuation
//! removed — so 「短い理由」, "短い 理由。" and "(短い理由)" are the same copy.

use std::sync::OnceLock;

use crate::safety::fold::fold_str;

const PLACEHOLDERS: &str = include_str!("../../assets/llm/template_placeholders.txt");

/// A copied stretch of the instructions counts from this many folded chars (shorter ones are
/// ordinary words both may use).
const MIN_COPY_CHARS: usize = 6;

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
    if f.chars().count() >= MIN_COPY_CHARS && fold_for_echo(instructions).contains(&f) {
        return Some(format!("返答が指示文の「{trimmed}」を写しています"));
    }
    None
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
