//! Limits shared by many calls, behind two traits.
//!
//! What counts retries (`RetryLimit`: the retry budget, the throttle) and
//! what admits attempts (`AdmissionLimit`: the two adaptive limiters, the
//! circuit breaker, the cooldown, `Keyed` and the user's own).

pub(crate) mod adaptive_rate;
pub(crate) mod adaptive_throttle;
pub(crate) mod admission;
pub(crate) mod admission_limit;
pub(crate) mod budget;
pub(crate) mod circuit_breaker;
pub(crate) mod cooldown;
pub(crate) mod keyed;
pub(crate) mod limit;
pub(crate) mod named;
pub(crate) mod throttle;
