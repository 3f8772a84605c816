//! `ResponseFuture`: the future of one call.
//!
//! The future of one call through a [`RetryService`](crate::RetryService),
//! polled by hand over the driver's steps (`Loop::succeeded`, `Loop::failed`),
//! as the builder's future is: no box, no clock read and no span unless a key
//! needs one.

use backoff_runtime::Instant;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll, ready};
use core::time::Duration;
use std::sync::Arc;

use tower_service::Service;

use crate::classify::Classify;
use crate::held::AdmissionSlot;
use crate::http::HttpRetry;
use crate::layer::{NoAdmission, NoTimeout, PerAttemptAdmission, PerAttemptTimeout, RetryLayer};
use backoff_runtime::__front_end::AttemptSource;
use backoff_runtime::__front_end::CallNonce;
use backoff_runtime::__front_end::Hooks;
use backoff_runtime::__front_end::NestedAttempt;
use backoff_runtime::__front_end::Timed;
use backoff_runtime::__front_end::{Admitting, DefaultWait, refusal_of};
use backoff_runtime::__front_end::{Charged, Limit};
use backoff_runtime::__front_end::{Clock, InlineTimer, Timer};
use backoff_runtime::__front_end::{HedgeAttempts, HedgeStep, Hedging as HedgeCall};
use backoff_runtime::__front_end::{Loop, Step, Waits};
use backoff_runtime::__front_end::{ResendSpan, in_resend_span, resend_span};
use backoff_runtime::Policy;
use backoff_runtime::StopReason;
use backoff_runtime::limits::Refused;
use backoff_runtime::limits::{Admission, RetryLimit};
use backoff_runtime::{GiveUp, RetryEvent, Success};

pin_project_lite::pin_project! {
    /// One attempt's send: the first is called at once (by
    /// `RetryService::call`, on the service `poll_ready` made ready); each
    /// resend owns a clone of the service, made ready before it is called
    /// (tower's rule for a service used more than once), so its readiness
    /// counts toward the per-attempt timeout as the call does.
    #[project = SendingProj]
    enum Sending<S, Req, F> {
        /// The inner service was called: its future.
        Called { #[pin] response: F },
        /// A clone of the service, being made ready for `request`.
        Readying { service: S, request: Option<Req> },
    }
}

impl<S, Req, F> Future for Sending<S, Req, F>
where
    S: Service<Req, Future = F>,
    F: Future<Output = Result<S::Response, S::Error>>,
{
    type Output = F::Output;

    #[inline]
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        loop {
            match self.as_mut().project() {
                SendingProj::Called { response } => return response.poll(cx),
                SendingProj::Readying { service, request } => {
                    ready!(service.poll_ready(cx))?;
                    // Taken once: the phase changes to `Called` below.
                    let Some(request) = request.take() else {
                        return Poll::Pending;
                    };
                    let response = service.call(request);
                    self.set(Sending::Called { response });
                }
            }
        }
    }
}

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
        /// The wait before the next attempt, and the retry the budget
        /// allowed for it (given back if the call is dropped first).
        Sleeping { #[pin] pending: DefaultWait },
        /// The wait before the next attempt of a layer with a budget, and
        /// the retry the budget allowed for it (given back if the call is
        /// dropped before it is sent).
        SleepingCharged { #[pin] pending: DefaultWait, charge: Option<BudgetCharge> },
        /// The wait the layer's admission limiter asked for before the next
        /// attempt (only with
        /// [`RetryLayer::admission`](crate::RetryLayer::admission));
        /// the call's hold says where that attempt's admission stands.
        Admitting { #[pin] pending: DefaultWait, charge: Option<BudgetCharge> },
        /// The admission limiter refused the next attempt: the call ends
        /// with this result (`E::from(Refused)`) of its answer.
        Refused { result: fn(Refused) -> R, answer: Admission },
        /// A hedged call (only with
        /// [`RetryLayer::hedge_after`](crate::RetryLayer::hedge_after))
        /// past its first attempt alone: its attempts running side by side,
        /// and the wait before the next. Boxed: a call that does not hedge
        /// keeps its future's size.
        Hedging { hedged: Pin<Box<Hedging<NestedAttempt<Timed<Sending<S, Req, F>, R>>>>> },
        /// A hedged call's first attempt, in place, and the rest of the
        /// call (its hedges and the delay's wait), boxed when first needed:
        /// a call answered before the delay allocates nothing.
        HedgedFirst {
            #[pin]
            attempt: NestedAttempt<Timed<Sending<S, Req, F>, R>>,
            rest: Option<Pin<Box<Hedging<NestedAttempt<Timed<Sending<S, Req, F>, R>>>>>>,
        },
        /// The call gave up (or was refused), for this reason.
        Ended { stopped: Option<StopReason> },
    }
}

pin_project_lite::pin_project! {
    /// A hedged call's attempts running side by side, and the wait before
    /// the next.
    #[project = HedgingProj]
    struct Hedging<A> {
        #[pin]
        attempts: HedgeAttempts<A>,
        #[pin]
        pending: Option<DefaultWait>,
        // Where the next attempt stands.
        state: HedgeState,
        // The retry (or hedge) the budget allowed for the next attempt,
        // given back if the call is dropped before it is sent.
        charge: Option<BudgetCharge>,
    }
}

pin_project_lite::pin_project! {
    /// One call: a request that may not be sent twice, or its retries.
    #[project = CallProj]
    enum Call<S, Req, C, T, A, F, R>
    where
        A: AdmissionSlot,
    {
        /// A request that may not be sent twice: its one attempt, as the
        /// inner service answers it.
        Once { #[pin] response: F },
        /// A request that may be retried: what it is doing, and what it keeps.
        Retrying { #[pin] phase: Phase<S, Req, F, R>, retry: Retrying<S, Req, C, T, A> },
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

/// A call of `S` with `Req`, retried with `C`, `T` and `A`.
type CallOf<S, Req, C, T, A> = Call<S, Req, C, T, A, <S as Service<Req>>::Future, CallResult<S, Req>>;

/// What a retried call keeps besides its phase: the layer's keys, the
/// caller's request (each attempt sends a replay of it), a clone of the
/// service for the resends, the driver's state, and what each attempt's
/// [`Attempt`](backoff_runtime::Attempt) is made from.
struct Retrying<S, Req, C, T, A: AdmissionSlot> {
    config: Arc<RetryLayer<C, T, A>>,
    request: Req,
    service: S,
    driver: Loop,
    /// The call's nonce (its invocation id), the same for every attempt.
    call: CallNonce,
    /// The call's start as the attempts see it (unread when neither a key
    /// nor the classification needs it).
    start: Option<Instant>,
    /// The number of the attempt last started (1-based).
    number: u32,
    /// The waits so far, together.
    waited: Duration,
    /// How a wait starts: its `DefaultWait` is kept in [`Phase::Sleeping`]
    /// (or `SleepingCharged`, `Admitting`).
    timer: InlineTimer,
    /// What the call holds of the admission limiter (nothing without one),
    /// given back when the call is dropped.
    held: A::Held,
}

/// What starts a hedged call's next attempt when its wait ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum HedgeNext {
    /// The hedge delay: the next attempt asks the budget first.
    Hedge,
    /// A failure's wait (the budget already allowed it).
    Retry,
}

/// Where a hedged call's next attempt stands.
#[derive(Clone, Copy, Debug, Default)]
struct HedgeState {
    /// What starts an attempt when the pending wait ends.
    next: Option<HedgeNext>,
    /// An attempt starts on the next poll.
    start_now: bool,
    /// No hedge starts any more (a stop rule held while others ran).
    no_more: bool,
    /// The server refused a retry: no attempt follows any more.
    server_refused: bool,
    /// The hedge delay's wait is still to start: it starts when the
    /// attempts are first found running (a call answered at once makes no
    /// timer).
    arm_hedge: bool,
}

pin_project_lite::pin_project! {
    /// The future of a [`RetryService`](crate::RetryService) call:
    /// the retries of one request, as a named type (no box per call). It is
    /// `Send` when the inner service, its future, the request and the
    /// response are, so a layered service works behind tower's `Buffer`
    /// and from spawned tasks.
    ///
    /// The first attempt is the inner service's call made by
    /// `RetryService::call`. A request that may not be sent twice
    /// ([`Classify::may_retry`]) is that call alone; otherwise each failed
    /// attempt goes to the driver's decision, each wait is a tokio `Sleep`
    /// kept in the future, and each resend a clone of the service, made
    /// ready first.
    ///
    /// ```
    /// use backoff_runtime::Policy;
    /// use backoff_tower::{HttpRetry, ResponseFuture, RetryLayer, RetryService};
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
    /// fn is_named<S: Service<http::Request<String>>>(_: &ResponseFuture<S, http::Request<String>, HttpRetry>) {}
    /// is_named(&future);
    /// assert_eq!(*future.await.unwrap().body(), "hello");
    /// # }
    /// ```
    pub struct ResponseFuture<S, Req, C = HttpRetry, T = NoTimeout, A = NoAdmission>
    where
        S: Service<Req>,
        A: AdmissionSlot,
    {
        #[pin]
        call: CallOf<S, Req, C, T, A>,
    }
}

impl<S: Service<Req>, Req, C, T, A: AdmissionSlot> core::fmt::Debug for ResponseFuture<S, Req, C, T, A> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let (retried, waiting) = match &self.call {
            Call::Once { .. } => (false, false),
            Call::Retrying { phase, .. } => (
                true,
                match phase {
                    Phase::Sleeping { .. } | Phase::SleepingCharged { .. } | Phase::Admitting { .. } => true,
                    Phase::Hedging { hedged } => hedged.attempts.is_empty(),
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

/// The policy of a call with its own `deadline` (a gRPC call's): the
/// layer's, with `max_elapsed` no later than the deadline.
#[cold]
fn bounded_by(policy: &Policy, deadline: Duration) -> Policy {
    let limit = policy
        .get_max_elapsed()
        .map_or(deadline, |max_elapsed| max_elapsed.min(deadline));
    policy.max_elapsed(limit)
}

/// The layer's limit, as the driver borrows it.
#[cfg_attr(not(debug_assertions), inline(always))]
fn limit_of<C, T, A>(config: &RetryLayer<C, T, A>) -> Option<Limit<'_>> {
    config.calls.budget.as_ref().map(Limit::of)
}

impl<S: Service<Req>, Req, C, T, A: AdmissionSlot> ResponseFuture<S, Req, C, T, A> {
    /// The call of `request` on `service`, which `poll_ready` made ready.
    #[inline]
    pub fn start(service: &mut S, config: &Arc<RetryLayer<C, T, A>>, request: Req) -> Self
    where
        S: Clone,
        C: Classify<Req, S::Response, S::Error>,
        T: PerAttemptTimeout<S::Error>,
        A: PerAttemptAdmission<S::Error>,
    {
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
            Loop::start(Clock::ASYNC, Some(policy), limit_of(config), true)
        } else {
            Loop::unstarted(Clock::ASYNC)
        };
        let start = match driver.start_instant() {
            None if C::READS_ATTEMPT_TIME => Some(Clock::ASYNC.now()),
            start => start,
        };
        let call = CallNonce::next();
        let mut held = A::Held::default();
        if let (Some((_, refused)), Some((slot, hold))) = (
            config.admission.admission::<S::Response>(),
            config.admission.hold(&mut held),
        ) {
            let key = || config.classify.admission_key(&request);
            let answer = hold.with(slot, 0, key, |admitting| admitting.ask());
            if answer != Admission::Go {
                return Retrying::new(service, config, request, (driver, held), call, start, 0).held(answer, refused);
            }
        }
        let first = AttemptSource::nth(policy, call, start, Clock::ASYNC, 1);
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
        let retry = Retrying::new(service, config, request, (driver, held), call, start, 1);
        ResponseFuture {
            call: Call::Retrying { phase, retry },
        }
    }

    /// The caller's request, the retries made and the waits before them
    /// together, of a call that may be retried (gRPC's per-call metrics).
    pub fn retried(&self) -> Option<(&Req, u32, Duration)> {
        match &self.call {
            Call::Once { .. } => None,
            Call::Retrying { retry, .. } => Some((&retry.request, retry.number.saturating_sub(1), retry.waited)),
        }
    }

    /// Why the call gave up, once it has (`None` while it runs, after a
    /// success, and for a call that may not be retried).
    #[doc(hidden)]
    pub fn stopped_by(&self) -> Option<StopReason> {
        match &self.call {
            Call::Retrying {
                phase: Phase::Ended { stopped },
                ..
            } => *stopped,
            _ => None,
        }
    }

    /// The call's start, when it was read (a deadline, `max_elapsed`, a
    /// limit or a hook needs it).
    #[doc(hidden)]
    pub fn started_at(&self) -> Option<Instant> {
        match &self.call {
            Call::Once { .. } => None,
            Call::Retrying { retry, .. } => retry.driver.start_instant().or(retry.start),
        }
    }

    /// Whether the call hedges ([`RetryLayer::hedge_after`](crate::RetryLayer::hedge_after)).
    #[doc(hidden)]
    pub fn hedged(&self) -> bool {
        match &self.call {
            Call::Once { .. } => false,
            Call::Retrying { retry, .. } => retry.config.calls.hedge_after.is_some(),
        }
    }

    /// The call's settlement, taken once after the future returned an
    /// accepted response (and only then), unless no one hears how the call
    /// ends (no limit, no `on_success` or `on_give_up`, no admission
    /// limiter, no metrics, no tracing subscriber): the call is then
    /// settled now, as a success, and no settlement is made.
    #[doc(hidden)]
    pub fn settle_unheard<Res, E>(self: Pin<&mut Self>) -> Option<Settlement<C, T, A>>
    where
        C: Classify<Req, Res, E>,
        A: PerAttemptAdmission<E>,
    {
        match self.project().call.project() {
            CallProj::Retrying { phase, retry } if !matches!(*phase, Phase::Ended { .. }) => {
                // A hedged call that returned an answer with its rest
                // boxed left that rest as its phase (`Phase::Hedging`).
                let hedged = matches!(&*phase, Phase::Hedging { .. });
                let config = &retry.config;
                if listens::<Res, E, C, T, A>(config) {
                    // The admission limiter hears the call's end from the
                    // settlement, which now holds what the call holds.
                    Some(Settlement {
                        config: Arc::clone(config),
                        driver: core::mem::replace(&mut retry.driver, Loop::unstarted(Clock::ASYNC)),
                        hedged,
                        held: core::mem::take(&mut retry.held),
                    })
                } else {
                    let request = &retry.request;
                    let key = || config.classify.admission_key(request);
                    succeeded_with::<E, C, T, A>(config, &mut retry.driver, hedged, key, &mut retry.held);
                    None
                }
            }
            _ => None,
        }
    }
}

/// The end of a call whose accepted response is settled when its body ends
/// (a gRPC response: its status is in its trailers): the call's loop and
/// the layer's keys, to report the call once its outcome is known.
/// Dropped unused (the caller dropped the body), it reports nothing but
/// to the admission limiter, which hears the attempt as abandoned (the
/// hold it keeps gives it back).
pub struct Settlement<C, T, A: AdmissionSlot> {
    config: Arc<RetryLayer<C, T, A>>,
    driver: Loop,
    /// The call hedged past its first attempt: every attempt after the
    /// first is a hedge.
    hedged: bool,
    /// What the call holds of the admission limiter: the answered attempt
    /// (and a hedged call's others), until the limiter hears its end.
    held: A::Held,
}

impl<C, T, A: AdmissionSlot> core::fmt::Debug for Settlement<C, T, A> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Settlement").finish_non_exhaustive()
    }
}

impl<C, T, A: AdmissionSlot> Settlement<C, T, A> {
    /// The call succeeded: the limit gets its tokens back, and metrics,
    /// tracing and `on_success` hear of it.
    pub fn succeeded<Res, E>(mut self)
    where
        A: PerAttemptAdmission<E>,
    {
        let Settlement {
            config,
            driver,
            hedged,
            held,
        } = &mut self;
        succeeded_with::<E, C, T, A>(config, driver, *hedged, || None, held);
    }

    /// The call failed with `outcome` at its end (its trailers' status):
    /// the limit counts it when the classification retries it, and it is
    /// reported as a give-up ([`StopReason::Committed`] when retryable).
    pub fn failed<Req, Res, E>(mut self, outcome: Result<Res, E>)
    where
        C: Classify<Req, Res, E>,
        A: PerAttemptAdmission<E>,
    {
        let Settlement {
            config,
            driver,
            hedged,
            held,
        } = &mut self;
        let config = &**config;
        let policy = config.calls.policy;
        let stopped = core::cell::Cell::new(None);
        with_hooks::<Req, Res, E, C, T, A, ()>(config, &stopped, |hooks| {
            tell_limiter::<A, _>(
                &config.admission,
                held,
                1,
                || None,
                |admitting| {
                    admitting.observed(hooks.attempt_end(Clock::ASYNC, Err(&outcome)));
                    admitting.abandon_open();
                },
            );
            driver.committed((&outcome, *hedged), &policy, limit_of(config), hooks);
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
        || backoff_runtime::__front_end::ends_are_recorded()
}

/// The attempt that just ended was accepted: the limit gets its tokens
/// back, and metrics, tracing and `on_success` hear of it when they listen.
#[cfg_attr(not(debug_assertions), inline(always))]
fn succeeded_with<'k, E, C, T, A: PerAttemptAdmission<E>>(
    config: &RetryLayer<C, T, A>,
    driver: &mut Loop,
    hedged: bool,
    key: impl FnOnce() -> Option<&'k str>,
    held: &mut A::Held,
) {
    let on_success = config
        .calls
        .observers
        .on_success
        .as_deref()
        .map(|hook| hook as &dyn Fn(&Success));
    // A hedged call's other attempts were cancelled: abandoned.
    tell_limiter::<A, _>(&config.admission, held, 0, key, |admitting| {
        admitting.succeeded();
        admitting.abandon_open();
    });
    if hedged {
        driver.succeeded_hedged(limit_of(config), &config.calls.site, on_success);
    } else {
        driver.succeeded(limit_of(config), &config.calls.site, on_success);
    }
}

/// Runs `tell` with the call's view of the layer's admission limiter
/// (none without one), through what the call holds of it (`held`), after
/// `attempts` attempts; `key` gives the call's key the first time.
#[cfg_attr(not(debug_assertions), inline(always))]
fn tell_limiter<'k, A: AdmissionSlot, R>(
    admission: &A,
    held: &mut A::Held,
    attempts: u32,
    key: impl FnOnce() -> Option<&'k str>,
    tell: impl FnOnce(&mut Admitting<'_>) -> R,
) -> Option<R> {
    let (slot, hold) = admission.hold(held)?;
    Some(hold.with(slot, attempts, key, tell))
}

/// Runs `run` with the layer's classification and hooks lent as
/// [`Hooks`]; the reason of a give-up they report goes to `stopped`.
#[inline]
fn with_hooks<Req, Res, E, C, T, A, Out>(
    config: &RetryLayer<C, T, A>,
    stopped: &core::cell::Cell<Option<StopReason>>,
    run: impl FnOnce(&Hooks<'_, Res, E, Result<Res, E>>) -> Out,
) -> Out
where
    C: Classify<Req, Res, E>,
{
    let classify = &config.classify;
    let observers = &config.calls.observers;
    let retry_if = |error: &E| classify.retry_error(error);
    let retry_after = |error: &E| classify.error_hint(error);
    let retry_if_ok = |response: &Res| classify.retry_response(response);
    let retry_after_ok = |response: &Res| classify.response_hint(response);
    let pushback = |error: &E| classify.pushback(error);
    let on_retry = |_: &Result<Res, E>, event: &RetryEvent| {
        if let Some(hook) = &observers.on_retry {
            hook(event);
        }
    };
    let on_give_up = |_: &Result<Res, E>, give_up: &GiveUp| {
        stopped.set(Some(give_up.reason()));
        if let Some(hook) = &observers.on_give_up {
            hook(give_up);
        }
    };
    let mut hooks = Hooks::new()
        .retry_if(&retry_if)
        .retry_after(&retry_after)
        .retry_if_ok(&retry_if_ok)
        .retry_after_ok(&retry_after_ok)
        .pushback(&pushback)
        .values_are_failures(true)
        .at(&config.calls.site)
        .on_give_up(&on_give_up);
    if let Some(report) = classify.report() {
        hooks = hooks.report_with(report);
    }
    if observers.on_retry.is_some() {
        hooks = hooks.on_retry(&on_retry);
    }
    if let Some(on_success) = &observers.on_success {
        hooks = hooks.on_success(&**on_success);
    }
    run(&hooks)
}

/// The phase of an attempt that sends with `sending`: under the layer's
/// per-attempt timeout when it has one (never past `max_elapsed`, measured
/// by `driver` on `policy`), in `span` when it is a resend someone sees.
#[cfg_attr(not(debug_assertions), inline(always))]
fn attempt_phase<S, Req, C, T, A>(
    config: &RetryLayer<C, T, A>,
    driver: &Loop,
    policy: &Policy,
    sending: Sending<S, Req, S::Future>,
    span: Option<ResendSpan>,
) -> PhaseOf<S, Req>
where
    S: Service<Req>,
    T: PerAttemptTimeout<S::Error>,
{
    match config.timeout.timeout() {
        None => Phase::Resending {
            attempt: NestedAttempt::new(sending),
            span,
        },
        Some((timeout, on_elapsed)) => {
            let timeout = driver.attempt_timeout(policy, timeout);
            Phase::Timed {
                attempt: NestedAttempt::new(Timed::with_timeout_of(timeout, sending, on_elapsed)),
                span,
            }
        }
    }
}

/// One attempt of a hedged call, under the layer's per-attempt timeout
/// when it has one.
fn hedged_attempt<S, Req, C, T, A>(
    config: &RetryLayer<C, T, A>,
    driver: &Loop,
    policy: &Policy,
    sending: Sending<S, Req, S::Future>,
) -> HedgedAttempt<S, Req>
where
    S: Service<Req>,
    T: PerAttemptTimeout<S::Error>,
{
    let timed = match config.timeout.timeout() {
        None => Timed::untimed(sending),
        Some((timeout, on_elapsed)) => {
            Timed::with_timeout_of(driver.attempt_timeout(policy, timeout), sending, on_elapsed)
        }
    };
    NestedAttempt::new(timed)
}

/// The attempts of a hedged call of `S` with `Req`, and its next wait.
type HedgingOf<S, Req> = Hedging<HedgedAttempt<S, Req>>;

impl<A> Hedging<A> {
    /// The rest of a hedged call whose first attempt runs in its own
    /// phase: no other attempt yet, the next hedge after the delay.
    fn beside_first() -> Self {
        let mut state = HedgeState::default();
        next_hedge(&mut state);
        Hedging {
            attempts: HedgeAttempts::new(),
            pending: None,
            state,
            charge: None,
        }
    }
}

/// After an attempt of a hedged call starts: the next hedge follows the
/// delay, unless none may start (its wait starts when the attempts are
/// found running).
fn next_hedge(hedge: &mut HedgeState) {
    hedge.arm_hedge = !hedge.no_more;
    hedge.next = hedge.arm_hedge.then_some(HedgeNext::Hedge);
}

/// What the admission limiter made of a hedged call's next attempt.
enum HedgeAdmitted<S: Service<Req>, Req> {
    /// Send it.
    Send,
    /// Not now: a hedge dropped, or a lone attempt's wait.
    Skip,
    /// Refused, with no attempt running: the call ends with this result.
    End((CallResult<S, Req>, Stopped)),
}

/// One attempt of a hedged call of `S` with `Req`.
type HedgedAttempt<S, Req> = NestedAttempt<Timed<Sending<S, Req, <S as Service<Req>>::Future>, CallResult<S, Req>>>;

/// Why a call gave up, when it did.
type Stopped = Option<StopReason>;

/// The result a refused attempt of a call of `S` with `Req` stands for,
/// made from the refusal.
type RefusedResult<S, Req> = fn(Refused) -> CallResult<S, Req>;

impl<S, Req, C, T, A> Retrying<S, Req, C, T, A>
where
    S: Service<Req> + Clone,
    C: Classify<Req, S::Response, S::Error>,
    T: PerAttemptTimeout<S::Error>,
    A: PerAttemptAdmission<S::Error>,
{
    /// This call (no attempt sent), whose first attempt the admission
    /// limiter holds back: not sent now (the service `poll_ready` made ready is left as it is), but
    /// after the wait, through a clone made ready then, as a resend is; or
    /// never, when refused.
    #[cold]
    #[inline(never)]
    fn held(mut self, answer: Admission, refused: RefusedResult<S, Req>) -> ResponseFuture<S, Req, C, T, A> {
        let phase = self.admitted_phase(answer, refused, None);
        ResponseFuture {
            call: Call::Retrying { phase, retry: self },
        }
    }

    /// The state of a call's retries, `number` attempts sent so far, on a
    /// clone of `service`.
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn new(
        service: &S,
        config: &Arc<RetryLayer<C, T, A>>,
        request: Req,
        (driver, held): (Loop, A::Held),
        call: CallNonce,
        start: Option<Instant>,
        number: u32,
    ) -> Self {
        Retrying {
            config: Arc::clone(config),
            request,
            service: service.clone(),
            driver,
            call,
            start,
            number,
            waited: Duration::ZERO,
            timer: InlineTimer,
            held,
        }
    }

    /// Asks the admission limiter with `ask`, through what the call holds
    /// of it (`Go` without a limiter).
    fn ask_admission(&mut self, ask: impl FnOnce(&mut Admitting<'_>) -> Admission) -> Admission {
        self.with_admitting(ask).unwrap_or(Admission::Go)
    }

    /// Runs `tell` with the call's view of the admission limiter, through
    /// what the call holds of it; `None` without a limiter.
    fn with_admitting<R>(&mut self, tell: impl FnOnce(&mut Admitting<'_>) -> R) -> Option<R> {
        let Retrying {
            config,
            request,
            number,
            held,
            ..
        } = self;
        let key = || config.classify.admission_key(request);
        tell_limiter::<A, R>(&config.admission, held, *number, key, tell)
    }

    /// The retry the budget allowed last, taken out of the loop to be kept
    /// in the wait's phase until it is sent (given back if it never is).
    #[cold]
    fn take_charge(&mut self) -> Option<BudgetCharge> {
        let budget = &self.config.calls.budget;
        self.driver.take_charge_with(|| budget.clone()).map(Box::new)
    }

    /// The call's policy: the layer's, bounded by the call's own deadline
    /// when the classification gives one.
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn policy(&self) -> Policy {
        match self.config.classify.deadline(&self.request) {
            None => self.config.calls.policy,
            Some(deadline) => bounded_by(&self.config.calls.policy, deadline),
        }
    }

    /// The phase of an attempt that sends with `sending`: under the
    /// per-attempt timeout when the layer has one (never past
    /// `max_elapsed`), in `span` when it is a resend someone sees.
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn attempt(&self, sending: Sending<S, Req, S::Future>, span: Option<ResendSpan>) -> PhaseOf<S, Req> {
        attempt_phase(&self.config, &self.driver, &self.policy(), sending, span)
    }

    /// The phase after the admission limiter's `answer` for the next
    /// attempt, with where its admission then stands: sent, waiting, or
    /// refused (the call then ends with `refused()`).
    fn admitted_phase(
        &mut self,
        answer: Admission,
        refused: RefusedResult<S, Req>,
        charge: Option<BudgetCharge>,
    ) -> PhaseOf<S, Req> {
        match answer {
            Admission::Go => {
                Charged::sent_if_held(charge.map(|charge| *charge));
                self.send_next()
            }
            Admission::Wait(wait) | Admission::GoAfter(wait) => Phase::Admitting {
                pending: self.timer.start(wait),
                charge,
            },
            answer @ (Admission::Refuse | Admission::Shut(_)) => Phase::Refused {
                result: refused,
                answer,
            },
        }
    }

    /// The next attempt, after a wait (its admission standing at
    /// `progress`): asked of the admission limiter first, when the layer
    /// has one; the request replayed for it, sent through a clone of the
    /// service made ready first, in its `resend` span.
    #[cold]
    #[inline(never)]
    fn resend(&mut self, charge: Option<BudgetCharge>) -> PhaseOf<S, Req> {
        match self.config.admission.admission::<S::Response>() {
            None => {
                Charged::sent_if_held(charge.map(|charge| *charge));
                self.send_next()
            }
            Some((_, refused)) => {
                let answer = self.ask_admission(|admitting| admitting.ask());
                self.admitted_phase(answer, refused, charge)
            }
        }
    }

    /// The next attempt, admitted: the request replayed for it, sent
    /// through a clone of the service made ready first, in its `resend`
    /// span.
    fn send_next(&mut self) -> PhaseOf<S, Req> {
        let (sending, number) = self.next_sending();
        if self.config.calls.hedge_after.is_some() {
            return self.hedging(sending);
        }
        self.attempt(sending, resend_span(number))
    }

    /// The next attempt's send: the request replayed for it, through a
    /// clone of the service made ready first; and its number.
    fn next_sending(&mut self) -> (Sending<S, Req, S::Future>, u32) {
        // The retry the budget allowed for it, if any, is sent.
        self.driver.sent();
        self.number = self.number.saturating_add(1);
        let attempt = AttemptSource::nth(&self.policy(), self.call, self.start, Clock::ASYNC, self.number);
        let request = self.config.classify.replay(&self.request, &attempt);
        let sending = Sending::Readying {
            service: self.service.clone(),
            request: Some(request),
        };
        (sending, attempt.number())
    }

    /// One attempt of a hedged call, under the per-attempt timeout when
    /// the layer has one.
    fn hedged_attempt(&self, sending: Sending<S, Req, S::Future>) -> HedgedAttempt<S, Req> {
        hedged_attempt(&self.config, &self.driver, &self.policy(), sending)
    }

    /// The phase of a hedged call whose first attempt (held back by the
    /// admission limiter until now) sends with `sending`: as at the
    /// call's start, in place, the rest boxed when needed.
    fn hedging(&self, sending: Sending<S, Req, S::Future>) -> PhaseOf<S, Req> {
        Phase::HedgedFirst {
            attempt: self.hedged_attempt(sending),
            rest: None,
        }
    }

    /// A hedged call whose first attempt runs in its own phase, polled.
    /// Answered and accepted at once, the call ends with nothing boxed;
    /// otherwise the rest of the call (`hedging`) is boxed now and the
    /// attempts are polled together ([`poll_hedged`](Self::poll_hedged)).
    #[inline(never)]
    fn poll_hedged_first(
        &mut self,
        mut first: Pin<&mut HedgedAttempt<S, Req>>,
        hedging: &mut Option<Pin<Box<HedgingOf<S, Req>>>>,
        first_ended: &mut bool,
        cx: &mut Context<'_>,
    ) -> Poll<(CallResult<S, Req>, Stopped)> {
        let mut ended = None;
        if hedging.is_none() {
            match first.as_mut().poll(cx) {
                Poll::Ready((Ok(response), _)) if !self.config.classify.retry_response(&response) => {
                    // A response that ends later is settled through the
                    // call's `Settlement`.
                    if !self.config.classify.ends_later(&response) {
                        // The first attempt: no hedge yet.
                        self.succeeded_hedged(false);
                    }
                    return Poll::Ready((Ok(response), None));
                }
                Poll::Ready(outcome) => {
                    *first_ended = true;
                    ended = Some(outcome);
                }
                Poll::Pending => {}
            }
        }
        let hedged = hedging.get_or_insert_with(|| Box::pin(Hedging::beside_first()));
        let first = if *first_ended { None } else { Some(first) };
        self.poll_hedged(hedged.as_mut(), (first, first_ended), ended, cx)
    }

    /// A hedged call, polled: its attempts side by side and the wait
    /// before the next, until an attempt's answer is accepted or the
    /// driver ends the call.
    ///
    /// `first` is the call's first attempt while it runs in its own phase
    /// (`first_ended` is set when it ends); `ended` an attempt that ended
    /// before this poll, decided on first.
    #[cold]
    #[inline(never)]
    fn poll_hedged(
        &mut self,
        hedged: Pin<&mut Hedging<HedgedAttempt<S, Req>>>,
        (mut first, first_ended): (Option<Pin<&mut HedgedAttempt<S, Req>>>, &mut bool),
        mut ended: Option<(CallResult<S, Req>, bool)>,
        cx: &mut Context<'_>,
    ) -> Poll<(CallResult<S, Req>, Stopped)> {
        let HedgingProj {
            mut attempts,
            mut pending,
            state: hedge,
            charge,
        } = hedged.project();
        loop {
            if core::mem::take(&mut hedge.start_now) {
                let alone = attempts.is_empty() && first.is_none();
                let admitted = self.admit_hedge(hedge, alone, pending.as_mut(), charge);
                if let HedgeAdmitted::End(result) = admitted {
                    return Poll::Ready(result);
                }
                if let HedgeAdmitted::Send = admitted {
                    let (sending, _) = self.next_sending();
                    let attempt = self.hedged_attempt(sending);
                    attempts.as_mut().push(attempt);
                    pending.set(None);
                    next_hedge(hedge);
                }
            }
            let polled = match (ended.take(), first.as_mut().map(|attempt| attempt.as_mut().poll(cx))) {
                (Some(ended), _) => Poll::Ready(Some(ended)),
                (None, Some(Poll::Ready(ended))) => {
                    first = None;
                    *first_ended = true;
                    Poll::Ready(Some(ended))
                }
                (None, _) => attempts.as_mut().poll_next(cx),
            };
            if let Poll::Ready(Some((result, below))) = polled {
                let others_run = !attempts.is_empty() || first.is_some();
                let outcome = match result {
                    Ok(response) if !self.config.classify.retry_response(&response) => {
                        // The others are cancelled before the call returns.
                        attempts.as_mut().clear();
                        // A response that ends later is settled through
                        // the call's `Settlement`.
                        if !self.config.classify.ends_later(&response) {
                            self.succeeded_hedged(true);
                        }
                        return Poll::Ready((Ok(response), None));
                    }
                    outcome => outcome,
                };
                if others_run && !self.config.classify.may_resend(&self.request) {
                    // Past the replay cap (A6): the call is committed to
                    // the attempts still running, which have sent the
                    // most; this one lost its body. No hedge follows.
                    hedge.no_more = true;
                    continue;
                }
                let hedging = HedgeCall {
                    others_run,
                    may_follow: !hedge.server_refused,
                };
                let (step, stopped) = self.hedge_failed(outcome, below, hedging);
                match step {
                    HedgeStep::Return(result) => {
                        attempts.as_mut().clear();
                        self.abandon_open();
                        return Poll::Ready((result, stopped));
                    }
                    HedgeStep::Next(wait) if wait.is_zero() => {
                        hedge.arm_hedge = false;
                        hedge.start_now = true;
                    }
                    HedgeStep::Next(wait) => {
                        hedge.arm_hedge = false;
                        pending.set(Some(self.timer.start(wait)));
                        hedge.next = Some(HedgeNext::Retry);
                        *charge = self.take_charge();
                    }
                    HedgeStep::Await { server_refused } => {
                        hedge.server_refused |= server_refused;
                        hedge.no_more = true;
                        if hedge.next == Some(HedgeNext::Hedge) {
                            hedge.arm_hedge = false;
                            pending.set(None);
                            hedge.next = None;
                        }
                    }
                }
                continue;
            }
            // The hedge delay's wait starts now that the attempts are
            // found running.
            if core::mem::take(&mut hedge.arm_hedge) {
                let delay = self.config.calls.hedge_after.unwrap_or_default();
                pending.set(Some(self.timer.start(delay)));
            }
            let Some(wait) = pending.as_mut().as_pin_mut() else {
                return Poll::Pending;
            };
            ready!(self.timer.poll_wait(wait, cx));
            pending.set(None);
            match hedge.next.take() {
                Some(HedgeNext::Retry) => hedge.start_now = true,
                Some(HedgeNext::Hedge) => {
                    let policy = self.policy();
                    let config = &*self.config;
                    // A hedge needs a body it can send whole.
                    let replayable = config.classify.may_resend(&self.request);
                    if !hedge.no_more
                        && replayable
                        && self.driver.may_hedge(&policy, limit_of(config), &config.calls.site)
                    {
                        hedge.start_now = true;
                    } else {
                        hedge.no_more = true;
                    }
                }
                None => {}
            }
        }
    }

    /// Asks the admission limiter (when the layer has one) for a hedged
    /// call's next attempt. A hedge it does not let go at once is not
    /// sent. With no attempt running, it is the call's next attempt: a wait
    /// is waited (`pending`, then asked again), and a refusal ends the call
    /// with its result.
    fn admit_hedge(
        &mut self,
        hedge: &mut HedgeState,
        alone: bool,
        mut pending: Pin<&mut Option<DefaultWait>>,
        kept: &mut Option<BudgetCharge>,
    ) -> HedgeAdmitted<S, Req> {
        // What the budget allowed for this attempt: sent with it, kept
        // across a wait, or given back (dropped) when it is not sent.
        let charge = kept.take().or_else(|| self.take_charge());
        let Some((_, refused)) = self.config.admission.admission::<S::Response>() else {
            Charged::sent_if_held(charge.map(|charge| *charge));
            return HedgeAdmitted::Send;
        };
        let answer = self.ask_admission(|admitting| {
            let answer = admitting.ask();
            if !alone && answer != Admission::Go {
                // A hedge not let go at once is not sent: its place in
                // the line is given back.
                admitting.leave_line();
            }
            answer
        });
        match answer {
            Admission::Go => {
                Charged::sent_if_held(charge.map(|charge| *charge));
                HedgeAdmitted::Send
            }
            answer @ (Admission::Refuse | Admission::Shut(_)) if alone => {
                drop(charge);
                HedgeAdmitted::End(self.refused(refused, answer))
            }
            Admission::Wait(wait) | Admission::GoAfter(wait) if alone => {
                hedge.arm_hedge = false;
                pending.set(Some(self.timer.start(wait)));
                hedge.next = Some(HedgeNext::Retry);
                *kept = charge;
                HedgeAdmitted::Skip
            }
            _ => {
                hedge.no_more = true;
                HedgeAdmitted::Skip
            }
        }
    }

    /// The decision on a hedged call's attempt that failed, where the call
    /// stands in `hedging` (other attempts run, another may follow, the
    /// hedges so far).
    #[cold]
    #[inline(never)]
    fn hedge_failed(
        &mut self,
        outcome: Result<S::Response, S::Error>,
        below: bool,
        hedging: HedgeCall,
    ) -> (HedgeStep<CallResult<S, Req>>, Stopped) {
        self.decide(|driver, policy, limit, admitting, hooks| {
            if let Some(admitting) = admitting {
                admitting.observed(hooks.attempt_end(Clock::ASYNC, Err(&outcome)));
            }
            driver.hedge_failed(policy, limit, hooks, (outcome, below), hedging)
        })
    }

    /// The decision on an attempt that failed (an error, or a response the
    /// classification retries), with the layer's classification and hooks
    /// lent as [`Hooks`]: the final result, or the wait before the next
    /// attempt. Out of line: the happy path never builds the hooks.
    #[cold]
    #[inline(never)]
    fn failed(
        &mut self,
        outcome: Result<S::Response, S::Error>,
        gave_up_below: bool,
    ) -> (Step<CallResult<S, Req>, Duration>, Stopped) {
        self.decide(|driver, policy, limit, admitting, hooks| match admitting {
            None => driver.failed(Waits, policy, limit, hooks, outcome, gave_up_below),
            Some(admitting) => driver.failed_admitting(Waits, policy, limit, admitting, hooks, outcome, gave_up_below),
        })
    }

    /// The call ends before an attempt the admission limiter refused:
    /// `E::from(Refused)`, reported as a give-up with
    /// [`StopReason::Refused`](backoff_runtime::StopReason::Refused).
    #[cold]
    #[inline(never)]
    fn refused(&mut self, result: RefusedResult<S, Req>, answer: Admission) -> (CallResult<S, Req>, Stopped) {
        let number = self.number;
        let refusal = match self.config.admission.admission::<S::Response>() {
            Some((limit, _)) => refusal_of(limit, answer),
            None => Refused::new(),
        };
        self.decide(|driver, policy, limit, _, hooks| driver.refused((policy, limit), number, hooks, result(refusal)))
    }

    /// Runs `decide` with the call's loop, policy, limit and admission
    /// limiter, and the layer's classification and hooks lent as [`Hooks`];
    /// returns its result and the reason of a give-up, if one was reported.
    #[inline]
    fn decide<Out>(
        &mut self,
        decide: impl FnOnce(
            &mut Loop,
            &Policy,
            Option<Limit<'_>>,
            Option<&mut Admitting<'_>>,
            &Hooks<'_, S::Response, S::Error, Result<S::Response, S::Error>>,
        ) -> Out,
    ) -> (Out, Option<StopReason>) {
        let policy = self.policy();
        let Retrying {
            config,
            request,
            driver,
            number,
            held,
            ..
        } = self;
        let config = &**config;
        let stopped = core::cell::Cell::new(None);
        let out = with_hooks::<Req, S::Response, S::Error, C, T, A, Out>(config, &stopped, |hooks| {
            match config.admission.hold(held) {
                Some((slot, hold)) => {
                    let key = || config.classify.admission_key(request);
                    hold.with(slot, *number, key, |admitting| {
                        decide(driver, &policy, limit_of(config), Some(admitting), hooks)
                    })
                }
                None => decide(driver, &policy, limit_of(config), None, hooks),
            }
        });
        (out, stopped.get())
    }

    /// The attempts admitted and not yet ended are abandoned (a hedged
    /// call's others, cancelled): the admission limiter hears it now.
    fn abandon_open(&mut self) {
        let _ = self.with_admitting(|admitting| admitting.abandon_open());
    }

    /// The attempt that just ended returned `response`, which the
    /// classification accepts: the limit gets its tokens back, and
    /// metrics, tracing and `on_success` hear of it when they listen.
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn succeeded(&mut self) {
        self.succeeded_hedged(false);
    }

    /// [`succeeded`](Self::succeeded) of a call that `hedged` past its
    /// first attempt: every attempt after the first is a hedge.
    fn succeeded_hedged(&mut self, hedged: bool) {
        let Retrying {
            config,
            request,
            driver,
            held,
            ..
        } = self;
        let key = || config.classify.admission_key(request);
        succeeded_with::<S::Error, C, T, A>(config, driver, hedged, key, held);
    }
}

impl<S: Service<Req> + Clone, Req, C, T, A> Future for ResponseFuture<S, Req, C, T, A>
where
    C: Classify<Req, S::Response, S::Error>,
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
                PhaseProj::Resending { attempt, span } => ready!(in_resend_span(span.as_ref(), || attempt.poll(cx))),
                PhaseProj::HedgedFirst { attempt, rest } => {
                    let mut first_ended = false;
                    let polled = retry.poll_hedged_first(attempt, rest, &mut first_ended, cx);
                    // The first attempt ended (or the call did): the rest
                    // becomes the phase, and the first is dropped.
                    if first_ended || polled.is_ready() {
                        if let Some(hedged) = rest.take() {
                            phase.set(Phase::Hedging { hedged });
                        }
                    }
                    let (result, stopped) = ready!(polled);
                    if stopped.is_some() {
                        phase.set(Phase::Ended { stopped });
                    }
                    return Poll::Ready(result);
                }
                PhaseProj::Timed { attempt, span } => ready!(in_resend_span(span.as_ref(), || attempt.poll(cx))),
                PhaseProj::Sleeping { pending } => {
                    ready!(retry.timer.poll_wait(pending, cx));
                    let next = retry.resend(None);
                    phase.set(next);
                    continue;
                }
                PhaseProj::SleepingCharged { pending, charge } | PhaseProj::Admitting { pending, charge } => {
                    ready!(retry.timer.poll_wait(pending, cx));
                    let charge = charge.take();
                    let next = retry.resend(charge);
                    phase.set(next);
                    continue;
                }
                PhaseProj::Refused { result, answer } => {
                    let (result, stopped) = retry.refused(*result, *answer);
                    phase.set(Phase::Ended { stopped });
                    return Poll::Ready(result);
                }
                PhaseProj::Hedging { hedged } => {
                    let (result, stopped) = ready!(retry.poll_hedged(hedged.as_mut(), (None, &mut false), None, cx));
                    if stopped.is_some() {
                        phase.set(Phase::Ended { stopped });
                    }
                    return Poll::Ready(result);
                }
                PhaseProj::Ended { .. } => return Poll::Pending,
            };
            let outcome = match result {
                Ok(response) if !retry.config.classify.retry_response(&response) => {
                    // A response that ends later is settled through the
                    // call's `Settlement`.
                    if !retry.config.classify.ends_later(&response) {
                        retry.succeeded();
                    }
                    return Poll::Ready(Ok(response));
                }
                outcome => outcome,
            };
            match retry.failed(outcome, below) {
                (Step::Return(result), stopped) => {
                    phase.set(Phase::Ended { stopped });
                    return Poll::Ready(result);
                }
                (Step::Retry(wait), _) => {
                    retry.waited = retry.waited.saturating_add(wait);
                    let pending = retry.timer.start(wait);
                    phase.set(match retry.take_charge() {
                        None => Phase::Sleeping { pending },
                        charge => Phase::SleepingCharged { pending, charge },
                    });
                }
            }
        }
    }
}
