//! Limits shared by many calls: the retry budget, the throttle, the two
//! adaptive limiters that pace every attempt, and the one trait the loop
//! asks through.

pub(crate) mod adaptive_rate;
pub(crate) mod adaptive_throttle;
pub(crate) mod admission;
pub(crate) mod budget;
pub(crate) mod limit;
pub(crate) mod named;
pub(crate) mod throttle;
