//! The keys of one name's metric series, built once.
//!
//! A call site keeps them; the recorder reads them on every record.

use metrics::{Key, Label};

use crate::observe::series;
use crate::observe::stop::StopReason;

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
    /// The keys of the series of `name`, built and hashed now.
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
                series::CALLS_TOTAL,
                labels(&[("function", name), ("outcome", outcome), ("reason", reason)]),
            )
        };
        let retries = |wait: &'static str| {
            Key::from_static_parts(series::RETRIES_TOTAL, labels(&[("function", name), ("wait", wait)]))
        };
        let function = labels(&[("function", name)]);
        let budget = labels(&[("budget", name)]);
        Keys {
            first_attempt: calls("success", "first_attempt"),
            after_retries: calls("success", "after_retries"),
            gave_up: StopReason::ALL.map(|reason| calls("gave_up", reason.label())),
            scheduled: retries("schedule"),
            hinted: retries("hint"),
            hedged: retries("hedge"),
            attempts: Key::from_static_parts(series::ATTEMPTS_PER_CALL, function),
            waits: Key::from_static_parts(series::WAIT_SECONDS, function),
            refusals: Key::from_static_parts(series::BUDGET_REFUSALS_TOTAL, budget),
            available: Key::from_static_parts(series::BUDGET_AVAILABLE_RETRIES, budget),
            tokens: Key::from_static_parts(series::THROTTLE_TOKENS, budget),
        }
    }
}
