//! Limits shared by many calls, behind two traits.
//!
//! What counts retries ([`RetryLimit`], what `budget = ...` takes): the
//! retry budget ([`RetryBudget`]) and the throttle ([`RetryThrottle`]).
//! What admits attempts ([`AdmissionLimit`], what `admission = ...` takes):
//! the two adaptive limiters ([`AdaptiveRateLimiter`],
//! [`AdaptiveThrottle`]), the circuit breaker ([`CircuitBreaker`]), the
//! cooldown ([`Cooldown`]), one of them per key ([`Keyed`]), and the
//! user's own. An attempt a limiter refuses is the error [`Refused`].
//!
//! ```
//! use backoff_runtime::limits::{CircuitBreaker, RetryBudget};
//! use backoff_runtime::retry;
//!
//! static BUDGET: RetryBudget = RetryBudget::new();
//! static BREAKER: CircuitBreaker = CircuitBreaker::new();
//!
//! #[derive(Debug)]
//! struct Error;
//!
//! impl From<backoff_runtime::limits::Refused> for Error {
//!     fn from(_: backoff_runtime::limits::Refused) -> Self {
//!         Error
//!     }
//! }
//!
//! #[retry(max_retries = 2, initial_backoff = "1ms", budget = BUDGET, admission = BREAKER)]
//! fn call() -> Result<u8, Error> {
//!     Ok(1)
//! }
//!
//! assert_eq!(call().unwrap(), 1);
//! ```

pub(crate) mod adaptive_rate;
pub(crate) mod adaptive_throttle;
pub(crate) mod admission;
pub(crate) mod admission_limit;
pub(crate) mod budget;
pub(crate) mod circuit_breaker;
pub(crate) mod cooldown;
pub(crate) mod keyed;
pub(crate) mod limit;
pub(crate) mod named;
pub(crate) mod throttle;

pub use self::adaptive_rate::AdaptiveRateLimiter;
pub use self::adaptive_throttle::AdaptiveThrottle;
pub use self::admission::Refused;
pub use self::admission_limit::{Admission, AdmissionLimit, AdmissionRequest, AttemptEnd, Ending, Shut, ShutBy};
pub use self::budget::{BudgetError, RetryBudget};
pub use self::circuit_breaker::{CircuitBreaker, CircuitState, CircuitTransition};
pub use self::cooldown::Cooldown;
pub use self::keyed::Keyed;
pub use self::limit::RetryLimit;
pub use self::throttle::{RetryThrottle, ThrottleError};
