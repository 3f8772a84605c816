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
