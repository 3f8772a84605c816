use super::Hooks;
use crate::run::outcome::judged;
use crate::run::probe::Probe;
use std::time::Duration;

/// One set judges values and errors: a pending value is retried with
/// its own hint, an error by `retry_if` with its own.
#[test]
fn one_set_judges_values_and_errors() {
    let (retry_if, retry_after) = (|status: &u16| *status >= 500, |_: &u16| Some(Duration::from_secs(1)));
    let (pending, pending_hint) = (
        |state: &&str| *state == "running",
        |_: &&str| Some(Duration::from_secs(2)),
    );
    let hooks = Hooks::<&str, u16>::new()
        .retry_if(&retry_if)
        .retry_after(&retry_after)
        .retry_if_ok(&pending)
        .retry_after_ok(&pending_hint);
    assert!(hooks.judge(Ok("done")).is_ok());
    assert!(hooks.judge(Ok("running")).is_err());
    assert_eq!(hooks.hint(&Ok("running")), Some(Duration::from_secs(2)));
    assert_eq!(hooks.hint(&Err(503)), Some(Duration::from_secs(1)));
    assert!(hooks.should_retry(&Ok("running")));
    assert!(!hooks.should_retry(&Err(404)));
    assert!(hooks.is_pending(&Ok("running")) && !hooks.is_pending(&Err(503)));
    assert!(!hooks.values_are_failures(true).is_pending(&Ok("running")));
}

/// Without `retry_if_ok` the decision sees the error alone.
#[test]
fn without_retry_if_ok_errors_are_decided() {
    let hooks = Hooks::<u8, u16>::new().name("fetch");
    assert_eq!(hooks.judge(Err(503)).err(), Some(503));
    assert!(hooks.should_retry(&503), "every error is retried by default");
    assert!(!hooks.is_pending(&503));
    assert_eq!(hooks.function_name(), "fetch");
    assert_eq!(format!("{hooks:?}"), "Hooks { name: \"fetch\", .. }");
}

/// A judged result shows which way it went, not its value; a probe
/// shows only that it is one.
#[test]
fn judged_results_and_probes_debug_as_what_they_are() {
    let running = |state: &&str| *state == "running";
    assert_eq!(
        format!("{:?}", judged(Ok::<_, ()>("done"), &running)),
        "Judged::Done(..)"
    );
    assert_eq!(
        format!("{:?}", judged(Ok::<_, ()>("running"), &running)),
        "Judged::Again(..)"
    );
    assert_eq!(format!("{:?}", Probe::of(&503_u16)), "Probe");
}
