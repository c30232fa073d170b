//! The chat pipeline's steps, written once (issue 23) and driven by the workbench's chat mode
//! (`tui::chat_run`) and the LINE bot (`serve::pipeline`): the safety layers on the masked
//! message (Layer 4 within a time limit when one is given), the pattern for banter, her line
//! from the model with her vault view of the world, and the judgement of a line. What differs
//! between the two drivers — where tokens go, how long they may wait, what they store — stays
//! with them; the steps and their wording do not.

use std::time::Duration;

use super::prompt::{self, Setting};
use super::verdict::Checks;
use crate::director::{Character, RuleSet};
use crate::llm::{Client, LlmConfig};
use crate::patterns as pat;
use crate::safety::{ClientLlm, Judgment, SafetyRules, Sister, UserContext};
use crate::store::{StoreError, StoreHandle};
use crate::text::Analyzer;
use crate::vault::SharedVault;

/// What the steps need, borrowed from the driver's services.
pub struct Engine<'a> {
    pub rules: &'a RuleSet,
    pub safety: &'a SafetyRules,
    pub analyzer: &'a dyn Analyzer,
    pub llm: &'a LlmConfig,
    pub vault: Option<&'a SharedVault>,
    pub scene: &'a str,
}

/// Her line from the model.
#[derive(Debug, Clone, Default)]
pub struct Generated {
    pub text: String,
    /// The prompt's instruction parts (for `prompt_echo`).
    pub scaffold: Vec<String>,
    /// What happened on the way, for the trace (a stream that fell back, a cut reply).
    pub notes: Vec<String>,
}

impl<'a> Engine<'a> {
    /// Her partner (herself when the rules name none).
    pub fn partner(&self, me: &Character) -> Character {
        self.rules
            .character(&me.partner)
            .cloned()
            .unwrap_or_else(|| me.clone())
    }

    /// The judgement of a line (`chat::verdict`): the Director, prompt_echo, L5 and the leak
    /// review.
    pub fn checks(&self) -> Checks<'a> {
        Checks {
            rules: self.rules,
            analyzer: self.analyzer,
            safety: self.safety,
            vault: self.vault,
        }
    }

    /// Layers 1–4 on the masked message. Layer 4 asks the model when Layers 1–3 raised
    /// something; past `limit` it counts as failed and the static result of Layers 1–3 stands
    /// (the safety pipeline's rule for a failed L4) — never an open pass.
    pub async fn safety(
        &self,
        text: &str,
        sister: Sister,
        ctx: &UserContext,
        limit: Option<Duration>,
    ) -> Judgment {
        let judge = &self.safety.judge;
        let Ok(client) = Client::new(self.llm.clone()) else {
            return judge.judge(text, sister, ctx);
        };
        let staged = judge.stage(text, sister, ctx);
        let Some(messages) = judge.l4_messages(&staged) else {
            return judge.finish_skipped(staged, crate::safety::L4Skip::NoLlm);
        };
        let llm = ClientLlm { client };
        let ask = crate::safety::ContextLlm::ask(&llm, messages, judge.policy().temperature);
        let reply = match limit {
            None => ask.await,
            Some(limit) => match tokio::time::timeout(limit, ask).await {
                Ok(r) => r,
                Err(_) => Err(crate::safety::L4CallError {
                    message: format!(
                        "no answer within the {:.0} s answer budget",
                        limit.as_secs_f64()
                    ),
                    endpoint_down: false,
                }),
            },
        };
        judge.finish_with(staged, reply)
    }

    /// She answers `text` in character, with her vault view of the world and the same token
    /// budget as duo runs (her oldest exchanges go first); tokens go to `on_token` as they
    /// come. A reply cut by the token limit keeps its last finished sentence.
    pub async fn generate(
        &self,
        me: &Character,
        text: &str,
        history: &[(String, String)],
        setting: Setting,
        on_token: &mut (dyn FnMut(&str) + Send),
    ) -> Result<Generated, String> {
        let partner = self.partner(me);
        let world = prompt::world(me, self.vault, self.scene);
        let (system, scaffold) = prompt::system(me, &partner, &world, setting);
        let lighter = match self.vault {
            Some(v) => prompt::lighter(me, &partner, &v.get().1, self.scene, setting),
            None => Vec::new(),
        };
        let messages = prompt::messages(system, history, text);
        let client = Client::new(self.llm.clone()).map_err(|e| e.to_string())?;
        let done =
            crate::duo::backend::fitted_stream_with(&client, messages, &lighter, on_token).await?;
        let mut notes = Vec::new();
        if let Some(why) = &done.fallback_reason {
            notes.push(format!(
                "streaming gave up, one non-stream call answered: {why}"
            ));
        }
        let mut out = done.text;
        if done.finish == crate::llm::Finish::Length {
            let (kept, dropped) = crate::duo::cut::to_last_sentence(&out, &self.llm.trim_chars);
            notes.push(format!(
                "token limit: the reply was cut; kept up to its last finished sentence, dropped 「{dropped}」"
            ));
            out = kept;
        }
        Ok(Generated {
            text: out.trim().to_string(),
            scaffold,
            notes,
        })
    }
}

/// A pattern chosen for banter, with its rank and the trace line that says why.
#[derive(Debug, Clone)]
pub struct Chosen {
    pub pattern: pat::Pattern,
    pub rank: String,
    pub trace: String,
}

/// The pattern for banter: one on trial (cold start), else seed 000 §6.3's best match of this
/// sister with success ≥ 0.7. `Ok(None)`: none qualifies (the model answers).
pub async fn best_pattern(
    store: &StoreHandle,
    who: pat::Character,
    text: &str,
) -> Result<Option<Chosen>, StoreError> {
    let message = text.to_string();
    store
        .call(move |s| {
            let q = pat::best::BestQuery::new(who, &message);
            let Some(c) = pat::cold::choose(s.db(), &q).map_err(crate::store::invalid)? else {
                return Ok(None);
            };
            let rank = pat::db::scored(s.db(), c.found.pattern.pattern_id)
                .map(|sp| sp.rank.as_str().to_string())
                .map_err(crate::store::invalid)?;
            let trace = pattern_trace(&c);
            Ok(Some(Chosen {
                pattern: c.found.pattern,
                rank,
                trace,
            }))
        })
        .await
}

/// One trace line for a chosen pattern.
pub fn pattern_trace(c: &pat::cold::Choice) -> String {
    let m = &c.found;
    let p = &m.pattern;
    if c.trial {
        format!(
            "pattern #{} on trial (cold start): used {} · {}/{} successes · bound {:.2} ≥ 0.70",
            p.pattern_id,
            p.used_count,
            p.success_count,
            p.success_count + p.failure_count,
            pat::cold::upper_bound(p.success_count, p.failure_count)
        )
    } else {
        format!(
            "pattern #{} ({} → {}): success {:.0}% · likes {:.0}% · used {} · relevance {:.2}",
            p.pattern_id,
            p.user_message_type,
            p.bot_response_type.as_str(),
            p.success_rate * 100.0,
            p.like_rate * 100.0,
            p.used_count + 1,
            m.relevance
        )
    }
}
