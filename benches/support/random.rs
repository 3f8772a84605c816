//! A per-thread random number for the hand-written loops' jitter, as a user
//! would write it with rand: one `SmallRng` per thread, seeded per process.

use std::cell::RefCell;
use std::hash::{BuildHasher, RandomState};

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

thread_local! {
    static RNG: RefCell<SmallRng> = RefCell::new(SmallRng::seed_from_u64(RandomState::new().hash_one(0u8)));
}

/// A uniformly random `u64` from this thread's generator.
pub(crate) fn random_u64() -> u64 {
    RNG.with(|rng| rng.borrow_mut().next_u64())
}
