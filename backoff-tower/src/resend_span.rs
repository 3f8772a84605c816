//! The `resend` span each resent attempt runs in.
//!
//! With the `tracing` feature, a resend (attempt 2 on) runs inside a span
//! named `resend` that carries OpenTelemetry's `http.request.resend_count`
//! (1 for the first resend). The span has the runtime's target, as the
//! retry's events do, so one filter (`backoff_runtime=info`) keeps both.
//! The first attempt gets none, so the happy path builds, enters and drops
//! no span.

#[cfg(feature = "tracing")]
use backoff_runtime::__front_end::Loop;

/// The span a resend runs in (tracing's `Span`).
#[cfg(feature = "tracing")]
#[derive(Debug)]
pub(crate) struct ResendSpan(tracing::Span);

/// The span a resend runs in: without the `tracing` feature, none exists.
#[cfg(not(feature = "tracing"))]
#[derive(Debug)]
pub(crate) enum ResendSpan {}

impl ResendSpan {
    /// The span of the `number`th attempt of a call (1-based): none for the
    /// first, and none when no subscriber would record it.
    #[cfg_attr(not(feature = "tracing"), inline(always))]
    pub(crate) fn of_attempt(number: u32) -> Option<Self> {
        #[cfg(feature = "tracing")]
        {
            // Made only where a subscriber listens, as the runtime's events
            // are: made first where none listens, its callsite stayed hidden
            // from a subscriber on another thread
            // (`tests/telemetry/one_subscriber.rs`).
            (number > 1 && Loop::thread_has_subscriber()).then(|| {
                ResendSpan(tracing::info_span!(
                    target: "backoff_runtime",
                    "resend",
                    "http.request.resend_count" = number - 1
                ))
            })
        }
        #[cfg(not(feature = "tracing"))]
        {
            let _ = number;
            None
        }
    }

    /// Runs `poll` (one poll of an attempt) inside `span` when there is one.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(crate) fn around<R>(span: Option<&Self>, poll: impl FnOnce() -> R) -> R {
        match span {
            None => poll(),
            #[cfg(feature = "tracing")]
            Some(ResendSpan(span)) => {
                let _entered = span.enter();
                poll()
            }
            #[cfg(not(feature = "tracing"))]
            Some(never) => match *never {},
        }
    }
}
