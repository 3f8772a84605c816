//! What an awaited call's future keeps, and its steps.
//!
//! The types read off its keys, and beside its phase the policy and budget, the
//! operation, the hooks, the admission limiter and the loop's state; and the
//! steps both futures take with them.

use core::future::{Future, Ready};
use core::time::Duration;

use crate::builder::action::{Action, NoAction};
use crate::builder::config::{Config, Identity};
use crate::builder::flag::{Flag, Kept, Slot};
use crate::builder::operation::Awaited;
use crate::builder::owned::{Marks, OwnedHooks};
use crate::builder::retry::Retry;
use crate::limits::admission::{Admitting, RefusedResult};
use crate::limits::limit::{Charged, RetryLimit};
use crate::run::driver::{Loop, NextAttempt};
use crate::run::nested::NestedAttempt;
use crate::run::outcome::Outcome;
use crate::schedule::policy::Policy;
use crate::time::clock::Clock;
use crate::time::sleep::{IntoTimer, Timer};
use crate::time::timeout::Timed;

/// The types an awaited retry's future stores, read off its keys without
/// any bound on the hooks (so that the future's auto traits need none).
pub trait Parts {
    /// The hooks it owns.
    type Hooks;
    /// The timer.
    type Timer;
    /// The action.
    type Action;
    /// Where the retry an action runs on is kept.
    type Kept;
    /// What a pending wait keeps.
    type Pending;
    /// The action's future.
    type ActionFuture;
    /// The result.
    type Output;
    /// Whether `budget` was given.
    type Budgeted: Flag;
    /// Whether `admission` was given.
    type Admitted: Flag;
}

impl<K, T, E, O, H: Marks, S: IntoTimer, A: ActionFuture> Parts for Config<K, T, E, O, H, S, A> {
    type Budgeted = H::Budgeted;
    type Admitted = H::Admitted;
    type Hooks = H;
    type Timer = S::Timer;
    type Action = A;
    type Kept = A::Kept<O>;
    type Pending = <S::Timer as Timer>::Pending;
    type ActionFuture = A::Future;
    type Output = Result<T, E>;
}

/// The future type of an action, and where the failure it acts on is kept
/// while it runs, without their bounds.
pub trait ActionFuture {
    /// The future.
    type Future;
    /// Where the retry is kept: nowhere without an action.
    type Kept<O>;
    /// Keeps `next` while the action runs.
    fn keep<O>(next: NextAttempt<O>) -> Self::Kept<O>;
    /// The retry kept.
    fn take<O>(kept: &mut Self::Kept<O>) -> Option<NextAttempt<O>>;
}

impl ActionFuture for NoAction {
    type Future = Ready<()>;
    type Kept<O> = ();

    #[cfg_attr(not(debug_assertions), inline(always))]
    fn keep<O>(_next: NextAttempt<O>) {}

    #[cfg_attr(not(debug_assertions), inline(always))]
    fn take<O>(_kept: &mut ()) -> Option<NextAttempt<O>> {
        None
    }
}

impl<F, Fut> ActionFuture for Action<F, Fut> {
    type Future = Fut;
    type Kept<O> = Option<NextAttempt<O>>;

    #[cfg_attr(not(debug_assertions), inline(always))]
    fn keep<O>(next: NextAttempt<O>) -> Option<NextAttempt<O>> {
        Some(next)
    }

    #[cfg_attr(not(debug_assertions), inline(always))]
    fn take<O>(kept: &mut Option<NextAttempt<O>>) -> Option<NextAttempt<O>> {
        kept.take()
    }
}

/// The keys of an awaited call.
type AwaitedKeys<T, E, O, H, S, A> = Config<Awaited, T, E, O, H, S, A>;

/// A per-attempt timeout, with the result a timed-out attempt stands for.
type TimeoutWith<R> = (Duration, fn() -> R);

/// An admission limiter as a call's future keeps it, with the result a
/// refused attempt stands for.
pub(crate) type AdmittingWith<'a, R> = (Admitting<'a>, RefusedResult<R>);

/// The part of an awaited call's future that is not its phase: the same
/// for a retried call and a hedged one.
pub(crate) struct AwaitedCall<'a, Op, C: Parts> {
    pub(crate) policy: &'a Policy,
    /// The budget: read through [`budget`](Self::budget), `None` (at
    /// compile time) unless given.
    budget: Option<&'a dyn RetryLimit>,
    pub(crate) op: Op,
    pub(crate) hooks: C::Hooks,
    pub(crate) identity: Identity,
    pub(crate) timeout: Option<TimeoutWith<C::Output>>,
    /// With `admission`: the limiter (with where the next attempt's
    /// admission stands), and the result of a refused attempt. Nothing
    /// (a type without a field) unless `admission` was given.
    pub(crate) admission: Kept<C::Admitted, AdmittingWith<'a, C::Output>>,
    pub(crate) driver: Loop,
}

/// A retry (or hedge) the budget allowed and the call has not sent yet,
/// kept across the wait (in the future's wait phase): given back if the
/// call is dropped first. Nothing without a budget.
pub(crate) type Charge<'a, C> = Kept<<C as Parts>::Budgeted, Charged<&'a dyn RetryLimit>>;

impl<'a, Op, T, E, O, H, S, A> AwaitedCall<'a, Op, AwaitedKeys<T, E, O, H, S, A>>
where
    AwaitedKeys<T, E, O, H, S, A>: Parts<Hooks = H, Output = Result<T, E>>,
    O: Outcome<T, E>,
    H: OwnedHooks<T, E, E, Out = O>,
{
    /// Takes `retry` apart: its keys, measured on `clock` (the loop's start
    /// taken when `needs_start`), and the sleep and action the future keeps
    /// beside them.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(crate) fn start(
        retry: Retry<'a, Op, AwaitedKeys<T, E, O, H, S, A>>,
        clock: Clock,
        needs_start: bool,
    ) -> (Self, S, A) {
        let Retry {
            policy,
            op,
            budget,
            admission,
            config,
        } = retry;
        let budget = budget.filter(|_| <H::Budgeted as Flag>::ON);
        let admission = Slot::of(
            admission
                .filter(|_| <H::Admitted as Flag>::ON)
                .zip(config.call.refused)
                .map(|(limit, refused)| (Admitting::of_dyn(limit, clock), refused)),
        );
        let call = AwaitedCall {
            policy,
            budget,
            op,
            hooks: config.hooks,
            identity: config.call.identity,
            timeout: config.call.timeout,
            admission,
            driver: Loop::start(clock, Some(policy), budget, needs_start),
        };
        (call, config.sleep, config.action)
    }

    /// The next attempt of the operation: under `timeout` when given (never
    /// past `max_elapsed`), bracketed for nested retries.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(crate) fn next_attempt<Fut>(&mut self) -> NestedAttempt<Timed<Fut, Result<T, E>>>
    where
        Op: FnMut() -> Fut,
        Fut: Future<Output = Result<T, E>>,
    {
        // The retry the budget allowed for it, if any, is sent (a charge
        // taken out of the loop was sent by its keeper).
        self.driver.sent();
        let attempt = match self.timeout {
            None => Timed::untimed((self.op)()),
            Some((timeout, on_elapsed)) => Timed::with_timeout_of(
                self.driver.attempt_timeout(self.policy, timeout),
                (self.op)(),
                on_elapsed,
            ),
        };
        NestedAttempt::new(attempt)
    }

    /// The retry (or hedge) the budget just allowed, taken out of the loop
    /// to be kept across the wait before its attempt (given back if the
    /// call is dropped first).
    #[cold]
    pub(crate) fn take_charge(&mut self) -> Charge<'a, AwaitedKeys<T, E, O, H, S, A>> {
        Slot::of(self.driver.take_charge(self.budget()))
    }

    /// The budget, `None` at compile time unless given.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(crate) fn budget(&self) -> Option<&'a dyn RetryLimit> {
        if <H::Budgeted as Flag>::ON { self.budget } else { None }
    }

    /// The attempts admitted and not yet ended are abandoned (the hedges
    /// that lost): the admission limiter hears it now.
    pub(crate) fn abandon_open(&mut self) {
        if let Some((admitting, ..)) = self.admission.get() {
            admitting.abandon_open();
        }
    }

    /// Judges an ended attempt's `result` with the hooks, and tells the
    /// admission limiter how it ended.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(crate) fn judge(&mut self, result: Result<T, E>) -> Result<T, O> {
        let hooks = self.identity.lend(&self.hooks);
        let judged = hooks.judge(result);
        if let Some((admitting, ..)) = self.admission.get() {
            admitting.observed(hooks.attempt_end(admitting.clock(), judged.as_ref()));
        }
        judged
    }
}
