//! Admission as the loop runs it: the error of a refused attempt
//! ([`Refused`]) and its bound ([`FromRefused`]), and the call's view of
//! the limiter named in `admission = ...` ([`Admitting`]), which asks the
//! limiter's [`admit`](AdmissionLimit::admit) before every attempt.

use core::fmt;
use core::ops::ControlFlow;
use core::time::Duration;
use std::time::Instant;

use crate::limits::admission_limit::{Admission, AdmissionLimit, AdmissionRequest};
use crate::time::clock::ClockKind;

/// The error of an attempt that the limit named in `admission = ...`
/// refused: the client shed the call itself, without sending it. A function
/// with `admission = ...` needs `E: From<Refused>`; the call returns
/// `E::from(refused)` at once, whether the refused attempt was the first or
/// a retry, and reports it as a give-up with
/// [`StopReason::Refused`](crate::StopReason::Refused) (`on_give_up`, the
/// tracing event, the `metrics` counter of calls). It names the limiter
/// when the limiter has a name.
///
/// ```
/// use backoff_runtime::{AdaptiveRateLimiter, Refused};
///
/// let io: std::io::Error = Refused::new().into();
/// assert_eq!(io.kind(), std::io::ErrorKind::Other);
/// assert_eq!(Refused::new().to_string(), "the client's limiter refused the attempt");
/// assert_eq!(Refused::by("s3").to_string(), "the client's limiter \"s3\" refused the attempt");
/// assert_eq!(Refused::by("s3").limiter(), Some("s3"));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Refused {
    limiter: Option<&'static str>,
}

impl Refused {
    /// A refusal by a limiter without a name (for tests and for converting
    /// by hand).
    ///
    /// ```
    /// assert_eq!(backoff_runtime::Refused::new().limiter(), None);
    /// ```
    #[must_use]
    pub const fn new() -> Self {
        Refused { limiter: None }
    }

    /// A refusal by the limiter named `limiter`.
    ///
    /// ```
    /// assert_eq!(backoff_runtime::Refused::by("store").limiter(), Some("store"));
    /// ```
    #[must_use]
    pub const fn by(limiter: &'static str) -> Self {
        Refused { limiter: Some(limiter) }
    }

    /// The name of the limiter that refused, when it has one
    /// ([`AdmissionLimit::name`]).
    ///
    /// ```
    /// assert_eq!(backoff_runtime::Refused::new().limiter(), None);
    /// ```
    #[must_use]
    pub const fn limiter(&self) -> Option<&'static str> {
        self.limiter
    }
}

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.limiter {
            Some(name) => write!(f, "the client's limiter {name:?} refused the attempt"),
            None => f.write_str("the client's limiter refused the attempt"),
        }
    }
}

impl std::error::Error for Refused {}

impl From<Refused> for std::io::Error {
    fn from(error: Refused) -> Self {
        std::io::Error::other(error)
    }
}

/// The bound behind `admission = ...`: the error type must absorb
/// [`Refused`], the error of an attempt the limiter refused.
///
/// Implemented for every `E: From<Refused>`:
///
/// ```
/// use backoff_runtime::Refused;
/// use backoff_runtime::bounds::FromRefused;
///
/// let refused: std::io::Error = FromRefused::from_refused(Refused::by("store"));
/// assert_eq!(refused.to_string(), "the client's limiter \"store\" refused the attempt");
/// ```
#[diagnostic::on_unimplemented(
    message = "`admission = ...` needs the function's error type to implement `From<backoff_runtime::Refused>`, and `{Self}` does not",
    label = "an attempt the limiter refuses becomes this error type",
    note = "a limiter that paces attempts may refuse one, the first included, and the call then returns that error; if `{Self}` is your own type, add `impl From<backoff_runtime::Refused> for {Self}` (e.g. an `Overloaded` variant); if it is another crate's (such as `reqwest::Error`), return an error of your own that wraps it, or `backoff_runtime::reqwest_errors::Error` (feature `reqwest`), which has the impl"
)]
pub trait FromRefused {
    /// The error standing for the attempt `refused`.
    fn from_refused(refused: Refused) -> Self;
}

impl<E: From<Refused>> FromRefused for E {
    fn from_refused(refused: Refused) -> Self {
        E::from(refused)
    }
}

/// Where the next attempt's admission stands between two questions: when
/// it first asked, and whether the limiter reserved its tokens
/// ([`Admission::GoAfter`]). A future that cannot keep its [`Admitting`]
/// across polls keeps this instead.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AdmissionProgress {
    since: Option<Instant>,
    reserved: bool,
}

/// The limiter named in `admission = ...`, as one call uses it: asked before
/// each attempt (counting them), told after each how it ended.
#[derive(Clone, Copy)]
pub struct Admitting<'a> {
    limit: &'a dyn AdmissionLimit,
    clock: ClockKind,
    attempt: u32,
    refused: bool,
    progress: AdmissionProgress,
}

impl fmt::Debug for Admitting<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Admitting")
            .field("attempt", &self.attempt)
            .field("progress", &self.progress)
            .finish_non_exhaustive()
    }
}

impl<'a> Admitting<'a> {
    /// `limit`, borrowed behind a reference for one call on `clock`.
    #[inline]
    pub fn of_dyn(limit: &'a dyn AdmissionLimit, clock: ClockKind) -> Self {
        Admitting {
            limit,
            clock,
            attempt: 0,
            refused: false,
            progress: AdmissionProgress {
                since: None,
                reserved: false,
            },
        }
    }

    /// The same limit, for a call that made `attempts` attempts already (a
    /// future that owns its limiter behind an `Arc` makes one per question).
    #[inline]
    pub fn after(mut self, attempts: u32) -> Self {
        self.attempt = attempts;
        self
    }

    /// The same limit, for an attempt whose admission stands at `progress`
    /// (what [`progress`](Self::progress) read after the last question).
    #[inline]
    pub fn resuming(mut self, progress: AdmissionProgress) -> Self {
        self.progress = progress;
        self
    }

    /// Where the next attempt's admission stands.
    #[inline]
    pub fn progress(&self) -> AdmissionProgress {
        self.progress
    }

    /// Asks whether the next attempt may start. The answer says what to
    /// do: start it ([`Go`](Admission::Go)), sleep and ask again
    /// ([`Wait`](Admission::Wait) and [`GoAfter`](Admission::GoAfter)), or
    /// end the call ([`Refuse`](Admission::Refuse)). After a `GoAfter` the
    /// next question is answered `Go` here, without the limiter: its tokens
    /// are taken. The limiter is told how long the attempt has waited, on
    /// the clock, since it first asked.
    #[inline]
    pub fn ask(&mut self) -> Admission {
        if self.progress.reserved {
            self.progress = AdmissionProgress::default();
            self.attempt = self.attempt.saturating_add(1);
            return Admission::Go;
        }
        let now = self.clock.now();
        let since = *self.progress.since.get_or_insert(now);
        let waited = now.saturating_duration_since(since);
        let request = AdmissionRequest::new(now, self.attempt.saturating_add(1), waited);
        let answer = self.limit.admit(request);
        match answer {
            Admission::Go => {
                self.attempt = self.attempt.saturating_add(1);
                self.progress = AdmissionProgress::default();
            }
            Admission::GoAfter(_) => self.progress.reserved = true,
            Admission::Wait(_) => {}
            Admission::Refuse => {
                self.refused = true;
                self.progress = AdmissionProgress::default();
            }
        }
        answer
    }

    /// The refusal of this call's limiter, naming it when it has a name.
    #[inline]
    pub fn refusal(&self) -> Refused {
        Refused {
            limiter: self.limit.name(),
        }
    }

    /// Whether the limit refused an attempt of this call (which then ends).
    #[inline]
    pub(crate) fn was_refused(&self) -> bool {
        self.refused
    }

    /// The attempts admitted so far: the ones the call made.
    #[inline]
    pub(crate) fn attempts(&self) -> u32 {
        self.attempt
    }

    /// The attempt that just ended asked to slow down (or not).
    #[inline]
    pub fn observed(&self, slow_down: bool) {
        self.limit.observed(self.clock.now(), slow_down);
    }

    /// Asks for the next attempt: `Break(true)` to start it,
    /// `Break(false)` when refused, or `Continue(wait)` to sleep first.
    fn next(&mut self) -> ControlFlow<bool, Duration> {
        match self.ask() {
            Admission::Go => ControlFlow::Break(true),
            Admission::Refuse => ControlFlow::Break(false),
            Admission::Wait(wait) | Admission::GoAfter(wait) => ControlFlow::Continue(wait),
        }
    }

    /// Waits (on `sleep`) until the next attempt is admitted: `true` when
    /// it may start, `false` when it was refused.
    pub fn admit_blocking(&mut self, sleep: &dyn Fn(Duration)) -> bool {
        loop {
            match self.next() {
                ControlFlow::Break(admitted) => return admitted,
                ControlFlow::Continue(wait) => sleep(wait),
            }
        }
    }
}

/// Waits on `timer` until the next attempt of the call that `admitting`
/// paces is admitted: `true` when it may start, `false` when the limit
/// refused it. The waits are the loop's own (the virtual clock in tests),
/// and no lock is held across them.
pub async fn admitted<Tm: crate::time::sleep::Timer>(admitting: &mut Admitting<'_>, timer: &mut Tm) -> bool {
    loop {
        match admitting.next() {
            ControlFlow::Break(admitted) => return admitted,
            ControlFlow::Continue(wait) => timer.sleep(wait).await,
        }
    }
}

/// The limiter of `admission = EXPR`, as the expansion borrows it: carries
/// the [`AdmissionLimit`] bound, whose message is in the user's words.
#[cfg_attr(not(debug_assertions), inline(always))]
pub fn admission_of<L: AdmissionLimit>(limit: &L) -> &dyn AdmissionLimit {
    limit
}
