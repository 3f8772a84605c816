//! One layer retries: a retried function that gives up inside an attempt of
//! another ends that one too (`StopReason::RetriedBelow`), in sync code (the
//! thread) and async code (the task's polls, on any worker thread), unless
//! the outer function says `nested = retry`.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};

use backoff_runtime::testing::VirtualClock;
use backoff_runtime::{GiveUp, StopReason, retry};

#[derive(Debug, PartialEq)]
struct Down;

// ---- sync: three layers, the bottom always failing --------------------------

#[retry(max_retries = 3, jitter = none)]
fn bottom(calls: &AtomicU32) -> Result<(), Down> {
    calls.fetch_add(1, Ordering::SeqCst);
    Err(Down)
}

#[retry(max_retries = 3, jitter = none, on_give_up = |_, event| reasons.lock().unwrap().push(event.reason()))]
fn middle(calls: &AtomicU32, reasons: &Mutex<Vec<StopReason>>) -> Result<(), Down> {
    bottom(calls)
}

#[retry(max_retries = 3, jitter = none)]
fn top(calls: &AtomicU32, reasons: &Mutex<Vec<StopReason>>) -> Result<(), Down> {
    middle(calls, reasons)
}

#[retry(max_retries = 3, jitter = none, nested = retry)]
fn middle_retrying(calls: &AtomicU32) -> Result<(), Down> {
    bottom(calls)
}

#[retry(max_retries = 3, jitter = none, nested = retry)]
fn top_retrying(calls: &AtomicU32) -> Result<(), Down> {
    middle_retrying(calls)
}

#[test]
fn by_default_only_the_bottom_layer_retries() {
    let _clock = VirtualClock::install();
    let calls = AtomicU32::new(0);
    let reasons = Mutex::new(Vec::new());
    for _ in 0..3 {
        assert_eq!(top(&calls, &reasons), Err(Down));
    }
    assert_eq!(
        calls.load(Ordering::SeqCst),
        3 * 4,
        "max_retries + 1 per top-level call"
    );
    assert_eq!(reasons.into_inner().unwrap(), [StopReason::RetriedBelow; 3]);
}

#[test]
fn nested_retry_multiplies_the_calls() {
    let _clock = VirtualClock::install();
    let calls = AtomicU32::new(0);
    assert_eq!(top_retrying(&calls), Err(Down));
    assert_eq!(calls.load(Ordering::SeqCst), 4 * 4 * 4);
}

// ---- an inner function that recovers, or fails permanently -------------------

#[retry(max_retries = 3, jitter = none)]
fn recovering(calls: &AtomicU32) -> Result<(), Down> {
    let n = calls.fetch_add(1, Ordering::SeqCst);
    if n.is_multiple_of(2) { Err(Down) } else { Ok(()) }
}

#[retry(max_retries = 2, jitter = none)]
fn outer_of_recovering(calls: &AtomicU32, attempts: &AtomicU32) -> Result<(), Down> {
    attempts.fetch_add(1, Ordering::SeqCst);
    recovering(calls)?;
    Err(Down) // fails for its own reason after the inner call succeeded
}

#[retry(max_retries = 3, jitter = none, retry_if = |_| false)]
fn permanent_inner() -> Result<(), Down> {
    Err(Down)
}

#[retry(max_retries = 2, jitter = none)]
fn outer_of_permanent(attempts: &AtomicU32) -> Result<(), Down> {
    attempts.fetch_add(1, Ordering::SeqCst);
    permanent_inner()
}

#[test]
fn an_inner_function_that_recovers_or_fails_permanently_does_not_stop_the_outer_one() {
    let _clock = VirtualClock::install();
    let (calls, attempts) = (AtomicU32::new(0), AtomicU32::new(0));
    assert_eq!(outer_of_recovering(&calls, &attempts), Err(Down));
    assert_eq!(
        attempts.load(Ordering::SeqCst),
        3,
        "the outer function retried its own failures"
    );

    let attempts = AtomicU32::new(0);
    assert_eq!(outer_of_permanent(&attempts), Err(Down));
    assert_eq!(
        attempts.load(Ordering::SeqCst),
        3,
        "a permanent error was not retried below"
    );
}

#[test]
fn a_give_up_outside_any_attempt_does_not_stop_a_later_call() {
    let _clock = VirtualClock::install();
    let calls = AtomicU32::new(0);
    assert_eq!(bottom(&calls), Err(Down)); // top level: gives up, nobody above
    let (inner, attempts) = (AtomicU32::new(0), AtomicU32::new(0));
    assert_eq!(outer_of_recovering(&inner, &attempts), Err(Down));
    assert_eq!(attempts.load(Ordering::SeqCst), 3);
}

// ---- async: three layers on a multi-threaded runtime -------------------------

/// Yields between polls, so the task may move to another worker thread, and
/// other tasks run on this one in between.
#[retry(max_retries = 3, sleep = |_| tokio::task::yield_now())]
async fn bottom_async(calls: &AtomicU32) -> Result<(), Down> {
    tokio::task::yield_now().await;
    calls.fetch_add(1, Ordering::SeqCst);
    tokio::task::yield_now().await;
    Err(Down)
}

#[retry(
    max_retries = 3,
    sleep = |_| tokio::task::yield_now(),
    on_give_up = |_, event: &GiveUp| reasons.lock().unwrap().push(event.reason()),
)]
async fn middle_async(calls: &AtomicU32, reasons: &Mutex<Vec<StopReason>>) -> Result<(), Down> {
    tokio::task::yield_now().await;
    bottom_async(calls).await
}

#[retry(max_retries = 3, sleep = |_| tokio::task::yield_now())]
async fn top_async(calls: &AtomicU32, reasons: &Mutex<Vec<StopReason>>) -> Result<(), Down> {
    middle_async(calls, reasons).await
}

#[retry(max_retries = 3, sleep = |_| tokio::task::yield_now(), nested = retry)]
async fn middle_async_retrying(calls: &AtomicU32) -> Result<(), Down> {
    bottom_async(calls).await
}

#[retry(max_retries = 3, sleep = |_| tokio::task::yield_now(), nested = retry)]
async fn top_async_retrying(calls: &AtomicU32) -> Result<(), Down> {
    middle_async_retrying(calls).await
}

/// Sixteen tasks at once, each with its own counter: every task's call
/// chain is its own, whichever thread polls it and whatever else runs there.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn async_chains_follow_the_task_across_threads() {
    let mut tasks = Vec::new();
    for i in 0..16u32 {
        tasks.push(tokio::spawn(async move {
            let calls = AtomicU32::new(0);
            let reasons = Mutex::new(Vec::new());
            if i.is_multiple_of(2) {
                assert_eq!(top_async(&calls, &reasons).await, Err(Down));
                assert_eq!(calls.load(Ordering::SeqCst), 4, "task {i}");
                assert_eq!(reasons.into_inner().unwrap(), [StopReason::RetriedBelow]);
            } else {
                assert_eq!(top_async_retrying(&calls).await, Err(Down));
                assert_eq!(calls.load(Ordering::SeqCst), 64, "task {i}");
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
}

#[retry(max_retries = 2, sleep = |_| tokio::task::yield_now())]
async fn outer_spawning(calls: &AtomicU32, attempts: &AtomicU32) -> Result<(), Down> {
    attempts.fetch_add(1, Ordering::SeqCst);
    let inner_calls = std::sync::Arc::new(AtomicU32::new(0));
    let counted = inner_calls.clone();
    // A spawned task is its own call chain: its give-up is not this attempt's.
    let spawned = tokio::spawn(async move { bottom_async(&counted).await });
    assert_eq!(spawned.await.unwrap(), Err(Down));
    calls.fetch_add(inner_calls.load(Ordering::SeqCst), Ordering::SeqCst);
    Err(Down)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spawned_tasks_are_separate_call_chains() {
    let (calls, attempts) = (AtomicU32::new(0), AtomicU32::new(0));
    assert_eq!(outer_spawning(&calls, &attempts).await, Err(Down));
    assert_eq!(attempts.load(Ordering::SeqCst), 3, "the outer function retried");
    assert_eq!(calls.load(Ordering::SeqCst), 3 * 4);
}

/// A sync retried function called from an async one is in the same chain.
#[retry(max_retries = 3, sleep = |_| tokio::task::yield_now())]
async fn async_over_sync(calls: &AtomicU32, attempts: &AtomicU32) -> Result<(), Down> {
    attempts.fetch_add(1, Ordering::SeqCst);
    tokio::task::yield_now().await;
    bottom_sync_fast(calls)
}

#[retry(max_retries = 3, sleep = |_| ())]
fn bottom_sync_fast(calls: &AtomicU32) -> Result<(), Down> {
    calls.fetch_add(1, Ordering::SeqCst);
    Err(Down)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sync_function_below_an_async_one_is_one_chain() {
    let (calls, attempts) = (AtomicU32::new(0), AtomicU32::new(0));
    assert_eq!(async_over_sync(&calls, &attempts).await, Err(Down));
    assert_eq!(attempts.load(Ordering::SeqCst), 1);
    assert_eq!(calls.load(Ordering::SeqCst), 4);
}

// ---- the nesting table: every case in sync and async form -------------------
//
// The rule (the rustdoc's "Nested retries"): after a failed attempt, the
// loop asks whether the last retried call that ended inside that attempt
// (in its call chain) gave up. A give-up sets it, a success clears it, an
// attempt starts clear. Each case below is written twice, as a sync and as
// an async function, and both forms must end the same way.

/// What one outer call saw: its attempts and how it ended.
#[derive(Debug, Default)]
struct Log {
    outer_attempts: AtomicU32,
    reason: Mutex<Option<StopReason>>,
}

impl Log {
    /// Counts an outer attempt; returns its number.
    fn enter(&self) -> u32 {
        self.outer_attempts.fetch_add(1, Ordering::SeqCst) + 1
    }

    fn gave_up(&self, event: &GiveUp) {
        *self.reason.lock().unwrap() = Some(event.reason());
    }

    fn ended(&self, result: Result<u32, Down>) -> Ended {
        Ended {
            ok: result.is_ok(),
            attempts: self.outer_attempts.load(Ordering::SeqCst),
            reason: *self.reason.lock().unwrap(),
        }
    }
}

#[derive(Debug, PartialEq, Clone, Copy)]
struct Ended {
    ok: bool,
    attempts: u32,
    reason: Option<StopReason>,
}

const RETRIED: Ended = Ended {
    ok: true,
    attempts: 2,
    reason: None,
};
const STOPPED_BELOW: Ended = Ended {
    ok: false,
    attempts: 1,
    reason: Some(StopReason::RetriedBelow),
};
const EXHAUSTED: Ended = Ended {
    ok: false,
    attempts: 3,
    reason: Some(StopReason::Exhausted),
};

/// The outer function's own step: a transient failure on its first attempt.
fn own_step(attempt: u32) -> Result<u32, Down> {
    if attempt == 1 { Err(Down) } else { Ok(1) }
}

#[retry(max_retries = 2, initial_backoff = "1ms", jitter = none)]
fn gives_up() -> Result<u32, Down> {
    Err(Down)
}

#[retry(max_retries = 2, initial_backoff = "1ms", jitter = none)]
fn succeeds() -> Result<u32, Down> {
    Ok(7)
}

#[retry(max_retries = 2, initial_backoff = "1ms", jitter = none)]
fn middle_recovering() -> Result<u32, Down> {
    Ok(gives_up().unwrap_or(0))
}

#[retry(max_retries = 2, initial_backoff = "1ms", jitter = none)]
async fn gives_up_async() -> Result<u32, Down> {
    tokio::task::yield_now().await;
    Err(Down)
}

/// Ready at once: it succeeds in the poll where the primary gave up.
#[retry(max_retries = 2, initial_backoff = "1ms", jitter = none)]
async fn succeeds_async() -> Result<u32, Down> {
    Ok(7)
}

#[retry(max_retries = 2, initial_backoff = "1ms", jitter = none)]
async fn middle_recovering_async() -> Result<u32, Down> {
    Ok(gives_up_async().await.unwrap_or(0))
}

/// Calls a retried function that gives up when dropped.
struct GiveUpOnDrop;

impl Drop for GiveUpOnDrop {
    fn drop(&mut self) {
        let _ = gives_up();
    }
}

fn quick_policy() -> backoff_runtime::Policy {
    backoff_runtime::Policy::new()
        .max_retries(2)
        .initial_backoff(std::time::Duration::from_millis(1))
        .jitter(backoff_runtime::Jitter::None)
}

macro_rules! outer {
    ($name:ident, $async_name:ident, |$log:ident, $attempt:ident| $sync_body:block, async $async_body:block) => {
        #[retry(max_retries = 2, initial_backoff = "1ms", jitter = none, on_give_up = |_, event| $log.gave_up(event))]
        fn $name($log: &Log) -> Result<u32, Down> {
            let $attempt = $log.enter();
            $sync_body
        }

        #[retry(max_retries = 2, initial_backoff = "1ms", jitter = none, on_give_up = |_, event| $log.gave_up(event))]
        async fn $async_name($log: &Log) -> Result<u32, Down> {
            let $attempt = $log.enter();
            $async_body
        }
    };
}

outer!(
    give_up_propagated,
    give_up_propagated_async,
    |log, attempt| {
        let _ = attempt;
        gives_up()
    },
    async {
        let _ = attempt;
        gives_up_async().await
    }
);

outer!(
    give_up_then_a_ready_step,
    give_up_then_a_ready_step_async,
    |log, attempt| {
        let _ = attempt;
        let result = gives_up();
        let _ = succeeds_now();
        result
    },
    async {
        let _ = attempt;
        let result = gives_up_async().await;
        // Ready at once: the attempt ends in the poll of the give-up.
        let _ = async { succeeds_now() }.await;
        result
    }
);

/// Plain code, no retry: a step that succeeds at once.
fn succeeds_now() -> Result<u32, Down> {
    Ok(0)
}

outer!(
    give_up_then_a_slow_step,
    give_up_then_a_slow_step_async,
    |log, attempt| {
        let _ = attempt;
        let result = gives_up();
        std::thread::sleep(std::time::Duration::from_millis(1));
        result
    },
    async {
        let _ = attempt;
        let result = gives_up_async().await;
        // Not ready: the attempt ends in a later poll than the give-up.
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        result
    }
);

outer!(
    retried_fallback,
    retried_fallback_async,
    |log, attempt| {
        let value = match gives_up() {
            Ok(value) => value,
            Err(_) => succeeds()?,
        };
        own_step(attempt)?;
        Ok(value)
    },
    async {
        let value = match gives_up_async().await {
            Ok(value) => value,
            Err(_) => succeeds_async().await?,
        };
        own_step(attempt)?;
        Ok(value)
    }
);

outer!(
    plain_fallback,
    plain_fallback_async,
    |log, attempt| {
        let value = gives_up().unwrap_or(0);
        own_step(attempt)?;
        Ok(value)
    },
    async {
        let value = gives_up_async().await.unwrap_or(0);
        own_step(attempt)?;
        Ok(value)
    }
);

outer!(
    middle_layer_recovers,
    middle_layer_recovers_async,
    |log, attempt| {
        let value = middle_recovering()?;
        own_step(attempt)?;
        Ok(value)
    },
    async {
        let value = middle_recovering_async().await?;
        own_step(attempt)?;
        Ok(value)
    }
);

outer!(
    give_up_in_a_drop_guard,
    give_up_in_a_drop_guard_async,
    |log, attempt| {
        let _guard = GiveUpOnDrop;
        own_step(attempt)
    },
    async {
        let _guard = GiveUpOnDrop;
        tokio::task::yield_now().await;
        own_step(attempt)
    }
);

outer!(
    optional_branch_joined,
    optional_branch_joined_async,
    |log, attempt| {
        let (optional, required) = (gives_up().ok(), own_step(attempt));
        Ok(optional.unwrap_or(0) + required?)
    },
    async {
        let (optional, required) = tokio::join!(gives_up_async(), async { own_step(attempt) });
        Ok(optional.unwrap_or(0) + required?)
    }
);

outer!(
    give_up_in_another_thread,
    give_up_in_a_spawned_task_async,
    |log, attempt| {
        let _ = attempt;
        std::thread::scope(|scope| scope.spawn(gives_up).join().unwrap())
    },
    async {
        let _ = attempt;
        tokio::spawn(gives_up_async()).await.unwrap()
    }
);

outer!(
    plain_builder_below,
    plain_builder_below_async,
    |log, attempt| {
        let _ = attempt;
        quick_policy().retry(|| Err::<u32, _>(Down)).call()
    },
    async {
        let _ = attempt;
        quick_policy().retry(|| async { Err::<u32, _>(Down) }).await
    }
);

fn plain_builder_above(log: &Log) -> Result<u32, Down> {
    quick_policy()
        .retry(|| {
            log.enter();
            gives_up()
        })
        .on_give_up(|_, event| log.gave_up(event))
        .call()
}

async fn plain_builder_above_async(log: &Log) -> Result<u32, Down> {
    quick_policy()
        .retry(|| async {
            log.enter();
            gives_up_async().await
        })
        .on_give_up(|_, event| log.gave_up(event))
        .await
}

type SyncCase = fn(&Log) -> Result<u32, Down>;
type AsyncCase =
    for<'a> fn(&'a Log) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<u32, Down>> + Send + 'a>>;

macro_rules! boxed {
    ($f:ident) => {
        |log| Box::pin($f(log))
    };
}

/// Each case, its two forms, and how the outer call must end.
fn nesting_table() -> Vec<(&'static str, SyncCase, AsyncCase, Ended)> {
    vec![
        (
            "a give-up propagated with `?`",
            give_up_propagated,
            boxed!(give_up_propagated_async),
            STOPPED_BELOW,
        ),
        (
            "a give-up, then an await that is ready, then its error",
            give_up_then_a_ready_step,
            boxed!(give_up_then_a_ready_step_async),
            STOPPED_BELOW,
        ),
        (
            "recovery by a retried fallback, then an own failure",
            retried_fallback,
            boxed!(retried_fallback_async),
            RETRIED,
        ),
        // Documented: plain code that recovers is invisible to the loop.
        (
            "recovery by a plain fallback, then an own failure",
            plain_fallback,
            boxed!(plain_fallback_async),
            STOPPED_BELOW,
        ),
        (
            "a middle layer that recovers, then an own failure",
            middle_layer_recovers,
            boxed!(middle_layer_recovers_async),
            RETRIED,
        ),
        // Documented: the last retried call to end decides, in a destructor too.
        (
            "a give-up in a drop guard, with an own failure",
            give_up_in_a_drop_guard,
            boxed!(give_up_in_a_drop_guard_async),
            STOPPED_BELOW,
        ),
        // Documented: an optional branch's give-up counts as the last one.
        (
            "an optional retried branch joined with an own failure",
            optional_branch_joined,
            boxed!(optional_branch_joined_async),
            STOPPED_BELOW,
        ),
        // A spawned thread or task is a chain of its own.
        (
            "a give-up in a spawned thread or task",
            give_up_in_another_thread,
            boxed!(give_up_in_a_spawned_task_async),
            EXHAUSTED,
        ),
        (
            "the plain builder below",
            plain_builder_below,
            boxed!(plain_builder_below_async),
            STOPPED_BELOW,
        ),
        (
            "the plain builder above",
            plain_builder_above,
            boxed!(plain_builder_above_async),
            STOPPED_BELOW,
        ),
    ]
}

/// The one documented difference: an async attempt reads the flag in the
/// poll that ends it, so a give-up followed by an await that is not ready
/// yet is not seen there (the outer function retries), where a sync
/// function stops. Remembering it across polls would cost every annotated
/// future 8 bytes.
#[test]
fn a_give_up_followed_by_a_slow_step_stops_a_sync_function() {
    let _clock = VirtualClock::install();
    let log = Log::default();
    let result = give_up_then_a_slow_step(&log);
    assert_eq!(log.ended(result), STOPPED_BELOW);
}

#[tokio::test(start_paused = true)]
async fn a_give_up_followed_by_a_slow_step_is_retried_by_an_async_function() {
    let log = Log::default();
    let result = give_up_then_a_slow_step_async(&log).await;
    assert_eq!(log.ended(result), EXHAUSTED);
}

#[test]
fn the_nesting_table_in_sync_form() {
    let _clock = VirtualClock::install();
    for (case, sync_form, _, expected) in nesting_table() {
        let log = Log::default();
        let result = sync_form(&log);
        assert_eq!(log.ended(result), expected, "sync: {case}");
    }
}

#[tokio::test(start_paused = true)]
async fn the_nesting_table_in_async_form() {
    for (case, _, async_form, expected) in nesting_table() {
        let log = Log::default();
        let result = async_form(&log).await;
        assert_eq!(log.ended(result), expected, "async: {case}");
    }
}
