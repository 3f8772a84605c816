//! The idempotency key's conditions.
//!
//! Added only when asked, only to a request that needs one and has none, never
//! over the caller's.

use http::{Method, Request};

use crate::classify::Classify;
use crate::http::HttpRetry;
use backoff_runtime::__front_end::{CallNonce, DefaultWait};
use backoff_runtime::Attempt;
use backoff_runtime::Policy;

/// The first attempt of a fresh call.
fn first_attempt() -> Attempt {
    CallNonce::next().nth_attempt(&Policy::new(), None, DefaultWait::CLOCK, 1)
}

/// The `Idempotency-Key` that `rules` sends with `request` on `attempt`.
fn key_sent(rules: HttpRetry, request: &Request<String>, attempt: &Attempt) -> Option<String> {
    let replayed = Classify::<_, http::Response<()>, ()>::replay(&rules, request, attempt);
    replayed
        .headers()
        .get("idempotency-key")
        .map(|value| value.to_str().unwrap().to_owned())
}

fn request(method: Method, key: Option<&str>) -> Request<String> {
    let mut builder = Request::builder().method(method).uri("http://backend/pay");
    if let Some(key) = key {
        builder = builder.header("idempotency-key", key);
    }
    builder.body(String::new()).unwrap()
}

#[test]
fn a_keyless_post_gets_the_call_s_id_when_keys_are_added() {
    let attempt = first_attempt();
    let key = key_sent(
        HttpRetry::new().idempotency_key(),
        &request(Method::POST, None),
        &attempt,
    );
    assert_eq!(key, Some(attempt.invocation_id().to_string()));
}

#[test]
fn an_idempotent_method_gets_no_key_even_when_keys_are_added() {
    let rules = HttpRetry::new().idempotency_key();
    for method in [Method::GET, Method::PUT, Method::DELETE] {
        assert_eq!(
            key_sent(rules, &request(method.clone(), None), &first_attempt()),
            None,
            "{method}"
        );
    }
}

#[test]
fn the_caller_s_key_is_never_overwritten() {
    let keyed = request(Method::POST, Some("order-17"));
    for rules in [HttpRetry::new(), HttpRetry::new().idempotency_key()] {
        assert_eq!(key_sent(rules, &keyed, &first_attempt()).as_deref(), Some("order-17"));
    }
}

#[test]
fn no_key_is_added_unless_asked() {
    let post = request(Method::POST, None);
    for rules in [HttpRetry::new(), HttpRetry::new().retry_any_method()] {
        assert_eq!(key_sent(rules, &post, &first_attempt()), None);
    }
}
