//! Topic tracking (seed 001 §8–§9, duo-talk's TopicState): the hook (focus noun, from the
//! analyzer's nouns — not a kanji-run regex), its depth 0–3 (DISCOVER → SURFACE → WHY →
//! EXPAND) and recent keyword sets. Only committed lines advance it; the session snapshots it
//! per turn so a regenerated turn can roll it back.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use crate::director::Character;

/// Keyword sets kept for loop tracking (duo-talk kept 10).
const KEEP: usize = 10;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum DepthStep {
    Discover,
    Surface,
    Why,
    Expand,
}

impl DepthStep {
    pub fn of(depth: u8) -> DepthStep {
        match depth {
            0 => DepthStep::Discover,
            1 => DepthStep::Surface,
            2 => DepthStep::Why,
            _ => DepthStep::Expand,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            DepthStep::Discover => "DISCOVER",
            DepthStep::Surface => "SURFACE",
            DepthStep::Why => "WHY",
            DepthStep::Expand => "EXPAND",
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TopicState {
    pub hook: Option<String>,
    /// 0–3.
    pub depth: u8,
    /// Committed lines since the hook was set.
    pub turns_on_hook: usize,
    /// Keyword sets of the last committed lines, newest last.
    pub recent: VecDeque<Vec<String>>,
}

impl TopicState {
    pub fn step(&self) -> DepthStep {
        DepthStep::of(self.depth)
    }

    /// Advances the state with a committed line's keywords (never call it for a RETRY attempt).
    pub fn commit(&mut self, keywords: &[String]) {
        let stays = match &self.hook {
            Some(h) => keywords.is_empty() || keywords.contains(h),
            None => keywords.is_empty(),
        };
        if stays {
            if self.hook.is_some() {
                self.depth = (self.depth + 1).min(3);
                self.turns_on_hook += 1;
            }
        } else {
            // Prefer a noun the partner just used: the new line picked it up.
            let prev = self.recent.back();
            let picked = keywords
                .iter()
                .find(|k| prev.is_some_and(|p| p.contains(k)))
                .unwrap_or(&keywords[0]);
            self.hook = Some(picked.clone());
            self.depth = 0;
            self.turns_on_hook = 1;
        }
        self.recent.push_back(keywords.to_vec());
        while self.recent.len() > KEEP {
            self.recent.pop_front();
        }
    }

    /// The topic guidance for the next speaker: where the hook stands and her part in it.
    pub fn guidance(&self, speaker: &Character) -> Option<String> {
        let hook = self.hook.as_ref()?;
        let next = DepthStep::of((self.depth + 1).min(3));
        let role = speaker
            .depth_roles
            .get(next as usize)
            .map(String::as_str)
            .unwrap_or("");
        Some(format!(
            "今の話題の焦点は「{hook}」（深さ{}/3）。次は{}の段階です。{role}",
            self.depth,
            next.as_str()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kw(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn hook_deepens_while_the_noun_stays_and_resets_on_a_new_one() {
        let mut t = TopicState::default();
        t.commit(&kw(&["観覧車", "夕焼け"]));
        assert_eq!(t.hook.as_deref(), Some("観覧車"));
        assert_eq!((t.depth, t.step()), (0, DepthStep::Discover));
        t.commit(&kw(&["観覧車", "ゴンドラ"]));
        t.commit(&kw(&[]));
        t.commit(&kw(&["観覧車"]));
        assert_eq!((t.depth, t.turns_on_hook), (3, 4));
        t.commit(&kw(&["観覧車"]));
        assert_eq!(t.depth, 3, "depth is capped");
        t.commit(&kw(&["屋台", "焼きそば"]));
        assert_eq!(t.hook.as_deref(), Some("屋台"));
        assert_eq!((t.depth, t.turns_on_hook), (0, 1));
    }

    #[test]
    fn a_new_hook_prefers_the_noun_the_partner_just_used() {
        let mut t = TopicState::default();
        t.commit(&kw(&["図書館", "雨宿り"]));
        t.commit(&kw(&["傘", "雨宿り"]));
        assert_eq!(t.hook.as_deref(), Some("雨宿り"));
    }

    #[test]
    fn recent_keeps_the_last_ten() {
        let mut t = TopicState::default();
        for i in 0..15 {
            t.commit(&[format!("語{i}")]);
        }
        assert_eq!(t.recent.len(), 10);
        assert_eq!(t.recent.back().unwrap(), &vec!["語14".to_string()]);
    }
}
