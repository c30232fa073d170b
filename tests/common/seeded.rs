//! The tests' one seeded generator (fastrand), for generated variants: the same seed gives the
//! same cases on every machine, so a failure names a seed that reproduces it.

use std::time::Duration;

pub struct Gen(fastrand::Rng);

impl Gen {
    pub fn new(seed: u64) -> Gen {
        Gen(fastrand::Rng::with_seed(seed))
    }

    /// A number in `0..n` (0 when n is 0).
    pub fn next(&mut self, n: u64) -> u64 {
        if n == 0 { 0 } else { self.0.u64(..n) }
    }

    /// True `percent` times in a hundred.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.next(100) < percent
    }

    /// A duration in `[lo_ms, hi_ms)`.
    pub fn between_ms(&mut self, lo_ms: u64, hi_ms: u64) -> Duration {
        Duration::from_millis(lo_ms + self.next(hi_ms.saturating_sub(lo_ms)))
    }

    /// One of `items`.
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.next(items.len() as u64) as usize]
    }
}
