//! The tower layer's `resend` span: each resend runs in one, carrying
//! OpenTelemetry's `http.request.resend_count` (1 for the first resend);
//! the first attempt gets none.

use std::convert::Infallible;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use backoff_runtime::Policy;
use backoff_tower::RetryLayer;
use http::Request;
use tower::{Layer, ServiceExt};
use tracing_subscriber::layer::SubscriberExt;

/// A span's name and its `http.request.resend_count`.
type SpanSeen = (String, Option<u64>);

/// The `name` and `http.request.resend_count` of every span made.
#[derive(Clone, Default)]
struct Spans(Arc<Mutex<Vec<SpanSeen>>>);

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Spans {
    fn on_new_span(
        &self,
        attrs: &tracing::span::Attributes<'_>,
        _: &tracing::span::Id,
        _: tracing_subscriber::layer::Context<'_, S>,
    ) {
        struct Count(Option<u64>);
        impl tracing::field::Visit for Count {
            fn record_u64(&mut self, field: &tracing::field::Field, value: u64) {
                if field.name() == "http.request.resend_count" {
                    self.0 = Some(value);
                }
            }
            fn record_debug(&mut self, _: &tracing::field::Field, _: &dyn std::fmt::Debug) {}
        }
        let mut count = Count(None);
        attrs.record(&mut count);
        self.0
            .lock()
            .unwrap()
            .push((attrs.metadata().name().to_owned(), count.0));
    }
}

#[tokio::test(start_paused = true)]
async fn each_resent_attempt_carries_open_telemetry_s_resend_count() {
    let spans = Spans::default();
    let _default = tracing::subscriber::set_default(tracing_subscriber::registry().with(spans.clone()));
    // A backend that answers 503 twice, then 200.
    let calls = Arc::new(AtomicU32::new(0));
    let counter = Arc::clone(&calls);
    let backend = tower::service_fn(move |_: Request<String>| {
        let status = if counter.fetch_add(1, Ordering::SeqCst) < 2 {
            503
        } else {
            200
        };
        async move { Ok::<_, Infallible>(http::Response::builder().status(status).body(String::new()).unwrap()) }
    });
    let policy = Policy::new().initial_backoff(Duration::from_millis(100));
    let response = RetryLayer::new(policy)
        .layer(backend)
        .oneshot(Request::get("http://backend/").body(String::new()).unwrap())
        .await
        .unwrap();
    assert_eq!((response.status().as_u16(), calls.load(Ordering::SeqCst)), (200, 3));
    let resends: Vec<Option<u64>> = spans
        .0
        .lock()
        .unwrap()
        .iter()
        .filter(|(name, _)| name == "resend")
        .map(|(_, count)| *count)
        .collect();
    assert_eq!(
        resends,
        [Some(1), Some(2)],
        "one span per resend, none for the first attempt"
    );
}
