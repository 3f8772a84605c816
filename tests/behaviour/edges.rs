//! Edges that real use reaches: waits too long for any clock, a server's
//! absurd `Retry-After`, nested virtual clocks, a deadline on the clock that
//! a custom sleep advances, and an attempt with no time left. Each test is
//! named after the promise it keeps.

use std::cell::Cell;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use backoff_runtime::http_errors::parse_retry_after;
use backoff_runtime::testing::VirtualClock;
use backoff_runtime::{Elapsed, Jitter, Policy, RetryEvent, retry};

/// "Always honour the server": no cap a server's hint could exceed.
const HONOUR_EVERY_HINT: Policy = Policy::new().max_backoff(Duration::MAX).max_retries(2);

/// Waits that are as long as a `Duration` can be.
const LONGEST_WAITS: Policy = Policy::new()
    .initial_backoff(Duration::MAX)
    .max_backoff(Duration::MAX)
    .jitter(Jitter::None)
    .max_retries(2);

#[derive(Debug, PartialEq)]
struct Unavailable {
    retry_after: Option<Duration>,
}

/// Fails on the first call with the server's `Retry-After` header value,
/// then succeeds.
fn answer(calls: &AtomicU32, header: &str) -> Result<u32, Unavailable> {
    let n = calls.fetch_add(1, Ordering::SeqCst) + 1;
    if n == 1 {
        Err(Unavailable {
            retry_after: parse_retry_after(header),
        })
    } else {
        Ok(n)
    }
}

#[retry(policy = HONOUR_EVERY_HINT, retry_after = |e| e.retry_after)]
async fn fetch_honouring(calls: &AtomicU32, header: &str) -> Result<u32, Unavailable> {
    answer(calls, header)
}

#[tokio::test(start_paused = true)]
async fn a_remote_retry_after_header_never_panics_the_client() {
    let calls = AtomicU32::new(0);
    // Above u64::MAX seconds: parsed as the longest hint there is.
    assert_eq!(fetch_honouring(&calls, "99999999999999999999").await, Ok(2));
    let calls = AtomicU32::new(0);
    assert_eq!(fetch_honouring(&calls, &u64::MAX.to_string()).await, Ok(2));
}

#[retry(policy = LONGEST_WAITS)]
async fn longest_async(calls: &AtomicU32) -> Result<u32, Unavailable> {
    answer(calls, "")
}

#[tokio::test(start_paused = true)]
async fn a_wait_of_duration_max_never_panics_an_async_loop() {
    let calls = AtomicU32::new(0);
    let start = tokio::time::Instant::now();
    assert_eq!(longest_async(&calls).await, Ok(2));
    // Slept until tokio's far future (decades), not zero.
    assert!(start.elapsed() > Duration::from_secs(10 * 365 * 24 * 3600));
}

#[retry(policy = LONGEST_WAITS.max_elapsed(Duration::MAX))]
fn longest_sync(calls: &AtomicU32) -> Result<u32, Unavailable> {
    answer(calls, "")
}

#[test]
fn a_wait_of_duration_max_never_panics_a_virtual_clock() {
    let clock = VirtualClock::install();
    let calls = AtomicU32::new(0);
    assert_eq!(longest_sync(&calls), Ok(2));
    assert_eq!(clock.waits(), [Duration::MAX]);
    assert_eq!(clock.elapsed(), Duration::MAX);
}

#[retry(max_retries = 2, initial_backoff = "1s", jitter = none)]
fn always_down() -> Result<(), &'static str> {
    Err("down")
}

#[test]
fn dropping_an_older_virtual_clock_leaves_the_live_one_installed() {
    let older = VirtualClock::install();
    let live = VirtualClock::install();
    drop(older);
    assert_eq!(always_down(), Err("down"));
    assert_eq!(live.waits(), [1, 2].map(Duration::from_secs));
    assert_eq!(live.elapsed(), Duration::from_secs(3));
}

#[test]
fn dropping_the_live_virtual_clock_restores_the_one_before_it() {
    let outer = VirtualClock::install();
    {
        let inner = VirtualClock::install();
        assert_eq!(always_down(), Err("down"));
        assert_eq!(inner.waits().len(), 2);
    }
    assert!(outer.waits().is_empty(), "the inner clock's waits are its own");
    assert_eq!(always_down(), Err("down"));
    assert_eq!(outer.waits(), [1, 2].map(Duration::from_secs));
}

#[retry(
    max_elapsed = "10s",
    jitter = none,
    max_retries = 10,
    sleep = tokio::time::sleep,
    on_retry = |_, event: &RetryEvent| waits.set(waits.get() + event.wait().as_secs()),
)]
async fn deadline_with_tokio_sleep(waits: &Cell<u64>) -> Result<(), &'static str> {
    let _ = waits;
    Err("down")
}

#[tokio::test(start_paused = true)]
async fn a_custom_tokio_sleep_keeps_max_elapsed_on_tokio_s_clock() {
    let waits = Cell::new(0);
    let start = tokio::time::Instant::now();
    assert_eq!(deadline_with_tokio_sleep(&waits).await, Err("down"));
    // 1 + 2 + 4 s; the 8 s wait would end at 15 s, past the 10 s budget.
    assert_eq!(waits.get(), 7);
    assert_eq!(start.elapsed(), Duration::from_secs(7));
}

#[derive(Debug, PartialEq)]
enum CallError {
    TimedOut,
    Refused,
}

impl From<Elapsed> for CallError {
    fn from(_: Elapsed) -> Self {
        CallError::TimedOut
    }
}

#[retry(max_elapsed = "3s", initial_backoff = "1s", jitter = none, timeout = "10s")]
async fn slow_then_refused(attempts: &AtomicU32) -> Result<(), CallError> {
    attempts.fetch_add(1, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_secs(2)).await;
    Err(CallError::Refused)
}

#[tokio::test(start_paused = true)]
async fn no_attempt_starts_with_zero_time_left() {
    let attempts = AtomicU32::new(0);
    let start = tokio::time::Instant::now();
    // 2 s attempt, then the 1 s wait ends exactly at the 3 s budget (allowed);
    // the next attempt would have no time at all, so it is not started.
    assert_eq!(slow_then_refused(&attempts).await, Err(CallError::TimedOut));
    assert_eq!(attempts.load(Ordering::SeqCst), 1);
    assert_eq!(start.elapsed(), Duration::from_secs(3));
}

/// Parses hex digits after an optional `0x`, the way real parsers do: by
/// shortening its `mut` argument before it fails (or succeeds).
#[retry(max_retries = 2, initial_backoff = "1ms", jitter = none)]
fn parse_hex(mut input: &str, seen: &std::cell::RefCell<Vec<String>>) -> Result<u32, String> {
    seen.borrow_mut().push(input.to_owned());
    if let Some(rest) = input.strip_prefix("0x") {
        input = rest;
    }
    u32::from_str_radix(input, 16).map_err(|e| e.to_string())
}

#[test]
fn a_mut_argument_starts_every_attempt_from_the_caller_s_value() {
    let _clock = VirtualClock::install();
    let seen = std::cell::RefCell::new(Vec::new());
    // "0x0xff" is invalid; had the second attempt seen the shortened "0xff",
    // it would have accepted it.
    assert!(parse_hex("0x0xff", &seen).is_err());
    assert_eq!(seen.into_inner(), ["0x0xff"; 3]);
}

#[retry(max_retries = 2, initial_backoff = "1ms", jitter = none)]
fn count_down(mut left: u32, (mut a, b): (u32, u32), seen: &std::cell::RefCell<Vec<u32>>) -> Result<(), ()> {
    seen.borrow_mut().push(left * 100 + a * 10 + b);
    left -= 1;
    a += 1;
    let _ = (left, a);
    Err(())
}

/// A `mut` argument of a generic type bounded by `Copy` (inline or in the
/// `where` clause) is copied afresh per attempt, as a concrete one is.
#[retry(max_retries = 2, initial_backoff = "1ms", jitter = none)]
fn step_twice<T: Copy + std::ops::AddAssign, U>(
    mut value: T,
    mut other: U,
    step: T,
    seen: &std::cell::RefCell<Vec<T>>,
) -> Result<(), ()>
where
    U: Copy,
{
    value += step;
    seen.borrow_mut().push(value);
    value += step;
    let _ = (value, &mut other);
    Err(())
}

#[test]
fn a_mut_argument_of_a_copy_generic_type_is_fresh_per_attempt() {
    let _clock = VirtualClock::install();
    let seen = std::cell::RefCell::new(Vec::new());
    assert_eq!(step_twice(10_u32, 'x', 1, &seen), Err(()));
    assert_eq!(seen.into_inner(), [11, 11, 11]);
}

#[test]
fn every_mut_binding_of_an_argument_is_fresh_per_attempt() {
    let _clock = VirtualClock::install();
    let seen = std::cell::RefCell::new(Vec::new());
    assert_eq!(count_down(5, (1, 2), &seen), Err(()));
    assert_eq!(seen.into_inner(), [512, 512, 512]);
}

#[retry(max_retries = 2, initial_backoff = "1ms", jitter = none)]
async fn parse_hex_async(mut input: &str, seen: &std::sync::Mutex<Vec<String>>) -> Result<u32, String> {
    seen.lock().unwrap().push(input.to_owned());
    tokio::task::yield_now().await;
    if let Some(rest) = input.strip_prefix("0x") {
        input = rest;
    }
    u32::from_str_radix(input, 16).map_err(|e| e.to_string())
}

#[tokio::test(start_paused = true)]
async fn a_mut_argument_of_an_async_fn_starts_every_attempt_fresh() {
    let seen = std::sync::Mutex::new(Vec::new());
    assert!(parse_hex_async("0x0xff", &seen).await.is_err());
    assert_eq!(seen.into_inner().unwrap(), ["0x0xff"; 3]);
}

#[async_trait::async_trait]
trait Parse {
    async fn parse(&self, input: &str, base: u32) -> Result<u32, String>;
}

struct Recorder(std::sync::Mutex<Vec<(String, u32)>>);

#[async_trait::async_trait]
impl Parse for Recorder {
    #[retry(max_retries = 2, initial_backoff = "1ms", jitter = none)]
    async fn parse(&self, mut input: &str, mut base: u32) -> Result<u32, String> {
        self.0.lock().unwrap().push((input.to_owned(), base));
        input = input.trim_start_matches("0x");
        base = 10;
        u32::from_str_radix(input, base).map_err(|e| e.to_string())
    }
}

#[tokio::test(start_paused = true)]
async fn mut_arguments_under_async_trait_start_every_attempt_fresh() {
    let recorder = Recorder(std::sync::Mutex::new(Vec::new()));
    assert!(recorder.parse("0xzz", 16).await.is_err());
    let seen = recorder.0.into_inner().unwrap();
    assert_eq!(seen, vec![("0xzz".to_owned(), 16); 3]);
}

mod shadowing {
    use backoff_runtime::retry;

    /// User items with the names of the expansion's items: its policy,
    /// its site, and its import of the runtime's paths.
    #[allow(non_upper_case_globals)]
    const __backoff_POLICY: u32 = 7;
    #[allow(non_upper_case_globals)]
    static __backoff_SITE: u32 = 5;
    #[allow(non_snake_case)]
    mod __backoff_rt {
        pub(crate) const N: u32 = 3;
    }

    #[retry(max_retries = 1)]
    pub(super) fn reads_its_own_constant() -> Result<u32, ()> {
        Ok(__backoff_POLICY + __backoff_SITE + __backoff_rt::N)
    }

    #[retry(max_retries = 1, initial_backoff = "1ms")]
    pub(super) async fn reads_its_own_constant_async() -> Result<u32, ()> {
        Ok(__backoff_POLICY + __backoff_SITE + __backoff_rt::N)
    }
}

#[test]
fn generated_items_never_shadow_a_user_item() {
    assert_eq!(shadowing::reads_its_own_constant(), Ok(15));
}

#[tokio::test(start_paused = true)]
async fn generated_items_never_shadow_a_user_item_async() {
    assert_eq!(shadowing::reads_its_own_constant_async().await, Ok(15));
}

#[retry(max_elapsed = "500ms", max_retries = 3)]
fn only_max_elapsed_written() -> Result<(), &'static str> {
    Err("down")
}

#[test]
fn a_written_max_elapsed_below_the_default_first_wait_compiles_and_gives_up() {
    let clock = VirtualClock::install();
    assert_eq!(only_max_elapsed_written(), Err("down"));
    // The default first wait (1 s and up) would end past 500 ms.
    assert!(clock.waits().is_empty());
}

#[retry(max_backoff = "8s", max_retries = 1, retry_after = |_| Some(Duration::from_secs(8)))]
fn hinted_exactly_at_the_cap(calls: &AtomicU32) -> Result<u32, &'static str> {
    if calls.fetch_add(1, Ordering::SeqCst) == 0 {
        Err("busy")
    } else {
        Ok(2)
    }
}

#[test]
fn a_hint_exactly_at_max_backoff_is_the_wait() {
    let clock = VirtualClock::install();
    let calls = AtomicU32::new(0);
    assert_eq!(hinted_exactly_at_the_cap(&calls), Ok(2));
    assert_eq!(clock.waits(), [Duration::from_secs(8)]);
}
