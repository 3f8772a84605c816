//! `RetryBudget` through the attribute and the plain API: the ratio and the
//! minimum rate hold, budgets are shared by name, counts expire with the
//! window, and many threads cannot overdraw it.

use std::cell::Cell;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use proptest::prelude::*;

use backoff_runtime::limits::RetryBudget;
use backoff_runtime::testing::VirtualClock;
use backoff_runtime::{Policy, StopReason, retry};

static RATIO_ONLY: RetryBudget = RetryBudget::new().ratio(0.2).min_per_second(0);

/// Fails once, then succeeds: each call wants exactly one retry.
#[retry(budget = RATIO_ONLY, initial_backoff = "1ms", on_give_up = |_, g| refused.lock().unwrap().push(g.reason()))]
fn fails_once(calls: &Cell<u32>, refused: &Mutex<Vec<StopReason>>) -> Result<(), ()> {
    calls.set(calls.get() + 1);
    if calls.get() % 2 == 1 { Err(()) } else { Ok(()) }
}

#[test]
fn retries_stay_under_the_ratio_of_calls() {
    let _clock = VirtualClock::install();
    let refused = Mutex::new(Vec::new());
    let mut failures = 0;
    for _ in 0..100 {
        let calls = Cell::new(0);
        if fails_once(&calls, &refused).is_err() {
            failures += 1;
        }
    }
    // 100 calls deposit 100; retries may reach 20% of them.
    assert_eq!(100 - failures, 20, "exactly the budget's retries succeeded");
    let refused = refused.lock().unwrap();
    assert_eq!(refused.len(), 80);
    assert!(refused.iter().all(|r| *r == StopReason::Budget));
}

static FLOOR_ONLY: RetryBudget = RetryBudget::new().ratio(0.0).min_per_second(2);

#[retry(budget = FLOOR_ONLY, initial_backoff = "1ms", max_backoff = "1ms", jitter = none, max_retries = 100)]
fn always_fails_a(calls: &Cell<u32>) -> Result<(), ()> {
    calls.set(calls.get() + 1);
    Err(())
}

#[retry(budget = FLOOR_ONLY, initial_backoff = "1ms", max_backoff = "1ms", jitter = none, max_retries = 100)]
fn always_fails_b(calls: &Cell<u32>) -> Result<(), ()> {
    calls.set(calls.get() + 1);
    Err(())
}

#[test]
fn the_minimum_rate_is_shared_by_every_function_naming_the_budget() {
    let clock = VirtualClock::install();
    let calls = Cell::new(0);
    assert!(always_fails_a(&calls).is_err());
    // 2 retries/s over 10 s: 20 retries (the waits are 1 ms: all in one window).
    assert_eq!(calls.get(), 21);
    let calls = Cell::new(0);
    assert!(always_fails_b(&calls).is_err());
    assert_eq!(calls.get(), 1, "the other function already spent the shared budget");
    // Once the window has passed, the budget is available again.
    clock.advance(Duration::from_secs(11));
    assert!(always_fails_b(&calls).is_err());
    assert_eq!(calls.get(), 22);
}

#[test]
fn the_plain_api_takes_a_budget_too() {
    static PLAIN: RetryBudget = RetryBudget::new().ratio(0.0).min_per_second(1);
    let _clock = VirtualClock::install();
    let policy = Policy::new()
        .max_retries(50)
        .initial_backoff(Duration::from_millis(1))
        .max_backoff(Duration::from_millis(1));
    let attempts = Cell::new(0);
    let result: Result<(), ()> = policy
        .retry(|| {
            attempts.set(attempts.get() + 1);
            Err(())
        })
        .budget(&PLAIN)
        .call();
    assert!(result.is_err());
    assert_eq!(attempts.get(), 11);
}

static ASYNC_BUDGET: RetryBudget = RetryBudget::new().ratio(0.0).min_per_second(1);

#[retry(budget = ASYNC_BUDGET, initial_backoff = "1ms", max_backoff = "1ms", max_retries = 100, jitter = none)]
async fn async_always_fails(calls: &AtomicU32) -> Result<(), ()> {
    calls.fetch_add(1, Ordering::SeqCst);
    Err(())
}

#[tokio::test(start_paused = true)]
async fn the_window_runs_on_the_paused_clock() {
    let calls = AtomicU32::new(0);
    assert!(async_always_fails(&calls).await.is_err());
    assert_eq!(calls.load(Ordering::SeqCst), 11);
    tokio::time::sleep(Duration::from_secs(11)).await;
    let calls = AtomicU32::new(0);
    assert!(async_always_fails(&calls).await.is_err());
    assert_eq!(calls.load(Ordering::SeqCst), 11, "the paused clock moved the window");
}

static THREADS: RetryBudget = RetryBudget::new().ratio(0.1).min_per_second(0);

#[retry(budget = THREADS, initial_backoff = "1ms", sleep = |_| ())]
fn threaded(calls: &Cell<u32>) -> Result<(), ()> {
    calls.set(calls.get() + 1);
    if calls.get() % 2 == 1 { Err(()) } else { Ok(()) }
}

#[test]
fn many_threads_cannot_overdraw_the_budget() {
    let retries = AtomicU32::new(0);
    std::thread::scope(|scope| {
        for _ in 0..8 {
            scope.spawn(|| {
                for _ in 0..200 {
                    let calls = Cell::new(0);
                    let _ = threaded(&calls);
                    retries.fetch_add(calls.get() - 1, Ordering::SeqCst);
                }
            });
        }
    });
    let retries = retries.load(Ordering::SeqCst);
    // 1600 calls deposit 1600: at most 10% of them may be retried.
    assert!(retries <= 160, "{retries} retries overdrew the budget");
    assert!(retries >= 100, "only {retries} retries: the budget refused too much");
}

/// A fresh budget whose first use, and so its first slot, is at `start`.
fn budget_from(start: Instant, budget: RetryBudget) -> RetryBudget {
    budget.deposit(start);
    budget
}

/// How many of `tries` withdrawals at `now` the budget grants.
fn grants(budget: &RetryBudget, now: Instant, tries: usize) -> usize {
    (0..tries).filter(|_| budget.try_withdraw(now)).count()
}

#[test]
fn huge_settings_never_overflow() {
    // All the retries any caller could want.
    let start = Instant::now();
    let huge = budget_from(
        start,
        RetryBudget::new()
            .ratio(1.0)
            .min_per_second(u32::MAX)
            .window(Duration::from_secs(365 * 86_400)),
    );
    assert_eq!(grants(&huge, start, 1000), 1000);
    assert_eq!(grants(&huge, start + Duration::from_secs(86_400), 1000), 1000);
    // Every extreme the builders accept, at instants far apart.
    let start = Instant::now();
    let windows = [
        Duration::from_millis(10),
        Duration::from_secs(365 * 86_400),
        Duration::MAX,
    ];
    for per_mille in [0_u64, 1000, 1_000_000] {
        for min in [0_u32, 1, u32::MAX] {
            for window in windows {
                let budget = RetryBudget::new()
                    .ratio(per_mille as f64 / 1000.0)
                    .min_per_second(min)
                    .window(window);
                for _ in 0..3 {
                    budget.deposit(start);
                }
                // ratio * 3 + min * window, whole retries (exact, in billionths).
                let limit =
                    (u128::from(per_mille) * 3 * 1_000_000 + u128::from(min) * window.as_nanos()) / 1_000_000_000;
                let expected = usize::try_from(limit.min(5)).unwrap();
                assert_eq!(
                    grants(&budget, start, 5),
                    expected,
                    "{per_mille}/1000 {min}/s over {window:?}"
                );
                for later in [window / 2, Duration::from_secs(1 << 20), Duration::from_secs(1 << 40)] {
                    if let Some(now) = start.checked_add(later) {
                        budget.deposit(now);
                        let _ = budget.try_withdraw(now);
                    }
                }
            }
        }
    }
}

#[test]
fn a_sub_second_window_gets_its_exact_floor() {
    let cases = [
        (10, Duration::from_millis(100), 1),
        (10, Duration::from_millis(250), 2),
        (10, Duration::from_millis(99), 0),
        (3, Duration::from_millis(1500), 4),
        (1, Duration::from_millis(999), 0),
        (1000, Duration::from_millis(10), 10),
    ];
    for (per_second, window, floor) in cases {
        let start = Instant::now();
        let budget = RetryBudget::new().ratio(0.0).min_per_second(per_second).window(window);
        assert_eq!(grants(&budget, start, 100), floor, "{per_second}/s over {window:?}");
    }
    // A fraction of a retry allows none by itself, but adds to the ratio's.
    let start = Instant::now();
    let half = RetryBudget::new()
        .ratio(0.5)
        .min_per_second(5)
        .window(Duration::from_millis(100));
    assert_eq!(grants(&half, start, 10), 0, "0.5 retries");
    half.deposit(start);
    assert_eq!(grants(&half, start, 10), 1, "0.5 of one call plus 0.5");
}

#[test]
fn a_budget_idle_for_fifty_days_allows_its_floor() {
    let start = Instant::now();
    // 1000/s over 10 ms: 10 retries per window, 1 ms slots.
    let settings = || {
        RetryBudget::new()
            .ratio(0.0)
            .min_per_second(1000)
            .window(Duration::from_millis(10))
    };
    let fresh = grants(&settings(), start, 2000);
    let budget = settings();
    assert_eq!(grants(&budget, start, 2000), fresh);
    let idle = [
        Duration::from_millis(1 << 32),
        Duration::from_secs(50 * 86_400),
        Duration::from_millis(11 << 32),
        Duration::from_secs(1000 * 365 * 86_400),
    ];
    for after in idle {
        assert_eq!(grants(&budget, start + after, 2000), fresh, "idle until {after:?}");
        assert_eq!(
            grants(&budget, start + after + Duration::from_millis(9), 2000),
            0,
            "{after:?} + 9 ms"
        );
    }
    assert_eq!(fresh, 10);
}

#[test]
fn a_window_across_the_32_bit_slot_wrap_keeps_its_retries() {
    let start = Instant::now();
    let budget = budget_from(
        start,
        RetryBudget::new()
            .ratio(0.0)
            .min_per_second(1000)
            .window(Duration::from_millis(10)),
    );
    let wrap = start + Duration::from_millis(1 << 32);
    let floor = grants(&budget, wrap - Duration::from_millis(3), 2000);
    assert!(floor > 0);
    assert_eq!(grants(&budget, wrap, 2000), 0, "the slot number's low 32 bits wrapped");
    assert_eq!(grants(&budget, wrap + Duration::from_millis(6), 2000), 0);
    assert_eq!(
        grants(&budget, wrap + Duration::from_millis(8), 2000),
        floor,
        "a whole window (and a slot) later"
    );
    assert_eq!(floor, 10);
}

#[test]
fn no_window_length_interval_exceeds_the_limit() {
    let window = Duration::from_secs(10);
    let start = Instant::now();
    // 1/s over 10 s: at most 10 retries in any 10 s.
    let budget = budget_from(start, RetryBudget::new().ratio(0.0).min_per_second(1).window(window));
    // Every retry granted, on an irregular grid over a minute.
    let mut granted = Vec::new();
    for step in 0..160_u32 {
        let now = start + Duration::from_millis(u64::from(step) * 370);
        for _ in 0..2 {
            if budget.try_withdraw(now) {
                granted.push(now);
            }
        }
    }
    assert!(granted.len() >= 40, "only {} retries in a minute", granted.len());
    for &last in &granted {
        let in_window = granted.iter().filter(|&&t| t <= last && t + window > last).count();
        assert!(
            in_window <= 10,
            "{in_window} retries in the 10 s ending {:?}",
            last - start
        );
    }
    // Retries taken late in the first slot still count a whole window later.
    let budget = budget_from(start, RetryBudget::new().ratio(0.0).min_per_second(1).window(window));
    assert_eq!(grants(&budget, start + Duration::from_millis(900), 100), 10);
    assert_eq!(
        grants(&budget, start + window, 100),
        0,
        "the 10 at 0.9 s are inside (0 s, 10 s]"
    );
    assert_eq!(grants(&budget, start + Duration::from_millis(10_899), 100), 0);
    assert_eq!(grants(&budget, start + Duration::from_millis(11_000), 100), 10);
}

#[test]
fn the_window_edges_are_exact() {
    let start = Instant::now();
    let nanosecond = Duration::from_nanos(1);
    // A 1 s window: 100 ms slots. A retry counts through its slot + 10.
    let retries = || {
        budget_from(
            start,
            RetryBudget::new()
                .ratio(0.0)
                .min_per_second(3)
                .window(Duration::from_secs(1)),
        )
    };
    let budget = retries();
    assert_eq!(grants(&budget, start + Duration::from_millis(50), 10), 3);
    assert_eq!(grants(&budget, start + Duration::from_millis(1100) - nanosecond, 10), 0);
    assert_eq!(grants(&budget, start + Duration::from_millis(1100), 10), 3);
    // A call counts through its slot + 9.
    let calls = || {
        budget_from(
            start,
            RetryBudget::new()
                .ratio(1.0)
                .min_per_second(0)
                .window(Duration::from_secs(1)),
        )
    };
    assert_eq!(
        grants(&calls(), start + Duration::from_millis(1000) - nanosecond, 10),
        1
    );
    assert_eq!(grants(&calls(), start + Duration::from_millis(1000), 10), 0);
    // Slots of a window that ten does not divide begin on whole nanoseconds
    // (slot k at ceil(k / 10 of the window)), ten of them exactly a window.
    let odd = Duration::from_nanos(1_000_000_007);
    let calls = || budget_from(start, RetryBudget::new().ratio(1.0).min_per_second(0).window(odd));
    assert_eq!(grants(&calls(), start + odd - nanosecond, 10), 1);
    assert_eq!(grants(&calls(), start + odd, 10), 0);
    let budget = budget_from(start, RetryBudget::new().ratio(0.0).min_per_second(1).window(odd));
    assert_eq!(grants(&budget, start, 10), 1);
    assert_eq!(
        grants(&budget, start + odd + odd / 10, 10),
        0,
        "slot 11 begins at 1_100_000_008 ns"
    );
    assert_eq!(grants(&budget, start + odd + odd / 10 + nanosecond, 10), 1);
}

#[test]
fn a_custom_window_expires_its_counts() {
    let start = Instant::now();
    // 5/s over 2 s: 10 retries per window, 200 ms slots.
    let budget = budget_from(
        start,
        RetryBudget::new()
            .ratio(0.0)
            .min_per_second(5)
            .window(Duration::from_secs(2)),
    );
    assert_eq!(grants(&budget, start, 100), 10);
    assert_eq!(grants(&budget, start + Duration::from_secs(2), 100), 0);
    assert_eq!(
        grants(&budget, start + Duration::from_millis(2200), 100),
        10,
        "the first retries expired"
    );
    // And calls too: 50 calls allow 10 retries at 20%, for 2 s at most.
    let budget = budget_from(
        start,
        RetryBudget::new()
            .ratio(0.2)
            .min_per_second(0)
            .window(Duration::from_secs(2)),
    );
    for _ in 0..49 {
        budget.deposit(start);
    }
    assert_eq!(grants(&budget, start + Duration::from_millis(1900), 100), 10);
    assert_eq!(
        grants(&budget, start + Duration::from_millis(3100), 100),
        0,
        "the calls expired"
    );
}

#[test]
fn the_window_keeps_working_after_centuries() {
    let start = Instant::now();
    let budget = budget_from(
        start,
        RetryBudget::new()
            .ratio(0.0)
            .min_per_second(1)
            .window(Duration::from_secs(10)),
    );
    let later = start + Duration::from_secs(300 * 365 * 86_400);
    assert_eq!(grants(&budget, later, 100), 10);
    assert_eq!(grants(&budget, later + Duration::from_secs(5), 100), 0);
    assert_eq!(grants(&budget, later + Duration::from_secs(11), 100), 10);
}

/// What the budget promises, counted from lists of instants (nanoseconds
/// since the first use): a retry in slot `k` (slot = 10 * t / window) is
/// granted when the retries granted in slots `k - 10 ..= k`, with it, are at
/// most ratio * the calls in slots `k - 9 ..= k` + min_per_second * window.
struct Model {
    per_mille: u128,
    min_per_second: u128,
    window: u128,
    calls: Vec<u128>,
    retries: Vec<u128>,
}

impl Model {
    fn slot(&self, t: u128) -> u128 {
        t * 10 / self.window
    }

    fn rule(&self, retries: usize, calls: usize) -> bool {
        retries as u128 * 1_000_000_000
            <= self.per_mille * calls as u128 * 1_000_000 + self.min_per_second * self.window
    }

    fn withdraw(&mut self, t: u128) -> bool {
        let k = self.slot(t);
        let retries = self.retries.iter().filter(|&&r| self.slot(r) + 10 >= k).count();
        let calls = self.calls.iter().filter(|&&c| self.slot(c) + 9 >= k).count();
        if !self.rule(retries + 1, calls) {
            return false;
        }
        self.retries.push(t);
        // The promise behind the slots: the rule holds over (t - window, t].
        let retries = self.retries.iter().filter(|&&r| r + self.window > t).count();
        let calls = self.calls.iter().filter(|&&c| c + self.window > t).count();
        assert!(
            self.rule(retries, calls),
            "{retries} retries against {calls} calls in the window ending at {t}"
        );
        true
    }
}

#[derive(Debug, Clone)]
enum Advance {
    Nanos(u64),
    /// To the first instant of the slot `n` slots on.
    ToSlot(u64),
    /// To the last nanosecond before that.
    BeforeSlot(u64),
}

fn advance() -> impl Strategy<Value = Advance> {
    prop_oneof![
        4 => Just(Advance::Nanos(0)),
        4 => (0_u64..100_000_000).prop_map(Advance::Nanos),
        2 => (0_u64..5_000_000_000).prop_map(Advance::Nanos),
        3 => (1_u64..13).prop_map(Advance::ToSlot),
        3 => (1_u64..13).prop_map(Advance::BeforeSlot),
        1 => Just(Advance::Nanos((1 << 32) * 1_000_000)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn the_budget_grants_exactly_what_the_model_grants(
        window in prop_oneof![10_000_000_u64..20_000_000, 10_000_000_u64..3_000_000_000],
        per_mille in prop_oneof![Just(0_u64), 0_u64..3000],
        min_per_second in prop_oneof![Just(0_u32), 0_u32..40, 0_u32..2000],
        steps in prop::collection::vec((advance(), any::<bool>()), 1..250),
    ) {
        let budget = RetryBudget::new()
            .ratio(per_mille as f64 / 1000.0)
            .min_per_second(min_per_second)
            .window(Duration::from_nanos(window));
        let mut model = Model {
            per_mille: per_mille.into(),
            min_per_second: min_per_second.into(),
            window: window.into(),
            calls: Vec::new(),
            retries: Vec::new(),
        };
        let start = Instant::now();
        let mut t: u128 = 0;
        for (step, (advance, is_call)) in steps.into_iter().enumerate() {
            let now = start + Duration::from_nanos(u64::try_from(t).unwrap());
            if is_call {
                budget.deposit(now);
                model.calls.push(t);
            } else {
                prop_assert_eq!(budget.try_withdraw(now), model.withdraw(t), "step {} at {} ns", step, t);
            }
            t += match advance {
                Advance::Nanos(n) => u128::from(n),
                // Slot k begins at ceil(k * window / 10).
                Advance::ToSlot(n) => ((model.slot(t) + u128::from(n)) * model.window).div_ceil(10) - t,
                Advance::BeforeSlot(n) => ((model.slot(t) + u128::from(n)) * model.window).div_ceil(10) - 1 - t,
            };
        }
    }
}

#[test]
fn a_window_too_long_for_64_bit_nanoseconds_keeps_its_calls() {
    let start = Instant::now();
    // 2^64 ns + 1 ms: about 585 years.
    let window = Duration::from_nanos(u64::MAX) + Duration::from_nanos(1 + 1_000_000);
    let budget = budget_from(start, RetryBudget::new().ratio(1.0).min_per_second(0).window(window));
    assert_eq!(
        grants(&budget, start + Duration::from_secs(1), 10),
        1,
        "the call is a second old"
    );
    assert_eq!(grants(&budget, start + Duration::from_secs(50 * 365 * 86_400), 10), 0);
    budget.deposit(start + Duration::from_secs(50 * 365 * 86_400));
    assert_eq!(grants(&budget, start + Duration::from_secs(51 * 365 * 86_400), 10), 1);
}

/// Only what was sent counts: a call refused by an open breaker deposits
/// nothing, a future never polled deposits nothing, and a retry dropped
/// during its backoff is refunded.
mod only_what_was_sent {
    use super::*;
    use backoff_runtime::limits::{CircuitBreaker, Refused, RetryLimit};

    #[derive(Debug, PartialEq)]
    enum Error {
        Busy,
        Refused,
    }

    impl From<Refused> for Error {
        fn from(_: Refused) -> Self {
            Error::Refused
        }
    }

    /// Retries allowed by `budget` now, counted by asking until it says no
    /// (each answer takes one).
    fn retries_left(budget: &RetryBudget) -> usize {
        let now = Instant::now();
        (0..1_000).take_while(|_| budget.try_retry(now)).count()
    }

    #[test]
    fn calls_refused_by_an_open_breaker_deposit_nothing() {
        let _clock = backoff_runtime::testing::VirtualClock::install();
        let budget = RetryBudget::new().ratio(1.0).min_per_second(0);
        let breaker = CircuitBreaker::new().consecutive_failures(1);
        let policy = Policy::new().initial_backoff(Duration::from_millis(1)).max_retries(1);
        // One failure opens the breaker; that call was sent and deposits.
        // Its retry, which the budget allowed, is refused by the open
        // breaker, and given back.
        let opened = policy
            .retry(|| Err::<(), _>(Error::Busy))
            .budget(&budget)
            .admission(&breaker)
            .call();
        assert_eq!(opened, Err(Error::Refused));
        for _ in 0..10 {
            let refused = policy
                .retry(|| Ok::<(), Error>(()))
                .budget(&budget)
                .admission(&breaker)
                .call();
            assert_eq!(refused, Err(Error::Refused));
        }
        assert_eq!(
            retries_left(&budget),
            1,
            "one call sent, its refused retry given back: 1 left, not 10"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_builder_future_never_polled_deposits_nothing() {
        let budget = RetryBudget::new().ratio(1.0).min_per_second(0);
        let policy = Policy::new();
        for _ in 0..5 {
            drop(
                policy
                    .retry(|| async { Ok::<(), ()>(()) })
                    .budget(&budget)
                    .into_future(),
            );
        }
        assert_eq!(retries_left(&budget), 0);
        policy
            .retry(|| async { Ok::<(), ()>(()) })
            .budget(&budget)
            .await
            .unwrap();
        assert_eq!(retries_left(&budget), 1, "the one call awaited counts");
    }

    #[tokio::test(start_paused = true)]
    async fn a_retry_dropped_during_its_backoff_is_refunded() {
        let budget = RetryBudget::new().ratio(0.0).min_per_second(1);
        let policy = Policy::new()
            .initial_backoff(Duration::from_secs(1))
            .jitter(backoff_runtime::Jitter::None);
        let attempts = AtomicU32::new(0);
        let call = policy
            .retry(|| async {
                attempts.fetch_add(1, Ordering::Relaxed);
                Err::<(), ()>(())
            })
            .budget(&budget);
        // Dropped half-way through the first backoff: the retry was
        // allowed, never sent.
        let timed_out = tokio::time::timeout(Duration::from_millis(500), call.into_future()).await;
        assert!(timed_out.is_err());
        assert_eq!(attempts.load(Ordering::Relaxed), 1);
        assert_eq!(retries_left(&budget), 10, "1 per second over 10 s, none spent");
    }

    #[retry(budget = FLOOR_BUDGET, initial_backoff = "1s", jitter = none, max_retries = 3)]
    async fn fails_slowly(attempts: &AtomicU32) -> Result<(), ()> {
        attempts.fetch_add(1, Ordering::Relaxed);
        Err(())
    }

    static FLOOR_BUDGET: RetryBudget = RetryBudget::new().ratio(0.0).min_per_second(1);

    #[tokio::test(start_paused = true)]
    async fn the_attribute_refunds_a_retry_dropped_during_its_backoff() {
        let attempts = AtomicU32::new(0);
        let timed_out = tokio::time::timeout(Duration::from_millis(1_500), fails_slowly(&attempts)).await;
        assert!(timed_out.is_err());
        assert_eq!(
            attempts.load(Ordering::Relaxed),
            2,
            "the first retry was sent, the second dropped"
        );
        assert_eq!(
            retries_left(&FLOOR_BUDGET),
            9,
            "the sent retry stays spent, the unsent one is back"
        );
    }
}
