//! Admission as the loop runs it.
//!
//! The error of a refused attempt ([`Refused`]) and its bound
//! ([`FromRefused`]), and the call's view of the limiter named in `admission =
//! ...` ([`Admitting`]), which asks the limiter's
//! [`admit`](AdmissionLimit::admit) before every attempt.

use core::fmt;
use core::ops::ControlFlow;
use core::time::Duration;

use crate::limits::admission_limit::{Admission, AdmissionLimit, AdmissionRequest, AttemptEnd, Ending, Shut, ShutBy};
use crate::time::Instant;
use crate::time::clock::Clock;

/// The error of an attempt that the limit named in `admission = ...`
/// refused: the client shed the call itself, without sending it. A function
/// with `admission = ...` needs `E: From<Refused>`; the call returns
/// `E::from(refused)` at once, whether the refused attempt was the first or
/// a retry, and reports it as a give-up with
/// [`StopReason::Refused`](crate::StopReason::Refused) (`on_give_up`, the
/// tracing event, the `metrics` counter of calls). It names the limiter
/// when the limiter has a name. A limiter that is shut (a circuit breaker
/// open, a cooldown) says so, and for how long ([`shut`](Self::shut),
/// [`retry_after`](Self::retry_after)).
///
/// No loop retries it: not this call's, and not a retried call around it
/// (the refusal ends the call as a give-up, and the loop above stops with
/// [`StopReason::RetriedBelow`](crate::StopReason::RetriedBelow)).
///
/// ```
/// use backoff_runtime::limits::{AdaptiveRateLimiter, Refused};
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
    shut: Option<Shut>,
}

impl Refused {
    /// A refusal by a limiter without a name (for tests and for converting
    /// by hand).
    ///
    /// ```
    /// assert_eq!(backoff_runtime::limits::Refused::new().limiter(), None);
    /// ```
    #[must_use]
    pub const fn new() -> Self {
        Refused {
            limiter: None,
            shut: None,
        }
    }

    /// A refusal by the limiter named `limiter`.
    ///
    /// ```
    /// assert_eq!(backoff_runtime::limits::Refused::by("store").limiter(), Some("store"));
    /// ```
    #[must_use]
    pub const fn by(limiter: &'static str) -> Self {
        Refused {
            limiter: Some(limiter),
            shut: None,
        }
    }

    /// The same refusal, by a limiter that is shut for a while.
    ///
    /// ```
    /// use backoff_runtime::limits::{Refused, Shut};
    /// use std::time::Duration;
    ///
    /// let refused = Refused::by("s3").shut_as(Shut::circuit_open(Some(Duration::from_secs(5))));
    /// assert!(refused.is_circuit_open());
    /// assert_eq!(refused.retry_after(), Some(Duration::from_secs(5)));
    /// ```
    #[must_use]
    pub const fn shut_as(mut self, shut: Shut) -> Self {
        self.shut = Some(shut);
        self
    }

    /// Why the limiter admits nothing for a while, when it is shut (a
    /// circuit breaker open, a cooldown); `None` for a pacing limiter's
    /// refusal.
    ///
    /// ```
    /// assert_eq!(backoff_runtime::limits::Refused::new().shut(), None);
    /// ```
    #[must_use]
    pub const fn shut(&self) -> Option<Shut> {
        self.shut
    }

    /// Whether a circuit breaker refused: it is open, or its probes run.
    ///
    /// ```
    /// assert!(!backoff_runtime::limits::Refused::new().is_circuit_open());
    /// ```
    #[must_use]
    pub const fn is_circuit_open(&self) -> bool {
        matches!(self.shut, Some(shut) if matches!(shut.by(), ShutBy::CircuitBreaker))
    }

    /// How long until the limiter may admit again, when it is shut and
    /// knows: a caller that queues the work again waits this long.
    ///
    /// ```
    /// use backoff_runtime::limits::{Refused, Shut};
    /// use std::time::Duration;
    ///
    /// let refused = Refused::new().shut_as(Shut::cooldown(Duration::from_secs(30)));
    /// assert_eq!(refused.retry_after(), Some(Duration::from_secs(30)));
    /// ```
    #[must_use]
    pub const fn retry_after(&self) -> Option<Duration> {
        match self.shut {
            Some(shut) => shut.left(),
            None => None,
        }
    }

    /// The name of the limiter that refused, when it has one
    /// ([`AdmissionLimit::name`]).
    ///
    /// ```
    /// assert_eq!(backoff_runtime::limits::Refused::new().limiter(), None);
    /// ```
    #[must_use]
    pub const fn limiter(&self) -> Option<&'static str> {
        self.limiter
    }
}

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.shut.map(|shut| shut.by()) {
            Some(ShutBy::CircuitBreaker) => "circuit breaker",
            Some(ShutBy::Cooldown) => "cooldown",
            None => "limiter",
        };
        match self.limiter {
            Some(name) => write!(f, "the client's {what} {name:?} refused the attempt")?,
            None => write!(f, "the client's {what} refused the attempt")?,
        }
        match self.shut.map(|shut| (shut.by(), shut.left())) {
            Some((ShutBy::CircuitBreaker, Some(left))) => write!(f, " (open for {left:?} more)"),
            Some((ShutBy::CircuitBreaker, None)) => f.write_str(" (half-open: its probes run)"),
            Some((ShutBy::Cooldown, Some(left))) => write!(f, " (the server asked every call to wait {left:?} more)"),
            _ => Ok(()),
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
/// use backoff_runtime::limits::Refused;
/// use backoff_runtime::bounds::FromRefused;
///
/// let refused: std::io::Error = FromRefused::from_refused(Refused::by("store"));
/// assert_eq!(refused.to_string(), "the client's limiter \"store\" refused the attempt");
/// ```
#[diagnostic::on_unimplemented(
    message = "`admission = ...` needs the function's error type to implement `From<backoff_runtime::limits::Refused>`, and `{Self}` does not",
    label = "an attempt the limiter refuses becomes this error type",
    note = "a limiter that paces attempts may refuse one, the first included, and the call then returns that error; if `{Self}` is your own type, add `impl From<backoff_runtime::limits::Refused> for {Self}` (e.g. an `Overloaded` variant); if it is another crate's (such as `reqwest::Error`), return an error of your own that wraps it, or `backoff_runtime::reqwest_errors::Error` (feature `reqwest`), which has the impl"
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

/// The result `R` a refused attempt stands for, made from the refusal:
/// what every loop that asks a limiter keeps beside it.
pub(crate) type RefusedResult<R> = fn(Refused) -> R;

/// Where a call's admission stands between two questions: when the next
/// attempt first asked, whether the limiter reserved its tokens
/// ([`Admission::GoAfter`]), and how many admitted attempts the limiter
/// has not yet heard the end of. A future that cannot keep its
/// [`Admitting`] across polls keeps this instead, and gives it back to an
/// `Admitting` when it is dropped (which tells the limiter).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AdmissionProgress {
    since: Option<Instant>,
    reserved: bool,
    open: u32,
}

impl AdmissionProgress {
    /// Whether the limiter is owed a word when the call is dropped now: an
    /// attempt it admitted and has not heard the end of, or a place in its
    /// line.
    #[inline]
    pub fn holds(&self) -> bool {
        self.open != 0 || self.since.is_some()
    }
}

/// The limiter named in `admission = ...`, as one call uses it: asked before
/// each attempt (counting them), told after each how it ended.
///
/// It holds what the call owes the limiter, and gives it back exactly once.
/// Dropped with an admitted attempt the limiter has not heard the end of
/// (the call's future was dropped, the hedge lost, the body panicked), it
/// tells the limiter [`Ending::Abandoned`] (or [`Ending::Panicked`] while
/// a panic unwinds). Dropped while told to wait, it tells
/// [`AdmissionLimit::withdrawn`].
pub struct Admitting<'a> {
    limit: &'a dyn AdmissionLimit,
    clock: Clock,
    attempt: u32,
    refused: bool,
    shut: Option<Shut>,
    progress: AdmissionProgress,
    key: Option<&'a str>,
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
    pub fn of_dyn(limit: &'a dyn AdmissionLimit, clock: Clock) -> Self {
        Admitting {
            limit,
            clock,
            attempt: 0,
            refused: false,
            shut: None,
            progress: AdmissionProgress {
                since: None,
                reserved: false,
                open: 0,
            },
            key: None,
        }
    }

    /// The same limit, holding the call's first attempt, which it
    /// admitted (the attribute's sync loop asks the first question
    /// without an `Admitting`).
    #[inline]
    pub(crate) fn holding_first(mut self) -> Self {
        self.attempt = 1;
        self.progress.open = 1;
        self
    }

    /// Hands what the call owes the limiter over to the caller, who keeps
    /// it as an [`AdmissionProgress`] (a future that makes an `Admitting`
    /// per question) and gives it back with [`resuming`](Self::resuming).
    /// The limiter hears nothing now.
    #[inline]
    pub fn hand_over(self) -> AdmissionProgress {
        let progress = self.progress;
        core::mem::forget(self);
        progress
    }

    /// The same limit, for a call its front end keys by `key` (the tower
    /// layer by host, the gRPC layer by method).
    #[inline]
    pub fn keyed(mut self, key: Option<&'a str>) -> Self {
        self.key = key;
        self
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
    /// end the call ([`Refuse`](Admission::Refuse),
    /// [`Shut`](Admission::Shut)). After a `GoAfter` the next question is
    /// answered `Go` here, without the limiter: its tokens are taken. The
    /// limiter is told how long the attempt has waited, on the clock, since
    /// it first asked. A first question reads the clock only if the limiter
    /// does.
    #[inline]
    pub fn ask(&mut self) -> Admission {
        if self.progress.reserved || self.progress.since.is_some() {
            return self.ask_again();
        }
        let attempt = self.attempt.saturating_add(1);
        let answer = self
            .limit
            .admit(AdmissionRequest::on_clock(self.clock, attempt).with_key(self.key));
        if answer == Admission::Go {
            self.attempt = attempt;
            self.progress.open += 1;
            return Admission::Go;
        }
        self.answered(answer, attempt)
    }

    /// [`ask`](Self::ask) for an attempt that waited for admission: its
    /// tokens reserved, or asking again.
    #[cold]
    #[inline(never)]
    fn ask_again(&mut self) -> Admission {
        let attempt = self.attempt.saturating_add(1);
        let Some(since) = self.progress.since.filter(|_| !self.progress.reserved) else {
            // The reservation was counted as admitted when it was made.
            self.progress.since = None;
            self.progress.reserved = false;
            self.attempt = attempt;
            return Admission::Go;
        };
        let now = self.clock.now();
        let waited = now.saturating_duration_since(since);
        let answer = self
            .limit
            .admit(AdmissionRequest::new(now, attempt, waited).with_key(self.key));
        self.answered(answer, attempt)
    }

    /// Where the attempt stands after the limiter's `answer`.
    #[cold]
    #[inline(never)]
    pub(crate) fn answered(&mut self, answer: Admission, attempt: u32) -> Admission {
        match answer {
            Admission::Go => {
                self.attempt = attempt;
                self.progress.since = None;
                self.progress.reserved = false;
                self.progress.open += 1;
            }
            Admission::GoAfter(_) => {
                // Its tokens are taken: the limiter hears its end, even if
                // it never starts.
                self.progress.reserved = true;
                self.progress.open += 1;
                self.waiting_since();
            }
            Admission::Wait(_) => self.waiting_since(),
            Admission::Refuse | Admission::Shut(_) => {
                self.refused = true;
                self.shut = match answer {
                    Admission::Shut(shut) => Some(shut),
                    _ => None,
                };
                self.progress.since = None;
                self.progress.reserved = false;
            }
        }
        answer
    }

    /// The attempt waits for admission: from now, unless it waited before.
    #[cold]
    fn waiting_since(&mut self) {
        if self.progress.since.is_none() {
            self.progress.since = Some(self.clock.now());
        }
    }

    /// The refusal of this call's limiter, naming it when it has a name.
    #[inline]
    pub fn refusal(&self) -> Refused {
        Refused {
            limiter: self.limit.name(),
            shut: self.shut,
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

    /// Tells the limiter that the attempt that just ended succeeded.
    #[inline]
    pub fn succeeded(&mut self) {
        self.observed(AttemptEnd::on_clock(self.clock, false, None));
    }

    /// Tells the limiter how the attempt that just ended went (the hooks'
    /// `attempt_end` makes `end`).
    #[inline]
    pub fn observed(&mut self, end: AttemptEnd<'_>) {
        self.progress.open = self.progress.open.saturating_sub(1);
        self.limit.observed(end.with_key(self.key));
    }

    /// Tells the limiter that every admitted attempt it has not heard the
    /// end of was abandoned: a hedged call's attempts that lost.
    #[inline]
    pub fn abandon_open(&mut self) {
        while self.progress.open != 0 {
            self.observed(AttemptEnd::on_clock(self.clock, false, None).ended(Ending::Abandoned));
        }
    }

    /// What the call owes the limiter, given back: each admitted attempt
    /// it has not heard the end of as abandoned (the first as panicked
    /// while a panic unwinds), and the place of an attempt told to wait.
    #[cold]
    #[inline(never)]
    fn give_back(&mut self) {
        if std::thread::panicking() && self.progress.open != 0 {
            self.observed(AttemptEnd::on_clock(self.clock, false, None).ended(Ending::Panicked));
        }
        self.leave_line();
        self.abandon_open();
    }

    /// The next attempt will not be made after all (a hedge the limiter
    /// did not let go at once): a reservation is told as abandoned, a
    /// place in the line as [`withdrawn`](AdmissionLimit::withdrawn).
    #[cold]
    pub fn leave_line(&mut self) {
        let Some(since) = self.progress.since.take() else {
            return;
        };
        if core::mem::take(&mut self.progress.reserved) {
            self.observed(AttemptEnd::on_clock(self.clock, false, None).ended(Ending::Abandoned));
            return;
        }
        let now = self.clock.now();
        let waited = now.saturating_duration_since(since);
        let waiter = AdmissionRequest::new(now, self.attempt.saturating_add(1), waited);
        self.limit.withdrawn(waiter.with_key(self.key));
    }

    /// The clock the call's attempts are timed on.
    #[inline]
    pub fn clock(&self) -> Clock {
        self.clock
    }

    /// Asks for the next attempt: `Break(true)` to start it,
    /// `Break(false)` when refused, or `Continue(wait)` to sleep first.
    fn next(&mut self) -> ControlFlow<bool, Duration> {
        match self.ask() {
            Admission::Go => ControlFlow::Break(true),
            Admission::Refuse | Admission::Shut(_) => ControlFlow::Break(false),
            Admission::Wait(wait) | Admission::GoAfter(wait) => ControlFlow::Continue(wait),
        }
    }

    /// Waits (on `sleep`) until the next attempt is admitted: `true` when
    /// it may start, `false` when it was refused.
    #[inline]
    pub fn admit_blocking(&mut self, sleep: &dyn Fn(Duration)) -> bool {
        match self.ask() {
            Admission::Go => true,
            Admission::Refuse | Admission::Shut(_) => false,
            Admission::Wait(wait) | Admission::GoAfter(wait) => {
                sleep(wait);
                self.admit_blocking_after_waits(sleep)
            }
        }
    }

    /// [`admit_blocking`](Self::admit_blocking) after its first wait.
    #[cold]
    #[inline(never)]
    fn admit_blocking_after_waits(&mut self, sleep: &dyn Fn(Duration)) -> bool {
        loop {
            match self.next() {
                ControlFlow::Break(admitted) => return admitted,
                ControlFlow::Continue(wait) => sleep(wait),
            }
        }
    }
}

impl Drop for Admitting<'_> {
    #[inline]
    fn drop(&mut self) {
        if self.progress.holds() {
            self.give_back();
        }
    }
}

/// Goes on from the limiter's first `answer` for the next attempt of the
/// call that `admitting` paces (the expansion asks inline, and awaits this
/// only for an answer other than `Go`): `true` when it may start, after
/// the waits, `false` when refused.
pub async fn admitted_from<Tm: crate::time::sleep::Timer>(
    answer: Admission,
    admitting: &mut Admitting<'_>,
    timer: &mut Tm,
) -> bool {
    match answer {
        Admission::Go => true,
        Admission::Refuse | Admission::Shut(_) => false,
        Admission::Wait(wait) | Admission::GoAfter(wait) => {
            timer.sleep(wait).await;
            admitted(admitting, timer).await
        }
    }
}

/// Waits on `timer` until the next attempt of the call that `admitting`
/// paces is admitted: `true` when it may start, `false` when the limit
/// refused it. The waits are the loop's own (the virtual clock in tests),
/// and no lock is held across them.
pub(crate) async fn admitted<Tm: crate::time::sleep::Timer>(admitting: &mut Admitting<'_>, timer: &mut Tm) -> bool {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limits::CircuitBreaker;

    #[test]
    fn a_refusal_says_what_shut_the_limiter_and_for_how_long() {
        let breaker = Refused::by("s3").shut_as(Shut::circuit_open(Some(Duration::from_secs(5))));
        assert_eq!(
            breaker.to_string(),
            "the client's circuit breaker \"s3\" refused the attempt (open for 5s more)"
        );
        assert_eq!(breaker.shut(), Some(Shut::circuit_open(Some(Duration::from_secs(5)))));
        let probing = Refused::new().shut_as(Shut::circuit_open(None));
        assert_eq!(
            probing.to_string(),
            "the client's circuit breaker refused the attempt (half-open: its probes run)"
        );
        assert_eq!((probing.is_circuit_open(), probing.retry_after()), (true, None));
        let cooling = Refused::by("api").shut_as(Shut::cooldown(Duration::from_secs(2)));
        assert_eq!(
            cooling.to_string(),
            "the client's cooldown \"api\" refused the attempt (the server asked every call to wait 2s more)"
        );
        assert!(!cooling.is_circuit_open());
        assert_eq!(Refused::by("x").shut(), None);
    }

    /// A limiter that answers from a script and records what it hears.
    struct Recorder {
        answers: std::sync::Mutex<Vec<Admission>>,
        heard: std::sync::Mutex<Vec<String>>,
    }

    impl Recorder {
        fn answering(answers: &[Admission]) -> Self {
            Recorder {
                answers: std::sync::Mutex::new(answers.iter().rev().copied().collect()),
                heard: std::sync::Mutex::default(),
            }
        }

        fn heard(&self) -> Vec<String> {
            self.heard.lock().unwrap().clone()
        }
    }

    impl AdmissionLimit for Recorder {
        fn admit(&self, _: AdmissionRequest<'_>) -> Admission {
            self.answers.lock().unwrap().pop().unwrap_or(Admission::Go)
        }

        fn observed(&self, end: AttemptEnd<'_>) {
            let key = end.key().unwrap_or("-");
            self.heard.lock().unwrap().push(format!("{:?} {key}", end.ending()));
        }

        fn withdrawn(&self, waiter: AdmissionRequest<'_>) {
            let key = waiter.key().unwrap_or("-");
            self.heard
                .lock()
                .unwrap()
                .push(format!("withdrawn {} {:?} {key}", waiter.attempt, waiter.waited()));
        }
    }

    /// What `Recorder` answering `script` heard once a call asked it, got
    /// `answers` and was dropped.
    fn heard_when_dropped(script: &[Admission], answers: &[Admission]) -> Vec<String> {
        let limiter = Recorder::answering(script);
        let mut admitting = Admitting::of_dyn(&limiter, Clock::Std);
        for answer in answers {
            assert_eq!(admitting.ask(), *answer);
        }
        drop(admitting);
        limiter.heard()
    }

    #[test]
    fn an_admitted_attempt_dropped_unheard_is_told_as_abandoned_once() {
        let limiter = Recorder::answering(&[Admission::Go]);
        let mut admitting = Admitting::of_dyn(&limiter, Clock::Std).keyed(Some("host"));
        assert_eq!(admitting.ask(), Admission::Go);
        drop(admitting);
        assert_eq!(limiter.heard(), ["Abandoned host"]);
    }

    #[test]
    fn an_attempt_heard_is_not_told_again_when_the_call_is_dropped() {
        let limiter = Recorder::answering(&[Admission::Go]);
        let mut admitting = Admitting::of_dyn(&limiter, Clock::Std);
        assert_eq!(admitting.ask(), Admission::Go);
        admitting.succeeded();
        drop(admitting);
        assert_eq!(limiter.heard(), ["Answered -"]);
    }

    #[test]
    fn a_panic_unwinding_through_the_call_tells_the_first_open_attempt_as_panicked() {
        let limiter = Recorder::answering(&[Admission::Go, Admission::Go]);
        let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let mut admitting = Admitting::of_dyn(&limiter, Clock::Std);
            assert_eq!(admitting.ask(), Admission::Go);
            assert_eq!(admitting.ask(), Admission::Go);
            panic!("the body panicked");
        }));
        assert!(unwound.is_err());
        assert_eq!(limiter.heard(), ["Panicked -", "Abandoned -"]);
    }

    #[test]
    fn a_waiter_dropped_in_its_wait_is_withdrawn_with_its_attempt_and_wait() {
        let limiter = Recorder::answering(&[Admission::Wait(Duration::from_secs(1))]);
        let mut admitting = Admitting::of_dyn(&limiter, Clock::Std).after(2);
        assert_eq!(admitting.ask(), Admission::Wait(Duration::from_secs(1)));
        drop(admitting);
        let heard = limiter.heard();
        assert_eq!(heard.len(), 1, "{heard:?}");
        assert!(
            heard[0].starts_with("withdrawn 3 "),
            "the third attempt waited: {heard:?}"
        );
    }

    #[test]
    fn a_reservation_dropped_before_its_attempt_is_told_as_abandoned() {
        let reserved = Admission::GoAfter(Duration::from_secs(1));
        assert_eq!(heard_when_dropped(&[reserved], &[reserved]), ["Abandoned -"]);
    }

    #[test]
    fn a_reservation_started_is_heard_once_when_it_ends() {
        let limiter = Recorder::answering(&[Admission::GoAfter(Duration::from_secs(1))]);
        let mut admitting = Admitting::of_dyn(&limiter, Clock::Std);
        assert_eq!(admitting.ask(), Admission::GoAfter(Duration::from_secs(1)));
        assert_eq!(admitting.ask(), Admission::Go, "started without asking again");
        admitting.observed(AttemptEnd::on_clock(Clock::Std, true, None));
        drop(admitting);
        assert_eq!(limiter.heard(), ["Answered -"]);
    }

    #[test]
    fn an_attempt_admitted_after_a_wait_is_told_as_abandoned_when_dropped() {
        let wait = Admission::Wait(Duration::from_millis(5));
        let heard = heard_when_dropped(&[wait, Admission::Go], &[wait, Admission::Go]);
        assert_eq!(heard, ["Abandoned -"], "admitted, not withdrawn");
    }

    #[test]
    fn a_reservation_started_and_dropped_in_flight_is_told_as_abandoned() {
        let reserved = Admission::GoAfter(Duration::from_secs(1));
        let heard = heard_when_dropped(&[reserved], &[reserved, Admission::Go]);
        assert_eq!(heard, ["Abandoned -"]);
    }

    #[test]
    fn a_refused_attempt_owes_the_limiter_nothing() {
        let refused = Admission::Refuse;
        assert!(heard_when_dropped(&[refused], &[refused]).is_empty());
    }

    #[test]
    fn what_is_handed_over_is_given_back_by_the_admitting_it_resumes_in() {
        let limiter = Recorder::answering(&[Admission::Go, Admission::Go]);
        let mut admitting = Admitting::of_dyn(&limiter, Clock::Std);
        assert_eq!(admitting.ask(), Admission::Go);
        let progress = admitting.hand_over();
        assert!(progress.holds());
        assert!(limiter.heard().is_empty(), "handed over: nothing told yet");
        let mut resumed = Admitting::of_dyn(&limiter, Clock::Std).after(1).resuming(progress);
        assert_eq!(resumed.ask(), Admission::Go, "a hedge beside it");
        resumed.succeeded();
        resumed.abandon_open();
        assert!(!resumed.progress().holds());
        drop(resumed);
        assert_eq!(limiter.heard(), ["Answered -", "Abandoned -"]);
    }

    #[test]
    fn a_hedge_that_leaves_the_line_gives_back_its_place_at_once() {
        let limiter = Recorder::answering(&[Admission::Go, Admission::Wait(Duration::from_millis(5))]);
        let mut admitting = Admitting::of_dyn(&limiter, Clock::Std);
        assert_eq!(admitting.ask(), Admission::Go);
        assert_eq!(admitting.ask(), Admission::Wait(Duration::from_millis(5)));
        admitting.leave_line();
        assert_eq!(limiter.heard().len(), 1, "withdrawn now");
        admitting.succeeded();
        drop(admitting);
        let heard = limiter.heard();
        assert!(heard[0].starts_with("withdrawn 2 "), "{heard:?}");
        assert_eq!(heard[1], "Answered -");
    }

    #[test]
    fn a_call_s_admission_debugs_as_its_attempts_and_progress() {
        let breaker = CircuitBreaker::new();
        let admitting = Admitting::of_dyn(&breaker, Clock::Std).after(2);
        assert_eq!(
            format!("{admitting:?}"),
            "Admitting { attempt: 2, progress: AdmissionProgress { since: None, reserved: false, open: 0 }, .. }"
        );
    }
}
