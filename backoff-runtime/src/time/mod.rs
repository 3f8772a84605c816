//! Time: clocks, sleeps and timeouts.
//!
//! The clocks a loop reads, the sleeps it waits with, and the per-attempt
//! timeout.

pub(crate) mod clock;
pub(crate) mod cold_box;
pub(crate) mod default_wait;
pub(crate) mod sleep;
pub(crate) mod timeout;

/// The instant of every clock a retry loop reads, and of the limits' `now`.
///
/// - Natively it is `std::time::Instant`.
/// - On wasm32-unknown-unknown (the browser, Node) it is `web_time::Instant`.
/// - std's `Instant::now()` panics there; the web clock reads `performance.now()`.
/// - A limit of your own names this type to build for both.
///
/// ```
/// use backoff_runtime::limits::{RetryBudget, RetryLimit};
/// use backoff_runtime::Instant;
///
/// let budget = RetryBudget::new();
/// let now = Instant::now();
/// budget.call_started(now);
/// assert!(budget.try_retry(now));
/// ```
#[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
pub use std::time::Instant;
/// The instant of every clock a retry loop reads, and of the limits' `now`.
///
/// - Natively it is `std::time::Instant`.
/// - On wasm32-unknown-unknown (the browser, Node) it is `web_time::Instant`.
/// - std's `Instant::now()` panics there; the web clock reads `performance.now()`.
/// - A limit of your own names this type to build for both.
#[cfg(all(target_arch = "wasm32", target_os = "unknown"))]
pub use web_time::Instant;
