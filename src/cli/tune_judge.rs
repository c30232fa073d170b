//! `kakeai tune --judge`: the 5-aspect judge learns the team's gold labels as few-shot
//! examples. Per fold (by run), examples come from the training runs only; the configured
//! model is asked again about each held-out line without and with them, and the gain is
//! reported as the rule search's is (κ per fold, flips, a sign test). Only a gain that holds
//! up becomes a proposal (examples chosen from all gold labels), written as `[judge] examples`.

use crate::director::RuleSet;
use crate::director::Status;
use crate::duo::backend::Backend;
use crate::llm::{Client, LlmConfig};
use crate::tune::examples::{self, Answers, ExampleEvidence, FoldPlan};
use crate::tune::rejudge::Turn;
use crate::tune::search::{Report, Settings};

const UNREACHABLE: &str =
    "--judge: the model did not answer the judge (is the server up? see `kakeai doctor`)";

/// Asks the judge on the planned held-out lines and adds the evidence (and the proposal, when
/// it holds up) to `report`. Exit 3 when the model cannot be reached at all.
pub fn examples(
    args: &super::tune::TuneArgs,
    rules: &RuleSet,
    turns: &[Turn],
    settings: &Settings,
    report: &mut Report,
) -> Result<(), (i32, String)> {
    let llm = LlmConfig::load()
        .map_err(|e| (2, e.to_string()))?
        .with_flags(args.endpoint.clone(), args.model.clone(), args.api);
    let client = Client::new(llm).map_err(|e| (2, e.to_string()))?;
    let world = crate::duo::DuoConfig::load()
        .map_err(|e| (2, e.to_string()))?
        .world;
    let known = |sp: &str| rules.character(sp).is_some();
    let plans = examples::plan(
        turns,
        settings.folds,
        &rules.data.judge,
        &settings.examples,
        &known,
    );
    if plans.iter().all(|p| p.examples.is_empty()) {
        say!(
            "kakeai tune: --judge: no gold-labelled line can be an example (adjudicate a queue first)"
        );
    }
    let rt = crate::duo::driver::runtime().map_err(|e| (2, e.to_string()))?;
    let backend = Backend::Live(client);
    let (answers, failed, total) = rt.block_on(ask_all(&backend, rules, &world, turns, &plans))?;
    if total > 0 && failed == total {
        return Err((3, UNREACHABLE.into()));
    }
    if failed > 0 {
        say!(
            "kakeai tune: --judge: {failed} of {total} judge requests failed (counted as not usable)"
        );
    }
    let ev = examples::score(turns, &plans, &answers, settings.alpha);
    let all = examples::labelled(turns, &known);
    let chosen = examples::choose(turns, &all, &rules.data.judge, &settings.examples);
    let now = rules.data.judge.examples.len();
    if let Some(p) = examples::proposal(turns, chosen, now, &ev, &plans, &answers) {
        report.proposals.push(p);
    }
    report.judge_examples = Some(ev);
    Ok(())
}

/// The judge's status on every held-out line of every fold that has examples, without and with
/// them; plus how many calls failed to reach the model, of how many.
async fn ask_all(
    backend: &Backend,
    rules: &RuleSet,
    world: &str,
    turns: &[Turn],
    plans: &[FoldPlan],
) -> Result<(Vec<Answers>, usize, usize), (i32, String)> {
    let n: usize = plans
        .iter()
        .filter(|p| !p.examples.is_empty())
        .map(|p| p.held_out.len())
        .sum();
    let (mut out, mut failed, mut total, mut done) = (Vec::new(), 0, 0, 0);
    for plan in plans {
        let mut answers = Answers::new();
        if !plan.examples.is_empty() {
            let mut data = (*rules.data).clone();
            data.judge.examples = plan.examples.clone();
            let with = RuleSet::from_data(data).map_err(|e| (2, e.to_string()))?;
            for &i in &plan.held_out {
                let mut status = [Status::Unscored; 2];
                for (k, r) in [rules, &with].into_iter().enumerate() {
                    let (s, reached) = ask(backend, r, world, turns, i).await;
                    status[k] = s;
                    total += 1;
                    failed += usize::from(!reached);
                }
                answers.push((i, status[0], status[1]));
                done += 1;
                if done == 1 && failed == total {
                    return Err((3, UNREACHABLE.into()));
                }
                if done % 20 == 0 {
                    say!("kakeai tune: --judge: {done}/{n} held-out lines asked");
                }
            }
        }
        out.push(answers);
    }
    Ok((out, failed, total))
}

/// One judge request about `turns[i]` under `rules`: its status, and whether the model answered.
async fn ask(
    backend: &Backend,
    rules: &RuleSet,
    world: &str,
    turns: &[Turn],
    i: usize,
) -> (Status, bool) {
    let t = &turns[i];
    let partner_last = examples::partner_before(turns, i).map(|p| p.text.as_str());
    let messages = crate::duo::judging::judge_messages(
        rules,
        &t.topic,
        world,
        &t.speaker,
        &t.text,
        partner_last,
    );
    let outcome = backend
        .judge(t.turn as usize, 0, messages, &rules.data.judge)
        .await;
    let reached = !outcome.raw.is_empty();
    (outcome.status, reached)
}

/// The human table's lines for the judge's examples.
pub fn table(e: &ExampleEvidence) -> String {
    let mut s = format!(
        "judge few-shot examples, asked again on {} held-out lines: κ {:.3} → {:.3}  (spread {:.3}; folds {})\n\
         held-out lines flipped right/wrong: {}/{}  (sign test p = {:.2e}){}\n",
        e.asked,
        e.agreement_before,
        e.agreement_after,
        e.spread,
        e.fold_before
            .iter()
            .zip(&e.fold_after)
            .map(|(b, a)| format!("{b:.2}→{a:.2}"))
            .collect::<Vec<_>>()
            .join(" "),
        e.flipped_right,
        e.flipped_wrong,
        e.p_value,
        if e.holds_up {
            ""
        } else {
            "  — does not hold up"
        },
    );
    if e.folds_without_examples > 0 {
        s.push_str(&format!(
            "  {} fold(s) had no gold-labelled line to learn from (not measured)\n",
            e.folds_without_examples
        ));
    }
    s
}
