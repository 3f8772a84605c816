use core::future::{Future, pending, ready};
use core::pin::{Pin, pin};
use core::task::{Context, Poll, Waker};

use super::HedgeAttempts;

type Attempt = Pin<Box<dyn Future<Output = u32>>>;

fn poll(attempts: Pin<&mut HedgeAttempts<Attempt>>) -> Poll<Option<u32>> {
    attempts.poll_next(&mut Context::from_waker(Waker::noop()))
}

#[test]
fn the_first_attempt_is_inline_and_the_others_are_counted_beside_it() {
    let mut attempts = pin!(HedgeAttempts::<Attempt>::new());
    assert_eq!((attempts.len(), attempts.is_empty()), (0, true));
    attempts.as_mut().push(Box::pin(ready(1)));
    assert_eq!((attempts.len(), attempts.is_empty()), (1, false));
    attempts.as_mut().push(Box::pin(pending()));
    attempts.as_mut().push(Box::pin(pending()));
    assert_eq!(attempts.len(), 3);
}

#[test]
fn an_attempt_that_ends_is_removed_and_the_others_keep_running() {
    let mut attempts = pin!(HedgeAttempts::<Attempt>::new());
    attempts.as_mut().push(Box::pin(ready(1)));
    attempts.as_mut().push(Box::pin(pending()));
    assert_eq!(poll(attempts.as_mut()), Poll::Ready(Some(1)));
    // The inline slot is free; the boxed attempt still runs.
    assert_eq!((attempts.len(), attempts.is_empty()), (1, false));
    assert_eq!(poll(attempts.as_mut()), Poll::Pending, "one still runs");
    // A new attempt takes the free inline slot.
    attempts.as_mut().push(Box::pin(ready(3)));
    assert_eq!(poll(attempts.as_mut()), Poll::Ready(Some(3)));
    attempts.as_mut().clear();
    assert!(attempts.is_empty());
    assert_eq!(poll(attempts.as_mut()), Poll::Ready(None), "none runs");
}

#[test]
fn two_ready_attempts_end_one_at_a_time() {
    let mut attempts = pin!(HedgeAttempts::new());
    attempts.as_mut().push(ready(1));
    attempts.as_mut().push(ready(2));
    assert_eq!(attempts.len(), 2);
    let mut cx = Context::from_waker(Waker::noop());
    assert_eq!(attempts.as_mut().poll_next(&mut cx), Poll::Ready(Some(1)));
    assert_eq!(attempts.len(), 1);
}

// ---- Hedging: where the next attempt stands ---------------------------------

use super::Hedging;
use crate::run::driver::HedgeStep;
use core::time::Duration;

const DELAY: Duration = Duration::from_millis(50);

/// Polls the wait before the next attempt once; `may_hedge` answers for a
/// hedge, and records whether it was asked.
fn poll_wait(hedging: Pin<&mut Hedging<Attempt>>, may_hedge: bool, asked: &mut bool) -> Poll<()> {
    let mut cx = Context::from_waker(Waker::noop());
    hedging.poll_wait(DELAY, &mut cx, || {
        *asked = true;
        may_hedge
    })
}

#[tokio::test(start_paused = true)]
async fn a_hedge_starts_after_the_delay_when_the_driver_allows_it() {
    let mut hedging = pin!(Hedging::<Attempt>::beside_first());
    let mut asked = false;
    assert!(!hedging.as_mut().starts_now());
    assert_eq!(
        poll_wait(hedging.as_mut(), true, &mut asked),
        Poll::Pending,
        "the delay runs"
    );
    tokio::time::advance(DELAY).await;
    assert_eq!(poll_wait(hedging.as_mut(), true, &mut asked), Poll::Ready(()));
    assert!(asked, "the driver is asked before a hedge");
    assert!(hedging.as_mut().starts_now());
    assert!(!hedging.as_mut().starts_now(), "asking takes the answer");
    // Started, the next hedge waits for the delay again.
    hedging.as_mut().push(Box::pin(pending()));
    assert_eq!(hedging.len(), 1);
    assert_eq!(poll_wait(hedging.as_mut(), true, &mut asked), Poll::Pending);
}

#[tokio::test(start_paused = true)]
async fn a_hedge_the_driver_refuses_stops_the_hedging() {
    let mut hedging = pin!(Hedging::<Attempt>::beside_first());
    let mut asked = false;
    assert_eq!(poll_wait(hedging.as_mut(), false, &mut asked), Poll::Pending);
    tokio::time::advance(DELAY).await;
    assert_eq!(poll_wait(hedging.as_mut(), false, &mut asked), Poll::Ready(()));
    assert!(asked && !hedging.as_mut().starts_now());
    // No hedge follows the next attempt: no wait at all.
    hedging.as_mut().push(Box::pin(pending()));
    asked = false;
    assert_eq!(poll_wait(hedging.as_mut(), true, &mut asked), Poll::Pending);
    tokio::time::advance(DELAY * 10).await;
    assert_eq!(poll_wait(hedging.as_mut(), true, &mut asked), Poll::Pending);
    assert!(!asked);
}

#[tokio::test(start_paused = true)]
async fn a_retry_starts_at_once_or_after_its_wait_keeping_its_charge() {
    let mut hedging = pin!(Hedging::<Attempt>::beside_first());
    let mut kept = 0;
    assert_eq!(
        hedging
            .as_mut()
            .decided(HedgeStep::<u32>::Next(Duration::ZERO), || kept += 1),
        None
    );
    assert!(hedging.as_mut().starts_now());
    assert_eq!(kept, 0, "a retry sent at once keeps no charge");
    let wait = Duration::from_millis(7);
    assert_eq!(
        hedging.as_mut().decided(HedgeStep::<u32>::Next(wait), || kept += 1),
        None
    );
    assert_eq!(kept, 1, "a retry's wait keeps its charge");
    assert!(!hedging.as_mut().starts_now());
    let mut asked = false;
    assert_eq!(poll_wait(hedging.as_mut(), false, &mut asked), Poll::Pending);
    tokio::time::advance(wait).await;
    assert_eq!(poll_wait(hedging.as_mut(), false, &mut asked), Poll::Ready(()));
    assert!(!asked, "a retry does not ask the driver again");
    assert!(hedging.as_mut().starts_now());
}

#[tokio::test(start_paused = true)]
async fn waiting_for_the_attempts_running_cancels_the_next_hedge() {
    let mut hedging = pin!(Hedging::<Attempt>::beside_first());
    hedging.as_mut().push(Box::pin(pending()));
    assert!(hedging.may_follow());
    let step = HedgeStep::<u32>::Await { server_refused: true };
    assert_eq!(hedging.as_mut().decided(step, || unreachable!()), None);
    assert!(!hedging.may_follow(), "the server refused: no attempt follows");
    let mut asked = false;
    assert_eq!(poll_wait(hedging.as_mut(), true, &mut asked), Poll::Pending);
    tokio::time::advance(DELAY * 10).await;
    assert_eq!(
        poll_wait(hedging.as_mut(), true, &mut asked),
        Poll::Pending,
        "no hedge waits"
    );
    assert!(!asked && !hedging.as_mut().starts_now());
    assert_eq!(hedging.len(), 1, "the attempt running keeps running");
}

#[test]
fn a_failure_that_ends_the_call_cancels_the_attempts() {
    let mut hedging = pin!(Hedging::<Attempt>::beside_first());
    hedging.as_mut().push(Box::pin(pending()));
    hedging.as_mut().push(Box::pin(pending()));
    assert_eq!(
        hedging.as_mut().decided(HedgeStep::Return(9), || unreachable!()),
        Some(9)
    );
    assert!(hedging.is_empty());
}

#[tokio::test(start_paused = true)]
async fn an_admission_wait_puts_the_next_attempt_off_and_stopping_holds_hedges_back() {
    let mut hedging = pin!(Hedging::<Attempt>::beside_first());
    let wait = Duration::from_millis(3);
    hedging.as_mut().wait_to_start(wait);
    let mut asked = false;
    assert_eq!(poll_wait(hedging.as_mut(), true, &mut asked), Poll::Pending);
    tokio::time::advance(wait).await;
    assert_eq!(poll_wait(hedging.as_mut(), true, &mut asked), Poll::Ready(()));
    assert!(!asked && hedging.as_mut().starts_now());
    // Stopped: the delay still runs, but no hedge starts when it ends.
    hedging.as_mut().push(Box::pin(pending()));
    hedging.as_mut().stop_hedging();
    assert_eq!(poll_wait(hedging.as_mut(), true, &mut asked), Poll::Pending);
    tokio::time::advance(DELAY).await;
    assert_eq!(poll_wait(hedging.as_mut(), true, &mut asked), Poll::Ready(()));
    assert!(!asked && !hedging.as_mut().starts_now());
}
