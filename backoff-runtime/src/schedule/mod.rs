//! The schedule: the policy (the keys), the backoff state machine that computes each wait, the jitter and the random draws behind it.

pub(crate) mod backoff;
pub(crate) mod jitter;
pub(crate) mod policy;
#[cfg(all(test, feature = "macros", feature = "tokio"))]
mod props;
pub(crate) mod rng;
