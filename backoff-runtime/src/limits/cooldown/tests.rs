use super::*;

use std::time::Instant;

fn ask(cooldown: &Cooldown, now: Instant, waited: Duration) -> Admission {
    cooldown.admit(AdmissionRequest::new(now, 1, waited))
}

fn hinted(cooldown: &Cooldown, now: Instant, hint: Duration) {
    cooldown.observed(AttemptEnd::new(now, true).with_hint(hint));
}

#[test]
fn without_a_hint_every_attempt_goes() {
    let cooldown = Cooldown::new();
    let now = Instant::now();
    cooldown.observed(AttemptEnd::new(now, true));
    assert_eq!(ask(&cooldown, now, Duration::ZERO), Admission::Go);
}

#[test]
fn a_hint_holds_every_attempt_until_its_instant_and_no_later() {
    let cooldown = Cooldown::new();
    let start = Instant::now();
    hinted(&cooldown, start, Duration::from_secs(3));
    let later = start + Duration::from_secs(1);
    assert_eq!(
        ask(&cooldown, later, Duration::ZERO),
        Admission::Wait(Duration::from_secs(2))
    );
    let just_before = start + Duration::from_secs(3) - Duration::from_nanos(1);
    assert_eq!(
        ask(&cooldown, just_before, Duration::ZERO),
        Admission::Wait(Duration::from_nanos(1)),
        "never early, not even by a nanosecond"
    );
    assert_eq!(
        ask(&cooldown, start + Duration::from_secs(3), Duration::ZERO),
        Admission::Go
    );
    assert_eq!(ask(&cooldown, start, Duration::ZERO), Admission::Go, "the hold is over");
}

#[test]
fn past_the_maximum_wait_it_refuses_with_the_time_left() {
    let cooldown = Cooldown::new().max_wait(Duration::from_secs(1));
    let start = Instant::now();
    hinted(&cooldown, start, Duration::from_secs(5));
    assert_eq!(
        ask(&cooldown, start, Duration::ZERO),
        Admission::Shut(Shut::cooldown(Duration::from_secs(5)))
    );
    // What the attempt already waited counts.
    let near = start + Duration::from_millis(4_500);
    assert_eq!(
        ask(&cooldown, near, Duration::ZERO),
        Admission::Wait(Duration::from_millis(500))
    );
    assert_eq!(
        ask(&cooldown, near, Duration::from_millis(600)),
        Admission::Shut(Shut::cooldown(Duration::from_millis(500)))
    );
}

#[test]
fn hints_are_capped_and_a_shorter_one_does_not_shorten_a_hold() {
    let cooldown = Cooldown::new()
        .max_hint(Duration::from_secs(4))
        .max_wait(Duration::from_secs(60));
    let start = Instant::now();
    hinted(&cooldown, start, Duration::from_secs(3_600));
    assert_eq!(
        ask(&cooldown, start, Duration::ZERO),
        Admission::Wait(Duration::from_secs(4))
    );
    hinted(&cooldown, start, Duration::from_secs(1));
    assert_eq!(
        ask(&cooldown, start, Duration::ZERO),
        Admission::Wait(Duration::from_secs(4))
    );
    hinted(&cooldown, start + Duration::from_secs(2), Duration::from_secs(3));
    assert_eq!(
        ask(&cooldown, start, Duration::ZERO),
        Admission::Wait(Duration::from_secs(5))
    );
}

#[test]
fn the_getters_read_what_the_builders_set() {
    let cooldown = Cooldown::new()
        .max_wait(Duration::from_secs(3))
        .max_hint(Duration::from_secs(7))
        .name("host");
    assert_eq!(
        (
            cooldown.get_max_wait(),
            cooldown.get_max_hint(),
            cooldown.get_name(),
            AdmissionLimit::name(&cooldown)
        ),
        (
            Duration::from_secs(3),
            Duration::from_secs(7),
            Some("host"),
            Some("host")
        )
    );
    assert!(format!("{cooldown:?}").starts_with("Cooldown { max_wait: 3s"));
    assert_eq!(Cooldown::default().get_max_hint(), Duration::from_secs(32));
}
