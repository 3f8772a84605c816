//! `.call()`: a sync operation, retried.
//!
//! A sync operation run until it succeeds or a stop rule
//! holds.

use crate::builder::flag::Flag;
use crate::builder::owned::OwnedHooks;
use crate::limits::admission::{Admitting, RefusedResult};
use crate::limits::admission_limit::AdmissionLimit;
use crate::limits::limit::RetryLimit;
use crate::observe::site::Site;
use crate::run::blocking::{BlockingParts, first_success, refused_first_blocking, settle_blocking, start_blocking};
use crate::run::outcome::Outcome;
use crate::schedule::policy::Policy;
use crate::time::sleep::BlockingSleep;

use super::action::BlockingAction;
use super::config::{Config, Identity};
use super::operation::Blocking;
use super::retry::Retry;

impl<Op, T, E, O, H, S, A> Retry<'_, Op, Config<Blocking, T, E, O, H, S, A>>
where
    Op: FnMut() -> Result<T, E>,
    O: Outcome<T, E>,
    H: OwnedHooks<T, E, E, Out = O>,
    S: BlockingSleep,
    A: BlockingAction<O>,
{
    /// Runs a sync operation until it succeeds or a stop rule holds, and
    /// returns its last result.
    ///
    /// ```
    /// use backoff_runtime::Policy;
    /// use std::time::Duration;
    /// let result = Policy::new().initial_backoff(Duration::from_millis(1)).max_retries(1).retry(|| Err::<(), _>("down")).call();
    /// assert_eq!(result, Err("down"));
    /// ```
    #[inline]
    pub fn call(self) -> Result<T, E> {
        let Retry {
            policy,
            mut op,
            budget,
            admission,
            config,
        } = self;
        let start = start_blocking(policy, budget, H::OBSERVES || A::SET, &config.sleep);
        let first = match (<H::Admitted as Flag>::ON, admission, config.call.refused) {
            (true, Some(limit), Some(refused)) => First::Admit(limit, refused),
            _ => {
                crate::run::nested::enter_attempt();
                match op() {
                    // A success nobody but metrics hears of: handled here, inline.
                    Ok(value) if !H::JUDGES_VALUES && !H::OBSERVES_SUCCESS => {
                        first_success(
                            budget,
                            &config.sleep,
                            start,
                            &Site::Named(config.call.identity.name),
                            None,
                        );
                        return Ok(value);
                    }
                    first => First::Ran(first),
                }
            }
        };
        // Each part moved here, in the cold path (a move of the whole
        // `config` would pin it to the stack from the start).
        let Config {
            hooks,
            sleep,
            action,
            call,
            ..
        } = config;
        Self::call_settling(policy, budget, start, (hooks, call.identity, sleep, action), first, op)
    }

    /// The rest of a `.call()` after its first attempt failed (or its value
    /// or success its hooks must see), or every attempt of one with
    /// `admission` (the first admitted first, waiting on the call's sleep):
    /// the hooks are lent and the retries run. Out of line, so the happy
    /// path neither lends nor stores them.
    #[cold]
    #[inline(never)]
    fn call_settling(
        policy: &Policy,
        budget: Option<&dyn RetryLimit>,
        start: Option<crate::time::Instant>,
        (hooks, identity, sleep, mut action): (H, Identity, S, A),
        first: First<'_, T, E>,
        mut op: Op,
    ) -> Result<T, E> {
        let hooks = identity.lend(&hooks);
        let (first, admission) = match first {
            First::Ran(first) => (first, None),
            First::Admit(limit, refused) => {
                let mut admitting = Admitting::of_dyn(limit, sleep.clock());
                if !admitting.admit_blocking(&|wait| sleep.sleep(wait)) {
                    return refused_first_blocking(policy, sleep.clock(), start, &hooks, refused(admitting.refusal()));
                }
                crate::run::nested::enter_attempt();
                (op(), Some((admitting, refused)))
            }
        };
        let parts = BlockingParts {
            body: &mut op,
            sleeper: &sleep,
            action: action.borrowed(),
            admission,
        };
        settle_blocking(policy, budget, start, &hooks, first, parts)
    }
}

/// Where the cold path of a `.call()` starts.
enum First<'l, T, E> {
    /// The first attempt ran, and returned this.
    Ran(Result<T, E>),
    /// The first attempt asks this admission limiter first; a refusal
    /// ends the call with the result made from it.
    Admit(&'l dyn AdmissionLimit, RefusedResult<Result<T, E>>),
}
