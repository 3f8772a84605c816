//! A subscriber set on one thread (`set_default`, `with_default`) sees this
//! crate's events even when a thread without a subscriber reached them
//! first, while that subscriber is the only `Dispatch` in the process.
//!
//! tracing caches a callsite's interest when the callsite is first
//! reached, and with one `Dispatch` it asks only the first thread's default
//! (tracing-core 0.1.36, tokio-rs/tracing#3611): a thread with no
//! subscriber cached "never" and the other thread's events were lost. The
//! runtime reaches its callsites only from threads that have a subscriber.
//!
//! The test needs a process where its subscriber is the only `Dispatch`:
//! it runs itself again, alone, in a child process.

use std::convert::Infallible;
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use backoff_runtime::Policy;
use backoff_runtime::retry;
use backoff_tower::RetryLayer;
use tower::{Layer, ServiceExt};
use tracing_subscriber::layer::SubscriberExt;

/// Set in the child process, which runs the test's body.
const ALONE: &str = "BACKOFF_TELEMETRY_ALONE";

/// The messages of the events recorded, and the names of the spans.
#[derive(Clone, Default)]
struct Messages(Arc<Mutex<Vec<String>>>);

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Messages {
    fn on_new_span(
        &self,
        attrs: &tracing::span::Attributes<'_>,
        _: &tracing::span::Id,
        _: tracing_subscriber::layer::Context<'_, S>,
    ) {
        self.0.lock().unwrap().push(format!("span {}", attrs.metadata().name()));
    }

    fn on_event(&self, event: &tracing::Event<'_>, _: tracing_subscriber::layer::Context<'_, S>) {
        struct Message(String);
        impl tracing::field::Visit for Message {
            fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
                if field.name() == "message" {
                    self.0 = format!("{value:?}");
                }
            }
        }
        let mut message = Message(String::new());
        event.record(&mut message);
        self.0.lock().unwrap().push(message.0);
    }
}

/// Events only for a subscriber (no hook observes): the loop asks tracing
/// whether anyone listens.
#[retry(max_retries = 2, jitter = none, initial_backoff = "1ms", sleep = |_| {})]
fn unobserved() -> Result<(), String> {
    Err("down".to_owned())
}

/// Hooks observe: the loop reports the retry (and its event) whether or not
/// a subscriber listens.
#[retry(
    max_retries = 2,
    jitter = none,
    initial_backoff = "1ms",
    sleep = |_| {},
    on_retry = |_, _| {},
    on_give_up = |_, _| {}
)]
fn observed() -> Result<(), String> {
    Err("down".to_owned())
}

/// One call through the tower layer to a backend that answers 503, then
/// 200: one resend.
fn layered_call() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    let calls = Arc::new(AtomicU32::new(0));
    let backend = tower::service_fn(move |_: http::Request<String>| {
        let status = if calls.fetch_add(1, Ordering::SeqCst) == 0 {
            503
        } else {
            200
        };
        async move { Ok::<_, Infallible>(http::Response::builder().status(status).body(String::new()).unwrap()) }
    });
    let service = RetryLayer::new(Policy::new().initial_backoff(Duration::from_millis(1))).layer(backend);
    let request = http::Request::get("http://backend/").body(String::new()).unwrap();
    let response = runtime.block_on(service.oneshot(request)).unwrap();
    assert_eq!(response.status(), 200);
}

#[test]
fn a_subscriber_on_one_thread_sees_the_events_another_thread_reached_first() {
    if std::env::var_os(ALONE).is_none() {
        let output = Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "one_subscriber::a_subscriber_on_one_thread_sees_the_events_another_thread_reached_first",
                "--test-threads=1",
                "--nocapture",
            ])
            .env(ALONE, "1")
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&output.stdout) + String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "the test alone in its process failed:\n{said}");
        assert!(said.contains("1 passed"), "the child ran no test:\n{said}");
        return;
    }
    let messages = Messages::default();
    // The process's only `Dispatch`, this thread's default.
    let _default = tracing::subscriber::set_default(tracing_subscriber::registry().with(messages.clone()));
    // A thread without a subscriber gets to the callsites first.
    std::thread::spawn(|| {
        assert!(unobserved().is_err());
        assert!(observed().is_err());
        layered_call();
    })
    .join()
    .unwrap();
    assert!(
        messages.0.lock().unwrap().is_empty(),
        "the other thread's events are not this subscriber's"
    );

    assert!(unobserved().is_err());
    assert!(observed().is_err());
    let expected = ["attempt failed, retrying", "attempt failed, retrying", "giving up"];
    assert_eq!(*messages.0.lock().unwrap(), [expected, expected].concat());
    messages.0.lock().unwrap().clear();
    layered_call();
    assert_eq!(
        *messages.0.lock().unwrap(),
        ["attempt failed, retrying", "span resend", "succeeded after retries"]
    );
}
