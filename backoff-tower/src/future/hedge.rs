//! A hedged call: its attempts side by side, and the wait before the next.
//!
//! The call's first attempt runs in place (`Phase::HedgedFirst`); the rest
//! of the call, [`Hedges`], is boxed only once that attempt is found
//! running, so an early answer allocates nothing. The driver decides after
//! each failure (`Loop::hedge_failed`) and before each hedge
//! (`Loop::may_hedge`); the budget and the admission limiter are asked
//! before each attempt, as for a retry.

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
use backoff_runtime::__front_end::{Charged, DefaultWait, HedgeAttempts, HedgeStep};
use backoff_runtime::__front_end::{Loop, NestedAttempt, Timed};
use backoff_runtime::Policy;

pin_project_lite::pin_project! {
    /// A hedged call's attempts running side by side, and the wait before
    /// the next.
    #[project = HedgesProj]
    pub(super) struct Hedges<A> {
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

/// One attempt of a hedged call of `S` with `Req`.
pub(super) type HedgedAttempt<S, Req> =
    NestedAttempt<Timed<Sending<S, Req, <S as Service<Req>>::Future>, CallResult<S, Req>>>;

/// The rest of a hedged call of `S` with `Req`: its attempts, and its
/// next wait.
type HedgesOf<S, Req> = Hedges<HedgedAttempt<S, Req>>;

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

impl HedgeState {
    /// After an attempt starts: the next hedge follows the delay, unless
    /// none may start (its wait starts when the attempts are found
    /// running).
    fn next_hedge(&mut self) {
        self.arm_hedge = !self.no_more;
        self.next = self.arm_hedge.then_some(HedgeNext::Hedge);
    }
}

impl<A> Hedges<A> {
    /// The rest of a hedged call whose first attempt runs in its own
    /// phase: no other attempt yet, the next hedge after the delay.
    fn beside_first() -> Self {
        let mut state = HedgeState::default();
        state.next_hedge();
        Hedges {
            attempts: HedgeAttempts::new(),
            pending: None,
            state,
            charge: None,
        }
    }

    /// Whether no attempt runs: the call waits for the next.
    pub(super) fn is_waiting(&self) -> bool {
        self.attempts.is_empty()
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
        let HedgesProj {
            mut attempts,
            mut pending,
            state: hedge,
            charge,
        } = hedges.project();
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
                    hedge.next_hedge();
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
                    Ok(response) if !self.config.keys().classify.retry_response(&response) => {
                        // The others are cancelled before the call returns.
                        attempts.as_mut().clear();
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
                    hedge.no_more = true;
                    continue;
                }
                let (step, stopped) = self.hedge_failed(outcome, below, others_run, !hedge.server_refused);
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
                        pending.set(Some(DefaultWait::start(wait)));
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
                let delay = self.config.keys().calls.hedge_after.unwrap_or_default();
                pending.set(Some(DefaultWait::start(delay)));
            }
            let Some(wait) = pending.as_mut().as_pin_mut() else {
                return Poll::Pending;
            };
            ready!(wait.poll(cx));
            pending.set(None);
            match hedge.next.take() {
                Some(HedgeNext::Retry) => hedge.start_now = true,
                Some(HedgeNext::Hedge) => {
                    let policy = self.policy();
                    let config = self.config.keys();
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
                hedge.arm_hedge = false;
                pending.set(Some(DefaultWait::start(wait)));
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

    /// The decision on a hedged call's attempt that failed, while
    /// `others_run` (other attempts run) and `may_follow` (another may
    /// follow).
    #[cold]
    #[inline(never)]
    fn hedge_failed(
        &mut self,
        outcome: CallResult<S, Req>,
        below: bool,
        others_run: bool,
        may_follow: bool,
    ) -> (HedgeStep<CallResult<S, Req>>, Stopped) {
        self.decide(|driver, policy, limit, admitting, hooks| {
            if let Some(admitting) = admitting {
                admitting.observed(hooks.attempt_end(DefaultWait::CLOCK, Err(&outcome)));
            }
            driver.hedge_failed(policy, limit, hooks, (outcome, below), others_run, may_follow)
        })
    }
}
