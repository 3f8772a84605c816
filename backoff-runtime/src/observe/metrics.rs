//! Metrics through the `metrics` facade (feature `metrics`).
//!
//! Whatever exporter the program runs (Prometheus, OpenTelemetry, StatsD)
//! receives them, through the [`metrics`](https://docs.rs/metrics) facade. Names and units follow Prometheus
//! conventions; every series of a retried function is labelled
//! `function="<name>"`: for `#[retry]`, its path (`my_app::users::fetch`;
//! for a method with a `self` receiver, the path of the type of `self`, so
//! `my_app::Client::get` and `my_app::Cache::get` are two series), or the
//! `name = "..."` written on the attribute; for a plain
//! [`Retry`](crate::Retry), its `.name(...)` (`"retry"` when unnamed). The
//! same name is [`RetryEvent::function`](crate::RetryEvent::function) and
//! the `function` field of the tracing events.
//!
//! | name | kind | labels | what |
//! |---|---|---|---|
//! | `backoff_calls_total` | counter | `function`, `outcome` (`success`, `gave_up`), `reason` | calls by how they ended: `reason` is `first_attempt` or `after_retries` for successes, the [`StopReason`] (`permanent`, `retried_below`, `exhausted`, `hint_above_cap`, `deadline`, `budget`, `refused`, `committed`) for give-ups: `refused` counts the calls the `admission` limiter shed, before their first attempt or a retry; `committed` counts the gRPC calls that failed after their response began |
//! | `backoff_attempts_per_call` | histogram | `function` | attempts each call took, give-ups included (0 for a call whose first attempt was refused) |
//! | `backoff_retries_total` | counter | `function`, `wait` (`schedule`, `hint`) | retries, by where their wait came from: the schedule or the server's hint |
//! | `backoff_wait_seconds` | histogram | `function` | the waits chosen, in seconds |
//! | `backoff_budget_refusals_total` | counter | `budget` | retries a named [`RetryBudget`](crate::limits::RetryBudget) or [`RetryThrottle`](crate::limits::RetryThrottle) refused |
//! | `backoff_budget_available_retries` | gauge | `budget` | retries a named budget would allow now, set each time it is asked |
//! | `backoff_throttle_tokens` | gauge | `budget` | tokens left in a named throttle, set each time it is asked |
//! | `backoff_circuit_state` | gauge | `breaker`, `state` (`closed`, `open`, `half_open`) | 1 for the state a named [`CircuitBreaker`](crate::limits::CircuitBreaker) is in, 0 for the others, set at each change |
//! | `backoff_circuit_transitions_total` | counter | `breaker`, `to` | a named breaker's changes of state, by the state entered |
//! | `backoff_injections_total` | counter | `injector`, `kind` (`fault`, `outcome`, `latency`) | what a fault injector (`chaos::Injector`, feature `chaos`) injected |
//!
//! Each record goes to the recorder that is current where the call runs
//! (the global one, or a local one from `metrics::with_local_recorder` or
//! `set_default_local_recorder`, as tests use): a function first called
//! before the exporter is installed records once it is, and two threads
//! under two local recorders each count in their own. What that costs: the
//! recorder's own lookup of the series for each record (no lock of ours, no
//! allocation; the keys are built once per function or name), measured in
//! BENCHMARKS.md. Each recorder is told what the series are (HELP text and
//! units) the first time a thread records to it, recognised by its address:
//! a recorder made later at the very address of one already told (a test's
//! local recorder in a loop) gets every sample but may miss those lines. A limit is labelled by its `name` ([`RetryBudget::name`](crate::limits::RetryBudget::name),
//! [`RetryThrottle::name`](crate::limits::RetryThrottle::name)); an unnamed limit reports
//! no series of its own (its refusals still count in `backoff_calls_total`
//! with `reason="budget"`), so two unnamed limits never overwrite each
//! other's gauge.
//!
#![cfg_attr(feature = "metrics", doc = "```")]
#![cfg_attr(not(feature = "metrics"), doc = "```ignore")]
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

// Without the feature only the call sites and the no-op recording remain:
// the recording functions take their arguments and drop them.
#![cfg_attr(not(feature = "metrics"), allow(dead_code, unreachable_pub, unused_variables))]

use crate::observe::site::Site;
use crate::observe::stop::StopReason;
use core::time::Duration;

#[cfg(feature = "metrics")]
pub use crate::observe::series::{
    ATTEMPTS_PER_CALL, BUDGET_AVAILABLE_RETRIES, BUDGET_REFUSALS_TOTAL, CALLS_TOTAL, CIRCUIT_STATE,
    CIRCUIT_TRANSITIONS_TOTAL, INJECTIONS_TOTAL, RETRIES_TOTAL, THROTTLE_TOKENS, WAIT_SECONDS,
};

/// Records an injection of `kind` (`fault`, `outcome`, `latency`) by the
/// injector `injector`.
#[cfg(feature = "chaos")]
pub(crate) fn injected(injector: &'static str, kind: &'static str) {
    #[cfg(feature = "metrics")]
    metrics::counter!(INJECTIONS_TOTAL, "injector" => injector, "kind" => kind).increment(1);
    #[cfg(not(feature = "metrics"))]
    let _ = (injector, kind);
}

/// Records a named circuit breaker's change of state into `to`, one of
/// `states` (their names): the gauge of each state (1 for `to`, 0 for the
/// others) and the count of changes into `to`. An unnamed breaker records
/// nothing.
pub(crate) fn circuit_changed(breaker: Option<&'static str>, states: &[&'static str], to: &'static str) {
    #[cfg(feature = "metrics")]
    if let Some(breaker) = breaker {
        for &state in states {
            let value = if state == to { 1.0 } else { 0.0 };
            metrics::gauge!(CIRCUIT_STATE, "breaker" => breaker, "state" => state).set(value);
        }
        metrics::counter!(CIRCUIT_TRANSITIONS_TOTAL, "breaker" => breaker, "to" => to).increment(1);
    }
    #[cfg(not(feature = "metrics"))]
    let _ = (breaker, states, to);
}

/// Records a call that succeeded after `attempts` attempts.
#[inline]
pub(crate) fn success(site: Site, attempts: u32) {
    #[cfg(feature = "metrics")]
    recorder::success(recorder::keys_of(site), attempts);
}

/// Records a call that gave up after `attempts` attempts.
#[inline]
pub(crate) fn give_up(site: Site, reason: StopReason, attempts: u32) {
    #[cfg(feature = "metrics")]
    recorder::give_up(recorder::keys_of(site), reason, attempts);
}

/// Records a retry about to wait `wait` (`hinted`: the server's hint).
#[inline]
pub(crate) fn retry(site: Site, wait: Duration, hinted: bool) {
    #[cfg(feature = "metrics")]
    recorder::retry(recorder::keys_of(site), wait, hinted);
}

/// Records a hedge started beside an attempt still running (counted
/// apart from the retries: `wait = "hedge"`).
#[inline]
pub(crate) fn hedge(site: Site) {
    #[cfg(feature = "metrics")]
    recorder::hedge(recorder::keys_of(site));
    #[cfg(not(feature = "metrics"))]
    let _ = site;
}

/// What a limit reports when asked for a retry.
#[derive(Clone, Copy, Debug)]
pub(crate) enum LimitLevel {
    /// A budget: the retries it would allow now.
    AvailableRetries(u64),
    /// A throttle: the tokens left.
    Tokens(f64),
}

/// Records that the limit named `name` was asked for a retry: refused or
/// not, and its level now. Unnamed limits report nothing of their own.
#[inline]
pub(crate) fn limit_asked(name: Option<&'static str>, allowed: bool, level: impl FnOnce() -> LimitLevel) {
    #[cfg(feature = "metrics")]
    if let Some(name) = name {
        recorder::limit_asked(recorder::keys_of(Site::Named(name)), allowed, level());
    }
}

/// Whether successes are recorded: a first-attempt success then builds the
/// hooks to learn the site.
pub(crate) const RECORDS: bool = cfg!(feature = "metrics");

/// The recording itself, with the `metrics` feature: each record registers
/// its series with the current recorder (the recorder's lookup), using
/// labels built once per name.
#[cfg(feature = "metrics")]
pub(crate) mod recorder {
    use core::cell::{Cell, RefCell};
    use core::time::Duration;
    use std::collections::BTreeMap;
    use std::sync::{Mutex, PoisonError};

    use metrics::{Level, Metadata, Recorder, SharedString, Unit};

    use super::LimitLevel;
    use crate::observe::keys::Keys;
    use crate::observe::site::{Resolved, Site};
    use crate::observe::stop::StopReason;

    /// The names this process has used without a call site (the plain
    /// builder's `.name(...)`, a limit's name), with their keys.
    static NAMED: Mutex<BTreeMap<&'static str, &'static Resolved>> = Mutex::new(BTreeMap::new());

    thread_local! {
        /// This thread's view of [`NAMED`]: no lock after a name's first use
        /// on the thread.
        static SEEN: RefCell<Vec<&'static Resolved>> = const { RefCell::new(Vec::new()) };
        /// The recorder this thread last described the series to.
        static DESCRIBED_TO: Cell<usize> = const { Cell::new(0) };
    }

    /// The keys of `site`: its own for a call site; for a name, from this
    /// thread's list, else from the process-wide map (a lock, once per name
    /// and thread), else built.
    pub(super) fn keys_of(site: Site) -> &'static Keys {
        match site {
            Site::Static(site) => &site.resolve(None).keys,
            Site::Method(site, self_type) => &site.resolve(Some(self_type)).keys,
            Site::Named(name) => &named(name).keys,
        }
    }

    fn named(name: &'static str) -> &'static Resolved {
        SEEN.with_borrow_mut(|seen| {
            let same = |resolved: &&&'static Resolved| {
                core::ptr::eq(resolved.name.as_ptr(), name.as_ptr()) && resolved.name.len() == name.len()
                    || resolved.name == name
            };
            if let Some(resolved) = seen.iter().find(same) {
                return *resolved;
            }
            let resolved = *NAMED
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .entry(name)
                .or_insert_with(|| Resolved::leak(name));
            seen.push(resolved);
            resolved
        })
    }

    static METADATA: Metadata<'static> = Metadata::new(module_path!(), Level::INFO, Some(module_path!()));

    /// Runs `f` with the current recorder, after describing the series to
    /// it if this thread has not yet (HELP and unit lines; a recorder at a
    /// reused address may miss them, which loses no sample).
    fn with_recorder(f: impl FnOnce(&dyn Recorder)) {
        metrics::with_recorder(|recorder| {
            let address = core::ptr::from_ref(recorder).cast::<()>() as usize;
            if DESCRIBED_TO.get() != address {
                DESCRIBED_TO.set(address);
                describe(recorder);
            }
            f(recorder);
        });
    }

    pub(super) fn success(keys: &'static Keys, attempts: u32) {
        with_recorder(|recorder| {
            let calls = if attempts <= 1 {
                &keys.first_attempt
            } else {
                &keys.after_retries
            };
            recorder.register_counter(calls, &METADATA).increment(1);
            recorder
                .register_histogram(&keys.attempts, &METADATA)
                .record(f64::from(attempts));
        });
    }

    pub(super) fn give_up(keys: &'static Keys, reason: StopReason, attempts: u32) {
        with_recorder(|recorder| {
            recorder
                .register_counter(&keys.gave_up[reason.index()], &METADATA)
                .increment(1);
            recorder
                .register_histogram(&keys.attempts, &METADATA)
                .record(f64::from(attempts));
        });
    }

    pub(super) fn retry(keys: &'static Keys, wait: Duration, hinted: bool) {
        with_recorder(|recorder| {
            let retries = if hinted { &keys.hinted } else { &keys.scheduled };
            recorder.register_counter(retries, &METADATA).increment(1);
            recorder
                .register_histogram(&keys.waits, &METADATA)
                .record(wait.as_secs_f64());
        });
    }

    pub(super) fn hedge(keys: &'static Keys) {
        with_recorder(|recorder| {
            recorder.register_counter(&keys.hedged, &METADATA).increment(1);
        });
    }

    pub(super) fn limit_asked(keys: &'static Keys, allowed: bool, level: LimitLevel) {
        with_recorder(|recorder| {
            if !allowed {
                recorder.register_counter(&keys.refusals, &METADATA).increment(1);
            }
            match level {
                LimitLevel::AvailableRetries(available) => {
                    // Exact below 2^53 retries.
                    #[allow(clippy::cast_precision_loss)]
                    recorder
                        .register_gauge(&keys.available, &METADATA)
                        .set(available as f64);
                }
                LimitLevel::Tokens(tokens) => recorder.register_gauge(&keys.tokens, &METADATA).set(tokens),
            }
        });
    }

    /// The kind of a series, which says how it is described.
    #[derive(Clone, Copy)]
    enum Kind {
        Counter,
        Gauge,
        Histogram,
    }

    /// Every series: its kind, name, unit and HELP text.
    const SERIES: [(Kind, &str, Option<Unit>, &str); 10] = [
        (
            Kind::Counter,
            super::CALLS_TOTAL,
            None,
            "Calls of retried functions, by outcome and reason",
        ),
        (
            Kind::Counter,
            super::RETRIES_TOTAL,
            None,
            "Retries, by the source of their wait",
        ),
        (
            Kind::Histogram,
            super::ATTEMPTS_PER_CALL,
            Some(Unit::Count),
            "Attempts per call, give-ups included",
        ),
        (
            Kind::Histogram,
            super::WAIT_SECONDS,
            Some(Unit::Seconds),
            "Waits chosen before a retry",
        ),
        (
            Kind::Counter,
            super::BUDGET_REFUSALS_TOTAL,
            None,
            "Retries a retry budget or throttle refused",
        ),
        (
            Kind::Gauge,
            super::BUDGET_AVAILABLE_RETRIES,
            None,
            "Retries a retry budget would allow now",
        ),
        (
            Kind::Gauge,
            super::THROTTLE_TOKENS,
            None,
            "Tokens left in a retry throttle",
        ),
        (
            Kind::Gauge,
            super::CIRCUIT_STATE,
            None,
            "A circuit breaker's state: 1 for the state it is in",
        ),
        (
            Kind::Counter,
            super::CIRCUIT_TRANSITIONS_TOTAL,
            None,
            "A circuit breaker's changes of state, by the state entered",
        ),
        (
            Kind::Counter,
            super::INJECTIONS_TOTAL,
            None,
            "Faults, fake outcomes and latency injected, by injector and kind",
        ),
    ];

    /// Describes every series to `recorder` (HELP and unit lines).
    fn describe(recorder: &dyn Recorder) {
        for (kind, name, unit, help) in SERIES {
            let name = metrics::KeyName::from_const_str(name);
            let help = SharedString::const_str(help);
            match kind {
                Kind::Counter => recorder.describe_counter(name, unit, help),
                Kind::Gauge => recorder.describe_gauge(name, unit, help),
                Kind::Histogram => recorder.describe_histogram(name, unit, help),
            }
        }
    }

    #[cfg(test)]
    mod tests {
        use std::sync::mpsc;

        /// A call site shows how its name is made when debugged.
        #[test]
        fn a_call_site_debugs_as_its_parts() {
            static SITE: crate::observe::site::CallSite = crate::observe::site::CallSite::new("fetch", "my_app::users");
            assert_eq!(
                format!("{SITE:?}"),
                "CallSite { function: \"fetch\", module: \"my_app::users\", .. }"
            );
        }
        use std::time::Duration;

        use super::{NAMED, Site, keys_of};

        /// Once a thread has used a name, recording under it takes no lock:
        /// with the process-wide map held by another thread, the labels are
        /// still found at once.
        #[test]
        fn a_name_seen_on_a_thread_takes_no_lock() {
            let (seen_tx, seen_rx) = mpsc::channel();
            let (go_tx, go_rx) = mpsc::channel::<()>();
            let (done_tx, done_rx) = mpsc::channel();
            let worker = std::thread::spawn(move || {
                let first = keys_of(Site::Named("unit_test_op")) as *const _ as usize;
                seen_tx.send(()).unwrap();
                go_rx.recv().unwrap();
                let again = keys_of(Site::Named("unit_test_op")) as *const _ as usize;
                done_tx.send(first == again).unwrap();
            });
            seen_rx.recv().unwrap();
            let held = NAMED.lock().unwrap();
            go_tx.send(()).unwrap();
            let same = done_rx.recv_timeout(Duration::from_secs(10));
            drop(held);
            assert_eq!(same, Ok(true), "the second use waited for the lock");
            worker.join().unwrap();
        }
    }
}
