//! [`CommittedCall`]: a call committed to an answer whose status comes later.
//!
//! A gRPC response carries its status in its trailers: the layer's future
//! returns the answer when its headers come, and hands over the call's end
//! (`RetriedCall::committed_call`) to whoever reads the body to its
//! end (`backoff-grpc`'s `ending.rs`), which reports the call there.

use core::cell::Cell;
use core::pin::Pin;
use std::sync::Arc;

use tower_service::Service;

use super::admission::tell_limiter;
use super::retrying::{limit_of, succeeded_with, with_hooks};
use super::{CallProj, Keys, Phase, ResponseFuture};
use crate::classify::{Classify as _, LayerClassify};
use crate::held::AdmissionSlot;
use crate::layer::{PerAttemptAdmission, RetryLayer};
use backoff_runtime::__front_end::{DefaultWait, Loop};

/// The end of a call committed to an accepted answer whose status comes
/// when its body ends (a gRPC response: its status is in its trailers): the
/// call's loop and the layer `L`'s keys, to report the call once its
/// outcome is known. Dropped unused (the caller dropped the body), it
/// reports nothing but to the admission limiter, which hears the attempt as
/// abandoned (the hold it keeps gives it back).
pub struct CommittedCall<L: AdmissionSlot> {
    config: Arc<L>,
    driver: Loop,
    /// The call hedged past its first attempt: every attempt after the
    /// first is a hedge.
    hedged: bool,
    /// What the call holds of the admission limiter: the answered attempt
    /// (and a hedged call's others), until the limiter hears its end.
    held: L::Held,
}

impl<L: AdmissionSlot> core::fmt::Debug for CommittedCall<L> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("CommittedCall").finish_non_exhaustive()
    }
}

impl<C, T, A> CommittedCall<RetryLayer<C, T, A>>
where
    C: Clone + Send + Sync + 'static,
    T: Clone + Send + Sync + 'static,
    A: AdmissionSlot,
{
    /// The call succeeded: the limit gets its tokens back, and metrics,
    /// tracing and `on_success` hear of it.
    pub fn succeeded(mut self) {
        succeeded_with(&self.config, &mut self.driver, self.hedged, || None, &mut self.held);
    }

    /// The call failed with `outcome` at its end (its trailers' status):
    /// the limit counts it when the classification retries it, and it is
    /// reported as a give-up ([`StopReason::Committed`](backoff_runtime::StopReason::Committed)
    /// when retryable).
    pub fn failed<Req, Res, E>(mut self, outcome: Result<Res, E>)
    where
        C: LayerClassify<Req, Res, E>,
    {
        let config = &*self.config;
        let policy = config.calls.policy;
        let stopped = Cell::new(None);
        with_hooks::<Req, Res, E, C, T, A, ()>(config, &stopped, |hooks| {
            tell_limiter::<A, _>(
                &config.admission,
                &mut self.held,
                1,
                || None,
                |admitting| {
                    admitting.observed(hooks.attempt_end(DefaultWait::CLOCK, Err(&outcome)));
                    admitting.abandon_open();
                },
            );
            self.driver
                .committed((&outcome, self.hedged), &policy, limit_of(config), hooks);
        });
    }
}

/// Whether anyone hears how a call of `config` ends: a limit, `on_success`
/// or `on_give_up`, the admission limiter, metrics or tracing.
#[cfg_attr(not(debug_assertions), inline(always))]
fn listens<Res, E, C, T, A: PerAttemptAdmission<E>>(config: &RetryLayer<C, T, A>) -> bool {
    let observers = &config.calls.observers;
    config.calls.budget.is_some()
        || observers.on_success.is_some()
        || observers.on_give_up.is_some()
        || config.admission.admission::<Res>().is_some()
        || Loop::ends_are_recorded()
}

impl<S: Service<Req> + Clone, Req, L: Keys<S, Req>> ResponseFuture<S, Req, L> {
    /// The call's end, taken once after the future returned an accepted
    /// answer (and only then), unless no one hears how the call ends (no
    /// limit, no `on_success` or `on_give_up`, no admission limiter, no
    /// metrics, no tracing subscriber): the call is then reported now, as
    /// a success, and `None` is returned.
    pub(super) fn committed(self: Pin<&mut Self>) -> Option<CommittedCall<L>> {
        match self.project().call.project() {
            CallProj::Retrying { phase, retry } if !matches!(*phase, Phase::Ended { .. }) => {
                // A hedged call that returned an answer with its rest
                // boxed left that rest as its phase (`Phase::Hedged`).
                let hedged = matches!(&*phase, Phase::Hedged { .. });
                let config = retry.config.keys();
                if listens::<S::Response, S::Error, _, _, _>(config) {
                    // The admission limiter hears the call's end from the
                    // committed call, which now holds what the call holds.
                    Some(CommittedCall {
                        config: Arc::clone(&retry.config),
                        driver: core::mem::replace(&mut retry.driver, Loop::unstarted(DefaultWait::CLOCK)),
                        hedged,
                        held: core::mem::take(&mut retry.held),
                    })
                } else {
                    let request = &retry.request;
                    let key = || config.classify.admission_key(request);
                    succeeded_with(config, &mut retry.driver, hedged, key, &mut retry.held);
                    None
                }
            }
            _ => None,
        }
    }
}
