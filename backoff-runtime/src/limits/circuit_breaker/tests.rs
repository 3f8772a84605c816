use super::*;

use std::sync::atomic::AtomicUsize;

fn ask(breaker: &CircuitBreaker, now: Instant) -> Admission {
    breaker.admit(AdmissionRequest::new(now, 1, Duration::ZERO))
}

fn end(breaker: &CircuitBreaker, now: Instant, failed: bool) {
    breaker.observed(AttemptEnd::new(now, failed));
}

/// `n` attempts at `now`, each admitted and ending as `failed` says.
fn run(breaker: &CircuitBreaker, now: Instant, n: u32, failed: impl Fn(u32) -> bool) {
    for i in 0..n {
        assert_eq!(ask(breaker, now), Admission::Go, "attempt {i} is admitted while closed");
        end(breaker, now, failed(i));
    }
}

/// `failures` failed attempts at a fresh instant, which is returned.
fn fail_now(breaker: &CircuitBreaker, failures: u32) -> Instant {
    let now = Instant::now();
    run(breaker, now, failures, |_| true);
    now
}

/// Opens when half of the last ten outcomes failed.
fn half_of_ten() -> CircuitBreaker {
    CircuitBreaker::new()
        .window(10)
        .minimum_throughput(10)
        .failure_ratio(0.5)
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
    assert_eq!(
        ask(&breaker, after),
        Admission::Shut(Shut::circuit_open(None)),
        "the rest are refused while the probe runs"
    );
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
    let breaker = CircuitBreaker::new().window(4).minimum_throughput(4).failure_ratio(0.5);
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
    let breaker = CircuitBreaker::new()
        .window(MAX_WINDOW)
        .minimum_throughput(MAX_WINDOW)
        .failure_ratio(1.0);
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
