//! SRE's rule, the window that forgets, and the draws.

use super::*;

#[test]
fn the_rule_is_zero_while_the_backend_accepts_k_times_fewer() {
    assert_eq!(rejection_probability(0, 0, 2.0), 0.0);
    assert_eq!(rejection_probability(100, 100, 2.0), 0.0);
    assert_eq!(rejection_probability(100, 50, 2.0), 0.0);
    // 100 requests, 10 accepts: (100 - 20) / 101.
    assert!((rejection_probability(100, 10, 2.0) - 80.0 / 101.0).abs() < 1e-12);
    // Nothing accepted: almost everything refused.
    assert!((rejection_probability(1000, 0, 2.0) - 1000.0 / 1001.0).abs() < 1e-12);
    assert!((rejection_probability(100, 10, 1.5) - 85.0 / 101.0).abs() < 1e-12);
}

#[test]
fn nothing_is_refused_when_the_backend_accepts_everything() {
    let throttle = AdaptiveThrottle::new();
    let start = Instant::now();
    for i in 0..10_000_u64 {
        let now = start + Duration::from_millis(i);
        // The lowest draw: refused whenever the probability is above 0.
        assert_eq!(throttle.admit_drawing(now, 0.0), Admission::Go);
        throttle.observed(AttemptEnd::new(now, false));
    }
}

/// `answers` answers at `now`, the first `accepted` of them accepts.
fn answer(throttle: &AdaptiveThrottle, now: Instant, answers: u32, accepted: u32) {
    for i in 0..answers {
        throttle.observed(AttemptEnd::new(now, i >= accepted));
    }
}

#[test]
fn a_rejecting_backend_is_shed_with_the_rules_probability() {
    let throttle = AdaptiveThrottle::new();
    let now = Instant::now();
    answer(&throttle, now, 100, 10);
    let p = 80.0 / 101.0;
    assert!((throttle.rejection_probability(now) - p).abs() < 1e-12);
    assert_eq!(throttle.admit_drawing(now, p - 1e-9), Admission::Refuse);
    // The refused attempt counted as a request.
    assert_eq!(throttle.counts(now), (101, 10));
    assert_eq!(throttle.admit_drawing(now, 0.99), Admission::Go);
    // One let through counts when its answer comes.
    assert_eq!(throttle.counts(now), (101, 10));
    throttle.observed(AttemptEnd::new(now, false));
    assert_eq!(throttle.counts(now), (102, 11));
}

#[test]
fn attempts_in_flight_never_shed_a_healthy_backend() {
    // Many attempts let through before any answer: nothing counted yet,
    // nothing refused (counting them when sent would refuse half of the
    // second attempt's draws).
    let throttle = AdaptiveThrottle::new();
    let now = Instant::now();
    for _ in 0..100 {
        assert_eq!(throttle.admit_drawing(now, 0.0), Admission::Go);
    }
    answer(&throttle, now, 100, 100);
    assert_eq!(throttle.admit_drawing(now, 0.0), Admission::Go);
}

#[test]
fn throttled_answers_are_not_accepts() {
    let throttle = AdaptiveThrottle::new();
    let now = Instant::now();
    assert_eq!(throttle.admit_drawing(now, 0.5), Admission::Go);
    throttle.observed(AttemptEnd::new(now, true));
    assert_eq!(throttle.counts(now), (1, 0));
}

#[test]
fn the_window_forgets_an_old_overload() {
    let throttle = AdaptiveThrottle::new().window(Duration::from_secs(10));
    let start = Instant::now();
    answer(&throttle, start, 1000, 0);
    assert!(throttle.rejection_probability(start) > 0.99);
    // Half a window on, the overload still counts.
    assert!(throttle.rejection_probability(start + Duration::from_secs(5)) > 0.99);
    // A whole window on, it is forgotten: a new overload starts from zero.
    let later = start + Duration::from_secs(10);
    assert_eq!(throttle.counts(later), (0, 0));
    assert_eq!(throttle.admit_drawing(later, 0.0), Admission::Go);
}

#[test]
fn counts_drop_out_a_tenth_of_the_window_at_a_time() {
    let throttle = AdaptiveThrottle::new().window(Duration::from_secs(10));
    let start = Instant::now();
    for second in 0..10_u64 {
        throttle.observed(AttemptEnd::new(start + Duration::from_secs(second), true));
    }
    assert_eq!(throttle.counts(start + Duration::from_secs(9)).0, 10);
    assert_eq!(throttle.counts(start + Duration::from_secs(12)).0, 7);
    // A late event (an instant whose slot moved on) is not counted in the newer tenth.
    throttle.observed(AttemptEnd::new(start + Duration::from_secs(2), true));
    assert_eq!(throttle.counts(start + Duration::from_secs(12)).0, 7);
}

#[test]
fn the_draws_refuse_about_the_rules_share() {
    crate::schedule::rng::seed_thread(7);
    let throttle = AdaptiveThrottle::new();
    let now = Instant::now();
    answer(&throttle, now, 1000, 100);
    let mut refused = 0;
    let asked = 2000;
    for _ in 0..asked {
        if throttle.admit(AdmissionRequest::new(now, 1, Duration::ZERO)) == Admission::Refuse {
            refused += 1;
        }
    }
    // The probability climbs from 800/1001 towards 1 as refusals count as
    // requests: between the two, never all, never none.
    let share = f64::from(refused) / f64::from(asked);
    assert!(share > 0.8 && share < 0.97, "refused {share}");
}

#[test]
fn the_getters_read_what_was_set() {
    let throttle = AdaptiveThrottle::new()
        .k(1.5)
        .window(Duration::from_secs(30))
        .name("db");
    assert_eq!(
        (throttle.get_k(), throttle.get_window(), AdmissionLimit::name(&throttle)),
        (1.5, Duration::from_secs(30), Some("db"))
    );
}
