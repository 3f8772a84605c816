//! What `admission = ...` names: any [`AdmissionLimit`]. Two come with the
//! crate: [`AdaptiveRateLimiter`](crate::AdaptiveRateLimiter) (AWS's
//! adaptive retry mode) and [`AdaptiveThrottle`](crate::AdaptiveThrottle)
//! (Google SRE's client-side throttling). The trait is open.
//!
//! What counts retries (`budget = ...`) is the other trait,
//! [`RetryLimit`](crate::RetryLimit).

use core::time::Duration;
use std::time::Instant;

/// A limiter that admits attempts, shared by the calls that name it
/// (`admission = ...` on the attribute,
/// [`Retry::admission`](crate::Retry::admission) on the builder).
///
/// The loop asks it before every attempt, the first included, with
/// [`admit`](AdmissionLimit::admit). The answer is an [`Admission`]:
///
/// - [`Go`](Admission::Go): the attempt starts, and the limiter takes what
///   it costs.
/// - [`GoAfter`](Admission::GoAfter): the limiter reserved the attempt's
///   tokens. The loop sleeps on its own timer, then starts the attempt
///   without asking again. A limiter that tells each waiter its own instant
///   this way keeps waiters from all waking for the same token. The
///   crate's limiters never answer it.
/// - [`Wait`](Admission::Wait): the loop sleeps on its own timer, holding
///   nothing, then asks again.
/// - [`Refuse`](Admission::Refuse): the call returns
///   `E::from(`[`Refused`](crate::Refused)`)` at once. This is why
///   `admission = ...` needs `E: From<Refused>`. The call is reported as a
///   give-up with [`StopReason::Refused`](crate::StopReason::Refused).
///
/// After every attempt the loop tells it how the attempt ended, with
/// [`observed`](AdmissionLimit::observed): whether the backend asked it to
/// slow down, by `slow_down_if` (by default, every error `retry_if`
/// retries).
///
/// A limit that counts retries ([`RetryBudget`](crate::RetryBudget),
/// [`RetryThrottle`](crate::RetryThrottle)) is a
/// [`RetryLimit`](crate::RetryLimit), named in `budget = ...`: in
/// `admission = ...` it is a compile error.
///
/// It must be `Sync` and work through `&self`: every call that names it
/// uses it at once, from any thread. Share one limiter: a `static`, a
/// field, an `Arc`. A `const` makes a new limiter at each use; the
/// attribute rejects a `const` named in `admission = ...`.
///
/// ```
/// use backoff_runtime::{Admission, AdmissionLimit, AdmissionRequest, Policy, Refused};
/// use std::sync::atomic::{AtomicU32, Ordering};
/// use std::time::Duration;
///
/// /// Admits three attempts in all, then refuses.
/// struct Three(AtomicU32);
///
/// impl AdmissionLimit for Three {
///     fn admit(&self, _request: AdmissionRequest) -> Admission {
///         match self.0.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |left| left.checked_sub(1)) {
///             Ok(_) => Admission::Go,
///             Err(_) => Admission::Refuse,
///         }
///     }
/// }
///
/// #[derive(Debug, PartialEq)]
/// enum Error { Busy, Refused }
/// impl From<Refused> for Error {
///     fn from(_: Refused) -> Self { Error::Refused }
/// }
///
/// let three = Three(AtomicU32::new(3));
/// let policy = Policy::new().initial_backoff(Duration::from_millis(1));
/// let result = policy.retry(|| Err::<(), _>(Error::Busy)).admission(&three).call();
/// assert_eq!(result, Err(Error::Refused), "the fourth attempt is refused");
/// ```
#[diagnostic::on_unimplemented(
    message = "`admission = ...` needs a limiter that admits attempts (an `AdaptiveRateLimiter`, an `AdaptiveThrottle` or your own `AdmissionLimit`, or a reference, `Arc` or `Box` of one), and `{Self}` is not one",
    label = "not a limiter that admits attempts",
    note = "a limit that counts retries (a `RetryBudget`, a `RetryThrottle`) belongs in `budget = ...`; here, name a `static` limiter, or give `&self.limiter` or an `Arc` of one"
)]
pub trait AdmissionLimit: Sync {
    /// Whether the attempt of `request` may start now, later, or not at
    /// all. Take what it costs when answering [`Go`](Admission::Go) or
    /// [`GoAfter`](Admission::GoAfter), never for
    /// [`Wait`](Admission::Wait) or [`Refuse`](Admission::Refuse). A wait
    /// is the loop's: never sleep here.
    fn admit(&self, request: AdmissionRequest) -> Admission;

    /// An attempt ended at `now`. `slow_down` is `true` when it failed with
    /// an error that `slow_down_if` flags: the backend asked the client to
    /// slow down (AWS calls it a throttling error). It is `false` for a
    /// success, a pending value or any other error.
    fn observed(&self, now: Instant, slow_down: bool) {
        let _ = (now, slow_down);
    }

    /// The limiter's name, which a [`Refused`](crate::Refused) of it
    /// carries (none by default; the crate's limiters give the one set with
    /// their `name` method).
    fn name(&self) -> Option<&'static str> {
        None
    }
}

crate::limits::named::forward_to_pointee!(AdmissionLimit {
    fn admit(&self, request: AdmissionRequest) -> Admission;
    fn observed(&self, now: Instant, slow_down: bool);
    fn name(&self) -> Option<&'static str>;
});

/// An admission limiter's answer before an attempt
/// ([`AdmissionLimit::admit`]).
///
/// ```
/// use backoff_runtime::Admission;
/// use std::time::Duration;
///
/// let answer = Admission::Wait(Duration::from_millis(250));
/// assert_ne!(answer, Admission::Go);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admission {
    /// The attempt may start now. Whatever it costs is taken.
    Go,
    /// The attempt may start after this wait, and whatever it costs is
    /// taken now: a reservation. The loop sleeps on its own timer, then
    /// starts it without asking again. A call dropped during the wait
    /// loses its reservation.
    GoAfter(Duration),
    /// Not yet: the loop sleeps this long on its own timer, then asks again.
    /// Nothing was taken, so another caller may take it first.
    Wait(Duration),
    /// Not at all: the attempt does not start, and the call ends with
    /// [`Refused`](crate::Refused).
    Refuse,
}

/// What an admission limiter is asked before an attempt.
///
/// It holds the instant on the loop's clock, the attempt's number (1 for
/// the first call) and how long this attempt already waited for admission.
///
/// ```
/// use backoff_runtime::AdmissionRequest;
/// use std::time::{Duration, Instant};
///
/// let request = AdmissionRequest::new(Instant::now(), 1, Duration::ZERO);
/// assert!(request.is_first());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct AdmissionRequest {
    /// Now, on the loop's clock (the virtual clock in tests).
    pub now: Instant,
    /// The attempt's number: 1 for the first call, 2 for the first retry.
    pub attempt: u32,
    /// How long this attempt already waited for admission, on the loop's
    /// clock since it first asked. A limiter with a maximum wait refuses
    /// rather than let it wait past that.
    pub waited: Duration,
}

impl AdmissionRequest {
    /// A request for attempt `attempt` at `now`, after waiting `waited`.
    /// The loop makes them; this is for a limiter's own tests.
    ///
    /// ```
    /// use backoff_runtime::AdmissionRequest;
    /// use std::time::{Duration, Instant};
    ///
    /// let request = AdmissionRequest::new(Instant::now(), 2, Duration::from_millis(5));
    /// assert!(!request.is_first());
    /// ```
    #[must_use]
    pub const fn new(now: Instant, attempt: u32, waited: Duration) -> Self {
        AdmissionRequest { now, attempt, waited }
    }

    /// Whether this is the call's first attempt.
    ///
    /// ```
    /// use backoff_runtime::AdmissionRequest;
    /// use std::time::{Duration, Instant};
    ///
    /// assert!(AdmissionRequest::new(Instant::now(), 1, Duration::ZERO).is_first());
    /// ```
    #[must_use]
    pub const fn is_first(&self) -> bool {
        self.attempt <= 1
    }
}
