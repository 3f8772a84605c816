//! Observation: events, stop reasons, tracing and metrics.
//!
//! The events are those the hooks receive.

pub(crate) mod conventions;
pub(crate) mod events;
#[cfg(feature = "metrics")]
pub(crate) mod keys;
#[cfg(feature = "metrics")]
pub mod metrics;
#[cfg(not(feature = "metrics"))]
pub(crate) mod metrics;
#[cfg(feature = "metrics")]
pub(crate) mod series;
pub(crate) mod site;
pub(crate) mod stop;
pub(crate) mod trace;
