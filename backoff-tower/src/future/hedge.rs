//! A hedged call: its attempts side by side, and its next wait.
//!
//! The call's first attempt runs in place (`Phase::HedgedFirst`); the rest
//! of the call, [`Hedges`], is boxed only once that attempt is found
//! running, so an early answer allocates nothing. The driver decides after
//! each failure (`Loop::hedge_failed`) and before each hedge
//! (`Loop::may_hedge`); the runtime's `Hedging` carries out its decisions,
//! as for the builder's hedged future. The budget and the admission limiter
//! are asked before each attempt, as for a retry; a hedge also needs a body
//! it can send whole.

use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll, ready};

use tower_service::Service;

use super::admission::{Admitted, answer};
use super::retrying::limit_of;
use super::sending::Sending;
use super::{BudgetCharge, CallResult, Keys, Phase, PhaseOf, Retrying, Stopped};
use crate::classify::{Classify as _, LayerClassify};
use crate::layer::{PerAttemptAdmission, PerAttemptTimeout, RetryLayer};
use backoff_runtime::__front_end::{Charged, DefaultWait, Hedging, Loop, NestedAttempt, Timed};
use backoff_runtime::Policy;

pin_project_lite::pin_project! {
    /// A hedged call's attempts running side by side, the wait before the
    /// next, and where it stands; with the retry the budget allowed for the
    /// next attempt.
    #[project = HedgesProj]
    pub(super) struct Hedges<A> {
        #[pin]
        hedging: Hedging<A>,
        // The retry (or hedge) the budget allowed for the next attempt,
        // given back if the call is dropped before it is sent.
        charge: Option<BudgetCharge>,
    }
}

/// One attempt of a hedged call of `S` with `Req`.
pub(super) type HedgedAttempt<S, Req> =
    NestedAttempt<Timed<Sending<S, Req, <S as Service<Req>>::Future>, CallResult<S, Req>>>;

/// The rest of a hedged call of `S` with `Req`: its attempts, and its
/// next wait.
type HedgesOf<S, Req> = Hedges<HedgedAttempt<S, Req>>;

/// A hedged call's attempts of `S` with `Req` side by side, and its next
/// wait.
type HedgingOf<S, Req> = Hedging<HedgedAttempt<S, Req>>;

impl<A> Hedges<A> {
    /// The rest of a hedged call whose first attempt runs in its own
    /// phase: no other attempt yet, the next hedge after the delay.
    fn beside_first() -> Self {
        Hedges {
            hedging: Hedging::beside_first(),
            charge: None,
        }
    }

    /// Whether no attempt runs: the call waits for the next.
    pub(super) fn is_waiting(&self) -> bool {
        self.hedging.is_empty()
    }
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

/// One attempt of a hedged call, under the layer's per-attempt timeout
/// when it has one.
pub(super) fn hedged_attempt<S, Req, C, T, A>(
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

impl<S: Service<Req> + Clone, Req, L: Keys<S, Req>> Retrying<S, Req, L> {
    /// One attempt of a hedged call, under the per-attempt timeout when
    /// the layer has one.
    fn hedged_attempt(&self, sending: Sending<S, Req, S::Future>) -> HedgedAttempt<S, Req> {
        hedged_attempt(self.config.keys(), &self.driver, &self.policy(), sending)
    }

    /// The phase of a hedged call whose first attempt (held back by the
    /// admission limiter until now) sends with `sending`: as at the
    /// call's start, in place, the rest boxed when needed.
    pub(super) fn hedging(&self, sending: Sending<S, Req, S::Future>) -> PhaseOf<S, Req> {
        Phase::HedgedFirst {
            attempt: self.hedged_attempt(sending),
            rest: None,
        }
    }

    /// A hedged call whose first attempt runs in its own phase, polled.
    /// Answered and accepted at once, the call ends with nothing boxed;
    /// otherwise the rest of the call (`hedges`) is boxed now and the
    /// attempts are polled together ([`poll_hedged`](Self::poll_hedged)).
    #[inline(never)]
    pub(super) fn poll_hedged_first(
        &mut self,
        mut first: Pin<&mut HedgedAttempt<S, Req>>,
        hedges: &mut Option<Pin<Box<HedgesOf<S, Req>>>>,
        first_ended: &mut bool,
        cx: &mut Context<'_>,
    ) -> Poll<(CallResult<S, Req>, Stopped)> {
        let mut ended = None;
        if hedges.is_none() {
            match first.as_mut().poll(cx) {
                Poll::Ready((Ok(response), _)) if !self.config.keys().classify.retry_response(&response) => {
                    // An answer whose status comes later is reported
                    // through the call's `CommittedCall`.
                    if !L::Classify::ENDS_LATER {
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
        let hedges = hedges.get_or_insert_with(|| Box::pin(Hedges::beside_first()));
        let first = if *first_ended { None } else { Some(first) };
        self.poll_hedged(hedges.as_mut(), (first, first_ended), ended, cx)
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
    pub(super) fn poll_hedged(
        &mut self,
        hedges: Pin<&mut HedgesOf<S, Req>>,
        (mut first, first_ended): (Option<Pin<&mut HedgedAttempt<S, Req>>>, &mut bool),
        mut ended: Option<(CallResult<S, Req>, bool)>,
        cx: &mut Context<'_>,
    ) -> Poll<(CallResult<S, Req>, Stopped)> {
        let HedgesProj { mut hedging, charge } = hedges.project();
        loop {
            if hedging.as_mut().starts_now() {
                let alone = hedging.is_empty() && first.is_none();
                let admitted = self.admit_hedge(hedging.as_mut(), alone, charge);
                if let HedgeAdmitted::End(result) = admitted {
                    return Poll::Ready(result);
                }
                if let HedgeAdmitted::Send = admitted {
                    let (sending, _) = self.next_sending();
                    let attempt = self.hedged_attempt(sending);
                    hedging.as_mut().push(attempt);
                }
            }
            let polled = match (ended.take(), first.as_mut().map(|attempt| attempt.as_mut().poll(cx))) {
                (Some(ended), _) => Poll::Ready(Some(ended)),
                (None, Some(Poll::Ready(ended))) => {
                    first = None;
                    *first_ended = true;
                    Poll::Ready(Some(ended))
                }
                (None, _) => hedging.as_mut().poll_next(cx),
            };
            if let Poll::Ready(Some((result, below))) = polled {
                let others_run = !hedging.is_empty() || first.is_some();
                let outcome = match result {
                    Ok(response) if !self.config.keys().classify.retry_response(&response) => {
                        // The others are cancelled before the call returns.
                        hedging.as_mut().clear();
                        // An answer whose status comes later is reported
                        // through the call's `CommittedCall`.
                        if !L::Classify::ENDS_LATER {
                            self.succeeded_hedged(true);
                        }
                        return Poll::Ready((Ok(response), None));
                    }
                    outcome => outcome,
                };
                if others_run && !self.config.keys().classify.may_resend(&self.request) {
                    // Past the replay cap (A6): the call is committed to
                    // the attempts still running, which have sent the
                    // most; this one lost its body. No hedge follows.
                    hedging.as_mut().stop_hedging();
                    continue;
                }
                if let Some(ended) = self.hedge_failed(hedging.as_mut(), charge, (outcome, below), others_run) {
                    return Poll::Ready(ended);
                }
                continue;
            }
            // The wait before the next attempt: the hedge delay's starts
            // now that the attempts are found running.
            let delay = self.config.keys().calls.hedge_after.unwrap_or_default();
            ready!(hedging.as_mut().poll_wait(delay, cx, || {
                let policy = self.policy();
                let config = self.config.keys();
                // A hedge needs a body it can send whole.
                config.classify.may_resend(&self.request)
                    && self.driver.may_hedge(&policy, limit_of(config), &config.calls.site)
            }));
        }
    }

    /// Asks the admission limiter (when the layer has one) for a hedged
    /// call's next attempt. A hedge it does not let go at once is not
    /// sent. With no attempt running, it is the call's next attempt: a wait
    /// is waited (`pending`, then asked again), and a refusal ends the call
    /// with its result.
    fn admit_hedge(
        &mut self,
        hedging: Pin<&mut HedgingOf<S, Req>>,
        alone: bool,
        kept: &mut Option<BudgetCharge>,
    ) -> HedgeAdmitted<S, Req> {
        // What the budget allowed for this attempt: sent with it, kept
        // across a wait, or given back (dropped) when it is not sent.
        let charge = kept.take().or_else(|| self.take_charge());
        let Some((_, refused)) = self.config.keys().admission.admission::<S::Response>() else {
            Charged::sent_if_held(charge.map(|charge| *charge));
            return HedgeAdmitted::Send;
        };
        let admitted = self
            .with_admitting(|admitting| {
                let admitted = answer(admitting);
                if !alone && !matches!(admitted, Admitted::Go) {
                    // A hedge not let go at once is not sent: its place in
                    // the line is given back.
                    admitting.leave_line();
                }
                admitted
            })
            .unwrap_or(Admitted::Go);
        match admitted {
            Admitted::Go => {
                Charged::sent_if_held(charge.map(|charge| *charge));
                HedgeAdmitted::Send
            }
            Admitted::Refused(refusal) if alone => {
                drop(charge);
                HedgeAdmitted::End(self.refused(refused, refusal))
            }
            Admitted::Wait(wait) if alone => {
                hedging.wait_to_start(wait);
                *kept = charge;
                HedgeAdmitted::Skip
            }
            _ => {
                hedging.stop_hedging();
                HedgeAdmitted::Skip
            }
        }
    }

    /// The decision on a hedged call's attempt that failed, while
    /// `others_run` (other attempts run), carried out on `hedging`: the
    /// call's result when the failure ends it. A retry's wait keeps the
    /// budget's charge for it in `charge`.
    #[cold]
    #[inline(never)]
    fn hedge_failed(
        &mut self,
        mut hedging: Pin<&mut HedgingOf<S, Req>>,
        charge: &mut Option<BudgetCharge>,
        (outcome, below): (CallResult<S, Req>, bool),
        others_run: bool,
    ) -> Option<(CallResult<S, Req>, Stopped)> {
        let may_follow = hedging.may_follow();
        let (step, stopped) = self.decide(|driver, policy, limit, admitting, hooks| {
            if let Some(admitting) = admitting {
                admitting.observed(hooks.attempt_end(DefaultWait::CLOCK, Err(&outcome)));
            }
            driver.hedge_failed(policy, limit, hooks, (outcome, below), others_run, may_follow)
        });
        let result = hedging.as_mut().decided(step, || *charge = self.take_charge())?;
        self.abandon_open();
        Some((result, stopped))
    }
}
