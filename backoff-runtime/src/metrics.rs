//! Metrics through the [`metrics`](https://docs.rs/metrics) facade (feature
//! `metrics`), so whatever exporter the program runs (Prometheus,
//! OpenTelemetry, StatsD) receives them. Names and units follow Prometheus
//! conventions; every series of a retried function is labelled
//! `function="<name>"` (the function's name for `#[retry]`, the `.name(...)`
//! of a plain [`Retry`](crate::Retry)).
//!
//! | name | kind | labels | what |
//! |---|---|---|---|
//! | `backoff_calls_total` | counter | `function`, `outcome` (`success`, `gave_up`), `reason` | calls by how they ended: `reason` is `first_attempt` or `after_retries` for successes, the [`StopReason`] (`permanent`, `retried_below`, `exhausted`, `hint_above_cap`, `deadline`, `budget`) for give-ups |
//! | `backoff_retries_total` | counter | `function`, `wait` (`schedule`, `hint`) | retries, by where their wait came from: the schedule or the server's hint |
//! | `backoff_attempts_per_call` | histogram | `function` | attempts each call took, give-ups included |
//! | `backoff_wait_seconds` | histogram | `function` | the waits chosen, in seconds |
//! | `backoff_budget_refusals_total` | counter | `budget` | retries a [`RetryBudget`](crate::RetryBudget) refused |
//! | `backoff_budget_available_retries` | gauge | `budget` | retries the budget would allow now, set at each retry it is asked for |
//!
//! A retried function registers its handles with the installed recorder the
//! first time it records and keeps them (so recording is an atomic add):
//! install the recorder (the exporter) before the first call. A plain
//! [`Retry`](crate::Retry) finds its handles by its name in a process-wide
//! map, registered at its name's first use. A budget is
//! labelled by its [`name`](crate::RetryBudget::name).
//!
//! ```
//! use backoff_runtime::retry;
//! use metrics_util::debugging::DebuggingRecorder;
//!
//! #[retry(max_retries = 2, initial_backoff = "1ms")]
//! fn flaky(calls: &mut u32) -> Result<u32, String> {
//!     *calls += 1;
//!     if *calls < 2 { Err("busy".into()) } else { Ok(*calls) }
//! }
//!
//! let recorder = DebuggingRecorder::new();
//! let snapshotter = recorder.snapshotter();
//! metrics::with_local_recorder(&recorder, || flaky(&mut 0)).unwrap();
//! let snapshot = snapshotter.snapshot().into_vec();
//! assert!(snapshot.iter().any(|(key, ..)| key.key().name() == "backoff_retries_total"));
//! ```

// Without the feature only the call sites and the no-op recording remain.
#![cfg_attr(not(feature = "metrics"), allow(dead_code, unreachable_pub))]

use core::time::Duration;

use crate::stop::StopReason;

/// Counts all calls, by outcome.
pub const CALLS_TOTAL: &str = "backoff_calls_total";
/// Counts retries, by the source of their wait.
pub const RETRIES_TOTAL: &str = "backoff_retries_total";
/// Attempts per call.
pub const ATTEMPTS_PER_CALL: &str = "backoff_attempts_per_call";
/// The waits chosen, in seconds.
pub const WAIT_SECONDS: &str = "backoff_wait_seconds";
/// Retries refused by a budget.
pub const BUDGET_REFUSALS_TOTAL: &str = "backoff_budget_refusals_total";
/// Retries a budget would allow now.
pub const BUDGET_AVAILABLE_RETRIES: &str = "backoff_budget_available_retries";

/// One retried function's place in the metrics: its name and its handles,
/// registered on first use. The `#[retry]` expansion makes one `static` per
/// function.
///
/// ```
/// use backoff_runtime::__private::CallSite;
/// static SITE: CallSite = CallSite::new("fetch");
/// assert_eq!(SITE.name(), "fetch");
/// ```
pub struct CallSite {
    name: &'static str,
    #[cfg(feature = "metrics")]
    handles: std::sync::OnceLock<recorder::SiteHandles>,
}

impl core::fmt::Debug for CallSite {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("CallSite")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl CallSite {
    /// The site of the function `name`.
    #[must_use]
    pub const fn new(name: &'static str) -> Self {
        CallSite {
            name,
            #[cfg(feature = "metrics")]
            handles: std::sync::OnceLock::new(),
        }
    }

    /// The function's name.
    #[must_use]
    pub fn name(&self) -> &'static str {
        self.name
    }
}

/// Where a retry loop runs: a function's static [`CallSite`] (the
/// attribute), or only a name (the plain builder's `.name(...)`, whose
/// handles are looked up at each record).
///
/// ```
/// use backoff_runtime::__private::Site;
/// assert_eq!(Site::Named("fetch").name(), "fetch");
/// ```
#[derive(Clone, Copy, Debug)]
pub enum Site {
    /// A function's static site.
    Static(&'static CallSite),
    /// A name only.
    Named(&'static str),
}

impl Site {
    /// The function's name.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Site::Static(site) => site.name,
            Site::Named(name) => name,
        }
    }
}

/// Records a call that succeeded after `attempts` attempts.
#[inline]
pub(crate) fn success(site: Site, attempts: u32) {
    #[cfg(feature = "metrics")]
    recorder::with_handles(site, |handles| handles.success(attempts));
    #[cfg(not(feature = "metrics"))]
    let _ = (site, attempts);
}

/// Records a call that gave up after `attempts` attempts.
#[inline]
pub(crate) fn give_up(site: Site, reason: StopReason, attempts: u32) {
    #[cfg(feature = "metrics")]
    recorder::with_handles(site, |handles| handles.give_up(reason, attempts));
    #[cfg(not(feature = "metrics"))]
    let _ = (site, reason, attempts);
}

/// Records a retry about to wait `wait` (`hinted`: the server's hint).
#[inline]
pub(crate) fn retry(site: Site, wait: Duration, hinted: bool) {
    #[cfg(feature = "metrics")]
    recorder::with_handles(site, |handles| handles.retry(wait, hinted));
    #[cfg(not(feature = "metrics"))]
    let _ = (site, wait, hinted);
}

/// Whether successes are recorded: a first-attempt success then builds the
/// hooks to learn the site.
pub(crate) const RECORDS: bool = cfg!(feature = "metrics");

/// The recording itself, with the `metrics` feature.
#[cfg(feature = "metrics")]
pub(crate) mod recorder {
    use core::time::Duration;
    use std::collections::BTreeMap;
    use std::sync::{Mutex, PoisonError};

    use metrics::{Counter, Gauge, Histogram, Unit};

    use super::{CallSite, Site};
    use crate::stop::StopReason;

    /// The handles of one function's series.
    #[derive(Debug)]
    pub(crate) struct SiteHandles {
        first_attempt: Counter,
        after_retries: Counter,
        gave_up: [Counter; StopReason::ALL.len()],
        scheduled: Counter,
        hinted: Counter,
        attempts: Histogram,
        waits: Histogram,
    }

    impl SiteHandles {
        fn register(name: &'static str) -> Self {
            describe();
            let calls = |outcome: &'static str, reason: &'static str| metrics::counter!(super::CALLS_TOTAL, "function" => name, "outcome" => outcome, "reason" => reason);
            SiteHandles {
                first_attempt: calls("success", "first_attempt"),
                after_retries: calls("success", "after_retries"),
                gave_up: StopReason::ALL.map(|reason| calls("gave_up", reason.label())),
                scheduled: metrics::counter!(super::RETRIES_TOTAL, "function" => name, "wait" => "schedule"),
                hinted: metrics::counter!(super::RETRIES_TOTAL, "function" => name, "wait" => "hint"),
                attempts: metrics::histogram!(super::ATTEMPTS_PER_CALL, "function" => name),
                waits: metrics::histogram!(super::WAIT_SECONDS, "function" => name),
            }
        }

        pub(crate) fn success(&self, attempts: u32) {
            if attempts <= 1 {
                self.first_attempt.increment(1);
            } else {
                self.after_retries.increment(1);
            }
            self.attempts.record(f64::from(attempts));
        }

        pub(crate) fn give_up(&self, reason: StopReason, attempts: u32) {
            self.gave_up[reason.index()].increment(1);
            self.attempts.record(f64::from(attempts));
        }

        pub(crate) fn retry(&self, wait: Duration, hinted: bool) {
            if hinted {
                self.hinted.increment(1);
            } else {
                self.scheduled.increment(1);
            }
            self.waits.record(wait.as_secs_f64());
        }
    }

    /// Runs `f` with the site's handles: registered once for a static site;
    /// for a name, registered once per name and found in a process-wide
    /// map (one small leaked entry per distinct name).
    #[inline]
    pub(crate) fn with_handles(site: Site, f: impl FnOnce(&SiteHandles)) {
        match site {
            Site::Static(site) => f(handles_of(site)),
            Site::Named(name) => f(named(name)),
        }
    }

    /// The handles of the plain builder's operations named `name`.
    fn named(name: &'static str) -> &'static SiteHandles {
        static NAMED: Mutex<BTreeMap<&'static str, &'static SiteHandles>> = Mutex::new(BTreeMap::new());
        let mut named = NAMED.lock().unwrap_or_else(PoisonError::into_inner);
        named
            .entry(name)
            .or_insert_with(|| Box::leak(Box::new(SiteHandles::register(name))))
    }

    fn handles_of(site: &'static CallSite) -> &'static SiteHandles {
        site.handles.get_or_init(|| SiteHandles::register(site.name))
    }

    /// The handles of one budget's series.
    #[derive(Debug)]
    pub(crate) struct BudgetHandles {
        refusals: Counter,
        available: Gauge,
    }

    impl BudgetHandles {
        pub(crate) fn register(name: &'static str) -> Self {
            describe();
            BudgetHandles {
                refusals: metrics::counter!(super::BUDGET_REFUSALS_TOTAL, "budget" => name),
                available: metrics::gauge!(super::BUDGET_AVAILABLE_RETRIES, "budget" => name),
            }
        }

        /// A retry asked of the budget: refused or not, and what it allows now.
        pub(crate) fn asked(&self, allowed: bool, available: u64) {
            if !allowed {
                self.refusals.increment(1);
            }
            // Exact below 2^53 retries.
            #[allow(clippy::cast_precision_loss)]
            self.available.set(available as f64);
        }
    }

    /// Describes every series to the recorder (HELP and unit lines): at
    /// each registration, so a recorder installed later learns them too.
    fn describe() {
        {
            metrics::describe_counter!(super::CALLS_TOTAL, "Calls of retried functions, by outcome and reason");
            metrics::describe_counter!(super::RETRIES_TOTAL, "Retries, by the source of their wait");
            metrics::describe_histogram!(
                super::ATTEMPTS_PER_CALL,
                Unit::Count,
                "Attempts per call, give-ups included"
            );
            metrics::describe_histogram!(super::WAIT_SECONDS, Unit::Seconds, "Waits chosen before a retry");
            metrics::describe_counter!(super::BUDGET_REFUSALS_TOTAL, "Retries a retry budget refused");
            metrics::describe_gauge!(
                super::BUDGET_AVAILABLE_RETRIES,
                "Retries a retry budget would allow now"
            );
        }
    }
}
