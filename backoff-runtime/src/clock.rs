//! Monotonic clocks: where "now" comes from for `max_elapsed`.
//!
//! Sync functions read [`SyncClock`] (the thread's virtual clock when a test
//! installed one, `std::time::Instant` otherwise); async functions on tokio
//! read tokio's clock, so `tokio::time::pause` drives them; async functions
//! with a custom `sleep =` read `std::time::Instant`.

use std::time::Instant;

/// A source of monotonic instants. Implementors are zero-sized markers.
pub trait Clock {
    /// The current instant on this clock.
    fn now() -> Instant;
}

/// `std::time::Instant::now()`.
#[derive(Clone, Copy, Debug, Default)]
pub struct StdClock;

impl Clock for StdClock {
    fn now() -> Instant {
        Instant::now()
    }
}

/// The clock of sync retry loops: the virtual clock of
/// [`testing::VirtualClock`](crate::testing::VirtualClock) when one is
/// installed on this thread, `std::time::Instant` otherwise.
#[derive(Clone, Copy, Debug, Default)]
pub struct SyncClock;

impl Clock for SyncClock {
    fn now() -> Instant {
        crate::testing::virtual_now().unwrap_or_else(Instant::now)
    }
}

/// tokio's clock (`tokio::time::Instant`), which a paused runtime controls.
#[cfg(feature = "tokio")]
#[derive(Clone, Copy, Debug, Default)]
pub struct TokioClock;

#[cfg(feature = "tokio")]
impl Clock for TokioClock {
    fn now() -> Instant {
        tokio::time::Instant::now().into_std()
    }
}
