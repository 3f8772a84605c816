//! What `backoff-grpc` builds on.
//!
//! A layer per method, its calls, the request they keep, and its rules'
//! two extras.
//!
//! Not public API: hidden from the docs, and free to change in any
//! release (`backoff-grpc` pins this crate's exact version).

use backoff_runtime::Instant;
use core::pin::Pin;
use core::time::Duration;
use std::sync::Arc;

pub use crate::classify::LayerClassify;
pub use crate::future::CommittedCall;
pub use crate::kept::{Failure, KeptRequest};

use crate::held::AdmissionSlot;
use crate::layer::RetryLayer;
use backoff_runtime::limits::RetryLimit;
use backoff_runtime::{Policy, StopReason};

/// A [`RetryLayer`] as gRPC's layer makes one per method: with gRPC's rules
/// as they are (not as a [`Classified`](crate::Classified)).
pub trait PerMethod<C, T, A>: Sized {
    /// The name the layer's events and metrics report.
    fn reported_name(&self) -> &'static str;

    /// The layer's shared limit, if it has one.
    fn limit(&self) -> Option<&Arc<dyn RetryLimit + Send>>;

    /// The layer classifying with `rules`, kept as they are: gRPC's.
    fn with_rules<D>(self, rules: D) -> RetryLayer<D, T, A>;

    /// The layer with another policy and classification (one gRPC
    /// method's), hedged after `hedge_after` when given, as every call of a
    /// service shares it.
    fn for_method(&self, policy: Policy, rules: C, hedge_after: Option<Duration>) -> Arc<Self>
    where
        C: Clone,
        T: Clone,
        A: Clone;
}

impl<C, T, A> PerMethod<C, T, A> for RetryLayer<C, T, A> {
    fn reported_name(&self) -> &'static str {
        self.calls.site.name()
    }

    fn limit(&self) -> Option<&Arc<dyn RetryLimit + Send>> {
        self.calls.budget.as_ref()
    }

    fn with_rules<D>(self, rules: D) -> RetryLayer<D, T, A> {
        self.retyped(|_, timeout, admission| (rules, timeout, admission))
    }

    fn for_method(&self, policy: Policy, rules: C, hedge_after: Option<Duration>) -> Arc<Self>
    where
        C: Clone,
        T: Clone,
        A: Clone,
    {
        let mut keys = self.clone();
        keys.calls.policy = policy;
        keys.calls.hedge_after = hedge_after;
        keys.classify = rules;
        keys.shared()
    }
}

/// A call's [`ResponseFuture`](crate::ResponseFuture) as gRPC's layer starts it, and reads it once
/// it returned: for its per-call metrics, its deadline, and the end of a
/// call whose status is in its trailers.
pub trait RetriedCall<S, Req>: Sized {
    /// The layer the call goes through.
    type Layer: AdmissionSlot;

    /// The call of `request` on `service`, which `poll_ready` made ready,
    /// retried by `layer`.
    fn start(service: &mut S, layer: &Arc<Self::Layer>, request: Req) -> Self;

    /// The caller's request, the retries made and the waits before them
    /// together, of a call that may be retried.
    fn retried(&self) -> Option<(&Req, u32, Duration)>;

    /// Why the call gave up, once it has (`None` while it runs, after a
    /// success, and for a call that may not be retried).
    fn stopped_by(&self) -> Option<StopReason>;

    /// The call's start, when it was read (a deadline, `max_elapsed`, a
    /// limit or a hook needs it).
    fn started_at(&self) -> Option<Instant>;

    /// Whether the call hedges.
    fn hedged(&self) -> bool;

    /// The call's end, taken once after the future returned an accepted
    /// answer (and only then), unless no one hears how the call ends: the
    /// call is then reported now, as a success, and `None` is returned.
    fn committed_call(self: Pin<&mut Self>) -> Option<CommittedCall<Self::Layer>>;
}
