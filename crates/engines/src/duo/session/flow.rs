//! The session's transitions: generate → static judge → LLM judge → commit, retry or hold,
//! and the owner's controls.

use super::*;

impl Session {
    pub fn handle(&mut self, event: Event) -> Vec<Effect> {
        if let State::Done(_) = self.state {
            // A finished run only reacts to a regeneration request.
            if !matches!(event, Event::Regenerate { .. }) {
                return Vec::new();
            }
        }
        match event {
            Event::Generated {
                turn,
                attempt,
                text,
                stats,
            } => {
                if !self.is_current(turn, attempt, Phase::Generating) {
                    return Vec::new();
                }
                let Some(c) = self.current.as_mut() else {
                    return Vec::new();
                };
                c.text = text;
                c.stats = stats;
                c.phase = Phase::StaticJudging;
                let mut out = Vec::new();
                if !c.started {
                    // A non-stream reply has no first token: the attempt starts now.
                    c.started = true;
                    out.push(Effect::AttemptStarted {
                        turn,
                        speaker: c.speaker.clone(),
                        attempt,
                        guidance: c.guidance.clone(),
                        prompt_hash: c.prompt_hash.clone(),
                    });
                }
                out.push(Effect::StaticJudge {
                    turn,
                    speaker: c.speaker.clone(),
                    attempt,
                    text: c.text.clone(),
                });
                out
            }
            Event::GenerationFailed {
                turn,
                attempt,
                error,
            } => {
                if !self.is_current(turn, attempt, Phase::Generating) {
                    return Vec::new();
                }
                self.current = None;
                // A prompt that cannot fit the context is a state with its message (the run
                // stops there), not a failed run (issue 13 §4).
                let end = if crate::llm::budget::is_overflow(&error) {
                    RunEnd::Stopped
                } else {
                    RunEnd::Failed
                };
                self.state = State::Done(end);
                vec![
                    Effect::AttemptFailed {
                        turn,
                        attempt,
                        error: error.clone(),
                    },
                    Effect::RunDone {
                        status: end,
                        error: Some(error),
                    },
                ]
            }
            Event::StaticJudged {
                turn,
                attempt,
                verdict,
                keywords,
                analysis,
            } => {
                if !self.is_current(turn, attempt, Phase::StaticJudging) {
                    return Vec::new();
                }
                if let Some(c) = self.current.as_mut() {
                    c.analysis = Some(analysis);
                }
                // The LLM judge is not asked when the rules already reject the line.
                if !self.spec.judge || verdict.status == Status::Retry {
                    return self.finish_attempt(verdict, keywords, None);
                }
                let Some(c) = self.current.as_mut() else {
                    return Vec::new();
                };
                c.phase = Phase::LlmJudging;
                c.verdict = Some((verdict, keywords));
                let (speaker, text) = (c.speaker.clone(), c.text.clone());
                let partner_last = self.partner_last(&speaker);
                vec![Effect::LlmJudge {
                    turn,
                    speaker,
                    attempt,
                    text,
                    partner_last,
                }]
            }
            Event::LlmJudged {
                turn,
                attempt,
                outcome,
            } => {
                if !self.is_current(turn, attempt, Phase::LlmJudging) {
                    return Vec::new();
                }
                let Some((verdict, keywords)) =
                    self.current.as_mut().and_then(|c| c.verdict.take())
                else {
                    return Vec::new();
                };
                let verdict = merge_judge(verdict, &outcome);
                self.finish_attempt(verdict, keywords, Some(outcome))
            }
            Event::Pause => match self.state {
                State::NotStarted => {
                    self.pause_requested = true;
                    Vec::new()
                }
                State::Running => {
                    self.pause_requested = true;
                    if self.current.is_none() {
                        self.state = State::Paused;
                        return vec![Effect::Paused];
                    }
                    Vec::new()
                }
                _ => Vec::new(),
            },
            Event::Resume => {
                self.pause_requested = false;
                if self.state != State::Paused {
                    return Vec::new();
                }
                self.state = State::Running;
                let mut out = vec![Effect::Resumed];
                if self.waiting_to_generate {
                    self.waiting_to_generate = false;
                    out.extend(self.generate());
                }
                out
            }
            Event::Stop => {
                self.state = State::Done(RunEnd::Stopped);
                let mut out = self.cancel_current();
                out.push(Effect::RunDone {
                    status: RunEnd::Stopped,
                    error: None,
                });
                out
            }
            Event::Inject(text) => {
                let t = text.trim();
                // The turn whose first prompt is still to be built: this one while it waits
                // (paused before generating), otherwise the next.
                let asked = self.current.is_some() || !self.cycle.is_empty();
                let turn = if asked || self.state == State::Held {
                    self.turn + 1
                } else {
                    self.turn
                };
                self.owner = (!t.is_empty()).then(|| Owner {
                    turn,
                    text: t.to_string(),
                });
                Vec::new()
            }
            Event::Regenerate { turn } => self.regenerate(turn),
            Event::Choose { attempt } => {
                if self.state != State::Held {
                    return Vec::new();
                }
                let Some(i) = self.cycle.iter().position(|a| a.attempt == attempt) else {
                    return Vec::new();
                };
                self.state = State::Running;
                let flags = TurnFlags {
                    exhausted: true,
                    held: true,
                    ..TurnFlags::default()
                };
                self.commit(i, flags)
            }
        }
    }

    pub(super) fn begin_turn(&mut self) -> Vec<Effect> {
        self.cycle.clear();
        let mut out = vec![Effect::TurnStarted {
            turn: self.turn,
            speaker: self.speaker_of(self.turn),
        }];
        out.extend(self.generate());
        out
    }

    /// The next attempt of the current turn, or a pause if one was asked for.
    fn generate(&mut self) -> Vec<Effect> {
        if self.pause_requested {
            self.state = State::Paused;
            self.waiting_to_generate = true;
            return vec![Effect::Paused];
        }
        let turn = self.turn;
        let speaker = self.speaker_of(turn);
        if self.attempt_numbers.len() < turn {
            self.attempt_numbers.resize(turn, 0);
        }
        self.attempt_numbers[turn - 1] += 1;
        let attempt = self.attempt_numbers[turn - 1];
        let mut guidance = match self.cycle.last() {
            Some(prev) => policy::retry_guidance(&prev.verdict, turn, prev.attempt),
            None => Vec::new(),
        };
        if let Some(own) = self.carry.own.get(&speaker) {
            guidance.extend(own.iter().cloned());
        }
        guidance.extend(self.carry.next.iter().cloned());
        if let Some(g) = self
            .rules
            .character(&speaker)
            .and_then(|c| self.topic.guidance(c))
        {
            guidance.push(g);
        }
        let (prompt, scaffold) = self.prompt_for(&speaker, &guidance);
        self.current = Some(Current {
            turn,
            attempt,
            speaker: speaker.clone(),
            phase: Phase::Generating,
            text: String::new(),
            started: false,
            guidance: guidance.clone(),
            prompt_hash: prompt.hash.clone(),
            scaffold: Arc::new(scaffold),
            stats: GenStats::default(),
            verdict: None,
            analysis: None,
        });
        vec![Effect::Generate {
            turn,
            speaker,
            attempt,
            prompt,
            guidance,
        }]
    }

    fn finish_attempt(
        &mut self,
        verdict: Verdict,
        keywords: Vec<String>,
        judge: Option<JudgeOutcome>,
    ) -> Vec<Effect> {
        let Some(c) = self.current.take() else {
            return Vec::new();
        };
        let record = AttemptRecord {
            turn: c.turn,
            speaker: c.speaker,
            attempt: c.attempt,
            text: c.text,
            verdict,
            judge,
            guidance: c.guidance,
            prompt_hash: c.prompt_hash,
            stats: c.stats,
            keywords,
            analysis: c.analysis,
        };
        let accepted = is_accepted(&record.verdict);
        self.cycle.push(record.clone());
        let mut out = vec![Effect::AttemptDone(Box::new(record))];
        self.rejected_streak = if accepted {
            0
        } else {
            self.rejected_streak + 1
        };
        if self.rejected_streak >= UNSUITABLE_STREAK && !self.warned_unsuitable {
            self.warned_unsuitable = true;
            out.push(Effect::Unsuitable {
                rejected: self.rejected_streak,
            });
        }
        if accepted {
            out.extend(self.commit(self.cycle.len() - 1, TurnFlags::default()));
            return out;
        }
        let n = self.cycle.len();
        let futile =
            n >= 2 && policy::is_futile(&self.cycle[n - 2].verdict, &self.cycle[n - 1].verdict);
        if n < self.spec.max_attempts && !futile {
            out.extend(self.generate());
            return out;
        }
        match policy::choose(&self.cycle, self.spec.exhaustion) {
            Some(i) => out.extend(self.commit(
                i,
                TurnFlags {
                    exhausted: true,
                    futile,
                    ..TurnFlags::default()
                },
            )),
            None => {
                self.state = State::Held;
                out.push(Effect::Held {
                    turn: self.turn,
                    attempts: self.cycle.iter().map(|a| a.attempt).collect(),
                });
            }
        }
        out
    }

    /// Commits attempt `i` of the cycle: the only place topic state and carried guidance move.
    /// A RETRY line (committed because the attempts ran out) leaves the topic state alone and
    /// carries only the critique of itself, to its speaker's next turn (seed 001 §9).
    fn commit(&mut self, i: usize, flags: TurnFlags) -> Vec<Effect> {
        let record = self.settle(i, flags);
        let mut out = vec![Effect::TurnCommitted(Box::new(record))];
        if self.turn >= self.spec.max_turns {
            self.state = State::Done(RunEnd::Completed);
            out.push(Effect::RunDone {
                status: RunEnd::Completed,
                error: None,
            });
            return out;
        }
        self.turn += 1;
        out.extend(self.begin_turn());
        out
    }

    /// The state part of a commit (topic, carried guidance, history, owner instruction), shared
    /// by [`Self::commit`] and the rebuild of a stored run's prefix (`rebuild.rs`).
    pub(super) fn settle(&mut self, i: usize, flags: TurnFlags) -> TurnRecord {
        let a = self.cycle[i].clone();
        let topic_before = self.topic.clone();
        let carry_before = self.carry.clone();
        let name = self
            .rules
            .character(&a.speaker)
            .map(|c| c.display_name.clone())
            .unwrap_or_else(|| a.speaker.clone());
        let carried = policy::intervention(&a.verdict, a.turn, &name);
        if is_accepted(&a.verdict) {
            self.topic.commit(&a.keywords);
        }
        self.carry.next = carried.next;
        self.carry.own.insert(a.speaker.clone(), carried.own);
        // A line the leak review rejected is never committed as said: her fallback line is,
        // marked; the rejected text stays only as its attempt (issue: never-leak whole path).
        let withheld = policy::leak_rejected(&a.verdict);
        let text = if withheld {
            self.fallback_of(&a.speaker)
        } else {
            a.text
        };
        let record = TurnRecord {
            turn: a.turn,
            speaker: a.speaker,
            attempt: a.attempt,
            text,
            verdict: a.verdict,
            flags: TurnFlags { withheld, ..flags },
            hook: self.topic.hook.clone(),
            depth: self.topic.depth,
            step: self.topic.step(),
        };
        self.committed.push(Committed {
            record: record.clone(),
            topic_before,
            carry_before,
        });
        if self.owner.as_ref().is_some_and(|o| o.turn <= a.turn) {
            self.owner = None;
        }
        record
    }

    fn cancel_current(&mut self) -> Vec<Effect> {
        match self.current.take() {
            Some(c) if c.started => vec![
                Effect::Cancel,
                Effect::AttemptCancelled {
                    turn: c.turn,
                    attempt: c.attempt,
                    text: c.text,
                },
            ],
            Some(_) => vec![Effect::Cancel],
            None => Vec::new(),
        }
    }

    fn regenerate(&mut self, turn: usize) -> Vec<Effect> {
        if turn == 0 || turn > self.committed.len() + 1 || turn > self.spec.max_turns {
            return Vec::new();
        }
        let mut out = self.cancel_current();
        if turn <= self.committed.len() {
            let c = &self.committed[turn - 1];
            self.topic = c.topic_before.clone();
            self.carry = c.carry_before.clone();
            self.committed.truncate(turn - 1);
            out.push(Effect::Truncated { from_turn: turn });
        }
        self.turn = turn;
        self.state = State::Running;
        self.pause_requested = false;
        self.waiting_to_generate = false;
        out.extend(self.begin_turn());
        out
    }
}
