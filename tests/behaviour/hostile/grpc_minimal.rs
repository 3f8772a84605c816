//! The gRPC layer on each minimal hostile input (`tests/corpus/hostile/`), with what it
//! does instead of panicking or parking the call. Tokio's clock is
//! paused.

use std::time::Duration;

use super::grpc_answer::{Case, Outcome, run};

/// One line: a case's config is one line of its text.
const RETRY: &str = concat!(
    r#""retryPolicy": {"maxAttempts": 3, "initialBackoff": "1s", "maxBackoff": "10s", "#,
    r#""backoffMultiplier": 2, "retryableStatusCodes": ["UNAVAILABLE", "RESOURCE_EXHAUSTED"]}"#
);
const HEDGING: &str = r#""hedgingPolicy": {"maxAttempts": 3, "hedgingDelay": "1s"}"#;

fn config(timeout: Option<&str>, policy: &str) -> String {
    let timeout = timeout
        .map(|timeout| format!(r#""timeout": "{timeout}", "#))
        .unwrap_or_default();
    format!(r#"{{"methodConfig": [{{"name": [{{}}], {timeout}{policy}}}]}}"#)
}

async fn call(text: &str) -> Outcome {
    run(&Case::parse(text)).await.expect("the config is accepted")
}

#[tokio::test(start_paused = true)]
async fn a_zero_timeout_ends_the_call_unsent_with_deadline_exceeded() {
    for policy in [RETRY, HEDGING, r#""waitForReady": true"#] {
        for timeout in ["0s", "-0s"] {
            let case = format!("config {}\nanswer\ngrpc-status: 14", config(Some(timeout), policy));
            let outcome = call(&case).await;
            assert_eq!(
                (outcome.sent, outcome.status.as_deref()),
                (0, Some("4")),
                "{timeout} {policy}"
            );
            assert_eq!(outcome.elapsed, Duration::ZERO);
        }
    }
}

#[tokio::test(start_paused = true)]
async fn a_caller_s_zero_grpc_timeout_ends_the_call_unsent_with_deadline_exceeded() {
    for policy in [RETRY, HEDGING] {
        for timeout in ["0n", "0m", "0S", "00000000H"] {
            let case = format!(
                "config {}\nrequest grpc-timeout: {timeout}\nanswer\ngrpc-status: 14",
                config(None, policy)
            );
            let outcome = call(&case).await;
            assert_eq!(
                (outcome.sent, outcome.status.as_deref()),
                (0, Some("4")),
                "{timeout} {policy}"
            );
        }
    }
}

#[tokio::test(start_paused = true)]
async fn status_details_that_are_not_base64_are_a_status_without_details() {
    // Trailers-Only: retried as the UNAVAILABLE it is.
    let case = format!(
        "config {}\nanswer\ngrpc-status: 14\ngrpc-status-details-bin: b",
        config(None, RETRY)
    );
    let outcome = call(&case).await;
    assert_eq!((outcome.sent, outcome.status.as_deref()), (2, Some("0")));
    // In the trailers of a committed call: the call ends at that status.
    let case = format!(
        "config {}\nanswer trailers\ngrpc-status: 14\ngrpc-status-details-bin: b",
        config(None, RETRY)
    );
    assert_eq!(outcome_sent(&case).await, 1);
}

async fn outcome_sent(text: &str) -> u32 {
    call(text).await.sent
}

#[tokio::test(start_paused = true)]
async fn a_retry_info_of_i64_min_seconds_is_no_hint_and_the_backoff_waits() {
    // base64 of a google.rpc.Status holding a RetryInfo of i64::MIN seconds.
    let details = base64_of_min_retry_info();
    let case = format!(
        "config {}\nanswer\ngrpc-status: 8\ngrpc-status-details-bin: {details}",
        config(None, RETRY)
    );
    let outcome = call(&case).await;
    assert_eq!((outcome.sent, outcome.status.as_deref()), (2, Some("0")));
    // The first backoff (1 s, jittered by ±20%), not a retry at once.
    assert!(outcome.elapsed >= Duration::from_millis(800), "{outcome:?}");
}

/// The corpus file's value, checked against the test's own encoding.
fn base64_of_min_retry_info() -> String {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/corpus/hostile/grpc_answer/retry-info-i64-min.txt"
    ))
    .unwrap();
    let line = text
        .lines()
        .find_map(|line| line.strip_prefix("grpc-status-details-bin: "));
    line.expect("the corpus holds the details").to_owned()
}

#[tokio::test(start_paused = true)]
async fn a_pushback_past_the_ceiling_ends_the_call_at_once() {
    for pushback in ["9223372036854775807", "120001"] {
        let case = format!(
            "config {}\nanswer\ngrpc-status: 14\ngrpc-retry-pushback-ms: {pushback}",
            config(None, RETRY)
        );
        let outcome = call(&case).await;
        assert_eq!(
            (outcome.sent, outcome.status.as_deref(), outcome.elapsed),
            (1, Some("14"), Duration::ZERO),
            "{pushback}: the server's own status, at once"
        );
    }
    // At the ceiling: waited exactly, as A6 says.
    let case = format!(
        "config {}\nanswer\ngrpc-status: 14\ngrpc-retry-pushback-ms: 120000",
        config(None, RETRY)
    );
    let outcome = call(&case).await;
    assert_eq!((outcome.sent, outcome.elapsed), (2, Duration::from_secs(120)));
    // While hedging: no more hedges, the call ends with the failure.
    let case = format!(
        "config {}\nanswer\ngrpc-status: 14\ngrpc-retry-pushback-ms: 9223372036854775807",
        config(None, HEDGING)
    );
    let outcome = call(&case).await;
    assert_eq!((outcome.sent, outcome.elapsed), (1, Duration::ZERO), "{outcome:?}");
}
