//! The Japanese stop-word list of RAKE (assets/insight/stopwords_ja.txt), loaded once.

use std::collections::HashSet;
use std::sync::OnceLock;

const LIST: &str = include_str!("../../../../assets/insight/stopwords_ja.txt");

/// Parses a list: one word per line, `#` comments and blank lines ignored.
pub fn parse(text: &str) -> HashSet<String> {
    text.lines()
        .map(|l| l.split('#').next().unwrap_or("").trim())
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect()
}

pub fn japanese() -> &'static HashSet<String> {
    static S: OnceLock<HashSet<String>> = OnceLock::new();
    S.get_or_init(|| parse(LIST))
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_list_has_particles_auxiliaries_and_formal_nouns() {
        let s = super::japanese();
        for w in ["が", "です", "こと", "ため", "私"] {
            assert!(s.contains(w), "{w}");
        }
        assert!(!s.contains("# 助動詞") && !s.contains(""));
    }
}
