//! The interview state machine (seed 003 §1, §2, §7) as a pure core: the runner feeds it user
//! messages (already PII-masked) and model failures, and it says what comes next.
//!
//! - The turn limit is checked first: the `max_turns`-th user message ends the conversation
//!   with the closing message, whatever the state.
//! - `intro` stays while the user only gives the opening signal (はい, お願いします, 始めて …,
//!   assets: [`OPENING_SIGNALS`]), else moves to `enumerate`.
//! - `enumerate` moves to `recommend` once ≥ 3 items were enumerated (a message's items are its
//!   parts split at 、,・/ and line breaks) or a message contains an ending word (以上, それだけ,
//!   終わり, ない, 特にない — "contains", as the seed says).
//! - `recommend → choose → deepening` one user message each; `deepening` asks `max_deep`
//!   questions, then `summary_check`; the answer to the summary check ends it (`done`).
//! - Fallback (§7): `fallback_mode` is set and the three fixed questions are asked in order; the
//!   question number is the number of user posts since the fallback began; `[スキップ]` advances
//!   it but is never an enumerated item or an answer; after the third, the closing message.

use serde::Serialize;

use super::config::InterviewConfig;

pub const SKIP: &str = "[スキップ]";
pub const ENDING_WORDS: [&str; 5] = ["以上", "それだけ", "終わり", "ない", "特にない"];
pub const OPENING_SIGNALS: [&str; 10] = [
    "はい",
    "お願いします",
    "おねがいします",
    "始めて",
    "はじめて",
    "開始",
    "スタート",
    "start",
    "ok",
    "よろしく",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum State {
    Intro,
    Enumerate,
    Recommend,
    Choose,
    Deepening,
    SummaryCheck,
    Done,
    Fallback,
}

impl State {
    pub fn as_str(self) -> &'static str {
        match self {
            State::Intro => "intro",
            State::Enumerate => "enumerate",
            State::Recommend => "recommend",
            State::Choose => "choose",
            State::Deepening => "deepening",
            State::SummaryCheck => "summary_check",
            State::Done => "done",
            State::Fallback => "fallback",
        }
    }
}

/// Why a conversation finished.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Finish {
    /// The summary was checked.
    Completed,
    TurnLimit,
    /// The third fallback question was answered.
    FallbackDone,
}

/// What the sister says next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Next {
    /// Ask the model, with the behaviour prompt of the current state.
    Model,
    /// A fixed fallback question (1-based number).
    Fixed { question: usize, text: String },
    /// The closing message; the conversation is done.
    Finish { text: String, why: Finish },
}

#[derive(Debug, Clone)]
pub struct Machine {
    pub state: State,
    pub fallback_mode: bool,
    /// Every user post, [スキップ] included.
    pub user_turns: usize,
    /// Deepening answers so far.
    pub deep: usize,
    /// Enumerated items, in order (never [スキップ]).
    pub items: Vec<String>,
    /// Non-skip user answers after enumerate (the choice and the deepening answers).
    pub answers: Vec<String>,
    /// user_turns when the fallback began.
    fallback_from: usize,
    max_turns: usize,
    max_deep: usize,
    questions: [String; 3],
    closing: String,
}

fn is_skip(m: &str) -> bool {
    m.trim() == SKIP
}

/// The opening signal: a short message made only of a signal word and punctuation.
pub fn is_opening_signal(m: &str) -> bool {
    m.split(['、', ',', '。', '！', '!', '.', ' ', '　', '\n'])
        .map(|p| p.trim().to_lowercase())
        .filter(|p| !p.is_empty())
        .all(|p| {
            OPENING_SIGNALS
                .iter()
                .any(|s| p == *s || p == format!("{s}します") || p == format!("{s}ください"))
        })
}

pub fn has_ending_word(m: &str) -> bool {
    ENDING_WORDS.iter().any(|w| m.contains(w))
}

/// A message's enumerated items: its parts split at 、,，・/／ and line breaks.
pub fn items_of(m: &str) -> Vec<String> {
    if is_skip(m) {
        return Vec::new();
    }
    m.split(['、', ',', '，', '・', '/', '／', '\n'])
        .map(|p| p.trim().trim_end_matches(['。', '！', '？']).trim())
        .filter(|p| !p.is_empty())
        .map(str::to_string)
        .collect()
}

impl Machine {
    pub fn new(cfg: &InterviewConfig, fallback: bool) -> Machine {
        Machine {
            state: if fallback {
                State::Fallback
            } else {
                State::Intro
            },
            fallback_mode: fallback,
            user_turns: 0,
            deep: 0,
            items: Vec::new(),
            answers: Vec::new(),
            fallback_from: 0,
            max_turns: cfg.max_turns,
            max_deep: cfg.max_deep,
            questions: cfg.fallback_questions.clone(),
            closing: cfg.closing_message.clone(),
        }
    }

    /// The sister's first line.
    pub fn start(&mut self) -> Next {
        if self.fallback_mode {
            self.fixed()
        } else {
            Next::Model
        }
    }

    pub fn is_done(&self) -> bool {
        self.state == State::Done
    }

    fn finish(&mut self, why: Finish) -> Next {
        self.state = State::Done;
        Next::Finish {
            text: self.closing.clone(),
            why,
        }
    }

    /// The fallback question for the posts since the fallback began, or the end.
    fn fixed(&mut self) -> Next {
        let n = self.user_turns - self.fallback_from;
        match self.questions.get(n) {
            Some(q) => Next::Fixed {
                question: n + 1,
                text: q.clone(),
            },
            None => self.finish(Finish::FallbackDone),
        }
    }

    /// The model failed (after the client's retry and fallback): switch to the fixed questions.
    pub fn model_failed(&mut self) -> Next {
        if self.state == State::Done {
            return Next::Finish {
                text: self.closing.clone(),
                why: Finish::Completed,
            };
        }
        if !self.fallback_mode {
            self.fallback_mode = true;
            self.fallback_from = self.user_turns;
            self.state = State::Fallback;
        }
        self.fixed()
    }

    /// One user message (PII-masked). Returns what the sister does next.
    pub fn user(&mut self, m: &str) -> Next {
        if self.state == State::Done {
            return Next::Finish {
                text: self.closing.clone(),
                why: Finish::Completed,
            };
        }
        self.user_turns += 1;
        if self.user_turns >= self.max_turns {
            return self.finish(Finish::TurnLimit);
        }
        if self.fallback_mode {
            if !is_skip(m) {
                self.answers.push(m.trim().to_string());
            }
            return self.fixed();
        }
        self.state = match self.state {
            State::Intro if is_opening_signal(m) => State::Intro,
            State::Intro => State::Enumerate,
            State::Enumerate => {
                self.items.extend(items_of(m));
                self.after_enumerate(m)
            }
            State::Recommend => State::Choose,
            State::Choose => {
                if !is_skip(m) {
                    self.answers.push(m.trim().to_string());
                }
                self.deep = 0;
                State::Deepening
            }
            State::Deepening => {
                if !is_skip(m) {
                    self.answers.push(m.trim().to_string());
                }
                self.deep += 1;
                if self.deep >= self.max_deep {
                    State::SummaryCheck
                } else {
                    State::Deepening
                }
            }
            State::SummaryCheck => return self.finish(Finish::Completed),
            State::Done | State::Fallback => unreachable!("handled above"),
        };
        // max_deep = 0: no deepening at all.
        if self.state == State::Deepening && self.max_deep == 0 {
            self.state = State::SummaryCheck;
        }
        Next::Model
    }

    fn after_enumerate(&self, m: &str) -> State {
        if self.items.len() >= 3 || (!is_skip(m) && has_ending_word(m)) {
            State::Recommend
        } else {
            State::Enumerate
        }
    }

    /// The enumerated item that the user mentions most across all their answers (ties: the
    /// first enumerated), for `{most_important}`.
    pub fn most_important(&self) -> Option<&str> {
        let mut best: Option<(&str, usize)> = None;
        for it in &self.items {
            let n = self
                .answers
                .iter()
                .chain(self.items.iter())
                .filter(|a| a.contains(it.as_str()))
                .count();
            if best.is_none_or(|(_, b)| n > b) {
                best = Some((it.as_str(), n));
            }
        }
        best.map(|(s, _)| s)
    }

    /// `{summary}`: the enumerated items and the later answers, as one line.
    pub fn summary(&self) -> String {
        let mut parts = Vec::new();
        if !self.items.is_empty() {
            parts.push(format!("困りごとは「{}」", self.items.join("」「")));
        }
        if let Some(c) = self.answers.first() {
            parts.push(format!("選んだのは「{c}」"));
        }
        for a in self.answers.iter().skip(1) {
            parts.push(format!("「{a}」"));
        }
        parts.join("、")
    }
}
