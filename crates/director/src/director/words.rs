//! The longest word a rules file may hold ([`MAX_WORD_CHARS`]): every marker, ending and
//! forbidden word goes into the Director's matcher, and a megabyte "word" is a mistake or an
//! attack. The error names the list (located at file:line:col by `config::relocate`) and
//! quotes only the word's first characters.

use std::path::PathBuf;

use super::lexicon::MAX_WORD_CHARS;
use super::ruleset::{RuleData, StyleRule};
use crate::config::ConfigError;

/// The first word longer than the limit, as a located error.
pub fn check(data: &RuleData) -> Result<(), ConfigError> {
    let mut lists: Vec<(String, Vec<&String>)> = vec![
        (
            "praise.evaluation_words".into(),
            data.praise.evaluation_words.iter().collect(),
        ),
        (
            "praise.partner_refs".into(),
            data.praise.partner_refs.iter().collect(),
        ),
        (
            "praise.affirmation_words".into(),
            data.praise.affirmation_words.iter().collect(),
        ),
        (
            "setting.phrases".into(),
            data.setting.phrases.iter().collect(),
        ),
        (
            "contradiction.adverbs".into(),
            data.contradiction.adverbs.iter().collect(),
        ),
        (
            "contradiction.negations".into(),
            data.contradiction.negations.iter().collect(),
        ),
        (
            "prompt_leak.markers".into(),
            data.prompt_leak.markers.iter().collect(),
        ),
    ];
    for (id, c) in &data.characters {
        let k = |f: &str| format!("characters.{id}.{f}");
        lists.push((k("tone.endings"), c.tone.endings.iter().collect()));
        lists.push((k("tone.vocab"), c.tone.vocab.iter().collect()));
        if let StyleRule::Polite { endings, .. } = &c.tone.style {
            lists.push((k("tone.style.endings"), endings.iter().collect()));
        }
        lists.push((
            k("tone.violations.endings"),
            c.tone.violations.endings.iter().collect(),
        ));
        lists.push((
            k("tone.violations.words"),
            c.tone.violations.words.iter().collect(),
        ));
        lists.push((
            k("forbidden_words"),
            c.forbidden_words.iter().map(|f| &f.word).collect(),
        ));
        lists.push((k("address_partner"), c.address_partner.iter().collect()));
        lists.push((k("display_name"), vec![&c.display_name]));
        lists.push((k("aliases"), c.aliases.iter().collect()));
    }
    for (key, words) in lists {
        for w in words {
            let n = w.chars().count();
            if n > MAX_WORD_CHARS {
                let head: String = w.chars().take(12).collect();
                return Err(ConfigError::Invalid {
                    path: PathBuf::from("<rules>"),
                    at: None,
                    key: Some(key),
                    message: format!(
                        "a word of {n} characters (「{head}…」); the longest allowed is {MAX_WORD_CHARS}"
                    ),
                });
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::director::RuleSet;

    #[test]
    fn a_long_word_in_a_rules_file_is_refused_at_its_key() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("rules.toml");
        for len in [101, 2_000, 16_000, 1_000_000] {
            let word = "ああ".repeat(len / 2 + 1);
            let text = format!("[praise]\nevaluation_words = [\"すごい\", \"{word}\"]\n");
            std::fs::write(&p, &text).unwrap();
            let e = RuleSet::load(Some(&p)).unwrap_err().to_string();
            assert!(e.contains("rules.toml:2:"), "{e}");
            assert!(e.contains("the longest allowed is 100"), "{e}");
            assert!(
                e.chars().count() < 400,
                "the error quotes the whole word: {} chars",
                e.len()
            );
        }
        std::fs::write(&p, "[praise]\nevaluation_words = [\"すごい\"]\n").unwrap();
        assert!(RuleSet::load(Some(&p)).is_ok());
    }
}
