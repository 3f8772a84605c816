//! `#[retry]` beside `#[tracing::instrument]`, in both orders: the spans it
//! opens (one for the call above the retries, one per attempt below them).

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use backoff_runtime::retry;
use tracing::Subscriber;
use tracing::span::{Attributes, Id};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};

fn bump(calls: &AtomicU32, failures: u32) -> Result<u32, String> {
    let n = calls.fetch_add(1, Ordering::SeqCst) + 1;
    if n <= failures {
        Err(format!("attempt {n} failed"))
    } else {
        Ok(n)
    }
}

/// Counts the spans opened, by name.
#[derive(Clone, Default)]
struct Spans(Arc<Mutex<Vec<String>>>);

impl<S: Subscriber> Layer<S> for Spans {
    fn on_new_span(&self, attrs: &Attributes<'_>, _id: &Id, _ctx: Context<'_, S>) {
        self.0.lock().unwrap().push(attrs.metadata().name().to_string());
    }
}

/// The recommended order: one span for the call and all its retries; owned
/// arguments keep working.
#[retry(initial_backoff = "1ms")]
#[tracing::instrument(skip(calls))]
async fn retry_above_instrument(owned: String, calls: &AtomicU32) -> Result<u32, String> {
    bump(calls, 2).map(|n| n + owned.len() as u32)
}

/// The other order works for borrowed (and `Copy`) arguments: a span per attempt.
#[tracing::instrument(skip(calls))]
#[retry(initial_backoff = "1ms")]
async fn instrument_above_retry(label: &str, attempt_limit: u32, calls: &AtomicU32) -> Result<u32, String> {
    bump(calls, attempt_limit)
}

/// Sync functions work in both orders.
#[tracing::instrument(skip(calls))]
#[retry(initial_backoff = "1ms")]
fn sync_instrumented(owned: String, calls: &AtomicU32) -> Result<usize, String> {
    bump(calls, 1).map(|_| owned.len())
}

#[tokio::test(start_paused = true)]
async fn tracing_instrument_in_both_orders() {
    let spans = Spans::default();
    let _guard = tracing::subscriber::set_default(tracing_subscriber::registry().with(spans.clone()));

    let calls = AtomicU32::new(0);
    assert_eq!(retry_above_instrument("abc".to_string(), &calls).await, Ok(6));
    assert_eq!(
        *spans.0.lock().unwrap(),
        ["retry_above_instrument"],
        "one span for the whole call"
    );

    spans.0.lock().unwrap().clear();
    let calls = AtomicU32::new(0);
    assert_eq!(instrument_above_retry("x", 2, &calls).await, Ok(3));
    assert_eq!(spans.0.lock().unwrap().len(), 3, "a span per attempt");

    let _clock = backoff_runtime::testing::VirtualClock::install();
    let calls = AtomicU32::new(0);
    assert_eq!(sync_instrumented("four".to_string(), &calls), Ok(4));
}
