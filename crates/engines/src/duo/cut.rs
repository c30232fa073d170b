//! A reply the token limit cut (finish_reason "length", Ollama done_reason "length") is never
//! committed as if it were whole: it is trimmed back to its last complete sentence with a WARN
//! finding, or — when no sentence was finished — rejected with a RETRY finding.

use crate::director::{Finding, RuleId, Status};

/// How a token-limit cut was handled, kept on the attempt's statistics.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LengthCut {
    /// The unfinished tail that was dropped (empty when nothing could be kept).
    pub dropped: String,
    /// Characters kept.
    pub kept: usize,
}

/// Closing brackets and quotes that still belong to a sentence after its end mark.
const CLOSERS: &str = "」』）)】〉》\"'”’";

/// `text` cut back to the end of its last complete sentence (an end mark from `enders`, or
/// ASCII `!`/`?`, plus any closing brackets right after it). Returns (kept, dropped tail).
pub fn to_last_sentence(text: &str, enders: &str) -> (String, String) {
    let chars: Vec<char> = text.chars().collect();
    let is_end = |c: char| enders.contains(c) || c == '!' || c == '?';
    let Some(mut end) = chars.iter().rposition(|&c| is_end(c)) else {
        return (String::new(), text.to_string());
    };
    while chars.get(end + 1).is_some_and(|c| CLOSERS.contains(*c)) {
        end += 1;
    }
    let kept: String = chars[..=end].iter().collect();
    let dropped: String = chars[end + 1..].iter().collect();
    (kept.trim().to_string(), dropped)
}

/// The finding for a cut reply: WARN when a complete sentence was kept, RETRY when not.
pub fn finding(cut: &LengthCut) -> Finding {
    if cut.kept == 0 {
        Finding::new(
            RuleId::TokenLimit,
            Status::Retry,
            "トークン上限で返答が途中で切れ、言い切った文が一つもありません".into(),
            "短く、1〜2文で最後まで言い切ってください。".into(),
        )
        .with_evidence(cut.dropped.clone())
    } else {
        Finding::new(
            RuleId::TokenLimit,
            Status::Warn,
            format!(
                "トークン上限で切れたため、最後の完結した文までに整えました（{}文字を削除）",
                cut.dropped.chars().count()
            ),
            "もっと短く、言い切る形で話してください。".into(),
        )
        .with_evidence(cut.dropped.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_whole_sentences_and_drops_the_unfinished_tail() {
        // Generated: whole sentences, then a tail without an end mark, at random lengths.
        let sentences = [
            "川沿いは涼しいね。",
            "「あれ見て！」",
            "本当ですか？",
            "風が強いな!",
        ];
        let tails = ["", "それで", "あのね、この前", "x"];
        // Seeded (fastrand): the same cases on every run.
        let mut rng = fastrand::Rng::with_seed(7u64);
        let mut seed: u64;
        for _ in 0..300 {
            seed = rng.u64(..);
            let n = (seed >> 33) as usize % 4;
            let mut whole = String::new();
            for i in 0..n {
                whole.push_str(sentences[(seed as usize >> (i * 3)) % sentences.len()]);
            }
            let tail = tails[(seed >> 20) as usize % tails.len()];
            let (kept, dropped) = to_last_sentence(&format!("{whole}{tail}"), "。？！");
            assert_eq!(kept, whole, "{whole}|{tail}");
            assert_eq!(dropped, tail);
        }
    }

    #[test]
    fn nothing_finished_is_a_retry() {
        let (kept, dropped) = to_last_sentence("えっとね、今日は", "。？！");
        assert_eq!((kept.as_str(), dropped.as_str()), ("", "えっとね、今日は"));
        let f = finding(&LengthCut { dropped, kept: 0 });
        assert_eq!(f.status, Status::Retry);
        let f = finding(&LengthCut {
            dropped: "それで".into(),
            kept: 9,
        });
        assert_eq!(f.status, Status::Warn);
    }
}
