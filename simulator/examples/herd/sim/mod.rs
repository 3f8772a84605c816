//! The simulator: a discrete-event simulation in virtual time of many
//! clients retrying with the runtime's real schedules and budget.
//!
//! Shared by `examples/herd/main.rs` and `tests/herd.rs`. Each module has
//! one job: [`queue`] orders events in virtual time, [`random`] makes the
//! seeded randomness (network latency), [`strategy`] turns a strategy into
//! the runtime's schedule, [`limit`] asks the runtime's budget or throttle
//! the way the retry loops do, [`contention`], [`outage`], [`hedging`]
//! (the outage, hedged), [`layers`], [`admission`] (limits that pace
//! every attempt) and [`burst`] (its closed loop: callers that send again
//! when answered) are the models, [`stats`] summarizes runs and [`sweep`] runs the
//! experiments.

pub(crate) mod admission;
pub(crate) mod burst;
pub(crate) mod contention;
pub(crate) mod hedging;
pub(crate) mod layers;
pub(crate) mod limit;
pub(crate) mod outage;
pub(crate) mod queue;
pub(crate) mod random;
pub(crate) mod stats;
pub(crate) mod strategy;
pub(crate) mod sweep;
