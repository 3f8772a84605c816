//! [`ReplayLimits`]: the caps on what the replay bodies keep.
//!
//! One cap per call, and one shared by every call of a layer.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The default cap on one call's kept bytes: grpc-java's and grpc-dotnet's
/// `perRpcBufferLimit`, 1 MiB.
const DEFAULT_PER_CALL: usize = 1 << 20;

/// The default reservation shared by the calls of one layer: grpc-java's
/// and grpc-dotnet's `retryBufferSize`, 16 MiB.
const DEFAULT_SHARED: usize = 16 << 20;

/// How much of the request bodies [`Replay`](super::Replay) may keep: at most
/// [`per_call`](Self::per_call) bytes for one call (default 1 MiB, as
/// grpc-java's `perRpcBufferLimit`) and at most [`shared`](Self::shared)
/// bytes for all the calls that use this value or a clone of it (default
/// 16 MiB, as grpc-java's `retryBufferSize`).
///
/// Clones share one reservation (an `Arc` of an atomic counter): a call
/// reserves its bytes as it keeps them and gives them back when it is
/// committed or dropped.
///
/// ```
/// use backoff_tower::ReplayLimits;
///
/// let limits = ReplayLimits::new().per_call(64 * 1024).shared(4 << 20);
/// assert_eq!(limits.get_per_call(), 64 * 1024);
/// assert_eq!(limits.get_shared(), 4 << 20);
/// assert_eq!(limits.reserved(), 0, "no call keeps anything yet");
/// ```
#[derive(Clone, Debug)]
pub struct ReplayLimits {
    per_call: usize,
    shared: usize,
    reserved: Arc<AtomicUsize>,
}

impl Default for ReplayLimits {
    fn default() -> Self {
        ReplayLimits::new()
    }
}

impl ReplayLimits {
    /// 1 MiB per call, 16 MiB shared (grpc-java's and grpc-dotnet's
    /// defaults), nothing reserved.
    ///
    /// ```
    /// use backoff_tower::ReplayLimits;
    /// let limits = ReplayLimits::new();
    /// assert_eq!((limits.get_per_call(), limits.get_shared()), (1 << 20, 16 << 20));
    /// ```
    #[must_use]
    pub fn new() -> Self {
        ReplayLimits {
            per_call: DEFAULT_PER_CALL,
            shared: DEFAULT_SHARED,
            reserved: Arc::new(AtomicUsize::new(0)),
        }
    }

    /// Sets the most bytes one call keeps. A body whose size hint is
    /// already above it is not kept at all ([`Replay::try_new`](super::Replay::try_new) gives it
    /// back); one that grows past it is sent once, unretried.
    ///
    /// ```
    /// use backoff_tower::ReplayLimits;
    /// assert_eq!(ReplayLimits::new().per_call(256 * 1024).get_per_call(), 256 * 1024);
    /// ```
    #[must_use]
    pub fn per_call(mut self, bytes: usize) -> Self {
        self.per_call = bytes;
        self
    }

    /// Sets the most bytes all the calls sharing this reservation keep
    /// together. The reservation itself (the bytes held now) stays shared
    /// with the clones made before.
    ///
    /// ```
    /// use backoff_tower::ReplayLimits;
    /// assert_eq!(ReplayLimits::new().shared(1 << 30).get_shared(), 1 << 30);
    /// ```
    #[must_use]
    pub fn shared(mut self, bytes: usize) -> Self {
        self.shared = bytes;
        self
    }

    /// The most bytes one call keeps.
    ///
    /// ```
    /// assert_eq!(backoff_tower::ReplayLimits::new().get_per_call(), 1 << 20);
    /// ```
    #[must_use]
    pub fn get_per_call(&self) -> usize {
        self.per_call
    }

    /// The most bytes the calls sharing the reservation keep together.
    ///
    /// ```
    /// assert_eq!(backoff_tower::ReplayLimits::new().get_shared(), 16 << 20);
    /// ```
    #[must_use]
    pub fn get_shared(&self) -> usize {
        self.shared
    }

    /// The bytes the calls sharing the reservation keep now.
    ///
    /// ```
    /// assert_eq!(backoff_tower::ReplayLimits::new().reserved(), 0);
    /// ```
    #[must_use]
    pub fn reserved(&self) -> usize {
        self.reserved.load(Ordering::Relaxed)
    }

    /// Reserves `bytes` of the shared reservation, if they fit.
    #[inline]
    pub(super) fn reserve(&self, bytes: usize) -> bool {
        self.reserved
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |held| {
                held.checked_add(bytes).filter(|total| *total <= self.shared)
            })
            .is_ok()
    }

    /// Gives back `bytes` reserved before.
    #[inline]
    pub(super) fn release(&self, bytes: usize) {
        if bytes > 0 {
            self.reserved.fetch_sub(bytes, Ordering::Relaxed);
        }
    }
}
