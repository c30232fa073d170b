//! Layer 2: the same word judged by its context — banter from a returning user with a laugh,
//! an attack from a stranger or an angry one. The rules are spelled out (in order) at the top
//! of assets/safety/contextual.toml; this file implements exactly that list.

use serde::Serialize;

use super::data::Source;
use super::fold::{Folded, char_slice};
use super::layers::Hit;
use super::types::{Category, Tier, UserContext};
use super::words::{WordSet, shadow};
use crate::config::ConfigError;

/// Why Layer 2 decided what it did; shown in the trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Signal {
    Laughter,
    Emoji,
    Playful,
    Returning,
    NewUser,
    Threat,
    RepeatedInsults,
    Shouting,
    AllCaps,
    RecentFlags,
    SelfDirected,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum L2Outcome {
    /// No contextual word.
    None,
    /// The user is talking about themselves.
    SelfDirected,
    /// Banter: respond.
    Banter,
    /// Returning user, no cue either way: ask Layer 4.
    Ambiguous,
    /// Block.
    ContextualNg,
}

#[derive(Debug, Clone)]
pub struct L2Result {
    pub outcome: L2Outcome,
    pub hits: Vec<Hit>,
    pub signals: Vec<Signal>,
}

#[derive(Debug, Clone)]
pub struct Contextual {
    words: WordSet,
    /// Per word entry: (the word as listed, its category).
    entries: Vec<(String, Category)>,
    laughter: WordSet,
    threat: WordSet,
    self_target: WordSet,
    targets: WordSet,
    safe: WordSet,
    playful: Vec<String>,
    returning_after: usize,
    angry_after_flags: usize,
    angry_insult_count: usize,
    shout_marks: usize,
    caps_min_letters: usize,
}

fn invalid(src: Option<&Source>, message: String) -> ConfigError {
    match src {
        Some(s) => s.error("[contextual", message),
        None => ConfigError::Invalid {
            path: "assets/safety/contextual.toml".into(),
            at: None,
            key: None,
            message,
        },
    }
}

impl Contextual {
    /// Merges the `[contextual]` sections; `targets` are the {target} placeholder names.
    pub fn build(sources: &[Source], targets: &[String]) -> Result<Contextual, ConfigError> {
        let mut groups: Vec<super::data::GroupEntry> = Vec::new();
        let (mut laughter, mut playful, mut threat, mut selves, mut safe) =
            (vec![], vec![], vec![], vec![], vec![]);
        let mut n = [3usize, 2, 3, 3, 4];
        let mut last = None;
        for src in sources {
            let Some(c) = &src.file.contextual else {
                continue;
            };
            last = Some(src);
            for (slot, v) in n.iter_mut().zip([
                c.returning_after,
                c.angry_after_flags,
                c.angry_insult_count,
                c.shout_marks,
                c.caps_min_letters,
            ]) {
                if let Some(v) = v {
                    *slot = v;
                }
            }
            laughter.extend(c.laughter.iter().cloned());
            playful.extend(c.playful.iter().cloned());
            threat.extend(c.threat.iter().cloned());
            selves.extend(c.self_target.iter().cloned());
            safe.extend(c.safe.iter().cloned());
            for g in &c.group {
                match groups.iter().position(|x| x.name == g.name) {
                    Some(i) => groups[i] = g.clone(),
                    None => groups.push(g.clone()),
                }
            }
        }
        if n[2] == 0 || n[3] == 0 {
            return Err(invalid(
                last,
                "angry_insult_count and shout_marks must be at least 1".into(),
            ));
        }
        let mut entries = Vec::new();
        let mut words = Vec::new();
        for g in &groups {
            for w in &g.words {
                entries.push((w.clone(), g.category));
                words.push((w.clone(), g.exact));
            }
        }
        let set = |list: Vec<String>| {
            WordSet::new(list.into_iter().map(|w| (w, false))).map_err(|m| invalid(last, m))
        };
        Ok(Contextual {
            words: WordSet::new(words).map_err(|m| invalid(last, m))?,
            entries,
            laughter: WordSet::unbounded(laughter.into_iter().map(|w| (w, false)))
                .map_err(|m| invalid(last, m))?,
            threat: set(threat)?,
            self_target: set(selves)?,
            targets: set(targets.to_vec())?,
            safe: set(safe)?,
            playful: playful
                .iter()
                .map(|p| super::fold::fold_str(p))
                .filter(|p| !p.is_empty())
                .collect(),
            returning_after: n[0],
            angry_after_flags: n[1],
            angry_insult_count: n[2],
            shout_marks: n[3],
            caps_min_letters: n[4],
        })
    }

    /// The number of previous messages that make a user returning.
    pub fn returning_after(&self) -> usize {
        self.returning_after
    }

    /// Judges the contextual words of a message. `l1_safe` are Layer 1's safe spans.
    pub fn judge(
        &self,
        f: &Folded,
        original: &str,
        l1_safe: &[(usize, usize)],
        ctx: &UserContext,
    ) -> L2Result {
        let mut safe: Vec<(usize, usize)> = l1_safe.to_vec();
        safe.extend(self.safe.find(f).iter().map(|h| (h.start, h.end)));
        let mut raw = self.words.find(f);
        // Inside a longer contextual word (おバカ ⊃ バカ) a hit is the same insult.
        let all = raw.clone();
        raw.retain(|h| {
            !all.iter().any(|o| {
                o.start <= h.start && h.end <= o.end && (o.end - o.start) > (h.end - h.start)
            })
        });
        let mut hits = Vec::new();
        let mut live = Vec::new();
        for h in &raw {
            let (entry, category) = &self.entries[h.entry];
            let shadowed_by =
                shadow(&safe, h.start, h.end).map(|i| f.folded_slice(safe[i].0, safe[i].1));
            let span = f.orig_span(h.start, h.end);
            if shadowed_by.is_none() {
                live.push(*h);
            }
            hits.push(Hit {
                entry: entry.clone(),
                text: char_slice(original, span),
                span,
                tier: if shadowed_by.is_some() {
                    Tier::Safe
                } else {
                    Tier::Warning
                },
                category: *category,
                shadowed_by: shadowed_by.map(str::to_string),
            });
        }
        let mut signals = Vec::new();
        let Some(first) = live.first() else {
            return L2Result {
                outcome: L2Outcome::None,
                hits,
                signals,
            };
        };
        let mut angry = false;
        let flag = |s: Signal, on: bool, signals: &mut Vec<Signal>| {
            if on {
                signals.push(s);
            }
            on
        };
        angry |= flag(
            Signal::Threat,
            !self.threat.find(f).is_empty(),
            &mut signals,
        );
        angry |= flag(
            Signal::RepeatedInsults,
            live.len() >= self.angry_insult_count,
            &mut signals,
        );
        angry |= flag(Signal::Shouting, self.shouting(f), &mut signals);
        angry |= flag(Signal::AllCaps, self.all_caps(f), &mut signals);
        angry |= flag(
            Signal::RecentFlags,
            ctx.recent_flags >= self.angry_after_flags && self.angry_after_flags > 0,
            &mut signals,
        );
        let returning = ctx.is_returning(self.returning_after);
        signals.push(if returning {
            Signal::Returning
        } else {
            Signal::NewUser
        });
        let outcome = if angry {
            L2Outcome::ContextualNg
        } else if self.self_directed(f, first.start) {
            signals.push(Signal::SelfDirected);
            L2Outcome::SelfDirected
        } else {
            let mut soft = flag(Signal::Laughter, self.laughs(f), &mut signals);
            soft |= flag(Signal::Emoji, f.plain.chars().any(is_emoji), &mut signals);
            soft |= flag(Signal::Playful, self.playful_end(f), &mut signals);
            match (returning, soft) {
                (true, true) => L2Outcome::Banter,
                (false, _) => L2Outcome::ContextualNg,
                (true, false) => L2Outcome::Ambiguous,
            }
        };
        L2Result {
            outcome,
            hits,
            signals,
        }
    }

    fn shouting(&self, f: &Folded) -> bool {
        let mut run = 0;
        for c in f.folded.chars() {
            run = if matches!(c, '!' | '?') { run + 1 } else { 0 };
            if run >= self.shout_marks {
                return true;
            }
        }
        false
    }

    fn all_caps(&self, f: &Folded) -> bool {
        let letters: Vec<char> = f
            .plain
            .chars()
            .filter(|c| c.is_ascii_alphabetic())
            .collect();
        letters.len() >= self.caps_min_letters && letters.iter().all(|c| c.is_ascii_uppercase())
    }

    /// A laughter cue at the end of a phrase (a latin one also after a non-latin char).
    fn laughs(&self, f: &Folded) -> bool {
        let chars: Vec<char> = f.folded.chars().collect();
        self.laughter.find(f).iter().any(|h| {
            let last = chars.get(h.end.wrapping_sub(1)).copied();
            let mut i = h.end;
            while i < chars.len() && Some(chars[i]) == last {
                i += 1;
            }
            let ends = match chars.get(i) {
                None => true,
                Some(&c) => c.is_whitespace() || is_punct(c) || is_emoji(c) || c == '笑',
            };
            let latin = last.is_some_and(|c| c.is_ascii_alphabetic());
            let before_ok = !latin
                || h.start == 0
                || chars
                    .get(h.start - 1)
                    .is_some_and(|c| !c.is_ascii_alphabetic());
            ends && before_ok
        })
    }

    fn playful_end(&self, f: &Folded) -> bool {
        let t = f.folded.trim_end_matches(|c: char| {
            c.is_whitespace() || matches!(c, '.' | '。' | '!' | '?' | '、' | ',')
        });
        self.playful.iter().any(|p| t.ends_with(p.as_str()))
    }

    /// A self word before the first insult in its sentence, and no one else named there.
    fn self_directed(&self, f: &Folded, insult_at: usize) -> bool {
        let chars: Vec<char> = f.folded.chars().collect();
        let end = chars[insult_at..]
            .iter()
            .position(|c| is_sentence_end(*c))
            .map_or(chars.len(), |p| insult_at + p);
        let start = chars[..insult_at]
            .iter()
            .rposition(|c| is_sentence_end(*c))
            .map_or(0, |p| p + 1);
        let in_sentence = |h: &super::words::WordHit| h.start >= start && h.end <= end;
        let selves = self.self_target.find(f);
        selves.iter().any(|h| in_sentence(h) && h.end <= insult_at)
            && !self.targets.find(f).iter().any(in_sentence)
    }
}

fn is_sentence_end(c: char) -> bool {
    matches!(c, '。' | '.' | '!' | '?' | '\n')
}

fn is_punct(c: char) -> bool {
    c.is_ascii_punctuation() || matches!(c, '。' | '、' | '…' | '〜' | 'ー' | '」' | '』' | '）')
}

/// Pictographs and symbols commonly used as emoji.
pub fn is_emoji(c: char) -> bool {
    matches!(c as u32, 0x1F000..=0x1FAFF | 0x2600..=0x27BF | 0x2B50 | 0x2B55 | 0x3297 | 0x3299)
}
