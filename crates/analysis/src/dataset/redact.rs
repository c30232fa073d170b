//! `--redact-vault` over every field: the words a run's vault keeps secret — secret ids,
//! forbidden keywords and their readings, each secret's content and allowed expressions, the
//! text of hidden sections — replaced by [`HIDDEN`] wherever they occur in a record (prompt
//! messages, guidance, history, chosen, rejected, completion), besides the 【世界設定】 block
//! that `prompt_of` replaces by a notice. A paraphrase is not found: the card says so.

use aho_corasick::{AhoCorasick, MatchKind};
use serde_json::Value;

use crate::vault::load::Work;

/// What stands where a vault word was.
pub const HIDDEN: &str = "［伏字］";

/// The vault words of one run, searched at once (longest first).
pub struct Redactor {
    ac: Option<AhoCorasick>,
    /// How many words it looks for.
    pub words: usize,
}

impl Redactor {
    /// The words of `work` that are not for everyone: everything about secrets of level 0–2
    /// and the text of sections below level 3 (as the common reader sees them).
    pub fn of(work: &Work) -> Redactor {
        let reviewer = work.reviewer(None);
        let input = reviewer.input();
        let mut words: Vec<String> = Vec::new();
        for s in input.secrets.iter().filter(|s| s.level <= 2) {
            words.push(s.id.clone());
            words.push(s.content.clone());
            words.extend(s.forbidden_keywords.iter().cloned());
            words.extend(s.allowed_expressions.iter().cloned());
            for k in &s.forbidden_keywords {
                if let Some(r) = input.keyword_readings.get(k.trim()) {
                    words.extend(r.iter().cloned());
                }
            }
        }
        for st in input.settings.iter().filter(|s| s.level < 3) {
            words.extend(st.text.lines().map(str::to_string));
        }
        words.extend(input.forbidden_keywords_global.iter().cloned());
        Redactor::from_words(words)
    }

    /// Looks for `words` (trimmed; shorter than two chars left out: one kana is no secret).
    pub fn from_words(words: impl IntoIterator<Item = String>) -> Redactor {
        let mut words: Vec<String> = words
            .into_iter()
            .map(|w| w.trim().to_string())
            .filter(|w| w.chars().count() >= 2)
            .collect();
        words.sort();
        words.dedup();
        let ac = AhoCorasick::builder()
            .match_kind(MatchKind::LeftmostLongest)
            .build(&words)
            .ok();
        Redactor {
            words: words.len(),
            ac: ac.filter(|_| !words.is_empty()),
        }
    }

    /// `text` with every vault word replaced.
    pub fn text(&self, text: &str) -> String {
        match &self.ac {
            Some(ac) => ac.replace_all(text, &vec![HIDDEN; self.words]),
            None => text.to_string(),
        }
    }

    /// Every string inside `v`, in place.
    pub fn value(&self, v: &mut Value) {
        match v {
            Value::String(s) => *s = self.text(s),
            Value::Array(a) => a.iter_mut().for_each(|x| self.value(x)),
            Value::Object(o) => o.values_mut().for_each(|x| self.value(x)),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_string_in_a_record_loses_the_vault_words() {
        let r = Redactor::from_words(
            [
                "工房",
                "こうぼう",
                "SEC-YANA-01",
                "海沿いの町の工房で働く",
                "あ",
            ]
            .map(String::from),
        );
        let mut v = serde_json::json!({
            "prompt": [{"role": "system", "content": "SEC-YANA-01 に触れない。工房・こうぼう禁止"}],
            "chosen": "春から海沿いの町の工房で働くんだ",
            "n": 3,
            "list": ["あいう", "工房"],
        });
        r.value(&mut v);
        let s = v.to_string();
        for w in ["工房", "こうぼう", "SEC-YANA-01", "海沿いの町"] {
            assert!(!s.contains(w), "{w} in {s}");
        }
        assert!(s.contains("あいう"), "one-char words are not looked for");
        assert_eq!(v["n"], 3);
        assert!(v["chosen"].as_str().unwrap().contains(HIDDEN));
    }

    /// The bundled sample vault: nothing of a level-0 secret survives in any generated text
    /// that quotes its words, ids or readings.
    #[test]
    fn the_sample_vaults_secrets_are_redacted_in_generated_lines() {
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../assets/vault/sisters");
        let work = crate::vault::open(Some(&dir), None).expect("the sample vault");
        let r = Redactor::of(&work);
        assert!(r.words > 10, "{}", r.words);
        let reviewer = work.reviewer(None);
        let mut rng = fastrand::Rng::with_seed(38);
        let hidden: Vec<String> = reviewer
            .input()
            .secrets
            .iter()
            .filter(|s| s.level == 0)
            .flat_map(|s| {
                let mut w = vec![s.id.clone()];
                w.extend(s.forbidden_keywords.iter().cloned());
                w
            })
            .filter(|w| w.chars().count() >= 2)
            .collect();
        assert!(!hidden.is_empty());
        for _ in 0..100 {
            let w = &hidden[rng.usize(0..hidden.len())];
            let line = format!(
                "ねえ、{w}のこと{}",
                ["だけど", "知ってる？", "……"][rng.usize(0..3)]
            );
            let out = r.text(&line);
            assert!(!out.contains(w.as_str()), "{out}");
        }
    }
}
