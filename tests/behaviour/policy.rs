//! `policy = EXPR`: one policy shared by several functions, or read at run
//! time, evaluated once per call; hooks, budget and sleep work beside it.

use std::cell::Cell;
use std::time::Duration;

use backoff_runtime::limits::RetryBudget;
use backoff_runtime::testing::VirtualClock;
use backoff_runtime::{Jitter, Policy, retry};

const SHARED: Policy = Policy::new()
    .max_retries(2)
    .initial_backoff(Duration::from_millis(100))
    .jitter(Jitter::None);

#[retry(policy = SHARED)]
fn first_user(calls: &Cell<u32>) -> Result<(), u32> {
    calls.set(calls.get() + 1);
    Err(calls.get())
}

#[retry(policy = SHARED, retry_if = |e| *e < 2)]
async fn second_user(calls: &Cell<u32>) -> Result<(), u32> {
    calls.set(calls.get() + 1);
    Err(calls.get())
}

#[test]
fn a_const_policy_shared_by_several_functions() {
    let clock = VirtualClock::install();
    let calls = Cell::new(0);
    assert_eq!(first_user(&calls), Err(3));
    assert_eq!(clock.waits(), [100, 200].map(Duration::from_millis));
}

#[tokio::test(start_paused = true)]
async fn a_const_policy_with_a_hook_beside_it() {
    let calls = Cell::new(0);
    let start = tokio::time::Instant::now();
    assert_eq!(second_user(&calls).await, Err(2), "retry_if stopped it");
    assert_eq!(start.elapsed(), Duration::from_millis(100));
}

/// Settings read at run time, e.g. from a configuration file.
struct Config {
    retries: u32,
    first_wait_ms: u64,
}

fn load_policy(config: &Config) -> Policy {
    Policy::new()
        .try_max_retries(config.retries)
        .and_then(|p| p.try_initial_backoff(Duration::from_millis(config.first_wait_ms)))
        .map(|p| p.jitter(Jitter::None))
        .unwrap_or_default()
}

struct Client {
    policy: Policy,
    calls: Cell<u32>,
}

impl Client {
    #[retry(policy = self.policy)]
    fn call(&self) -> Result<(), u32> {
        self.calls.set(self.calls.get() + 1);
        Err(self.calls.get())
    }

    #[retry(policy = self.policy, sleep = |d| {
        slept.set(slept.get() + d);
        std::future::ready(())
    })]
    async fn call_async(&self, slept: &Cell<Duration>) -> Result<(), u32> {
        self.calls.set(self.calls.get() + 1);
        Err(self.calls.get())
    }
}

#[retry(policy = load_policy(config))]
fn configured(config: &Config, calls: &Cell<u32>) -> Result<(), u32> {
    calls.set(calls.get() + 1);
    Err(calls.get())
}

#[test]
fn a_policy_from_a_struct_field_at_run_time() {
    let clock = VirtualClock::install();
    let client = Client {
        policy: Policy::new().max_retries(4).jitter(Jitter::None),
        calls: Cell::new(0),
    };
    assert_eq!(client.call(), Err(5));
    assert_eq!(clock.waits(), [1, 2, 4, 8].map(Duration::from_secs));
}

#[test]
fn a_policy_from_a_call_evaluated_per_call() {
    let clock = VirtualClock::install();
    let calls = Cell::new(0);
    assert_eq!(
        configured(
            &Config {
                retries: 1,
                first_wait_ms: 5
            },
            &calls
        ),
        Err(2)
    );
    let calls = Cell::new(0);
    assert_eq!(
        configured(
            &Config {
                retries: 3,
                first_wait_ms: 7
            },
            &calls
        ),
        Err(4)
    );
    assert_eq!(clock.waits(), [5, 7, 14, 28].map(Duration::from_millis));
}

#[test]
fn a_field_policy_with_a_custom_sleep_in_async_code() {
    let client = Client {
        policy: Policy::new().max_retries(3).jitter(Jitter::None),
        calls: Cell::new(0),
    };
    let slept = Cell::new(Duration::ZERO);
    let result = async_io::block_on(client.call_async(&slept));
    assert_eq!(result, Err(4));
    assert_eq!(slept.get(), Duration::from_secs(7));
}

static POLICY_BUDGET: RetryBudget = RetryBudget::new().ratio(0.0).min_per_second(1);

#[retry(policy = SHARED.max_retries(50).max_backoff(Duration::from_millis(100)), budget = POLICY_BUDGET)]
fn budgeted(calls: &Cell<u32>) -> Result<(), u32> {
    calls.set(calls.get() + 1);
    Err(calls.get())
}

#[test]
fn a_budget_beside_a_policy() {
    let _clock = VirtualClock::install();
    let calls = Cell::new(0);
    assert_eq!(budgeted(&calls), Err(11), "1 retry/s over 10 s");
}

struct Counter {
    policy: Policy,
    hits: u32,
}

impl Counter {
    /// In a `&mut self` method, a copy of the field keeps the borrow short.
    #[retry(policy = self.policy.clone())]
    fn bump(&mut self) -> Result<u32, u32> {
        self.hits += 1;
        if self.hits < 3 { Err(self.hits) } else { Ok(self.hits) }
    }
}

#[test]
fn a_field_policy_in_a_mut_self_method() {
    let _clock = VirtualClock::install();
    let mut counter = Counter {
        policy: Policy::new().initial_backoff(Duration::from_millis(1)),
        hits: 0,
    };
    assert_eq!(counter.bump(), Ok(3));
}
