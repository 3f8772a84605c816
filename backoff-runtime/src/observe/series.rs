//! The metric series' names and keys, built once.
//!
//! Per retried function or named limit, the keys of its series are built
//! (and hashed) once: what a call site keeps, so that recording hashes
//! nothing. (Feature `metrics`; the names are public
//! in `backoff_runtime::metrics`.)

use metrics::{Key, Label};

use crate::observe::stop::StopReason;

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

/// The keys of every series of one name, built (and hashed) once.
pub(crate) struct Keys {
    pub(crate) first_attempt: Key,
    pub(crate) after_retries: Key,
    pub(crate) gave_up: [Key; StopReason::ALL.len()],
    pub(crate) scheduled: Key,
    pub(crate) hinted: Key,
    pub(crate) hedged: Key,
    pub(crate) attempts: Key,
    pub(crate) waits: Key,
    pub(crate) refusals: Key,
    pub(crate) available: Key,
    pub(crate) tokens: Key,
}

impl Keys {
    pub(crate) fn new(name: &'static str) -> Self {
        let labels = |pairs: &[(&'static str, &'static str)]| -> &'static [Label] {
            Box::leak(
                pairs
                    .iter()
                    .map(|(key, value)| Label::from_static_parts(key, value))
                    .collect(),
            )
        };
        let calls = |outcome: &'static str, reason: &'static str| {
            Key::from_static_parts(
                CALLS_TOTAL,
                labels(&[("function", name), ("outcome", outcome), ("reason", reason)]),
            )
        };
        let retries =
            |wait: &'static str| Key::from_static_parts(RETRIES_TOTAL, labels(&[("function", name), ("wait", wait)]));
        let function = labels(&[("function", name)]);
        let budget = labels(&[("budget", name)]);
        Keys {
            first_attempt: calls("success", "first_attempt"),
            after_retries: calls("success", "after_retries"),
            gave_up: StopReason::ALL.map(|reason| calls("gave_up", reason.label())),
            scheduled: retries("schedule"),
            hinted: retries("hint"),
            hedged: retries("hedge"),
            attempts: Key::from_static_parts(ATTEMPTS_PER_CALL, function),
            waits: Key::from_static_parts(WAIT_SECONDS, function),
            refusals: Key::from_static_parts(BUDGET_REFUSALS_TOTAL, budget),
            available: Key::from_static_parts(BUDGET_AVAILABLE_RETRIES, budget),
            tokens: Key::from_static_parts(THROTTLE_TOKENS, budget),
        }
    }
}
