//! The layer's admission limiter, asked before each attempt of a call.
//!
//! A call asks through what it holds of the limiter (its
//! [`AdmissionHold`](crate::AdmissionHold), nothing for a layer without
//! one): the first attempt in [`asks_first`], each later one after its wait.
//! A wait is a phase of its own; a refusal ends the call with
//! `E::from(Refused)`, reported as a give-up.

use core::time::Duration;

use tower_service::Service;

use super::{BudgetCharge, Call, CallResult, Keys, Phase, PhaseOf, ResponseFuture, Retrying, Stopped};
use crate::classify::{Classify as _, LayerClassify};
use crate::held::AdmissionSlot;
use crate::layer::{PerAttemptAdmission, RetryLayer};
use backoff_runtime::__front_end::{Admitting, Charged, DefaultWait};
use backoff_runtime::limits::{Admission, Refused};

/// What the admission limiter made of an attempt.
#[derive(Clone, Copy, Debug)]
pub(super) enum Admitted {
    /// Send it now.
    Go,
    /// Ask again after this wait (the limiter's `Wait`, or a `GoAfter`
    /// whose tokens are taken: the next question is then answered `Go`).
    Wait(Duration),
    /// Refused: the call ends with this refusal.
    Refused(Refused),
}

/// The limiter's answer to `admitting`'s next attempt.
pub(super) fn answer(admitting: &mut Admitting<'_>) -> Admitted {
    match admitting.ask() {
        Admission::Go => Admitted::Go,
        Admission::Wait(wait) | Admission::GoAfter(wait) => Admitted::Wait(wait),
        Admission::Refuse | Admission::Shut(_) => Admitted::Refused(admitting.refusal()),
    }
}

/// The result a refused attempt of a call of `S` with `Req` stands for,
/// made from the refusal.
pub(super) type RefusedResult<S, Req> = fn(Refused) -> CallResult<S, Req>;

/// The first attempt of a call of `request`, asked of the layer's admission
/// limiter through what the call holds (`held`): `None` when it goes at
/// once (always, for a layer without a limiter), else the answer and the
/// result a refusal stands for.
#[inline]
pub(super) fn asks_first<S, Req, C, T, A>(
    config: &RetryLayer<C, T, A>,
    request: &Req,
    held: &mut A::Held,
) -> Option<(Admitted, RefusedResult<S, Req>)>
where
    S: Service<Req>,
    C: LayerClassify<Req, S::Response, S::Error>,
    A: PerAttemptAdmission<S::Error>,
{
    let (_, refused) = config.admission.admission::<S::Response>()?;
    let (slot, hold) = config.admission.hold(held)?;
    let key = || config.classify.admission_key(request);
    match hold.with(slot, 0, key, answer) {
        Admitted::Go => None,
        admitted => Some((admitted, refused)),
    }
}

/// Runs `tell` with the call's view of the layer's admission limiter
/// (none without one), through what the call holds of it (`held`), after
/// `attempts` attempts; `key` gives the call's key the first time.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(super) fn tell_limiter<'k, A: AdmissionSlot, R>(
    admission: &A,
    held: &mut A::Held,
    attempts: u32,
    key: impl FnOnce() -> Option<&'k str>,
    tell: impl FnOnce(&mut Admitting<'_>) -> R,
) -> Option<R> {
    let (slot, hold) = admission.hold(held)?;
    Some(hold.with(slot, attempts, key, tell))
}

impl<S: Service<Req> + Clone, Req, L: Keys<S, Req>> Retrying<S, Req, L> {
    /// This call (no attempt sent), whose first attempt the admission
    /// limiter holds back: not sent now (the service `poll_ready` made
    /// ready is left as it is), but after the wait, through a clone made
    /// ready then, as a resend is; or never, when refused.
    #[cold]
    #[inline(never)]
    pub(super) fn held(mut self, (admitted, refused): (Admitted, RefusedResult<S, Req>)) -> ResponseFuture<S, Req, L> {
        let phase = self.admitted_phase(admitted, refused, None);
        ResponseFuture {
            call: Call::Retrying { phase, retry: self },
        }
    }

    /// Runs `tell` with the call's view of the admission limiter, through
    /// what the call holds of it; `None` without a limiter.
    pub(super) fn with_admitting<R>(&mut self, tell: impl FnOnce(&mut Admitting<'_>) -> R) -> Option<R> {
        let config = self.config.keys();
        let request = &self.request;
        let key = || config.classify.admission_key(request);
        tell_limiter(&config.admission, &mut self.held, self.number, key, tell)
    }

    /// The admission limiter's answer for the next attempt (`Go` without
    /// a limiter).
    pub(super) fn ask_admission(&mut self) -> Admitted {
        self.with_admitting(answer).unwrap_or(Admitted::Go)
    }

    /// The phase after the admission limiter's answer for the next attempt,
    /// which keeps the retry the budget allowed for it (`charge`): sent,
    /// waiting, or refused (the call then ends with `refused()` of the
    /// refusal).
    pub(super) fn admitted_phase(
        &mut self,
        admitted: Admitted,
        refused: RefusedResult<S, Req>,
        charge: Option<BudgetCharge>,
    ) -> PhaseOf<S, Req> {
        match admitted {
            Admitted::Go => {
                Charged::sent_if_held(charge.map(|charge| *charge));
                self.send_next()
            }
            Admitted::Wait(wait) => Phase::Admitting {
                pending: DefaultWait::start(wait),
                charge,
            },
            Admitted::Refused(refusal) => Phase::Refused {
                result: refused,
                refusal,
            },
        }
    }

    /// The call ends before an attempt the admission limiter refused:
    /// `E::from(Refused)`, reported as a give-up with
    /// [`StopReason::Refused`](backoff_runtime::StopReason::Refused).
    #[cold]
    #[inline(never)]
    pub(super) fn refused(&mut self, result: RefusedResult<S, Req>, refusal: Refused) -> (CallResult<S, Req>, Stopped) {
        let number = self.number;
        self.decide(|driver, policy, limit, _, hooks| driver.refused((policy, limit), number, hooks, result(refusal)))
    }

    /// The attempts admitted and not yet ended are abandoned (a hedged
    /// call's others, cancelled): the admission limiter hears it now.
    pub(super) fn abandon_open(&mut self) {
        let _ = self.with_admitting(|admitting| admitting.abandon_open());
    }
}
