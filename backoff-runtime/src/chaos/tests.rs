use super::*;

use std::sync::atomic::{AtomicU64, Ordering};

/// A source that draws the values it is given, in turn, and counts its
/// draws.
struct Scripted {
    draws: &'static [u64],
    next: AtomicU64,
}

impl Scripted {
    const fn new(draws: &'static [u64]) -> Self {
        Scripted {
            draws,
            next: AtomicU64::new(0),
        }
    }

    fn drawn(&self) -> u64 {
        self.next.load(Ordering::Relaxed)
    }
}

impl ChaosRandom for Scripted {
    fn next_u64(&self) -> u64 {
        let at = self.next.fetch_add(1, Ordering::Relaxed) as usize;
        self.draws[at % self.draws.len()]
    }
}

/// The draw that [`rng::unit`] maps to `u`.
const fn draw_of(u: f64) -> u64 {
    ((u * (1_u64 << 53) as f64) as u64) << 11
}

#[test]
fn stacked_kinds_take_the_draw_in_the_order_fault_outcome_latency() {
    static DRAWS: Scripted = Scripted::new(&[draw_of(0.05), draw_of(0.15), draw_of(0.25), draw_of(0.35)]);
    static STACKED: Injector<u8, &str> = Injector::new()
        .latency(Rate::new(0.1), Duration::from_secs(1))
        .outcome(Rate::new(0.1), || 7)
        .fault(Rate::new(0.1), || "fault")
        .random(&DRAWS);
    let seen: Vec<_> = (0..4).map(|_| STACKED.inject()).collect();
    assert_eq!(
        seen,
        [
            Injection::Fault("fault"),
            Injection::Outcome(7),
            Injection::Latency(Duration::from_secs(1)),
            Injection::Pass
        ]
    );
    assert_eq!(DRAWS.drawn(), 4, "one draw per call");
}

#[test]
fn rates_that_sum_past_one_leave_the_last_kinds_short() {
    static DRAWS: Scripted = Scripted::new(&[draw_of(0.5), draw_of(0.95)]);
    static CROWDED: Injector<u8, &str> = Injector::new()
        .fault(Rate::new(0.9), || "fault")
        .latency(Rate::new(0.9), Duration::from_secs(1))
        .random(&DRAWS);
    assert!(CROWDED.inject().is_fault());
    assert_eq!(CROWDED.inject(), Injection::Latency(Duration::from_secs(1)));
}

#[test]
fn a_closed_gate_draws_nothing() {
    static DRAWS: Scripted = Scripted::new(&[0]);
    static CLOSED: Injector<(), ()> = Injector::new()
        .fault(Rate::new(1.0), || ())
        .enabled_when(|| false)
        .random(&DRAWS);
    assert_eq!(CLOSED.inject(), Injection::Pass);
    assert_eq!(DRAWS.drawn(), 0);
}

#[test]
fn an_open_gate_draws_once_even_at_rate_zero() {
    static DRAWS: Scripted = Scripted::new(&[0]);
    static IDLE: Injector<(), ()> = Injector::new().fault(Rate::new(0.0), || ()).random(&DRAWS);
    assert_eq!(IDLE.inject(), Injection::Pass);
    assert_eq!(DRAWS.drawn(), 1, "a run replays by its seed whatever the rate does");
}

#[test]
fn a_per_call_rate_is_read_and_clamped_at_each_call() {
    static RATE: AtomicU64 = AtomicU64::new(0);
    static DRAWS: Scripted = Scripted::new(&[draw_of(0.5)]);
    static DIAL: Injector<(), ()> = Injector::new()
        .fault(Rate::per_call(|| f64::from_bits(RATE.load(Ordering::Relaxed))), || ())
        .random(&DRAWS);
    RATE.store(0.4_f64.to_bits(), Ordering::Relaxed);
    assert!(!DIAL.inject().is_injected());
    RATE.store(0.6_f64.to_bits(), Ordering::Relaxed);
    assert!(DIAL.inject().is_fault());
    RATE.store(7.0_f64.to_bits(), Ordering::Relaxed);
    assert!(DIAL.inject().is_fault());
}

#[test]
fn rates_are_clamped() {
    assert_eq!(Rate::new(-0.5).get(), 0.0);
    assert_eq!(Rate::new(2.0).get(), 1.0);
    assert_eq!(Rate::new(f64::NAN).get(), 0.0);
    assert_eq!(Rate::new(0.25).get(), 0.25);
}

#[test]
fn the_environment_gate_reads_the_variable() {
    // The test cannot set a variable (that is unsafe); PATH is set and not
    // an "off" word wherever cargo runs.
    static SET: Injector<(), ()> = Injector::new().fault(Rate::new(1.0), || ()).enabled_by_env("PATH");
    static UNSET: Injector<(), ()> = Injector::new()
        .fault(Rate::new(1.0), || ())
        .enabled_by_env("BACKOFF_CHAOS_NEVER_SET_ANYWHERE");
    assert!(SET.inject().is_fault());
    assert!(!UNSET.inject().is_injected());
    for off in ["", "0", "false", "No", "OFF", " off "] {
        assert!(!env_says_on_value(off), "{off:?}");
    }
    for on in ["1", "true", "yes", "on", "anything"] {
        assert!(env_says_on_value(on), "{on:?}");
    }
}

#[test]
fn the_same_seed_injects_into_the_same_calls() {
    let injected = |seed| {
        let injector: Injector<(), ()> = Injector::new().fault(Rate::new(0.3), || ()).seed(seed);
        (0..200).map(|_| injector.inject().is_fault()).collect::<Vec<_>>()
    };
    assert_eq!(injected(9), injected(9));
    assert_ne!(injected(9), injected(10));
}

#[test]
fn the_thread_source_follows_the_thread_seed() {
    let injected = || {
        let injector: Injector<(), ()> = Injector::new().fault(Rate::new(0.5), || ());
        (0..64).map(|_| injector.inject().is_fault()).collect::<Vec<_>>()
    };
    crate::testing::seed_thread_rng(5);
    let first = injected();
    crate::testing::seed_thread_rng(5);
    assert_eq!(injected(), first);
}

#[test]
fn latency_in_a_sync_attempt_waits_on_the_virtual_clock() {
    static SLOW: Injector<u8, ()> = Injector::new().latency(Rate::new(1.0), Duration::from_secs(30));
    let clock = crate::testing::VirtualClock::install();
    assert_eq!(SLOW.blocking(|| Ok(1)), Ok(1));
    assert_eq!(clock.waits(), [Duration::from_secs(30)]);
}

#[test]
fn an_injected_result_never_runs_the_attempt() {
    static FAKE: Injector<u8, ()> = Injector::new().outcome(Rate::new(1.0), || 2);
    let mut ran = false;
    assert_eq!(
        FAKE.blocking(|| {
            ran = true;
            Ok(1)
        }),
        Ok(2)
    );
    assert!(!ran);
}
