//! gRPC's own per-call series (gRFC A96).
//!
//! Recorded by [`GrpcRetryLayer`] beside the runtime's series
//! (`backoff_runtime::metrics`) with the `metrics` feature. Each is a histogram
//! labelled `grpc.method` (the method's path without its leading `/`). A call
//! that sent one attempt records none.
//!
//! [`GrpcRetryLayer`]: crate::GrpcRetryLayer
//!
//! ```
//! assert_eq!(backoff_grpc::metrics::GRPC_CALL_RETRIES, "grpc.client.call.retries");
//! ```

use core::time::Duration;

/// The retries of a retried call.
pub const GRPC_CALL_RETRIES: &str = "grpc.client.call.retries";

/// The waits between the attempts of a retried call, in seconds, in all.
pub const GRPC_CALL_RETRY_DELAY: &str = "grpc.client.call.retry_delay";

/// The hedges of a hedged call that sent more than one attempt.
pub const GRPC_CALL_HEDGES: &str = "grpc.client.call.hedges";

/// Records the series of a call of `method` (its path) that was retried
/// `retries` times, waiting `delay` in all (`hedged`: that sent `retries`
/// hedges). A call without retries records nothing.
#[inline]
pub(crate) fn call_ended(method: &str, retries: u32, delay: Duration, hedged: bool) {
    #[cfg(feature = "metrics")]
    if retries > 0 {
        let method = method.strip_prefix('/').unwrap_or(method).to_owned();
        if hedged {
            metrics::histogram!(GRPC_CALL_HEDGES, "grpc.method" => method).record(f64::from(retries));
        } else {
            metrics::histogram!(GRPC_CALL_RETRIES, "grpc.method" => method.clone()).record(f64::from(retries));
            metrics::histogram!(GRPC_CALL_RETRY_DELAY, "grpc.method" => method).record(delay.as_secs_f64());
        }
    }
    #[cfg(not(feature = "metrics"))]
    let _ = (method, retries, delay, hedged);
}
