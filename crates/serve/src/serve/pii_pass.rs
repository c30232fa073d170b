//! The PII second opinion on the bot's path (issue 26 §1, seed 003 §6). The webhook masks a
//! message with the rules before it is stored and acknowledged; a worker then asks the model
//! about the stored (rule-masked) text — never the original, which is not kept — and stores
//! the union. It runs once per message (`pii_check` records it, so a restart does not ask
//! again) and before anything reads the text for a model or for pattern learning.
//!
//! Fail closed (`[pii] llm = "fail-closed"`, the default): a message the model could not check
//! is stored as `failed`; it is never put in a model's prompt (her fallback line answers it,
//! marked for review; as history it is a placeholder), and the operator's log says why.

use std::time::Duration;

use super::Services;
use super::store::{self, UserLine};
use crate::safety::pii::{self, PiiLlmMode};

/// `pii_check` of a message the model checked.
pub const CHECKED: &str = "llm";
/// `pii_check` of a message the model could not check (fail closed).
pub const FAILED: &str = "failed";
/// `pii_check` of a message the model could not check, used anyway (`fail-open`).
pub const OPEN: &str = "open";
/// What a model sees in a message's place when it could not be checked.
pub const PLACEHOLDER: &str = "［確認できなかったメッセージ］";

/// Runs the second opinion on `user` (when on and not yet run), stores the outcome and returns
/// the message as it now stands. Store errors are errors; model failures are an outcome.
pub async fn check(
    svc: &Services,
    mut user: UserLine,
    trace: &mut Vec<String>,
) -> Result<UserLine, String> {
    let mode = svc.cfg.pii.llm;
    if mode == PiiLlmMode::Off || !user.pii_check.is_empty() {
        return Ok(user);
    }
    let limit = Duration::from_secs_f64(
        svc.cfg
            .pii
            .llm_seconds
            .min(svc.cfg.answer_budget_seconds / 2.0),
    );
    let before = pii::already_masked(&user.text_masked);
    // Asked as fail-closed so a failure is always seen; the mode decides what it means.
    let strict = PiiLlmMode::FailClosed;
    let (after, flag) = pii::second::ask(&svc.llm, before.clone(), strict, limit).await;
    if flag.is_some() {
        super::metrics::inc(&svc.metrics.pii_check_failures);
    }
    let outcome = match &flag {
        Some(why) => {
            let open = mode == PiiLlmMode::FailOpen;
            trace.push(if open {
                format!("PII second opinion: {why} (fail-open: the rules' result is used)")
            } else {
                format!("PII second opinion: {why}")
            });
            svc.log.write(
                "pii-unchecked",
                &format!(
                    "msg={} chat={}: the PII second opinion failed ({why}); {}",
                    user.id,
                    super::oplog::short_id(&user.channel_id),
                    unchecked_note(mode)
                ),
            );
            if open { OPEN } else { FAILED }
        }
        None => CHECKED,
    };
    let grew = after.items.len() > before.items.len() || after.masked_text != before.masked_text;
    if grew {
        let kinds: Vec<String> = after
            .items
            .iter()
            .map(|i| i.kind.label().to_string())
            .collect();
        trace.push(format!(
            "PII second opinion masked more: {}",
            kinds.join("、")
        ));
        user.text_masked = after.masked_text.clone();
        let (id, text) = (user.id, after.masked_text);
        svc.store
            .call(move |s| store::set_pii_check(s, id, Some((&text, &kinds)), outcome))
            .await
    } else {
        let id = user.id;
        svc.store
            .call(move |s| store::set_pii_check(s, id, None, outcome))
            .await
    }
    .map_err(|e| e.to_string())?;
    user.pii_check = outcome.to_string();
    Ok(user)
}

/// What a failed second opinion meant, naming the setting that decided it (`[pii] llm` in the
/// serve config) and the other choices, so the operator's log says where to change it.
pub fn unchecked_note(mode: PiiLlmMode) -> &'static str {
    match mode {
        PiiLlmMode::FailOpen => {
            "[pii] llm = \"fail-open\": the rules' masking is used as it is and the message \
             goes on to the model (\"fail-closed\" keeps it from any model)"
        }
        _ => {
            "[pii] llm = \"fail-closed\": the message is not sent to a model, her fallback \
             answers, marked for review (\"fail-open\" would use the rules' masking alone; \
             \"off\" asks no model)"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_store_shows_models_the_same_placeholder() {
        assert!(store::MODEL_TEXT.contains(PLACEHOLDER));
        assert!(store::MODEL_TEXT.contains(&format!("'{FAILED}'")));
    }

    #[test]
    fn a_check_time_that_is_not_a_time_is_refused() {
        let mut cfg = crate::serve::config::ServeConfig::defaults();
        assert!(cfg.check().is_ok());
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            cfg.pii.llm_seconds = bad;
            let e = cfg.check().unwrap_err();
            assert!(e.contains("llm_seconds"), "{e}");
        }
    }
}
