//! Word-list candidates per sister: sentence-final endings the reviewers keep in lines the tone
//! rule rejected. For each sister, the kana endings (one to three chars before a sentence's
//! terminator) of her labelled-usable lines where `tone` fired are counted against those of
//! her unusable lines; each ending that is clearly more usable than not, and not already hers,
//! becomes a candidate "add it to `characters.<id>.tone.endings`", re-judged by the tone rule
//! alone like any threshold.

use std::collections::BTreeMap;

use crate::director::ruleset::RuleData;
use crate::director::{RuleId, Status};
use crate::text::Analysis;

/// Settings (kept here; the grid's values are data in `assets/rules/tune.toml`).
const MIN_SUPPORT: usize = 3;
const MAX_PER_SISTER: usize = 6;

/// One labelled line as the word search sees it.
pub struct Line<'a> {
    pub speaker: &'a str,
    pub analysis: &'a Analysis,
    pub usable: bool,
    pub tone: Status,
}

fn is_kana(c: char) -> bool {
    crate::text::chars::is_hiragana(c) || crate::text::chars::is_katakana(c)
}

/// The kana endings (1–3 chars) of each sentence body of `a`, once per line.
pub fn endings(a: &Analysis) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for s in &a.sentences {
        let body: Vec<char> = a.chars[s.start..s.body_end].to_vec();
        for k in 1..=3usize.min(body.len()) {
            let tail = &body[body.len() - k..];
            if !tail.iter().all(|c| is_kana(*c)) {
                break;
            }
            let e: String = tail.iter().collect();
            if !out.contains(&e) {
                out.push(e);
            }
        }
    }
    out
}

/// `(sister id, ending)` candidates, best first per sister: endings of usable lines the tone
/// rule fired on, seen at least `MIN_SUPPORT` times more in usable lines than in unusable ones.
pub fn candidates(data: &RuleData, lines: &[Line<'_>]) -> Vec<(String, String)> {
    let mut score: BTreeMap<(&str, String), (usize, usize)> = BTreeMap::new();
    for l in lines {
        let fired = matches!(l.tone, Status::Warn | Status::Retry);
        for e in endings(l.analysis) {
            let x = score.entry((l.speaker, e)).or_default();
            if l.usable && fired {
                x.0 += 1;
            } else if !l.usable {
                x.1 += 1;
            }
        }
    }
    let mut out = Vec::new();
    for (id, c) in &data.characters {
        let mut mine: Vec<(usize, String)> = score
            .iter()
            .filter(|((s, e), (good, bad))| {
                *s == id.as_str()
                    && *good >= MIN_SUPPORT
                    && *good > 2 * *bad
                    && !c.tone.endings.contains(e)
            })
            .map(|((_, e), (good, bad))| (good - bad, e.clone()))
            .collect();
        mine.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        out.extend(
            mine.into_iter()
                .take(MAX_PER_SISTER)
                .map(|(_, e)| (id.clone(), e)),
        );
    }
    out
}

/// The rules with `ending` added to sister `id`'s tone endings.
pub fn with_ending(data: &RuleData, id: &str, ending: &str) -> Option<RuleData> {
    let mut d = data.clone();
    let c = d.characters.get_mut(id)?;
    c.tone.endings.push(ending.to_string());
    Some(d)
}

/// The rules-file key a word candidate changes.
pub fn key(id: &str) -> String {
    format!("characters.{id}.tone.endings")
}

/// The rule a word candidate re-runs.
pub const RULE: RuleId = RuleId::Tone;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endings_are_the_kana_before_each_terminator() {
        let a = Analysis::new("坂の上まで歩いたよ。肉まん買った！本当？");
        let e = endings(&a);
        for want in ["よ", "たよ", "いたよ", "た", "った", "買った"] {
            assert_eq!(
                e.contains(&want.to_string()),
                want != "買った",
                "{want}: {e:?}"
            );
        }
        // A kanji or a digit ends the run: 本当 has no kana ending.
        assert!(!e.iter().any(|x| x.contains('当')), "{e:?}");
    }
}
