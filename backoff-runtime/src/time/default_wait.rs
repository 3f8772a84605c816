//! The default async wait, on the executor the caller runs on.
//!
//! - Inside a tokio runtime, it is tokio's `Sleep` (feature `tokio`).
//!   Paused clocks and `tokio::time::advance` drive it.
//! - Anywhere else (smol, async-std, `futures::executor::block_on`), it is
//!   futures-timer's `Delay` (feature `futures-timer`): one helper thread
//!   for the process, started at the first such wait.
//! - On wasm32-unknown-unknown (the browser, Node) it is always
//!   futures-timer's `Delay`, which waits there on the platform's
//!   `setTimeout`. Tokio's timer does not run there.
//! - The choice is made when a wait starts. A call that never waits never
//!   asks.
//! - Neither backend wakes a wait before its deadline.

use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};
use core::time::Duration;

use crate::time::clock::Clock;

/// A backend this build leaves out: no value of it exists.
#[cfg(not(all(feature = "tokio", feature = "futures-timer")))]
#[derive(Debug)]
#[allow(unreachable_pub)] // named only by `DefaultWait`'s left-out variant
pub enum Unavailable {}

#[cfg(feature = "tokio")]
type TokioSleep = tokio::time::Sleep;
#[cfg(not(feature = "tokio"))]
type TokioSleep = Unavailable;

#[cfg(all(feature = "futures-timer", not(all(target_arch = "wasm32", target_os = "unknown"))))]
type ThreadDelay = futures_timer::Delay;
#[cfg(all(feature = "futures-timer", target_arch = "wasm32", target_os = "unknown"))]
type ThreadDelay = web::WebDelay;
#[cfg(not(feature = "futures-timer"))]
type ThreadDelay = Unavailable;

pin_project_lite::pin_project! {
    /// One pending wait of the default sleep.
    #[project = DefaultWaitProj]
    #[derive(Debug)]
    // pin-project-lite takes no doc comment on a variant's field; the
    // variants' docs say what each holds.
    #[allow(missing_docs)]
    pub enum DefaultWait {
        /// tokio's timer: the caller runs inside a tokio runtime.
        Tokio { #[pin] sleep: TokioSleep },
        /// futures-timer's helper thread: the caller runs elsewhere.
        Thread { delay: ThreadDelay },
    }
}

impl DefaultWait {
    /// The clock its waits keep, which async loops measure on: tokio's when
    /// the feature is on. Outside a tokio runtime it reads
    /// `std::time::Instant`, as futures-timer does.
    #[cfg(feature = "tokio")]
    pub const CLOCK: Clock = Clock::Tokio;
    /// The clock its waits keep, which async loops measure on.
    #[cfg(not(feature = "tokio"))]
    pub const CLOCK: Clock = Clock::Std;

    /// A wait of `wait`, on tokio's timer when the caller runs inside a
    /// tokio runtime, else on futures-timer's thread.
    ///
    /// Panics, naming the fix, when neither fits: no tokio runtime, and a
    /// build without the `futures-timer` feature.
    pub fn start(wait: Duration) -> Self {
        #[cfg(all(feature = "tokio", not(all(target_arch = "wasm32", target_os = "unknown"))))]
        if tokio::runtime::Handle::try_current().is_ok() {
            let deadline = crate::time::clock::far_deadline(tokio::time::Instant::now(), wait);
            return DefaultWait::Tokio {
                sleep: tokio::time::sleep_until(deadline),
            };
        }
        #[cfg(feature = "futures-timer")]
        return DefaultWait::Thread {
            delay: ThreadDelay::new(crate::time::clock::far_wait(wait)),
        };
        #[cfg(not(feature = "futures-timer"))]
        no_backend_here(wait)
    }

    /// Starts the next wait of `wait` in place, on the same backend.
    #[cfg_attr(not(any(feature = "tokio", feature = "futures-timer")), allow(unused_variables))] // no backend: nothing to wait on
    pub fn reset(self: Pin<&mut Self>, wait: Duration) {
        match self.project() {
            #[cfg(feature = "tokio")]
            DefaultWaitProj::Tokio { sleep } => {
                sleep.reset(crate::time::clock::far_deadline(tokio::time::Instant::now(), wait));
            }
            #[cfg(not(feature = "tokio"))]
            DefaultWaitProj::Tokio { sleep } => match *sleep.get_mut() {},
            #[cfg(feature = "futures-timer")]
            DefaultWaitProj::Thread { delay } => delay.reset(crate::time::clock::far_wait(wait)),
            #[cfg(not(feature = "futures-timer"))]
            DefaultWaitProj::Thread { delay } => match *delay {},
        }
    }
}

impl Future for DefaultWait {
    type Output = ();

    #[inline]
    #[cfg_attr(not(any(feature = "tokio", feature = "futures-timer")), allow(unused_variables))] // no backend: nothing to wait on
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        match self.project() {
            #[cfg(feature = "tokio")]
            DefaultWaitProj::Tokio { sleep } => sleep.poll(cx),
            #[cfg(not(feature = "tokio"))]
            DefaultWaitProj::Tokio { sleep } => match *sleep.get_mut() {},
            #[cfg(feature = "futures-timer")]
            DefaultWaitProj::Thread { delay } => Pin::new(delay).poll(cx),
            #[cfg(not(feature = "futures-timer"))]
            DefaultWaitProj::Thread { delay } => match *delay {},
        }
    }
}

/// The panic of a default wait with no backend to wait on. The attribute
/// and the builder check the features at compile time
/// (`bounds::DefaultAsyncSleep`), so only a tokio-only build called outside
/// tokio gets here.
#[cfg(not(feature = "futures-timer"))]
#[cold]
#[track_caller]
fn no_backend_here(_wait: Duration) -> DefaultWait {
    panic!(
        "a retry loop failed outside a tokio runtime and cannot sleep before retrying: \
         backoff-runtime was built without its `futures-timer` feature, which sleeps on any executor. \
         Enable it (`backoff-runtime = {{ version = \"0.1\", features = [\"futures-timer\"] }}`), \
         call inside a tokio runtime, or give the loop your runtime's sleep with `sleep = ...`"
    )
}

/// The web's wait: `setTimeout` through futures-timer, held to its
/// deadline on the web clock.
#[cfg(all(feature = "futures-timer", target_arch = "wasm32", target_os = "unknown"))]
mod web;

// The tests wait on futures-timer's thread (and on tokio's timer with
// both backends): a build without it has no wait to test.
#[cfg(all(test, feature = "futures-timer"))]
mod tests;
