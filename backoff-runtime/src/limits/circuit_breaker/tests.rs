use super::*;

use proptest::prelude::*;
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;

fn ask(breaker: &CircuitBreaker<impl Fn(&CircuitTransition) + Send + Sync>, now: Instant) -> Admission {
    breaker.admit(AdmissionRequest::new(now, 1, Duration::ZERO))
}

fn end(breaker: &CircuitBreaker<impl Fn(&CircuitTransition) + Send + Sync>, now: Instant, failed: bool) {
    breaker.observed(AttemptEnd::new(now, failed));
}

/// An attempt that ended as `ending`, without an answer.
fn end_as(breaker: &CircuitBreaker<impl Fn(&CircuitTransition) + Send + Sync>, now: Instant, ending: Ending) {
    breaker.observed(AttemptEnd::new(now, false).ended(ending));
}

/// `n` attempts at `now`, each admitted and ending as `failed` says.
fn run(
    breaker: &CircuitBreaker<impl Fn(&CircuitTransition) + Send + Sync>,
    now: Instant,
    n: u32,
    failed: impl Fn(u32) -> bool,
) {
    for i in 0..n {
        assert_eq!(ask(breaker, now), Admission::Go, "attempt {i} is admitted while closed");
        end(breaker, now, failed(i));
    }
}

/// `failures` failed attempts at a fresh instant, which is returned.
fn fail_now(breaker: &CircuitBreaker<impl Fn(&CircuitTransition) + Send + Sync>, failures: u32) -> Instant {
    let now = Instant::now();
    run(breaker, now, failures, |_| true);
    now
}

/// Opens when half of the last ten outcomes failed.
fn half_of_ten() -> CircuitBreaker {
    windowed(10, 10, 0.5)
}

#[test]
fn it_opens_when_the_failure_ratio_is_reached_over_the_minimum_throughput() {
    let breaker = half_of_ten();
    let now = Instant::now();
    // Four failures in nine outcomes: under the minimum throughput.
    run(&breaker, now, 9, |i| i % 2 == 0 && i < 8);
    assert_eq!(breaker.state(), CircuitState::Closed);
    // The tenth outcome, a failure: 5 of 10.
    run(&breaker, now, 1, |_| true);
    assert_eq!(breaker.state(), CircuitState::Open);
}

#[test]
fn under_the_ratio_it_stays_closed_and_old_failures_leave_the_window() {
    let breaker = half_of_ten();
    let now = Instant::now();
    run(&breaker, now, 10, |i| i < 4);
    assert_eq!((breaker.state(), breaker.failures()), (CircuitState::Closed, (4, 10)));
    // Ten successes push the four failures out.
    run(&breaker, now, 10, |_| false);
    assert_eq!(breaker.failures(), (0, 10));
    // Four new failures: 4 of 10 again, still closed.
    run(&breaker, now, 4, |_| true);
    assert_eq!((breaker.state(), breaker.failures()), (CircuitState::Closed, (4, 10)));
}

#[test]
fn it_opens_after_consecutive_failures_whatever_the_ratio() {
    let breaker = CircuitBreaker::new().consecutive_failures(3);
    let now = fail_now(&breaker, 2);
    run(&breaker, now, 1, |_| false);
    run(&breaker, now, 2, |_| true);
    assert_eq!(breaker.state(), CircuitState::Closed, "a success broke the streak");
    run(&breaker, now, 1, |_| true);
    assert_eq!(breaker.state(), CircuitState::Open);
}

#[test]
fn open_it_refuses_with_the_time_left_then_lets_one_probe_through() {
    let breaker = CircuitBreaker::new()
        .consecutive_failures(1)
        .break_duration(Duration::from_secs(5));
    let start = fail_now(&breaker, 1);
    assert_eq!(
        ask(&breaker, start + Duration::from_secs(2)),
        Admission::Shut(Shut::circuit_open(Some(Duration::from_secs(3))))
    );
    let after = start + Duration::from_secs(5);
    assert_eq!(ask(&breaker, after), Admission::Go, "the break is over: a probe goes");
    assert_eq!(breaker.state(), CircuitState::HalfOpen);
    assert_refused_while_probing(&breaker, after, "the rest are refused while the probe runs");
}

#[test]
fn a_probe_that_succeeds_closes_it_with_an_empty_window() {
    let breaker = CircuitBreaker::new().consecutive_failures(2).probes(2);
    let start = fail_now(&breaker, 2);
    let after = start + breaker.get_break_duration();
    assert_eq!(
        (ask(&breaker, after), ask(&breaker, after)),
        (Admission::Go, Admission::Go)
    );
    end(&breaker, after, false);
    assert_eq!(breaker.state(), CircuitState::HalfOpen, "one of two probes passed");
    end(&breaker, after, false);
    assert_eq!(breaker.state(), CircuitState::Closed);
    assert_eq!(breaker.failures(), (0, 0));
    // A failure after closing starts a new streak.
    run(&breaker, after, 1, |_| true);
    assert_eq!(breaker.state(), CircuitState::Closed);
}

#[test]
fn a_probe_that_fails_opens_it_again_for_a_whole_break() {
    let breaker = CircuitBreaker::new().consecutive_failures(1);
    let start = fail_now(&breaker, 1);
    let after = start + Duration::from_secs(7);
    assert_eq!(ask(&breaker, after), Admission::Go);
    end(&breaker, after, true);
    assert_eq!(breaker.state(), CircuitState::Open);
    assert_eq!(
        ask(&breaker, after + Duration::from_secs(1)),
        Admission::Shut(Shut::circuit_open(Some(Duration::from_secs(4))))
    );
}

#[test]
fn outcomes_that_end_while_it_is_open_are_not_counted() {
    let breaker = CircuitBreaker::new().consecutive_failures(1).probes(1);
    let start = fail_now(&breaker, 1);
    // A slow attempt admitted before the circuit opened ends now.
    end(&breaker, start, false);
    assert_eq!(breaker.state(), CircuitState::Open);
}

static CHANGES: AtomicUsize = AtomicUsize::new(0);
static LAST: Mutex<Vec<(CircuitState, CircuitState)>> = Mutex::new(Vec::new());

fn record(change: &CircuitTransition) {
    CHANGES.fetch_add(1, Ordering::Relaxed);
    LAST.lock().unwrap().push((change.from(), change.to()));
    assert_eq!(change.breaker(), Some("hooked"));
}

#[test]
fn every_change_of_state_reaches_the_hook() {
    let breaker = CircuitBreaker::new()
        .consecutive_failures(1)
        .name("hooked")
        .on_transition(record);
    let start = fail_now(&breaker, 1);
    let after = start + breaker.get_break_duration();
    assert_eq!(ask(&breaker, after), Admission::Go);
    end(&breaker, after, false);
    assert_eq!(CHANGES.load(Ordering::Relaxed), 3);
    assert_eq!(
        *LAST.lock().unwrap(),
        [
            (CircuitState::Closed, CircuitState::Open),
            (CircuitState::Open, CircuitState::HalfOpen),
            (CircuitState::HalfOpen, CircuitState::Closed),
        ]
    );
}

#[test]
fn the_builders_clamp_what_makes_no_sense() {
    let breaker = CircuitBreaker::new()
        .window(0)
        .failure_ratio(2.0)
        .probes(0)
        .consecutive_failures(0);
    assert_eq!(
        (
            breaker.get_window(),
            breaker.get_failure_ratio(),
            breaker.get_probes(),
            breaker.get_consecutive_failures()
        ),
        (1, 1.0, 1, Some(1))
    );
    assert_eq!(CircuitBreaker::new().window(10_000).get_window(), MAX_WINDOW);
}

#[test]
fn a_full_window_of_successes_is_left_alone_and_a_failure_still_counts() {
    let breaker = windowed(4, 4, 0.5);
    let now = Instant::now();
    run(&breaker, now, 6, |_| false);
    assert_eq!(breaker.failures(), (0, 4));
    run(&breaker, now, 1, |_| true);
    assert_eq!(breaker.failures(), (1, 4));
    run(&breaker, now, 1, |_| true);
    assert_eq!(breaker.state(), CircuitState::Open, "2 of the last 4");
}

#[test]
fn threads_counting_at_once_lose_no_failure() {
    let breaker = windowed(MAX_WINDOW, MAX_WINDOW, 1.0);
    let now = Instant::now();
    std::thread::scope(|scope| {
        for _ in 0..4 {
            scope.spawn(|| {
                for _ in 0..32 {
                    end(&breaker, now, true);
                    end(&breaker, now, false);
                }
            });
        }
    });
    assert_eq!(breaker.failures(), (128, 256));
    assert_eq!(breaker.state(), CircuitState::Closed);
}

#[test]
fn the_getters_read_what_the_builders_set() {
    let breaker = CircuitBreaker::new()
        .failure_ratio(0.25)
        .window(20)
        .minimum_throughput(7)
        .consecutive_failures(4)
        .break_duration(Duration::from_secs(9))
        .probes(3)
        .name("set");
    assert_eq!(
        (
            breaker.get_failure_ratio(),
            breaker.get_window(),
            breaker.get_minimum_throughput(),
            breaker.get_consecutive_failures(),
            breaker.get_break_duration(),
            breaker.get_probes(),
            breaker.get_name(),
            AdmissionLimit::name(&breaker),
        ),
        (
            0.25,
            20,
            7,
            Some(4),
            Duration::from_secs(9),
            3,
            Some("set"),
            Some("set")
        )
    );
    let debug = format!("{breaker:?}");
    assert!(debug.starts_with("CircuitBreaker { state: Closed"), "{debug}");
    assert_eq!(CircuitState::Open.to_string(), "open");
    assert_eq!(CircuitBreaker::default().get_window(), 100);
}

#[test]
fn a_ratio_is_held_as_the_fraction_it_stands_for() {
    let fraction = |ratio: f64| {
        let Fraction { numerator, denominator } = Fraction::of(ratio);
        (numerator, denominator)
    };
    assert_eq!(fraction(0.0), (0, 1));
    assert_eq!(fraction(1.0), (1, 1));
    assert_eq!(fraction(0.5), (1, 2));
    assert_eq!(fraction(0.07), (7, 100));
    assert_eq!(fraction(0.14), (7, 50));
    assert_eq!(fraction(0.28), (7, 25));
    assert_eq!(fraction(0.55), (11, 20));
    assert_eq!(fraction(0.56), (14, 25));
    assert_eq!(fraction(0.333), (333, 1000));
    assert_eq!(fraction(0.999), (999, 1000));
    assert_eq!(fraction(0.1234), (617, 5000), "four decimals are exact");
    // More decimals: a simpler fraction within 10^-9.
    let (numerator, denominator) = fraction(0.123_456_789);
    assert!((f64::from(numerator) / f64::from(denominator) - 0.123_456_789).abs() <= 1e-9);
    assert!(denominator < 1_000_000_000);
    assert_eq!(fraction(1.0 / 3.0), (1, 3));
    assert_eq!(fraction(2.0 / 3.0), (2, 3));
    assert_eq!(fraction(1.0 / 7.0), (1, 7));
    assert_eq!(fraction(255.0 / 256.0), (255, 256));
    // Within the tolerance of 0: 0.
    assert_eq!(fraction(1e-12), (0, 1));
    assert_eq!(fraction(0.5 + 1e-12), (1, 2));
    // Just out of it: the nearest fraction that close.
    assert_eq!(fraction(2e-9), (1, 500_000_000));
}

#[test]
fn it_opens_at_exactly_the_ratio_where_floats_miss_it() {
    // 0.07 * 100 is 7.000000000000001 in floats: 7 failures did not open it.
    for (ratio, failures, window) in [
        (0.07, 7, 100),
        (0.14, 14, 100),
        (0.28, 28, 100),
        (0.55, 55, 100),
        (0.56, 28, 50),
    ] {
        let breaker = windowed(window, window, ratio);
        let now = Instant::now();
        run(&breaker, now, window - 1, |i| i < failures - 1);
        assert_eq!(breaker.state(), CircuitState::Closed, "{ratio}: one short");
        run(&breaker, now, 1, |_| true);
        assert_eq!(breaker.state(), CircuitState::Open, "{ratio}: {failures} of {window}");
    }
    // 2 of 3 at 2/3, which the floats met.
    let breaker = windowed(3, 3, 2.0 / 3.0);
    run(&breaker, Instant::now(), 3, |i| i > 0);
    assert_eq!(breaker.state(), CircuitState::Open);
    // One failure fewer than the ratio: closed.
    let breaker = windowed(100, 100, 0.07);
    run(&breaker, Instant::now(), 100, |i| i < 6);
    assert_eq!((breaker.state(), breaker.failures()), (CircuitState::Closed, (6, 100)));
}

#[test]
fn a_success_that_completes_the_minimum_over_the_ratio_opens_it() {
    // F, F, F, S, S at 0.5 with a minimum of 5: 3 of 5 at the fifth.
    let breaker = windowed(10, 5, 0.5);
    let now = Instant::now();
    run(&breaker, now, 4, |i| i < 3);
    assert_eq!(breaker.state(), CircuitState::Closed, "4 known, under the minimum");
    run(&breaker, now, 1, |_| false);
    assert_eq!(
        breaker.state(),
        CircuitState::Open,
        "the fifth outcome completes the minimum"
    );
    assert!(
        matches!(ask(&breaker, now), Admission::Shut(_)),
        "the sixth call is refused"
    );
}

#[test]
fn a_success_that_completes_the_minimum_under_the_ratio_leaves_it_closed() {
    // 2 of 5 at 0.5.
    let breaker = windowed(10, 5, 0.5);
    let now = Instant::now();
    run(&breaker, now, 5, |i| i < 2);
    assert_eq!((breaker.state(), breaker.failures()), (CircuitState::Closed, (2, 5)));
    // Past the minimum, a success does not open it whatever came before.
    let breaker = windowed(10, 2, 0.5);
    run(&breaker, now, 2, |i| i == 1);
    assert_eq!(
        breaker.state(),
        CircuitState::Open,
        "1 of 2, the failure completes the minimum"
    );
}

#[test]
fn with_a_ratio_of_zero_only_a_failure_opens_it() {
    let breaker = windowed(4, 4, 0.0);
    let now = Instant::now();
    run(&breaker, now, 6, |_| false);
    assert_eq!((breaker.state(), breaker.failures()), (CircuitState::Closed, (0, 4)));
    run(&breaker, now, 1, |_| true);
    assert_eq!(breaker.state(), CircuitState::Open, "1 of 4 reaches 0");
}

#[test]
fn a_minimum_above_the_window_is_the_window() {
    let breaker = windowed(4, 1_000, 0.5);
    let now = Instant::now();
    run(&breaker, now, 3, |i| i < 2);
    assert_eq!(breaker.state(), CircuitState::Closed);
    run(&breaker, now, 1, |_| false);
    assert_eq!(breaker.state(), CircuitState::Open, "2 of 4, the window full");
}

#[test]
fn a_nan_ratio_is_one() {
    let breaker = windowed(2, 2, f64::NAN);
    assert_eq!(breaker.get_failure_ratio(), 1.0);
    let now = Instant::now();
    run(&breaker, now, 2, |i| i == 1);
    assert_eq!(breaker.state(), CircuitState::Closed, "1 of 2");
    run(&breaker, now, 1, |_| true);
    assert_eq!(breaker.state(), CircuitState::Open, "2 of 2");
}

/// The model: after each outcome, whether the last `window` outcomes (at
/// least `minimum` of them, at least one failure) reach `numerator /
/// denominator`, in exact integers.
fn model_opens_at(outcomes: &[bool], window: usize, minimum: usize, numerator: u64, denominator: u64) -> Option<usize> {
    (0..outcomes.len()).find(|&i| {
        let held = &outcomes[(i + 1).saturating_sub(window)..=i];
        let known = held.len() as u64;
        let failures = held.iter().filter(|&&failed| failed).count() as u64;
        held.len() >= minimum.min(window) && failures > 0 && failures * denominator >= numerator * known
    })
}

/// A ratio in thousandths and a window that a whole count of failures
/// meets exactly: j/d of a window of c·d, d dividing 1000.
fn exact_boundaries() -> impl Strategy<Value = (u64, usize)> {
    prop::sample::select(&[1_u64, 2, 4, 5, 8, 10, 20, 25, 40, 50, 100, 125, 200, 250][..]).prop_flat_map(|d| {
        (0..=d, 1..=u64::from(MAX_WINDOW) / d).prop_map(move |(j, c)| (1000 * j / d, (c * d) as usize))
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// Ratios of two and three decimals, as a user writes them
    /// (`n as f64 / 1000.0` is the float nearest n/1000, as the literal
    /// is), over windows up to the largest.
    #[test]
    fn it_opens_exactly_when_the_failures_reach_the_ratio_as_exact_fractions(
        thousandths in prop_oneof![(0u64..=100).prop_map(|n| n * 10), 0u64..=1000],
        window in 1usize..=MAX_WINDOW as usize,
        minimum_share in 0.0f64..=1.2,
        outcomes in proptest::collection::vec(any::<bool>(), 1..600),
        failure_weight in 0.0f64..1.0,
    ) {
        // Skew some runs toward failures so that high ratios open too.
        let outcomes: Vec<bool> = outcomes
            .iter()
            .enumerate()
            .map(|(i, &failed)| failed || (i as f64 * 0.618_034).fract() < failure_weight)
            .collect();
        let minimum = (window as f64 * minimum_share) as usize;
        let expected = model_opens_at(&outcomes, window, minimum, thousandths, 1000);
        let (opened, admitted_all) = run_until_open(&outcomes, window, minimum, thousandths);
        prop_assert!(admitted_all, "a closed breaker admits every attempt");
        prop_assert_eq!(opened, expected);
    }

    /// A window full of successes, then failures one at a time: each
    /// count of failures is met at a full window, so every ratio that a
    /// whole count of the window meets exactly is met at its boundary.
    #[test]
    fn failures_one_at_a_time_open_it_at_the_first_count_that_reaches_the_ratio(
        (thousandths, window) in exact_boundaries(),
        successes in 0usize..=MAX_WINDOW as usize,
    ) {
        let outcomes: Vec<bool> = (0..successes + window).map(|i| i >= successes).collect();
        let expected = model_opens_at(&outcomes, window, window, thousandths, 1000);
        prop_assert_eq!(run_until_open(&outcomes, window, window, thousandths).0, expected);
    }
}

/// A breaker of `window` outcomes, `minimum` of them known, opening at
/// `ratio`.
fn windowed(window: u32, minimum: u32, ratio: f64) -> CircuitBreaker {
    CircuitBreaker::new()
        .window(window)
        .minimum_throughput(minimum)
        .failure_ratio(ratio)
}

/// `breaker`, half-open with one probe place left, lets one probe go at
/// `at` (`why` says why), refuses the next, and closes when it succeeds.
#[track_caller]
fn last_probe_closes_it(breaker: &CircuitBreaker<impl Fn(&CircuitTransition) + Send + Sync>, at: Instant, why: &str) {
    assert_eq!(ask(breaker, at), Admission::Go, "{why}");
    assert_refused_while_probing(breaker, at, "while the probe runs");
    end(breaker, at, false);
    assert_eq!(breaker.state(), CircuitState::Closed);
}

/// `breaker`, half-open, refuses another attempt at `at` while its
/// probes run (`why` says where).
#[track_caller]
fn assert_refused_while_probing(
    breaker: &CircuitBreaker<impl Fn(&CircuitTransition) + Send + Sync>,
    at: Instant,
    why: &str,
) {
    assert_eq!(ask(breaker, at), Admission::Shut(Shut::circuit_open(None)), "{why}");
}

/// Runs `outcomes` (`true`: a failure) through a breaker of `window`,
/// `minimum` and a ratio of `thousandths` / 1000, each attempt asked first:
/// the outcome at which it opened, and whether every question was `Go`.
fn run_until_open(outcomes: &[bool], window: usize, minimum: usize, thousandths: u64) -> (Option<usize>, bool) {
    let breaker = windowed(window as u32, minimum as u32, thousandths as f64 / 1000.0);
    let now = Instant::now();
    let mut admitted_all = true;
    for (i, &failed) in outcomes.iter().enumerate() {
        admitted_all &= ask(&breaker, now) == Admission::Go;
        end(&breaker, now, failed);
        if breaker.state() == CircuitState::Open {
            return (Some(i), admitted_all);
        }
    }
    (None, admitted_all)
}

/// A capturing closure that counts the transitions it hears (each a
/// change of state), and its count.
fn counting_hook() -> (Arc<AtomicU32>, impl Fn(&CircuitTransition) + Send + Sync + 'static) {
    let heard = Arc::new(AtomicU32::new(0));
    let counter = Arc::clone(&heard);
    let hook = move |change: &CircuitTransition| {
        assert_ne!(change.from(), change.to());
        counter.fetch_add(1, Ordering::Relaxed);
    };
    (heard, hook)
}

#[test]
fn a_capturing_closure_hears_every_transition() {
    let (heard, hook) = counting_hook();
    let breaker = CircuitBreaker::new().consecutive_failures(1).on_transition(hook);
    let start = fail_now(&breaker, 1);
    assert_eq!(heard.load(Ordering::Relaxed), 1, "closed to open");
    let after = start + breaker.get_break_duration();
    assert_eq!(ask(&breaker, after), Admission::Go);
    end(&breaker, after, false);
    assert_eq!(heard.load(Ordering::Relaxed), 3, "to half-open, then to closed");
    assert!(format!("{breaker:?}").contains("on_transition: true"));
}

static FN_HOOK_CALLS: AtomicUsize = AtomicUsize::new(0);

fn count_fn_hook(_: &CircuitTransition) {
    FN_HOOK_CALLS.fetch_add(1, Ordering::Relaxed);
}

#[test]
fn the_hook_set_last_is_the_one_heard() {
    let closure_calls = Arc::new(AtomicU32::new(0));
    // A `fn` after a closure that captures nothing: the `fn`.
    let breaker = CircuitBreaker::new()
        .consecutive_failures(1)
        .on_transition(|_: &CircuitTransition| panic!("a hook set before is not heard"))
        .on_transition(count_fn_hook);
    fail_now(&breaker, 1);
    assert_eq!(FN_HOOK_CALLS.load(Ordering::Relaxed), 1);
    // A closure after a `fn`: the closure.
    let counter = Arc::clone(&closure_calls);
    let breaker = CircuitBreaker::new()
        .consecutive_failures(1)
        .on_transition(count_fn_hook)
        .on_transition(move |_| {
            counter.fetch_add(1, Ordering::Relaxed);
        });
    fail_now(&breaker, 1);
    assert_eq!(
        (
            FN_HOOK_CALLS.load(Ordering::Relaxed),
            closure_calls.load(Ordering::Relaxed)
        ),
        (1, 1)
    );
}

/// A breaker whose break is over at the returned instant, `probes` probes.
fn half_open(probes: u32) -> (CircuitBreaker, Instant) {
    let breaker = CircuitBreaker::new().consecutive_failures(1).probes(probes);
    let start = fail_now(&breaker, 1);
    (breaker, start + Duration::from_secs(5))
}

#[test]
fn an_abandoned_probe_frees_its_place_for_the_next_caller() {
    let (breaker, after) = half_open(1);
    assert_eq!(ask(&breaker, after), Admission::Go);
    assert_eq!(ask(&breaker, after), Admission::Shut(Shut::circuit_open(None)));
    end_as(&breaker, after, Ending::Abandoned);
    assert_eq!(
        breaker.state(),
        CircuitState::HalfOpen,
        "nothing is known of the backend"
    );
    last_probe_closes_it(&breaker, after, "the next caller probes");
}

#[test]
fn an_abandoned_probe_of_two_leaves_one_more_to_send() {
    let (breaker, after) = half_open(2);
    assert_eq!(
        (ask(&breaker, after), ask(&breaker, after)),
        (Admission::Go, Admission::Go)
    );
    end_as(&breaker, after, Ending::Abandoned);
    end(&breaker, after, false);
    assert_eq!(breaker.state(), CircuitState::HalfOpen, "one of two probes passed");
    last_probe_closes_it(&breaker, after, "one more probe");
}

#[test]
fn abandoned_ends_never_free_more_places_than_were_taken() {
    let (breaker, after) = half_open(1);
    // An attempt admitted while closed, abandoned now: nothing to free.
    end_as(&breaker, after, Ending::Abandoned);
    assert_eq!(ask(&breaker, after), Admission::Go);
    end_as(&breaker, after, Ending::Abandoned);
    end_as(&breaker, after, Ending::Abandoned);
    assert_eq!(ask(&breaker, after), Admission::Go);
    assert_refused_while_probing(&breaker, after, "one probe at a time");
}

#[test]
fn a_panicked_probe_opens_it_again() {
    let (breaker, after) = half_open(2);
    assert_eq!(ask(&breaker, after), Admission::Go);
    end_as(&breaker, after, Ending::Panicked);
    assert_eq!(breaker.state(), CircuitState::Open);
    assert_eq!(
        ask(&breaker, after),
        Admission::Shut(Shut::circuit_open(Some(Duration::from_secs(5))))
    );
}

#[test]
fn a_panic_while_closed_is_a_failure() {
    let breaker = CircuitBreaker::new().consecutive_failures(1);
    let now = Instant::now();
    assert_eq!(ask(&breaker, now), Admission::Go);
    end_as(&breaker, now, Ending::Panicked);
    assert_eq!(breaker.state(), CircuitState::Open);
    // In the window too, over a full window of successes.
    let breaker = windowed(2, 2, 0.5);
    run(&breaker, now, 4, |_| false);
    end_as(&breaker, now, Ending::Panicked);
    assert_eq!(breaker.state(), CircuitState::Open, "1 of 2");
}

#[test]
fn an_abandoned_attempt_while_closed_counts_nothing() {
    let breaker = windowed(2, 2, 0.5);
    let now = Instant::now();
    run(&breaker, now, 1, |_| true);
    end_as(&breaker, now, Ending::Abandoned);
    assert_eq!((breaker.state(), breaker.failures()), (CircuitState::Closed, (1, 1)));
    let breaker = CircuitBreaker::new().consecutive_failures(2);
    run(&breaker, now, 1, |_| true);
    end_as(&breaker, now, Ending::Abandoned);
    assert_eq!(breaker.failures(), (1, 1), "the streak goes on");
    run(&breaker, now, 1, |_| true);
    assert_eq!(breaker.state(), CircuitState::Open);
}

#[test]
fn ends_while_open_change_nothing() {
    let breaker = CircuitBreaker::new().consecutive_failures(1).probes(1);
    let start = fail_now(&breaker, 1);
    for ending in [Ending::Abandoned, Ending::Panicked] {
        end_as(&breaker, start, ending);
    }
    assert_eq!(
        ask(&breaker, start),
        Admission::Shut(Shut::circuit_open(Some(Duration::from_secs(5))))
    );
    let after = start + Duration::from_secs(5);
    assert_eq!(ask(&breaker, after), Admission::Go);
    assert_eq!(ask(&breaker, after), Admission::Shut(Shut::circuit_open(None)));
}
