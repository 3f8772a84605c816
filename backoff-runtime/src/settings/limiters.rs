//! The limiters' settings.
//!
//! One type per limiter, read and written with the
//! names of its builder methods, each value checked with the builder's
//! rule (where a builder clamps a value, the settings refuse it: a value a
//! file got wrong is a mistake to report, not to round), and a `build()`
//! that makes a fresh limiter. Why settings and not the limiters
//! themselves: the module's doc.

use core::time::Duration;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::limits::adaptive_rate::AdaptiveRateLimiter;
use crate::limits::adaptive_throttle::AdaptiveThrottle;
use crate::limits::budget::RetryBudget;
use crate::limits::circuit_breaker::CircuitBreaker;
use crate::limits::cooldown::Cooldown;
use crate::limits::throttle::RetryThrottle;
use crate::schedule::grammar;
use crate::settings::values::{self, Zero};
use crate::settings::{Key, Scalar, Stored, Table, deserialize_table, serialize_table, set_if};

/// A duration key.
const fn duration(name: &'static str) -> Key {
    Key {
        name,
        takes: "a duration with a unit, such as \"10s\" or \"250ms\"",
        stored: Stored::Str,
    }
}

/// A whole-number key.
const fn count(name: &'static str) -> Key {
    Key {
        name,
        takes: "a whole number",
        stored: Stored::U32,
    }
}

/// A number key.
const fn number(name: &'static str) -> Key {
    Key {
        name,
        takes: "a number",
        stored: Stored::F64,
    }
}

/// `Deserialize` and `Serialize` through the type's [`Table`].
macro_rules! serde_by_table {
    ($($settings:ty),*) => {$(
        impl<'de> Deserialize<'de> for $settings {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                deserialize_table(deserializer)
            }
        }

        impl Serialize for $settings {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serialize_table(self, serializer)
            }
        }
    )*};
}

serde_by_table!(
    RetryBudgetSettings,
    RetryThrottleSettings,
    AdaptiveRateLimiterSettings,
    AdaptiveThrottleSettings,
    CircuitBreakerSettings,
    CooldownSettings
);

/// The values that were set, as `(index in KEYS, value)`.
fn set_entries<const N: usize>(values: [Option<Scalar>; N]) -> Vec<(usize, Scalar)> {
    values
        .into_iter()
        .enumerate()
        .filter_map(|(index, value)| Some((index, value?)))
        .collect()
}

fn text(d: Duration) -> Scalar {
    Scalar::Str(grammar::format_duration(d))
}

/// The settings of a [`RetryBudget`]: `ratio` (retries per call, 0 to
/// 1000; default 0.2), `min_per_second` (retries allowed per second
/// whatever the traffic; default 10) and `window` (at least `"10ms"`;
/// default `"10s"`). A key left out keeps the default.
///
/// ```
/// use backoff_runtime::settings::RetryBudgetSettings;
/// use std::time::Duration;
///
/// let settings: RetryBudgetSettings = toml::from_str("ratio = 0.1\nwindow = \"30s\"").unwrap();
/// let budget = settings.build();
/// assert_eq!((budget.get_ratio(), budget.get_window()), (0.1, Duration::from_secs(30)));
/// assert_eq!(budget.get_min_per_second(), 10);
///
/// let error = toml::from_str::<RetryBudgetSettings>("window = \"5ms\"").unwrap_err();
/// assert!(error.message().starts_with("`window` must be at least 10ms"));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RetryBudgetSettings {
    ratio: Option<f64>,
    min_per_second: Option<u32>,
    window: Option<Duration>,
}

impl RetryBudgetSettings {
    /// A new budget with these settings (each one left out at
    /// [`RetryBudget::new`]'s value). Name it on the result (`.name("db")`).
    #[must_use]
    pub fn build(&self) -> RetryBudget {
        let budget = RetryBudget::new();
        let budget = set_if(budget, self.ratio, RetryBudget::ratio);
        let budget = set_if(budget, self.min_per_second, RetryBudget::min_per_second);
        set_if(budget, self.window, RetryBudget::window)
    }
}

impl Table for RetryBudgetSettings {
    const WHAT: &'static str = "a retry budget's settings";
    const KEYS: &'static [Key] = &[number("ratio"), count("min_per_second"), duration("window")];
    type Raw = Self;

    fn read(raw: &mut Self, index: usize, value: Scalar) -> Result<(), String> {
        let key = Self::KEYS[index].name;
        match index {
            0 => {
                let range = "a number from 0 to 1000 (the retries allowed per call)";
                raw.ratio = Some(values::number_within(key, value, (0.0, 1000.0), range, "0.2")?);
            }
            1 => raw.min_per_second = Some(values::count(key, value, 0, u32::MAX)?),
            _ => {
                let why = "each of its 10 slots must be at least a millisecond";
                raw.window = Some(values::duration_at_least(key, value, Duration::from_millis(10), why)?);
            }
        }
        Ok(())
    }

    fn finish(raw: Self) -> Result<Self, String> {
        Ok(raw)
    }

    fn entries(&self, _human_readable: bool) -> Result<Vec<(usize, Scalar)>, String> {
        Ok(set_entries([
            self.ratio.map(Scalar::Float),
            self.min_per_second.map(|n| Scalar::Int(n.into())),
            self.window.map(text),
        ]))
    }
}

/// The settings of a [`RetryThrottle`] (gRPC's `retryThrottling`): both
/// keys are required, as [`RetryThrottle::new`] takes both: `max_tokens`
/// (1 to 1000) and `token_ratio` (0.001 to 1000, kept to three decimals).
///
/// ```
/// use backoff_runtime::settings::RetryThrottleSettings;
///
/// let settings: RetryThrottleSettings = serde_json::from_str(r#"{"max_tokens": 10, "token_ratio": 0.1}"#).unwrap();
/// assert_eq!(settings.build().get_max_tokens(), 10);
///
/// let error = serde_json::from_str::<RetryThrottleSettings>(r#"{"max_tokens": 10}"#).unwrap_err();
/// assert!(error.to_string().starts_with("missing key `token_ratio`"));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RetryThrottleSettings {
    max_tokens: u32,
    token_ratio: f64,
}

impl RetryThrottleSettings {
    /// A new throttle with these settings, its bucket full. Name it on the
    /// result (`.name("backend")`).
    #[must_use]
    pub fn build(&self) -> RetryThrottle {
        RetryThrottle::new(self.max_tokens, self.token_ratio)
    }
}

/// What a throttle's keys held, as read.
#[derive(Default)]
pub(crate) struct RawThrottle {
    max_tokens: Option<u32>,
    token_ratio: Option<f64>,
}

impl Table for RetryThrottleSettings {
    const WHAT: &'static str = "a retry throttle's settings";
    const KEYS: &'static [Key] = &[count("max_tokens"), number("token_ratio")];
    type Raw = RawThrottle;

    fn read(raw: &mut RawThrottle, index: usize, value: Scalar) -> Result<(), String> {
        let key = Self::KEYS[index].name;
        if index == 0 {
            raw.max_tokens = Some(values::count(key, value, 1, 1000)?);
        } else {
            let shown = values::shown(&value);
            let ratio = values::number(key, value, "0.1")?;
            if RetryThrottle::try_new(1, ratio).is_err() {
                return Err(format!(
                    "`{key}` must be a number from 0.001 to 1000 (kept to three decimals, as gRPC keeps it), got {shown}"
                ));
            }
            raw.token_ratio = Some(ratio);
        }
        Ok(())
    }

    fn finish(raw: RawThrottle) -> Result<Self, String> {
        let missing = |key: &str| {
            format!(
                "missing key `{key}`: a retry throttle takes both `max_tokens` (1 to 1000) and `token_ratio` (0.001 to 1000), as gRPC's `retryThrottling`"
            )
        };
        Ok(RetryThrottleSettings {
            max_tokens: raw.max_tokens.ok_or_else(|| missing("max_tokens"))?,
            token_ratio: raw.token_ratio.ok_or_else(|| missing("token_ratio"))?,
        })
    }

    fn entries(&self, _human_readable: bool) -> Result<Vec<(usize, Scalar)>, String> {
        Ok(vec![
            (0, Scalar::Int(self.max_tokens.into())),
            (1, Scalar::Float(self.token_ratio)),
        ])
    }
}

/// A finite cost above 0.
fn cost(key: &str, value: Scalar) -> Result<f64, String> {
    let shown = values::shown(&value);
    let cost = values::number(key, value, "1")?;
    if cost.is_finite() && cost > 0.0 {
        Ok(cost)
    } else {
        Err(format!("`{key}` must be a finite number above 0 (tokens), got {shown}"))
    }
}

/// The settings of an [`AdaptiveRateLimiter`]: `cost` and `retry_cost` (the
/// tokens a first attempt and a retry take, finite and above 0; default 1
/// each) and `max_wait` (the longest an attempt waits for admission;
/// `"0s"` refuses instead of waiting; default `"10s"`).
///
/// ```
/// use backoff_runtime::settings::AdaptiveRateLimiterSettings;
/// use std::time::Duration;
///
/// let settings: AdaptiveRateLimiterSettings = toml::from_str("retry_cost = 5\nmax_wait = \"2s\"").unwrap();
/// let limiter = settings.build();
/// assert_eq!((limiter.get_retry_cost(), limiter.get_max_wait()), (5.0, Duration::from_secs(2)));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct AdaptiveRateLimiterSettings {
    cost: Option<f64>,
    retry_cost: Option<f64>,
    max_wait: Option<Duration>,
}

impl AdaptiveRateLimiterSettings {
    /// A new limiter with these settings. Name it on the result.
    #[must_use]
    pub fn build(&self) -> AdaptiveRateLimiter {
        let limiter = AdaptiveRateLimiter::new();
        let limiter = set_if(limiter, self.cost, AdaptiveRateLimiter::cost);
        let limiter = set_if(limiter, self.retry_cost, AdaptiveRateLimiter::retry_cost);
        set_if(limiter, self.max_wait, AdaptiveRateLimiter::max_wait)
    }
}

impl Table for AdaptiveRateLimiterSettings {
    const WHAT: &'static str = "an adaptive rate limiter's settings";
    const KEYS: &'static [Key] = &[number("cost"), number("retry_cost"), duration("max_wait")];
    type Raw = Self;

    fn read(raw: &mut Self, index: usize, value: Scalar) -> Result<(), String> {
        let key = Self::KEYS[index].name;
        match index {
            0 => raw.cost = Some(cost(key, value)?),
            1 => raw.retry_cost = Some(cost(key, value)?),
            _ => raw.max_wait = Some(values::duration(key, value, Zero::Allowed)?),
        }
        Ok(())
    }

    fn finish(raw: Self) -> Result<Self, String> {
        Ok(raw)
    }

    fn entries(&self, _human_readable: bool) -> Result<Vec<(usize, Scalar)>, String> {
        Ok(set_entries([
            self.cost.map(Scalar::Float),
            self.retry_cost.map(Scalar::Float),
            self.max_wait.map(text),
        ]))
    }
}

/// The settings of an [`AdaptiveThrottle`]: `k` (finite, at least 1;
/// default 2) and `window` (at least `"10ns"`; default `"2m"`).
///
/// ```
/// use backoff_runtime::settings::AdaptiveThrottleSettings;
///
/// let settings: AdaptiveThrottleSettings = toml::from_str("k = 1.5").unwrap();
/// assert_eq!(settings.build().get_k(), 1.5);
/// let error = toml::from_str::<AdaptiveThrottleSettings>("k = 0.5").unwrap_err();
/// assert!(error.message().starts_with("`k` must be a finite number of at least 1"));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct AdaptiveThrottleSettings {
    k: Option<f64>,
    window: Option<Duration>,
}

impl AdaptiveThrottleSettings {
    /// A new throttle with these settings. Name it on the result.
    #[must_use]
    pub fn build(&self) -> AdaptiveThrottle {
        let throttle = AdaptiveThrottle::new();
        let throttle = set_if(throttle, self.k, AdaptiveThrottle::k);
        set_if(throttle, self.window, AdaptiveThrottle::window)
    }
}

impl Table for AdaptiveThrottleSettings {
    const WHAT: &'static str = "an adaptive throttle's settings";
    const KEYS: &'static [Key] = &[number("k"), duration("window")];
    type Raw = Self;

    fn read(raw: &mut Self, index: usize, value: Scalar) -> Result<(), String> {
        let key = Self::KEYS[index].name;
        if index == 0 {
            let shown = values::shown(&value);
            let k = values::number(key, value, "2")?;
            if !(k.is_finite() && k >= 1.0) {
                return Err(format!(
                    "`{key}` must be a finite number of at least 1 (the backend sees about K times what it accepts; the SRE book's 2), got {shown}"
                ));
            }
            raw.k = Some(k);
        } else {
            let why = "each of its 10 slots must be at least a nanosecond";
            raw.window = Some(values::duration_at_least(key, value, Duration::from_nanos(10), why)?);
        }
        Ok(())
    }

    fn finish(raw: Self) -> Result<Self, String> {
        Ok(raw)
    }

    fn entries(&self, _human_readable: bool) -> Result<Vec<(usize, Scalar)>, String> {
        Ok(set_entries([self.k.map(Scalar::Float), self.window.map(text)]))
    }
}

/// The settings of a [`CircuitBreaker`]: `failure_ratio` (0 to 1; default
/// 0.5), `window` (outcomes kept, 1 to [`CircuitBreaker::MAX_WINDOW`];
/// default 100), `minimum_throughput` (default 100; not above the `window`
/// written), `consecutive_failures` (at least 1; off by default),
/// `break_duration` (above 0; default `"5s"`) and `probes` (at least 1;
/// default 1). The builder clamps a value out of range; the settings refuse
/// it. A hook (`on_transition`) and a name are set on the breaker built.
///
/// ```
/// use backoff_runtime::settings::CircuitBreakerSettings;
/// use std::time::Duration;
///
/// let settings: CircuitBreakerSettings = toml::from_str(r#"
///     failure_ratio = 0.25
///     window = 20
///     minimum_throughput = 10
///     break_duration = "30s"
/// "#).unwrap();
/// let breaker = settings.build();
/// assert_eq!(breaker.get_break_duration(), Duration::from_secs(30));
///
/// let error = toml::from_str::<CircuitBreakerSettings>("window = 20\nminimum_throughput = 50").unwrap_err();
/// assert!(error.message().starts_with("`minimum_throughput` (50) is larger than `window` (20)"));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CircuitBreakerSettings {
    failure_ratio: Option<f64>,
    window: Option<u32>,
    minimum_throughput: Option<u32>,
    consecutive_failures: Option<u32>,
    break_duration: Option<Duration>,
    probes: Option<u32>,
}

impl CircuitBreakerSettings {
    /// A new, closed breaker with these settings. Name it, and give it an
    /// `on_transition` hook, on the result.
    #[must_use]
    pub fn build(&self) -> CircuitBreaker {
        let breaker = CircuitBreaker::new();
        let breaker = set_if(breaker, self.failure_ratio, CircuitBreaker::failure_ratio);
        let breaker = set_if(breaker, self.window, CircuitBreaker::window);
        let breaker = set_if(breaker, self.minimum_throughput, CircuitBreaker::minimum_throughput);
        let breaker = set_if(breaker, self.consecutive_failures, CircuitBreaker::consecutive_failures);
        let breaker = set_if(breaker, self.break_duration, CircuitBreaker::break_duration);
        set_if(breaker, self.probes, CircuitBreaker::probes)
    }
}

impl Table for CircuitBreakerSettings {
    const WHAT: &'static str = "a circuit breaker's settings";
    const KEYS: &'static [Key] = &[
        number("failure_ratio"),
        count("window"),
        count("minimum_throughput"),
        count("consecutive_failures"),
        duration("break_duration"),
        count("probes"),
    ];
    type Raw = Self;

    fn read(raw: &mut Self, index: usize, value: Scalar) -> Result<(), String> {
        let key = Self::KEYS[index].name;
        match index {
            0 => {
                let range = "a share of the outcomes from 0 to 1";
                raw.failure_ratio = Some(values::number_within(key, value, (0.0, 1.0), range, "0.5")?);
            }
            1 => raw.window = Some(values::count(key, value, 1, CircuitBreaker::MAX_WINDOW)?),
            2 => raw.minimum_throughput = Some(values::count(key, value, 0, u32::MAX)?),
            3 => raw.consecutive_failures = Some(values::count(key, value, 1, u32::MAX)?),
            4 => raw.break_duration = Some(values::duration(key, value, Zero::Refused)?),
            _ => raw.probes = Some(values::count(key, value, 1, u32::MAX)?),
        }
        Ok(())
    }

    fn finish(raw: Self) -> Result<Self, String> {
        if let (Some(minimum), Some(window)) = (raw.minimum_throughput, raw.window) {
            if minimum > window {
                return Err(format!(
                    "`minimum_throughput` ({minimum}) is larger than `window` ({window}): the window never holds that many outcomes; lower `minimum_throughput` or raise `window`"
                ));
            }
        }
        Ok(raw)
    }

    fn entries(&self, _human_readable: bool) -> Result<Vec<(usize, Scalar)>, String> {
        let whole = |n: u32| Scalar::Int(n.into());
        Ok(set_entries([
            self.failure_ratio.map(Scalar::Float),
            self.window.map(whole),
            self.minimum_throughput.map(whole),
            self.consecutive_failures.map(whole),
            self.break_duration.map(text),
            self.probes.map(whole),
        ]))
    }
}

/// The settings of a [`Cooldown`]: `max_wait` (the longest an attempt
/// waits for a hint's instant; `"0s"` refuses instead of waiting; default
/// `"10s"`) and `max_hint` (the longest a hint holds, above 0; default
/// `"32s"`).
///
/// ```
/// use backoff_runtime::settings::CooldownSettings;
/// use std::time::Duration;
///
/// let settings: CooldownSettings = toml::from_str("max_wait = \"0s\"\nmax_hint = \"1m\"").unwrap();
/// let cooldown = settings.build();
/// assert_eq!((cooldown.get_max_wait(), cooldown.get_max_hint()), (Duration::ZERO, Duration::from_secs(60)));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CooldownSettings {
    max_wait: Option<Duration>,
    max_hint: Option<Duration>,
}

impl CooldownSettings {
    /// A new cooldown with these settings, holding no hint. Name it on the
    /// result.
    #[must_use]
    pub fn build(&self) -> Cooldown {
        let cooldown = Cooldown::new();
        let cooldown = set_if(cooldown, self.max_wait, Cooldown::max_wait);
        set_if(cooldown, self.max_hint, Cooldown::max_hint)
    }
}

impl Table for CooldownSettings {
    const WHAT: &'static str = "a cooldown's settings";
    const KEYS: &'static [Key] = &[duration("max_wait"), duration("max_hint")];
    type Raw = Self;

    fn read(raw: &mut Self, index: usize, value: Scalar) -> Result<(), String> {
        let key = Self::KEYS[index].name;
        if index == 0 {
            raw.max_wait = Some(values::duration(key, value, Zero::Allowed)?);
        } else {
            raw.max_hint = Some(values::duration(key, value, Zero::Refused)?);
        }
        Ok(())
    }

    fn finish(raw: Self) -> Result<Self, String> {
        Ok(raw)
    }

    fn entries(&self, _human_readable: bool) -> Result<Vec<(usize, Scalar)>, String> {
        Ok(set_entries([self.max_wait.map(text), self.max_hint.map(text)]))
    }
}
