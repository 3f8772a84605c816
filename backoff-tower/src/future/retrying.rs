//! [`Retrying`]: what a retried call keeps, and the driver's decisions.
//!
//! Each failed attempt goes to the driver's `Loop` with the layer's
//! classification and hooks lent as one `Hooks`, built only then (the
//! happy path never builds them); each resend is the request replayed
//! through a clone of the service made ready first.

use backoff_runtime::Instant;
use core::cell::Cell;
use core::ops::ControlFlow;
use core::time::Duration;
use std::sync::Arc;

use tower_service::Service;

use super::Keys;
use super::admission::tell_limiter;
use super::sending::Sending;
use super::{BudgetCharge, CallResult, Phase, PhaseOf, Stopped};
use crate::classify::{Classify as _, LayerClassify};
use crate::held::AdmissionSlot;
use crate::layer::{PerAttemptAdmission, PerAttemptTimeout, RetryLayer};
use crate::resend_span::ResendSpan;
use backoff_runtime::__front_end::{Admitting, Loop, NestedAttempt, Timed};
use backoff_runtime::__front_end::{CallNonce, Charged, DefaultWait, Hooks};
use backoff_runtime::limits::RetryLimit;
use backoff_runtime::{GiveUp, Policy, RetryEvent, StopReason, Success};

/// What a retried call keeps besides its phase: the layer `L`'s keys, the
/// caller's request (each attempt sends a replay of it), a clone of the
/// service for the resends, the driver's state, and what each attempt's
/// [`Attempt`](backoff_runtime::Attempt) is made from.
pub(super) struct Retrying<S, Req, L: AdmissionSlot> {
    pub(super) config: Arc<L>,
    pub(super) request: Req,
    service: S,
    pub(super) driver: Loop,
    /// The call's nonce (its invocation id), the same for every attempt.
    call: CallNonce,
    /// The call's start as the attempts see it (unread when neither a key
    /// nor the classification needs it).
    pub(super) start: Option<Instant>,
    /// The number of the attempt last started (1-based).
    pub(super) number: u32,
    /// The waits so far, together.
    pub(super) waited: Duration,
    /// What the call holds of the admission limiter (nothing without one),
    /// given back when the call is dropped.
    pub(super) held: L::Held,
}

/// The policy of a call with its own `deadline` (a gRPC call's): the
/// layer's, with `max_elapsed` no later than the deadline.
#[cold]
pub(super) fn bounded_by(policy: &Policy, deadline: Duration) -> Policy {
    let limit = policy
        .get_max_elapsed()
        .map_or(deadline, |max_elapsed| max_elapsed.min(deadline));
    policy.max_elapsed(limit)
}

/// The layer's limit, as the driver borrows it.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(super) fn limit_of<C, T, A>(config: &RetryLayer<C, T, A>) -> Option<&dyn RetryLimit> {
    config.calls.budget.as_deref().map(|budget| budget as &dyn RetryLimit)
}

/// The phase of an attempt that sends with `sending`: under the layer's
/// per-attempt timeout when it has one (never past `max_elapsed`, measured
/// by `driver` on `policy`), in `span` when it is a resend someone sees.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(super) fn attempt_phase<S, Req, C, T, A>(
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

/// The attempt that just ended was accepted: the limit gets its tokens
/// back, and metrics, tracing and `on_success` hear of it when they listen.
/// A call that `hedged` past its first attempt counts every attempt after
/// the first as a hedge.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(super) fn succeeded_with<'k, C, T, A: AdmissionSlot>(
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

/// Runs `run` with the layer's classification and hooks lent as
/// [`Hooks`]; the reason of a give-up they report goes to `stopped`.
#[inline]
pub(super) fn with_hooks<Req, Res, E, C, T, A, Out>(
    config: &RetryLayer<C, T, A>,
    stopped: &Cell<Option<StopReason>>,
    run: impl FnOnce(&Hooks<'_, Res, E, Result<Res, E>>) -> Out,
) -> Out
where
    C: LayerClassify<Req, Res, E>,
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
    // The events show an error's attributes, as the classification gives
    // them, and nothing else (neither the error's `Debug` form nor a
    // response's).
    hooks = hooks.report_with(|outcome, sink| sink(None, outcome.as_ref().err().and_then(C::error_conventions)));
    if observers.on_retry.is_some() {
        hooks = hooks.on_retry(&on_retry);
    }
    if let Some(on_success) = &observers.on_success {
        hooks = hooks.on_success(&**on_success);
    }
    run(&hooks)
}

impl<S: Service<Req> + Clone, Req, L: Keys<S, Req>> Retrying<S, Req, L> {
    /// The state of a call's retries, `number` attempts sent so far, on a
    /// clone of `service`.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(super) fn new(
        service: &S,
        config: &Arc<L>,
        request: Req,
        (driver, held): (Loop, L::Held),
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
            held,
        }
    }

    /// The retry the budget allowed last, taken out of the loop to be kept
    /// in the wait's phase until it is sent (given back if it never is).
    #[cold]
    pub(super) fn take_charge(&mut self) -> Option<BudgetCharge> {
        let budget = &self.config.keys().calls.budget;
        self.driver.take_charge_with(|| budget.clone()).map(Box::new)
    }

    /// The call's policy: the layer's, bounded by the call's own deadline
    /// when the classification gives one.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(super) fn policy(&self) -> Policy {
        match self.config.keys().classify.deadline(&self.request) {
            None => self.config.keys().calls.policy,
            Some(deadline) => bounded_by(&self.config.keys().calls.policy, deadline),
        }
    }

    /// The next attempt, after a wait, with the retry the budget allowed
    /// for it (`charge`): asked of the admission limiter first, when the
    /// layer has one; the request replayed for it, sent through a clone of
    /// the service made ready first, in its `resend` span.
    #[cold]
    #[inline(never)]
    pub(super) fn resend(&mut self, charge: Option<BudgetCharge>) -> PhaseOf<S, Req> {
        match self.config.keys().admission.admission::<S::Response>() {
            None => {
                Charged::sent_if_held(charge.map(|charge| *charge));
                self.send_next()
            }
            Some((_, refused)) => {
                let admitted = self.ask_admission();
                self.admitted_phase(admitted, refused, charge)
            }
        }
    }

    /// The next attempt, admitted: the request replayed for it, sent
    /// through a clone of the service made ready first, in its `resend`
    /// span (or, for a hedged call, its first attempt in place).
    pub(super) fn send_next(&mut self) -> PhaseOf<S, Req> {
        let (sending, number) = self.next_sending();
        if self.config.keys().calls.hedge_after.is_some() {
            return self.hedging(sending);
        }
        attempt_phase(
            self.config.keys(),
            &self.driver,
            &self.policy(),
            sending,
            ResendSpan::of_attempt(number),
        )
    }

    /// The next attempt's send: the request replayed for it, through a
    /// clone of the service made ready first; and its number.
    pub(super) fn next_sending(&mut self) -> (Sending<S, Req, S::Future>, u32) {
        // The retry the budget allowed for it, if any, is sent.
        self.driver.sent();
        self.number = self.number.saturating_add(1);
        let attempt = self
            .call
            .nth_attempt(&self.policy(), self.start, DefaultWait::CLOCK, self.number);
        let request = self.config.keys().classify.replay(&self.request, &attempt);
        let sending = Sending::Readying {
            service: self.service.clone(),
            request: Some(request),
        };
        (sending, attempt.number())
    }

    /// The decision on an attempt that failed (an error, or a response the
    /// classification retries): the final result, or the wait before the
    /// next attempt. Out of line: the happy path never builds the hooks.
    #[cold]
    #[inline(never)]
    pub(super) fn failed(
        &mut self,
        outcome: Result<S::Response, S::Error>,
        gave_up_below: bool,
    ) -> (ControlFlow<CallResult<S, Req>, Duration>, Stopped) {
        self.decide(|driver, policy, limit, admitting, hooks| {
            driver.failed_waiting((policy, limit), admitting, hooks, outcome, gave_up_below)
        })
    }

    /// Runs `decide` with the call's loop, policy, limit and admission
    /// limiter, and the layer's classification and hooks lent as [`Hooks`];
    /// returns its result and the reason of a give-up, if one was reported.
    #[inline]
    pub(super) fn decide<Out>(
        &mut self,
        decide: impl FnOnce(
            &mut Loop,
            &Policy,
            Option<&dyn RetryLimit>,
            Option<&mut Admitting<'_>>,
            &Hooks<'_, S::Response, S::Error, CallResult<S, Req>>,
        ) -> Out,
    ) -> (Out, Stopped) {
        let policy = self.policy();
        let Retrying {
            config,
            request,
            driver,
            number,
            held,
            ..
        } = self;
        let config = config.keys();
        let stopped = Cell::new(None);
        let out = with_hooks::<Req, S::Response, S::Error, _, _, _, Out>(config, &stopped, |hooks| {
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

    /// The attempt that just ended returned a response the classification
    /// accepts: the limit gets its tokens back, and metrics, tracing and
    /// `on_success` hear of it when they listen.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(super) fn succeeded(&mut self) {
        self.succeeded_hedged(false);
    }

    /// [`succeeded`](Self::succeeded) of a call that `hedged` past its
    /// first attempt: every attempt after the first is a hedge.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(super) fn succeeded_hedged(&mut self, hedged: bool) {
        let config = self.config.keys();
        let request = &self.request;
        let key = || config.classify.admission_key(request);
        succeeded_with(config, &mut self.driver, hedged, key, &mut self.held);
    }
}
