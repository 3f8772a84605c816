//! The hooks a [`Retry`](crate::Retry) owns: each builder method adds its
//! closure to a list (`(earlier, RetryIf(closure))`), and the loop borrows
//! them all as one [`Hooks`] when it needs them ([`OwnedHooks::lend`]).

use core::time::Duration;

use crate::observe::events::{GiveUp, RetryEvent, Success};
use crate::run::hooks::Hooks;

/// Hooks the builder owns, lent to the loop as references: `O` is the
/// outcome the observers see before this hook is added, [`Out`](Self::Out)
/// after it (only `retry_if_ok` changes it).
pub trait OwnedHooks<T, E, O> {
    /// The outcome the observers see once this hook is added.
    type Out;
    /// `hooks` with these hooks lent to it.
    fn lend<'h>(&'h self, hooks: Hooks<'h, T, E, O>) -> Hooks<'h, T, E, Self::Out>;
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

impl<T, E, O, Earlier, Added> OwnedHooks<T, E, O> for (Earlier, Added)
where
    Earlier: OwnedHooks<T, E, O>,
    Added: OwnedHooks<T, E, Earlier::Out>,
{
    type Out = Added::Out;

    #[cfg_attr(not(debug_assertions), inline(always))]
    fn lend<'h>(&'h self, hooks: Hooks<'h, T, E, O>) -> Hooks<'h, T, E, Added::Out> {
        self.1.lend(self.0.lend(hooks))
    }
}

/// Declares one owned hook: its wrapper and how it is lent.
macro_rules! owned_hook {
    ($(#[$doc:meta])* $name:ident, $method:ident, $($bound:tt)+) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug)]
        pub struct $name<F>(pub(crate) F);

        impl<T, E, O, F: $($bound)+> OwnedHooks<T, E, O> for $name<F> {
            type Out = O;

            #[cfg_attr(not(debug_assertions), inline(always))]
            fn lend<'h>(&'h self, hooks: Hooks<'h, T, E, O>) -> Hooks<'h, T, E, O> {
                hooks.$method(&self.0)
            }
        }
    };
}

owned_hook!(
    /// A `retry_if` the builder owns.
    RetryIf, retry_if, Fn(&E) -> bool
);
owned_hook!(
    /// A `retry_after` the builder owns.
    RetryAfter, retry_after, Fn(&E) -> Option<Duration>
);
owned_hook!(
    /// A `retry_after_ok` the builder owns.
    RetryAfterOk, retry_after_ok, Fn(&T) -> Option<Duration>
);
owned_hook!(
    /// An `on_retry` the builder owns.
    OnRetry, on_retry, Fn(&O, &RetryEvent)
);
owned_hook!(
    /// An `on_give_up` the builder owns.
    OnGiveUp, on_give_up, Fn(&O, &GiveUp)
);
owned_hook!(
    /// An `on_success` the builder owns.
    OnSuccess, on_success, Fn(&Success)
);

/// A `retry_if_ok` the builder owns: from here on the observers see the
/// whole result.
#[derive(Clone, Copy, Debug)]
pub struct RetryIfOk<F>(pub(crate) F);

impl<T, E, F: Fn(&T) -> bool> OwnedHooks<T, E, E> for RetryIfOk<F> {
    type Out = Result<T, E>;

    #[cfg_attr(not(debug_assertions), inline(always))]
    fn lend<'h>(&'h self, hooks: Hooks<'h, T, E, E>) -> Hooks<'h, T, E, Result<T, E>> {
        hooks.retry_if_ok(&self.0)
    }
}
