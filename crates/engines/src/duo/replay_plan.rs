//! A stored run made replayable: real imported runs may start at turn 2 or have turns whose
//! first attempt logged no text. Turns are renumbered from 1 (skipping turns with no text in
//! any attempt nor in the committed line), attempts keep their order, and the first speaker is
//! the one who spoke first in the recording, so every line is replayed in its own sister's
//! voice. Pure.

use std::collections::BTreeMap;

use super::backend::{JudgeReplies, Recorded};
use crate::store::RunRecord;

/// What a stored run replays as.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub attempts: Vec<Recorded>,
    /// The speaker of replay turn 1 (None: the run has nothing to replay).
    pub first_speaker: Option<String>,
    /// Original turn numbers left out (no text anywhere).
    pub skipped: Vec<u32>,
}

impl PartialEq for Recorded {
    fn eq(&self, o: &Recorded) -> bool {
        (self.turn, self.attempt, &self.text) == (o.turn, o.attempt, &o.text)
    }
}

/// An attempt with text: (attempt number, text, judge replies, stream fallback reason).
type Take = (u32, String, Option<JudgeReplies>, Option<String>);

pub fn plan(rec: &RunRecord) -> Plan {
    // Original turn → (speaker, attempts with text in attempt order).
    let mut turns: BTreeMap<u32, (String, Vec<Take>)> = BTreeMap::new();
    for a in &rec.attempts {
        let e = turns
            .entry(a.turn)
            .or_insert_with(|| (a.speaker.clone(), Vec::new()));
        if let Some(text) = a.text.clone().filter(|t| !t.trim().is_empty()) {
            let judge = a
                .judge_raw
                .as_ref()
                .map(|raw| JudgeReplies::Two(raw.split("\n---\n").map(str::to_string).collect()));
            e.1.push((a.attempt, text, judge, a.fallback.clone()));
        }
    }
    for t in &rec.turns {
        let e = turns
            .entry(t.turn)
            .or_insert_with(|| (t.speaker.clone(), Vec::new()));
        if e.1.is_empty() && !t.text.trim().is_empty() {
            e.1.push((1, t.text.clone(), None, None));
        }
    }
    let mut out = Plan {
        attempts: Vec::new(),
        first_speaker: None,
        skipped: Vec::new(),
    };
    let mut n = 0usize;
    for (orig, (speaker, mut list)) in turns {
        if list.is_empty() {
            out.skipped.push(orig);
            continue;
        }
        n += 1;
        if n == 1 {
            out.first_speaker = Some(speaker);
        }
        list.sort_by_key(|x| x.0);
        for (i, (_, text, judge, fallback)) in list.into_iter().enumerate() {
            out.attempts.push(Recorded {
                turn: n,
                attempt: i + 1,
                text,
                judge,
                fallback,
            });
        }
    }
    out
}
