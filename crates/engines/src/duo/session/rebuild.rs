//! A session rebuilt from a stored run's committed turns 1…t−1, so turn t can be generated again
//! facing exactly the conversation the stored line faced (issue 15, paired comparison). Each
//! stored line goes through the same commit step a live run uses (`settle`): the topic state,
//! hook depth and carried guidance move the way they moved when the run was made.

use super::*;

impl Session {
    /// A session whose turns 1…`prior.len()` are `prior` (each committed line with its stored
    /// verdict and keywords, and its turn flags), waiting to start turn `prior.len() + 1`:
    /// [`Session::start`] asks for its first attempt. Owner instructions are not replayed.
    pub fn rebuilt(
        spec: RunSpec,
        duo: DuoConfig,
        rules: RuleSet,
        prior: Vec<(AttemptRecord, TurnFlags)>,
    ) -> Session {
        let mut s = Session::new(spec, duo, rules);
        for (n, (mut a, flags)) in prior.into_iter().enumerate() {
            let turn = n + 1;
            a.turn = turn;
            s.turn = turn;
            s.attempt_numbers.resize(turn, 0);
            s.attempt_numbers[turn - 1] = a.attempt.max(1);
            s.cycle = vec![a];
            s.settle(0, flags);
        }
        s.cycle.clear();
        s.turn = s.committed.len() + 1;
        // A fresh numbering for the turn to generate: its attempts are new.
        s.attempt_numbers.resize(s.turn, 0);
        s.attempt_numbers[s.turn - 1] = 0;
        s
    }
}
