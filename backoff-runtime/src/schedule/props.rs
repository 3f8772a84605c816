//! Schedule invariants under proptest.
//!
//! Schedule invariants under proptest (unit tests: they reach the wait
//! formula for any retry number and previous wait): for arbitrary initial wait, cap,
//! multiplier, jitter mode and amount, retry number (up to `u32::MAX`) and
//! seed, every wait is `<= max_backoff`, the base never decreases (and the
//! loops step it to exactly the formula's value), nothing
//! panics or overflows, and each mode stays inside its formula. The retry
//! loops take exactly the waits of `Policy::schedule` for the same seed.

use core::time::Duration;

use proptest::prelude::*;
use rand::SeedableRng;
use rand::rngs::SmallRng;

use crate::testing::{VirtualClock, seed_thread_rng};
use crate::{Jitter, Policy};

/// Durations from 1 ns to far beyond any real wait (up to `Duration::MAX`).
fn duration() -> impl Strategy<Value = Duration> {
    prop_oneof![
        (1u64..1_000_000).prop_map(Duration::from_nanos),
        (1u64..100_000).prop_map(Duration::from_millis),
        (1u64..u64::MAX).prop_map(Duration::from_secs),
        Just(Duration::MAX),
    ]
}

fn multiplier() -> impl Strategy<Value = f64> {
    prop_oneof![
        Just(1.0),
        Just(2.0),
        1.0f64..10.0,
        1.0f64..1e300,
        (1u32..u32::MAX).prop_map(f64::from)
    ]
}

fn jitter() -> impl Strategy<Value = Jitter> {
    prop_oneof![
        Just(Jitter::Additive),
        duration().prop_map(Jitter::AdditiveUpTo),
        Just(Jitter::Full),
        Just(Jitter::Equal),
        Just(Jitter::Decorrelated),
        Just(Jitter::Grpc),
        Just(Jitter::None),
    ]
}

fn retry_number() -> impl Strategy<Value = u32> {
    prop_oneof![0u32..64, any::<u32>(), Just(u32::MAX)]
}

fn policy() -> impl Strategy<Value = Policy> {
    (duration(), duration(), multiplier(), jitter()).prop_map(|(initial, cap, m, jitter)| {
        // Every pair of waits, those the builders refuse when both are set
        // (a first wait or a jitter amount above the cap) included: the
        // schedule holds its promises for any values, as for a first wait
        // that the default cap shortens.
        let mut policy = Policy::new().multiplier(m).jitter(jitter);
        policy.initial_backoff = initial;
        policy.max_backoff = cap;
        policy
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 4096, ..ProptestConfig::default() })]

    #[test]
    fn every_wait_respects_its_mode_and_the_cap(policy in policy(), n in retry_number(), previous in duration(), seed in any::<u64>()) {
        let mut rng = SmallRng::seed_from_u64(seed);
        let cap = policy.get_max_backoff();
        let base = policy.base_backoff(n);
        let wait = policy.wait_for(n, previous, &mut rng);
        prop_assert!(base <= cap);
        prop_assert!(wait <= cap, "wait {wait:?} above cap {cap:?}");
        let (low, high) = documented_bounds(&policy, n, previous);
        prop_assert!(wait >= low && wait <= high, "{:?}: wait {wait:?} not in [{low:?}, {high:?}]", policy.get_jitter());
    }

    #[test]
    fn the_base_never_decreases(policy in policy(), n in retry_number()) {
        let next = n.saturating_add(1);
        prop_assert!(policy.base_backoff(n) <= policy.base_backoff(next));
        prop_assert!(policy.base_backoff(0) == policy.get_initial_backoff().min(policy.get_max_backoff()));
    }

    #[test]
    fn the_stepped_base_is_the_formula_s(policy in policy(), retries in 1u32..80) {
        // The loops grow the base by one product per retry (`next_base`); a
        // schedule without jitter shows each base: exactly `base_backoff(n)`.
        let policy = policy.max_retries(retries).jitter(Jitter::None);
        let waits: Vec<Duration> = policy.schedule_seeded(0).collect();
        let bases: Vec<Duration> = (0..retries).map(|n| policy.base_backoff(n)).collect();
        prop_assert_eq!(waits, bases);
    }

    #[test]
    fn a_whole_schedule_is_finite_and_capped(policy in policy(), retries in 1u32..64, seed in any::<u64>()) {
        let policy = policy.max_retries(retries);
        let waits: Vec<Duration> = policy.schedule_seeded(seed).collect();
        prop_assert_eq!(waits.len(), retries as usize);
        prop_assert!(waits.iter().all(|w| *w <= policy.get_max_backoff()));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// The loops' `u64` path draws the exact (`u128`) path's wait, for any
    /// policy, from any state a schedule reaches (the base or previous wait
    /// it carries), on the same draw.
    #[test]
    fn the_u64_path_draws_the_exact_path_s_wait(policy in policy(), retries in retry_number(), carried in prop_oneof![any::<u64>(), 0u64..10_000_000_000, Just(u64::MAX)], seed in any::<u64>()) {
        let carried = if matches!(policy.get_jitter(), Jitter::Decorrelated) {
            carried
        } else {
            // Any other jitter carries the base, which is the formula's.
            crate::schedule::jitter::saturating_nanos(policy.base_backoff(retries).as_nanos())
        };
        let state = crate::schedule::backoff::Backoff::at(retries, if retries == 0 { 0 } else { carried });
        let fast = state.next_wait(&policy, &mut SmallRng::seed_from_u64(seed));
        let exact = state.exact_next_wait(&policy, &mut SmallRng::seed_from_u64(seed));
        prop_assert_eq!(fast, exact);
    }
}

/// Real policies take the `u64` path (a test of the one above would pass
/// with the exact path alone).
#[test]
fn real_policies_take_the_u64_path() {
    use crate::schedule::backoff::Backoff;
    for jitter in [
        Jitter::Additive,
        Jitter::Full,
        Jitter::Equal,
        Jitter::Decorrelated,
        Jitter::Grpc,
        Jitter::None,
    ] {
        let policy = Policy::new().jitter(jitter);
        assert!(Backoff::at(0, 0).takes_u64_path(&policy), "{jitter:?}, first retry");
        assert!(
            Backoff::at(3, 8_000_000_000).takes_u64_path(&policy),
            "{jitter:?}, fourth retry"
        );
    }
    let beyond = Policy::new().max_backoff(Duration::MAX);
    assert!(
        !Backoff::at(0, 0).takes_u64_path(&beyond),
        "a cap past 584 years takes the exact path"
    );
}

#[crate::retry(policy = *policy, crate = "crate")]
fn always_failing_sync(policy: &Policy) -> Result<(), ()> {
    let _ = policy;
    Err(())
}

#[crate::retry(
    crate = "crate",
    policy = *policy,
    // The waits chosen are what is compared (reported before each wait), so
    // the sleep itself is a no-op: no timer is asked to reach a deadline
    // years away (tokio before 1.54.1 never reaches one on a paused clock,
    // and the dependency floors are tested on tokio 1.13).
    sleep = |_| core::future::ready(()),
    on_retry = |_, event: &crate::RetryEvent| waits.borrow_mut().push(event.wait()),
)]
async fn always_failing_async(policy: &Policy, waits: &std::cell::RefCell<Vec<Duration>>) -> Result<(), ()> {
    let _ = (policy, waits);
    Err(())
}

/// The documented range of the wait before retry `n`, given the wait taken
/// before it (`previous`: only decorrelated jitter reads it).
fn documented_bounds(policy: &Policy, n: u32, previous: Duration) -> (Duration, Duration) {
    let cap = policy.get_max_backoff();
    let initial = policy.get_initial_backoff();
    let base = policy.base_backoff(n);
    match policy.get_jitter() {
        Jitter::Additive => (base, base.saturating_add(initial).min(cap)),
        Jitter::AdditiveUpTo(amount) => (base, base.saturating_add(amount).min(cap)),
        Jitter::Full => (Duration::ZERO, base),
        Jitter::Equal => (base / 2, base),
        Jitter::Decorrelated => (initial.min(cap), previous.saturating_mul(3).max(initial).min(cap)),
        Jitter::Grpc => grpc_bounds(base, cap),
        Jitter::None => (base, base),
    }
}

/// `[min(0.8 * base, cap), min(1.2 * base, cap)]` as the nearest durations
/// inside it: the smallest duration `>= 0.8 * base` and the largest
/// `<= 1.2 * base` (exact rationals, in nanoseconds: `1.2 * base` may not
/// fit a `Duration`, so the cap is applied first).
fn grpc_bounds(base: Duration, cap: Duration) -> (Duration, Duration) {
    let (base, cap) = (base.as_nanos(), cap.as_nanos());
    let mut low = base * 4 / 5;
    if low * 5 < base * 4 {
        low += 1;
    }
    let high = (base * 6 / 5).min(cap);
    (nanos(low.min(cap)), nanos(high))
}

/// The duration of `n` nanoseconds (`n` at most a `Duration`'s).
fn nanos(n: u128) -> Duration {
    let secs = u64::try_from(n / 1_000_000_000).unwrap_or(u64::MAX);
    Duration::new(secs, (n % 1_000_000_000) as u32)
}

/// The waits of a whole failing call, checked against each mode's bounds in
/// order: decorrelated jitter against the wait actually taken before.
fn assert_documented_bounds(policy: &Policy, waits: &[Duration]) -> Result<(), TestCaseError> {
    let mut previous = policy.get_initial_backoff();
    for (n, wait) in waits.iter().copied().enumerate() {
        let (low, high) = documented_bounds(policy, n as u32, previous);
        prop_assert!(
            wait >= low && wait <= high,
            "{:?} retry {n}: wait {wait:?} not in [{low:?}, {high:?}]",
            policy.get_jitter()
        );
        previous = wait;
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// The sync loop, the async loop and `Policy::schedule` step one state
    /// machine: seeded alike, they take exactly the same waits, and every
    /// documented bound holds exactly along the way.
    #[test]
    fn the_loops_take_exactly_the_schedule_s_waits(policy in policy(), retries in 1u32..16, seed in any::<u64>()) {
        let policy = policy.max_retries(retries);
        seed_thread_rng(seed);
        let scheduled: Vec<Duration> = policy.schedule().collect();
        assert_documented_bounds(&policy, &scheduled)?;

        seed_thread_rng(seed);
        let clock = VirtualClock::install();
        prop_assert_eq!(always_failing_sync(&policy), Err(()));
        prop_assert_eq!(clock.waits(), scheduled.clone());
        drop(clock);

        let waits = std::cell::RefCell::new(Vec::new());
        let runtime = tokio::runtime::Builder::new_current_thread().enable_time().start_paused(true).build().unwrap();
        seed_thread_rng(seed);
        prop_assert_eq!(runtime.block_on(always_failing_async(&policy, &waits)), Err(()));
        prop_assert_eq!(waits.into_inner(), scheduled);
    }
}
