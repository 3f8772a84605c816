//! The one table of `#[retry]`'s keys.
//!
//! In the order of the reference on `backoff_runtime::retry`. Each row gives a
//! key's name (its field), the kind of value it takes (`values.rs`) and what it
//! does; the row alone makes the key parsed, checked for duplicates, suggested
//! for a typo and listed in error messages. What the key means is then read
//! from its field by `validate.rs` (rules between keys) and `expand/` (the
//! code).
//!
//! The workspace's `tests/behaviour/keys.rs` reads this table as text and
//! fails when the reference or the plain builder lacks one of its keys: keep
//! one row per key, indented by four spaces, under its one doc comment line.

use crate::args::declare_keys;
use crate::values::{HintArg, NestedArg};

declare_keys! {
    /// Retries after the first call.
    max_retries: RetryCount, schedule;
    /// Cap on every wait, jitter included.
    max_backoff: DurationString, schedule;
    /// The wait before the first retry, before jitter.
    initial_backoff: DurationString, schedule;
    /// Growth of the wait per retry.
    multiplier: Multiplier, schedule;
    /// How the waits are randomised.
    jitter: Jitter, schedule;
    /// Total time from the first call after which no wait is started.
    max_elapsed: DurationString, schedule;
    /// Which errors to retry.
    retry_if: Hook {
        signature: "fn(&E) -> bool",
        path_example: "is_transient",
        closure_example: "|e| e.is_transient()",
    };
    /// The server's hint for the next wait.
    retry_after: Hook {
        signature: "fn(&E) -> Option<Duration>",
        path_example: "server_hint",
        closure_example: "|e| e.retry_after()",
    };
    /// What a server hint above `max_backoff` does: stop (the default) or wait the cap.
    hint_above_cap: HintMode {
        words: &[("stop", HintArg::Stop), ("cap", HintArg::Cap)],
        takes: "`stop` (the default: a server hint longer than `max_backoff` ends the call) or `cap` (wait `max_backoff` and retry)",
    }, schedule;
    /// Which `Ok` values are still pending: wait and run the body again.
    retry_if_ok: Hook {
        signature: "fn(&T) -> bool",
        path_example: "is_pending",
        closure_example: "|job| job.state == State::Running",
    };
    /// The server's hint for the next wait after a pending value.
    retry_after_ok: Hook {
        signature: "fn(&T) -> Option<Duration>",
        path_example: "poll_hint",
        closure_example: "|job| job.retry_after",
    };
    /// The error a still-pending value becomes when a stop rule ends the call.
    pending_error: Hook {
        signature: "fn(T) -> E",
        path_example: "still_running",
        closure_example: "|job| Error::StillRunning(job.id)",
    };
    /// Called before each wait.
    on_retry: Hook {
        signature: "fn(&E, &RetryEvent)",
        path_example: "log_retry",
        closure_example: "|e, event| ...",
    };
    /// Called once when the final error is returned.
    on_give_up: Hook {
        signature: "fn(&E, &GiveUp)",
        path_example: "log_give_up",
        closure_example: "|e, event| ...",
    };
    /// Called once when the call succeeds.
    on_success: Hook {
        signature: "fn(&Success)",
        path_example: "log_success",
        closure_example: "|event| ...",
    };
    /// An action run after `on_retry`, before the wait (awaited in async functions).
    before_retry: Hook {
        signature: "async fn(&E, &RetryEvent) in async fns, fn(&E, &RetryEvent) in sync ones",
        path_example: "refresh_token",
        closure_example: "async |e, event| reconnect().await",
    };
    /// Another timer than tokio's or `std::thread::sleep`.
    sleep: Hook {
        signature: "fn(Duration) -> impl Future in async fns, fn(Duration) in sync ones",
        path_example: "async_io::Timer::after",
        closure_example: "|d| my_runtime::sleep(d)",
    };
    /// The name of a binding in the body holding the attempt's `Attempt`.
    context: Binding {
        holds: "the attempt's `backoff_runtime::Attempt` (number, retries left, time left, invocation id)",
        example: "attempt",
    };
    /// What to do with a failure a retried function below already gave up on.
    nested: NestedMode {
        words: &[("stop", NestedArg::Stop), ("retry", NestedArg::Retry)],
        takes: "`stop` (the default: a failure that a retried function below already gave up on ends the call) or `retry` (retry it anyway)",
    };
    /// The name metrics, tracing and events report for the function.
    name: NameString;
    /// A retry budget shared by every function naming it.
    budget: AnyExpr;
    /// A limiter asked before every attempt, the first included: go, wait or refuse.
    admission: AnyExpr;
    /// Which errors tell the `admission` limiter to slow down.
    slow_down_if: Hook {
        signature: "fn(&E) -> bool",
        path_example: "is_throttling",
        closure_example: "|e| e.is_slow_down()",
    };
    /// A `Policy` giving the whole schedule instead of the schedule keys.
    policy: AnyExpr;
    /// Time limit of each attempt (async functions only).
    timeout: DurationString;
    /// Hedging: the delay after which the next attempt starts beside the one running (async functions only).
    hedge_after: DurationString;
    /// A fault injector (a `static` `chaos::Injector`) each attempt runs under, innermost.
    chaos: AnyExpr;
    /// The path to the runtime crate, when it is re-exported under another name.
    krate as "crate": PathString;
}
