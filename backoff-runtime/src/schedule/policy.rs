//! [`Policy`]: the validated parameters of one retry schedule.

use core::fmt;
use core::time::Duration;

use crate::schedule::grammar;

/// How much randomness is mixed into each wait.
///
/// Every mode keeps every wait `<= max_backoff`. With `base(n) =
/// min(initial_backoff * multiplier^n, max_backoff)`:
///
/// | mode | wait for retry `n` |
/// |---|---|
/// | [`Additive`](Jitter::Additive) (default) | `min(base(n) + U[0, initial_backoff], max_backoff)` |
/// | [`AdditiveUpTo(j)`](Jitter::AdditiveUpTo) | `min(base(n) + U[0, j], max_backoff)` |
/// | [`Full`](Jitter::Full) | `U[0, base(n)]` |
/// | [`Equal`](Jitter::Equal) | `base(n)/2 + U[0, base(n)/2]` |
/// | [`Decorrelated`](Jitter::Decorrelated) | `min(max_backoff, U[initial_backoff, 3 * previous_wait])` |
/// | [`Grpc`](Jitter::Grpc) | `min(base(n) * U[0.8, 1.2], max_backoff)` |
/// | [`None`](Jitter::None) | `base(n)` |
///
/// ```
/// use backoff_runtime::{Jitter, Policy};
/// use std::time::Duration;
///
/// const P: Policy = Policy::new().jitter(Jitter::AdditiveUpTo(Duration::from_millis(250)));
/// assert_eq!(P.get_jitter(), Jitter::AdditiveUpTo(Duration::from_millis(250)));
///
/// // gRPC's: each wait within 20% of base(n), and never above max_backoff.
/// let grpc = Policy::new().jitter(Jitter::Grpc).max_backoff(Duration::from_secs(10));
/// for (n, wait) in grpc.schedule().enumerate() {
///     let base = grpc.base_backoff(n as u32);
///     assert!(wait >= (base * 4 / 5).min(Duration::from_secs(10)));
///     assert!(wait <= (base * 6 / 5).min(Duration::from_secs(10)));
/// }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Jitter {
    /// Google Cloud's jitter: a uniform random amount in `[0, initial_backoff]`
    /// added to each wait (Google's "plus up to 1000 ms" with the default 1 s
    /// first wait), then capped at `max_backoff`. The default.
    Additive,
    /// Additive jitter with an explicit amount: `U[0, amount]` added to each
    /// wait, then capped at `max_backoff`.
    AdditiveUpTo(Duration),
    /// AWS "full jitter": a uniform random wait in `[0, base(n)]`.
    Full,
    /// AWS "equal jitter": half the base plus a uniform random half.
    Equal,
    /// AWS "decorrelated jitter": `U[initial_backoff, 3 * previous_wait]`,
    /// capped at `max_backoff`; the previous wait starts at `initial_backoff`.
    Decorrelated,
    /// gRPC's jitter (connection backoff and retries, proposal A6 as changed
    /// by grpc/proposal#452): `base(n)` times a uniform random factor in
    /// `[0.8, 1.2]`, then capped at `max_backoff`. gRPC itself lets the
    /// jittered wait exceed its maximum by up to 20%; here, as in every mode,
    /// no wait exceeds `max_backoff` (once `1.2 * base(n)` passes the cap,
    /// the draws above it wait `max_backoff`). Exact in nanoseconds: the
    /// draw is in `[ceil(0.8 * base(n)), floor(1.2 * base(n))]`, so no wait
    /// rounds outside the 20% on either side.
    ///
    /// ```
    /// use backoff_runtime::{Jitter, Policy};
    /// use std::time::Duration;
    ///
    /// let p = Policy::new().jitter(Jitter::Grpc);
    /// let first = p.schedule().next();
    /// assert!(first >= Some(Duration::from_millis(800)));
    /// assert!(first <= Some(Duration::from_millis(1200)));
    /// ```
    Grpc,
    /// No randomness: exactly `base(n)`.
    None,
}

/// What a server hint (`retry_after`, `Retry-After`, gRPC's `RetryInfo`)
/// longer than `max_backoff` does.
///
/// [`Stop`](HintAboveCap::Stop), the default: the call ends with
/// [`StopReason::HintAboveCap`](crate::StopReason::HintAboveCap). The server
/// said it will not be ready sooner, and `max_backoff` said the caller will
/// not wait that long; retrying earlier than asked only adds load where the
/// server asked for less. [`WaitCap`](HintAboveCap::WaitCap): wait
/// `max_backoff` and retry anyway (for a caller whose `max_backoff` means
/// "never sleep longer than this", not "never wait for a slower server").
///
/// ```
/// use backoff_runtime::{HintAboveCap, Policy};
/// use std::time::Duration;
///
/// let p = Policy::new().max_backoff(Duration::from_secs(10)).hint_above_cap(HintAboveCap::WaitCap);
/// assert_eq!(p.get_hint_above_cap(), HintAboveCap::WaitCap);
/// assert_eq!(Policy::new().get_hint_above_cap(), HintAboveCap::Stop);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum HintAboveCap {
    /// End the call with `StopReason::HintAboveCap` (the default).
    #[default]
    Stop,
    /// Wait `max_backoff`, then retry.
    WaitCap,
}

/// A value rejected by one of the `try_` builders of [`Policy`].
///
/// ```
/// use backoff_runtime::{Policy, PolicyError};
///
/// assert_eq!(Policy::new().try_max_retries(0), Err(PolicyError::ZeroRetries));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum PolicyError {
    /// `max_retries` was 0: a policy that never retries is no retry policy.
    ZeroRetries,
    /// `initial_backoff` was zero.
    ZeroInitialBackoff,
    /// `max_backoff` was zero: every wait would be zero.
    ZeroMaxBackoff,
    /// `max_elapsed` was zero: no retry could ever start.
    ZeroMaxElapsed,
    /// `multiplier` was below 1, NaN or infinite.
    BadMultiplier,
    /// `initial_backoff` longer than `max_backoff`, both set: the first
    /// wait could never be reached.
    InitialAboveMax {
        /// The `initial_backoff` set.
        initial_backoff: Duration,
        /// The `max_backoff` set.
        max_backoff: Duration,
    },
    /// An additive jitter amount ([`Jitter::AdditiveUpTo`]) larger than
    /// `max_backoff`, both set: no wait could ever hold it.
    JitterAboveMax {
        /// The amount set.
        jitter: Duration,
        /// The `max_backoff` set.
        max_backoff: Duration,
    },
}

impl PolicyError {
    /// What is wrong: the `Display` text, and the panic message of the
    /// builder that rejects the value.
    const fn message(self) -> &'static str {
        match self {
            PolicyError::ZeroRetries => "max_retries must be at least 1",
            PolicyError::ZeroInitialBackoff => "initial_backoff must be greater than zero",
            PolicyError::ZeroMaxBackoff => "max_backoff must be greater than zero",
            PolicyError::ZeroMaxElapsed => "max_elapsed must be greater than zero",
            PolicyError::BadMultiplier => "multiplier must be a finite number >= 1",
            PolicyError::InitialAboveMax { .. } => {
                "initial_backoff is longer than max_backoff: the first wait could never be reached"
            }
            PolicyError::JitterAboveMax { .. } => {
                "the jitter amount is larger than max_backoff: every wait is capped at max_backoff"
            }
        }
    }
}

/// The rules between two values have the attribute's texts, with the values
/// (`grammar.rs`, shared with `#[retry]`).
impl fmt::Display for PolicyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            PolicyError::InitialAboveMax {
                initial_backoff,
                max_backoff,
            } => f.write_str(&grammar::initial_above_max(initial_backoff, max_backoff)),
            PolicyError::JitterAboveMax { jitter, max_backoff } => {
                f.write_str(&grammar::jitter_above_max(jitter, max_backoff, true))
            }
            _ => f.write_str(self.message()),
        }
    }
}

impl std::error::Error for PolicyError {}

/// The parameters of a truncated exponential backoff: how many retries, how
/// long each wait is, how much jitter, and an optional total time budget.
///
/// `Policy::new()` is Google Cloud's truncated exponential backoff: 5 retries, first
/// wait 1 s, doubling, capped at 32 s, plus up to 1 s of random jitter.
/// Every builder is a `const fn`, so a policy can live in a `const` or a
/// `static`; the plain builders panic on bad values (a compile error in const
/// context), the `try_` twins return a [`PolicyError`] for values known only
/// at run time.
///
/// The values set are checked against each other as `#[retry]` checks the
/// values written: an `initial_backoff` longer than the `max_backoff` set,
/// or an additive jitter amount larger than it, is refused, whichever of
/// the two was set first. A default never causes an error: with only
/// `max_backoff(500ms)` set, the default 1 s first wait is capped at 500 ms
/// (every wait is always capped at `max_backoff`). Two policies are equal
/// when their schedules are, whichever values were set.
///
/// With the feature `serde`, a policy is read from and written to any serde
/// format with the attribute's key names and duration grammar, each value
/// checked at load (`docs/settings.md`):
///
/// ```toml
/// max_retries = 8
/// max_backoff = "10s"
/// jitter = "full"
/// ```
///
/// ```
/// use backoff_runtime::{Jitter, Policy};
/// use std::time::Duration;
///
/// const FAST: Policy = Policy::new()
///     .max_retries(3)
///     .initial_backoff(Duration::from_millis(10))
///     .max_backoff(Duration::from_millis(100))
///     .jitter(Jitter::None);
///
/// let waits: Vec<Duration> = FAST.schedule().collect();
/// assert_eq!(waits, [10, 20, 40].map(Duration::from_millis));
/// ```
#[derive(Clone, Copy)]
pub struct Policy {
    pub(crate) max_retries: u32,
    pub(crate) initial_backoff: Duration,
    pub(crate) max_backoff: Duration,
    pub(crate) multiplier: f64,
    /// `multiplier` when it is a whole number up to `u32::MAX`, else 0:
    /// worked out when the multiplier is set, so a retry steps its base by
    /// one integer product without looking at the float.
    pub(crate) whole_multiplier: u32,
    pub(crate) jitter: Jitter,
    pub(crate) max_elapsed: Option<Duration>,
    pub(crate) hint_above_cap: HintAboveCap,
    /// The values set, one bit each ([`Policy::MAX_RETRIES`], ...): only
    /// they are checked against each other, and written out as settings.
    /// In the padding after `hint_above_cap`: the policy is no larger.
    pub(crate) written: u8,
}

/// Equal schedules, however they were built: which values were set is not
/// compared.
impl PartialEq for Policy {
    fn eq(&self, other: &Self) -> bool {
        self.max_retries == other.max_retries
            && self.initial_backoff == other.initial_backoff
            && self.max_backoff == other.max_backoff
            && self.multiplier == other.multiplier
            && self.jitter == other.jitter
            && self.max_elapsed == other.max_elapsed
            && self.hint_above_cap == other.hint_above_cap
    }
}

impl fmt::Debug for Policy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Policy")
            .field("max_retries", &self.max_retries)
            .field("initial_backoff", &self.initial_backoff)
            .field("max_backoff", &self.max_backoff)
            .field("multiplier", &self.multiplier)
            .field("whole_multiplier", &self.whole_multiplier)
            .field("jitter", &self.jitter)
            .field("max_elapsed", &self.max_elapsed)
            .field("hint_above_cap", &self.hint_above_cap)
            .finish()
    }
}

impl Default for Policy {
    fn default() -> Self {
        Policy::new()
    }
}

/// The policy, or a panic with the error's message: the plain builders'
/// face of their `try_` twins (a compile error in a `const`).
/// `m` when it is a whole number from 1 to `u32::MAX`, else 0.
const fn whole_number(m: f64) -> u32 {
    // Saturating cast: NaN is 0, anything above `u32::MAX` is `u32::MAX`
    // (then only equal when `m` is exactly that).
    let whole = m as u32;
    if whole as f64 == m { whole } else { 0 }
}

/// The policy of `#[retry]`'s literal keys: what the expansion's `const`
/// evaluates. Not public API.
///
/// - Each duration is its whole seconds and its nanoseconds below one
///   second.
/// - A zero keeps [`Policy::new`]'s value; `max_elapsed` zero is none.
/// - The attribute has rejected every zero the user could write (zero
///   retries or waits, a multiplier below 1).
///
/// Plain numbers, where `Option<Duration>` arguments were: the compiler
/// interprets about half the code per function (`BENCHMARKS.md`,
/// compile cost).
///
/// ```
/// use backoff_runtime::__private::{Policy, literal_policy};
/// let policy = literal_policy(4, 0, 100_000_000, 5, 0, 0.0, 0, 0);
/// assert_eq!(policy.get_max_retries(), 4);
/// assert_eq!(policy, Policy::new().max_retries(4)
///     .initial_backoff(std::time::Duration::from_millis(100))
///     .max_backoff(std::time::Duration::from_secs(5)));
/// ```
#[doc(hidden)]
#[must_use]
#[allow(clippy::too_many_arguments)]
pub const fn literal_policy(
    max_retries: u32,
    initial_secs: u64,
    initial_nanos: u32,
    max_secs: u64,
    max_nanos: u32,
    multiplier: f64,
    elapsed_secs: u64,
    elapsed_nanos: u32,
) -> Policy {
    let mut policy = Policy::new();
    if max_retries != 0 {
        policy.max_retries = max_retries;
        policy.written |= Policy::MAX_RETRIES;
    }
    if initial_secs != 0 || initial_nanos != 0 {
        policy.initial_backoff = Duration::new(initial_secs, initial_nanos);
        policy.written |= Policy::INITIAL_BACKOFF;
    }
    if max_secs != 0 || max_nanos != 0 {
        policy.max_backoff = Duration::new(max_secs, max_nanos);
        policy.written |= Policy::MAX_BACKOFF;
    }
    if multiplier != 0.0 {
        policy.multiplier = multiplier;
        policy.whole_multiplier = whole_number(multiplier);
        policy.written |= Policy::MULTIPLIER;
    }
    if elapsed_secs != 0 || elapsed_nanos != 0 {
        policy.max_elapsed = Some(Duration::new(elapsed_secs, elapsed_nanos));
        policy.written |= Policy::MAX_ELAPSED;
    }
    policy
}

const fn expect_valid(result: Result<Policy, PolicyError>) -> Policy {
    match result {
        Ok(policy) => policy,
        Err(error) => panic!("{}", error.message()),
    }
}

/// Writes builders in pairs: `try_name` returns the policy with the fields
/// set (and marked written), or the [`PolicyError`] of a bad value
/// ([`Policy::validated`]); `name` panics with that error's message
/// instead. Each pair is written as its two docs,
/// `fn name(value: Type) sets field = new_value, ...; marks BITS;` and
/// `fn try_name;`.
macro_rules! checked_builders {
    ($(
        $(#[doc = $doc:literal])*
        fn $name:ident($value:ident: $type:ty) sets $($field:ident = $new:expr),+; marks $bits:expr;
        $(#[doc = $try_doc:literal])*
        fn $try_name:ident;
    )+) => {$(
        $(#[doc = $doc])*
        #[must_use]
        pub const fn $name(self, $value: $type) -> Self {
            expect_valid(self.$try_name($value))
        }

        $(#[doc = $try_doc])*
        pub const fn $try_name(self, $value: $type) -> Result<Self, PolicyError> {
            Policy { $($field: $new,)+ written: self.written | $bits, ..self }.validated()
        }
    )+};
}

/// Writes `#[must_use]` const getters, each as its doc and
/// `fn name -> field: Type;`.
macro_rules! getters {
    ($( $(#[doc = $doc:literal])* fn $name:ident -> $field:ident: $type:ty; )+) => {$(
        $(#[doc = $doc])*
        #[must_use]
        pub const fn $name(&self) -> $type {
            self.$field
        }
    )+};
}

impl Policy {
    /// Google Cloud's schedule: 5 retries, 1 s first wait, multiplier 2, 32 s cap,
    /// additive jitter of up to one first wait, no total budget.
    ///
    /// ```
    /// use backoff_runtime::Policy;
    /// use std::time::Duration;
    ///
    /// let p = Policy::new();
    /// assert_eq!(p.get_max_retries(), 5);
    /// assert_eq!(p.get_max_backoff(), Duration::from_secs(32));
    /// ```
    #[must_use]
    pub const fn new() -> Self {
        Policy {
            max_retries: 5,
            initial_backoff: Duration::from_secs(1),
            max_backoff: Duration::from_secs(32),
            multiplier: 2.0,
            whole_multiplier: 2,
            jitter: Jitter::Additive,
            max_elapsed: None,
            hint_above_cap: HintAboveCap::Stop,
            written: 0,
        }
    }

    /// The bit of `max_retries` in `written`.
    pub(crate) const MAX_RETRIES: u8 = 1;
    /// The bit of `initial_backoff` in `written`.
    pub(crate) const INITIAL_BACKOFF: u8 = 1 << 1;
    /// The bit of `max_backoff` in `written`.
    pub(crate) const MAX_BACKOFF: u8 = 1 << 2;
    /// The bit of `multiplier` in `written`.
    pub(crate) const MULTIPLIER: u8 = 1 << 3;
    /// The bit of `jitter` in `written`.
    pub(crate) const JITTER: u8 = 1 << 4;
    /// The bit of `max_elapsed` in `written`.
    pub(crate) const MAX_ELAPSED: u8 = 1 << 5;
    /// The bit of `hint_above_cap` in `written`.
    pub(crate) const HINT_ABOVE_CAP: u8 = 1 << 6;

    /// Whether every value of `bits` was set.
    pub(crate) const fn is_set(&self, bits: u8) -> bool {
        self.written & bits == bits
    }

    /// `self`, or the error of its first bad value: every rule a policy
    /// keeps, checked by each `try_` builder. The rules between two values
    /// (`#[retry]`'s) apply when both were set: a default never causes an
    /// error, and neither does the order the values are set in.
    const fn validated(self) -> Result<Self, PolicyError> {
        let multiplier = self.multiplier;
        let jitter_amount = match self.jitter {
            Jitter::AdditiveUpTo(amount) => amount.as_nanos(),
            _ => 0,
        };
        let error = if self.max_retries == 0 {
            PolicyError::ZeroRetries
        } else if self.initial_backoff.is_zero() {
            PolicyError::ZeroInitialBackoff
        } else if self.max_backoff.is_zero() {
            PolicyError::ZeroMaxBackoff
        } else if multiplier.is_nan() || multiplier < 1.0 || !multiplier.is_finite() {
            PolicyError::BadMultiplier
        } else if matches!(self.max_elapsed, Some(elapsed) if elapsed.is_zero()) {
            PolicyError::ZeroMaxElapsed
        } else if self.is_set(Self::INITIAL_BACKOFF | Self::MAX_BACKOFF)
            && self.initial_backoff.as_nanos() > self.max_backoff.as_nanos()
        {
            PolicyError::InitialAboveMax {
                initial_backoff: self.initial_backoff,
                max_backoff: self.max_backoff,
            }
        } else if self.is_set(Self::JITTER | Self::MAX_BACKOFF) && jitter_amount > self.max_backoff.as_nanos() {
            PolicyError::JitterAboveMax {
                jitter: Duration::from_nanos(jitter_amount as u64),
                max_backoff: self.max_backoff,
            }
        } else {
            return Ok(self);
        };
        Err(error)
    }

    checked_builders! {
        /// Sets how many retries follow the first call (so at most `n + 1`
        /// calls). Panics if `n == 0`.
        ///
        /// ```
        /// use backoff_runtime::Policy;
        /// assert_eq!(Policy::new().max_retries(8).get_max_retries(), 8);
        /// ```
        fn max_retries(n: u32) sets max_retries = n; marks Policy::MAX_RETRIES;
        /// Like [`max_retries`](Self::max_retries), but returns an error for 0.
        ///
        /// ```
        /// use backoff_runtime::Policy;
        /// assert!(Policy::new().try_max_retries(2).is_ok());
        /// ```
        fn try_max_retries;

        /// Sets the wait before the first retry (`base(0)`). Panics if zero, or
        /// longer than the `max_backoff` set.
        ///
        /// ```
        /// use backoff_runtime::Policy;
        /// use std::time::Duration;
        /// let p = Policy::new().initial_backoff(Duration::from_millis(100));
        /// assert_eq!(p.get_initial_backoff(), Duration::from_millis(100));
        /// ```
        fn initial_backoff(d: Duration) sets initial_backoff = d; marks Policy::INITIAL_BACKOFF;
        /// Like [`initial_backoff`](Self::initial_backoff), but returns an error for zero,
        /// or for a wait longer than the `max_backoff` set (the default 32 s is
        /// not checked: it caps the waits).
        ///
        /// ```
        /// use backoff_runtime::{Policy, PolicyError};
        /// use std::time::Duration;
        /// assert!(Policy::new().try_initial_backoff(Duration::ZERO).is_err());
        ///
        /// let capped = Policy::new().max_backoff(Duration::from_secs(5));
        /// let error = capped.try_initial_backoff(Duration::from_secs(10)).unwrap_err();
        /// assert!(matches!(error, PolicyError::InitialAboveMax { .. }));
        /// assert!(error.to_string().starts_with("`initial_backoff` (10s) is longer than `max_backoff` (5s)"));
        /// // Set in the other order, the same pair is refused too.
        /// let first = Policy::new().initial_backoff(Duration::from_secs(10));
        /// assert!(first.try_max_backoff(Duration::from_secs(5)).is_err());
        /// ```
        fn try_initial_backoff;

        /// Sets the cap on every wait, jitter and server hints included. Panics if
        /// zero, or shorter than the `initial_backoff` or the additive jitter
        /// amount set.
        ///
        /// ```
        /// use backoff_runtime::Policy;
        /// use std::time::Duration;
        /// let p = Policy::new().max_backoff(Duration::from_secs(64));
        /// assert_eq!(p.get_max_backoff(), Duration::from_secs(64));
        /// ```
        fn max_backoff(d: Duration) sets max_backoff = d; marks Policy::MAX_BACKOFF;
        /// Like [`max_backoff`](Self::max_backoff), but returns an error for zero, or for
        /// a cap shorter than the `initial_backoff` or the additive jitter amount set.
        ///
        /// ```
        /// use backoff_runtime::Policy;
        /// use std::time::Duration;
        /// assert!(Policy::new().try_max_backoff(Duration::from_secs(10)).is_ok());
        /// ```
        fn try_max_backoff;

        /// Sets the growth factor per retry. Panics unless `m` is finite and `>= 1`.
        ///
        /// ```
        /// use backoff_runtime::Policy;
        /// assert_eq!(Policy::new().multiplier(1.5).get_multiplier(), 1.5);
        /// ```
        fn multiplier(m: f64) sets multiplier = m, whole_multiplier = whole_number(m); marks Policy::MULTIPLIER;
        /// Like [`multiplier`](Self::multiplier), but returns an error for bad values.
        ///
        /// ```
        /// use backoff_runtime::Policy;
        /// assert!(Policy::new().try_multiplier(f64::NAN).is_err());
        /// assert!(Policy::new().try_multiplier(0.5).is_err());
        /// ```
        fn try_multiplier;
    }

    checked_builders! {
        /// Sets the jitter mode. `Jitter::AdditiveUpTo(Duration::ZERO)` is the
        /// same as `Jitter::None`. Panics if an additive amount is larger than
        /// the `max_backoff` set.
        ///
        /// ```
        /// use backoff_runtime::{Jitter, Policy};
        /// assert_eq!(Policy::new().jitter(Jitter::Full).get_jitter(), Jitter::Full);
        /// ```
        fn jitter(jitter: Jitter) sets jitter = jitter; marks Policy::JITTER;
        /// Like [`jitter`](Self::jitter), but returns an error for an additive
        /// amount larger than the `max_backoff` set.
        ///
        /// ```
        /// use backoff_runtime::{Jitter, Policy, PolicyError};
        /// use std::time::Duration;
        ///
        /// let capped = Policy::new().max_backoff(Duration::from_secs(2));
        /// assert!(matches!(
        ///     capped.try_jitter(Jitter::AdditiveUpTo(Duration::from_secs(5))),
        ///     Err(PolicyError::JitterAboveMax { .. })
        /// ));
        /// ```
        fn try_jitter;
    }

    checked_builders! {
        /// Sets a total time budget, measured on a monotonic clock from the first
        /// call: a wait that would end past it is not started, and the last
        /// error is returned at once. Panics if zero.
        ///
        /// ```
        /// use backoff_runtime::Policy;
        /// use std::time::Duration;
        /// let p = Policy::new().max_elapsed(Duration::from_secs(60));
        /// assert_eq!(p.get_max_elapsed(), Some(Duration::from_secs(60)));
        /// ```
        fn max_elapsed(d: Duration) sets max_elapsed = Some(d); marks Policy::MAX_ELAPSED;
        /// Like [`max_elapsed`](Self::max_elapsed), but returns an error for zero.
        ///
        /// ```
        /// use backoff_runtime::Policy;
        /// use std::time::Duration;
        /// assert!(Policy::new().try_max_elapsed(Duration::ZERO).is_err());
        /// ```
        fn try_max_elapsed;

        /// Retries bounded by time alone: at most `d` from the first call
        /// (`max_elapsed`), as many retries as fit (`max_retries` becomes
        /// `u32::MAX`). Polling "for at most 2 minutes" is
        /// `Policy::new().retry_for(Duration::from_secs(120))`; there is no way
        /// to lift both bounds. Panics if `d` is zero.
        ///
        /// ```
        /// use backoff_runtime::Policy;
        /// use std::time::Duration;
        /// let p = Policy::new().retry_for(Duration::from_secs(120));
        /// assert_eq!(p.get_max_elapsed(), Some(Duration::from_secs(120)));
        /// assert_eq!(p.get_max_retries(), u32::MAX);
        /// ```
        fn retry_for(d: Duration) sets max_elapsed = Some(d), max_retries = u32::MAX; marks Policy::MAX_ELAPSED | Policy::MAX_RETRIES;
        /// Like [`retry_for`](Self::retry_for), but returns an error for zero.
        ///
        /// ```
        /// use backoff_runtime::Policy;
        /// use std::time::Duration;
        /// assert!(Policy::new().try_retry_for(Duration::ZERO).is_err());
        /// ```
        fn try_retry_for;
    }

    /// Sets what a server hint longer than `max_backoff` does (see
    /// [`HintAboveCap`]; the default stops).
    ///
    /// ```
    /// use backoff_runtime::{HintAboveCap, Policy};
    /// let p = Policy::new().hint_above_cap(HintAboveCap::WaitCap);
    /// assert_eq!(p.get_hint_above_cap(), HintAboveCap::WaitCap);
    /// ```
    #[must_use]
    pub const fn hint_above_cap(mut self, rule: HintAboveCap) -> Self {
        self.hint_above_cap = rule;
        self.written |= Policy::HINT_ABOVE_CAP;
        self
    }

    getters! {
        /// What a server hint longer than `max_backoff` does.
        ///
        /// ```
        /// use backoff_runtime::{HintAboveCap, Policy};
        /// assert_eq!(Policy::new().get_hint_above_cap(), HintAboveCap::Stop);
        /// ```
        fn get_hint_above_cap -> hint_above_cap: HintAboveCap;

        /// How many retries follow the first call (`u32::MAX` after
        /// [`retry_for`](Self::retry_for): bounded by time alone).
        ///
        /// ```
        /// assert_eq!(backoff_runtime::Policy::new().get_max_retries(), 5);
        /// ```
        fn get_max_retries -> max_retries: u32;

        /// The wait before the first retry, before jitter.
        ///
        /// ```
        /// use std::time::Duration;
        /// assert_eq!(backoff_runtime::Policy::new().get_initial_backoff(), Duration::from_secs(1));
        /// ```
        fn get_initial_backoff -> initial_backoff: Duration;

        /// The cap on every wait.
        ///
        /// ```
        /// use std::time::Duration;
        /// assert_eq!(backoff_runtime::Policy::new().get_max_backoff(), Duration::from_secs(32));
        /// ```
        fn get_max_backoff -> max_backoff: Duration;

        /// The growth factor per retry.
        ///
        /// ```
        /// assert_eq!(backoff_runtime::Policy::new().get_multiplier(), 2.0);
        /// ```
        fn get_multiplier -> multiplier: f64;

        /// The jitter mode.
        ///
        /// ```
        /// use backoff_runtime::{Jitter, Policy};
        /// assert_eq!(Policy::new().get_jitter(), Jitter::Additive);
        /// ```
        fn get_jitter -> jitter: Jitter;

        /// The total time budget, if any.
        ///
        /// ```
        /// assert_eq!(backoff_runtime::Policy::new().get_max_elapsed(), None);
        /// ```
        fn get_max_elapsed -> max_elapsed: Option<Duration>;
    }
}

#[cfg(test)]
mod tests;
