//! The adaptive limiters (`admission = ...`): many threads and tasks through
//! one limiter, and the attribute, the builder and the tower layer pacing
//! and refusing attempts on a paused clock.

use backoff_runtime::limits::{
    AdaptiveRateLimiter, AdaptiveThrottle, Admission, AdmissionLimit, AdmissionRequest, AttemptEnd,
};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// A clock that the threads share and move forward by their waits: time in
/// nanoseconds after `start`.
struct SharedClock {
    start: Instant,
    nanos: AtomicU64,
}

impl SharedClock {
    fn now(&self) -> Instant {
        self.start + Duration::from_nanos(self.nanos.load(Ordering::SeqCst))
    }

    /// Moves the clock to at least `at`; the clock's new time.
    fn advance_to(&self, at: Instant) -> Instant {
        let target = u64::try_from(at.duration_since(self.start).as_nanos()).unwrap_or(u64::MAX);
        let before = self.nanos.fetch_max(target, Ordering::SeqCst);
        self.start + Duration::from_nanos(before.max(target))
    }
}

#[test]
fn threads_through_one_rate_limiter_lose_no_capacity_and_none_waits_past_the_maximum() {
    let max_wait = Duration::from_millis(400);
    let limiter = AdaptiveRateLimiter::new().max_wait(max_wait);
    let clock = SharedClock {
        start: Instant::now(),
        nanos: AtomicU64::new(0),
    };
    // Answers at 100 per second for 3 seconds, then a throttle: the bucket
    // counts from there, refilling at 0.7 of the measured rate.
    for tick in 0..300_u64 {
        limiter.observed(AttemptEnd::new(clock.start + Duration::from_millis(10 * tick), false));
    }
    let throttled_at = clock.advance_to(clock.start + Duration::from_secs(3));
    limiter.observed(AttemptEnd::new(throttled_at, true));
    let rate = limiter.fill_rate();
    assert!(rate > 50.0 && rate < 80.0, "fill rate {rate}");
    let tokens_before = limiter.tokens();

    let threads = 8;
    let attempts = 400;
    let results: Vec<(u64, u64, u64)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let (mut granted, mut refused, mut wakeups) = (0_u64, 0_u64, 0_u64);
                    for attempt in 0..attempts {
                        let asked = clock.now();
                        let mut now = asked;
                        loop {
                            // How long it waited, on the clock.
                            let waited = now.duration_since(asked);
                            let request = AdmissionRequest::new(now, 1 + attempt % 3, waited);
                            let answer = limiter.admit(request);
                            assert!(limiter.tokens() >= 0.0, "negative capacity: {}", limiter.tokens());
                            match answer {
                                Admission::Go => {
                                    granted += 1;
                                    break;
                                }
                                Admission::Refuse | Admission::Shut(_) => {
                                    refused += 1;
                                    break;
                                }
                                Admission::GoAfter(wait) => {
                                    let at = now + wait;
                                    assert!(
                                        at - asked <= max_wait,
                                        "a task would wait {:?}, past {max_wait:?}",
                                        at - asked
                                    );
                                    wakeups += 1;
                                    clock.advance_to(at);
                                    granted += 1;
                                    break;
                                }
                                Admission::Wait(wait) => {
                                    wakeups += 1;
                                    now = clock.advance_to(now + wait);
                                }
                            }
                        }
                    }
                    (granted, refused, wakeups)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|handle| handle.join().expect("no thread panics"))
            .collect()
    });
    let granted: u64 = results.iter().map(|(granted, _, _)| granted).sum();
    let refused: u64 = results.iter().map(|(_, refused, _)| refused).sum();
    let wakeups: u64 = results.iter().map(|(_, _, wakeups)| wakeups).sum();
    assert!(wakeups > 0, "some attempts waited");
    assert_eq!(
        granted + refused,
        u64::from(threads * attempts),
        "every attempt was answered"
    );
    assert!(granted > 0);
    // Each waiter is told its own instant: no herd wakes for one token.
    assert!(wakeups <= 2 * granted, "{wakeups} wake-ups for {granted} admissions");
    let elapsed = clock.now().duration_since(throttled_at).as_secs_f64();
    let refilled = rate * elapsed;
    // No attempt went without its token: what was granted fits in what the
    // bucket held and refilled.
    assert!(
        granted as f64 <= tokens_before + refilled + 1e-6,
        "{granted} granted, {tokens_before} held + {refilled} refilled"
    );
    // No capacity lost: the threads always wanted more, so what refilled
    // was granted (less at most one bucketful left or dropped when full).
    assert!(
        granted as f64 + limiter.tokens() >= refilled - rate - 1.0,
        "{granted} granted + {} left, {refilled} refilled",
        limiter.tokens()
    );
}

#[test]
fn threads_through_one_throttle_count_every_request_and_accept() {
    let throttle = AdaptiveThrottle::new();
    let now = Instant::now();
    let threads = 8_u64;
    let attempts = 1000_u64;
    let refused: u64 = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|thread| {
                let throttle = &throttle;
                scope.spawn(move || {
                    let mut refused = 0;
                    for attempt in 0..attempts {
                        match throttle.admit(AdmissionRequest::new(now, 1, Duration::ZERO)) {
                            Admission::Go => throttle.observed(AttemptEnd::new(now, (thread + attempt) % 4 != 0)),
                            Admission::Refuse | Admission::Shut(_) => refused += 1,
                            Admission::Wait(wait) | Admission::GoAfter(wait) => {
                                panic!("the throttle never makes an attempt wait ({wait:?})")
                            }
                        }
                    }
                    refused
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|handle| handle.join().expect("no thread panics"))
            .sum()
    });
    let (requests, accepts) = throttle.counts(now);
    assert_eq!(
        requests,
        threads * attempts,
        "every request counted, refused ones included"
    );
    assert!(refused > 0, "a backend accepting a quarter is shed");
    assert!(accepts <= requests - refused);
    // A backend accepting a quarter of what it gets: the client sheds most
    // attempts itself, and keeps shedding with the rule's probability.
    assert!(refused * 2 > requests, "{refused} of {requests} refused");
    let p = throttle.rejection_probability(now);
    let rule = (requests as f64 - 2.0 * accepts as f64) / (requests as f64 + 1.0);
    assert!((p - rule).abs() < 1e-12 && p > 0.5, "p = {p}");
}

/// The errors of the functions below: a backend saying "slow down", one
/// failing otherwise, and the client's own refusal.
#[derive(Clone, Debug, PartialEq)]
enum CallError {
    SlowDown,
    Broken,
    Shed,
}

impl From<backoff_runtime::limits::Refused> for CallError {
    fn from(_: backoff_runtime::limits::Refused) -> Self {
        CallError::Shed
    }
}

mod attribute_async {
    use super::CallError;
    use backoff_runtime::limits::AdaptiveRateLimiter;
    use backoff_runtime::retry;
    use std::sync::atomic::{AtomicU32, Ordering};
    use std::time::Duration;

    static PACED: AdaptiveRateLimiter = AdaptiveRateLimiter::new().max_wait(Duration::from_secs(5));
    static SENT: AtomicU32 = AtomicU32::new(0);

    #[retry(admission = PACED, slow_down_if = |e| *e == CallError::SlowDown, max_retries = 1, initial_backoff = "10ms", jitter = none)]
    async fn fetch(fail: bool) -> Result<u32, CallError> {
        SENT.fetch_add(1, Ordering::SeqCst);
        if fail { Err(CallError::SlowDown) } else { Ok(1) }
    }

    #[tokio::test(start_paused = true)]
    async fn a_throttle_makes_the_next_first_attempts_wait_on_the_loops_timer() {
        // Until the backend throttles, nothing waits.
        let start = tokio::time::Instant::now();
        assert_eq!(fetch(false).await, Ok(1));
        assert_eq!(start.elapsed(), Duration::ZERO);
        // Two throttles (the first attempt and its retry): the bucket now
        // refills at the minimum, half a token per second.
        assert_eq!(fetch(true).await, Err(CallError::SlowDown));
        assert!(PACED.is_enabled());
        let before = tokio::time::Instant::now();
        assert_eq!(fetch(false).await, Ok(1));
        assert_eq!(fetch(false).await, Ok(1));
        let paced = before.elapsed();
        // The bucket held at most one token: the second call waited for a
        // refill of one token at most 2 s (rate 0.5/s, rising with successes).
        assert!(paced >= Duration::from_millis(200), "paced {paced:?}");
        assert!(
            paced <= Duration::from_secs(5),
            "no call waits past the maximum: {paced:?}"
        );
        assert_eq!(SENT.load(Ordering::SeqCst), 5);
        assert!(PACED.tokens() >= 0.0);
    }
}

mod attribute_sync {
    use super::CallError;
    use backoff_runtime::limits::AdaptiveThrottle;
    use backoff_runtime::retry;
    use std::cell::Cell;

    thread_local! {
        static SENT: Cell<u32> = const { Cell::new(0) };
    }

    static SHEDDING: AdaptiveThrottle = AdaptiveThrottle::new();

    #[retry(admission = SHEDDING, max_retries = 1, sleep = |_| {})]
    fn query() -> Result<(), CallError> {
        SENT.with(|sent| sent.set(sent.get() + 1));
        Err(CallError::Broken)
    }

    #[test]
    fn a_backend_that_accepts_nothing_is_shed_on_the_client_with_the_refused_error() {
        backoff_runtime::testing::seed_thread_rng(3);
        let calls = 200;
        let mut shed = 0;
        for _ in 0..calls {
            match query() {
                Err(CallError::Shed) => shed += 1,
                other => assert_eq!(other, Err(CallError::Broken)),
            }
        }
        let sent = SENT.with(Cell::get);
        assert!(shed > 100, "most calls refused locally: {shed} of {calls}");
        assert!(
            sent < calls,
            "{sent} attempts sent for {calls} calls of up to two attempts"
        );
    }

    static PATIENT: AdaptiveThrottle = AdaptiveThrottle::new();

    #[retry(admission = PATIENT, retry_if = |_| false, sleep = |_| {})]
    fn lookup(found: bool) -> Result<(), CallError> {
        if found { Ok(()) } else { Err(CallError::Broken) }
    }

    #[test]
    fn answers_that_are_no_throttle_never_shed() {
        // Permanent errors and successes are accepts: the backend answered.
        for i in 0..500 {
            let result = lookup(i % 2 == 0);
            assert_ne!(result, Err(CallError::Shed));
        }
    }

    static DISCERNING: AdaptiveThrottle = AdaptiveThrottle::new();

    #[retry(admission = DISCERNING, slow_down_if = |e| *e == CallError::SlowDown, max_retries = 1, sleep = |_| {})]
    fn report() -> Result<(), CallError> {
        Err(CallError::Broken)
    }

    #[test]
    fn a_retried_error_that_slow_down_if_does_not_flag_never_sheds() {
        // Every error is retried (no `retry_if`), but none is a throttle:
        // the backend answered each attempt, so nothing is refused.
        for _ in 0..500 {
            assert_eq!(report(), Err(CallError::Broken));
        }
    }
}

mod builder {
    use super::CallError;
    use backoff_runtime::Policy;
    use backoff_runtime::limits::AdaptiveRateLimiter;
    use std::sync::atomic::{AtomicU32, Ordering};
    use std::time::Duration;

    #[tokio::test(start_paused = true)]
    async fn the_builders_future_paces_and_refuses_past_the_maximum_wait() {
        let limiter = AdaptiveRateLimiter::new().max_wait(Duration::from_secs(1));
        let policy = Policy::new().max_retries(1).initial_backoff(Duration::from_millis(10));
        let sent = AtomicU32::new(0);
        let slow_down = || async {
            sent.fetch_add(1, Ordering::SeqCst);
            Err::<(), _>(CallError::SlowDown)
        };
        // A throttle enables the bucket; its retry needs the one token the
        // empty bucket refills in 2 s, past the 1 s allowed: refused.
        let result = policy.retry(slow_down).admission(&limiter).await;
        assert_eq!(result, Err(CallError::Shed));
        assert_eq!(sent.load(Ordering::SeqCst), 1, "the refused retry was not sent");
        // A wait within the maximum is slept, then the attempt goes.
        let limiter = AdaptiveRateLimiter::new().max_wait(Duration::from_secs(3));
        let start = tokio::time::Instant::now();
        let result = policy.retry(slow_down).admission(&limiter).await;
        assert_eq!(result, Err(CallError::SlowDown));
        assert_eq!(sent.load(Ordering::SeqCst), 3);
        assert!(
            start.elapsed() >= Duration::from_secs(2),
            "waited {:?}",
            start.elapsed()
        );
    }

    #[test]
    fn the_builders_call_asks_before_every_attempt() {
        let limiter = AdaptiveRateLimiter::new().max_wait(Duration::ZERO);
        let mut sent = 0;
        let result = Policy::new()
            .max_retries(3)
            .retry(|| {
                sent += 1;
                Err::<(), _>(CallError::SlowDown)
            })
            .sleep(|_| {})
            .admission(&limiter)
            .call();
        assert_eq!(
            (result, sent),
            (Err(CallError::Shed), 1),
            "the retry found an empty bucket"
        );
    }
}

mod tasks {
    use super::CallError;
    use backoff_runtime::limits::AdaptiveRateLimiter;
    use backoff_runtime::retry;
    use std::sync::atomic::{AtomicU32, Ordering};
    use std::time::Duration;

    static SHARED: AdaptiveRateLimiter = AdaptiveRateLimiter::new().max_wait(Duration::from_secs(4));
    static GRANTED: AtomicU32 = AtomicU32::new(0);

    #[retry(admission = SHARED, max_retries = 1, initial_backoff = "1ms")]
    async fn call(throttle: bool) -> Result<(), CallError> {
        GRANTED.fetch_add(1, Ordering::SeqCst);
        if throttle { Err(CallError::SlowDown) } else { Ok(()) }
    }

    #[tokio::test(start_paused = true)]
    async fn many_tasks_through_one_limiter_none_starved_past_the_maximum_wait() {
        // Enable the bucket: two throttled attempts.
        let _ = call(true).await;
        GRANTED.store(0, Ordering::SeqCst);
        let start = tokio::time::Instant::now();
        let tasks: Vec<_> = (0..64)
            .map(|_| {
                tokio::spawn(async {
                    let begun = tokio::time::Instant::now();
                    let result = call(false).await;
                    (result, begun.elapsed())
                })
            })
            .collect();
        let mut ok = 0;
        let mut shed = 0;
        for task in tasks {
            let (result, took) = task.await.expect("no task panics");
            assert!(
                took <= Duration::from_secs(4) + Duration::from_millis(1),
                "a task waited {took:?}"
            );
            match result {
                Ok(()) => ok += 1,
                Err(CallError::Shed) => shed += 1,
                Err(other) => panic!("unexpected {other:?}"),
            }
        }
        assert_eq!(ok + shed, 64);
        assert!(shed > 0 && ok > 1, "{ok} sent, {shed} shed");
        assert_eq!(GRANTED.load(Ordering::SeqCst), ok, "a refused attempt was never sent");
        // What was sent fits in what the bucket refilled (its rate only grows
        // on these successes; never more than 2x the measured rate).
        let elapsed = start.elapsed().as_secs_f64();
        assert!(f64::from(ok) <= 1.0 + 20.0 * elapsed, "{ok} sent in {elapsed} s");
    }
}

/// A refused attempt, first or retry, is seen as any other end of a call: a
/// give-up with `StopReason::Refused`, after the attempts that were made.
mod refusals_are_give_ups {
    use super::CallError;
    use backoff_runtime::limits::{Admission, AdmissionLimit, AdmissionRequest};
    use backoff_runtime::{GiveUp, Policy, RetryEvent, StopReason, retry};
    use std::cell::RefCell;
    use std::sync::Mutex;
    use std::time::Duration;

    /// Admits the attempts before `from` and refuses the rest.
    struct RefuseFrom(u32);

    impl AdmissionLimit for RefuseFrom {
        fn admit(&self, request: AdmissionRequest<'_>) -> Admission {
            if request.attempt >= self.0 {
                Admission::Refuse
            } else {
                Admission::Go
            }
        }
    }

    static REFUSE_FIRST: RefuseFrom = RefuseFrom(1);
    static REFUSE_RETRY: RefuseFrom = RefuseFrom(2);

    /// reqwest's error type of this crate stands for a refused attempt.
    #[retry(admission = REFUSE_FIRST)]
    async fn refused_over_reqwest() -> Result<(), backoff_runtime::reqwest_errors::Error> {
        Ok(())
    }

    #[tokio::test(start_paused = true)]
    async fn a_function_returning_the_reqwest_error_is_refused_with_it() {
        assert!(matches!(
            refused_over_reqwest().await,
            Err(backoff_runtime::reqwest_errors::Error::Refused(_))
        ));
    }

    /// What the hooks heard: (error, reason, attempts, retries left).
    type GiveUps = Vec<(CallError, StopReason, u32, u32)>;

    thread_local! {
        static HEARD: RefCell<GiveUps> = const { RefCell::new(Vec::new()) };
        static RETRIES: RefCell<u32> = const { RefCell::new(0) };
        static SENT: RefCell<u32> = const { RefCell::new(0) };
    }

    fn heard_give_up(error: &CallError, event: &GiveUp) {
        let seen = (error.clone(), event.reason(), event.attempts(), event.retries_left());
        HEARD.with(|heard| heard.borrow_mut().push(seen));
    }

    fn heard_retry(_: &CallError, _: &RetryEvent) {
        RETRIES.with(|retries| *retries.borrow_mut() += 1);
    }

    fn take() -> (GiveUps, u32, u32) {
        (
            HEARD.with(|heard| heard.take()),
            RETRIES.with(|retries| retries.replace(0)),
            SENT.with(|sent| sent.replace(0)),
        )
    }

    #[retry(admission = REFUSE_FIRST, max_retries = 2, sleep = |_| {}, on_give_up = heard_give_up, on_retry = heard_retry)]
    fn sync_first() -> Result<(), CallError> {
        SENT.with(|sent| *sent.borrow_mut() += 1);
        Err(CallError::Broken)
    }

    #[retry(admission = REFUSE_RETRY, max_retries = 2, sleep = |_| {}, on_give_up = heard_give_up, on_retry = heard_retry)]
    fn sync_retry() -> Result<(), CallError> {
        SENT.with(|sent| *sent.borrow_mut() += 1);
        Err(CallError::Broken)
    }

    #[test]
    fn the_attributes_sync_loop_reports_a_refused_first_attempt_and_a_refused_retry() {
        let _ = take();
        assert_eq!(sync_first(), Err(CallError::Shed));
        assert_eq!(
            take(),
            (vec![(CallError::Shed, StopReason::Refused, 0, 2)], 0, 0),
            "no attempt ran: a give-up after 0 attempts, no retry announced"
        );
        assert_eq!(sync_retry(), Err(CallError::Shed));
        assert_eq!(
            take(),
            (vec![(CallError::Shed, StopReason::Refused, 1, 2)], 1, 1),
            "one attempt, its retry announced and refused"
        );
    }

    #[retry(admission = REFUSE_FIRST, max_retries = 2, initial_backoff = "10ms", on_give_up = heard_give_up, on_retry = heard_retry)]
    async fn async_first() -> Result<(), CallError> {
        SENT.with(|sent| *sent.borrow_mut() += 1);
        Err(CallError::Broken)
    }

    #[retry(admission = REFUSE_RETRY, max_retries = 2, initial_backoff = "10ms", on_give_up = heard_give_up, on_retry = heard_retry)]
    async fn async_retry() -> Result<(), CallError> {
        SENT.with(|sent| *sent.borrow_mut() += 1);
        Err(CallError::Broken)
    }

    /// With `retry_if_ok` the observers see the whole result; a refusal is
    /// its `Err`.
    #[retry(admission = REFUSE_RETRY, max_retries = 2, initial_backoff = "10ms", retry_if_ok = |v: &u32| *v == 0,
            on_give_up = |r: &Result<u32, CallError>, e: &GiveUp| {
                if let Err(error) = r { heard_give_up(error, e) }
            })]
    async fn async_polling() -> Result<u32, CallError> {
        SENT.with(|sent| *sent.borrow_mut() += 1);
        Ok(0)
    }

    #[tokio::test(start_paused = true, flavor = "current_thread")]
    async fn the_attributes_async_loop_reports_a_refused_first_attempt_and_a_refused_retry() {
        let _ = take();
        assert_eq!(async_first().await, Err(CallError::Shed));
        assert_eq!(take(), (vec![(CallError::Shed, StopReason::Refused, 0, 2)], 0, 0));
        assert_eq!(async_retry().await, Err(CallError::Shed));
        assert_eq!(take(), (vec![(CallError::Shed, StopReason::Refused, 1, 2)], 1, 1));
        assert_eq!(async_polling().await, Err(CallError::Shed));
        assert_eq!(take(), (vec![(CallError::Shed, StopReason::Refused, 1, 2)], 0, 1));
    }

    /// What the builder's hooks heard: (reason, attempts).
    fn builder_heard() -> (Mutex<Vec<(StopReason, u32)>>, Mutex<u32>) {
        (Mutex::new(Vec::new()), Mutex::new(0))
    }

    #[test]
    fn the_builders_call_reports_a_refused_first_attempt_and_a_refused_retry() {
        for (limit, attempts, retries) in [(&REFUSE_FIRST, 0, 0), (&REFUSE_RETRY, 1, 1)] {
            let (give_ups, retried) = builder_heard();
            let mut sent = 0;
            let result = Policy::new()
                .max_retries(2)
                .retry(|| {
                    sent += 1;
                    Err::<(), _>(CallError::Broken)
                })
                .sleep(|_| {})
                .admission(limit)
                .on_retry(|_, _| *retried.lock().unwrap() += 1)
                .on_give_up(|error, event| {
                    assert_eq!(*error, CallError::Shed);
                    give_ups.lock().unwrap().push((event.reason(), event.attempts()));
                })
                .call();
            assert_eq!(result, Err(CallError::Shed));
            assert_eq!(sent, attempts);
            assert_eq!(give_ups.into_inner().unwrap(), [(StopReason::Refused, attempts)]);
            assert_eq!(retried.into_inner().unwrap(), retries);
        }
    }

    #[tokio::test(start_paused = true)]
    async fn the_builders_future_reports_a_refused_first_attempt_and_a_refused_retry() {
        for (limit, attempts, retries) in [(&REFUSE_FIRST, 0, 0), (&REFUSE_RETRY, 1, 1)] {
            let (give_ups, retried) = builder_heard();
            let result = Policy::new()
                .max_retries(2)
                .initial_backoff(Duration::from_millis(10))
                .retry(|| async { Err::<(), _>(CallError::Broken) })
                .admission(limit)
                .on_retry(|_, _| *retried.lock().unwrap() += 1)
                .on_give_up(|error, event| {
                    assert_eq!(*error, CallError::Shed);
                    give_ups.lock().unwrap().push((event.reason(), event.attempts()));
                })
                .await;
            assert_eq!(result, Err(CallError::Shed));
            assert_eq!(give_ups.into_inner().unwrap(), [(StopReason::Refused, attempts)]);
            assert_eq!(retried.into_inner().unwrap(), retries);
        }
    }

    #[retry(max_retries = 3, sleep = |_| {})]
    fn outer() -> Result<(), CallError> {
        SENT.with(|sent| *sent.borrow_mut() += 100);
        sync_first()
    }

    #[test]
    fn a_refusal_below_is_not_retried_above() {
        let _ = take();
        // The limiter shed the call below: the loop above does not send it
        // again (it would multiply the load the limiter sheds).
        assert_eq!(outer(), Err(CallError::Shed));
        let (heard, _, sent) = take();
        assert_eq!(sent, 100, "the outer body ran once");
        assert_eq!(heard, [(CallError::Shed, StopReason::Refused, 0, 2)]);
    }
}

/// The tower layer's `.admission`: the first attempt waits before the inner
/// service is called, a refused attempt ends the call with the service's
/// `From<Refused>` error, reported as a give-up.
mod layer {
    use backoff_runtime::limits::{
        AdaptiveRateLimiter, Admission, AdmissionLimit, AdmissionRequest, AttemptEnd, Refused,
    };
    use backoff_runtime::{Attempt, Policy, StopReason};
    use backoff_tower::{Classify, RetryLayer};
    use std::collections::VecDeque;
    use std::sync::{Arc, Mutex};
    use std::time::Duration;
    use tower::{Layer, ServiceExt};

    #[derive(Clone, Debug, PartialEq)]
    enum Failure {
        Down,
        Shed,
    }

    impl From<Refused> for Failure {
        fn from(_: Refused) -> Self {
            Failure::Shed
        }
    }

    /// Every error is retried, the response `"slow down"` too.
    #[derive(Clone)]
    struct Retried;

    impl Classify<u32, &'static str, Failure> for Retried {
        fn may_retry(&self, _: &u32) -> bool {
            true
        }
        fn replay(&self, request: &u32, _: &Attempt) -> u32 {
            *request
        }
        fn retry_response(&self, response: &&'static str) -> bool {
            *response == "slow down"
        }
    }

    /// A service answering `answers` in order (then `"ok"`), recording when
    /// (on tokio's paused clock) each request came.
    fn scripted(
        answers: Vec<Result<&'static str, Failure>>,
    ) -> (
        impl tower::Service<u32, Response = &'static str, Error = Failure, Future: Send> + Clone,
        Arc<Mutex<Vec<Duration>>>,
    ) {
        let start = tokio::time::Instant::now();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let record = Arc::clone(&seen);
        let answers = Arc::new(Mutex::new(answers.into_iter()));
        let service = tower::service_fn(move |_: u32| {
            record.lock().unwrap().push(start.elapsed());
            std::future::ready(answers.lock().unwrap().next().unwrap_or(Ok("ok")))
        });
        (service, seen)
    }

    /// A limiter answering from a script (then `Go`), recording what it was
    /// asked and told.
    #[derive(Default)]
    struct Script {
        answers: Mutex<VecDeque<Admission>>,
        asked: Mutex<Vec<(u32, Duration)>>,
        told: Mutex<Vec<bool>>,
    }

    impl Script {
        fn new(answers: impl IntoIterator<Item = Admission>) -> Arc<Self> {
            Arc::new(Script {
                answers: Mutex::new(answers.into_iter().collect()),
                ..Script::default()
            })
        }
    }

    impl AdmissionLimit for Script {
        fn admit(&self, request: AdmissionRequest<'_>) -> Admission {
            self.asked.lock().unwrap().push((request.attempt, request.waited()));
            self.answers.lock().unwrap().pop_front().unwrap_or(Admission::Go)
        }
        fn observed(&self, end: AttemptEnd<'_>) {
            self.told.lock().unwrap().push(end.slow_down());
        }
    }

    const POLICY: Policy = Policy::new()
        .max_retries(2)
        .initial_backoff(Duration::from_millis(100))
        .jitter(backoff_runtime::Jitter::None);

    #[tokio::test(start_paused = true)]
    async fn the_first_attempt_waits_for_admission_before_the_service_is_called() {
        let (service, seen) = scripted(vec![Ok("slow down")]);
        let script = Script::new([Admission::Wait(Duration::from_secs(2))]);
        let service = RetryLayer::new(POLICY)
            .classify(Retried)
            .admission(Arc::clone(&script))
            .layer(service);
        assert_eq!(service.oneshot(7).await, Ok("ok"));
        assert_eq!(
            *seen.lock().unwrap(),
            [Duration::from_secs(2), Duration::from_millis(2100)],
            "sent after the admission's wait, retried after the schedule's"
        );
        assert_eq!(
            *script.asked.lock().unwrap(),
            [(1, Duration::ZERO), (1, Duration::from_secs(2)), (2, Duration::ZERO)],
            "asked again after its wait, with the wait counted; then for the retry"
        );
        assert_eq!(
            *script.told.lock().unwrap(),
            [true, false],
            "a retried response is a throttle, the success is not"
        );
    }

    /// A limiter of one's own may reserve (`GoAfter`): the attempt sleeps
    /// once and starts without asking again, first attempt and retry alike.
    #[tokio::test(start_paused = true)]
    async fn a_reservation_is_slept_once_and_not_asked_again() {
        let (service, seen) = scripted(vec![Ok("slow down")]);
        let script = Script::new([
            Admission::GoAfter(Duration::from_secs(2)),
            Admission::GoAfter(Duration::from_millis(300)),
        ]);
        let service = RetryLayer::new(POLICY)
            .classify(Retried)
            .admission(Arc::clone(&script))
            .layer(service);
        assert_eq!(service.oneshot(7).await, Ok("ok"));
        assert_eq!(
            *seen.lock().unwrap(),
            [Duration::from_secs(2), Duration::from_millis(2400)],
            "sent at the reserved instants: 2 s, then 100 ms of schedule and 300 ms reserved"
        );
        assert_eq!(
            *script.asked.lock().unwrap(),
            [(1, Duration::ZERO), (2, Duration::ZERO)],
            "one question per attempt"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_refused_attempt_ends_the_call_with_the_refused_error_as_a_give_up() {
        for (answers, sent, attempts) in [
            (vec![Admission::Refuse], 0, 0),
            (vec![Admission::Go, Admission::Refuse], 1, 1),
        ] {
            let (service, seen) = scripted(vec![Err(Failure::Down)]);
            let script = Script::new(answers);
            let give_ups = Arc::new(Mutex::new(Vec::new()));
            let heard = Arc::clone(&give_ups);
            let service = RetryLayer::new(POLICY)
                .classify(Retried)
                .admission(script)
                .on_give_up(move |event| heard.lock().unwrap().push((event.reason(), event.attempts())))
                .layer(service);
            assert_eq!(service.oneshot(7).await, Err(Failure::Shed));
            assert_eq!(seen.lock().unwrap().len(), sent, "a refused attempt is never sent");
            assert_eq!(*give_ups.lock().unwrap(), [(StopReason::Refused, attempts)]);
        }
    }

    #[tokio::test(start_paused = true)]
    async fn an_adaptive_rate_limiter_paces_the_first_attempts_after_a_throttle() {
        let limiter = Arc::new(AdaptiveRateLimiter::new().max_wait(Duration::from_secs(5)));
        let (service, seen) = scripted(vec![Ok("slow down"), Ok("slow down")]);
        let service = RetryLayer::new(POLICY)
            .classify(Retried)
            .admission(Arc::clone(&limiter))
            .layer(service);
        // The throttled attempt and its retry; the second retry finds the
        // bucket empty at half a token per second and waits for it.
        assert_eq!(service.clone().oneshot(1).await, Ok("ok"));
        assert!(limiter.is_enabled());
        let seen = seen.lock().unwrap().clone();
        assert_eq!(seen.len(), 3);
        assert!(
            seen[2] - seen[1] >= Duration::from_millis(200) + Duration::from_secs(1),
            "the retry waited for its token past the schedule's 200 ms: {seen:?}"
        );
        assert!(limiter.tokens() >= 0.0);
    }
}

/// 1,000 tasks through one `AdaptiveRateLimiter` on tokio's paused clock,
/// through the attribute, the builder and the tower layer, and the sync
/// loop on the virtual clock: no call waits past `max_wait` by more than
/// tokio's 1 ms tick, because the wait the limiter is told is measured on
/// the clock, not added up from the waits it asked for (tokio rounds each
/// sleep up to the next millisecond, so the sum fell behind the clock).
mod under_load {
    use super::CallError;
    use backoff_runtime::limits::{AdaptiveRateLimiter, Admission, AdmissionLimit, AdmissionRequest, AttemptEnd};
    use backoff_runtime::{Policy, retry};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::time::Duration;
    use tower::{Layer, ServiceExt};

    const MAX_WAIT: Duration = Duration::from_secs(1);
    const TASKS: u64 = 1000;
    /// tokio's timer tick: a wait may end this much after its instant.
    const TICK: Duration = Duration::from_millis(1);

    const fn limiter() -> AdaptiveRateLimiter {
        AdaptiveRateLimiter::new().max_wait(MAX_WAIT)
    }

    /// The limiter, counting its answers: each `Wait` is one wake-up.
    struct Counted {
        limiter: AdaptiveRateLimiter,
        admitted: AtomicU64,
        wakeups: AtomicU64,
        /// The longest wait, in nanoseconds, of an attempt let through.
        longest_admitted: AtomicU64,
    }

    impl Counted {
        const fn new(limiter: AdaptiveRateLimiter) -> Self {
            Counted {
                limiter,
                admitted: AtomicU64::new(0),
                wakeups: AtomicU64::new(0),
                longest_admitted: AtomicU64::new(0),
            }
        }

        /// No admission waited past `max_wait` on the loop's clock, and
        /// there were at most two wake-ups per admission.
        fn check(&self, max_wait: Duration) {
            let admitted = self.admitted.load(Ordering::SeqCst);
            let wakeups = self.wakeups.load(Ordering::SeqCst);
            let longest = Duration::from_nanos(self.longest_admitted.load(Ordering::SeqCst));
            assert!(longest <= max_wait, "an attempt was let through after {longest:?}");
            assert!(admitted > 0 && wakeups > 0, "{admitted} admitted, {wakeups} wake-ups");
            assert!(
                wakeups <= 2 * admitted,
                "{wakeups} wake-ups for {admitted} admissions: a herd"
            );
        }
    }

    impl AdmissionLimit for Counted {
        fn admit(&self, request: AdmissionRequest<'_>) -> Admission {
            let waited = request.waited();
            let answer = self.limiter.admit(request);
            match answer {
                Admission::Go => {
                    self.admitted.fetch_add(1, Ordering::SeqCst);
                    let nanos = u64::try_from(waited.as_nanos()).unwrap_or(u64::MAX);
                    self.longest_admitted.fetch_max(nanos, Ordering::SeqCst);
                }
                Admission::Wait(_) | Admission::GoAfter(_) => {
                    self.wakeups.fetch_add(1, Ordering::SeqCst);
                }
                Admission::Refuse | Admission::Shut(_) => {}
            }
            answer
        }
        fn observed(&self, end: AttemptEnd<'_>) {
            self.limiter.observed(end);
        }
    }

    /// Answers at 100 per second for 3 seconds, then a throttle: the bucket
    /// counts from there, at about 70 tokens per second.
    async fn throttle(limit: &AdaptiveRateLimiter) {
        for _ in 0..300 {
            tokio::time::advance(Duration::from_millis(10)).await;
            limit.observed(AttemptEnd::new(tokio::time::Instant::now().into_std(), false));
        }
        limit.observed(AttemptEnd::new(tokio::time::Instant::now().into_std(), true));
    }

    /// Runs `TASKS` calls at once; checks each call's time, then the
    /// limiter's counts.
    async fn through<F, Fut>(limit: &Counted, call: F)
    where
        F: Fn() -> Fut,
        Fut: std::future::Future<Output = Result<(), CallError>> + Send + 'static,
    {
        throttle(&limit.limiter).await;
        let tasks: Vec<_> = (0..TASKS)
            .map(|_| {
                let call = call();
                tokio::spawn(async move {
                    let begun = tokio::time::Instant::now();
                    let result = call.await;
                    (result, begun.elapsed())
                })
            })
            .collect();
        let (mut sent, mut shed) = (0_u64, 0_u64);
        for task in tasks {
            let (result, took) = task.await.expect("no task panics");
            assert!(took <= MAX_WAIT + TICK, "a call waited {took:?}, past {MAX_WAIT:?}");
            match result {
                Ok(()) => sent += 1,
                Err(CallError::Shed) => shed += 1,
                Err(other) => panic!("unexpected {other:?}"),
            }
        }
        assert_eq!(sent + shed, TASKS);
        assert!(sent > 50 && shed > 0, "{sent} sent, {shed} shed");
        limit.check(MAX_WAIT);
    }

    static ATTRIBUTE: Counted = Counted::new(limiter());

    #[retry(admission = ATTRIBUTE, max_retries = 1)]
    async fn through_the_attribute() -> Result<(), CallError> {
        Ok(())
    }

    #[tokio::test(start_paused = true)]
    async fn the_attribute_keeps_the_bound() {
        through(&ATTRIBUTE, through_the_attribute).await;
    }

    static BUILDER: Counted = Counted::new(limiter());

    #[tokio::test(start_paused = true)]
    async fn the_builder_keeps_the_bound() {
        through(&BUILDER, || async {
            Policy::new()
                .max_retries(1)
                .retry(|| async { Ok::<_, CallError>(()) })
                .admission(&BUILDER)
                .await
        })
        .await;
    }

    /// Every error is retried; every response is a success.
    #[derive(Clone)]
    struct Plain;

    impl backoff_tower::Classify<u32, (), CallError> for Plain {
        fn may_retry(&self, _: &u32) -> bool {
            true
        }
        fn replay(&self, request: &u32, _: &backoff_runtime::Attempt) -> u32 {
            *request
        }
    }

    #[tokio::test(start_paused = true)]
    async fn the_layer_keeps_the_bound() {
        let limit = Arc::new(Counted::new(limiter()));
        let service = tower::service_fn(|_: u32| std::future::ready(Ok::<_, CallError>(())));
        let service = backoff_tower::RetryLayer::new(Policy::new().max_retries(1))
            .classify(Plain)
            .admission(Arc::clone(&limit))
            .layer(service);
        through(&limit, move || service.clone().oneshot(1)).await;
    }

    const REAL_MAX_WAIT: Duration = Duration::from_millis(200);
    static REAL_TIME: Counted = Counted::new(AdaptiveRateLimiter::new().max_wait(REAL_MAX_WAIT));

    #[retry(admission = REAL_TIME, max_retries = 1)]
    async fn on_two_workers() -> Result<(), CallError> {
        Ok(())
    }

    /// 1,000 tasks on two worker threads, in real time (200 ms): no attempt
    /// is let through after waiting past `max_wait` on the clock, and
    /// waiters do not herd.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn tasks_on_two_workers_keep_the_bound_and_do_not_herd() {
        // A history 3 s back: 100 answers a second, then a throttle now
        // (about 70 tokens a second from there).
        let now = std::time::Instant::now();
        let origin = now.checked_sub(Duration::from_secs(3)).expect("the machine is up 3 s");
        for tick in 0..300_u32 {
            REAL_TIME.observed(AttemptEnd::new(origin + Duration::from_millis(10) * tick, false));
        }
        REAL_TIME.observed(AttemptEnd::new(now, true));
        let tasks: Vec<_> = (0..TASKS).map(|_| tokio::spawn(on_two_workers())).collect();
        let (mut sent, mut shed) = (0_u64, 0_u64);
        for task in tasks {
            match task.await.expect("no task panics") {
                Ok(()) => sent += 1,
                Err(CallError::Shed) => shed += 1,
                Err(other) => panic!("unexpected {other:?}"),
            }
        }
        // About 70 a second for 200 ms, and what the bucket held.
        assert!(sent > 10 && shed > 0, "{sent} sent, {shed} shed");
        REAL_TIME.check(REAL_MAX_WAIT);
    }

    static BLOCKING: AdaptiveRateLimiter = limiter();

    /// `slow_down` answers a throttle (twice: the attempt and its retry).
    #[retry(
        admission = BLOCKING,
        max_retries = 1,
        initial_backoff = "1ms",
        slow_down_if = |error: &CallError| *error == CallError::SlowDown
    )]
    fn blocking_call(slow_down: bool) -> Result<(), CallError> {
        if slow_down { Err(CallError::SlowDown) } else { Ok(()) }
    }

    /// The sync loop, on the thread's virtual clock.
    #[test]
    fn the_sync_loop_keeps_the_bound() {
        let clock = backoff_runtime::testing::VirtualClock::install();
        for _ in 0..300 {
            clock.advance(Duration::from_millis(10));
            assert_eq!(blocking_call(false), Ok(()));
        }
        assert_eq!(blocking_call(true), Err(CallError::SlowDown));
        assert!(BLOCKING.is_enabled());
        for _ in 0..200 {
            let begun = clock.elapsed();
            assert_eq!(blocking_call(false), Ok(()));
            assert!(
                clock.elapsed() - begun <= MAX_WAIT,
                "waited {:?}",
                clock.elapsed() - begun
            );
        }
        assert!(!clock.waits().is_empty(), "the calls were paced");
    }

    const THREADS_MAX_WAIT: Duration = Duration::from_millis(100);
    static THREADS: Counted = Counted::new(AdaptiveRateLimiter::new().max_wait(THREADS_MAX_WAIT));

    #[retry(admission = THREADS, max_retries = 1)]
    fn on_a_thread() -> Result<(), CallError> {
        Ok(())
    }

    /// The sync attribute on 8 threads, in real time (about 200 ms): no
    /// attempt is let through after waiting past `max_wait`, and the
    /// threads' waits do not herd.
    #[test]
    fn sync_calls_on_eight_threads_keep_the_bound_and_do_not_herd() {
        let now = std::time::Instant::now();
        let origin = now.checked_sub(Duration::from_secs(3)).expect("the machine is up 3 s");
        for tick in 0..300_u32 {
            THREADS.observed(AttemptEnd::new(origin + Duration::from_millis(10) * tick, false));
        }
        THREADS.observed(AttemptEnd::new(now, true));
        let (sent, shed) = std::thread::scope(|scope| {
            let threads: Vec<_> = (0..8)
                .map(|_| {
                    scope.spawn(|| {
                        let (mut sent, mut shed) = (0_u64, 0_u64);
                        for _ in 0..10 {
                            match on_a_thread() {
                                Ok(()) => sent += 1,
                                Err(CallError::Shed) => shed += 1,
                                Err(other) => panic!("unexpected {other:?}"),
                            }
                        }
                        (sent, shed)
                    })
                })
                .collect();
            threads
                .into_iter()
                .map(|thread| thread.join().expect("no thread panics"))
                .fold((0, 0), |(a, b), (c, d)| (a + c, b + d))
        });
        assert_eq!(sent + shed, 80);
        assert!(sent > 10, "{sent} sent, {shed} shed");
        THREADS.check(THREADS_MAX_WAIT);
    }
}

/// A refusal names the limiter that made it, in every front end.
mod refusals_name_their_limiter {
    use backoff_runtime::limits::{Admission, AdmissionLimit, AdmissionRequest, Refused};
    use backoff_runtime::{Policy, retry};
    use std::sync::Arc;
    use tower::{Layer, ServiceExt};

    /// Refuses everything, and has a name.
    struct Store;

    impl AdmissionLimit for Store {
        fn admit(&self, _: AdmissionRequest<'_>) -> Admission {
            Admission::Refuse
        }
        fn name(&self) -> Option<&'static str> {
            Some("store")
        }
    }

    static STORE: Store = Store;
    const MESSAGE: &str = "the client's limiter \"store\" refused the attempt";

    #[retry(admission = STORE)]
    fn sync_call() -> std::io::Result<()> {
        Ok(())
    }

    #[retry(admission = STORE)]
    async fn async_call() -> std::io::Result<()> {
        Ok(())
    }

    #[test]
    fn the_attribute_s_sync_and_async_refusals_name_it() {
        assert_eq!(sync_call().unwrap_err().to_string(), MESSAGE);
        assert_eq!(
            futures_executor::block_on(async_call()).unwrap_err().to_string(),
            MESSAGE
        );
    }

    #[test]
    fn the_builder_s_refusals_name_it() {
        let call = Policy::new()
            .retry(|| Ok::<(), std::io::Error>(()))
            .admission(&STORE)
            .call();
        assert_eq!(call.unwrap_err().to_string(), MESSAGE);
        let awaited = futures_executor::block_on(async {
            Policy::new()
                .retry(|| async { Ok::<(), std::io::Error>(()) })
                .admission(&STORE)
                .await
        });
        assert_eq!(awaited.unwrap_err().to_string(), MESSAGE);
    }

    #[tokio::test(start_paused = true)]
    async fn the_layer_s_refusals_name_it() {
        let service = tower::service_fn(|_: http::Request<String>| async {
            Ok::<_, tower::BoxError>(http::Response::new(String::new()))
        });
        let service = backoff_tower::RetryLayer::new(Policy::new())
            .admission(Arc::new(Store))
            .layer(service);
        let error = service.oneshot(http::Request::new(String::new())).await.unwrap_err();
        let refused = error.downcast_ref::<Refused>().expect("the error is the refusal");
        assert_eq!(refused.limiter(), Some("store"));
    }
}

/// A sync loop's admission that waits more than once: each wait is slept,
/// then the limiter is asked again, until it admits or refuses.
mod blocking_waits {
    use super::CallError;
    use backoff_runtime::limits::{Admission, AdmissionLimit, AdmissionRequest};
    use backoff_runtime::retry;
    use std::collections::VecDeque;
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicU32, Ordering};
    use std::time::Duration;

    /// Answers from a script, then `Go`.
    struct Script(Mutex<VecDeque<Admission>>);

    impl AdmissionLimit for Script {
        fn admit(&self, _: AdmissionRequest<'_>) -> Admission {
            self.0.lock().unwrap().pop_front().unwrap_or(Admission::Go)
        }
    }

    static SCRIPT: Script = Script(Mutex::new(VecDeque::new()));
    static SENT: AtomicU32 = AtomicU32::new(0);
    static SLEPT: Mutex<Vec<Duration>> = Mutex::new(Vec::new());

    fn sleep(wait: Duration) {
        SLEPT.lock().unwrap().push(wait);
    }

    #[retry(admission = SCRIPT, max_retries = 1, sleep = sleep)]
    fn fetch() -> Result<u32, CallError> {
        SENT.fetch_add(1, Ordering::SeqCst);
        Ok(1)
    }

    fn script(answers: &[Admission]) {
        *SCRIPT.0.lock().unwrap() = answers.iter().copied().collect();
        SLEPT.lock().unwrap().clear();
        SENT.store(0, Ordering::SeqCst);
    }

    #[test]
    fn waits_twice_then_goes_or_is_refused() {
        let ms = Duration::from_millis;
        script(&[Admission::Wait(ms(3)), Admission::Wait(ms(5)), Admission::Wait(ms(7))]);
        assert_eq!(fetch(), Ok(1));
        assert_eq!(*SLEPT.lock().unwrap(), [ms(3), ms(5), ms(7)]);
        assert_eq!(SENT.load(Ordering::SeqCst), 1);
        script(&[Admission::Wait(ms(3)), Admission::Wait(ms(5)), Admission::Refuse]);
        assert_eq!(fetch(), Err(CallError::Shed));
        assert_eq!(*SLEPT.lock().unwrap(), [ms(3), ms(5)]);
        assert_eq!(SENT.load(Ordering::SeqCst), 0, "refused after two waits: never sent");
    }
}
