//! The reviewer's marks on a turn and what the store has acknowledged of them.
//!
//! Every 👍/👎, override or feedback note is queued as a store write with its own ticket; the
//! turn shows ✓ only once *every* queued write of that turn has committed, and NOT saved as soon
//! as one of them failed (a later success never hides an earlier failure). Commits may arrive
//! in any order: a ticket is settled by identity, not by counting.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::director::Status;

/// Identifies one queued store write (unique within the process).
pub type SaveTicket = u64;

static NEXT_TICKET: AtomicU64 = AtomicU64::new(1);

/// What the turn's save mark shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SaveMark {
    /// Nothing was asked of the store for this turn.
    Nothing,
    /// At least one write is still waiting for its commit.
    Pending,
    /// Every queued write committed.
    Saved,
    /// At least one write failed (the first reason).
    Failed(String),
}

#[derive(Debug, Clone, Default)]
pub struct Review {
    pub thumb: Option<bool>,
    pub override_to: Option<Status>,
    pub notes: usize,
    /// Writes queued for this turn that the store has not answered yet.
    pending: Vec<SaveTicket>,
    /// Writes the store committed.
    committed: usize,
    /// The first write the store refused, and why.
    failed: Option<String>,
}

impl Review {
    /// Records a new write for this turn; pass the ticket along with the write.
    pub fn queue(&mut self) -> SaveTicket {
        let t = NEXT_TICKET.fetch_add(1, Ordering::Relaxed);
        self.pending.push(t);
        t
    }

    /// Settles `ticket` if it belongs to this turn (returns whether it did).
    pub fn settle(
        &mut self,
        ticket: SaveTicket,
        result: &Result<(), crate::tui::error::UiError>,
    ) -> bool {
        let Some(i) = self.pending.iter().position(|&t| t == ticket) else {
            return false;
        };
        self.pending.swap_remove(i);
        match result {
            Ok(()) => self.committed += 1,
            Err(e) => {
                self.failed.get_or_insert_with(|| e.to_string());
            }
        }
        true
    }

    pub fn mark(&self) -> SaveMark {
        if let Some(e) = &self.failed {
            SaveMark::Failed(e.clone())
        } else if !self.pending.is_empty() {
            SaveMark::Pending
        } else if self.committed > 0 {
            SaveMark::Saved
        } else {
            SaveMark::Nothing
        }
    }

    /// Blind mode: only this reviewer's own marks are shown; a turn only someone else marked
    /// shows no ✓ (nothing of hers is saved there), while her own pending or failed writes
    /// still show.
    pub fn keep_only_own(
        &mut self,
        thumb: Option<bool>,
        override_to: Option<Status>,
        notes: usize,
    ) {
        self.thumb = thumb;
        self.override_to = override_to;
        self.notes = notes;
        let own = thumb.is_some() || override_to.is_some() || notes > 0;
        if !own && self.pending.is_empty() && self.failed.is_none() {
            self.committed = 0;
        }
    }

    /// Marks read back from the store: committed already (✓ when there is a mark at all).
    pub fn settle_stored(&mut self) {
        self.pending.clear();
        self.failed = None;
        let any = self.thumb.is_some() || self.override_to.is_some() || self.notes > 0;
        self.committed = usize::from(any);
    }

    /// Every acknowledged action of this turn is in the store (and there was one).
    pub fn saved(&self) -> bool {
        self.mark() == SaveMark::Saved
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Seeded, so orderings vary per seed.
    fn rng(seed: u64) -> impl FnMut(usize) -> usize {
        crate::test_rng::below(seed)
    }

    #[test]
    fn nothing_queued_shows_no_mark() {
        assert_eq!(Review::default().mark(), SaveMark::Nothing);
    }

    #[test]
    fn a_foreign_ticket_is_not_settled_here() {
        let mut a = Review::default();
        let mut b = Review::default();
        let ta = a.queue();
        let tb = b.queue();
        assert!(!a.settle(tb, &Ok(())));
        assert_eq!(a.mark(), SaveMark::Pending);
        assert!(a.settle(ta, &Ok(())));
        assert!(!a.settle(ta, &Ok(())), "a ticket settles once");
        assert!(a.saved() && !b.saved());
    }

    /// Several saves queued (some queued after earlier ones committed), commits arriving in
    /// every kind of order, sometimes one failing: ✓ only when all committed and none failed,
    /// NOT saved from the failure on, pending otherwise.
    #[test]
    fn the_check_mark_waits_for_every_queued_save_of_the_turn() {
        for seed in 0..3000u64 {
            let mut pick = rng(seed);
            let total = 1 + pick(6);
            let failing = (pick(3) == 0).then(|| pick(total));
            let mut r = Review::default();
            let mut queued: Vec<(usize, SaveTicket)> = Vec::new();
            let mut next = 0;
            let mut settled = 0;
            let mut failed_seen = false;
            while settled < total {
                // Either queue the next save (the reviewer acts again) or let one commit.
                let queue_now = next < total && (queued.is_empty() || pick(2) == 0);
                if queue_now {
                    queued.push((next, r.queue()));
                    next += 1;
                } else {
                    let (n, t) = queued.swap_remove(pick(queued.len()));
                    let res = if failing == Some(n) {
                        failed_seen = true;
                        Err(crate::tui::error::UiError::Store("disk I/O error".into()))
                    } else {
                        Ok(())
                    };
                    assert!(r.settle(t, &res));
                    settled += 1;
                }
                let expect = if failed_seen {
                    SaveMark::Failed("disk I/O error".into())
                } else if !queued.is_empty() {
                    SaveMark::Pending
                } else {
                    SaveMark::Saved
                };
                assert_eq!(
                    r.mark(),
                    expect,
                    "seed {seed}: total {total}, failing {failing:?}"
                );
                assert_eq!(
                    r.saved(),
                    !failed_seen && queued.is_empty(),
                    "seed {seed}: ✓ drawn while a save was uncommitted or failed"
                );
            }
        }
    }
}
