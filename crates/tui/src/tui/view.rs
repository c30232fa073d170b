//! What the workbench shows, built from the driver's effects: one `TurnView` per turn with all
//! its attempts (streaming text, verdicts, judge scores, guidance) and the reviewer's marks.

use crate::director::judge::JudgeOutcome;
use crate::director::{Status, Verdict};
use crate::duo::records::{GenStats, TurnFlags};
use crate::duo::topic::DepthStep;
use crate::duo::{Effect, RunEnd};
use crate::text::Analysis;

pub use super::ack::{Review, SaveMark, SaveTicket};

#[derive(Debug, Clone, PartialEq)]
pub enum Phase {
    Generating,
    Reviewing,
    Reviewed,
    Failed(String),
    Cancelled,
}

#[derive(Debug, Clone)]
pub struct AttemptView {
    pub attempt: usize,
    pub text: String,
    pub phase: Phase,
    pub verdict: Option<Verdict>,
    pub judge: Option<JudgeOutcome>,
    pub guidance: Vec<String>,
    pub stats: GenStats,
    /// Lines and sentences of the streaming text, refreshed at most every 150 ms.
    pub live_counts: (usize, usize),
    pub counted_len: usize,
    /// The analysis of `text`, kept for re-judging (cleared whenever the text changes).
    pub analysis: Option<std::sync::Arc<Analysis>>,
    /// While it streams: the pieces so far and their speed.
    pub live: Option<LiveRate>,
}

/// The streaming speed seen so far: the pieces after the first over the time since the first
/// (a piece is one token on Ollama and llama-server), as the headless `tokens_per_s` counts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LiveRate {
    pub first: std::time::Instant,
    pub last: std::time::Instant,
    pub pieces: u32,
}

impl LiveRate {
    /// One more piece, arrived `at`.
    pub fn add(live: &mut Option<LiveRate>, at: std::time::Instant) {
        match live {
            Some(l) => {
                l.last = at;
                l.pieces += 1;
            }
            None => {
                *live = Some(LiveRate {
                    first: at,
                    last: at,
                    pieces: 1,
                })
            }
        }
    }

    /// `12 tokens · 10.0 tokens/s`: the speed once the pieces span a second (a rate over a
    /// few milliseconds says nothing), the count before.
    pub fn describe(&self) -> String {
        let secs = self.last.duration_since(self.first).as_secs_f64();
        if self.pieces < 2 || secs < 1.0 {
            let s = if self.pieces == 1 { "" } else { "s" };
            return format!("{} token{s}", self.pieces);
        }
        let rate = f64::from(self.pieces - 1) / secs;
        format!("{} tokens · {rate:.1} tokens/s", self.pieces)
    }
}

#[derive(Debug, Clone)]
pub struct TurnView {
    pub turn: usize,
    pub speaker: String,
    pub attempts: Vec<AttemptView>,
    /// Index into `attempts` of the committed one.
    pub committed: Option<usize>,
    /// What was committed as said when it is not the committed attempt's text: her fallback
    /// line in place of a line the leak review rejected (`flags.withheld`).
    pub said: Option<String>,
    pub flags: TurnFlags,
    pub hook: Option<String>,
    pub depth: u8,
    pub step: Option<DepthStep>,
    pub review: Review,
}

impl TurnView {
    /// The attempt to show: the committed one, else the latest.
    pub fn shown(&self) -> Option<&AttemptView> {
        self.committed
            .and_then(|i| self.attempts.get(i))
            .or(self.attempts.last())
    }

    pub fn status(&self) -> Option<Status> {
        self.review.override_to.or_else(|| {
            self.shown()
                .and_then(|a| a.verdict.as_ref().map(|v| v.status))
        })
    }
}

#[derive(Debug, Clone, Default)]
pub struct RunView {
    pub run_id: Option<i64>,
    pub topic: String,
    pub turns: Vec<TurnView>,
    pub state: RunState,
    pub held: bool,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub enum RunState {
    #[default]
    Idle,
    Running,
    Paused,
    Done(RunEnd, Option<String>),
}

impl RunView {
    fn turn_mut(&mut self, turn: usize) -> Option<&mut TurnView> {
        self.turns.iter_mut().rev().find(|t| t.turn == turn)
    }

    fn attempt_mut(&mut self, turn: usize, attempt: usize) -> Option<&mut AttemptView> {
        self.turn_mut(turn)?
            .attempts
            .iter_mut()
            .find(|a| a.attempt == attempt)
    }

    pub fn on_token(&mut self, turn: usize, attempt: usize, delta: &str, at: std::time::Instant) {
        if let Some(a) = self.attempt_mut(turn, attempt) {
            a.text.push_str(delta);
            a.analysis = None;
            LiveRate::add(&mut a.live, at);
        }
    }

    /// Recounts lines/sentences of streaming attempts whose text grew (the caller debounces).
    pub fn refresh_counts(&mut self) -> bool {
        let Some(t) = self.turns.last_mut() else {
            return false;
        };
        let mut changed = false;
        for a in &mut t.attempts {
            if a.phase == Phase::Generating && a.counted_len != a.text.len() {
                let an = Analysis::new(&a.text);
                a.live_counts = (an.lines, an.sentences.len());
                a.counted_len = a.text.len();
                changed = true;
            }
        }
        changed
    }

    pub fn apply(&mut self, e: &Effect) {
        match e {
            // Regenerating the turn in progress starts it again: keep its attempts.
            Effect::TurnStarted { turn, .. }
                if self.turns.last().is_some_and(|t| t.turn == *turn) => {}
            Effect::TurnStarted { turn, speaker } => self.turns.push(TurnView {
                turn: *turn,
                speaker: speaker.clone(),
                attempts: Vec::new(),
                committed: None,
                said: None,
                flags: TurnFlags::default(),
                hook: None,
                depth: 0,
                step: None,
                review: Review::default(),
            }),
            Effect::Generate { .. }
            | Effect::StaticJudge { .. }
            | Effect::AttemptDone(_)
            | Effect::AttemptFailed { .. }
            | Effect::AttemptCancelled { .. } => self.apply_attempt(e),
            Effect::TurnCommitted(r) => {
                if let Some(t) = self.turn_mut(r.turn) {
                    t.committed = t.attempts.iter().position(|a| a.attempt == r.attempt);
                    t.flags = r.flags;
                    t.said = r.flags.withheld.then(|| r.text.clone());
                    t.hook = r.hook.clone();
                    t.depth = r.depth;
                    t.step = Some(r.step);
                }
                self.held = false;
            }
            Effect::Held { .. } => self.held = true,
            Effect::Paused => self.state = RunState::Paused,
            Effect::Resumed => self.state = RunState::Running,
            Effect::Truncated { from_turn } => self.turns.retain(|t| t.turn < *from_turn),
            Effect::RunDone { status, error } => {
                self.state = RunState::Done(*status, error.clone());
                // Nothing is in progress once the run is over: a turn cut short says so.
                for a in self.turns.iter_mut().flat_map(|t| t.attempts.iter_mut()) {
                    if matches!(a.phase, Phase::Generating | Phase::Reviewing) {
                        a.phase = Phase::Cancelled;
                    }
                }
            }
            Effect::Cancel
            | Effect::AttemptStarted { .. }
            | Effect::LlmJudge { .. }
            | Effect::Unsuitable { .. } => {}
        }
    }

    /// What happens to one attempt: generating, reviewed statically, done, failed, cancelled.
    fn apply_attempt(&mut self, e: &Effect) {
        match e {
            Effect::Generate {
                turn,
                attempt,
                guidance,
                ..
            } => {
                self.state = RunState::Running;
                if let Some(t) = self.turn_mut(*turn) {
                    t.attempts.push(AttemptView {
                        attempt: *attempt,
                        text: String::new(),
                        phase: Phase::Generating,
                        verdict: None,
                        judge: None,
                        guidance: guidance.clone(),
                        stats: GenStats::default(),
                        live_counts: (0, 0),
                        counted_len: 0,
                        analysis: None,
                        live: None,
                    });
                }
            }
            Effect::StaticJudge {
                turn,
                attempt,
                text,
                ..
            } => {
                if let Some(a) = self.attempt_mut(*turn, *attempt) {
                    a.text = text.clone();
                    a.analysis = None;
                    a.phase = Phase::Reviewing;
                }
            }
            Effect::AttemptDone(r) => {
                if let Some(a) = self.attempt_mut(r.turn, r.attempt) {
                    a.text = r.text.clone();
                    // The driver's analysis: re-judging from the rules pane starts warm.
                    a.analysis = r.analysis.clone();
                    a.phase = Phase::Reviewed;
                    a.verdict = Some(r.verdict.clone());
                    a.judge = r.judge.clone();
                    a.stats = r.stats.clone();
                }
            }
            Effect::AttemptFailed {
                turn,
                attempt,
                error,
            } => {
                if let Some(a) = self.attempt_mut(*turn, *attempt) {
                    a.phase = Phase::Failed(error.clone());
                }
            }
            Effect::AttemptCancelled { turn, attempt, .. } => {
                if let Some(a) = self.attempt_mut(*turn, *attempt) {
                    a.phase = Phase::Cancelled;
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod live_tests {
    use super::LiveRate;
    use std::time::{Duration, Instant};

    /// Generated pace: n pieces every k ms, spanning a second or more, read as n tokens at
    /// 1000/k tokens/s; one piece, or pieces within a second, have no speed yet.
    #[test]
    fn the_live_rate_counts_pieces_after_the_first_over_the_time_since() {
        let t0 = Instant::now();
        for (n, every_ms) in [(3u32, 500u64), (11, 100), (41, 50), (5, 1000), (201, 25)] {
            let mut live = None;
            for i in 0..n {
                LiveRate::add(
                    &mut live,
                    t0 + Duration::from_millis(u64::from(i) * every_ms),
                );
            }
            let want = 1000.0 / every_ms as f64;
            assert_eq!(
                live.unwrap().describe(),
                format!("{n} tokens · {want:.1} tokens/s")
            );
        }
        let mut quick = None;
        for i in 0..4u64 {
            LiveRate::add(&mut quick, t0 + Duration::from_millis(i * 10));
        }
        assert_eq!(quick.unwrap().describe(), "4 tokens");
    }
}
