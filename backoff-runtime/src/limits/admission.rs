//! Admission as the loop runs it: the error of a refused attempt
//! ([`Refused`]) and its bound ([`FromRefused`]), and the call's view of
//! the limiter named in `admission = ...` ([`Admitting`]), which asks the
//! limiter's [`admit`](AdmissionLimit::admit) before every attempt.

use core::fmt;
use core::ops::ControlFlow;
use core::time::Duration;

use crate::limits::admission_limit::{Admission, AdmissionLimit, AdmissionRequest};
use crate::time::clock::ClockKind;

crate::stand_in::stand_in_error!(
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
    Refused,
    "the client's limiter refused the attempt",
    Other
);

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

/// The limiter named in `admission = ...`, as one call uses it: asked before
/// each attempt (counting them), told after each how it ended.
#[derive(Clone, Copy)]
pub struct Admitting<'a> {
    limit: &'a dyn AdmissionLimit,
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

impl<'a> Admitting<'a> {
    /// `limit`, borrowed behind a reference for one call on `clock`.
    #[inline]
    pub fn of_dyn(limit: &'a dyn AdmissionLimit, clock: ClockKind) -> Self {
        Admitting {
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

    /// Asks whether the next attempt may start, after it waited `waited`.
    #[inline]
    pub fn ask(&mut self, waited: Duration) -> Admission {
        let request = AdmissionRequest::new(self.clock.now(), self.attempt.saturating_add(1), waited);
        let answer = self.limit.admit(request);
        match answer {
            Admission::Go => self.attempt = self.attempt.saturating_add(1),
            Admission::Wait(_) => {}
            Admission::Refuse => self.refused = true,
        }
        answer
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

    /// Asks for the next attempt, after it waited `waited` in all:
    /// `Break(true)` to start it, `Break(false)` when refused, or
    /// `Continue(wait)` to sleep, with `waited` grown by it.
    fn next(&mut self, waited: &mut Duration) -> ControlFlow<bool, Duration> {
        match self.ask(*waited) {
            Admission::Go => ControlFlow::Break(true),
            Admission::Refuse => ControlFlow::Break(false),
            Admission::Wait(wait) => {
                *waited = waited.saturating_add(wait);
                ControlFlow::Continue(wait)
            }
        }
    }

    /// Waits (on `sleep`) until the next attempt is admitted: `true` when
    /// it may start, `false` when it was refused.
    pub fn admit_blocking(&mut self, sleep: &dyn Fn(Duration)) -> bool {
        let mut waited = Duration::ZERO;
        loop {
            match self.next(&mut waited) {
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
    let mut waited = Duration::ZERO;
    loop {
        match admitting.next(&mut waited) {
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
