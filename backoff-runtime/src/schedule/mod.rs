//! The schedule: the policy, the waits and the jitter.
//!
//! The policy holds the keys. The backoff state machine computes each wait,
//! with the jitter and its random draws. The grammar of its values is shared
//! with `#[retry]`, beside the text forms of its modes.

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
