//! `RetryThrottle`: gRPC's retry throttling.
//!
//! gRPC's retry throttling, a token bucket that failures
//! drain and successes refill, which stops retries while most calls fail.

use core::fmt;
use core::sync::atomic::{AtomicU32, Ordering};

/// Thousandths of a token per token: the bucket counts in milli-tokens, so a
/// ratio with three decimals is added exactly.
const MILLI: u32 = 1000;

/// The largest `max_tokens` (gRPC's limit).
const MAX_TOKENS_LIMIT: u32 = 1000;

/// The largest `token_ratio`: more than `max_tokens` can ever need (a success
/// never adds more than a full bucket).
const MAX_TOKEN_RATIO: f64 = 1000.0;

/// Retry throttling as gRPC clients do it: a bucket of `max_tokens` tokens,
/// shared by every call to one service, that failures drain and successes
/// refill; retries stop while the bucket is half empty or less.
///
/// The rules (gRPC's design A6, "Client-side retry support", and grpc-go's
/// order of operations):
///
/// - the bucket starts full, with `max_tokens` tokens;
/// - each failed attempt whose error would be retried takes one token
///   ([`record_failure`](Self::record_failure)), never going below 0;
/// - each successful attempt returns `token_ratio` tokens
///   ([`record_success`](Self::record_success)), never going above
///   `max_tokens`;
/// - a failure may be retried only if, after its token is taken, more than
///   `max_tokens / 2` tokens remain: `record_failure` takes the token first,
///   then answers.
///
/// With `max_tokens = 10` and `token_ratio = 0.1`, five failures in a row
/// (with no success between them) leave 5 tokens and stop the retries; from
/// then on, ten successes (or one more than ten, if failures keep arriving)
/// bring the bucket above 5 again.
///
/// ```
/// use backoff_runtime::limits::RetryThrottle;
///
/// static THROTTLE: RetryThrottle = RetryThrottle::new(10, 0.1);
///
/// for _ in 0..4 {
///     assert!(THROTTLE.record_failure(), "9, 8, 7, 6 tokens: above 5");
/// }
/// assert!(!THROTTLE.record_failure(), "5 tokens: not above 5");
/// THROTTLE.record_success();
/// assert_eq!(THROTTLE.tokens(), 5.1);
/// assert!(THROTTLE.allows_retry());
/// ```
///
/// **Against [`RetryBudget`](crate::limits::RetryBudget).** The budget allows
/// retries up to a ratio of recent calls plus a minimum rate, so even when
/// every call fails it keeps retrying at that floor (10 retries per second
/// by default), and it forgets a bad spell after its window. The throttle
/// has no floor and no clock: in a full outage it stops retrying altogether
/// once half the bucket is gone (only first attempts reach the failing
/// service), and it starts again only as successes come back and refill
/// the bucket. The budget suits a dependency that is slow or partly
/// failing; the throttle one that may be down entirely, where every retry
/// is wasted load.
///
/// **Shape.** One `AtomicU32` holding the tokens in thousandths (the ratio is
/// kept in thousandths, so the count is exact), updated with
/// compare-and-swap loops: lock-free, `Send + Sync`, no allocation, no clock
/// read. A success on a full bucket (the common case) is one atomic load.
/// Built by `const fn`, so it lives in a `static` (one per service).
pub struct RetryThrottle {
    /// `max_tokens` in thousandths.
    max_milli: u32,
    /// `token_ratio` in thousandths.
    ratio_milli: u32,
    /// The tokens left, in thousandths: `0..=max_milli`.
    milli_tokens: AtomicU32,
    /// The `budget` label of its metrics; an unnamed throttle reports none.
    name: Option<&'static str>,
}

/// The bucket in thousandths of a token for `max_tokens`, if valid
/// (`1..=1000`).
const fn milli_of_max(max_tokens: u32) -> Option<u32> {
    if max_tokens == 0 || max_tokens > MAX_TOKENS_LIMIT {
        None
    } else {
        Some(max_tokens * MILLI)
    }
}

/// `token_ratio` rounded to the nearest thousandth, in thousandths, if valid
/// (finite, above 0, at most 1000, and at least 0.001 once rounded).
const fn milli_of_ratio(token_ratio: f64) -> Option<u32> {
    // NaN fails both comparisons.
    if !(token_ratio > 0.0 && token_ratio <= MAX_TOKEN_RATIO) {
        return None;
    }
    // At most 1000 * 1000 + 0.5: the cast neither saturates nor wraps.
    let milli = (token_ratio * MILLI as f64 + 0.5) as u32;
    if milli == 0 { None } else { Some(milli) }
}

impl RetryThrottle {
    /// A full bucket of `max_tokens` tokens that each success refills by
    /// `token_ratio` (rounded to the nearest thousandth, as gRPC keeps three
    /// decimals).
    ///
    /// ```
    /// use backoff_runtime::limits::RetryThrottle;
    /// static THROTTLE: RetryThrottle = RetryThrottle::new(100, 0.5);
    /// assert_eq!(THROTTLE.tokens(), 100.0);
    /// ```
    ///
    /// # Panics
    ///
    /// If `max_tokens` is 0 or above 1000 ("max_tokens must be between 1 and
    /// 1000"), or if `token_ratio` is not a number from 0.001 to 1000 once
    /// rounded to thousandths: NaN, 0, negative, below 0.0005, or above 1000
    /// ("token_ratio must be between 0.001 and 1000"). In a `const` or
    /// `static`, the panic is a compile error. For values read at run time,
    /// use [`try_new`](Self::try_new).
    ///
    /// ```compile_fail
    /// use backoff_runtime::limits::RetryThrottle;
    /// static EMPTY: RetryThrottle = RetryThrottle::new(0, 0.1); // error: max_tokens must be ...
    /// ```
    #[must_use]
    pub const fn new(max_tokens: u32, token_ratio: f64) -> Self {
        let Some(max_milli) = milli_of_max(max_tokens) else {
            panic!("max_tokens must be between 1 and 1000")
        };
        let Some(ratio_milli) = milli_of_ratio(token_ratio) else {
            panic!("token_ratio must be between 0.001 and 1000")
        };
        RetryThrottle {
            max_milli,
            ratio_milli,
            milli_tokens: AtomicU32::new(max_milli),
            name: None,
        }
    }

    crate::limits::named::name_methods! {
        /// Names the throttle: the `budget` label of its metrics (feature
        /// `metrics`: its refusals and its tokens). An unnamed throttle reports
        /// no series of its own.
        ///
        /// ```
        /// use backoff_runtime::limits::RetryThrottle;
        /// static BACKEND: RetryThrottle = RetryThrottle::new(10, 0.1).name("backend");
        /// assert_eq!(BACKEND.get_name(), Some("backend"));
        /// ```
        fn name;

        /// The throttle's name, if it has one.
        ///
        /// ```
        /// assert_eq!(backoff_runtime::limits::RetryThrottle::new(10, 0.1).get_name(), None);
        /// ```
        fn get_name;
    }

    /// Like [`new`](Self::new), but returns an error instead of panicking:
    /// for values read at run time (a service's configuration).
    ///
    /// ```
    /// use backoff_runtime::limits::{RetryThrottle, ThrottleError};
    /// assert!(RetryThrottle::try_new(10, 0.1).is_ok());
    /// assert_eq!(RetryThrottle::try_new(0, 0.1).err(), Some(ThrottleError::BadMaxTokens));
    /// assert_eq!(RetryThrottle::try_new(10, f64::NAN).err(), Some(ThrottleError::BadTokenRatio));
    /// ```
    pub fn try_new(max_tokens: u32, token_ratio: f64) -> Result<Self, ThrottleError> {
        if milli_of_max(max_tokens).is_none() {
            return Err(ThrottleError::BadMaxTokens);
        }
        if milli_of_ratio(token_ratio).is_none() {
            return Err(ThrottleError::BadTokenRatio);
        }
        Ok(RetryThrottle::new(max_tokens, token_ratio))
    }

    /// Records a successful attempt: returns `token_ratio` tokens to the
    /// bucket, up to `max_tokens`.
    ///
    /// ```
    /// use backoff_runtime::limits::RetryThrottle;
    /// let throttle = RetryThrottle::new(4, 1.6);
    /// throttle.record_failure();
    /// throttle.record_failure();
    /// throttle.record_success();
    /// assert_eq!(throttle.tokens(), 3.6);
    /// throttle.record_success();
    /// assert_eq!(throttle.tokens(), 4.0, "never above max_tokens");
    /// ```
    pub fn record_success(&self) {
        // One counter and nothing else published through it: relaxed
        // ordering keeps every update (they are totally ordered on the
        // counter); a full bucket is left untouched (no write).
        let _ = self
            .milli_tokens
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |milli| {
                (milli < self.max_milli).then(|| milli.saturating_add(self.ratio_milli).min(self.max_milli))
            });
    }

    /// Records a failed attempt whose error would be retried: takes one
    /// token (not below 0), then returns whether a retry is allowed, that is
    /// whether more than `max_tokens / 2` tokens are left.
    ///
    /// Call it for every such failure, before checking anything else, as
    /// gRPC does: a failure takes its token even when the retry would not
    /// happen anyway (retries exhausted, deadline), so the bucket measures
    /// the service's failures, not the client's retries. Errors that are
    /// never retried (a permanent error) are not recorded.
    ///
    /// ```
    /// use backoff_runtime::limits::RetryThrottle;
    /// let throttle = RetryThrottle::new(3, 1.0);
    /// assert!(throttle.record_failure(), "2 tokens: above 1.5");
    /// assert!(!throttle.record_failure(), "1 token: not above 1.5");
    /// assert!(!throttle.record_failure(), "0 tokens");
    /// assert!(!throttle.record_failure(), "still 0: the bucket never goes below empty");
    /// assert_eq!(throttle.tokens(), 0.0);
    /// ```
    #[must_use = "a `false` means the failure must not be retried"]
    pub fn record_failure(&self) -> bool {
        let mut current = self.milli_tokens.load(Ordering::Relaxed);
        loop {
            let taken = current.saturating_sub(MILLI);
            match self
                .milli_tokens
                .compare_exchange_weak(current, taken, Ordering::Relaxed, Ordering::Relaxed)
            {
                Ok(_) => return self.above_threshold(taken),
                Err(actual) => current = actual,
            }
        }
    }

    /// Whether a retry would be allowed now (more than `max_tokens / 2`
    /// tokens left), without taking a token.
    ///
    /// ```
    /// use backoff_runtime::limits::RetryThrottle;
    /// let throttle = RetryThrottle::new(2, 0.5);
    /// assert!(throttle.allows_retry(), "2 tokens");
    /// let _ = throttle.record_failure();
    /// assert!(!throttle.allows_retry(), "1 token: not above 1");
    /// throttle.record_success();
    /// assert!(throttle.allows_retry(), "1.5 tokens");
    /// ```
    #[must_use]
    pub fn allows_retry(&self) -> bool {
        self.above_threshold(self.milli_tokens.load(Ordering::Relaxed))
    }

    /// Whether `milli` thousandths of a token are more than half the bucket
    /// (`max_milli` is a multiple of 1000, so its half is exact).
    const fn above_threshold(&self, milli: u32) -> bool {
        milli > self.max_milli / 2
    }

    /// The size of the bucket: the tokens it starts with and never exceeds.
    ///
    /// ```
    /// assert_eq!(backoff_runtime::limits::RetryThrottle::new(10, 0.1).get_max_tokens(), 10);
    /// ```
    #[must_use]
    pub const fn get_max_tokens(&self) -> u32 {
        self.max_milli / MILLI
    }

    /// The tokens each success returns, as kept (rounded to thousandths).
    ///
    /// ```
    /// use backoff_runtime::limits::RetryThrottle;
    /// assert_eq!(RetryThrottle::new(10, 0.1).get_token_ratio(), 0.1);
    /// assert_eq!(RetryThrottle::new(10, 0.0996).get_token_ratio(), 0.1);
    /// ```
    #[must_use]
    pub const fn get_token_ratio(&self) -> f64 {
        self.ratio_milli as f64 / MILLI as f64
    }

    /// The tokens in the bucket now (a multiple of a thousandth).
    ///
    /// ```
    /// use backoff_runtime::limits::RetryThrottle;
    /// let throttle = RetryThrottle::new(10, 0.25);
    /// let _ = throttle.record_failure();
    /// assert_eq!(throttle.tokens(), 9.0);
    /// throttle.record_success();
    /// assert_eq!(throttle.tokens(), 9.25);
    /// ```
    #[must_use]
    pub fn tokens(&self) -> f64 {
        f64::from(self.milli_tokens.load(Ordering::Relaxed)) / f64::from(MILLI)
    }
}

/// Shows the settings and the tokens left now.
///
/// ```
/// let throttle = backoff_runtime::limits::RetryThrottle::new(10, 0.1);
/// assert_eq!(
///     format!("{throttle:?}"),
///     "RetryThrottle { max_tokens: 10, token_ratio: 0.1, tokens: 10.0 }"
/// );
/// ```
impl fmt::Debug for RetryThrottle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RetryThrottle")
            .field("max_tokens", &self.get_max_tokens())
            .field("token_ratio", &self.get_token_ratio())
            .field("tokens", &self.tokens())
            .finish()
    }
}

/// A value rejected by [`RetryThrottle::try_new`].
///
/// ```
/// use backoff_runtime::limits::{RetryThrottle, ThrottleError};
/// let error = RetryThrottle::try_new(1001, 0.1).err();
/// assert_eq!(error, Some(ThrottleError::BadMaxTokens));
/// assert_eq!(ThrottleError::BadMaxTokens.to_string(), "max_tokens must be between 1 and 1000");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ThrottleError {
    /// `max_tokens` was 0 or above 1000.
    BadMaxTokens,
    /// `token_ratio` was NaN, not above 0, above 1000, or below 0.001 once
    /// rounded to thousandths.
    BadTokenRatio,
}

impl fmt::Display for ThrottleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ThrottleError::BadMaxTokens => f.write_str("max_tokens must be between 1 and 1000"),
            ThrottleError::BadTokenRatio => f.write_str("token_ratio must be between 0.001 and 1000"),
        }
    }
}

impl std::error::Error for ThrottleError {}

#[cfg(test)]
mod tests;
