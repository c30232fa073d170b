//! Regenerate as a branch: the committed turns a regeneration rewinds are set aside in
//! `branches` (migration 007) in the same transaction that removes them from the main line, so
//! nothing acknowledged is dropped; a reopened run lists its branches.

use crate::p;

use super::{Store, StoreError, require_run};
use crate::director::Status;

/// One turn of a branch set aside.
#[derive(Debug, Clone, PartialEq)]
pub struct BranchTurn {
    pub branch: u32,
    pub turn: u32,
    pub speaker: String,
    pub attempt_id: Option<i64>,
    pub text: String,
    pub status: Status,
}

impl Store {
    /// Moves the committed turns from `from_turn` on into a new branch; returns its number
    /// (None when there was nothing to set aside).
    pub fn branch_off(&mut self, run_id: i64, from_turn: u32) -> Result<Option<u32>, StoreError> {
        self.transact(|tx| {
            require_run(tx, run_id)?;
            let n: u32 = tx.one(
                "SELECT COALESCE(MAX(branch), 0) + 1 FROM branches WHERE run_id = ?1",
                p![run_id],
            )?;
            let moved = tx.execute(
                "INSERT INTO branches (run_id, branch, turn, speaker, attempt_id, text, status,
                                       committed_at)
                 SELECT run_id, ?3, turn, speaker, attempt_id, text, status, committed_at
                 FROM turns WHERE run_id = ?1 AND turn >= ?2",
                p![run_id, from_turn, n],
            )?;
            tx.execute(
                "DELETE FROM turns WHERE run_id = ?1 AND turn >= ?2",
                p![run_id, from_turn],
            )?;
            Ok((moved > 0).then_some(n))
        })
    }

    /// The branches of a run, by branch then turn.
    pub fn branches(&self, run_id: i64) -> Result<Vec<BranchTurn>, StoreError> {
        Ok(self.db().query_map(
            "SELECT branch, turn, speaker, attempt_id, text, status FROM branches
             WHERE run_id = ?1 ORDER BY branch, turn",
            p![run_id],
            |r| {
                let s: String = r.get(5)?;
                Ok(BranchTurn {
                    branch: r.get(0)?,
                    turn: r.get(1)?,
                    speaker: r.get(2)?,
                    attempt_id: r.get(3)?,
                    text: r.get(4)?,
                    status: Status::parse(&s).unwrap_or(Status::Unscored),
                })
            },
        )?)
    }
}
