//! A stored run as the workbench shows it: every attempt with its verdict, judge scores and
//! guidance, the committed one marked, and the reviewer's marks in force (👍/👎, override,
//! notes — undos applied). Pure: the record comes from `Store::load_run`.

use std::collections::BTreeMap;

use super::view::{AttemptView, Phase, Review, RunState, RunView, TurnView};
use crate::director::Verdict;
use crate::director::finding::ToneScore;
use crate::duo::RunEnd;
use crate::duo::records::{GenStats, TurnFlags};
use crate::duo::topic::DepthStep;
use crate::store::review::{Mark, fold};
use crate::store::{AttemptRow, AttemptState, RunRecord, RunStatus};
use crate::text::analyzer::AnalyzerKind;

/// The verdict an attempt was stored with. Imported attempts carry a status but no verdict:
/// they get one with that status and no findings (ruleset "stored"), so badges and the queue
/// still see it; a verdict that does not parse is shown as that stand-in too (fail closed: the
/// status stays, nothing is invented).
fn verdict_of(a: &AttemptRow) -> Option<Verdict> {
    if let Some(v) = a
        .verdict
        .as_ref()
        .and_then(|v| serde_json::from_value::<Verdict>(v.clone()).ok())
    {
        return Some(v);
    }
    a.status.map(|status| Verdict {
        status,
        findings: Vec::new(),
        tone: ToneScore::default(),
        lines: 0,
        sentences: 0,
        topics: 0,
        ruleset: "stored".into(),
        analyzer: AnalyzerKind::Fallback,
    })
}

fn attempt_view(a: &AttemptRow) -> AttemptView {
    let text = a.text.clone().unwrap_or_default();
    AttemptView {
        attempt: a.attempt as usize,
        phase: match a.state {
            AttemptState::Done => Phase::Reviewed,
            AttemptState::Failed => Phase::Failed(a.error.clone().unwrap_or_default()),
            AttemptState::Cancelled | AttemptState::Streaming => Phase::Cancelled,
        },
        verdict: verdict_of(a),
        judge: a
            .judge
            .as_ref()
            .and_then(|j| serde_json::from_value(j.clone()).ok()),
        guidance: a
            .guidance
            .as_deref()
            .map(|g| g.lines().map(str::to_string).collect())
            .unwrap_or_default(),
        stats: GenStats {
            tokens: a.tokens.unwrap_or(0),
            first_token_ms: a.first_token_ms,
            latency_ms: a.latency_ms.unwrap_or(0),
            ..GenStats::default()
        },
        live_counts: (0, 0),
        counted_len: text.len(),
        text,
        analysis: None,
        live: None,
    }
}

/// An attempt row for a committed line whose attempt is not in the store (older imports).
fn stand_in(turn: u32, speaker: &str, text: &str, status: crate::director::Status) -> AttemptRow {
    AttemptRow {
        id: 0,
        turn,
        speaker: speaker.to_string(),
        attempt: 1,
        state: AttemptState::Done,
        text: Some(text.to_string()),
        status: Some(status),
        verdict: None,
        judge: None,
        judge_raw: None,
        guidance: None,
        prompt_hash: None,
        started_at: String::new(),
        first_token_ms: None,
        latency_ms: None,
        tokens: None,
        error: None,
        origin: None,
        fallback: None,
    }
}

fn new_turn(turn: u32, speaker: &str) -> TurnView {
    TurnView {
        turn: turn as usize,
        speaker: speaker.to_string(),
        attempts: Vec::new(),
        committed: None,
        said: None,
        flags: TurnFlags::default(),
        hook: None,
        depth: 0,
        step: None,
        review: Review::default(),
    }
}

/// The run as reviewed. `reviewers` maps action ids to their reviewer (may be empty);
/// `on_branches` are attempts committed on a branch, shown there rather than on the main line
/// (unless the main line committed them too).
pub fn view_of(
    rec: &RunRecord,
    reviewers: &[(i64, Option<String>)],
    on_branches: &std::collections::BTreeSet<i64>,
) -> RunView {
    let mut turns: BTreeMap<u32, TurnView> = BTreeMap::new();
    let main: std::collections::BTreeSet<i64> =
        rec.turns.iter().filter_map(|t| t.attempt_id).collect();
    for a in rec
        .attempts
        .iter()
        .filter(|a| !on_branches.contains(&a.id) || main.contains(&a.id))
    {
        turns
            .entry(a.turn)
            .or_insert_with(|| new_turn(a.turn, &a.speaker))
            .attempts
            .push(attempt_view(a));
    }
    let no: BTreeMap<i64, u32> = rec.attempts.iter().map(|a| (a.id, a.attempt)).collect();
    for t in &rec.turns {
        let v = turns
            .entry(t.turn)
            .or_insert_with(|| new_turn(t.turn, &t.speaker));
        let idx = t
            .attempt_id
            .and_then(|id| no.get(&id))
            .and_then(|n| v.attempts.iter().position(|a| a.attempt == *n as usize));
        v.committed = match idx {
            Some(i) => Some(i),
            None => {
                // A committed line without its attempt (older imports): show the line itself.
                let n = v.attempts.len() as u32 + 1;
                let mut row = stand_in(t.turn, &t.speaker, &t.text, t.status);
                row.attempt = n;
                v.attempts.push(attempt_view(&row));
                Some(v.attempts.len() - 1)
            }
        };
        v.flags = t.flags;
        v.said = t.flags.withheld.then(|| t.text.clone());
        v.hook = t.hook.clone();
        v.depth = t.hook_depth.unwrap_or(0).min(u8::MAX as u32) as u8;
        v.step = Some(DepthStep::of(v.depth));
    }
    apply_marks(&mut turns, rec, reviewers);
    let r = &rec.run;
    let state = match r.status {
        RunStatus::Completed | RunStatus::Imported => RunState::Done(RunEnd::Completed, None),
        RunStatus::Stopped => RunState::Done(RunEnd::Stopped, None),
        RunStatus::Failed => RunState::Done(RunEnd::Failed, r.error.clone()),
        RunStatus::Interrupted => RunState::Done(RunEnd::Stopped, Some("interrupted".into())),
        RunStatus::Running => RunState::Done(
            RunEnd::Stopped,
            Some("still running in another process".into()),
        ),
    };
    RunView {
        run_id: Some(r.id),
        topic: r.topic.clone(),
        turns: turns.into_values().collect(),
        state,
        held: false,
    }
}

/// The reviewers' marks in force (👍/👎, override, notes) on the turns they were made on.
fn apply_marks(
    turns: &mut BTreeMap<u32, TurnView>,
    rec: &RunRecord,
    reviewers: &[(i64, Option<String>)],
) {
    let who: BTreeMap<i64, &str> = reviewers
        .iter()
        .filter_map(|(id, r)| Some((*id, r.as_deref()?)))
        .collect();
    let marks = fold(rec.actions.iter().filter_map(|a| {
        Some(Mark {
            turn: a.turn?,
            kind: a.kind,
            payload: &a.payload,
            reviewer: who.get(&a.id).copied(),
        })
    }));
    for (turn, m) in marks {
        if let Some(v) = turns.get_mut(&turn) {
            v.review.thumb = m.thumb;
            v.review.override_to = m.override_to;
            v.review.notes = m.notes;
            v.review.settle_stored();
        }
    }
}

/// Reads run `id` from the store as the workbench opens it (its view and its review log);
/// `turn` is the turn to select.
pub fn open(
    s: &crate::store::Store,
    id: i64,
    turn: Option<usize>,
) -> Result<super::queue::Opened, crate::store::StoreError> {
    let rec = s.load_run(id)?;
    let reviewers = s.reviewers(id)?;
    let who: BTreeMap<i64, String> = reviewers
        .iter()
        .filter_map(|(id, r)| Some((*id, r.clone()?)))
        .collect();
    let log = rec
        .actions
        .iter()
        .filter_map(|a| {
            Some((
                a.turn?,
                a.kind,
                a.payload.clone(),
                who.get(&a.id).cloned(),
                a.created_at.clone(),
            ))
        })
        .collect();
    // Branches: each turn with the attempt it committed (the regenerated turn's attempts are
    // all on the main line).
    let mut branches: Vec<super::branch::Branch> = Vec::new();
    let kept = s.branches(id)?;
    let on_branches = kept.iter().filter_map(|b| b.attempt_id).collect();
    for b in kept {
        if branches.len() < b.branch as usize {
            branches.push(super::branch::Branch {
                from_turn: b.turn as usize,
                turns: Vec::new(),
            });
        }
        let Some(br) = branches.last_mut() else {
            continue;
        };
        let mut v = new_turn(b.turn, &b.speaker);
        let row = b
            .attempt_id
            .and_then(|aid| rec.attempts.iter().find(|a| a.id == aid));
        let mut a = match row {
            Some(r) => attempt_view(r),
            None => attempt_view(&stand_in(b.turn, &b.speaker, &b.text, b.status)),
        };
        a.text = b.text.clone();
        v.attempts.push(a);
        v.committed = Some(0);
        br.turns.push(v);
    }
    Ok(super::queue::Opened {
        view: view_of(&rec, &reviewers, &on_branches),
        log,
        turn,
        branches,
    })
}
