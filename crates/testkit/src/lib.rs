//! The unit tests' one seeded generator (fastrand, as `tests/common/seeded.rs` is for the
//! integration tests): the same seed gives the same generated cases on every machine, so a
//! failure names a seed that reproduces it. No test writes a generator of its own.

/// A seeded generator.
pub struct Rng(fastrand::Rng);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(fastrand::Rng::with_seed(seed))
    }

    /// A number in `0..n` (0 when n is 0).
    pub fn next(&mut self, n: u64) -> u64 {
        if n == 0 { 0 } else { self.0.u64(..n) }
    }

    /// An index in `0..n` (0 when n is 0).
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 { 0 } else { self.0.usize(..n) }
    }

    /// Any 64-bit number.
    pub fn word(&mut self) -> u64 {
        self.0.u64(..)
    }

    /// One of `xs`, copied.
    pub fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len())]
    }
}

/// `n ↦ an index in 0..n` (0 when n is 0), seeded.
pub fn below(seed: u64) -> impl FnMut(usize) -> usize {
    let mut r = Rng::new(seed);
    move |n| r.below(n)
}

/// `n ↦ a number in 0..n`, seeded.
pub fn below_u64(seed: u64) -> impl FnMut(u64) -> u64 {
    let mut r = Rng::new(seed);
    move |n| r.next(n)
}

/// Any 64-bit numbers, seeded.
pub fn words(seed: u64) -> impl FnMut() -> u64 {
    let mut r = Rng::new(seed);
    move || r.word()
}
