//! `CircuitBreaker`: stops sending to a backend that keeps failing.
//!
//! An admission limiter that stops sending to a backend
//! that keeps failing, then probes it.

use core::fmt;
use core::sync::atomic::{AtomicU8, AtomicU32, AtomicU64, Ordering};
use core::time::Duration;
use std::sync::{Mutex, MutexGuard, PoisonError};

use crate::limits::admission_limit::{Admission, AdmissionLimit, AdmissionRequest, AttemptEnd, Ending, Shut};
use crate::time::Instant;

/// The most outcomes the window holds (four 64-bit words of flags).
const MAX_WINDOW: u32 = 256;

/// How close the fraction a breaker compares with stays to the ratio it
/// was given.
const RATIO_TOLERANCE: f64 = 1e-9;

/// A failure ratio as a fraction, compared with integer counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Fraction {
    numerator: u32,
    denominator: u32,
}

impl Fraction {
    /// The fraction `ratio` (in 0.0 to 1.0) stands for: the first
    /// convergent of its continued fraction within [`RATIO_TOLERANCE`].
    /// 0.07 (in binary a little over 7/100) is 7/100, and 2.0 / 3.0 is
    /// 2/3.
    const fn of(ratio: f64) -> Fraction {
        /// 2^64: the ratio is taken in units of 2^-64, exactly.
        const ONE: u128 = 1 << 64;
        /// The tolerance in those units.
        const TOLERANCE: u128 = (RATIO_TOLERANCE * 18_446_744_073_709_551_616.0) as u128;
        let target = (ratio * 18_446_744_073_709_551_616.0) as u128;
        // Euclid's algorithm on target / ONE gives the continued
        // fraction's terms; `(p, q)` is the latest convergent and
        // `(p_before, q_before)` the one before it.
        let (mut rest, mut divisor) = (target, ONE);
        let (mut p_before, mut q_before, mut p, mut q) = (0_u128, 1_u128, 1_u128, 0_u128);
        loop {
            let term = rest / divisor;
            (rest, divisor) = (divisor, rest % divisor);
            (p_before, q_before, p, q) = (
                p,
                q,
                term.saturating_mul(p).saturating_add(p_before),
                term.saturating_mul(q).saturating_add(q_before),
            );
            let (near, far) = (p.saturating_mul(ONE), q.saturating_mul(target));
            let error = near.abs_diff(far);
            if divisor == 0 || error <= TOLERANCE.saturating_mul(q) {
                break;
            }
        }
        // Within the tolerance, q < 1 / TOLERANCE: it fits.
        Fraction {
            numerator: p as u32,
            denominator: q as u32,
        }
    }

    /// Whether `failures` of `known` reach the fraction.
    #[inline]
    fn reached_by(self, failures: u32, known: u32) -> bool {
        u64::from(failures) * u64::from(self.denominator) >= u64::from(self.numerator) * u64::from(known)
    }
}

/// A circuit breaker, named in `admission = ...` (or
/// [`Retry::admission`](crate::Retry::admission), or a tower layer's
/// `admission`).
///
/// - **Closed** (at first): every attempt goes. It keeps the last
///   [`window`](Self::window) outcomes. It opens when at least
///   [`minimum_throughput`](Self::minimum_throughput) of them are known and
///   the share of failures reaches [`failure_ratio`](Self::failure_ratio),
///   or after [`consecutive_failures`](Self::consecutive_failures) failures
///   in a row (when set). The share is checked after every failure, and
///   after the outcome that completes the minimum, a success included. It
///   is compared in integers: it opens at exactly the ratio. A window with
///   no failure never opens.
/// - **Open**: every attempt is refused at once, for
///   [`break_duration`](Self::break_duration). The call ends with a
///   [`Refused`](crate::limits::Refused) that says a circuit breaker refused and
///   for how long ([`Refused::retry_after`](crate::limits::Refused::retry_after)).
/// - **Half-open** (once the break is over): [`probes`](Self::probes)
///   attempts go. One failure opens the circuit again; as many successes as
///   probes close it, with an empty window. Other attempts are refused while
///   the probes run.
///
/// A failure is what `slow_down_if` flags (by default every error that
/// `retry_if` retries). Anything else is a success: a value, a pending
/// value, an error that is not retried. An outcome that ends while the
/// circuit is open is not counted.
///
/// An attempt that did not answer ([`Ending`]):
///
/// - **Panicked**: a failure. It counts in the window and the streak, and
///   a panicked probe opens the circuit again.
/// - **Abandoned** (its future dropped, a timeout, the hedge that lost, a
///   future never polled): nothing is known of the backend. A closed
///   circuit counts nothing. A half-open circuit frees the probe's place,
///   so the next attempt may probe (resilience4j gives the permit back).
///
/// A refusal is not an attempt. It takes no retry budget or throttle
/// token, and no loop retries it: not this call's, and not a retried call
/// around it. It sits in front of the retries: each attempt, the first
/// included, asks it.
///
/// Defaults, from resilience4j and Polly: a failure ratio of 0.5 over the
/// last 100 outcomes, with at least 100 known (resilience4j's
/// `failureRateThreshold`, `slidingWindowSize` and `minimumNumberOfCalls`;
/// Polly's `MinimumThroughput` is also 100); a break of 5 s and one probe
/// (Polly's `BreakDuration` and its single trial call; resilience4j waits
/// 60 s and lets 10 through).
///
/// ```
/// use backoff_runtime::limits::{Admission, AdmissionLimit, AdmissionRequest, AttemptEnd, CircuitBreaker, CircuitState};
/// use std::time::{Duration, Instant};
///
/// static BACKEND: CircuitBreaker = CircuitBreaker::new().consecutive_failures(3).name("backend");
///
/// let now = Instant::now();
/// for _ in 0..3 {
///     assert_eq!(BACKEND.admit(AdmissionRequest::new(now, 1, Duration::ZERO)), Admission::Go);
///     BACKEND.observed(AttemptEnd::new(now, true));
/// }
/// assert_eq!(BACKEND.state(), CircuitState::Open);
/// assert!(matches!(BACKEND.admit(AdmissionRequest::new(now, 1, Duration::ZERO)), Admission::Shut(_)));
/// ```
pub struct CircuitBreaker<H = fn(&CircuitTransition)> {
    /// Everything but the hook: what [`on_transition`](Self::on_transition)
    /// moves into a breaker of the hook's type.
    circuit: Circuit,
    /// The hook [`CircuitBreaker::on_transition`] sets.
    hook: Option<H>,
}

/// A breaker's state, window and settings.
struct Circuit {
    /// The state, read without a lock on every question: a [`CircuitState`]
    /// as a byte.
    state: AtomicU8,
    /// The window: one flag per outcome, set for a failure.
    flags: [AtomicU64; (MAX_WINDOW / 64) as usize],
    /// Where the next outcome goes in the window (modulo its size).
    next: AtomicU32,
    /// The outcomes the window holds, up to its size.
    known: AtomicU32,
    /// The failures the window holds.
    failures: AtomicU32,
    /// Failures since the last success.
    streak: AtomicU32,
    /// When the circuit opened, and the probes of a half-open circuit.
    transitions: Mutex<Transitions>,
    config: Config,
}

/// What a breaker is built with.
#[derive(Debug)]
struct Config {
    /// The ratio as given (clamped), for its getter.
    failure_ratio: f64,
    /// The ratio as compared.
    ratio: Fraction,
    window: u32,
    minimum_throughput: u32,
    consecutive_failures: Option<u32>,
    break_duration: Duration,
    probes: u32,
    name: Option<&'static str>,
}

/// The part of a breaker's state that changes under its lock.
#[derive(Debug)]
struct Transitions {
    /// Until when an open circuit stays open.
    open_until: Option<Instant>,
    /// Probes let through since the circuit became half-open.
    probes_sent: u32,
    /// Probes that succeeded.
    probes_passed: u32,
}

/// The state of a [`CircuitBreaker`].
///
/// ```
/// use backoff_runtime::limits::{CircuitBreaker, CircuitState};
/// assert_eq!(CircuitBreaker::new().state(), CircuitState::Closed);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CircuitState {
    /// Attempts go, and their outcomes are counted.
    Closed,
    /// Attempts are refused until the break is over.
    Open,
    /// A few probes go; the rest are refused.
    HalfOpen,
}

impl CircuitState {
    /// The state's name in metrics and tracing: `closed`, `open`,
    /// `half_open`.
    ///
    /// ```
    /// assert_eq!(backoff_runtime::limits::CircuitState::HalfOpen.as_str(), "half_open");
    /// ```
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            CircuitState::Closed => "closed",
            CircuitState::Open => "open",
            CircuitState::HalfOpen => "half_open",
        }
    }

    const fn from_byte(byte: u8) -> Self {
        match byte {
            0 => CircuitState::Closed,
            1 => CircuitState::Open,
            _ => CircuitState::HalfOpen,
        }
    }
}

impl fmt::Display for CircuitState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A change of a [`CircuitBreaker`]'s state, as its
/// [`on_transition`](CircuitBreaker::on_transition) hook hears it.
///
/// ```
/// use backoff_runtime::limits::{CircuitBreaker, CircuitState, CircuitTransition};
///
/// fn log(change: &CircuitTransition) {
///     eprintln!("{:?}: {} -> {}", change.breaker(), change.from(), change.to());
/// }
/// static BACKEND: CircuitBreaker = CircuitBreaker::new().on_transition(log);
/// # let _ = &BACKEND;
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CircuitTransition {
    breaker: Option<&'static str>,
    from: CircuitState,
    to: CircuitState,
    at: Instant,
}

impl CircuitTransition {
    /// The breaker's name, when it has one.
    ///
    /// ```
    /// # fn f(change: &backoff_runtime::limits::CircuitTransition) {
    /// let _name: Option<&str> = change.breaker();
    /// # }
    /// ```
    #[must_use]
    pub const fn breaker(&self) -> Option<&'static str> {
        self.breaker
    }

    /// The state before.
    ///
    /// ```
    /// # fn f(change: &backoff_runtime::limits::CircuitTransition) {
    /// let _before = change.from();
    /// # }
    /// ```
    #[must_use]
    pub const fn from(&self) -> CircuitState {
        self.from
    }

    /// The state after.
    ///
    /// ```
    /// # fn f(change: &backoff_runtime::limits::CircuitTransition) {
    /// let _after = change.to();
    /// # }
    /// ```
    #[must_use]
    pub const fn to(&self) -> CircuitState {
        self.to
    }

    /// When it changed, on the loop's clock.
    ///
    /// ```
    /// # fn f(change: &backoff_runtime::limits::CircuitTransition) {
    /// let _at = change.at();
    /// # }
    /// ```
    #[must_use]
    pub const fn at(&self) -> Instant {
        self.at
    }
}

crate::limits::named::default_is_new!(CircuitBreaker);

impl<H: Fn(&CircuitTransition)> fmt::Debug for CircuitBreaker<H> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CircuitBreaker")
            .field("state", &self.state())
            .field("config", &self.circuit.config)
            .field("on_transition", &self.hook.is_some())
            .finish_non_exhaustive()
    }
}

impl CircuitBreaker {
    /// The most outcomes a window holds.
    ///
    /// ```
    /// use backoff_runtime::limits::CircuitBreaker;
    /// assert_eq!(CircuitBreaker::new().window(1_000).get_window(), CircuitBreaker::MAX_WINDOW);
    /// ```
    pub const MAX_WINDOW: u32 = MAX_WINDOW;

    /// A closed breaker with the defaults (see the type's doc). `const`,
    /// so it lives in a `static`.
    ///
    /// ```
    /// use backoff_runtime::limits::CircuitBreaker;
    /// use std::time::Duration;
    ///
    /// let breaker = CircuitBreaker::new();
    /// assert_eq!(breaker.get_failure_ratio(), 0.5);
    /// assert_eq!(breaker.get_break_duration(), Duration::from_secs(5));
    /// ```
    #[must_use]
    pub const fn new() -> Self {
        CircuitBreaker {
            circuit: Circuit {
                state: AtomicU8::new(0),
                flags: [const { AtomicU64::new(0) }; (MAX_WINDOW / 64) as usize],
                next: AtomicU32::new(0),
                known: AtomicU32::new(0),
                failures: AtomicU32::new(0),
                streak: AtomicU32::new(0),
                transitions: Mutex::new(Transitions {
                    open_until: None,
                    probes_sent: 0,
                    probes_passed: 0,
                }),
                config: Config {
                    failure_ratio: 0.5,
                    ratio: Fraction {
                        numerator: 1,
                        denominator: 2,
                    },
                    window: 100,
                    minimum_throughput: 100,
                    consecutive_failures: None,
                    break_duration: Duration::from_secs(5),
                    probes: 1,
                    name: None,
                },
            },
            hook: None,
        }
    }
}

impl<H: Fn(&CircuitTransition) + Copy> CircuitBreaker<H> {
    /// Calls `hook` at each change of state (after the change), in place
    /// of a hook set before (a `fn`, or a closure that is `Copy`).
    ///
    /// `hook` is any closure: it may capture a counter, a logger or a
    /// channel. The method is `const`, so a `static` breaker has a hook
    /// too. A `static`'s type, `CircuitBreaker`, holds a `fn`: a function,
    /// or a closure that captures nothing.
    ///
    /// ```
    /// use backoff_runtime::limits::{CircuitBreaker, CircuitTransition};
    /// static BREAKER: CircuitBreaker = CircuitBreaker::new().on_transition(|change: &CircuitTransition| {
    ///     eprintln!("circuit {}", change.to());
    /// });
    /// # let _ = &BREAKER;
    /// ```
    ///
    /// A closure that captures makes a breaker of its own type:
    ///
    /// ```
    /// use backoff_runtime::limits::{AdmissionLimit, AttemptEnd, CircuitBreaker};
    /// use std::sync::Arc;
    /// use std::sync::atomic::{AtomicU32, Ordering};
    /// use std::time::Instant;
    ///
    /// let opened = Arc::new(AtomicU32::new(0));
    /// let counter = Arc::clone(&opened);
    /// let breaker = CircuitBreaker::new()
    ///     .consecutive_failures(1)
    ///     .on_transition(move |_change| {
    ///         counter.fetch_add(1, Ordering::Relaxed);
    ///     });
    /// breaker.observed(AttemptEnd::new(Instant::now(), true));
    /// assert_eq!(opened.load(Ordering::Relaxed), 1);
    /// ```
    #[must_use]
    pub const fn on_transition<G>(self, hook: G) -> CircuitBreaker<G>
    where
        G: Fn(&CircuitTransition) + Send + Sync,
    {
        CircuitBreaker {
            circuit: self.circuit,
            hook: Some(hook),
        }
    }
}

impl<H: Fn(&CircuitTransition)> CircuitBreaker<H> {
    /// Opens when this share of the window's outcomes failed (0.0 to 1.0;
    /// default 0.5). Outside that range, it is clamped. NaN is taken as
    /// 1.0.
    ///
    /// The ratio is held as a fraction: the first convergent of its
    /// continued fraction within 10^-9 of it. The failures and outcomes
    /// are compared with it as integers. So 0.07 is 7/100, and 7 failures
    /// of 100 open it. 2.0 / 3.0 is 2/3. A decimal of up to four digits is
    /// exact.
    ///
    /// ```
    /// use backoff_runtime::limits::{AdmissionLimit, AttemptEnd, CircuitBreaker, CircuitState};
    /// use std::time::Instant;
    ///
    /// let breaker = CircuitBreaker::new().failure_ratio(0.07);
    /// assert_eq!(breaker.get_failure_ratio(), 0.07);
    /// let now = Instant::now();
    /// for i in 0..100 {
    ///     breaker.observed(AttemptEnd::new(now, i < 7));
    /// }
    /// assert_eq!(breaker.state(), CircuitState::Open, "7 of 100 is 0.07");
    /// ```
    #[must_use]
    pub const fn failure_ratio(mut self, ratio: f64) -> Self {
        let ratio = if ratio.is_nan() { 1.0 } else { ratio.clamp(0.0, 1.0) };
        self.circuit.config.failure_ratio = ratio;
        self.circuit.config.ratio = Fraction::of(ratio);
        self
    }

    /// How many of the last outcomes it keeps (1 to [`MAX_WINDOW`](Self::MAX_WINDOW);
    /// default 100). Outside that range, it is clamped.
    ///
    /// ```
    /// let breaker = backoff_runtime::limits::CircuitBreaker::new().window(20);
    /// assert_eq!(breaker.get_window(), 20);
    /// ```
    #[must_use]
    pub const fn window(mut self, outcomes: u32) -> Self {
        self.circuit.config.window = if outcomes == 0 {
            1
        } else if outcomes > MAX_WINDOW {
            MAX_WINDOW
        } else {
            outcomes
        };
        self
    }

    /// The fewest outcomes the window must hold before the ratio counts
    /// (default 100). Above the window, the whole window.
    ///
    /// ```
    /// let breaker = backoff_runtime::limits::CircuitBreaker::new().window(20).minimum_throughput(10);
    /// assert_eq!(breaker.get_minimum_throughput(), 10);
    /// ```
    #[must_use]
    pub const fn minimum_throughput(mut self, outcomes: u32) -> Self {
        self.circuit.config.minimum_throughput = outcomes;
        self
    }

    /// Also opens after this many failures in a row, whatever the ratio
    /// (off by default; 0 is taken as 1).
    ///
    /// ```
    /// let breaker = backoff_runtime::limits::CircuitBreaker::new().consecutive_failures(5);
    /// assert_eq!(breaker.get_consecutive_failures(), Some(5));
    /// ```
    #[must_use]
    pub const fn consecutive_failures(mut self, failures: u32) -> Self {
        self.circuit.config.consecutive_failures = Some(if failures == 0 { 1 } else { failures });
        self
    }

    /// How long it stays open before probing (default 5 s).
    ///
    /// ```
    /// use std::time::Duration;
    /// let breaker = backoff_runtime::limits::CircuitBreaker::new().break_duration(Duration::from_secs(30));
    /// assert_eq!(breaker.get_break_duration(), Duration::from_secs(30));
    /// ```
    #[must_use]
    pub const fn break_duration(mut self, duration: Duration) -> Self {
        self.circuit.config.break_duration = duration;
        self
    }

    /// How many attempts go while half-open (default 1; 0 is taken as 1).
    ///
    /// ```
    /// let breaker = backoff_runtime::limits::CircuitBreaker::new().probes(3);
    /// assert_eq!(breaker.get_probes(), 3);
    /// ```
    #[must_use]
    pub const fn probes(mut self, probes: u32) -> Self {
        self.circuit.config.probes = if probes == 0 { 1 } else { probes };
        self
    }

    /// Names the breaker: the `breaker` label of its metrics, the name in
    /// its tracing events and in its [`Refused`](crate::limits::Refused).
    ///
    /// ```
    /// let breaker = backoff_runtime::limits::CircuitBreaker::new().name("s3");
    /// assert_eq!(breaker.get_name(), Some("s3"));
    /// ```
    #[must_use]
    pub const fn name(mut self, name: &'static str) -> Self {
        self.circuit.config.name = Some(name);
        self
    }

    /// The breaker's name, if it has one.
    ///
    /// ```
    /// assert_eq!(backoff_runtime::limits::CircuitBreaker::new().get_name(), None);
    /// ```
    #[must_use]
    pub const fn get_name(&self) -> Option<&'static str> {
        self.circuit.config.name
    }

    /// The failure ratio that opens it.
    ///
    /// ```
    /// assert_eq!(backoff_runtime::limits::CircuitBreaker::new().get_failure_ratio(), 0.5);
    /// ```
    #[must_use]
    pub const fn get_failure_ratio(&self) -> f64 {
        self.circuit.config.failure_ratio
    }

    /// How many outcomes the window keeps.
    ///
    /// ```
    /// assert_eq!(backoff_runtime::limits::CircuitBreaker::new().get_window(), 100);
    /// ```
    #[must_use]
    pub const fn get_window(&self) -> u32 {
        self.circuit.config.window
    }

    /// The fewest outcomes before the ratio counts.
    ///
    /// ```
    /// assert_eq!(backoff_runtime::limits::CircuitBreaker::new().get_minimum_throughput(), 100);
    /// ```
    #[must_use]
    pub const fn get_minimum_throughput(&self) -> u32 {
        self.circuit.config.minimum_throughput
    }

    /// The failures in a row that open it, when set.
    ///
    /// ```
    /// assert_eq!(backoff_runtime::limits::CircuitBreaker::new().get_consecutive_failures(), None);
    /// ```
    #[must_use]
    pub const fn get_consecutive_failures(&self) -> Option<u32> {
        self.circuit.config.consecutive_failures
    }

    /// How long it stays open.
    ///
    /// ```
    /// use std::time::Duration;
    /// assert_eq!(backoff_runtime::limits::CircuitBreaker::new().get_break_duration(), Duration::from_secs(5));
    /// ```
    #[must_use]
    pub const fn get_break_duration(&self) -> Duration {
        self.circuit.config.break_duration
    }

    /// How many probes go while half-open.
    ///
    /// ```
    /// assert_eq!(backoff_runtime::limits::CircuitBreaker::new().get_probes(), 1);
    /// ```
    #[must_use]
    pub const fn get_probes(&self) -> u32 {
        self.circuit.config.probes
    }

    /// The state now. An open circuit whose break is over reads `Open`
    /// until the next attempt asks (it then becomes half-open).
    ///
    /// ```
    /// use backoff_runtime::limits::{CircuitBreaker, CircuitState};
    /// assert_eq!(CircuitBreaker::new().state(), CircuitState::Closed);
    /// ```
    #[must_use]
    pub fn state(&self) -> CircuitState {
        CircuitState::from_byte(self.circuit.state.load(Ordering::Acquire))
    }

    /// The failures and the outcomes the window holds now.
    ///
    /// ```
    /// assert_eq!(backoff_runtime::limits::CircuitBreaker::new().failures(), (0, 0));
    /// ```
    #[must_use]
    pub fn failures(&self) -> (u32, u32) {
        (
            self.circuit.failures.load(Ordering::Relaxed),
            self.circuit.known.load(Ordering::Relaxed),
        )
    }

    /// The lock over the transitions, never held across a wait. Its fields
    /// stay consistent whatever a panic interrupted, so a poisoned lock is
    /// taken as is.
    fn lock(&self) -> MutexGuard<'_, Transitions> {
        self.circuit.transitions.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether the window is full of successes: another changes nothing.
    /// (The streak is then 0: every failure is counted in the window
    /// before the streak, and the window is never shorter than it.)
    #[inline]
    fn all_succeeded(&self) -> bool {
        self.circuit.failures.load(Ordering::Relaxed) == 0
            && self.circuit.known.load(Ordering::Relaxed) >= self.circuit.config.window
    }

    /// Counts an outcome of a closed circuit in the window; `true` when it
    /// should open now.
    #[inline(never)]
    fn count(&self, failed: bool) -> bool {
        let window = self.circuit.config.window;
        let slot = self.circuit.next.fetch_add(1, Ordering::Relaxed) % window;
        let (word, bit) = (&self.circuit.flags[(slot / 64) as usize], 1_u64 << (slot % 64));
        let was_failure = if failed {
            word.fetch_or(bit, Ordering::AcqRel)
        } else {
            word.fetch_and(!bit, Ordering::AcqRel)
        } & bit
            != 0;
        match (was_failure, failed) {
            (false, true) => {
                self.circuit.failures.fetch_add(1, Ordering::AcqRel);
            }
            (true, false) => {
                self.circuit.failures.fetch_sub(1, Ordering::AcqRel);
            }
            _ => {}
        }
        let minimum = self.circuit.config.minimum_throughput.min(window);
        // Whether this outcome made the window hold the minimum.
        let mut completed = false;
        if self.circuit.known.load(Ordering::Relaxed) < window {
            if let Ok(before) = self
                .circuit
                .known
                .fetch_update(Ordering::AcqRel, Ordering::Relaxed, |known| {
                    (known < window).then_some(known + 1)
                })
            {
                completed = before + 1 == minimum;
            }
        }
        if failed {
            let streak = self.circuit.streak.fetch_add(1, Ordering::AcqRel).saturating_add(1);
            if self
                .circuit
                .config
                .consecutive_failures
                .is_some_and(|limit| streak >= limit)
            {
                return true;
            }
        } else {
            if self.circuit.streak.load(Ordering::Relaxed) != 0 {
                self.circuit.streak.store(0, Ordering::Relaxed);
            }
            // Past the minimum, a success only lowers the share of
            // failures: only the one that completes the minimum may
            // open the circuit.
            if !completed {
                return false;
            }
        }
        let known = self.circuit.known.load(Ordering::Acquire);
        let failures = self.circuit.failures.load(Ordering::Acquire);
        known >= minimum && failures > 0 && self.circuit.config.ratio.reached_by(failures, known)
    }

    /// Empties the window (the circuit closes or opens).
    fn clear_window(&self) {
        for word in &self.circuit.flags {
            word.store(0, Ordering::Relaxed);
        }
        self.circuit.next.store(0, Ordering::Relaxed);
        self.circuit.known.store(0, Ordering::Relaxed);
        self.circuit.failures.store(0, Ordering::Relaxed);
        self.circuit.streak.store(0, Ordering::Relaxed);
    }

    /// Moves to `to` at `at`, under the lock, and reports it.
    fn go_to(&self, transitions: &mut Transitions, to: CircuitState, at: Instant) {
        let from = self.state();
        if from == to {
            return;
        }
        match to {
            CircuitState::Open => {
                transitions.open_until = Some(at.checked_add(self.circuit.config.break_duration).unwrap_or(at));
                self.clear_window();
            }
            CircuitState::HalfOpen => {
                transitions.probes_sent = 0;
                transitions.probes_passed = 0;
            }
            CircuitState::Closed => {
                transitions.open_until = None;
                self.clear_window();
            }
        }
        self.circuit.state.store(to as u8, Ordering::Release);
        let change = CircuitTransition {
            breaker: self.circuit.config.name,
            from,
            to,
            at,
        };
        crate::observe::trace::circuit_changed(change.breaker, from.as_str(), to.as_str());
        let states = [CircuitState::Closed, CircuitState::Open, CircuitState::HalfOpen].map(CircuitState::as_str);
        crate::observe::metrics::circuit_changed(change.breaker, &states, to.as_str());
        if let Some(hook) = &self.hook {
            hook(&change);
        }
    }

    /// The answer of a circuit that is not closed.
    #[cold]
    #[inline(never)]
    fn admit_not_closed(&self, now: Instant) -> Admission {
        let mut transitions = self.lock();
        if self.state() == CircuitState::Open {
            match transitions.open_until {
                Some(until) if now < until => {
                    return Admission::Shut(Shut::circuit_open(Some(until.saturating_duration_since(now))));
                }
                _ => self.go_to(&mut transitions, CircuitState::HalfOpen, now),
            }
        }
        match self.state() {
            CircuitState::HalfOpen if transitions.probes_sent < self.circuit.config.probes => {
                transitions.probes_sent += 1;
                Admission::Go
            }
            CircuitState::HalfOpen => Admission::Shut(Shut::circuit_open(None)),
            // Closed by a probe meanwhile.
            _ => Admission::Go,
        }
    }

    /// An outcome of a circuit that is not closed: a probe's (or a late
    /// attempt's) while half-open; nothing while open. An abandoned probe
    /// frees its place; a panicked one failed.
    #[cold]
    #[inline(never)]
    fn observed_not_closed(&self, end: AttemptEnd<'_>) {
        let mut transitions = self.lock();
        if self.state() != CircuitState::HalfOpen {
            return;
        }
        let failed = match end.ending() {
            Ending::Abandoned => {
                transitions.probes_sent = transitions.probes_sent.saturating_sub(1);
                return;
            }
            Ending::Panicked => true,
            Ending::Answered => end.slow_down(),
        };
        if failed {
            self.go_to(&mut transitions, CircuitState::Open, end.now());
        } else {
            transitions.probes_passed += 1;
            if transitions.probes_passed >= self.circuit.config.probes {
                self.go_to(&mut transitions, CircuitState::Closed, end.now());
            }
        }
    }

    /// An outcome of a closed circuit that may change its window: a
    /// failure, a panic, or a success that replaces a failure or fills the
    /// window. An abandoned attempt counts nothing.
    #[inline(never)]
    fn observed_closed(&self, end: AttemptEnd<'_>) {
        let failed = match end.ending() {
            Ending::Answered => end.slow_down(),
            Ending::Panicked => true,
            // Nothing is known of the backend: nothing counts.
            Ending::Abandoned => return,
        };
        if self.count(failed) {
            self.trip(end.now());
        }
    }

    /// A closed circuit's outcome opened it.
    #[cold]
    #[inline(never)]
    fn trip(&self, now: Instant) {
        let mut transitions = self.lock();
        if self.state() == CircuitState::Closed {
            self.go_to(&mut transitions, CircuitState::Open, now);
        }
    }
}

impl<H: Fn(&CircuitTransition) + Send + Sync> AdmissionLimit for CircuitBreaker<H> {
    #[inline]
    fn admit(&self, request: AdmissionRequest<'_>) -> Admission {
        if self.circuit.state.load(Ordering::Acquire) == CircuitState::Closed as u8 {
            return Admission::Go;
        }
        self.admit_not_closed(request.now())
    }

    #[inline]
    fn observed(&self, end: AttemptEnd<'_>) {
        if self.circuit.state.load(Ordering::Acquire) != CircuitState::Closed as u8 {
            return self.observed_not_closed(end);
        }
        // An answer that did not ask to slow down.
        let success = matches!(end.ending(), Ending::Answered) & !end.slow_down();
        if success && self.all_succeeded() {
            return;
        }
        self.observed_closed(end);
    }

    fn name(&self) -> Option<&'static str> {
        self.circuit.config.name
    }
}

#[cfg(test)]
mod tests;
