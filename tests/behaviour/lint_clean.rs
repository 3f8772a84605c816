//! The expansion is lint-clean: this file is compiled (and, in CI, checked by
//! clippy) with pedantic lints and `unused_qualifications` denied, so a lint
//! that fires on generated code fails the build. The expansion needs no
//! allowance (its fake return edge calls a function, no `loop {}`), so the
//! user's lints reach the user's body and nothing else.
#![deny(
    clippy::pedantic,
    unused_qualifications,
    unused_mut,
    unused_variables,
    unreachable_code
)]

use std::cell::Cell;

use backoff_runtime::retry;

/// An error type for the tests.
#[derive(Debug, PartialEq, Eq)]
pub struct Busy;

/// A sync function with every schedule key.
#[retry(max_retries = 2, initial_backoff = "1ms", max_backoff = "2ms", jitter = full, max_elapsed = "1s")]
fn sync_keys(calls: &Cell<u32>) -> Result<u32, Busy> {
    calls.set(calls.get() + 1);
    if calls.get() < 2 { Err(Busy) } else { Ok(calls.get()) }
}

/// An async function with a predicate closure.
#[retry(initial_backoff = "1ms", retry_if = |e| *e == Busy)]
async fn async_predicate(calls: &Cell<u32>) -> Result<u32, Busy> {
    calls.set(calls.get() + 1);
    if calls.get() < 2 { Err(Busy) } else { Ok(calls.get()) }
}

/// `mut` arguments, rebound fresh for each attempt, sync and async.
#[retry(initial_backoff = "1ms", max_retries = 1)]
fn strip_prefix(mut input: &str, (mut skip, limit): (usize, usize)) -> Result<usize, Busy> {
    while skip > 0 && !input.is_empty() {
        input = &input[1..];
        skip -= 1;
    }
    if input.len() > limit {
        Err(Busy)
    } else {
        Ok(input.len())
    }
}

#[retry(initial_backoff = "1ms", max_retries = 1)]
async fn strip_prefix_async(mut input: &str) -> Result<usize, Busy> {
    input = input.trim_start_matches('x');
    if input.is_empty() { Err(Busy) } else { Ok(input.len()) }
}

/// A shared budget and breaker, named in capitals: the expansion checks
/// that each is a `static`.
static BUDGET: backoff_runtime::limits::RetryBudget = backoff_runtime::limits::RetryBudget::new();
static BREAKER: backoff_runtime::limits::CircuitBreaker = backoff_runtime::limits::CircuitBreaker::new();

impl From<backoff_runtime::limits::Refused> for Busy {
    fn from(_: backoff_runtime::limits::Refused) -> Self {
        Busy
    }
}

#[retry(initial_backoff = "1ms", budget = BUDGET, admission = BREAKER)]
fn shared_limits(calls: &Cell<u32>) -> Result<u32, Busy> {
    calls.set(calls.get() + 1);
    if calls.get() < 2 { Err(Busy) } else { Ok(calls.get()) }
}

#[retry(initial_backoff = "1ms", budget = BUDGET, admission = BREAKER)]
async fn shared_limits_async(calls: &Cell<u32>) -> Result<u32, Busy> {
    calls.set(calls.get() + 1);
    if calls.get() < 2 { Err(Busy) } else { Ok(calls.get()) }
}

struct Counter(u32);

impl Counter {
    #[retry(initial_backoff = "1ms")]
    fn bump(&mut self) -> Result<u32, Busy> {
        self.0 += 1;
        if self.0 < 2 { Err(Busy) } else { Ok(self.0) }
    }

    #[retry(initial_backoff = "1ms")]
    async fn bump_async(&mut self) -> Result<u32, Busy> {
        self.0 += 1;
        if self.0 < 4 { Err(Busy) } else { Ok(self.0) }
    }
}

#[test]
fn lint_clean_expansions_still_work() {
    let _clock = backoff_runtime::testing::VirtualClock::install();
    let calls = Cell::new(0);
    assert_eq!(sync_keys(&calls), Ok(2));
    let mut counter = Counter(0);
    assert_eq!(counter.bump(), Ok(2));
    assert_eq!(strip_prefix("abc", (1, 2)), Ok(2));
    assert_eq!(strip_prefix("abcd", (1, 2)), Err(Busy));
    assert_eq!(shared_limits(&Cell::new(0)), Ok(2));
}

#[tokio::test(start_paused = true)]
async fn lint_clean_async_expansions_still_work() {
    let calls = Cell::new(0);
    assert_eq!(async_predicate(&calls).await, Ok(2));
    let mut counter = Counter(2);
    assert_eq!(counter.bump_async().await, Ok(4));
    assert_eq!(strip_prefix_async("xxab").await, Ok(2));
    assert_eq!(shared_limits_async(&Cell::new(0)).await, Ok(2));
}
