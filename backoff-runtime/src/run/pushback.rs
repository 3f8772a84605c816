//! A server's instruction that overrides the schedule.
//!
//! A server's instruction that overrides the schedule after a failure
//! ([`Pushback`]), and the hook that reads it.

use core::time::Duration;

/// A hook that reads the server's pushback on an error.
pub(crate) type PushbackOf<'h, X> = &'h dyn Fn(&X) -> Option<Pushback>;

/// A server's instruction that overrides the schedule after a failure
/// (gRPC's `grpc-retry-pushback-ms`), read by
/// `Classify::pushback` in backoff-tower.
///
/// Unlike a hint (`Classify::error_hint` in backoff-tower),
/// an exact wait is not capped by `max_backoff`, and the schedule restarts
/// from `initial_backoff` after it; a refusal ends the call (reported as
/// [`StopReason::Permanent`](crate::StopReason::Permanent)) once a limit
/// has counted the failure.
///
/// ```
/// use backoff_runtime::Pushback;
/// use std::time::Duration;
/// let at_once = Pushback::After(Duration::ZERO);
/// assert_ne!(at_once, Pushback::Stop);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pushback {
    /// Wait exactly this long (no jitter, even above `max_backoff`; zero:
    /// at once), then restart the schedule. The other stop rules still
    /// hold: `max_retries`, `max_elapsed`, the limit.
    After(Duration),
    /// Do not retry.
    Stop,
}
