//! Monotonic clocks: where "now" comes from for `max_elapsed`.
//!
//! Sync loops read the thread's virtual clock when a test installed one and
//! `std::time::Instant` otherwise; async loops on tokio read tokio's clock, so
//! `tokio::time::pause` drives them; async loops with a custom `sleep =` read
//! `std::time::Instant`.

use std::time::Instant;

/// Which clock a retry loop reads. Chosen once when the loop starts; a byte,
/// so it fits in the padding of the loop's state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ClockKind {
    /// The virtual clock of `testing::VirtualClock` if installed, else std.
    Sync,
    /// `std::time::Instant`.
    Std,
    /// `tokio::time::Instant` (paused-clock aware).
    #[cfg(feature = "tokio")]
    Tokio,
}

impl ClockKind {
    /// The current instant on this clock.
    pub(crate) fn now(self) -> Instant {
        match self {
            ClockKind::Sync => crate::testing::virtual_now().unwrap_or_else(Instant::now),
            ClockKind::Std => Instant::now(),
            #[cfg(feature = "tokio")]
            ClockKind::Tokio => tokio::time::Instant::now().into_std(),
        }
    }
}
