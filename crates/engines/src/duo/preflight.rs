//! The first turn of a run as the run itself builds and fits it, with nothing sent: the
//! session makes the prompts (persona, the speaker's world from the vault, the topic, the
//! retry instruction) and `backend::fit_to` fits them, so `kakeai doctor` can say before a
//! run whether its first line — and a retry of it — fits the model's context, and what
//! fitting would leave out.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::backend;
use super::config::{DuoConfig, Exhaustion};
use super::fitting::{self, FitReport};
use super::prompt;
use super::records::GenStats;
use super::session::{Effect, Event, RunSpec, Session};
use crate::director::{Finding, RuleId, RuleSet, Status, ToneScore, Verdict};
use crate::llm::Message;
use crate::llm::budget::Overflow;
use crate::text::{Analysis, AnalyzerKind};
use crate::vault::Work;

/// What a run is made of, as `kakeai run` loads it.
#[derive(Debug, Clone)]
pub struct Setup {
    pub rules: RuleSet,
    pub duo: DuoConfig,
    /// The story vault (None: the scene text alone, as `--no-vault`).
    pub work: Option<Work>,
    pub topic: String,
}

/// One request of the first turn, before fitting.
#[derive(Debug, Clone)]
pub struct Planned {
    /// 1: the first attempt; 2: its retry.
    pub attempt: usize,
    pub speaker: String,
    /// Her display name (やな), for what is said about the request.
    pub name: String,
    pub messages: Vec<Message>,
    /// The system message with less vault context, rung by rung.
    pub lighter: Vec<String>,
    /// History left out when the prompt was built.
    pub built: usize,
    rungs: Vec<BTreeMap<u8, usize>>,
    guidance: usize,
}

impl Planned {
    /// What the run would leave out of this request to fit `budget_chars` (an empty report:
    /// nothing), or the overflow that stops it.
    pub fn fit(&self, budget_chars: usize) -> Result<FitReport, Overflow> {
        let mut messages = self.messages.clone();
        let fitted = backend::fit_to(&mut messages, budget_chars, &self.lighter)?;
        Ok(fitting::report(
            self.built,
            fitted,
            &self.rungs,
            self.guidance,
        ))
    }

    /// The prompt's characters before fitting.
    pub fn chars(&self) -> usize {
        crate::llm::budget::chars_of(&self.messages)
    }
}

/// The first turn's first attempt and its retry, as the run's session builds them. The retry
/// is the one the leak review asks for (its instruction is worded the same every time: it
/// never names what was said).
pub fn first_turn(setup: &Setup) -> Vec<Planned> {
    let spec = RunSpec {
        topic: setup.topic.clone(),
        max_turns: 1,
        max_attempts: 2,
        exhaustion: Exhaustion::Best,
        judge: false,
    };
    let mut session = Session::new(spec, setup.duo.clone(), setup.rules.clone());
    if let Some(w) = &setup.work {
        session.use_work(w);
    }
    let mut out = Vec::new();
    let mut effects = session.start();
    for attempt in 1..=2 {
        let Some(p) = planned(&session, &effects, setup.work.as_ref()) else {
            break;
        };
        out.push(p);
        if attempt == 2 {
            break;
        }
        let text = String::new();
        session.handle(Event::Generated {
            turn: 1,
            attempt,
            text: text.clone(),
            stats: GenStats::default(),
        });
        effects = session.handle(Event::StaticJudged {
            turn: 1,
            attempt,
            verdict: leak_verdict(),
            keywords: Vec::new(),
            analysis: Arc::new(Analysis::new(&text)),
        });
    }
    out
}

/// The `Generate` effect among `effects`, as the driver would send it.
fn planned(session: &Session, effects: &[Effect], work: Option<&Work>) -> Option<Planned> {
    effects.iter().find_map(|e| match e {
        Effect::Generate {
            attempt,
            speaker,
            prompt,
            guidance,
            ..
        } => Some(Planned {
            attempt: *attempt,
            speaker: speaker.clone(),
            name: session
                .rules()
                .character(speaker)
                .map_or_else(|| speaker.clone(), |c| c.display_name.clone()),
            messages: prompt.messages.clone(),
            lighter: prompt::lighter_systems(
                &prompt.messages,
                session.world_for(speaker),
                session.world_ladder_for(speaker),
            ),
            built: prompt.dropped,
            rungs: work.map_or_else(Vec::new, |w| fitting::rungs_of(w, speaker)),
            guidance: fitting::repeated(guidance),
        }),
        _ => None,
    })
}

/// A line the leak review rejected.
fn leak_verdict() -> Verdict {
    let (message, suggestion) = crate::vault::leak::neutral_messages();
    let findings = vec![Finding::new(
        RuleId::Leak,
        Status::Retry,
        message,
        suggestion,
    )];
    Verdict {
        status: Verdict::status_of(&findings),
        findings,
        tone: ToneScore::default(),
        lines: 1,
        sentences: 1,
        topics: 0,
        ruleset: "doctor".into(),
        analyzer: AnalyzerKind::Fallback,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup(work: Option<Work>) -> Setup {
        Setup {
            rules: RuleSet::builtin().unwrap(),
            duo: DuoConfig::builtin().unwrap(),
            work,
            topic: "灯台".into(),
        }
    }

    #[test]
    fn the_retry_carries_the_instruction_and_is_longer() {
        for work in [None, Some(crate::vault::load::sample())] {
            let p = first_turn(&setup(work));
            assert_eq!(p.len(), 2);
            assert_eq!((p[0].attempt, p[1].attempt), (1, 2));
            assert_eq!(p[0].speaker, p[1].speaker);
            let last = |x: &Planned| x.messages.last().unwrap().content.clone();
            assert!(
                last(&p[1]).contains("採用されませんでした"),
                "{}",
                last(&p[1])
            );
            assert!(p[1].chars() > p[0].chars());
        }
    }

    #[test]
    fn fitting_gives_up_the_vault_before_overflowing() {
        let p = first_turn(&setup(Some(crate::vault::load::sample())));
        let first = &p[0];
        assert!(!first.lighter.is_empty(), "the sample has vault rungs");
        assert!(first.fit(first.chars()).unwrap().is_empty());
        let lost = first.fit(first.chars() - 1).unwrap();
        assert!(lost.lost_vault(), "{lost:?}");
        assert!(first.fit(10).is_err());
    }
}
