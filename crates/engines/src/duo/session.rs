//! The run loop as a pure state machine: events in, effects out, no I/O. It owns the turn
//! number, speaker, attempt count, hook depth, topic history and carried guidance, and changes
//! them only when a line is committed — a RETRY attempt never advances anything, and a RETRY line
//! committed because the attempts ran out never moves the topic state or the Director's context
//! (seed 001 §9). Guidance is split by who it is for: a critique of a line goes to its speaker's
//! next turn, what concerns the conversation to the next speaker (seed 001 §1, §8).
//! The driver (async, in `duo::driver`) performs the effects and feeds results back as events.

use std::sync::Arc;

use super::config::{DuoConfig, Exhaustion};
use super::policy;
use super::prompt::{self, Line, Prompt, PromptInput};
use super::records::{AttemptRecord, GenStats, RunEnd, TurnFlags, TurnRecord};
use super::topic::TopicState;
use crate::director::judge::JudgeOutcome;
use crate::director::{RuleSet, Status, Verdict};
use crate::text::Analysis;

/// What one run is asked to do.
#[derive(Debug, Clone)]
pub struct RunSpec {
    pub topic: String,
    pub max_turns: usize,
    pub max_attempts: usize,
    pub exhaustion: Exhaustion,
    /// Call the LLM judge after the static rules (`--no-judge` turns it off).
    pub judge: bool,
}

/// Results and owner controls, fed to [`Session::handle`]. Results carry (turn, attempt) so a
/// late answer from a cancelled task is ignored.
#[derive(Debug, Clone)]
pub enum Event {
    Generated {
        turn: usize,
        attempt: usize,
        text: String,
        stats: GenStats,
    },
    GenerationFailed {
        turn: usize,
        attempt: usize,
        error: String,
    },
    StaticJudged {
        turn: usize,
        attempt: usize,
        verdict: Verdict,
        keywords: Vec<String>,
        /// The analysis the rules ran on, passed along so later re-judging never redoes it.
        analysis: Arc<Analysis>,
    },
    LlmJudged {
        turn: usize,
        attempt: usize,
        outcome: JudgeOutcome,
    },
    Pause,
    Resume,
    Stop,
    /// An owner instruction for the next turn whose first attempt has not been asked for yet;
    /// it stays in every attempt of that turn until the turn is committed.
    Inject(String),
    /// Regenerate this turn; later turns are dropped and the run goes on from it.
    Regenerate {
        turn: usize,
    },
    /// While held: commit this attempt of the current turn.
    Choose {
        attempt: usize,
    },
}

/// What the driver must do or report, in order.
#[derive(Debug, Clone)]
pub enum Effect {
    TurnStarted {
        turn: usize,
        speaker: String,
    },
    Generate {
        turn: usize,
        speaker: String,
        attempt: usize,
        prompt: Prompt,
        guidance: Vec<String>,
    },
    /// The first token arrived: the attempt exists now (persist it).
    AttemptStarted {
        turn: usize,
        speaker: String,
        attempt: usize,
        guidance: Vec<String>,
        prompt_hash: String,
    },
    StaticJudge {
        turn: usize,
        speaker: String,
        attempt: usize,
        text: String,
    },
    LlmJudge {
        turn: usize,
        speaker: String,
        attempt: usize,
        text: String,
        partner_last: Option<String>,
    },
    AttemptDone(Box<AttemptRecord>),
    AttemptFailed {
        turn: usize,
        attempt: usize,
        error: String,
    },
    AttemptCancelled {
        turn: usize,
        attempt: usize,
        /// Every character that arrived before the stop (kept in the store).
        text: String,
    },
    TurnCommitted(Box<TurnRecord>),
    /// Said once per run, early: the last `rejected` attempts were all rejected (RETRY) — the
    /// model may be unsuitable for these personas; `doctor` tells more.
    Unsuitable {
        rejected: usize,
    },
    /// Every attempt failed and the policy is `hold`: waiting for Choose or Regenerate.
    Held {
        turn: usize,
        attempts: Vec<usize>,
    },
    Paused,
    Resumed,
    /// Committed turns from this one on were dropped (regeneration).
    Truncated {
        from_turn: usize,
    },
    /// Drop the in-flight generation or judge task.
    Cancel,
    RunDone {
        status: RunEnd,
        error: Option<String>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    NotStarted,
    Running,
    Paused,
    Held,
    Done(RunEnd),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Generating,
    StaticJudging,
    LlmJudging,
}

/// The attempt in flight.
#[derive(Debug, Clone)]
pub struct Current {
    pub turn: usize,
    pub attempt: usize,
    pub speaker: String,
    pub phase: Phase,
    /// Streamed so far (the final text replaces it on `Generated`).
    pub text: String,
    pub started: bool,
    pub guidance: Vec<String>,
    pub prompt_hash: String,
    /// The instruction parts of this attempt's prompt, for the `prompt_echo` rule.
    pub scaffold: Arc<Vec<String>>,
    stats: GenStats,
    verdict: Option<(Verdict, Vec<String>)>,
    analysis: Option<Arc<Analysis>>,
}

impl Current {
    /// The generation's measurements (set once the reply is complete).
    pub fn stats(&self) -> &GenStats {
        &self.stats
    }
}

/// A committed turn and the state just before it, so regeneration can roll back.
#[derive(Debug, Clone)]
struct Committed {
    record: TurnRecord,
    topic_before: TopicState,
    carry_before: Carry,
}

pub struct Session {
    spec: RunSpec,
    duo: DuoConfig,
    rules: RuleSet,
    state: State,
    turn: usize,
    /// Attempts of the current turn since its last (re)generation request.
    cycle: Vec<AttemptRecord>,
    /// Highest attempt number used per turn (index turn-1); numbering never repeats.
    attempt_numbers: Vec<usize>,
    current: Option<Current>,
    committed: Vec<Committed>,
    topic: TopicState,
    /// Guidance from committed WARN lines for later turns (duo-talk dropped it).
    carry: Carry,
    owner: Option<Owner>,
    pause_requested: bool,
    waiting_to_generate: bool,
    /// Per-speaker world text (scene + filtered vault context); absent → the scene alone.
    worlds: std::collections::BTreeMap<String, String>,
    ladders: std::collections::BTreeMap<String, Vec<String>>,
    /// Attempts rejected in a row (any turn), and whether the run said it looks unsuitable.
    rejected_streak: usize,
    warned_unsuitable: bool,
}

/// Rejected attempts in a row after which a run says the model may be unsuitable.
pub const UNSUITABLE_STREAK: usize = 8;

/// The line the workbench and headless mode show for [`Effect::Unsuitable`].
pub fn unsuitable_message(rejected: usize) -> String {
    format!(
        "{rejected} of the last {rejected} attempts rejected — the model may be unsuitable for these personas: `kakeai doctor` checks it; a larger model, or --attempts 1 to stop wasting regenerations"
    )
}

mod carry;
mod flow;
mod rebuild;

pub use carry::Carry;
use carry::Owner;

impl Session {
    pub fn new(spec: RunSpec, duo: DuoConfig, rules: RuleSet) -> Session {
        Session {
            spec,
            duo,
            rules,
            state: State::NotStarted,
            turn: 1,
            cycle: Vec::new(),
            attempt_numbers: Vec::new(),
            current: None,
            committed: Vec::new(),
            topic: TopicState::default(),
            carry: Carry::default(),
            owner: None,
            pause_requested: false,
            waiting_to_generate: false,
            worlds: Default::default(),
            ladders: Default::default(),
            rejected_streak: 0,
            warned_unsuitable: false,
        }
    }

    pub fn spec(&self) -> &RunSpec {
        &self.spec
    }
    pub fn rules(&self) -> &RuleSet {
        &self.rules
    }
    pub fn duo(&self) -> &DuoConfig {
        &self.duo
    }
    /// Sets what each speaker is told of the world from the next prompt on.
    pub fn set_worlds(&mut self, worlds: std::collections::BTreeMap<String, String>) {
        self.worlds = worlds;
    }
    /// Each speaker's world from the vault's `work` (the scene, then her filtered context) and
    /// its lighter rungs, from the next prompt on: what a run under that vault tells her.
    pub fn use_work(&mut self, work: &crate::vault::Work) {
        let speakers: Vec<String> = self.rules.data.characters.keys().cloned().collect();
        let ids: Vec<&str> = speakers.iter().map(String::as_str).collect();
        self.worlds = crate::vault::shared::worlds(work, &self.duo.world, &ids);
        let drop = &crate::llm::budget::Priorities::builtin().vault_drop_levels;
        self.ladders = crate::vault::shared::world_ladders(work, &self.duo.world, &ids, drop);
    }
    /// Lighter versions of each speaker's world (vault levels left out), for the token budget.
    pub fn set_world_ladders(&mut self, l: std::collections::BTreeMap<String, Vec<String>>) {
        self.ladders = l;
    }
    /// The lighter world sections for `speaker`, in the order the budget takes them.
    pub fn world_ladder_for(&self, speaker: &str) -> &[String] {
        self.ladders.get(speaker).map_or(&[], Vec::as_slice)
    }
    /// The world section `speaker` is told.
    pub fn world_for(&self, speaker: &str) -> &str {
        self.worlds.get(speaker).unwrap_or(&self.duo.world)
    }
    pub fn state(&self) -> State {
        self.state
    }
    pub fn turn(&self) -> usize {
        self.turn
    }
    pub fn current(&self) -> Option<&Current> {
        self.current.as_ref()
    }
    pub fn topic(&self) -> &TopicState {
        &self.topic
    }
    pub fn carry(&self) -> &Carry {
        &self.carry
    }
    /// Attempts of the current turn's current cycle.
    pub fn cycle(&self) -> &[AttemptRecord] {
        &self.cycle
    }
    /// Committed turns, oldest first (the conversation as shown and as the sisters hear it).
    pub fn committed(&self) -> impl Iterator<Item = &TurnRecord> {
        self.committed.iter().map(|c| &c.record)
    }

    /// The committed turns the Director judges the next line against: a RETRY line committed
    /// because the attempts ran out is left out (seed 001 §9).
    pub fn context(&self) -> impl Iterator<Item = &TurnRecord> {
        self.committed().filter(|r| is_accepted(&r.verdict))
    }

    /// The owner instruction for `turn`, if there is one.
    pub fn owner_for(&self, turn: usize) -> Option<&str> {
        self.owner
            .as_ref()
            .filter(|o| o.turn == turn)
            .map(|o| o.text.as_str())
    }

    /// やな (the configured first speaker) on odd turns, her partner on even ones.
    pub fn speaker_of(&self, turn: usize) -> String {
        let first = self
            .rules
            .character(&self.duo.first_speaker)
            .map(|c| c.id.clone())
            .unwrap_or_else(|| self.duo.first_speaker.clone());
        if turn % 2 == 1 {
            return first;
        }
        self.rules
            .character(&first)
            .map(|c| c.partner.clone())
            .unwrap_or(first)
    }

    pub fn start(&mut self) -> Vec<Effect> {
        if self.state != State::NotStarted {
            return Vec::new();
        }
        self.state = State::Running;
        self.begin_turn()
    }

    /// The per-token step, kept allocation-free apart from appending the text: returns the
    /// `AttemptStarted` effect on the first token of an attempt.
    pub fn on_token(&mut self, turn: usize, attempt: usize, delta: &str) -> Option<Effect> {
        let c = self.current.as_mut()?;
        if c.turn != turn || c.attempt != attempt || c.phase != Phase::Generating {
            return None;
        }
        c.text.push_str(delta);
        if c.started {
            return None;
        }
        c.started = true;
        Some(Effect::AttemptStarted {
            turn,
            speaker: c.speaker.clone(),
            attempt,
            guidance: c.guidance.clone(),
            prompt_hash: c.prompt_hash.clone(),
        })
    }

    /// The prompt for `speaker` and its instruction parts (for `prompt_echo`).
    fn prompt_for(&self, speaker: &str, guidance: &[String]) -> (Prompt, Vec<String>) {
        let history = self.prompt_history();
        let me = self.rules.character(speaker);
        let partner = me.and_then(|c| self.rules.character(&c.partner));
        match (me, partner) {
            (Some(me), Some(partner)) => {
                let input = PromptInput {
                    speaker: me,
                    partner,
                    topic: &self.spec.topic,
                    cfg: &self.duo,
                    world: self.world_for(speaker),
                    history: &history,
                    guidance,
                    owner: self.owner_for(self.turn),
                };
                (prompt::build(&input), prompt::scaffold(&input))
            }
            // The ruleset always defines both sisters; an edited one that does not still
            // gets a prompt rather than a panic.
            _ => (
                Prompt {
                    messages: Vec::new(),
                    dropped: 0,
                    chars: 0,
                    hash: String::new(),
                },
                Vec::new(),
            ),
        }
    }

    /// The conversation as later prompts carry it: a line committed as RETRY (the attempts ran
    /// out) is never told to the model as said — her fallback line stands in its place, or
    /// nothing when she has none. A withheld line already is her fallback line.
    fn prompt_history(&self) -> Vec<Line> {
        self.committed()
            .filter_map(|r| {
                let text = if r.verdict.status >= Status::Retry && !r.flags.withheld {
                    self.fallback_of(&r.speaker)
                } else {
                    r.text.clone()
                };
                (!text.trim().is_empty()).then(|| Line {
                    speaker: r.speaker.clone(),
                    text,
                })
            })
            .collect()
    }

    /// Her fallback line (`fallback` in her character file); empty when she has none.
    pub(super) fn fallback_of(&self, speaker: &str) -> String {
        self.rules
            .character(speaker)
            .map(|c| c.fallback.clone())
            .unwrap_or_default()
    }

    /// The partner's line the judge checks the connection to: the last line of the context.
    fn partner_last(&self, speaker: &str) -> Option<String> {
        self.context()
            .last()
            .filter(|r| r.speaker != speaker)
            .map(|r| r.text.clone())
    }

    fn is_current(&self, turn: usize, attempt: usize, phase: Phase) -> bool {
        self.current
            .as_ref()
            .is_some_and(|c| c.turn == turn && c.attempt == attempt && c.phase == phase)
    }
}

/// The verdict after the judge: its finding (if any) joins the static ones.
fn merge_judge(mut v: Verdict, outcome: &JudgeOutcome) -> Verdict {
    if let Some(f) = outcome.finding() {
        v.findings.push(f);
    }
    v.status = Verdict::status_of(&v.findings);
    v
}

fn is_accepted(v: &Verdict) -> bool {
    v.status < Status::Retry
}

#[cfg(test)]
#[path = "session_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "session_steer_tests.rs"]
mod steer_tests;

#[cfg(test)]
#[path = "session_leak_tests.rs"]
mod leak_tests;
