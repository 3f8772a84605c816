//! The state of an async retry loop. The loop itself is generated inline in
//! the annotated function (a closure returning a future could not lend
//! `&mut self`), so this type keeps what must survive between attempts small:
//! the retry state and, for tokio, one boxed `Sleep` allocated on the first
//! failure and reset for later waits (the future stays within 48 bytes of the
//! plain one).

use core::marker::PhantomData;
use core::time::Duration;

use crate::clock::Clock;
use crate::decide::RetryState;
use crate::hooks::Hooks;
use crate::policy::Policy;

/// How an async loop sleeps and reads its clock.
#[diagnostic::on_unimplemented(
    message = "`#[retry]` on an `async fn` needs the `tokio` feature of `backoff-runtime`, or a `sleep = ...` argument",
    label = "async retry loops sleep with `tokio::time::sleep` by default",
    note = "enable it with `backoff-runtime = {{ version = \"...\", features = [\"tokio\"] }}`, or pass your runtime's sleep: `#[retry(sleep = my_sleep)]`"
)]
pub trait AsyncSleeper {
    /// The clock `max_elapsed` is measured on.
    type Clock: Clock;
    /// What the loop keeps between waits (tokio: the boxed `Sleep`).
    type Slot: Default;
}

/// Sleeps with `tokio::time::sleep`, measures with tokio's clock.
#[derive(Debug)]
pub struct TokioSleeper;

#[cfg(feature = "tokio")]
impl AsyncSleeper for TokioSleeper {
    type Clock = crate::clock::TokioClock;
    type Slot = Option<core::pin::Pin<Box<tokio::time::Sleep>>>;
}

/// Sleeps with the function's `sleep = ...`, measures with `std::time::Instant`.
#[derive(Debug)]
pub struct CustomSleeper;

impl AsyncSleeper for CustomSleeper {
    type Clock = crate::clock::StdClock;
    type Slot = ();
}

/// The state of one call's async retry loop.
pub struct AsyncLoop<S: AsyncSleeper> {
    state: RetryState,
    slot: S::Slot,
    _sleeper: PhantomData<S>,
}

impl<S: AsyncSleeper> AsyncLoop<S> {
    /// A fresh loop; reads the clock only when `max_elapsed` or a hook needs it.
    #[inline(always)]
    pub fn start(policy: &Policy, needs_start: bool) -> Self {
        AsyncLoop {
            state: RetryState::start::<S::Clock>(policy, needs_start),
            slot: S::Slot::default(),
            _sleeper: PhantomData,
        }
    }

    /// The wait before the next attempt, or `None` when the loop must stop
    /// and return `error`.
    #[inline]
    pub fn decide<E, H: Hooks<E>>(&mut self, policy: &Policy, error: &E, hooks: &H) -> Option<Duration> {
        self.state.decide::<E, H, S::Clock>(policy, error, hooks).ok()
    }
}

#[cfg(feature = "tokio")]
impl AsyncLoop<TokioSleeper> {
    /// A tokio sleep of `wait`: the boxed `Sleep` is allocated on the first
    /// call and reset afterwards. Panics, naming the fix, outside a tokio
    /// runtime with timers.
    pub fn sleep(&mut self, wait: Duration) -> core::pin::Pin<&mut tokio::time::Sleep> {
        let deadline = tokio::time::Instant::now() + wait;
        match &mut self.slot {
            Some(sleep) => {
                sleep.as_mut().reset(deadline);
                sleep.as_mut()
            }
            slot @ None => slot.insert(Box::pin(new_tokio_sleep(deadline))).as_mut(),
        }
    }
}

/// `tokio::time::sleep_until`, with a panic message that names the fix when
/// there is no runtime to sleep on.
#[cfg(feature = "tokio")]
fn new_tokio_sleep(deadline: tokio::time::Instant) -> tokio::time::Sleep {
    if tokio::runtime::Handle::try_current().is_err() {
        panic!(
            "#[retry] async function failed outside a tokio runtime and cannot sleep before retrying: \
             call it inside a tokio runtime built with `enable_time()` (e.g. #[tokio::main]), \
             or give the attribute your runtime's sleep with `sleep = ...`"
        );
    }
    tokio::time::sleep_until(deadline)
}
