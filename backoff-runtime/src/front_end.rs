//! The driver, as the front-end crates (`backoff-tower`, `backoff-grpc`)
//! reach it.
//!
//! Not public API: hidden from the docs, and free to change in any release.
//! The front ends pin this crate to its exact version, so a change here
//! never breaks a published pair. Users write `#[retry]`, the builder, or a
//! front end's layer instead.

pub use crate::limits::admission::{AdmissionProgress, Admitting};
pub use crate::limits::limit::Charged;
pub use crate::observe::conventions::SemanticConventions;
pub use crate::observe::site::Site;
pub use crate::run::driver::Loop;
pub use crate::run::hedge::Hedging;
pub use crate::run::hooks::Hooks;
pub use crate::run::invocation::CallNonce;
pub use crate::run::nested::NestedAttempt;
pub use crate::schedule::grammar::excerpt;
pub use crate::time::default_wait::DefaultWait;
pub use crate::time::timeout::Timed;

impl Loop {
    /// Whether the end of a call is recorded even when no hook or limit
    /// listens: metrics are compiled in, or a tracing subscriber listens.
    #[must_use]
    pub fn ends_are_recorded() -> bool {
        crate::observe::metrics::RECORDS || crate::observe::trace::enabled()
    }

    /// Whether this thread's default tracing dispatcher is a subscriber,
    /// as the runtime's events ask it: a front end makes its own spans
    /// only then.
    #[cfg(feature = "tracing")]
    #[must_use]
    pub fn thread_has_subscriber() -> bool {
        crate::observe::trace::thread_has_subscriber()
    }
}
