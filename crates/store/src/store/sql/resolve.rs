//! What a COMMIT whose answer was lost became: the pure decision behind
//! [`super::PgConn`]'s resolution, from what `txid_status` says about the transaction's id now
//! and whether the server is still the one that gave the id out.
//!
//! # Why the server's era matters
//!
//! Within one server lifetime `txid_status` is exact: ids carry their epoch (64 bits), are
//! handed out once each, and a committed or aborted status never changes. Across a crash it is
//! not: WAL still in the server's memory is lost, and an id handed to a transaction that left
//! no durable trace (and the sequence values it drew) is handed out again after recovery. Then
//! "committed" may be another transaction's commit under our id, and the ids our INSERTs
//! returned may belong to nobody or to someone else's rows. So "committed" counts only when
//! the server has not restarted since BEGIN; otherwise the outcome is unknown (never a
//! success). "Aborted" and "in the future" stay sound across a crash: had our commit become
//! durable, recovery would have replayed it, marked the id committed and moved the next id past
//! it, so the id could neither be aborted nor unused.
//!
//! The era is the postmaster's start time and the last checkpoint's position: a postmaster
//! restart changes the first; crash recovery without one (a server process crashed and the
//! postmaster reinitialised) ends with a checkpoint, which changes the second. An ordinary
//! checkpoint changes it too: a lost COMMIT across one is then unknown (safe, only rarer
//! acknowledgements). Without the era (a role that cannot read the checkpoint) a committed
//! status is unknown too.

/// What `txid_status` said about the id on a new connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Committed,
    Aborted,
    InProgress,
    /// NULL: too old for the server to remember.
    Forgotten,
    /// An error: the id is beyond anything the server has handed out.
    Future,
}

impl Status {
    /// `txid_status`'s text (None: NULL).
    pub fn parse(text: Option<&str>) -> Option<Status> {
        match text {
            Some("committed") => Some(Status::Committed),
            Some("aborted") => Some(Status::Aborted),
            Some("in progress") => Some(Status::InProgress),
            None => Some(Status::Forgotten),
            Some(_) => None,
        }
    }
}

/// The outcome, as far as it can be told.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Committed,
    /// Nothing of it committed, and nothing of it ever will: safe to run again.
    NotCommitted,
    /// Its old session may still be finishing it: ask again shortly.
    AskAgain,
    /// Cannot be told: not acknowledged, not run again.
    Unknown,
}

/// The verdict for `status`; `same_era`: the era read with the answer equals the one read at
/// BEGIN (both known).
pub fn verdict(status: Status, same_era: bool) -> Verdict {
    match (status, same_era) {
        (Status::Committed, true) => Verdict::Committed,
        (Status::Aborted | Status::Future, _) => Verdict::NotCommitted,
        (Status::InProgress, true) => Verdict::AskAgain,
        // After a restart an id in progress is someone else's; ours is over, but say nothing.
        (Status::InProgress | Status::Committed, false) | (Status::Forgotten, _) => {
            Verdict::Unknown
        }
    }
}

/// Whether two eras (None: could not be read) are known and equal.
pub fn same_era(at_begin: Option<&str>, now: Option<&str>) -> bool {
    matches!((at_begin, now), (Some(a), Some(b)) if a == b)
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: [Status; 5] = [
        Status::Committed,
        Status::Aborted,
        Status::InProgress,
        Status::Forgotten,
        Status::Future,
    ];

    #[test]
    fn a_success_needs_a_committed_status_from_the_same_era() {
        for status in ALL {
            for same in [true, false] {
                let v = verdict(status, same);
                assert_eq!(
                    v == Verdict::Committed,
                    status == Status::Committed && same,
                    "{status:?} same era {same}: {v:?}"
                );
            }
        }
    }

    #[test]
    fn every_status_in_both_eras_has_its_verdict() {
        use Verdict::*;
        let want = [
            (Status::Committed, [Committed, Unknown]),
            (Status::Aborted, [NotCommitted, NotCommitted]),
            (Status::InProgress, [AskAgain, Unknown]),
            (Status::Forgotten, [Unknown, Unknown]),
            (Status::Future, [NotCommitted, NotCommitted]),
        ];
        for (status, [same, changed]) in want {
            assert_eq!(verdict(status, true), same, "{status:?} same era");
            assert_eq!(
                verdict(status, false),
                changed,
                "{status:?} after a restart"
            );
        }
    }

    #[test]
    fn an_era_that_could_not_be_read_is_never_the_same() {
        let eras = [
            None,
            Some("2026-01-01 00:00:00+00 0/1500710"),
            Some("other"),
        ];
        for a in eras {
            for b in eras {
                assert_eq!(same_era(a, b), a.is_some() && a == b, "{a:?} {b:?}");
            }
        }
    }

    #[test]
    fn the_status_texts_parse_and_others_do_not() {
        assert_eq!(Status::parse(Some("committed")), Some(Status::Committed));
        assert_eq!(Status::parse(Some("aborted")), Some(Status::Aborted));
        assert_eq!(Status::parse(Some("in progress")), Some(Status::InProgress));
        assert_eq!(Status::parse(None), Some(Status::Forgotten));
        assert_eq!(Status::parse(Some("Committed")), None);
    }
}
