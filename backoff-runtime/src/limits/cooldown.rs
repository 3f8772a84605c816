//! `Cooldown`: holds every call until the server's instant.
//!
//! An admission limiter that holds every call to a backend
//! until the instant a server asked for.

use core::sync::atomic::{AtomicU64, Ordering};
use core::time::Duration;

use crate::limits::admission_limit::{Admission, AdmissionLimit, AdmissionRequest, AttemptEnd, Shut};
use crate::limits::named::{max_wait_methods, name_methods};
use crate::time::clock::nanos_since_anchor;

/// A server's hint, held for every call that names this limiter.
///
/// One call's failure carries a hint (a `Retry-After`, `retry-after-ms`,
/// `x-ms-retry-after-ms`, an exhausted IETF `RateLimit`, a gRPC pushback or
/// `RetryInfo`: whatever `retry_after` reads). From then on, until the
/// hint's instant, every attempt of every call that names the cooldown
/// waits, the first attempt included. An attempt that would wait past
/// [`max_wait`](Self::max_wait) in all is refused at once instead, with a
/// [`Refused`](crate::limits::Refused) that carries the time left
/// ([`Refused::retry_after`](crate::limits::Refused::retry_after)).
///
/// No attempt is sent before the instant: the loop asks again when its wait
/// ends, and a timer that fires early is answered with the rest. Hints
/// above [`max_hint`](Self::max_hint) (default 32 s, the default
/// `max_backoff`) hold only that long. A later hint that ends sooner does
/// not shorten a hold.
///
/// Keep one per backend (per host): a `static`, a field, an `Arc`.
///
/// ```
/// use backoff_runtime::limits::{Admission, AdmissionLimit, AdmissionRequest, AttemptEnd, Cooldown};
/// use std::time::{Duration, Instant};
///
/// static HOST: Cooldown = Cooldown::new();
///
/// let now = Instant::now();
/// assert_eq!(HOST.admit(AdmissionRequest::new(now, 1, Duration::ZERO)), Admission::Go);
/// // A 429 with `Retry-After: 2` on one call...
/// HOST.observed(AttemptEnd::new(now, true).with_hint(Duration::from_secs(2)));
/// // ... holds the next call to the host until then.
/// let later = now + Duration::from_millis(500);
/// assert_eq!(
///     HOST.admit(AdmissionRequest::new(later, 1, Duration::ZERO)),
///     Admission::Wait(Duration::from_millis(1500))
/// );
/// ```
#[derive(Debug)]
pub struct Cooldown {
    max_wait: Duration,
    max_hint: Duration,
    name: Option<&'static str>,
    /// The hint's instant, in nanoseconds since the clock's anchor; 0 when
    /// no hint holds (its settings first, so its `Debug` shows them first).
    until: AtomicU64,
}

crate::limits::named::default_is_new!(Cooldown);

impl Cooldown {
    /// No hint held; waits up to 10 s (as
    /// [`AdaptiveRateLimiter`](crate::limits::AdaptiveRateLimiter)); hints held up
    /// to 32 s. `const`, so it lives in a `static`.
    ///
    /// ```
    /// use std::time::Duration;
    /// let cooldown = backoff_runtime::limits::Cooldown::new();
    /// assert_eq!(cooldown.get_max_wait(), Duration::from_secs(10));
    /// ```
    #[must_use]
    pub const fn new() -> Self {
        Cooldown {
            until: AtomicU64::new(0),
            max_wait: Duration::from_secs(10),
            max_hint: Duration::from_secs(32),
            name: None,
        }
    }

    max_wait_methods! {
        /// The longest an attempt waits for the hint's instant, in all; past
        /// it, the attempt is refused. `Duration::ZERO` refuses instead of
        /// waiting.
        ///
        /// ```
        /// use std::time::Duration;
        /// let cooldown = backoff_runtime::limits::Cooldown::new().max_wait(Duration::from_secs(1));
        /// assert_eq!(cooldown.get_max_wait(), Duration::from_secs(1));
        /// ```
        fn max_wait;
        /// The longest an attempt waits.
        ///
        /// ```
        /// use std::time::Duration;
        /// assert_eq!(backoff_runtime::limits::Cooldown::new().get_max_wait(), Duration::from_secs(10));
        /// ```
        fn get_max_wait;
    }

    name_methods! {
        /// Names the cooldown: the name in its [`Refused`](crate::limits::Refused).
        ///
        /// ```
        /// assert_eq!(backoff_runtime::limits::Cooldown::new().name("api").get_name(), Some("api"));
        /// ```
        fn name;
        /// The cooldown's name, if it has one.
        ///
        /// ```
        /// assert_eq!(backoff_runtime::limits::Cooldown::new().get_name(), None);
        /// ```
        fn get_name;
    }

    /// The longest a hint holds.
    ///
    /// ```
    /// use std::time::Duration;
    /// let cooldown = backoff_runtime::limits::Cooldown::new().max_hint(Duration::from_secs(60));
    /// assert_eq!(cooldown.get_max_hint(), Duration::from_secs(60));
    /// ```
    #[must_use]
    pub const fn max_hint(mut self, max_hint: Duration) -> Self {
        self.max_hint = max_hint;
        self
    }

    /// The longest a hint holds.
    ///
    /// ```
    /// use std::time::Duration;
    /// assert_eq!(backoff_runtime::limits::Cooldown::new().get_max_hint(), Duration::from_secs(32));
    /// ```
    #[must_use]
    pub const fn get_max_hint(&self) -> Duration {
        self.max_hint
    }

    /// The answer while a hint holds (`until`, in nanoseconds since the
    /// anchor).
    #[cold]
    #[inline(never)]
    fn admit_holding(&self, request: AdmissionRequest<'_>, until: u64) -> Admission {
        let now = nanos_since_anchor(request.now());
        if now >= until {
            // Over: clear it, unless a later hint came meanwhile.
            let _ = self
                .until
                .compare_exchange(until, 0, Ordering::AcqRel, Ordering::Relaxed);
            return Admission::Go;
        }
        let left = Duration::from_nanos(until - now);
        if request.waited().saturating_add(left) <= self.max_wait {
            Admission::Wait(left)
        } else {
            Admission::Shut(Shut::cooldown(left))
        }
    }

    /// Holds every call until `hint` after `end`.
    #[cold]
    #[inline(never)]
    fn hold(&self, end: AttemptEnd<'_>, hint: Duration) {
        let hold = u64::try_from(hint.min(self.max_hint).as_nanos()).unwrap_or(u64::MAX);
        let until = nanos_since_anchor(end.now()).saturating_add(hold).max(1);
        self.until.fetch_max(until, Ordering::AcqRel);
    }
}

impl AdmissionLimit for Cooldown {
    #[inline]
    fn admit(&self, request: AdmissionRequest<'_>) -> Admission {
        match self.until.load(Ordering::Acquire) {
            0 => Admission::Go,
            until => self.admit_holding(request, until),
        }
    }

    #[inline]
    fn observed(&self, end: AttemptEnd<'_>) {
        if let Some(hint) = end.hint() {
            self.hold(end, hint);
        }
    }

    fn name(&self) -> Option<&'static str> {
        self.name
    }
}

#[cfg(test)]
mod tests;
