//! What both benchmarks' tower variants need: a classifier for `u64`
//! requests, each of which may be sent again as itself.

use super::MyError;

/// Every `u64` request may be sent again, as itself.
#[derive(Clone, Copy)]
pub(crate) struct Replay;

impl backoff_tower::Classify<u64, u64, MyError> for Replay {
    /// A copy reads no time, as `HttpRetry`'s replay reads none.
    const READS_ATTEMPT_TIME: bool = false;

    fn may_retry(&self, _: &u64) -> bool {
        true
    }

    fn replay(&self, request: &u64, _: &backoff_runtime::Attempt) -> u64 {
        *request
    }
}
