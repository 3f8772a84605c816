//! What `admission = ...` names: any [`AdmissionLimit`].
//!
//! Five come with the crate:
//! [`AdaptiveRateLimiter`](crate::limits::AdaptiveRateLimiter) (AWS's adaptive retry
//! mode), [`AdaptiveThrottle`](crate::limits::AdaptiveThrottle) (Google SRE's
//! client-side throttling), [`CircuitBreaker`](crate::limits::CircuitBreaker),
//! [`Cooldown`](crate::limits::Cooldown) (a server's hint for every call) and
//! [`Keyed`](crate::limits::Keyed) (one of another per key). The trait is open.
//!
//! What counts retries (`budget = ...`) is the other trait,
//! [`RetryLimit`](crate::limits::RetryLimit).

use core::time::Duration;

use crate::time::Instant;
use crate::time::clock::Clock;

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
///   `E::from(`[`Refused`](crate::limits::Refused)`)` at once. This is why
///   `admission = ...` needs `E: From<Refused>`. The call is reported as a
///   give-up with [`StopReason::Refused`](crate::StopReason::Refused).
///
/// - [`Shut`](Admission::Shut): not at all, and nothing else for a while
///   (a [`CircuitBreaker`](crate::limits::CircuitBreaker) open, a
///   [`Cooldown`](crate::limits::Cooldown)). The call ends as for `Refuse`, and the
///   [`Refused`](crate::limits::Refused) carries how long.
///
/// After every attempt it admitted (`Go`, `GoAfter`) the loop tells it
/// exactly once how the attempt ended, with
/// [`observed`](AdmissionLimit::observed): whether the backend asked it to
/// slow down, by `slow_down_if` (by default, every error `retry_if`
/// retries), and the wait the server asked for. An attempt that never
/// answered is told too: its body panicked, or the call stopped waiting
/// for it (a timeout, a `select!`, the hedge that lost, a future never
/// polled). [`AttemptEnd::ending`] says which. A caller told to
/// [`Wait`](Admission::Wait) that leaves before asking again is told with
/// [`withdrawn`](AdmissionLimit::withdrawn).
///
/// A limit that counts retries ([`RetryBudget`](crate::limits::RetryBudget),
/// [`RetryThrottle`](crate::limits::RetryThrottle)) is a
/// [`RetryLimit`](crate::limits::RetryLimit), named in `budget = ...`: in
/// `admission = ...` it is a compile error.
///
/// It must be `Sync` and work through `&self`: every call that names it
/// uses it at once, from any thread. Share one limiter: a `static`, a
/// field, an `Arc`. A `const` makes a new limiter at each use; the
/// attribute rejects a `const` named in `admission = ...`.
///
/// ```
/// use backoff_runtime::limits::{Admission, AdmissionLimit, AdmissionRequest, Refused};
/// use backoff_runtime::Policy;
/// use std::sync::atomic::{AtomicU32, Ordering};
/// use std::time::Duration;
///
/// /// Admits three attempts in all, then refuses.
/// struct Three(AtomicU32);
///
/// impl AdmissionLimit for Three {
///     fn admit(&self, _request: AdmissionRequest<'_>) -> Admission {
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
    message = "`admission = ...` needs a limiter that admits attempts (an `AdaptiveRateLimiter`, an `AdaptiveThrottle`, a `CircuitBreaker`, a `Cooldown` or your own `AdmissionLimit`, or a reference, `Arc` or `Box` of one), and `{Self}` is not one",
    label = "not a limiter that admits attempts",
    note = "a limit that counts retries (a `RetryBudget`, a `RetryThrottle`) belongs in `budget = ...`; here, name a `static` limiter, or give `&self.limiter` or an `Arc` of one"
)]
pub trait AdmissionLimit: Sync {
    /// Whether the attempt of `request` may start now, later, or not at
    /// all. Take what it costs when answering [`Go`](Admission::Go) or
    /// [`GoAfter`](Admission::GoAfter), never for the others. A wait is
    /// the loop's: never sleep here.
    fn admit(&self, request: AdmissionRequest<'_>) -> Admission;

    /// An attempt this limiter admitted ended: when ([`AttemptEnd::now`]),
    /// how ([`AttemptEnd::ending`]: an answer, a panic, or abandoned),
    /// whether the backend asked the client to slow down
    /// ([`AttemptEnd::slow_down`]), and the wait the server asked for, if
    /// any ([`AttemptEnd::hint`]).
    ///
    /// It is called exactly once for each [`Go`](Admission::Go) and each
    /// [`GoAfter`](Admission::GoAfter), however the attempt ended. A
    /// limiter that takes a slot in `admit` (a bulkhead, a probe) gives it
    /// back here.
    fn observed(&self, end: AttemptEnd<'_>) {
        let _ = end;
    }

    /// A caller this limiter told to [`Wait`](Admission::Wait) left before
    /// asking again: its call was dropped during the wait. It will not ask
    /// again. `waiter` is the question it was told to wait on: its attempt
    /// number, its key and the time it had waited; [`now`](AdmissionRequest::now)
    /// reads the clock when it left.
    ///
    /// A `Wait` takes nothing, so the default does nothing. A limiter that
    /// promised the waiter a place in a line gives the place back here.
    fn withdrawn(&self, waiter: AdmissionRequest<'_>) {
        let _ = waiter;
    }

    /// The limiter's name, which a [`Refused`](crate::limits::Refused) of it
    /// carries (none by default; the crate's limiters give the one set with
    /// their `name` method).
    fn name(&self) -> Option<&'static str> {
        None
    }
}

crate::limits::named::forward_to_pointee!(AdmissionLimit {
    fn admit(&self, request: AdmissionRequest<'_>) -> Admission;
    fn observed(&self, end: AttemptEnd<'_>);
    fn withdrawn(&self, waiter: AdmissionRequest<'_>);
    fn name(&self) -> Option<&'static str>;
});

/// An admission limiter's answer before an attempt
/// ([`AdmissionLimit::admit`]).
///
/// ```
/// use backoff_runtime::limits::Admission;
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
    /// starts it without asking again. A call dropped during the wait tells
    /// the limiter the attempt was [`Abandoned`](Ending::Abandoned).
    GoAfter(Duration),
    /// Not yet: the loop sleeps this long on its own timer, then asks again.
    /// Nothing was taken, so another caller may take it first. A call
    /// dropped during the wait tells the limiter with
    /// [`withdrawn`](AdmissionLimit::withdrawn).
    Wait(Duration),
    /// Not at all: the attempt does not start, and the call ends with
    /// [`Refused`](crate::limits::Refused).
    Refuse,
    /// Not at all, and the limiter admits nothing for a while: the call
    /// ends with a [`Refused`](crate::limits::Refused) that carries the [`Shut`].
    Shut(Shut),
}

/// Why a limiter admits nothing for a while, and for how long: what an
/// [`Admission::Shut`] and a [`Refused`](crate::limits::Refused) of it carry.
///
/// ```
/// use backoff_runtime::limits::{Shut, ShutBy};
/// use std::time::Duration;
///
/// let shut = Shut::circuit_open(Some(Duration::from_secs(5)));
/// assert_eq!(shut.by(), ShutBy::CircuitBreaker);
/// assert_eq!(shut.left(), Some(Duration::from_secs(5)));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Shut {
    by: ShutBy,
    left: Option<Duration>,
}

/// What shut a limiter.
///
/// ```
/// use backoff_runtime::limits::{Shut, ShutBy};
/// use std::time::Duration;
///
/// assert_eq!(Shut::cooldown(Duration::from_secs(30)).by(), ShutBy::Cooldown);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ShutBy {
    /// A circuit breaker is open: too many attempts failed.
    CircuitBreaker,
    /// A server asked every call to wait (a `Retry-After`, a gRPC pushback).
    Cooldown,
}

impl Shut {
    /// A circuit breaker's refusal: open for `left` more, or `None` while
    /// its probes run (half-open).
    ///
    /// ```
    /// assert_eq!(backoff_runtime::limits::Shut::circuit_open(None).left(), None);
    /// ```
    #[must_use]
    pub const fn circuit_open(left: Option<Duration>) -> Self {
        Shut {
            by: ShutBy::CircuitBreaker,
            left,
        }
    }

    /// A cooldown's refusal: the server's instant is `left` away.
    ///
    /// ```
    /// use std::time::Duration;
    /// let shut = backoff_runtime::limits::Shut::cooldown(Duration::from_secs(3));
    /// assert_eq!(shut.left(), Some(Duration::from_secs(3)));
    /// ```
    #[must_use]
    pub const fn cooldown(left: Duration) -> Self {
        Shut {
            by: ShutBy::Cooldown,
            left: Some(left),
        }
    }

    /// What shut the limiter.
    ///
    /// ```
    /// use backoff_runtime::limits::{Shut, ShutBy};
    /// assert_eq!(Shut::circuit_open(None).by(), ShutBy::CircuitBreaker);
    /// ```
    #[must_use]
    pub const fn by(&self) -> ShutBy {
        self.by
    }

    /// How long until the limiter may admit again, when it knows.
    ///
    /// ```
    /// use std::time::Duration;
    /// assert_eq!(backoff_runtime::limits::Shut::cooldown(Duration::ZERO).left(), Some(Duration::ZERO));
    /// ```
    #[must_use]
    pub const fn left(&self) -> Option<Duration> {
        self.left
    }
}

/// An instant on the loop's clock, read only when a limiter asks for it:
/// a limiter that never looks at the time costs the loop no clock read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum When {
    /// This instant.
    At(Instant),
    /// Now, on this clock.
    OnClock(Clock),
}

impl When {
    #[inline]
    fn now(self) -> Instant {
        match self {
            When::At(now) => now,
            When::OnClock(clock) => clock.now(),
        }
    }
}

/// How an attempt ended, as an admission limiter is told
/// ([`AdmissionLimit::observed`]).
///
/// ```
/// use backoff_runtime::limits::AttemptEnd;
/// use std::time::{Duration, Instant};
///
/// let now = Instant::now();
/// let end = AttemptEnd::new(now, true).with_hint(Duration::from_secs(30));
/// assert_eq!((end.now(), end.slow_down(), end.hint()), (now, true, Some(Duration::from_secs(30))));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AttemptEnd<'k> {
    when: When,
    slow_down: bool,
    hint: Option<Duration>,
    key: Option<&'k str>,
    ending: Ending,
}

/// How an admitted attempt ended, as [`AttemptEnd::ending`] tells a
/// limiter.
///
/// ```
/// use backoff_runtime::limits::{AttemptEnd, Ending};
/// use std::time::Instant;
///
/// let end = AttemptEnd::new(Instant::now(), false).ended(Ending::Abandoned);
/// assert_eq!(end.ending(), Ending::Abandoned);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Ending {
    /// It answered: a value or an error. [`AttemptEnd::slow_down`] and
    /// [`AttemptEnd::hint`] say what the answer told.
    Answered,
    /// Its body panicked. The panic goes on to the caller. The crate's
    /// circuit breaker counts it as a failure.
    Panicked,
    /// The call stopped waiting for it before it answered. Its future was
    /// dropped (a caller's timeout, a `select!`, the hedge that lost), was
    /// never polled, or it was admitted and never started. Nothing is known
    /// of the backend: `slow_down` is `false` and there is no hint.
    Abandoned,
}

impl<'k> AttemptEnd<'k> {
    /// An attempt that ended at `now`, asking to slow down or not, with no
    /// hint. The loop makes them; this is for a limiter's own tests.
    ///
    /// ```
    /// use std::time::Instant;
    /// assert!(!backoff_runtime::limits::AttemptEnd::new(Instant::now(), false).slow_down());
    /// ```
    #[must_use]
    pub const fn new(now: Instant, slow_down: bool) -> Self {
        AttemptEnd {
            when: When::At(now),
            slow_down,
            hint: None,
            key: None,
            ending: Ending::Answered,
        }
    }

    /// The same end, that ended as `ending` (by default
    /// [`Answered`](Ending::Answered)). An end that did not answer carries
    /// no slow-down and no hint.
    ///
    /// ```
    /// use backoff_runtime::limits::{AttemptEnd, Ending};
    /// use std::time::Instant;
    ///
    /// let end = AttemptEnd::new(Instant::now(), true).ended(Ending::Panicked);
    /// assert_eq!((end.ending(), end.slow_down()), (Ending::Panicked, false));
    /// ```
    #[must_use]
    pub const fn ended(mut self, ending: Ending) -> Self {
        self.ending = ending;
        if !matches!(ending, Ending::Answered) {
            self.slow_down = false;
            self.hint = None;
        }
        self
    }

    /// How the attempt ended: it answered, its body panicked, or the call
    /// abandoned it.
    ///
    /// ```
    /// use backoff_runtime::limits::{AttemptEnd, Ending};
    /// use std::time::Instant;
    /// assert_eq!(AttemptEnd::new(Instant::now(), false).ending(), Ending::Answered);
    /// ```
    #[must_use]
    pub const fn ending(&self) -> Ending {
        self.ending
    }

    /// The same end, with the server's hint `wait`.
    ///
    /// ```
    /// use std::time::{Duration, Instant};
    /// let end = backoff_runtime::limits::AttemptEnd::new(Instant::now(), true).with_hint(Duration::from_secs(1));
    /// assert_eq!(end.hint(), Some(Duration::from_secs(1)));
    /// ```
    #[must_use]
    pub const fn with_hint(mut self, wait: Duration) -> Self {
        self.hint = Some(wait);
        self
    }

    /// The same end, of a call whose front end keys it by `key` (its host,
    /// its gRPC method): what a [`Keyed`](crate::limits::Keyed) limiter reads.
    ///
    /// ```
    /// use std::time::Instant;
    /// let end = backoff_runtime::limits::AttemptEnd::new(Instant::now(), false).with_key(Some("api.example.com"));
    /// assert_eq!(end.key(), Some("api.example.com"));
    /// ```
    #[must_use]
    pub const fn with_key<'j>(self, key: Option<&'j str>) -> AttemptEnd<'j> {
        AttemptEnd {
            when: self.when,
            slow_down: self.slow_down,
            hint: self.hint,
            key,
            ending: self.ending,
        }
    }

    /// The key of the call, when its front end keys calls (the tower layer
    /// by host, the gRPC layer by method); `None` for the attribute and the
    /// builder.
    ///
    /// ```
    /// use std::time::Instant;
    /// assert_eq!(backoff_runtime::limits::AttemptEnd::new(Instant::now(), false).key(), None);
    /// ```
    #[must_use]
    pub const fn key(&self) -> Option<&'k str> {
        self.key
    }

    /// An attempt that ended now on `clock`, read only if asked.
    #[inline]
    pub(crate) const fn on_clock(clock: Clock, slow_down: bool, hint: Option<Duration>) -> Self {
        AttemptEnd {
            when: When::OnClock(clock),
            slow_down,
            hint,
            key: None,
            ending: Ending::Answered,
        }
    }

    /// When the attempt ended, on the loop's clock (the virtual or paused
    /// clock in tests). Each call reads the clock: read it once.
    ///
    /// ```
    /// use std::time::Instant;
    /// let now = Instant::now();
    /// assert_eq!(backoff_runtime::limits::AttemptEnd::new(now, false).now(), now);
    /// ```
    #[must_use]
    #[inline]
    pub fn now(&self) -> Instant {
        self.when.now()
    }

    /// Whether the attempt failed with an error that `slow_down_if` flags:
    /// the backend asked the client to slow down (AWS calls it a
    /// throttling error). `false` for a success, a pending value or any
    /// other error.
    ///
    /// ```
    /// use std::time::Instant;
    /// assert!(backoff_runtime::limits::AttemptEnd::new(Instant::now(), true).slow_down());
    /// ```
    #[must_use]
    pub const fn slow_down(&self) -> bool {
        self.slow_down
    }

    /// The wait the server asked for with the attempt's error (a
    /// `Retry-After`, a gRPC pushback or `RetryInfo`), as `retry_after`
    /// reads it and before any cap.
    ///
    /// ```
    /// use std::time::Instant;
    /// assert_eq!(backoff_runtime::limits::AttemptEnd::new(Instant::now(), true).hint(), None);
    /// ```
    #[must_use]
    pub const fn hint(&self) -> Option<Duration> {
        self.hint
    }
}

/// What an admission limiter is asked before an attempt.
///
/// It holds the instant on the loop's clock, the attempt's number (1 for
/// the first call) and how long this attempt already waited for admission.
///
/// ```
/// use backoff_runtime::limits::AdmissionRequest;
/// use std::time::{Duration, Instant};
///
/// let request = AdmissionRequest::new(Instant::now(), 1, Duration::ZERO);
/// assert!(request.is_first());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct AdmissionRequest<'k> {
    /// The attempt's number: 1 for the first call, 2 for the first retry.
    pub attempt: u32,
    when: When,
    waited: Duration,
    key: Option<&'k str>,
}

impl<'k> AdmissionRequest<'k> {
    /// A request for attempt `attempt` at `now`, after waiting `waited`.
    /// The loop makes them; this is for a limiter's own tests.
    ///
    /// ```
    /// use backoff_runtime::limits::AdmissionRequest;
    /// use std::time::{Duration, Instant};
    ///
    /// let request = AdmissionRequest::new(Instant::now(), 2, Duration::from_millis(5));
    /// assert!(!request.is_first());
    /// ```
    #[must_use]
    pub const fn new(now: Instant, attempt: u32, waited: Duration) -> Self {
        AdmissionRequest {
            attempt,
            when: When::At(now),
            waited,
            key: None,
        }
    }

    /// A first question for attempt `attempt`, now on `clock` (read only if
    /// the limiter asks): nothing waited yet.
    #[inline]
    pub(crate) const fn on_clock(clock: Clock, attempt: u32) -> Self {
        AdmissionRequest {
            attempt,
            when: When::OnClock(clock),
            waited: Duration::ZERO,
            key: None,
        }
    }

    /// The same request, of a call whose front end keys it by `key` (its
    /// host, its gRPC method): what a [`Keyed`](crate::limits::Keyed) limiter reads.
    ///
    /// ```
    /// use backoff_runtime::limits::AdmissionRequest;
    /// use std::time::{Duration, Instant};
    ///
    /// let request = AdmissionRequest::new(Instant::now(), 1, Duration::ZERO).with_key(Some("/pkg.Svc/Get"));
    /// assert_eq!(request.key(), Some("/pkg.Svc/Get"));
    /// ```
    #[must_use]
    pub const fn with_key<'j>(self, key: Option<&'j str>) -> AdmissionRequest<'j> {
        AdmissionRequest {
            attempt: self.attempt,
            when: self.when,
            waited: self.waited,
            key,
        }
    }

    /// The key of the call, when its front end keys calls (the tower layer
    /// by host, the gRPC layer by method); `None` for the attribute and the
    /// builder.
    ///
    /// ```
    /// use backoff_runtime::limits::AdmissionRequest;
    /// use std::time::{Duration, Instant};
    ///
    /// assert_eq!(AdmissionRequest::new(Instant::now(), 1, Duration::ZERO).key(), None);
    /// ```
    #[must_use]
    pub const fn key(&self) -> Option<&'k str> {
        self.key
    }

    /// Now, on the loop's clock (the virtual or paused clock in tests).
    /// Each call may read the clock: read it once.
    ///
    /// ```
    /// use backoff_runtime::limits::AdmissionRequest;
    /// use std::time::{Duration, Instant};
    ///
    /// let now = Instant::now();
    /// assert_eq!(AdmissionRequest::new(now, 1, Duration::ZERO).now(), now);
    /// ```
    #[must_use]
    #[inline]
    pub fn now(&self) -> Instant {
        self.when.now()
    }

    /// How long this attempt already waited for admission, on the loop's
    /// clock since it first asked. A limiter with a maximum wait refuses
    /// rather than let it wait past that.
    ///
    /// ```
    /// use backoff_runtime::limits::AdmissionRequest;
    /// use std::time::{Duration, Instant};
    ///
    /// let request = AdmissionRequest::new(Instant::now(), 2, Duration::from_millis(5));
    /// assert_eq!(request.waited(), Duration::from_millis(5));
    /// ```
    #[must_use]
    pub const fn waited(&self) -> Duration {
        self.waited
    }

    /// Whether this is the call's first attempt.
    ///
    /// ```
    /// use backoff_runtime::limits::AdmissionRequest;
    /// use std::time::{Duration, Instant};
    ///
    /// assert!(AdmissionRequest::new(Instant::now(), 1, Duration::ZERO).is_first());
    /// ```
    #[must_use]
    pub const fn is_first(&self) -> bool {
        self.attempt <= 1
    }
}
