//! `ResponseFuture`: the future of one call.
//!
//! The future of one call through a [`RetryService`](crate::RetryService)
//! is polled by hand over the driver's steps (`Loop::succeeded`,
//! `Loop::failed`), as the builder's future is: no box, no clock read and
//! no span unless a key needs one. This file holds its phases and the poll
//! loop that moves between them; each other job is a file below `future/`:
//!
//! | file | job |
//! |---|---|
//! | `sending.rs` | one attempt's send: the first as called, a resend through a clone made ready |
//! | `retrying.rs` | what a retried call keeps, and the driver's decisions on its attempts |
//! | `admission.rs` | the admission limiter asked before each attempt, and a refusal |
//! | `hedge.rs` | a hedged call: its attempts side by side, and the wait before the next |
//! | `committed.rs` | the end of a call committed to an answer whose status comes later (gRPC's) |

mod admission;
mod committed;
mod hedge;
mod retrying;
mod sending;

use backoff_runtime::Instant;
use core::future::Future;
use core::ops::ControlFlow;
use core::pin::Pin;
use core::task::{Context, Poll, ready};
use core::time::Duration;
use std::sync::Arc;

use tower_service::Service;

use self::hedge::{Hedges, hedged_attempt};
use self::retrying::{Retrying, attempt_phase, bounded_by, limit_of};
use self::sending::Sending;
use crate::__grpc::RetriedCall;
use crate::classify::{Classify as _, LayerClassify};
use crate::held::AdmissionSlot;
use crate::layer::{PerAttemptAdmission, PerAttemptTimeout, RetryLayer};
use crate::resend_span::ResendSpan;
use backoff_runtime::__front_end::Charged;
use backoff_runtime::__front_end::DefaultWait;
use backoff_runtime::__front_end::{CallNonce, Loop, NestedAttempt, Timed};
use backoff_runtime::StopReason;
use backoff_runtime::limits::{Refused, RetryLimit};

pub use self::committed::CommittedCall;

pin_project_lite::pin_project! {
    /// What a retried call is doing. Each attempt is bracketed for nested
    /// retries ([`NestedAttempt`]).
    #[project = PhaseProj]
    enum Phase<S, Req, F, R> {
        /// The first attempt runs: the inner service's call, as made.
        First { #[pin] attempt: NestedAttempt<F> },
        /// A resend runs (a service clone made ready, then called), in its
        /// `resend` span when a subscriber sees it: entered on each of its
        /// polls, closed when it ends.
        Resending { #[pin] attempt: NestedAttempt<Sending<S, Req, F>>, span: Option<ResendSpan> },
        /// An attempt runs under the layer's per-attempt timeout (only with
        /// [`RetryLayer::timeout`](crate::RetryLayer::timeout)), a
        /// resend in its span.
        Timed { #[pin] attempt: NestedAttempt<Timed<Sending<S, Req, F>, R>>, span: Option<ResendSpan> },
        /// The schedule's wait before the next attempt, of a layer without a
        /// budget (a phase of its own: the happy path's drop glue stays
        /// that of a call that keeps no charge).
        Sleeping { #[pin] pending: DefaultWait },
        /// The schedule's wait before the next attempt of a layer with a
        /// budget, and the retry the budget allowed for it (given back if
        /// the call is dropped before it is sent).
        SleepingCharged { #[pin] pending: DefaultWait, charge: Option<BudgetCharge> },
        /// The wait the layer's admission limiter asked for before the next
        /// attempt (only with
        /// [`RetryLayer::admission`](crate::RetryLayer::admission)), and
        /// the retry the budget allowed for it; the call's hold says where
        /// that attempt's admission stands.
        Admitting { #[pin] pending: DefaultWait, charge: Option<BudgetCharge> },
        /// The admission limiter refused the next attempt: the call ends
        /// with this result (`E::from(Refused)`) of its refusal.
        Refused { result: fn(Refused) -> R, refusal: Refused },
        /// A hedged call (only with
        /// [`RetryLayer::hedge_after`](crate::RetryLayer::hedge_after))
        /// past its first attempt alone: its attempts running side by side,
        /// and the wait before the next. Boxed: a call that does not hedge
        /// keeps its future's size.
        Hedged { hedges: Pin<Box<Hedges<NestedAttempt<Timed<Sending<S, Req, F>, R>>>>> },
        /// A hedged call's first attempt, in place, and the rest of the
        /// call (its hedges and the delay's wait), boxed when first needed:
        /// a call answered before the delay allocates nothing.
        HedgedFirst {
            #[pin]
            attempt: NestedAttempt<Timed<Sending<S, Req, F>, R>>,
            rest: Option<Pin<Box<Hedges<NestedAttempt<Timed<Sending<S, Req, F>, R>>>>>>,
        },
        /// The call gave up (or was refused), for this reason.
        Ended { stopped: Option<StopReason> },
    }
}

pin_project_lite::pin_project! {
    /// One call: a request that may not be sent twice, or its retries.
    #[project = CallProj]
    enum Call<S, Req, L, F, R>
    where
        L: AdmissionSlot,
    {
        /// A request that may not be sent twice: its one attempt, as the
        /// inner service answers it.
        Once { #[pin] response: F },
        /// A request that may be retried: what it is doing, and what it keeps.
        Retrying { #[pin] phase: Phase<S, Req, F, R>, retry: Retrying<S, Req, L> },
    }
}

/// A retry the layer's budget allowed and the call has not sent yet
/// (boxed: a wait's phase stays small, and a call that does not retry
/// never makes one).
type BudgetCharge = Box<Charged<Arc<dyn RetryLimit + Send>>>;

/// The answer of the inner service `S` to a `Req`.
type CallResult<S, Req> = Result<<S as Service<Req>>::Response, <S as Service<Req>>::Error>;

/// The phase of a retried call of `S` with `Req`.
type PhaseOf<S, Req> = Phase<S, Req, <S as Service<Req>>::Future, CallResult<S, Req>>;

/// Why a call gave up, when it did.
type Stopped = Option<StopReason>;

pin_project_lite::pin_project! {
    /// The future of a [`RetryService`](crate::RetryService) call:
    /// the retries of one request, as a named type (no box per call). It is
    /// `Send` when the inner service, its future, the request and the
    /// response are, so a layered service works behind tower's `Buffer`
    /// and from spawned tasks.
    ///
    /// The first attempt is the inner service's call made by
    /// `RetryService::call`. A request that may not be sent twice
    /// ([`Classify::may_retry`](crate::Classify::may_retry)) is that call
    /// alone; otherwise each failed attempt goes to the driver's decision,
    /// each wait is a tokio `Sleep` kept in the future, and each resend a
    /// clone of the service, made ready first.
    ///
    /// Its parameters are tower's: the inner service `S`, the request
    /// `Req`, and the layer `L` the call goes through (a
    /// [`RetryLayer<C, T, A>`](crate::RetryLayer): its classification,
    /// timeout and admission types make the checks of a layer without a
    /// timeout or a limiter compile away). It is a future when the layer's
    /// classification is one a layer makes: [`HttpRetry`](crate::HttpRetry),
    /// or a [`Classified`](crate::Classified) of yours.
    ///
    /// ```
    /// use backoff_runtime::Policy;
    /// use backoff_tower::{ResponseFuture, RetryLayer, RetryService};
    /// use tower::{Layer, Service, ServiceExt};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let backend = tower::service_fn(|_: http::Request<String>| async {
    ///     Ok::<_, std::io::Error>(http::Response::new("hello"))
    /// });
    /// let mut client = RetryLayer::new(Policy::new()).layer(backend);
    /// let request = http::Request::get("http://backend/").body(String::new()).unwrap();
    /// let future = client.ready().await.unwrap().call(request);
    /// // A named type: it can be a field, or a tower `Service::Future` of yours.
    /// fn is_named<S: Service<http::Request<String>>>(_: &ResponseFuture<S, http::Request<String>, RetryLayer>) {}
    /// is_named(&future);
    /// assert_eq!(*future.await.unwrap().body(), "hello");
    /// # }
    /// ```
    pub struct ResponseFuture<S, Req, L = RetryLayer>
    where
        S: Service<Req>,
        L: AdmissionSlot,
    {
        #[pin]
        call: Call<S, Req, L, <S as Service<Req>>::Future, CallResult<S, Req>>,
    }
}

impl<S: Service<Req>, Req, L: AdmissionSlot> core::fmt::Debug for ResponseFuture<S, Req, L> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let (retried, waiting) = match &self.call {
            Call::Once { .. } => (false, false),
            Call::Retrying { phase, .. } => (
                true,
                match phase {
                    Phase::Sleeping { .. } | Phase::SleepingCharged { .. } | Phase::Admitting { .. } => true,
                    Phase::Hedged { hedges } => hedges.is_waiting(),
                    _ => false,
                },
            ),
        };
        f.debug_struct("ResponseFuture")
            .field("retried", &retried)
            .field("waiting", &waiting)
            .finish_non_exhaustive()
    }
}

/// The layer `L` of a call of `S` with `Req`, as the future reads it: a
/// [`RetryLayer`] whose classification, timeout and admission fit the
/// service (one bound in place of four on each of the future's impls).
#[allow(
    unreachable_pub,
    reason = "sealed: the bound of the future's own impls, implemented here alone"
)]
pub trait Keys<S: Service<Req>, Req>: AdmissionSlot {
    /// The layer's classification.
    type Classify: LayerClassify<Req, S::Response, S::Error>;
    /// The layer's per-attempt timeout, or none.
    type Timeout: PerAttemptTimeout<S::Error>;
    /// The layer's admission limiter, or none: what a call holds of it is
    /// what it holds of the layer.
    type Admission: PerAttemptAdmission<S::Error> + AdmissionSlot<Held = Self::Held>;

    /// The layer's keys.
    fn keys(&self) -> &RetryLayer<Self::Classify, Self::Timeout, Self::Admission>;
}

impl<S, Req, C, T, A> Keys<S, Req> for RetryLayer<C, T, A>
where
    S: Service<Req>,
    C: LayerClassify<Req, S::Response, S::Error>,
    T: PerAttemptTimeout<S::Error>,
    A: PerAttemptAdmission<S::Error>,
{
    type Classify = C;
    type Timeout = T;
    type Admission = A;

    #[cfg_attr(not(debug_assertions), inline(always))]
    fn keys(&self) -> &Self {
        self
    }
}

impl<S: Service<Req> + Clone, Req, L: Keys<S, Req>> ResponseFuture<S, Req, L> {
    /// The call of `request` on `service`, which `poll_ready` made ready.
    #[inline]
    pub(crate) fn start(service: &mut S, layer: &Arc<L>, request: Req) -> Self {
        let config = layer.keys();
        if !config.classify.may_retry(&request) {
            return ResponseFuture {
                call: Call::Once {
                    response: service.call(request),
                },
            };
        }
        let bounded;
        let policy = match config.classify.deadline(&request) {
            None => &config.calls.policy,
            Some(deadline) => {
                bounded = bounded_by(&config.calls.policy, deadline);
                &bounded
            }
        };
        let driver = if config.calls.reads_start || policy.get_max_elapsed().is_some() {
            Loop::start(DefaultWait::CLOCK, Some(policy), limit_of(config), true)
        } else {
            Loop::unstarted(DefaultWait::CLOCK)
        };
        let start = match driver.start_instant() {
            None if L::Classify::READS_ATTEMPT_TIME => Some(DefaultWait::CLOCK.now()),
            start => start,
        };
        let call = CallNonce::next();
        let mut held = L::Held::default();
        if let Some(refused) = admission::asks_first::<S, Req, _, _, _>(config, &request, &mut held) {
            let retry = Retrying::new(service, layer, request, (driver, held), call, start, 0);
            return retry.held(refused);
        }
        let first = call.nth_attempt(policy, start, DefaultWait::CLOCK, 1);
        let response = service.call(config.classify.replay(&request, &first));
        let phase = if config.calls.hedge_after.is_some() {
            Phase::HedgedFirst {
                attempt: hedged_attempt(config, &driver, policy, Sending::Called { response }),
                rest: None,
            }
        } else if config.timeout.timeout::<S::Response>().is_none() {
            Phase::First {
                attempt: NestedAttempt::new(response),
            }
        } else {
            attempt_phase(config, &driver, policy, Sending::Called { response }, None)
        };
        let retry = Retrying::new(service, layer, request, (driver, held), call, start, 1);
        ResponseFuture {
            call: Call::Retrying { phase, retry },
        }
    }
}

/// What `backoff-grpc` starts and reads of a call ([`RetriedCall`]).
impl<S, Req, C, T, A> RetriedCall<S, Req> for ResponseFuture<S, Req, RetryLayer<C, T, A>>
where
    S: Service<Req> + Clone,
    C: LayerClassify<Req, S::Response, S::Error>,
    T: PerAttemptTimeout<S::Error>,
    A: PerAttemptAdmission<S::Error>,
{
    type Layer = RetryLayer<C, T, A>;

    #[inline]
    fn start(service: &mut S, layer: &Arc<Self::Layer>, request: Req) -> Self {
        ResponseFuture::start(service, layer, request)
    }

    fn retried(&self) -> Option<(&Req, u32, Duration)> {
        match &self.call {
            Call::Once { .. } => None,
            Call::Retrying { retry, .. } => Some((&retry.request, retry.number.saturating_sub(1), retry.waited)),
        }
    }

    fn stopped_by(&self) -> Option<StopReason> {
        match &self.call {
            Call::Retrying {
                phase: Phase::Ended { stopped },
                ..
            } => *stopped,
            _ => None,
        }
    }

    fn started_at(&self) -> Option<Instant> {
        match &self.call {
            Call::Once { .. } => None,
            Call::Retrying { retry, .. } => retry.driver.start_instant().or(retry.start),
        }
    }

    fn hedged(&self) -> bool {
        match &self.call {
            Call::Once { .. } => false,
            Call::Retrying { retry, .. } => retry.config.calls.hedge_after.is_some(),
        }
    }

    fn committed_call(self: Pin<&mut Self>) -> Option<CommittedCall<Self::Layer>> {
        self.committed()
    }
}

impl<S: Service<Req> + Clone, Req, C, T, A> Future for ResponseFuture<S, Req, RetryLayer<C, T, A>>
where
    C: LayerClassify<Req, S::Response, S::Error>,
    T: PerAttemptTimeout<S::Error>,
    A: PerAttemptAdmission<S::Error>,
{
    type Output = Result<S::Response, S::Error>;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let (mut phase, retry) = match self.project().call.project() {
            CallProj::Once { response } => return response.poll(cx),
            CallProj::Retrying { phase, retry } => (phase, retry),
        };
        loop {
            let (result, below) = match phase.as_mut().project() {
                PhaseProj::First { attempt } => ready!(attempt.poll(cx)),
                PhaseProj::Resending { attempt, span } => {
                    ready!(ResendSpan::around(span.as_ref(), || attempt.poll(cx)))
                }
                PhaseProj::HedgedFirst { attempt, rest } => {
                    let mut first_ended = false;
                    let polled = retry.poll_hedged_first(attempt, rest, &mut first_ended, cx);
                    // The first attempt ended (or the call did): the rest
                    // becomes the phase, and the first is dropped.
                    if first_ended || polled.is_ready() {
                        if let Some(hedges) = rest.take() {
                            phase.set(Phase::Hedged { hedges });
                        }
                    }
                    let (result, stopped) = ready!(polled);
                    if stopped.is_some() {
                        phase.set(Phase::Ended { stopped });
                    }
                    return Poll::Ready(result);
                }
                PhaseProj::Timed { attempt, span } => ready!(ResendSpan::around(span.as_ref(), || attempt.poll(cx))),
                PhaseProj::Sleeping { pending } => {
                    ready!(pending.poll(cx));
                    let next = retry.resend(None);
                    phase.set(next);
                    continue;
                }
                PhaseProj::SleepingCharged { pending, charge } | PhaseProj::Admitting { pending, charge } => {
                    ready!(pending.poll(cx));
                    let charge = charge.take();
                    let next = retry.resend(charge);
                    phase.set(next);
                    continue;
                }
                PhaseProj::Refused { result, refusal } => {
                    let (result, stopped) = retry.refused(*result, *refusal);
                    phase.set(Phase::Ended { stopped });
                    return Poll::Ready(result);
                }
                PhaseProj::Hedged { hedges } => {
                    let (result, stopped) = ready!(retry.poll_hedged(hedges.as_mut(), (None, &mut false), None, cx));
                    if stopped.is_some() {
                        phase.set(Phase::Ended { stopped });
                    }
                    return Poll::Ready(result);
                }
                PhaseProj::Ended { .. } => return Poll::Pending,
            };
            let outcome = match result {
                Ok(response) if !retry.config.classify.retry_response(&response) => {
                    // An answer whose status comes later is reported
                    // through the call's `CommittedCall`.
                    if !C::ENDS_LATER {
                        retry.succeeded();
                    }
                    return Poll::Ready(Ok(response));
                }
                outcome => outcome,
            };
            match retry.failed(outcome, below) {
                (ControlFlow::Break(result), stopped) => {
                    phase.set(Phase::Ended { stopped });
                    return Poll::Ready(result);
                }
                (ControlFlow::Continue(wait), _) => {
                    retry.waited = retry.waited.saturating_add(wait);
                    let pending = DefaultWait::start(wait);
                    phase.set(match retry.take_charge() {
                        None => Phase::Sleeping { pending },
                        charge => Phase::SleepingCharged { pending, charge },
                    });
                }
            }
        }
    }
}
