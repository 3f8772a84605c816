use super::*;

#[test]
fn defaults_are_google_cloud_s() {
    let p = Policy::new();
    assert_eq!(p.max_retries, 5);
    assert_eq!(p.initial_backoff, Duration::from_secs(1));
    assert_eq!(p.max_backoff, Duration::from_secs(32));
    assert_eq!(p.multiplier, 2.0);
    assert_eq!(p.jitter, Jitter::Additive);
    assert_eq!(p.max_elapsed, None);
}

#[test]
fn try_builders_reject_bad_values() {
    let p = Policy::new();
    assert_eq!(p.try_max_retries(0), Err(PolicyError::ZeroRetries));
    assert_eq!(p.try_max_backoff(Duration::ZERO), Err(PolicyError::ZeroMaxBackoff));
    for m in [0.0, 0.99, -1.0, f64::NAN, f64::INFINITY] {
        assert_eq!(p.try_multiplier(m), Err(PolicyError::BadMultiplier), "{m}");
    }
    assert!(p.try_multiplier(1.0).is_ok());
}

#[test]
fn getters_read_back_what_the_builders_set() {
    let p = Policy::new()
        .max_retries(7)
        .initial_backoff(Duration::from_millis(3))
        .max_backoff(Duration::from_secs(9))
        .multiplier(1.5)
        .jitter(Jitter::Equal)
        .max_elapsed(Duration::from_secs(40));
    assert_eq!(p.get_max_retries(), 7);
    assert_eq!(p.get_initial_backoff(), Duration::from_millis(3));
    assert_eq!(p.get_max_backoff(), Duration::from_secs(9));
    assert_eq!(p.get_multiplier(), 1.5);
    assert_eq!(p.get_jitter(), Jitter::Equal);
    assert_eq!(p.get_max_elapsed(), Some(Duration::from_secs(40)));
}

#[test]
fn errors_say_what_is_wrong() {
    let said: Vec<String> = [
        PolicyError::ZeroRetries,
        PolicyError::ZeroInitialBackoff,
        PolicyError::ZeroMaxBackoff,
        PolicyError::ZeroMaxElapsed,
        PolicyError::BadMultiplier,
    ]
    .iter()
    .map(ToString::to_string)
    .collect();
    assert_eq!(
        said,
        [
            "max_retries must be at least 1",
            "initial_backoff must be greater than zero",
            "max_backoff must be greater than zero",
            "max_elapsed must be greater than zero",
            "multiplier must be a finite number >= 1",
        ]
    );
    assert_eq!(
        Policy::new().try_initial_backoff(Duration::ZERO),
        Err(PolicyError::ZeroInitialBackoff)
    );
    assert_eq!(
        Policy::new().try_max_elapsed(Duration::ZERO),
        Err(PolicyError::ZeroMaxElapsed)
    );
}

#[test]
#[should_panic(expected = "max_retries must be at least 1")]
fn plain_builder_panics_on_bad_value() {
    let _ = Policy::new().max_retries(0);
}

/// The expansion's one-call policy of literal keys is the policy the
/// checked builders make of the same keys, whole multiplier included.
#[test]
fn the_literal_policy_is_the_builders_policy() {
    let d = Duration::from_millis;
    let built = Policy::new()
        .max_retries(7)
        .initial_backoff(d(50))
        .max_backoff(d(900))
        .multiplier(3.0)
        .max_elapsed(d(5_000));
    let literal = literal_policy(7, 0, 50_000_000, 0, 900_000_000, 3.0, 5, 0);
    assert_eq!(literal, built);
    assert_eq!(literal.whole_multiplier, 3);
    let fractional = literal_policy(0, 0, 0, 0, 0, 1.5, 0, 0);
    assert_eq!(fractional, Policy::new().multiplier(1.5));
    assert_eq!(literal_policy(0, 0, 0, 0, 0, 0.0, 0, 0), Policy::new());
    // Seconds and nanoseconds both count.
    let long = literal_policy(0, 2, 500, u64::MAX, 999_999_999, 0.0, 0, 1);
    assert_eq!(long.initial_backoff, Duration::new(2, 500));
    assert_eq!(long.max_backoff, Duration::MAX);
    assert_eq!(long.max_elapsed, Some(Duration::from_nanos(1)));
}

#[test]
fn which_values_were_set_takes_no_room() {
    // Four durations (the jitter's amount and `max_elapsed` in their
    // niches), the multiplier, two `u32` and the hint rule: 81 bytes,
    // 88 once aligned. The bits of the values set sit in the padding.
    assert_eq!(core::mem::size_of::<Policy>(), 88);
    assert_eq!(core::mem::align_of::<Policy>(), 8);
}

#[test]
fn a_policy_is_still_built_in_a_const() {
    const P: Policy = Policy::new()
        .max_backoff(Duration::from_secs(5))
        .initial_backoff(Duration::from_millis(100))
        .jitter(Jitter::AdditiveUpTo(Duration::from_millis(50)));
    static S: Policy = P.hint_above_cap(HintAboveCap::WaitCap);
    assert_eq!(S.get_max_backoff(), Duration::from_secs(5));
    assert_eq!(
        P,
        literal_policy(0, 0, 100_000_000, 5, 0, 0.0, 0, 0).jitter(Jitter::AdditiveUpTo(Duration::from_millis(50)))
    );
}

#[test]
fn the_rules_between_two_values_hold_in_either_order() {
    let (short, long) = (Duration::from_secs(5), Duration::from_secs(10));
    let initial_first = Policy::new().initial_backoff(long).try_max_backoff(short);
    let cap_first = Policy::new().max_backoff(short).try_initial_backoff(long);
    let expected = PolicyError::InitialAboveMax {
        initial_backoff: long,
        max_backoff: short,
    };
    assert_eq!(initial_first, Err(expected));
    assert_eq!(cap_first, Err(expected));
    let jitter_first = Policy::new().jitter(Jitter::AdditiveUpTo(long)).try_max_backoff(short);
    assert!(matches!(jitter_first, Err(PolicyError::JitterAboveMax { .. })));
    // Equal values are fine, and defaults are never checked.
    assert!(Policy::new().max_backoff(short).try_initial_backoff(short).is_ok());
    assert!(Policy::new().try_initial_backoff(Duration::from_secs(60)).is_ok());
    assert!(
        Policy::new()
            .try_jitter(Jitter::AdditiveUpTo(Duration::from_secs(60)))
            .is_ok()
    );
}
