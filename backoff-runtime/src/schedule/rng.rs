//! The per-thread random number generator that jitter draws from.
//!
//! Each thread owns a small, fast generator (xoshiro256++ via rand's
//! `SmallRng`), seeded from the process's random hash keys (on
//! wasm32-unknown-unknown from `crypto.getRandomValues`) the first time it
//! is used. No lock is taken and nothing is held across an `.await`: each wait
//! borrows the generator for one draw.

use core::cell::RefCell;
use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;

use rand::SeedableRng;
use rand::rngs::SmallRng;

thread_local! {
    static THREAD_RNG: RefCell<SmallRng> = RefCell::new(SmallRng::seed_from_u64(fresh_seed()));
}

/// A seed that differs per thread and per process, from std's randomly keyed
/// hasher (no extra dependency, no system call of our own).
#[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
fn fresh_seed() -> u64 {
    RandomState::new().hash_one(std::thread::current().id())
}

/// A seed that differs per page and per process, from the platform's
/// `crypto.getRandomValues`. std's hasher keys are not random on
/// wasm32-unknown-unknown: every browser would draw the same jitter. Should
/// the platform refuse, the seed hashes the web clock's reading instead:
/// never a panic.
#[cfg(all(target_arch = "wasm32", target_os = "unknown"))]
fn fresh_seed() -> u64 {
    getrandom::u64().unwrap_or_else(|_| RandomState::new().hash_one(web_time::SystemTime::now()))
}

/// Reseeds this thread's generator.
#[cfg(any(test, feature = "test-util"))]
pub(crate) fn seed_thread(seed: u64) {
    THREAD_RNG.with(|rng| *rng.borrow_mut() = SmallRng::seed_from_u64(seed));
}

/// A draw as a number uniform in `[0, 1)`: its top 53 bits.
pub(crate) fn unit(draw: u64) -> f64 {
    (draw >> 11) as f64 / (1_u64 << 53) as f64
}

/// A generator of the jitter's kind, seeded with `seed`: what a fault
/// injector seeded by its user draws from.
#[cfg(feature = "chaos")]
pub(crate) fn seeded(seed: u64) -> SmallRng {
    SmallRng::seed_from_u64(seed)
}

/// Runs `f` with this thread's generator.
pub(crate) fn with_thread_rng<T>(f: impl FnOnce(&mut SmallRng) -> T) -> T {
    THREAD_RNG.with(|rng| f(&mut rng.borrow_mut()))
}

/// This thread's generator as a [`rand::Rng`] that borrows it for each draw
/// alone: what a retry loop draws its jitter from. The wait is worked out
/// in the loop's own code, and the thread-local is touched only by a draw
/// (none when the jitter needs no draw), the same draws in the same order
/// as through [`with_thread_rng`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct ThreadDraws;

impl rand::TryRng for ThreadDraws {
    type Error = core::convert::Infallible;

    #[inline]
    fn try_next_u32(&mut self) -> Result<u32, Self::Error> {
        Ok(THREAD_RNG.with_borrow_mut(rand::Rng::next_u32))
    }

    #[inline]
    fn try_next_u64(&mut self) -> Result<u64, Self::Error> {
        Ok(THREAD_RNG.with_borrow_mut(rand::Rng::next_u64))
    }

    #[inline]
    fn try_fill_bytes(&mut self, dest: &mut [u8]) -> Result<(), Self::Error> {
        THREAD_RNG.with_borrow_mut(|rng| rand::Rng::fill_bytes(rng, dest));
        Ok(())
    }
}

/// A generator that always draws the same `u64`: for tests of the exact
/// mapping from draws to waits.
#[cfg(test)]
pub(crate) struct FixedDraw(pub(crate) u64);

#[cfg(test)]
impl rand::TryRng for FixedDraw {
    type Error = core::convert::Infallible;

    fn try_next_u32(&mut self) -> Result<u32, Self::Error> {
        Ok(self.0 as u32)
    }

    fn try_next_u64(&mut self) -> Result<u64, Self::Error> {
        Ok(self.0)
    }

    fn try_fill_bytes(&mut self, dest: &mut [u8]) -> Result<(), Self::Error> {
        dest.fill(0);
        Ok(())
    }
}
