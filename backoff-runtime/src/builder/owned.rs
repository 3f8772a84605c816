//! The hooks a `Retry` owns.
//!
//! The hooks a [`Retry`](crate::Retry) owns: each builder method adds its
//! closure to a list (`(earlier, RetryIf(closure))`), and the loop borrows
//! them all as one [`Hooks`] when it needs them ([`OwnedHooks::lend`]).

use core::marker::PhantomData;
use core::time::Duration;

use crate::builder::flag::{Flag, Off, On};
use crate::observe::events::{GiveUp, RetryEvent, Success};
use crate::run::hooks::Hooks;

/// Hooks the builder owns, lent to the loop as references: `O` is the
/// outcome the observers see before this hook is added, [`Out`](Self::Out)
/// after it (only `retry_if_ok` changes it).
pub trait OwnedHooks<T, E, O>: Marks {
    /// The outcome the observers see once this hook is added.
    type Out;
    /// Whether an observer (`on_retry`, `on_give_up`, `on_success`) is
    /// among them: the call's start is then read up front.
    const OBSERVES: bool = false;
    /// Whether `on_success` is among them.
    const OBSERVES_SUCCESS: bool = false;
    /// Whether `retry_if_ok` is among them (an `Ok` may be pending).
    const JUDGES_VALUES: bool = false;
    /// `hooks` with these hooks lent to it.
    fn lend<'h>(&'h self, hooks: Hooks<'h, T, E, O>) -> Hooks<'h, T, E, Self::Out>;
}

/// Which of `budget` and `admission` the hooks' list marks, as types (with
/// no bound on the hooks): a future keeps what each needs only when given.
pub trait Marks {
    /// Whether `budget` was given.
    type Budgeted: Flag;
    /// Whether `admission` was given.
    type Admitted: Flag;
}

/// No hook yet.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoHooks;

impl<T, E, O> OwnedHooks<T, E, O> for NoHooks {
    type Out = O;

    #[cfg_attr(not(debug_assertions), inline(always))]
    fn lend<'h>(&'h self, hooks: Hooks<'h, T, E, O>) -> Hooks<'h, T, E, O> {
        hooks
    }
}

impl Marks for NoHooks {
    type Budgeted = Off;
    type Admitted = Off;
}

impl<Earlier: Marks, Added: Marks> Marks for (Earlier, Added) {
    type Budgeted = <Earlier::Budgeted as Flag>::Or<Added::Budgeted>;
    type Admitted = <Earlier::Admitted as Flag>::Or<Added::Admitted>;
}

impl<T, E, O, Earlier, Added> OwnedHooks<T, E, O> for (Earlier, Added)
where
    Earlier: OwnedHooks<T, E, O>,
    Added: OwnedHooks<T, E, Earlier::Out>,
{
    type Out = Added::Out;
    const OBSERVES: bool = Earlier::OBSERVES || Added::OBSERVES;
    const OBSERVES_SUCCESS: bool = Earlier::OBSERVES_SUCCESS || Added::OBSERVES_SUCCESS;
    const JUDGES_VALUES: bool = Earlier::JUDGES_VALUES || Added::JUDGES_VALUES;

    #[cfg_attr(not(debug_assertions), inline(always))]
    fn lend<'h>(&'h self, hooks: Hooks<'h, T, E, O>) -> Hooks<'h, T, E, Added::Out> {
        self.1.lend(self.0.lend(hooks))
    }
}

/// A mark in the list: it lends nothing, and its type tells the future (at
/// compile time) which of `budget` (`B`) and `admission` (`A`) were given.
#[derive(Debug)]
pub struct Mark<B, A>(PhantomData<fn() -> (B, A)>);

impl<B, A> Clone for Mark<B, A> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<B, A> Copy for Mark<B, A> {}

impl<B: Flag, A: Flag> Mark<B, A> {
    /// The mark.
    pub(crate) const NEW: Self = Mark(PhantomData);
}

impl<B: Flag, A: Flag> Marks for Mark<B, A> {
    type Budgeted = B;
    type Admitted = A;
}

impl<T, E, O, B: Flag, A: Flag> OwnedHooks<T, E, O> for Mark<B, A> {
    type Out = O;

    #[cfg_attr(not(debug_assertions), inline(always))]
    fn lend<'h>(&'h self, hooks: Hooks<'h, T, E, O>) -> Hooks<'h, T, E, O> {
        hooks
    }
}

/// The mark of `admission`: every attempt is asked for.
pub(crate) type Admits = Mark<Off, On>;

/// The mark of `budget`: what the budget allowed is kept across a wait.
pub(crate) type Budgeted = Mark<On, Off>;

/// Declares one owned hook: its wrapper and how it is lent.
macro_rules! owned_hook {
    ($(#[$doc:meta])* $name:ident, $method:ident, observes: $observes:expr, succeeds: $succeeds:expr, $($bound:tt)+) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug)]
        pub struct $name<F>(pub(crate) F);

        impl<F> Marks for $name<F> {
            type Budgeted = Off;
            type Admitted = Off;
        }

        impl<T, E, O, F: $($bound)+> OwnedHooks<T, E, O> for $name<F> {
            type Out = O;
            const OBSERVES: bool = $observes;
            const OBSERVES_SUCCESS: bool = $succeeds;

            #[cfg_attr(not(debug_assertions), inline(always))]
            fn lend<'h>(&'h self, hooks: Hooks<'h, T, E, O>) -> Hooks<'h, T, E, O> {
                hooks.$method(&self.0)
            }
        }
    };
}

owned_hook!(
    /// A `retry_if` the builder owns.
    RetryIf, retry_if, observes: false, succeeds: false, Fn(&E) -> bool
);
owned_hook!(
    /// A `retry_after` the builder owns.
    RetryAfter, retry_after, observes: false, succeeds: false, Fn(&E) -> Option<Duration>
);
owned_hook!(
    /// A `retry_after_ok` the builder owns.
    RetryAfterOk, retry_after_ok, observes: false, succeeds: false, Fn(&T) -> Option<Duration>
);
owned_hook!(
    /// A `pending_error` the builder owns.
    PendingError, pending_error, observes: false, succeeds: false, Fn(T) -> E
);
owned_hook!(
    /// A `slow_down_if` the builder owns.
    SlowDownIf, slow_down_if, observes: false, succeeds: false, Fn(&E) -> bool
);
owned_hook!(
    /// An `on_retry` the builder owns.
    OnRetry, on_retry, observes: true, succeeds: false, Fn(&O, &RetryEvent)
);
owned_hook!(
    /// An `on_give_up` the builder owns.
    OnGiveUp, on_give_up, observes: true, succeeds: false, Fn(&O, &GiveUp)
);
owned_hook!(
    /// An `on_success` the builder owns.
    OnSuccess, on_success, observes: true, succeeds: true, Fn(&Success)
);

/// A `retry_if_ok` the builder owns: from here on the observers see the
/// whole result.
#[derive(Clone, Copy, Debug)]
pub struct RetryIfOk<F>(pub(crate) F);

impl<F> Marks for RetryIfOk<F> {
    type Budgeted = Off;
    type Admitted = Off;
}

impl<T, E, F: Fn(&T) -> bool> OwnedHooks<T, E, E> for RetryIfOk<F> {
    type Out = Result<T, E>;
    const JUDGES_VALUES: bool = true;

    #[cfg_attr(not(debug_assertions), inline(always))]
    fn lend<'h>(&'h self, hooks: Hooks<'h, T, E, E>) -> Hooks<'h, T, E, Result<T, E>> {
        hooks.retry_if_ok(&self.0)
    }
}
