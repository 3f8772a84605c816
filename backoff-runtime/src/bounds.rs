//! The bounds `#[retry]` puts on a function and its keys.
//!
//! What `#[retry]` requires of the function it rewrites and of its keys'
//! values, one item per requirement: names compile errors use, not
//! interfaces to implement. The expansion checks each where the key or type
//! is written, so an error names the requirement in these words (never the
//! loop's internals):
//!
//! - [`RetryResult`]: the function returns a `Result`;
//! - [`TimeoutSupport`]: `timeout = ...` needs a default timer;
//! - [`FromElapsed`]: `timeout = ...` needs
//!   `E: From<Elapsed>`;
//! - [`FromRefused`]: `admission = ...` needs
//!   `E: From<Refused>`;
//! - [`FreshCopy`]: a `mut` argument is `Copy`;
//! - [`sync_before_retry`],
//!   [`async_before_retry`] and
//!   [`SyncBeforeRetry`]: what `before_retry` is;
//! - [`sync_sleep`], [`async_sleep`],
//!   [`SyncSleep`] and [`AsyncSleep`]:
//!   what `sleep = ...` is;
//! - [`DefaultAsyncSleep`]: an async loop without
//!   `sleep = ...` needs a timer (the `tokio` or `futures-timer` feature);
//! - [`CallIntoFuture`]: a builder passed where a `Future` is required
//!   needs `.into_future()`.
//!
//! The hooks need no item here: each is lent to the loop as a `&dyn Fn` of
//! its signature (`&dyn Fn(&E) -> bool` for `retry_if`), so a hook of the
//! wrong type is reported as that cast, on the user's token.
//!
//! ```
//! use backoff_runtime::bounds::RetryResult;
//!
//! fn returns_a_result<R: RetryResult>() {}
//! returns_a_result::<std::io::Result<u8>>();
//! ```

pub use crate::limits::admission::FromRefused;
pub use crate::run::result::RetryResult;
use crate::time::sleep::{CustomSleep, CustomTimer};
pub use crate::time::timeout::{FromElapsed, TimeoutSupport};
use core::time::Duration;

/// What a `mut` argument of a `#[retry]` function must be: `Copy`, since
/// each attempt starts from a fresh copy of the caller's value.
///
/// ```
/// use backoff_runtime::bounds::FreshCopy;
///
/// let cursor = 3_usize;
/// assert_eq!(cursor.fresh_copy(), 3);
/// ```
#[diagnostic::on_unimplemented(
    message = "a `mut` argument of a `#[retry]` function must be `Copy`, and `{Self}` is not: each attempt starts from a fresh copy of what the caller passed",
    label = "each attempt would otherwise see what the failed one changed",
    note = "remove `mut` here and, if the body changes the value, copy or clone it inside the body: `let mut value = value.clone();`"
)]
pub trait FreshCopy: Sized {
    /// A fresh copy for one attempt.
    fn fresh_copy(&self) -> Self;
}

impl<T: Copy> FreshCopy for T {
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn fresh_copy(&self) -> Self {
        *self
    }
}

/// What the `before_retry` of an `async fn` must be: an async action on
/// what failed and the retry's event (`async |error, event| { ... }`,
/// or a path to an `async fn(&E, &RetryEvent)`), awaited before the
/// wait. The expansion hands the action through this function, so a
/// plain closure is reported here (rustc: "`()` is not a future"). It
/// only types the action (a closure's parameter types are inferred from
/// `_failed`); the loop calls it in place, since calling it inside a
/// generic function would leave higher-ranked lifetimes in the caller's
/// future that `tokio::spawn` rejects.
///
/// ```
/// use backoff_runtime::RetryEvent;
/// use backoff_runtime::bounds::async_before_retry;
///
/// let error = String::from("token expired");
/// let refresh = async_before_retry(&error, async |error: &String, _: &RetryEvent| {
///     let _ = error;
/// });
/// # let _ = refresh;
/// ```
#[cfg_attr(not(debug_assertions), inline(always))]
pub fn async_before_retry<D, F>(_failed: &D, action: F) -> F
where
    F: AsyncFnOnce(&D, &crate::RetryEvent),
{
    action
}

/// What the `before_retry` of a sync function must be: an action on
/// what failed and the retry's event (`|error, event| { ... }`, or a
/// path to a `fn(&E, &RetryEvent)`), run before the wait. The expansion
/// hands the action through this function, so a closure's parameter
/// types are inferred from `_failed` and an action of the wrong type is
/// reported against this public item; the loop calls it in place (it
/// may borrow `&mut self`).
///
/// ```
/// use backoff_runtime::RetryEvent;
/// use backoff_runtime::bounds::sync_before_retry;
///
/// let error = String::from("token expired");
/// let refresh = sync_before_retry(&error, |error: &String, _: &RetryEvent| {
///     let _ = error;
/// });
/// # let _ = refresh;
/// ```
#[cfg_attr(not(debug_assertions), inline(always))]
pub fn sync_before_retry<D, F, R>(_failed: &D, action: F) -> F
where
    F: FnOnce(&D, &crate::RetryEvent) -> R,
{
    action
}

/// What the `before_retry` action of a sync function returns: `()`. A
/// future would never be awaited, a value never used.
///
/// ```
/// use backoff_runtime::bounds::SyncBeforeRetry;
///
/// let reconnect = || println!("reconnecting");
/// SyncBeforeRetry::returned(reconnect());
/// ```
#[diagnostic::on_unimplemented(
    message = "`before_retry` of a sync function must return `()`, but it returns `{Self}`",
    label = "nothing would await or use this value",
    note = "an async action needs an `async fn`; in a sync function, run the action to completion inside the closure"
)]
pub trait SyncBeforeRetry {
    /// Takes what the action returned.
    fn returned(self);
}

impl SyncBeforeRetry for () {
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn returned(self) {}
}

/// What the `sleep = ...` of a sync function returns: `()`, once it has
/// waited (a `Fn(Duration)`, such as `std::thread::sleep`). A name
/// compile errors use (see [`sync_sleep`]), not an interface to
/// implement.
///
/// ```
/// use backoff_runtime::bounds::SyncSleep;
///
/// fn blocks<R: SyncSleep>(_: fn(std::time::Duration) -> R) {}
/// blocks(std::thread::sleep);
/// ```
#[diagnostic::on_unimplemented(
    message = "`sleep = ...` on a sync function must block and return `()`, but it returns `{Self}`",
    label = "a sync function's sleep must wait before it returns",
    note = "pass a blocking sleep such as `std::thread::sleep`; an async sleep (returning a future) belongs on an `async fn`"
)]
pub trait SyncSleep {}

impl SyncSleep for () {}

/// What the `sleep = ...` of an `async fn` returns: a future to await
/// (its output is ignored), such as `tokio::time::sleep`'s or
/// `async_io::Timer::after`'s. A name compile errors use (see
/// [`async_sleep`]), not an interface to implement.
///
/// ```
/// use backoff_runtime::bounds::AsyncSleep;
///
/// fn awaits<F: AsyncSleep>(_: F) {}
/// awaits(std::future::ready(()));
/// ```
#[diagnostic::on_unimplemented(
    message = "`sleep = ...` on an `async fn` must return a future to await, but it returns `{Self}`",
    label = "this sleep does not return a future",
    note = "pass your runtime's async sleep, such as `async_io::Timer::after`; a blocking sleep belongs on a sync fn"
)]
pub trait AsyncSleep: core::future::Future {}

impl<F: core::future::Future> AsyncSleep for F {}

/// The `sleep = ...` of a sync function, as the loop uses it: what the
/// expansion hands it through, so a sleep of the wrong type is reported
/// against this function's bounds (`Fn(Duration)` returning `()`), on
/// the user's token.
///
/// ```
/// let _sleep = backoff_runtime::bounds::sync_sleep(std::thread::sleep);
/// ```
#[cfg_attr(not(debug_assertions), inline(always))]
pub fn sync_sleep<F, R>(sleep: F) -> CustomSleep<F>
where
    F: Fn(Duration) -> R,
    R: SyncSleep,
{
    crate::time::sleep::custom_sleep(sleep)
}

/// The `sleep = ...` of an `async fn`, as the loop uses it: what the
/// expansion hands it through, so a sleep of the wrong type is reported
/// against this function's bounds (`Fn(Duration)` returning a future),
/// on the user's token.
///
/// ```
/// # #[cfg(feature = "tokio")]
/// let _timer = backoff_runtime::bounds::async_sleep(tokio::time::sleep);
/// ```
#[cfg_attr(not(debug_assertions), inline(always))]
pub fn async_sleep<F, Fut>(sleep: F) -> CustomTimer<F, Fut>
where
    F: Fn(Duration) -> Fut,
    Fut: AsyncSleep,
{
    crate::time::sleep::custom_timer(sleep)
}

pub use crate::time::sleep::DefaultAsyncSleep;

/// What an error names when a [`Retry`](crate::Retry) or a
/// [`Hedged`](crate::Hedged) is passed where a `Future` is required
/// (`smol::block_on`, `tokio::spawn`): pass `.into_future()`.
///
/// The builders are `IntoFuture`, not `Future`: `.await` takes them as they
/// are. Nothing implements this trait. It is the bound of a `Future` impl
/// that never holds, so that the error says the fix.
///
/// ```
/// use backoff_runtime::Policy;
/// use std::future::IntoFuture;
///
/// let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
/// let policy = Policy::new();
/// // `block_on` takes a `Future`: the builder's `.into_future()`.
/// let result = runtime.block_on(policy.retry(|| async { Ok::<_, ()>(7) }).into_future());
/// assert_eq!(result, Ok(7));
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is `IntoFuture`, not a `Future`: pass `.into_future()`",
    label = "call `.into_future()` on this"
)]
pub trait CallIntoFuture {} // `Retry` and `Hedged` are `IntoFuture`: where a `Future` is required, pass `.into_future()`

/// Declares a builder's `Future` impl that never holds (its bound is
/// [`CallIntoFuture`]), so that passing the builder where a `Future` is
/// required names the fix.
macro_rules! into_future_first {
    ($($builder:ident),+) => {$(
        #[doc = concat!("Never holds: a [`", stringify!($builder), "`](crate::", stringify!($builder), ") is `IntoFuture`, not a `Future`.")]
        /// Where a `Future` is required (`smol::block_on`, `tokio::spawn`),
        /// pass `.into_future()`; the error says so ([`CallIntoFuture`]).
        impl<Op, C> core::future::Future for crate::$builder<'_, Op, C>
        where
            Self: CallIntoFuture, // `Retry` and `Hedged` are `IntoFuture`: where a `Future` is required, pass `.into_future()`
        {
            type Output = ();

            fn poll(self: core::pin::Pin<&mut Self>, _cx: &mut core::task::Context<'_>) -> core::task::Poll<()> {
                core::task::Poll::Pending
            }
        }
    )+};
}

into_future_first!(Retry, Hedged);
