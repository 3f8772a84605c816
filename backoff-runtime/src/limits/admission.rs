//! Admission as the loop runs it: the error of a refused attempt
//! ([`Refused`]) and its bound ([`FromRefused`]), and the call's view of
//! the limit named in `admission = ...` ([`Admitting`]), which asks the
//! limit's [`admit`](RetryLimit::admit) before every attempt.

use core::fmt;
use core::time::Duration;

use crate::limits::limit::{Admission, AdmissionRequest, RetryLimit};
use crate::time::clock::ClockKind;

/// The error of an attempt that the limit named in `admission = ...`
/// refused: the client shed the call itself, without sending it. A function
/// with `admission = ...` needs `E: From<Refused>`; the call returns
/// `E::from(Refused)` at once, whether the refused attempt was the first or
/// a retry, and reports it as a give-up with
/// [`StopReason::Refused`](crate::StopReason::Refused) (`on_give_up`, the
/// tracing event, the `metrics` counter of calls).
///
/// ```
/// use backoff_runtime::Refused;
///
/// let io: std::io::Error = Refused::new().into();
/// assert_eq!(io.kind(), std::io::ErrorKind::Other);
/// assert_eq!(Refused::new().to_string(), "the client's limiter refused the attempt");
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Refused;

impl Refused {
    /// A `Refused` error (for tests and for converting by hand).
    ///
    /// ```
    /// assert_eq!(backoff_runtime::Refused::new(), backoff_runtime::Refused::default());
    /// ```
    #[must_use]
    pub const fn new() -> Self {
        Refused
    }
}

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the client's limiter refused the attempt")
    }
}

impl std::error::Error for Refused {}

impl From<Refused> for std::io::Error {
    fn from(refused: Refused) -> Self {
        std::io::Error::other(refused)
    }
}

/// The bound behind `admission = ...`: the error type must absorb
/// [`Refused`], the error of an attempt the limiter refused.
///
/// Implemented for every `E: From<Refused>`:
///
/// ```
/// use backoff_runtime::bounds::FromRefused;
///
/// let refused: std::io::Error = FromRefused::from_refused();
/// assert_eq!(refused.to_string(), "the client's limiter refused the attempt");
/// ```
#[diagnostic::on_unimplemented(
    message = "`admission = ...` needs the function's error type to implement `From<backoff_runtime::Refused>`, and `{Self}` does not",
    label = "an attempt the limiter refuses becomes this error type",
    note = "add `impl From<backoff_runtime::Refused> for {Self}` (e.g. an `Overloaded` variant): a limiter that paces attempts may refuse one, the first included, and the call then returns that error"
)]
pub trait FromRefused {
    /// The error standing for a refused attempt.
    fn from_refused() -> Self;
}

impl<E: From<Refused>> FromRefused for E {
    fn from_refused() -> Self {
        E::from(Refused)
    }
}

/// The limit named in `admission = ...`, as one call uses it: asked before
/// each attempt (counting them), told after each how it ended.
#[derive(Clone, Copy)]
pub struct Admitting<'a> {
    limit: &'a dyn RetryLimit,
    paces: bool,
    clock: ClockKind,
    attempt: u32,
    refused: bool,
}

impl fmt::Debug for Admitting<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Admitting")
            .field("attempt", &self.attempt)
            .finish_non_exhaustive()
    }
}

/// What the loop does before an attempt, after asking.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ask {
    /// Start the attempt.
    Go,
    /// Sleep this long, then ask again.
    Wait(Duration),
    /// End the call with `Refused`.
    Refuse,
}

impl<'a> Admitting<'a> {
    /// `limit`, borrowed behind a reference for one call on `clock`.
    #[inline]
    pub fn of_dyn(limit: &'a dyn RetryLimit, clock: ClockKind) -> Self {
        Admitting {
            paces: limit.paces(),
            limit,
            clock,
            attempt: 0,
            refused: false,
        }
    }

    /// The same limit, for a call that made `attempts` attempts already (a
    /// future that owns its limiter behind an `Arc` makes one per question).
    #[inline]
    pub fn after(mut self, attempts: u32) -> Self {
        self.attempt = attempts;
        self
    }

    /// Whether the limit paces at all (read once, when the call starts).
    #[inline]
    pub(crate) fn paces(&self) -> bool {
        self.paces
    }

    /// Asks whether the next attempt may start, after it waited `waited`.
    #[inline]
    pub fn ask(&mut self, waited: Duration) -> Ask {
        if !self.paces {
            self.attempt = self.attempt.saturating_add(1);
            return Ask::Go;
        }
        let request = AdmissionRequest::new(self.clock.now(), self.attempt.saturating_add(1), waited);
        match self.limit.admit(request) {
            Admission::Go => {
                self.attempt = self.attempt.saturating_add(1);
                Ask::Go
            }
            Admission::Wait(wait) => Ask::Wait(wait),
            Admission::Refuse => {
                self.refused = true;
                Ask::Refuse
            }
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

    /// The attempt that just ended was throttled (or not).
    #[inline]
    pub fn observed(&self, throttled: bool) {
        if self.paces {
            self.limit.observed(self.clock.now(), throttled);
        }
    }

    /// Waits (on `sleep`) until the next attempt is admitted: `true` when
    /// it may start, `false` when it was refused.
    pub fn admit_blocking(&mut self, sleep: &dyn Fn(Duration)) -> bool {
        let mut waited = Duration::ZERO;
        loop {
            match self.ask(waited) {
                Ask::Go => return true,
                Ask::Refuse => return false,
                Ask::Wait(wait) => {
                    sleep(wait);
                    waited = waited.saturating_add(wait);
                }
            }
        }
    }
}

/// Waits on `timer` until the next attempt of the call that `admitting`
/// paces is admitted: `true` when it may start, `false` when the limit
/// refused it. The waits are the loop's own (the virtual clock in tests),
/// and no lock is held across them.
pub async fn admitted<Tm: crate::time::sleep::Timer>(admitting: &mut Admitting<'_>, timer: &mut Tm) -> bool {
    let mut waited = Duration::ZERO;
    loop {
        match admitting.ask(waited) {
            Ask::Go => return true,
            Ask::Refuse => return false,
            Ask::Wait(wait) => {
                timer.sleep(wait).await;
                waited = waited.saturating_add(wait);
            }
        }
    }
}

/// The limit of `admission = EXPR`, as the expansion borrows it: carries the
/// [`RetryLimit`] bound, whose message is in the user's words.
#[cfg_attr(not(debug_assertions), inline(always))]
pub fn admission_of<L: RetryLimit>(limit: &L) -> &dyn RetryLimit {
    limit
}
