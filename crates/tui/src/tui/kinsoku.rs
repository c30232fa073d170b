//! 禁則: which clusters may not start a line (。、」）！？ー, small kana …) and which may not end
//! one (「（ …), read from assets/tui/kinsoku.toml; and which clusters belong to a word that
//! must not be split (Latin letters, digits, and the marks inside English words).

use std::collections::HashSet;
use std::sync::OnceLock;

use serde::Deserialize;

const DATA: &str = include_str!("../../../../assets/tui/kinsoku.toml");

#[derive(Deserialize)]
struct File {
    no_start: String,
    no_end: String,
}

struct Rules {
    no_start: HashSet<char>,
    no_end: HashSet<char>,
}

fn rules() -> &'static Rules {
    static RULES: OnceLock<Rules> = OnceLock::new();
    RULES.get_or_init(|| {
        // Embedded and tested: a parse failure is a build defect, and wrapping without 禁則 is
        // still correct text.
        let f: File = toml::from_str(DATA).unwrap_or(File {
            no_start: String::new(),
            no_end: String::new(),
        });
        let set = |s: &str| s.chars().filter(|c| !c.is_whitespace()).collect();
        Rules {
            no_start: set(&f.no_start),
            no_end: set(&f.no_end),
        }
    })
}

/// A line may not start with this cluster (judged by its first character).
pub fn no_start(g: &str) -> bool {
    g.chars()
        .next()
        .is_some_and(|c| rules().no_start.contains(&c))
}

/// A line may not end with this cluster.
pub fn no_end(g: &str) -> bool {
    g.chars()
        .next()
        .is_some_and(|c| rules().no_end.contains(&c))
}

/// Part of a word written with spaces between words (Latin letters, digits, accents,
/// apostrophes and hyphens inside the word): such a run is kept on one line when it fits.
pub fn wordish(g: &str) -> bool {
    g.chars().next().is_some_and(|c| {
        c.is_ascii_alphanumeric()
            || matches!(c, '\'' | '’' | '-' | '_')
            || (c.is_alphabetic() && ('\u{00C0}'..='\u{024F}').contains(&c))
    })
}

/// Whether a line may break between clusters `a` and `b`.
pub fn may_break(a: &str, b: &str) -> bool {
    if no_start(b) || no_end(a) {
        return false;
    }
    !(wordish(a) && wordish(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_data_loads_and_classifies() {
        for g in [
            "。", "、", "」", "）", "！", "？", "ー", "っ", "ャ", "ﾞ", "｡", ")",
        ] {
            assert!(no_start(g), "{g}");
        }
        for g in ["「", "（", "『", "｢", "("] {
            assert!(no_end(g), "{g}");
        }
        for g in ["あ", "漢", "a", "👍"] {
            assert!(!no_start(g) && !no_end(g), "{g}");
        }
        assert!(!may_break("a", "b"));
        assert!(may_break(" ", "b"));
        assert!(may_break("あ", "い"));
        assert!(!may_break("い", "。"));
        assert!(!may_break("「", "あ"));
    }
}
