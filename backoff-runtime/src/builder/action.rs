//! The builder's `before_retry` action, or none.

use core::marker::PhantomData;

use crate::observe::events::RetryEvent;
use crate::run::blocking::BlockingActionRef;

/// No action before the wait.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoAction;

/// The builder's `before_retry`: `FnMut(&O, &RetryEvent)` for `.call()`,
/// `FnMut(&O, &RetryEvent) -> impl Future<Output = ()>` for `.await`.
#[derive(Clone, Copy, Debug)]
pub struct Action<F, R> {
    pub(crate) action: F,
    pub(crate) _output: PhantomData<fn() -> R>,
}

/// What a blocking loop does before each wait besides waiting: nothing
/// ([`NoAction`]), or the builder's `before_retry`.
pub trait BlockingAction<O> {
    /// Whether there is an action (the start is then read up front).
    const SET: bool;
    /// The action, as the retries borrow it.
    fn borrowed(&mut self) -> Option<BlockingActionRef<'_, O>>;
}

impl<O> BlockingAction<O> for NoAction {
    const SET: bool = false;

    #[cfg_attr(not(debug_assertions), inline(always))]
    fn borrowed(&mut self) -> Option<BlockingActionRef<'_, O>> {
        None
    }
}

impl<O, F: FnMut(&O, &RetryEvent)> BlockingAction<O> for Action<F, ()> {
    const SET: bool = true;

    #[inline]
    fn borrowed(&mut self) -> Option<BlockingActionRef<'_, O>> {
        Some(&mut self.action)
    }
}
