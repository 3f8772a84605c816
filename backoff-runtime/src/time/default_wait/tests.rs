use super::DefaultWait;
use core::future::Future;
use core::pin::pin;
use core::task::{Context, Poll, Waker};
use core::time::Duration;
use std::sync::Arc;
use std::task::Wake;
use std::thread::Thread;
use std::time::Instant;

/// Wakes the thread that blocks on a future.
struct Unpark(Thread);

impl Wake for Unpark {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }
}

/// Polls `future` on this thread, parking between polls: no tokio runtime
/// anywhere. Returns the output and how many polls it took.
fn block_on<F: Future>(future: F) -> (F::Output, u32) {
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    let mut future = pin!(future);
    let mut polls = 0;
    loop {
        polls += 1;
        if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return (output, polls);
        }
        std::thread::park();
    }
}

#[test]
fn outside_tokio_a_wait_runs_on_the_helper_thread_and_is_never_early() {
    let wait = Duration::from_millis(15);
    let started = Instant::now();
    let pending = DefaultWait::start(wait);
    assert!(matches!(pending, DefaultWait::Thread { .. }), "{pending:?}");
    let ((), polls) = block_on(pending);
    assert!(started.elapsed() >= wait, "woke after {:?}", started.elapsed());
    assert!(polls >= 2, "a 15 ms wait was ready at its first poll");
}

#[test]
fn a_reset_wait_keeps_its_backend_and_waits_again() {
    let mut pending = Box::pin(DefaultWait::start(Duration::from_millis(1)));
    block_on(pending.as_mut());
    let wait = Duration::from_millis(10);
    let started = Instant::now();
    pending.as_mut().reset(wait);
    assert!(matches!(*pending, DefaultWait::Thread { .. }));
    block_on(pending.as_mut());
    assert!(started.elapsed() >= wait, "woke after {:?}", started.elapsed());
}

#[cfg(feature = "tokio")]
#[tokio::test(start_paused = true)]
async fn inside_tokio_a_wait_is_tokio_s_and_follows_its_paused_clock() {
    let started = tokio::time::Instant::now();
    let mut pending = Box::pin(DefaultWait::start(Duration::from_secs(30)));
    assert!(matches!(*pending, DefaultWait::Tokio { .. }), "{pending:?}");
    pending.as_mut().await;
    assert_eq!(started.elapsed(), Duration::from_secs(30));
    pending.as_mut().reset(Duration::from_secs(5));
    pending.as_mut().await;
    assert_eq!(started.elapsed(), Duration::from_secs(35));
}

#[test]
fn a_wait_too_long_to_represent_waits_far_instead_of_panicking() {
    let pending = DefaultWait::start(Duration::MAX);
    assert!(matches!(pending, DefaultWait::Thread { .. }));
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut pending = pin!(pending);
    assert!(pending.as_mut().poll(&mut Context::from_waker(&waker)).is_pending());
    pending.as_mut().reset(Duration::MAX);
    assert!(pending.as_mut().poll(&mut Context::from_waker(&waker)).is_pending());
}
