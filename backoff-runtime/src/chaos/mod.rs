//! Fault injection (feature `chaos`): rehearse an outage without a fake
//! server.
//!
//! An [`Injector`] sits innermost, around each attempt. Retries, the budget,
//! the admission limiter (a circuit breaker) and hedging see what it injects
//! as they would see the backend's own answers.
//!
//! - A fault returns an error made by a function.
//! - An outcome returns a fake success made by a function.
//! - Latency waits, then runs the attempt.
//!
//! Each kind has a [`Rate`]: a fixed rate, clamped to `[0, 1]`, or one
//! computed per call.
//!
//! One call goes like this:
//!
//! 1. The gate is read (a bool, a function or an environment variable).
//!    A closed gate injects nothing and draws nothing.
//! 2. One number `u` is drawn, uniform in `[0, 1)`.
//! 3. The kinds are tried in a fixed order: fault, then outcome, then
//!    latency. With rates `f`, `o` and `l`: `u < f` is a fault;
//!    `u < f + o` is an outcome; `u < f + o + l` is latency; anything
//!    else runs the attempt untouched.
//!
//! So a call gets at most one kind. Rates that sum past 1 leave the last
//! kinds less than their rate.
//!
//! The draw comes from the runtime's jitter generator of the calling thread
//! by default ([`testing::seed_thread_rng`](crate::testing::seed_thread_rng)
//! seeds it in tests). [`Injector::seed`] gives the injector a generator of
//! its own, so a run is replayed by its seed. [`Injector::random`] takes any
//! source ([`ChaosRandom`]).
//!
//! Latency waits on the loop's default clock: tokio's timer (a paused clock
//! included) or futures-timer's in async code, `std::thread::sleep` or the
//! [`VirtualClock`](crate::testing::VirtualClock) in sync code. A custom
//! `sleep` of the loop is not used for it.
//!
//! Each injection emits an INFO tracing event (feature `tracing`) and
//! counts in `backoff_injections_total` (feature `metrics`).
//!
//! ```
//! use backoff_runtime::chaos::{Injector, Rate};
//! use backoff_runtime::Policy;
//! use std::time::Duration;
//!
//! #[derive(Debug, PartialEq)]
//! enum Error { Injected }
//!
//! static OUTAGE: Injector<u32, Error> = Injector::new().fault(Rate::new(1.0), || Error::Injected).seed(7);
//!
//! let mut sent = 0;
//! let result = Policy::new()
//!     .max_retries(2)
//!     .initial_backoff(Duration::from_millis(1))
//!     .retry(|| { sent += 1; Ok(5) })
//!     .chaos(&OUTAGE)
//!     .call();
//! assert_eq!((result, sent), (Err(Error::Injected), 0), "three attempts, all injected");
//! ```

mod injected;

pub use self::injected::Injected;

use core::time::Duration;
use std::sync::{Mutex, OnceLock, PoisonError};

use rand::rngs::SmallRng;

use crate::observe::{metrics, trace};
use crate::schedule::rng;
use crate::time::default_wait::DefaultWait;
use crate::time::sleep::{BlockingSleep, DefaultSleep};

/// How often a kind is injected: a fixed rate in `[0, 1]`, or one computed
/// for each call.
///
/// ```
/// use backoff_runtime::chaos::Rate;
///
/// assert_eq!(Rate::new(1.5).get(), 1.0, "clamped");
/// assert_eq!(Rate::new(f64::NAN).get(), 0.0, "NaN is no rate");
/// assert_eq!(Rate::per_call(|| -1.0).get(), 0.0, "clamped at each call");
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Rate(RateKind);

#[derive(Clone, Copy, Debug)]
enum RateKind {
    Fixed(f64),
    PerCall(fn() -> f64),
}

impl Rate {
    /// A fixed rate, clamped to `[0, 1]`. NaN counts as 0.
    ///
    /// ```
    /// assert_eq!(backoff_runtime::chaos::Rate::new(0.3).get(), 0.3);
    /// ```
    #[must_use]
    pub const fn new(rate: f64) -> Rate {
        Rate(RateKind::Fixed(clamp(rate)))
    }

    /// A rate read from `rate` at each call, clamped to `[0, 1]`.
    ///
    /// ```
    /// use backoff_runtime::chaos::Rate;
    /// use std::sync::atomic::{AtomicU64, Ordering};
    ///
    /// static PERCENT: AtomicU64 = AtomicU64::new(10);
    /// let rate = Rate::per_call(|| PERCENT.load(Ordering::Relaxed) as f64 / 100.0);
    /// assert_eq!(rate.get(), 0.1);
    /// PERCENT.store(50, Ordering::Relaxed);
    /// assert_eq!(rate.get(), 0.5);
    /// ```
    #[must_use]
    pub const fn per_call(rate: fn() -> f64) -> Rate {
        Rate(RateKind::PerCall(rate))
    }

    /// The rate now.
    ///
    /// ```
    /// assert_eq!(backoff_runtime::chaos::Rate::new(-2.0).get(), 0.0);
    /// ```
    #[must_use]
    pub fn get(&self) -> f64 {
        match self.0 {
            RateKind::Fixed(rate) => rate,
            RateKind::PerCall(rate) => clamp(rate()),
        }
    }
}

/// `rate` within `[0, 1]`; NaN is 0.
const fn clamp(rate: f64) -> f64 {
    if rate >= 1.0 {
        1.0
    } else if rate > 0.0 {
        rate
    } else {
        0.0
    }
}

/// A random source of one's own for an [`Injector`]: one `u64` per call.
///
/// ```
/// use backoff_runtime::chaos::{ChaosRandom, Injector, Rate};
/// use std::sync::atomic::{AtomicU64, Ordering};
///
/// /// Draws 0, then the top of the range, in turn.
/// struct Alternate(AtomicU64);
/// impl ChaosRandom for Alternate {
///     fn next_u64(&self) -> u64 {
///         if self.0.fetch_add(1, Ordering::Relaxed) % 2 == 0 { 0 } else { u64::MAX }
///     }
/// }
///
/// static SOURCE: Alternate = Alternate(AtomicU64::new(0));
/// static HALF: Injector<(), &str> = Injector::new().fault(Rate::new(0.5), || "injected").random(&SOURCE);
/// assert!(HALF.inject().is_fault());
/// assert!(!HALF.inject().is_fault());
/// ```
pub trait ChaosRandom: Sync {
    /// The next draw.
    fn next_u64(&self) -> u64;
}

/// Where an injector's draws come from.
enum Source {
    /// The calling thread's jitter generator.
    Thread,
    /// A generator of the injector's own, made from `seed` at its first draw.
    Seeded { seed: u64, rng: Mutex<Option<SmallRng>> },
    /// The user's.
    Custom(&'static dyn ChaosRandom),
}

impl Source {
    fn next_u64(&self) -> u64 {
        match self {
            Source::Thread => rng::with_thread_rng(rand::Rng::next_u64),
            Source::Seeded { seed, rng } => {
                let mut rng = rng.lock().unwrap_or_else(PoisonError::into_inner);
                rand::Rng::next_u64(rng.get_or_insert_with(|| rng::seeded(*seed)))
            }
            Source::Custom(source) => source.next_u64(),
        }
    }
}

/// Whether an injector injects at all.
#[derive(Clone, Copy)]
enum Gate {
    On(bool),
    When(fn() -> bool),
    Env(&'static str),
}

/// What an [`Injector`] does to one call.
///
/// ```
/// use backoff_runtime::chaos::{Injection, Injector, Rate};
///
/// static ALWAYS: Injector<u8, &str> = Injector::new().outcome(Rate::new(1.0), || 7);
/// assert!(matches!(ALWAYS.inject(), Injection::Outcome(7)));
/// ```
#[derive(Debug, PartialEq, Eq)]
pub enum Injection<T, E> {
    /// Nothing: the attempt runs as it is.
    Pass,
    /// The attempt does not run; it returns this error.
    Fault(E),
    /// The attempt does not run; it returns this value.
    Outcome(T),
    /// The attempt runs after this wait.
    Latency(Duration),
}

impl<T, E> Injection<T, E> {
    /// Whether this is a fault.
    ///
    /// ```
    /// use backoff_runtime::chaos::Injection;
    /// assert!(Injection::<(), u8>::Fault(1).is_fault());
    /// ```
    pub fn is_fault(&self) -> bool {
        matches!(self, Injection::Fault(_))
    }

    /// Whether anything is injected.
    ///
    /// ```
    /// use backoff_runtime::chaos::Injection;
    /// assert!(!Injection::<(), ()>::Pass.is_injected());
    /// ```
    pub fn is_injected(&self) -> bool {
        !matches!(self, Injection::Pass)
    }
}

/// Injects faults, fake outcomes and latency into the attempts of a call
/// whose result is `Result<T, E>`. Build it in a `static`; name it with the
/// builder's `.chaos(&INJECTOR)`, the attribute's `chaos = INJECTOR` or
/// backoff-tower's `ChaosLayer`.
///
/// The module's documentation gives the order of one call.
///
/// ```
/// use backoff_runtime::chaos::{Injector, Rate};
/// use std::time::Duration;
///
/// static DRILL: Injector<String, std::io::Error> = Injector::new()
///     .name("drill")
///     .fault(Rate::new(0.1), || std::io::ErrorKind::ConnectionReset.into())
///     .latency(Rate::new(0.2), Duration::from_millis(300))
///     .enabled_by_env("CHAOS_DRILL")
///     .seed(42);
/// # let _ = &DRILL;
/// ```
pub struct Injector<T, E> {
    name: &'static str,
    gate: Gate,
    /// The environment variable's answer, read once.
    env: OnceLock<bool>,
    fault: Option<(Rate, fn() -> E)>,
    outcome: Option<(Rate, fn() -> T)>,
    latency: Option<(Rate, Duration)>,
    source: Source,
}

impl<T, E> core::fmt::Debug for Injector<T, E> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Injector")
            .field("name", &self.name)
            .field("fault", &self.fault.map(|(rate, _)| rate))
            .field("outcome", &self.outcome.map(|(rate, _)| rate))
            .field("latency", &self.latency)
            .finish_non_exhaustive()
    }
}

impl<T, E> Default for Injector<T, E> {
    fn default() -> Self {
        Injector::new()
    }
}

impl<T, E> Injector<T, E> {
    /// An injector that injects nothing yet, named `"chaos"`, enabled, and
    /// drawing from the thread's jitter generator.
    ///
    /// ```
    /// use backoff_runtime::chaos::Injector;
    /// static NOTHING: Injector<(), ()> = Injector::new();
    /// assert!(!NOTHING.inject().is_injected());
    /// ```
    #[must_use]
    pub const fn new() -> Self {
        Injector {
            name: "chaos",
            gate: Gate::On(true),
            env: OnceLock::new(),
            fault: None,
            outcome: None,
            latency: None,
            source: Source::Thread,
        }
    }

    /// The name its events and metrics carry (label `injector`).
    ///
    /// ```
    /// use backoff_runtime::chaos::Injector;
    /// static NAMED: Injector<(), ()> = Injector::new().name("payments");
    /// assert_eq!(NAMED.name_of(), "payments");
    /// ```
    #[must_use]
    pub const fn name(mut self, name: &'static str) -> Self {
        self.name = name;
        self
    }

    /// Its name.
    ///
    /// ```
    /// use backoff_runtime::chaos::Injector;
    /// assert_eq!(Injector::<(), ()>::new().name_of(), "chaos");
    /// ```
    pub fn name_of(&self) -> &'static str {
        self.name
    }

    /// Returns the error `make` makes instead of running the attempt, at
    /// `rate`.
    ///
    /// ```
    /// use backoff_runtime::chaos::{Injection, Injector, Rate};
    /// static DOWN: Injector<(), &str> = Injector::new().fault(Rate::new(1.0), || "down");
    /// assert_eq!(DOWN.inject(), Injection::Fault("down"));
    /// ```
    #[must_use]
    pub const fn fault(mut self, rate: Rate, make: fn() -> E) -> Self {
        self.fault = Some((rate, make));
        self
    }

    /// Returns the value `make` makes instead of running the attempt, at
    /// `rate`: a fake success.
    ///
    /// ```
    /// use backoff_runtime::chaos::{Injection, Injector, Rate};
    /// static EMPTY: Injector<Vec<u8>, ()> = Injector::new().outcome(Rate::new(1.0), Vec::new);
    /// assert_eq!(EMPTY.inject(), Injection::Outcome(Vec::new()));
    /// ```
    #[must_use]
    pub const fn outcome(mut self, rate: Rate, make: fn() -> T) -> Self {
        self.outcome = Some((rate, make));
        self
    }

    /// Waits `wait` before the attempt runs, at `rate`.
    ///
    /// ```
    /// use backoff_runtime::chaos::{Injection, Injector, Rate};
    /// use std::time::Duration;
    /// static SLOW: Injector<(), ()> = Injector::new().latency(Rate::new(1.0), Duration::from_secs(2));
    /// assert_eq!(SLOW.inject(), Injection::Latency(Duration::from_secs(2)));
    /// ```
    #[must_use]
    pub const fn latency(mut self, rate: Rate, wait: Duration) -> Self {
        self.latency = Some((rate, wait));
        self
    }

    /// Turns it on or off.
    ///
    /// ```
    /// use backoff_runtime::chaos::{Injector, Rate};
    /// static OFF: Injector<(), ()> = Injector::new().fault(Rate::new(1.0), || ()).enabled(false);
    /// assert!(!OFF.inject().is_injected());
    /// ```
    #[must_use]
    pub const fn enabled(mut self, on: bool) -> Self {
        self.gate = Gate::On(on);
        self
    }

    /// Injects only while `gate` returns `true`, asked at each call before
    /// the draw.
    ///
    /// ```
    /// use backoff_runtime::chaos::{Injector, Rate};
    /// use std::sync::atomic::{AtomicBool, Ordering};
    ///
    /// static DRILL: AtomicBool = AtomicBool::new(false);
    /// static GATED: Injector<(), ()> =
    ///     Injector::new().fault(Rate::new(1.0), || ()).enabled_when(|| DRILL.load(Ordering::Relaxed));
    /// assert!(!GATED.inject().is_injected());
    /// DRILL.store(true, Ordering::Relaxed);
    /// assert!(GATED.inject().is_injected());
    /// ```
    #[must_use]
    pub const fn enabled_when(mut self, gate: fn() -> bool) -> Self {
        self.gate = Gate::When(gate);
        self
    }

    /// Injects only when the environment variable `var` is set, and is not
    /// empty, `0`, `false`, `no` or `off` (in any case). It is read once, at
    /// the first call.
    ///
    /// ```
    /// use backoff_runtime::chaos::{Injector, Rate};
    /// static UNSET: Injector<(), ()> =
    ///     Injector::new().fault(Rate::new(1.0), || ()).enabled_by_env("NO_SUCH_VARIABLE_SET_HERE");
    /// assert!(!UNSET.is_enabled());
    /// ```
    #[must_use]
    pub const fn enabled_by_env(mut self, var: &'static str) -> Self {
        self.gate = Gate::Env(var);
        self
    }

    /// Draws from a generator of its own, seeded with `seed`: the same
    /// seed injects into the same calls, in the order the calls draw.
    ///
    /// ```
    /// use backoff_runtime::chaos::{Injector, Rate};
    /// static A: Injector<(), ()> = Injector::new().fault(Rate::new(0.5), || ()).seed(3);
    /// static B: Injector<(), ()> = Injector::new().fault(Rate::new(0.5), || ()).seed(3);
    /// let a: Vec<bool> = (0..20).map(|_| A.inject().is_fault()).collect();
    /// let b: Vec<bool> = (0..20).map(|_| B.inject().is_fault()).collect();
    /// assert_eq!(a, b);
    /// ```
    #[must_use]
    pub const fn seed(mut self, seed: u64) -> Self {
        self.source = Source::Seeded {
            seed,
            rng: Mutex::new(None),
        };
        self
    }

    /// Draws from `source`.
    ///
    /// ```
    /// use backoff_runtime::chaos::{ChaosRandom, Injector, Rate};
    ///
    /// struct Zero;
    /// impl ChaosRandom for Zero {
    ///     fn next_u64(&self) -> u64 { 0 }
    /// }
    /// static ZERO: Zero = Zero;
    /// static TINY: Injector<(), ()> = Injector::new().fault(Rate::new(1e-9), || ()).random(&ZERO);
    /// assert!(TINY.inject().is_fault(), "a draw of 0 is below any rate above 0");
    /// ```
    #[must_use]
    pub const fn random(mut self, source: &'static dyn ChaosRandom) -> Self {
        self.source = Source::Custom(source);
        self
    }

    /// Whether the gate is open now.
    ///
    /// ```
    /// use backoff_runtime::chaos::Injector;
    /// assert!(Injector::<(), ()>::new().is_enabled());
    /// ```
    pub fn is_enabled(&self) -> bool {
        match self.gate {
            Gate::On(on) => on,
            Gate::When(gate) => gate(),
            Gate::Env(var) => *self.env.get_or_init(|| env_says_on(var)),
        }
    }

    /// What it does to one call: the gate, then one draw. An injection is
    /// reported (tracing, metrics) here.
    ///
    /// ```
    /// use backoff_runtime::chaos::{Injection, Injector, Rate};
    /// static NEVER: Injector<(), ()> = Injector::new().fault(Rate::new(0.0), || ());
    /// assert_eq!(NEVER.inject(), Injection::Pass);
    /// ```
    pub fn inject(&self) -> Injection<T, E> {
        if (self.fault.is_none() && self.outcome.is_none() && self.latency.is_none()) || !self.is_enabled() {
            return Injection::Pass;
        }
        let draw = rng::unit(self.source.next_u64());
        let mut below = 0.0;
        let mut hit = |rate: &Rate| {
            below += rate.get();
            draw < below
        };
        let injection = if let Some((_, make)) = self.fault.as_ref().filter(|(rate, _)| hit(rate)) {
            Injection::Fault(make())
        } else if let Some((_, make)) = self.outcome.as_ref().filter(|(rate, _)| hit(rate)) {
            Injection::Outcome(make())
        } else if let Some((_, wait)) = self.latency.as_ref().filter(|(rate, _)| hit(rate)) {
            Injection::Latency(*wait)
        } else {
            return Injection::Pass;
        };
        self.report(&injection);
        injection
    }

    /// Emits the event and counts the injection.
    #[cold]
    fn report(&self, injection: &Injection<T, E>) {
        let (kind, latency) = match injection {
            Injection::Pass => return,
            Injection::Fault(_) => ("fault", None),
            Injection::Outcome(_) => ("outcome", None),
            Injection::Latency(wait) => ("latency", Some(*wait)),
        };
        trace::injected(self.name, kind, latency);
        metrics::injected(self.name, kind);
    }

    /// Runs one sync attempt `attempt` under the injector: a fault or an
    /// outcome returns without running it; latency sleeps first, on the
    /// default blocking sleep (the virtual clock in tests).
    ///
    /// ```
    /// use backoff_runtime::chaos::{Injector, Rate};
    /// static DOWN: Injector<u8, &str> = Injector::new().fault(Rate::new(1.0), || "injected");
    /// assert_eq!(DOWN.blocking(|| Ok(1)), Err("injected"));
    /// ```
    pub fn blocking(&self, attempt: impl FnOnce() -> Result<T, E>) -> Result<T, E> {
        match self.inject() {
            Injection::Pass => attempt(),
            Injection::Fault(error) => Err(error),
            Injection::Outcome(value) => Ok(value),
            Injection::Latency(wait) => {
                DefaultSleep.sleep(wait);
                attempt()
            }
        }
    }

    /// Runs one async attempt `attempt` under the injector: a fault or an
    /// outcome is ready at once and the attempt is never polled; latency
    /// waits on the default timer before the first poll. Latency needs a
    /// default timer (the `tokio` or `futures-timer` feature): outside
    /// tokio without futures-timer, it panics with the fix.
    ///
    /// ```
    /// use backoff_runtime::chaos::{Injector, Rate};
    /// use std::time::Duration;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// static SLOW: Injector<u8, ()> = Injector::new().latency(Rate::new(1.0), Duration::from_secs(3));
    /// let started = tokio::time::Instant::now();
    /// assert_eq!(SLOW.attempt(async { Ok(1) }).await, Ok(1));
    /// assert_eq!(started.elapsed(), Duration::from_secs(3));
    /// # }
    /// ```
    #[cfg_attr(not(any(feature = "tokio", feature = "futures-timer")), allow(unreachable_code))] // no backend: latency cannot wait
    pub fn attempt<Fut>(&self, attempt: Fut) -> Injected<Fut, T, E> {
        match self.inject() {
            Injection::Pass => Injected::running(attempt),
            Injection::Fault(error) => Injected::now(attempt, Err(error)),
            Injection::Outcome(value) => Injected::now(attempt, Ok(value)),
            Injection::Latency(wait) => Injected::after(DefaultWait::start(wait), attempt),
        }
    }
}

/// Whether the environment variable `var` turns injection on.
fn env_says_on(var: &str) -> bool {
    std::env::var(var).is_ok_and(|value| env_says_on_value(&value))
}

/// Whether a variable's `value` turns injection on: anything but empty,
/// `0`, `false`, `no` or `off`.
fn env_says_on_value(value: &str) -> bool {
    let value = value.trim();
    !(value.is_empty()
        || ["0", "false", "no", "off"]
            .iter()
            .any(|off| value.eq_ignore_ascii_case(off)))
}

#[cfg(test)]
mod tests;
