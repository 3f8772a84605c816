//! Budgets as values: one `RetryBudget` per backend, chosen per call by
//! `budget = EXPR` (here a method of `self`), as Finagle, gRPC and reqwest's
//! scoped retries do. A failing host spends its own budget only: the healthy
//! host's retries are unaffected.

use std::cell::Cell;
use std::collections::HashMap;
use std::time::Duration;

use backoff_runtime::limits::RetryBudget;
use backoff_runtime::testing::VirtualClock;
use backoff_runtime::{GiveUp, Policy, StopReason, retry};

/// No ratio, a floor of 1 retry per second over 10 s: 10 retries per window.
fn small_budget() -> RetryBudget {
    RetryBudget::new().ratio(0.0).min_per_second(1)
}

struct Client {
    budgets: HashMap<&'static str, RetryBudget>,
    /// Per host, how many of its next attempts fail.
    failures_left: HashMap<&'static str, Cell<u32>>,
    refusals: Cell<u32>,
}

impl Client {
    fn new() -> Client {
        Client {
            budgets: ["down", "up"].map(|host| (host, small_budget())).into(),
            failures_left: [("down", Cell::new(u32::MAX)), ("up", Cell::new(0))].into(),
            refusals: Cell::new(0),
        }
    }

    fn budget_for(&self, host: &str) -> &RetryBudget {
        &self.budgets[host]
    }

    fn count_refusal(&self, event: &GiveUp) {
        if event.reason() == StopReason::Budget {
            self.refusals.set(self.refusals.get() + 1);
        }
    }

    #[retry(
        budget = self.budget_for(host),
        max_retries = 3,
        initial_backoff = "1ms",
        jitter = none,
        on_give_up = |_, event| self.count_refusal(event),
    )]
    fn get(&self, host: &'static str) -> Result<&'static str, &'static str> {
        let left = &self.failures_left[host];
        if left.get() > 0 {
            left.set(left.get() - 1);
            Err("unavailable")
        } else {
            Ok(host)
        }
    }
}

#[test]
fn a_failing_host_spends_only_its_own_budget() {
    let _clock = VirtualClock::install();
    let client = Client::new();
    // 3 retries a call: 10 retries are spent within the first 4 calls, then
    // every call to the failing host is refused its first retry.
    for _ in 0..8 {
        assert_eq!(client.get("down"), Err("unavailable"));
    }
    assert_eq!(client.refusals.get(), 5, "calls 4 to 8 ran into the budget");

    // The healthy host fails its next 3 attempts, and still gets every retry.
    client.failures_left["up"].set(3);
    assert_eq!(client.get("up"), Ok("up"));
    assert_eq!(client.refusals.get(), 5);
}

#[test]
fn the_plain_builder_takes_a_budget_per_call_too() {
    let _clock = VirtualClock::install();
    let budgets: HashMap<&str, RetryBudget> = ["down", "up"].map(|host| (host, small_budget())).into();
    let policy = Policy::new().max_retries(50).initial_backoff(Duration::from_millis(1));
    let mut down_calls = 0;
    let down: Result<(), ()> = policy
        .retry(|| {
            down_calls += 1;
            Err(())
        })
        .budget(&budgets["down"])
        .call();
    assert_eq!((down, down_calls), (Err(()), 11));
    let mut up_calls = 0;
    let up = policy
        .retry(|| {
            up_calls += 1;
            if up_calls < 6 { Err(()) } else { Ok(up_calls) }
        })
        .budget(&budgets["up"])
        .call();
    assert_eq!(up, Ok(6));
}

// ---- a budget that is also an argument the body uses --------------------------

#[backoff_runtime::retry(max_retries = 2, initial_backoff = "1ms", budget = b)]
fn call_with_budget(
    b: std::sync::Arc<backoff_runtime::limits::RetryBudget>,
    calls: &std::sync::atomic::AtomicU32,
) -> Result<usize, ()> {
    // The body uses the argument too (a clone for a spawned helper, say).
    let shared = b.clone();
    let n = calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    if n == 0 {
        Err(())
    } else {
        Ok(std::sync::Arc::strong_count(&shared))
    }
}

/// `budget = b` with `b` an argument the body also uses compiles: the
/// budget is borrowed for the call, and the body borrows the argument too.
#[test]
fn a_budget_argument_the_body_also_uses() {
    let _clock = backoff_runtime::testing::VirtualClock::install();
    let budget = std::sync::Arc::new(backoff_runtime::limits::RetryBudget::new());
    let calls = std::sync::atomic::AtomicU32::new(0);
    assert_eq!(call_with_budget(budget.clone(), &calls), Ok(3));
    assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), 2);
}
