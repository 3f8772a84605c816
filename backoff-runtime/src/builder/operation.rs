//! The kinds of operation the builder retries.
//!
//! One that returns a `Result` ([`Blocking`]) or a future of one ([`Awaited`]),
//! with or without the attempt's context.

use core::future::Future;

use crate::run::attempt::Attempt;
use crate::time::clock::Clock;
use crate::time::default_wait::DefaultWait;

/// Marks an operation that returns a `Result` (run with [`Retry::call`](crate::Retry::call)).
#[derive(Debug)]
pub enum Blocking {}

/// Marks an operation that returns a future of a `Result` (run with `.await`).
#[derive(Debug)]
pub enum Awaited {}

/// An operation [`Policy::retry`] can run: a closure returning a `Result`
/// ([`Blocking`]) or a future of one ([`Awaited`]). It names the result's
/// types, so hook closures written without parameter types infer theirs.
pub trait Operation<Kind> {
    /// The success type.
    type Ok;
    /// The error type.
    type Error;
}

impl<F, T, E> Operation<Blocking> for F
where
    F: FnMut() -> Result<T, E>,
{
    type Ok = T;
    type Error = E;
}

impl<F, Fut, T, E> Operation<Awaited> for F
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, E>>,
{
    type Ok = T;
    type Error = E;
}

/// An operation that takes the [`Attempt`] it runs as
/// ([`Policy::retry_with_attempt`]).
pub trait AttemptOperation<Kind> {
    /// The success type.
    type Ok;
    /// The error type.
    type Error;
    /// What one call of the operation returns.
    type Output;
    /// The clock the loop of this kind reads.
    const CLOCK: Clock;
    /// Runs the operation as `attempt`.
    fn run(&mut self, attempt: Attempt) -> Self::Output;
}

impl<F, T, E> AttemptOperation<Blocking> for F
where
    F: FnMut(Attempt) -> Result<T, E>,
{
    type Ok = T;
    type Error = E;
    type Output = Result<T, E>;
    const CLOCK: Clock = Clock::StdOrVirtual;

    #[cfg_attr(not(debug_assertions), inline(always))]
    fn run(&mut self, attempt: Attempt) -> Result<T, E> {
        self(attempt)
    }
}

impl<F, Fut, T, E> AttemptOperation<Awaited> for F
where
    F: FnMut(Attempt) -> Fut,
    Fut: Future<Output = Result<T, E>>,
{
    type Ok = T;
    type Error = E;
    type Output = Fut;
    const CLOCK: Clock = DefaultWait::CLOCK;

    #[cfg_attr(not(debug_assertions), inline(always))]
    fn run(&mut self, attempt: Attempt) -> Fut {
        self(attempt)
    }
}
