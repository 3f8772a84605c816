//! The gRPC layer's retries are seen like any other: each retry event and
//! the give-up carry OpenTelemetry's `rpc.grpc.status_code` of the
//! attempt's Trailers-Only status, and no HTTP resend count.

use std::convert::Infallible;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use backoff_grpc::{GrpcRetryLayer, ServiceConfig};
use tonic::Status;
use tonic::body::Body;
use tower::{Layer, ServiceExt};
use tracing_subscriber::layer::SubscriberExt;

/// The `rpc.grpc.status_code` of every event of the retry loop.
#[derive(Clone, Default)]
struct Codes(Arc<Mutex<Vec<Option<i64>>>>);

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Codes {
    fn on_event(&self, event: &tracing::Event<'_>, _: tracing_subscriber::layer::Context<'_, S>) {
        if event.metadata().target() != "backoff_runtime" {
            return;
        }
        #[derive(Default)]
        struct Code(Option<i64>);
        impl tracing::field::Visit for Code {
            fn record_i64(&mut self, field: &tracing::field::Field, value: i64) {
                if field.name() == "rpc.grpc.status_code" {
                    self.0 = Some(value);
                }
            }
            fn record_debug(&mut self, _: &tracing::field::Field, _: &dyn std::fmt::Debug) {}
        }
        let mut code = Code::default();
        event.record(&mut code);
        self.0.lock().unwrap().push(code.0);
    }
}

#[tokio::test(start_paused = true)]
async fn each_retry_of_the_grpc_layer_carries_the_status_code() {
    let codes = Codes::default();
    let _default = tracing::subscriber::set_default(tracing_subscriber::registry().with(codes.clone()));
    // A channel answering UNAVAILABLE twice, then OK, then INVALID_ARGUMENT
    // (each Trailers-Only).
    let answers = Arc::new(AtomicU32::new(0));
    let channel = tower::service_fn(move |_: http::Request<Body>| {
        let answer = answers.fetch_add(1, Ordering::SeqCst);
        async move {
            let status = match answer {
                0 | 1 => Status::unavailable("down"),
                2 => Status::ok(""),
                _ => Status::invalid_argument("no"),
            };
            Ok::<_, Infallible>(status.into_http::<Body>())
        }
    });
    let config = ServiceConfig::from_json(
        r#"{"methodConfig": [{"name": [{}], "retryPolicy": {"maxAttempts": 5, "initialBackoff": "0.1s",
            "maxBackoff": "1s", "backoffMultiplier": 2, "retryableStatusCodes": ["UNAVAILABLE", "INVALID_ARGUMENT"]}}]}"#,
    )
    .unwrap();
    let service = GrpcRetryLayer::new(config).layer(channel);
    let call = || http::Request::post("/test.Planned/Unary").body(Body::empty()).unwrap();
    service.clone().oneshot(call()).await.unwrap();
    let answers_before = codes.0.lock().unwrap().len();
    assert_eq!(answers_before, 3, "two retries and the success after them");
    // INVALID_ARGUMENT retried (the config says so) until the attempts run out.
    let last = service.oneshot(call()).await.unwrap();
    assert_eq!(
        last.headers()["grpc-status"],
        "3",
        "the last answer, as the server sent it"
    );
    let seen = codes.0.lock().unwrap().clone();
    assert_eq!(
        seen,
        [Some(14), Some(14), None, Some(3), Some(3), Some(3), Some(3), Some(3)]
    );
}
