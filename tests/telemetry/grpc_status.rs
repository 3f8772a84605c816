//! The retry events of a call failing with a `tonic::Status` carry
//! OpenTelemetry's `rpc.grpc.status_code`, and no HTTP resend count.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use backoff_grpc::status::is_retryable_status;
use backoff_runtime::retry;
use tonic::Status;
use tracing_subscriber::layer::SubscriberExt;

/// An event's `rpc.grpc.status_code` and `http.request.resend_count`.
type Attributes = (Option<i64>, Option<u64>);

/// The OpenTelemetry attributes of every event of the retry loop.
#[derive(Clone, Default)]
struct Events(Arc<Mutex<Vec<Attributes>>>);

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Events {
    fn on_event(&self, event: &tracing::Event<'_>, _: tracing_subscriber::layer::Context<'_, S>) {
        if event.metadata().target() != "backoff_runtime" {
            return;
        }
        #[derive(Default)]
        struct Fields(Option<i64>, Option<u64>);
        impl tracing::field::Visit for Fields {
            fn record_i64(&mut self, field: &tracing::field::Field, value: i64) {
                if field.name() == "rpc.grpc.status_code" {
                    self.0 = Some(value);
                }
            }
            fn record_u64(&mut self, field: &tracing::field::Field, value: u64) {
                if field.name() == "http.request.resend_count" {
                    self.1 = Some(value);
                }
            }
            fn record_debug(&mut self, _: &tracing::field::Field, _: &dyn std::fmt::Debug) {}
        }
        let mut fields = Fields::default();
        event.record(&mut fields);
        self.0.lock().unwrap().push((fields.0, fields.1));
    }
}

/// A call that fails with the planned statuses, in order, then succeeds.
#[retry(max_retries = 4, initial_backoff = "100ms", max_backoff = "5s", retry_if = is_retryable_status)]
async fn check(planned: &Mutex<VecDeque<Status>>) -> Result<(), Status> {
    match planned.lock().unwrap().pop_front() {
        Some(status) => Err(status),
        None => Ok(()),
    }
}

#[tokio::test(start_paused = true)]
async fn each_retry_event_carries_the_grpc_status_code() {
    let events = Events::default();
    let _default = tracing::subscriber::set_default(tracing_subscriber::registry().with(events.clone()));
    let down = Mutex::new(VecDeque::from([
        Status::unavailable("down"),
        Status::unavailable("down"),
    ]));
    check(&down).await.unwrap();
    let bad = Mutex::new(VecDeque::from([Status::invalid_argument("no")]));
    assert!(check(&bad).await.is_err());
    let seen = events.0.lock().unwrap().clone();
    // Two retries of UNAVAILABLE (14), the success after them (no status),
    // then the give-up on INVALID_ARGUMENT (3); no HTTP resend count on a
    // gRPC failure.
    assert_eq!(
        seen,
        [(Some(14), None), (Some(14), None), (None, None), (Some(3), None)]
    );
}
