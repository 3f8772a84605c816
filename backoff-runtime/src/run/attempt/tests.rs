use super::*;
use crate::run::invocation::COMPUTED;

/// Building a call's attempts computes no id; each read computes one,
/// and every attempt of the call reads the same.
#[test]
fn the_id_is_computed_only_when_read() {
    let computed = || COMPUTED.with(core::cell::Cell::get);
    let before = computed();
    let mut source = AttemptSource::new(&Policy::new(), None, Clock::StdOrVirtual);
    let attempts = [source.next_attempt(), source.next_attempt(), source.next_attempt()];
    let _ = attempts.map(|attempt| attempt.number());
    assert_eq!(computed(), before);
    let first = attempts[0].invocation_id();
    assert_eq!(computed(), before + 1);
    assert!(attempts.iter().all(|attempt| attempt.invocation_id() == first));
    assert_eq!(computed(), before + 4);
}

/// `Debug` shows the id, as it did when the attempt held it.
#[test]
fn the_debug_form_shows_the_id() {
    let attempt = AttemptSource::new(&Policy::new(), None, Clock::StdOrVirtual).next_attempt();
    let text = format!("{attempt:?}");
    assert!(
        text.starts_with("Attempt { number: 1, retries_left: 5, invocation_id: InvocationId("),
        "{text}"
    );
    assert!(text.contains(&attempt.invocation_id().to_string()), "{text}");
}
