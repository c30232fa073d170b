//! The records of one turn, in each format, with their provenance; every item left out is
//! counted with its reason.

use std::io::Write;

use serde_json::{Value, json};

use super::lines::{TurnLines, Version};
use super::{DatasetError, Options, Tally, prompt_of};
use crate::director::Status;
use crate::store::{RunRecord, Store};

pub(crate) struct Ctx<'a> {
    /// `--redact-vault`: the run's vault words, replaced in every field but `metadata`.
    pub redactor: Option<super::redact::Redactor>,
    pub store: &'a Store,
    pub rec: &'a RunRecord,
    pub o: &'a Options,
    pub tally: &'a mut Tally,
    pub out: &'a mut dyn Write,
    /// Lines the leak review rejected in this run (see [`leak_rejected_texts`]).
    pub leaked: Vec<String>,
    /// How each text is masked (the rules, or the texts as the model's second opinion left them).
    pub mask: &'a dyn super::mask::TextMask,
}

/// What replaces a leak-rejected line wherever it appears in a prompt's history.
pub const WITHHELD: &str = "（秘密に触れたため伏せた台詞）";

/// Did the leak review reject this attempt (a `leak` finding with RETRY in its verdict)?
pub fn leak_rejected(a: &crate::store::AttemptRow) -> bool {
    a.verdict
        .as_ref()
        .and_then(|v| v.get("findings"))
        .and_then(Value::as_array)
        .is_some_and(|fs| {
            fs.iter()
                .any(|f| f["rule"] == "leak" && f["status"].as_str() == Some("RETRY"))
        })
}

/// The texts of the run's leak-rejected attempts and of turns committed from them, longest
/// first (so a longer line is withheld before a shorter one inside it).
pub fn leak_rejected_texts(rec: &RunRecord) -> Vec<String> {
    let ids: Vec<i64> = rec
        .attempts
        .iter()
        .filter(|a| leak_rejected(a))
        .map(|a| a.id)
        .collect();
    let mut texts: Vec<String> = rec
        .attempts
        .iter()
        .filter(|a| ids.contains(&a.id))
        .filter_map(|a| a.text.clone())
        .chain(
            rec.turns
                .iter()
                .filter(|t| t.attempt_id.is_some_and(|i| ids.contains(&i)))
                .map(|t| t.text.clone()),
        )
        .filter(|t| !t.trim().is_empty())
        .collect();
    texts.sort_by_key(|t| std::cmp::Reverse(t.chars().count()));
    texts.dedup();
    texts
}

/// Who decided a line, and how.
#[derive(Debug, Clone, PartialEq)]
pub enum Judged {
    Director(Status),
    Reviewers(Vec<String>),
    /// A lead's gold label (adjudication): it comes before every other label.
    Gold(super::lines::Gold),
}

impl Judged {
    fn json(&self) -> Value {
        match self {
            Judged::Director(s) => json!({"director": s.as_str()}),
            Judged::Reviewers(r) => json!({"reviewers": r}),
            Judged::Gold(g) => json!({"gold": {
                "label": if g.fine { "fine" } else { "not" },
                "queue": g.queue, "decided_by": g.by, "reason": g.reason,
            }}),
        }
    }

    fn source(&self) -> &'static str {
        match self {
            Judged::Director(_) => "director",
            Judged::Reviewers(_) => "reviewers",
            Judged::Gold(_) => "gold",
        }
    }
}

/// Fine or not, and by whom; None when undecided (a tie, too few reviewers, low agreement, a
/// verdict that is neither PASS nor RETRY, or the filters exclude the judge).
pub fn decide(v: &Version, o: &Options) -> Option<(bool, Judged)> {
    if !o.director_only
        && let Some(g) = &v.gold
    {
        return Some((g.fine, Judged::Gold(g.clone())));
    }
    if o.gold_only {
        return None;
    }
    let labels: Vec<(&String, bool)> = v
        .labels
        .iter()
        .filter(|(who, _)| o.reviewer.as_ref().is_none_or(|r| r == *who))
        .map(|(w, f)| (w, *f))
        .collect();
    if !o.director_only && !labels.is_empty() {
        if labels.len() < o.min_reviewers.max(1) {
            return None;
        }
        let fine = labels.iter().filter(|(_, f)| *f).count();
        let not = labels.len() - fine;
        if fine == not {
            return None;
        }
        let share = fine.max(not) as f64 / labels.len() as f64;
        if o.agreement_min.is_some_and(|a| share < a) {
            return None;
        }
        let names = labels.iter().map(|(w, _)| (*w).clone()).collect();
        return Some((fine > not, Judged::Reviewers(names)));
    }
    if o.reviewers_only || o.min_reviewers > 0 || o.reviewer.is_some() {
        return None;
    }
    match v.status {
        Status::Pass => Some((true, Judged::Director(Status::Pass))),
        Status::Retry => Some((false, Judged::Director(Status::Retry))),
        _ => None,
    }
}

impl Ctx<'_> {
    /// Was this line rejected by the leak review? Then it is only ever a rejected example.
    fn leaked(&self, id: Option<i64>) -> bool {
        id.and_then(|id| self.rec.attempts.iter().find(|a| a.id == id))
            .is_some_and(leak_rejected)
    }

    fn attempt_text(&self, id: i64) -> Option<&str> {
        self.rec
            .attempts
            .iter()
            .find(|a| a.id == id)
            .and_then(|a| a.text.as_deref())
    }

    /// Did an excluded rule fire (WARN or worse) on any of these attempts?
    fn excluded(&self, ids: &[Option<i64>]) -> bool {
        if self.o.exclude_rules.is_empty() {
            return false;
        }
        ids.iter().flatten().any(|id| {
            let Some(a) = self.rec.attempts.iter().find(|a| a.id == *id) else {
                return false;
            };
            let findings = a
                .verdict
                .as_ref()
                .and_then(|v| v.get("findings"))
                .and_then(Value::as_array);
            findings.is_some_and(|fs| {
                fs.iter().any(|f| {
                    let rule = f["rule"].as_str().unwrap_or_default();
                    let bad = matches!(f["status"].as_str(), Some("WARN" | "RETRY" | "MODIFY"));
                    bad && self.o.exclude_rules.iter().any(|r| r == rule)
                })
            })
        })
    }

    fn meta(&self, t: &TurnLines, extra: Value) -> Value {
        let mut m = json!({
            "run": self.rec.run.id,
            "turn": t.turn,
            "speaker": t.speaker,
            "ruleset_version": self.rec.run.ruleset_version,
            "model": self.rec.run.model,
        });
        if let (Some(o), Some(e)) = (m.as_object_mut(), extra.as_object()) {
            o.extend(e.clone());
        }
        m
    }

    /// Writes one record with personal data masked in every field but `metadata`.
    fn emit(&mut self, mut record: Value, source: &str, sister: &str) -> Result<(), DatasetError> {
        if let Some(o) = record.as_object_mut() {
            for (k, v) in o.iter_mut() {
                if k != "metadata" {
                    super::mask::value_with(v, self.mask);
                    if let Some(r) = &self.redactor {
                        r.value(v);
                    }
                }
            }
        }
        serde_json::to_writer(&mut *self.out, &record).map_err(std::io::Error::from)?;
        self.out.write_all(b"\n")?;
        self.tally.count(source, sister);
        Ok(())
    }

    /// The prompt for `attempt` (masked, then fitted to `max_prompt_tokens` and its size
    /// counted), or the item counted as skipped.
    fn prompt(&mut self, attempt: Option<i64>) -> Result<Option<Vec<Value>>, DatasetError> {
        match prompt_of(self.store, attempt, self.o.redact_vault)? {
            Ok(mut p) => {
                for m in &mut p {
                    if let Some(c) = m["content"].as_str() {
                        let mut c = c.to_string();
                        for t in &self.leaked {
                            c = c.replace(t.as_str(), WITHHELD);
                        }
                        // Masked before it is fitted and counted: a token ([氏名]) can be
                        // longer than what it hides, and the limit is on what is written.
                        m["content"] = Value::String(self.mask.text(&c));
                    }
                }
                let Some(p) = self.fitted(p) else {
                    return Ok(None);
                };
                let chars = p
                    .iter()
                    .map(|m| m["content"].as_str().unwrap_or_default().chars().count())
                    .sum::<usize>();
                let tokens = (chars as f64 * self.o.tokens_per_char).ceil() as usize;
                self.tally.prompt_tokens.push(tokens);
                Ok(Some(p))
            }
            Err(why) => {
                self.tally.skip(why);
                Ok(None)
            }
        }
    }

    /// `p` within `max_prompt_tokens`: its oldest history dropped as a run's prompt loses it
    /// (`llm::budget::fit_prioritised`: down to `keep_history` messages, then the rest); None
    /// (counted) when even the system message and her cue do not fit.
    fn fitted(&mut self, p: Vec<Value>) -> Option<Vec<Value>> {
        use crate::llm::{Message, Role, budget};
        let Some(max) = self.o.max_prompt_tokens else {
            return Some(p);
        };
        let role = |r: &Value| match r.as_str() {
            Some("system") => Some(Role::System),
            Some("user") => Some(Role::User),
            Some("assistant") => Some(Role::Assistant),
            _ => None,
        };
        let msgs: Option<Vec<Message>> = p
            .iter()
            .map(|m| {
                Some(Message {
                    role: role(&m["role"])?,
                    content: m["content"].as_str()?.to_string(),
                })
            })
            .collect();
        let Some(mut msgs) = msgs else {
            self.tally
                .skip("--max-prompt-tokens: a prompt message with a role a run never sends");
            return None;
        };
        let chars = budget::Ratio::new(self.o.tokens_per_char).chars_for(max);
        let keep = budget::Priorities::builtin().keep_history;
        match budget::fit_prioritised(&mut msgs, chars, &[], keep) {
            Ok(f) => {
                if f.dropped > 0 {
                    self.tally.trimmed += 1;
                    self.tally.trimmed_messages += f.dropped;
                }
                Some(
                    msgs.iter()
                        .map(|m| json!({"role": m.role.as_str(), "content": m.content}))
                        .collect(),
                )
            }
            Err(_) => {
                self.tally.skip(&format!(
                    "prompt over --max-prompt-tokens {max} even without its history"
                ));
                None
            }
        }
    }

    /// Reviewers who decided a record, for the card.
    fn judged_by(&mut self, judged: &Judged) {
        match judged {
            Judged::Reviewers(names) => self.tally.reviewers.extend(names.iter().cloned()),
            Judged::Gold(g) => {
                self.tally.reviewers.insert(g.by.clone());
                self.tally.gold += 1;
            }
            Judged::Director(_) => {}
        }
    }
}

fn assistant(text: &str) -> Value {
    json!([{"role": "assistant", "content": text}])
}

/// DPO pairs of one turn.
pub(crate) fn dpo(c: &mut Ctx<'_>, t: &TurnLines) -> Result<(), DatasetError> {
    if !c.o.reviewers_only && !c.o.gold_only && c.o.min_reviewers == 0 && c.o.reviewer.is_none() {
        for v in &t.versions {
            let usable = matches!(v.status, Status::Pass | Status::Warn);
            let reviewers_reject = !c.o.director_only && decide(v, c.o).is_some_and(|d| !d.0);
            if !usable || reviewers_reject || v.rejected.is_empty() || c.leaked(v.attempt_id) {
                continue;
            }
            for r in &v.rejected {
                let judged = Judged::Director(v.status);
                let text = c.attempt_text(*r).unwrap_or_default().to_string();
                pair(c, t, (*r, text), v, &judged)?;
            }
        }
    }
    if c.o.director_only {
        return Ok(());
    }
    let decided: Vec<(&Version, bool, Judged)> = t
        .versions
        .iter()
        .filter_map(|v| decide(v, c.o).map(|(f, j)| (v, f, j)))
        .filter(|(_, _, j)| matches!(j, Judged::Reviewers(_)))
        .collect();
    let leaked: Vec<bool> = decided.iter().map(|d| c.leaked(d.0.attempt_id)).collect();
    for (bad, _, _) in decided.iter().filter(|d| !d.1) {
        let good = decided.iter().zip(&leaked).filter(|(d, l)| d.1 && !**l);
        for ((good, _, judged), _) in good {
            let Some(bad_id) = bad.attempt_id else {
                c.tally.skip("line without a stored attempt");
                continue;
            };
            pair(c, t, (bad_id, bad.text.clone()), good, judged)?;
        }
    }
    Ok(())
}

/// One pair: the prompt is the rejected attempt's stored request.
fn pair(
    c: &mut Ctx<'_>,
    t: &TurnLines,
    (rejected_id, rejected): (i64, String),
    chosen: &Version,
    judged: &Judged,
) -> Result<(), DatasetError> {
    if rejected.trim().is_empty() || rejected.trim() == chosen.text.trim() {
        c.tally.skip("pair whose lines are the same or empty");
        return Ok(());
    }
    if c.excluded(&[Some(rejected_id), chosen.attempt_id]) {
        c.tally.skip("--exclude-rules");
        return Ok(());
    }
    let Some(prompt) = c.prompt(Some(rejected_id))? else {
        return Ok(());
    };
    let meta = c.meta(
        t,
        json!({"source": judged.source(), "chosen_attempt": chosen.attempt_id,
               "rejected_attempt": rejected_id, "judged_by": judged.json()}),
    );
    c.judged_by(judged);
    let record = json!({
        "prompt": prompt,
        "chosen": assistant(&chosen.text),
        "rejected": assistant(&rejected),
        "metadata": meta,
    });
    c.emit(record, judged.source(), &t.speaker)
}

/// KTO records of one turn: every decided version, and the Director's RETRY attempts.
pub(crate) fn kto(c: &mut Ctx<'_>, t: &TurnLines) -> Result<(), DatasetError> {
    for v in &t.versions {
        if let Some((label, judged)) = decide(v, c.o) {
            // A leak-rejected line is only ever a rejected example.
            let (label, judged) = if label && c.leaked(v.attempt_id) {
                (false, Judged::Director(Status::Retry))
            } else {
                (label, judged)
            };
            single(c, t, v.attempt_id, &v.text, label, &judged)?;
        }
        if c.o.reviewers_only || c.o.gold_only || c.o.min_reviewers > 0 || c.o.reviewer.is_some() {
            continue;
        }
        for r in &v.rejected {
            let text = c.attempt_text(*r).unwrap_or_default().to_string();
            single(
                c,
                t,
                Some(*r),
                &text,
                false,
                &Judged::Director(Status::Retry),
            )?;
        }
    }
    Ok(())
}

fn single(
    c: &mut Ctx<'_>,
    t: &TurnLines,
    attempt: Option<i64>,
    text: &str,
    label: bool,
    judged: &Judged,
) -> Result<(), DatasetError> {
    if text.trim().is_empty() {
        c.tally.skip("empty line");
        return Ok(());
    }
    if c.excluded(&[attempt]) {
        c.tally.skip("--exclude-rules");
        return Ok(());
    }
    let Some(prompt) = c.prompt(attempt)? else {
        return Ok(());
    };
    let meta = c.meta(
        t,
        json!({"source": judged.source(), "attempt": attempt, "judged_by": judged.json()}),
    );
    c.judged_by(judged);
    let record = json!({
        "prompt": prompt,
        "completion": assistant(text),
        "label": label,
        "metadata": meta,
    });
    c.emit(record, judged.source(), &t.speaker)
}

/// SFT: the committed line when it passed and no reviewer rejected it.
pub(crate) fn sft(c: &mut Ctx<'_>, t: &TurnLines) -> Result<(), DatasetError> {
    let Some(v) = t.versions.iter().find(|v| v.current) else {
        return Ok(());
    };
    if v.status != Status::Pass || v.labels.values().any(|fine| !fine) {
        return Ok(());
    }
    if c.leaked(v.attempt_id) {
        c.tally
            .skip("line the leak review rejected (never a completion)");
        return Ok(());
    }
    let judged = match decide(v, c.o) {
        Some((true, j)) => j,
        _ => return Ok(()),
    };
    if c.excluded(&[v.attempt_id]) {
        c.tally.skip("--exclude-rules");
        return Ok(());
    }
    let Some(mut messages) = c.prompt(v.attempt_id)? else {
        return Ok(());
    };
    c.judged_by(&judged);
    let meta = c.meta(
        t,
        json!({"source": judged.source(), "attempt": v.attempt_id, "judged_by": judged.json()}),
    );
    // prompt + completion: only her accepted line is trained (TRL's completion-only loss);
    // messages: every assistant line in them is, her earlier ones included.
    let record = if c.o.sft_prompt_completion {
        json!({"prompt": messages, "completion": assistant(&v.text), "metadata": meta})
    } else {
        messages.push(json!({"role": "assistant", "content": v.text}));
        json!({"messages": messages, "metadata": meta})
    };
    c.emit(record, judged.source(), &t.speaker)
}
