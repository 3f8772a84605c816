//! Limits shared by many calls: the retry budget, the throttle, and the one trait the loop asks through.

pub(crate) mod budget;
pub(crate) mod limit;
pub(crate) mod named;
pub(crate) mod throttle;
