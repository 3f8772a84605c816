//! The schedule: the policy (the keys), the backoff state machine that computes each wait, the jitter and the random draws behind it; the grammar its values are written in (shared with `#[retry]`) and the text forms of its modes.

pub(crate) mod backoff;
// Shared with backoff-macros (a link to this file there). Without `serde`
// the settings' texts in it go unused here; the macro crate uses them.
#[cfg_attr(not(feature = "serde"), allow(dead_code))]
pub(crate) mod grammar;
#[cfg(test)]
#[path = "grammar/tests.rs"]
mod grammar_tests;
pub(crate) mod jitter;
pub(crate) mod policy;
#[cfg(all(test, feature = "macros", feature = "tokio"))]
mod props;
pub(crate) mod rng;
pub(crate) mod text;
