//! The metric series' names.
//!
//! Feature `metrics`; public in `backoff_runtime::metrics`. The keys of a
//! retried function's or named limit's series are built (and hashed) once,
//! where they are read: `metrics::recorder::Keys`, which a call site keeps,
//! so that recording hashes nothing.

/// Counts all calls, by outcome.
pub const CALLS_TOTAL: &str = "backoff_calls_total";
/// Counts retries, by the source of their wait.
pub const RETRIES_TOTAL: &str = "backoff_retries_total";
/// Attempts per call.
pub const ATTEMPTS_PER_CALL: &str = "backoff_attempts_per_call";
/// The waits chosen, in seconds.
pub const WAIT_SECONDS: &str = "backoff_wait_seconds";
/// Retries refused by a named budget or throttle.
pub const BUDGET_REFUSALS_TOTAL: &str = "backoff_budget_refusals_total";
/// Retries a named budget would allow now.
pub const BUDGET_AVAILABLE_RETRIES: &str = "backoff_budget_available_retries";
/// Tokens left in a named throttle.
pub const THROTTLE_TOKENS: &str = "backoff_throttle_tokens";
/// A named circuit breaker's state: 1 for the state it is in, 0 for the others.
pub const CIRCUIT_STATE: &str = "backoff_circuit_state";
/// A named circuit breaker's changes of state, by the state entered.
pub const CIRCUIT_TRANSITIONS_TOTAL: &str = "backoff_circuit_transitions_total";
/// Faults, fake outcomes and latency an injector injected, by kind.
pub const INJECTIONS_TOTAL: &str = "backoff_injections_total";
