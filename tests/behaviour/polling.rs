//! `retry_if_ok`: an `Ok` value that is still pending is waited on and asked
//! again, under the same schedule and stop rules as errors; when a stop rule
//! holds, the last value is returned as it is, or with `pending_error` the
//! error it becomes.

use std::cell::RefCell;
use std::sync::Mutex;
use std::time::Duration;

use backoff_runtime::{GiveUp, RetryEvent, StopReason, retry};
use tokio::time::Instant;

/// A long-running job as a status endpoint reports it.
#[derive(Clone, Debug, PartialEq)]
enum Job {
    Running { retry_after: Option<Duration> },
    Done(u32),
}

impl Job {
    fn is_running(&self) -> bool {
        matches!(self, Job::Running { .. })
    }

    fn retry_after(&self) -> Option<Duration> {
        match self {
            Job::Running { retry_after } => *retry_after,
            Job::Done(_) => None,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
enum PollError {
    Transient,
    Permanent,
    /// What `pending_error` makes of a job still running when the polls end.
    StillRunning(Job),
}

impl PollError {
    fn is_transient(&self) -> bool {
        *self == PollError::Transient
    }
}

/// Answers with `script` in order (the last answer repeats) and records
/// when each poll arrived on the paused clock.
struct Status {
    script: Vec<Result<Job, PollError>>,
    polls: Mutex<Vec<Instant>>,
    start: Instant,
}

impl Status {
    fn new(script: Vec<Result<Job, PollError>>) -> Self {
        Status {
            script,
            polls: Mutex::new(Vec::new()),
            start: Instant::now(),
        }
    }

    fn answer(&self) -> Result<Job, PollError> {
        let mut polls = self.polls.lock().unwrap();
        polls.push(Instant::now());
        self.script[(polls.len() - 1).min(self.script.len() - 1)].clone()
    }

    /// Seconds from the start to each poll.
    fn poll_times(&self) -> Vec<f64> {
        let polls = self.polls.lock().unwrap();
        polls.iter().map(|t| (*t - self.start).as_secs_f64()).collect()
    }
}

/// One poll's result.
type Polled = Result<Job, PollError>;

fn running() -> Result<Job, PollError> {
    Ok(Job::Running { retry_after: None })
}

#[retry(max_retries = 5, jitter = none, retry_if_ok = |job: &Job| job.is_running())]
async fn poll(status: &Status) -> Result<Job, PollError> {
    status.answer()
}

/// Two pending values then done: the schedule's waits (1 s, 2 s) between
/// the polls, and the final value.
#[tokio::test(start_paused = true)]
async fn pending_values_wait_on_the_schedule_until_done() {
    let status = Status::new(vec![running(), running(), Ok(Job::Done(7))]);
    assert_eq!(poll(&status).await, Ok(Job::Done(7)));
    assert_eq!(status.poll_times(), [0.0, 1.0, 3.0]);
}

/// A value that is done at once is returned at once: one poll.
#[tokio::test(start_paused = true)]
async fn a_value_that_is_not_pending_returns_at_once() {
    let status = Status::new(vec![Ok(Job::Done(1))]);
    assert_eq!(poll(&status).await, Ok(Job::Done(1)));
    assert_eq!(status.poll_times(), [0.0]);
}

#[retry(
    max_retries = 5,
    jitter = none,
    retry_if_ok = |job: &Job| job.is_running(),
    retry_after_ok = |job: &Job| job.retry_after(),
)]
async fn poll_with_hints(status: &Status) -> Result<Job, PollError> {
    status.answer()
}

/// The value's own hint (a `202` with `Retry-After`) is the wait; a value
/// without one falls back to the schedule.
#[tokio::test(start_paused = true)]
async fn the_value_s_hint_is_the_wait() {
    let status = Status::new(vec![
        Ok(Job::Running {
            retry_after: Some(Duration::from_secs(5)),
        }),
        Ok(Job::Running {
            retry_after: Some(Duration::from_secs(3)),
        }),
        running(),
        Ok(Job::Done(2)),
    ]);
    assert_eq!(poll_with_hints(&status).await, Ok(Job::Done(2)));
    // 5 s (hint), 3 s (hint), then the schedule's third wait: 4 s.
    assert_eq!(status.poll_times(), [0.0, 5.0, 8.0, 12.0]);
}

#[retry(
    max_retries = 2,
    jitter = none,
    retry_if_ok = |job: &Job| job.is_running(),
    on_give_up = |result: &Result<Job, PollError>, event: &GiveUp| {
        GIVE_UPS.with(|g| g.borrow_mut().push((result.clone(), event.reason(), event.attempts())));
    },
)]
async fn poll_briefly(status: &Status) -> Result<Job, PollError> {
    status.answer()
}

thread_local! {
    static GIVE_UPS: RefCell<Vec<(Polled, StopReason, u32)>> = const { RefCell::new(Vec::new()) };
}

/// When `max_retries` ends the polling, the last value is returned as it is
/// (still pending), and `on_give_up` sees it with the reason.
#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn exhaustion_returns_the_last_pending_value() {
    let status = Status::new(vec![running()]);
    assert_eq!(poll_briefly(&status).await, running());
    assert_eq!(status.poll_times(), [0.0, 1.0, 3.0]);
    assert_eq!(
        GIVE_UPS.with(|g| g.borrow().clone()),
        [(running(), StopReason::Exhausted, 3)]
    );
}

#[retry(
    max_retries = 5,
    jitter = none,
    retry_if = PollError::is_transient,
    retry_if_ok = |job: &Job| job.is_running(),
)]
async fn poll_classified(status: &Status) -> Result<Job, PollError> {
    status.answer()
}

/// An error mid-polling is classified by `retry_if`: a transient one is
/// waited on like a pending value, a permanent one ends the call.
#[tokio::test(start_paused = true)]
async fn an_error_mid_polling_is_classified_by_retry_if() {
    let status = Status::new(vec![running(), Err(PollError::Transient), running(), Ok(Job::Done(3))]);
    assert_eq!(poll_classified(&status).await, Ok(Job::Done(3)));
    assert_eq!(status.poll_times(), [0.0, 1.0, 3.0, 7.0]);

    let status = Status::new(vec![running(), Err(PollError::Permanent), Ok(Job::Done(4))]);
    assert_eq!(poll_classified(&status).await, Err(PollError::Permanent));
    assert_eq!(status.poll_times(), [0.0, 1.0]);
}

#[retry(
    max_retries = 5,
    max_backoff = "10s",
    retry_if_ok = |job: &Job| job.is_running(),
    retry_after_ok = |job: &Job| job.retry_after(),
    on_give_up = |result: &Result<Job, PollError>, event: &GiveUp| {
        REASONS.with(|r| r.borrow_mut().push((result.is_ok(), event.reason())));
    },
)]
async fn poll_capped(status: &Status) -> Result<Job, PollError> {
    status.answer()
}

#[retry(
    max_retries = 10,
    jitter = none,
    max_elapsed = "5s",
    retry_if_ok = |job: &Job| job.is_running(),
    on_give_up = |result: &Result<Job, PollError>, event: &GiveUp| {
        REASONS.with(|r| r.borrow_mut().push((result.is_ok(), event.reason())));
    },
)]
async fn poll_until(status: &Status) -> Result<Job, PollError> {
    status.answer()
}

thread_local! {
    static REASONS: RefCell<Vec<(bool, StopReason)>> = const { RefCell::new(Vec::new()) };
}

/// A value's hint above `max_backoff` and `max_elapsed` stop the polling
/// as they stop retries, returning the pending value with that reason.
#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn the_hint_cap_and_the_deadline_stop_polling() {
    let pending = Ok(Job::Running {
        retry_after: Some(Duration::from_secs(60)),
    });
    let status = Status::new(vec![pending.clone()]);
    assert_eq!(poll_capped(&status).await, pending);
    assert_eq!(status.poll_times(), [0.0]);

    let status = Status::new(vec![running()]);
    assert_eq!(poll_until(&status).await, running());
    // Waits 1 s and 2 s; the next (4 s) would end at 7 s, past 5 s.
    assert_eq!(status.poll_times(), [0.0, 1.0, 3.0]);
    assert_eq!(
        REASONS.with(|r| r.borrow().clone()),
        [(true, StopReason::HintAboveCap), (true, StopReason::Deadline)]
    );
}

/// `on_retry` sees the whole result that caused each wait: values and
/// errors alike.
#[tokio::test(start_paused = true)]
async fn on_retry_sees_pending_values_and_errors() {
    #[retry(
        max_retries = 5,
        jitter = none,
        retry_if_ok = |job: &Job| job.is_running(),
        on_retry = |result: &Result<Job, PollError>, event: &RetryEvent| {
            log.lock().unwrap().push((result.clone(), event.attempt(), event.wait()));
        },
    )]
    async fn observed(status: &Status, log: &Mutex<Vec<(Polled, u32, Duration)>>) -> Result<Job, PollError> {
        let _ = log;
        status.answer()
    }
    let status = Status::new(vec![running(), Err(PollError::Transient), Ok(Job::Done(5))]);
    let log = Mutex::new(Vec::new());
    assert_eq!(observed(&status, &log).await, Ok(Job::Done(5)));
    assert_eq!(
        log.into_inner().unwrap(),
        [
            (running(), 1, Duration::from_secs(1)),
            (Err(PollError::Transient), 2, Duration::from_secs(2)),
        ]
    );
}

/// A sync function polls the same way (on the virtual clock).
#[test]
fn a_sync_function_polls_on_the_schedule() {
    #[retry(max_retries = 5, jitter = none, retry_if_ok = |n: &u32| *n < 3)]
    fn count_up(counter: &RefCell<u32>) -> Result<u32, ()> {
        *counter.borrow_mut() += 1;
        Ok(*counter.borrow())
    }
    let clock = backoff_runtime::testing::VirtualClock::install();
    let counter = RefCell::new(0);
    assert_eq!(count_up(&counter), Ok(3));
    assert_eq!(clock.waits(), [Duration::from_secs(1), Duration::from_secs(2)]);
}

// ---- pending_error: the last pending value becomes the call's error -----------

#[retry(
    max_retries = 2,
    jitter = none,
    retry_if_ok = |job: &Job| job.is_running(),
    pending_error = PollError::StillRunning,
    on_give_up = |result: &Result<Job, PollError>, event: &GiveUp| {
        PENDING_GIVE_UPS.with(|g| g.borrow_mut().push((result.clone(), event.reason())));
    },
)]
async fn poll_or_fail(status: &Status) -> Result<Job, PollError> {
    status.answer()
}

thread_local! {
    static PENDING_GIVE_UPS: RefCell<Vec<(Polled, StopReason)>> = const { RefCell::new(Vec::new()) };
}

/// With `pending_error`, a value still pending when `max_retries` ends the
/// polling becomes the call's error (the hook takes the value); the
/// observers still see the value as it was. A value that is done, and an
/// error, are returned as they are.
#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn pending_error_makes_the_last_pending_value_the_error() {
    let status = Status::new(vec![running()]);
    assert_eq!(
        poll_or_fail(&status).await,
        Err(PollError::StillRunning(Job::Running { retry_after: None }))
    );
    assert_eq!(status.poll_times(), [0.0, 1.0, 3.0], "the schedule is the same");
    assert_eq!(
        PENDING_GIVE_UPS.with(|g| g.borrow().clone()),
        [(running(), StopReason::Exhausted)]
    );

    let status = Status::new(vec![running(), Ok(Job::Done(7))]);
    assert_eq!(poll_or_fail(&status).await, Ok(Job::Done(7)));
    let status = Status::new(vec![running(), Err(PollError::Permanent)]);
    assert_eq!(poll_or_fail(&status).await, Err(PollError::Permanent));
}

#[retry(
    max_retries = 10,
    jitter = none,
    max_elapsed = "5s",
    retry_if_ok = |job: &Job| job.is_running(),
    pending_error = PollError::StillRunning,
)]
async fn poll_or_fail_in_time(status: &Status) -> Result<Job, PollError> {
    status.answer()
}

#[retry(
    max_retries = 10,
    jitter = none,
    max_elapsed = "5s",
    retry_if_ok = |job: &Job| job.is_running(),
    pending_error = PollError::StillRunning,
    before_retry = async |_, _| tokio::time::sleep(Duration::from_secs(10)).await,
)]
async fn poll_with_a_slow_action(status: &Status) -> Result<Job, PollError> {
    status.answer()
}

/// The deadline ends the polling with the same error, whether the next wait
/// would pass it or the action before the wait already did.
#[tokio::test(start_paused = true)]
async fn pending_error_applies_when_the_deadline_ends_the_polling() {
    let still_running = Err(PollError::StillRunning(Job::Running { retry_after: None }));
    let status = Status::new(vec![running()]);
    assert_eq!(poll_or_fail_in_time(&status).await, still_running);
    assert_eq!(status.poll_times(), [0.0, 1.0, 3.0]);

    let status = Status::new(vec![running()]);
    assert_eq!(poll_with_a_slow_action(&status).await, still_running);
    assert_eq!(status.poll_times(), [0.0], "the action ran past max_elapsed");
}

#[test]
fn pending_error_in_a_sync_function_and_the_builder() {
    #[retry(max_retries = 2, jitter = none, retry_if_ok = |n: &u32| *n < 100, pending_error = |n| format!("only {n}"))]
    fn count_slowly(counter: &RefCell<u32>) -> Result<u32, String> {
        *counter.borrow_mut() += 1;
        Ok(*counter.borrow())
    }
    let clock = backoff_runtime::testing::VirtualClock::install();
    let counter = RefCell::new(0);
    assert_eq!(count_slowly(&counter), Err("only 3".to_owned()));
    assert_eq!(clock.waits(), [Duration::from_secs(1), Duration::from_secs(2)]);

    let counter = RefCell::new(0);
    let polled = backoff_runtime::Policy::new()
        .max_retries(2)
        .jitter(backoff_runtime::Jitter::None)
        .retry(|| {
            *counter.borrow_mut() += 1;
            Ok::<u32, String>(*counter.borrow())
        })
        .retry_if_ok(|n| *n < 100)
        .pending_error(|n| format!("only {n}"))
        .call();
    assert_eq!(polled, Err("only 3".to_owned()));
}

#[tokio::test(start_paused = true)]
async fn pending_error_in_the_builder_s_future() {
    let status = Status::new(vec![running(), running(), Ok(Job::Done(2))]);
    let policy = backoff_runtime::Policy::new()
        .max_retries(1)
        .jitter(backoff_runtime::Jitter::None);
    let polled = policy
        .retry(|| async { status.answer() })
        .retry_if_ok(Job::is_running)
        .pending_error(PollError::StillRunning)
        .await;
    assert_eq!(polled, Err(PollError::StillRunning(Job::Running { retry_after: None })));
    assert_eq!(status.poll_times(), [0.0, 1.0]);
}

// ---- pending values and retry limits ------------------------------------------
//
// A pending value is not a failure: it takes no throttle token and no budget
// withdrawal. Only errors ask the limit.

static POLL_THROTTLE: backoff_runtime::limits::RetryThrottle = backoff_runtime::limits::RetryThrottle::new(10, 0.1);

#[retry(
    max_retries = 10,
    jitter = none,
    initial_backoff = "1s",
    max_backoff = "1s",
    retry_if_ok = |job: &Job| job.is_running(),
    retry_if = PollError::is_transient,
    budget = POLL_THROTTLE,
    on_give_up = |_, event: &GiveUp| panic!("gave up: {:?}", event.reason()),
)]
async fn poll_throttled(status: &Status) -> Result<Job, PollError> {
    status.answer()
}

/// Seven "still running" answers then done, under a throttle of 10 tokens:
/// no token is taken by a pending value, so the poll runs to the end and
/// the throttle is still full for a real failure afterwards.
#[tokio::test(start_paused = true)]
async fn pending_values_take_no_throttle_tokens() {
    let mut script = vec![running(); 7];
    script.push(Ok(Job::Done(3)));
    let status = Status::new(script);
    assert_eq!(poll_throttled(&status).await, Ok(Job::Done(3)));
    assert_eq!(status.poll_times().len(), 8);
    for _ in 0..2 {
        let status = Status::new(vec![running(), running(), running(), Ok(Job::Done(1))]);
        assert_eq!(poll_throttled(&status).await, Ok(Job::Done(1)));
    }
    assert_eq!(POLL_THROTTLE.tokens(), 10.0, "healthy polls leave the throttle full");
    // A transient error does take a token (and the success gives it back).
    let status = Status::new(vec![Err(PollError::Transient), Ok(Job::Done(2))]);
    assert_eq!(poll_throttled(&status).await, Ok(Job::Done(2)));
    assert!(POLL_THROTTLE.tokens() <= 10.0);
}

#[retry(
    max_retries = 5,
    jitter = none,
    retry_if_ok = |job: &Job| job.is_running(),
    budget = budget,
)]
async fn poll_budgeted(status: &Status, budget: &backoff_runtime::limits::RetryBudget) -> Result<Job, PollError> {
    status.answer()
}

/// A budget that allows no retry at all (ratio 0, no floor) still lets a
/// poll wait for its job: pending values withdraw nothing. An error is
/// refused at once.
#[tokio::test(start_paused = true)]
async fn pending_values_withdraw_nothing_from_a_budget() {
    let budget = backoff_runtime::limits::RetryBudget::new().ratio(0.0).min_per_second(0);
    let status = Status::new(vec![running(), running(), Ok(Job::Done(4))]);
    assert_eq!(poll_budgeted(&status, &budget).await, Ok(Job::Done(4)));
    assert_eq!(status.poll_times().len(), 3);

    let status = Status::new(vec![Err(PollError::Transient), Ok(Job::Done(4))]);
    assert_eq!(poll_budgeted(&status, &budget).await, Err(PollError::Transient));
    assert_eq!(status.poll_times().len(), 1, "the budget refused the error's retry");
}

// ---- polling bounded by time alone --------------------------------------------

#[retry(
    max_retries = unlimited,
    max_elapsed = "2m",
    initial_backoff = "1s",
    max_backoff = "10s",
    jitter = none,
    retry_if_ok = |job: &Job| job.is_running(),
)]
async fn poll_for_two_minutes(status: &Status) -> Result<Job, PollError> {
    status.answer()
}

/// "Poll for at most 2 minutes": no count of retries, only `max_elapsed`.
/// A job that never finishes is polled at 0, 1, 3, 7, 15, 25, ... s until
/// the next wait would pass 120 s (far more than the default 5 retries);
/// a job that finishes at the 9th poll is returned.
#[tokio::test(start_paused = true)]
async fn polling_is_bounded_by_time_alone() {
    let status = Status::new(vec![running()]);
    assert!(poll_for_two_minutes(&status).await.unwrap().is_running());
    let times = status.poll_times();
    assert_eq!(times[..6], [0.0, 1.0, 3.0, 7.0, 15.0, 25.0]);
    assert_eq!(*times.last().unwrap(), 115.0);
    assert_eq!(times.len(), 15);

    let mut script = vec![running(); 8];
    script.push(Ok(Job::Done(5)));
    let status = Status::new(script);
    assert_eq!(poll_for_two_minutes(&status).await, Ok(Job::Done(5)));

    // A `Policy` bounded the same way, retrying an error that keeps coming.
    let status = Status::new(vec![Err(PollError::Transient)]);
    let policy = backoff_runtime::Policy::new()
        .initial_backoff(Duration::from_secs(1))
        .max_backoff(Duration::from_secs(10))
        .jitter(backoff_runtime::Jitter::None)
        .retry_for(Duration::from_secs(120));
    let result = policy.retry(|| async { status.answer() }).await;
    assert_eq!(result, Err(PollError::Transient));
    assert_eq!(status.poll_times(), times);
}

// ---- a polling function's own hooks: on_success and nested ---------------------

#[retry(max_retries = 2, initial_backoff = "1ms", jitter = none)]
async fn inner_gives_up() -> Result<Job, PollError> {
    Err(PollError::Transient)
}

#[retry(
    max_retries = 3,
    initial_backoff = "1ms",
    jitter = none,
    retry_if_ok = |job: &Job| job.is_running(),
    on_give_up = |_, event: &GiveUp| reasons.lock().unwrap().push(event.reason()),
    on_success = |event: &backoff_runtime::Success| successes.lock().unwrap().push(event.attempts()),
)]
async fn poll_over_a_retried_call(
    status: &Status,
    below: bool,
    reasons: &Mutex<Vec<StopReason>>,
    successes: &Mutex<Vec<u32>>,
) -> Result<Job, PollError> {
    if below {
        return inner_gives_up().await;
    }
    status.answer()
}

#[retry(
    max_retries = 3,
    initial_backoff = "1ms",
    jitter = none,
    retry_if_ok = |job: &Job| job.is_running(),
    nested = retry,
)]
async fn poll_retrying_nested(calls: &Mutex<u32>) -> Result<Job, PollError> {
    *calls.lock().unwrap() += 1;
    inner_gives_up().await
}

/// A polling function reports its success to `on_success`, stops on a
/// failure a retried call below already gave up on, and with
/// `nested = retry` retries it anyway.
#[tokio::test(start_paused = true)]
async fn a_polling_function_s_own_hooks_and_nested_mode() {
    let (reasons, successes) = (Mutex::new(Vec::new()), Mutex::new(Vec::new()));
    let status = Status::new(vec![running(), Ok(Job::Done(1))]);
    assert_eq!(
        poll_over_a_retried_call(&status, false, &reasons, &successes).await,
        Ok(Job::Done(1))
    );
    assert_eq!(*successes.lock().unwrap(), [2]);

    assert_eq!(
        poll_over_a_retried_call(&status, true, &reasons, &successes).await,
        Err(PollError::Transient)
    );
    assert_eq!(*reasons.lock().unwrap(), [StopReason::RetriedBelow]);

    let calls = Mutex::new(0);
    assert_eq!(poll_retrying_nested(&calls).await, Err(PollError::Transient));
    assert_eq!(
        *calls.lock().unwrap(),
        4,
        "nested = retry: every attempt of the poll ran"
    );
}

// ---- the predicate is asked once per result -------------------------------------

#[retry(max_retries = 5, jitter = none, retry_if_ok = |job: &Job| { asked.set(asked.get() + 1); job.is_running() })]
async fn poll_counting(status: &Status, asked: &std::cell::Cell<u32>) -> Result<Job, PollError> {
    status.answer()
}

#[retry(max_retries = 5, jitter = none, retry_if_ok = |n: &u32| { asked.set(asked.get() + 1); *n < 3 })]
fn count_counting(counter: &RefCell<u32>, asked: &std::cell::Cell<u32>) -> Result<u32, ()> {
    *counter.borrow_mut() += 1;
    Ok(*counter.borrow())
}

/// `retry_if_ok` is asked once per `Ok` value, the first attempt's (judged
/// on the success path) included, and never about an error.
#[tokio::test(start_paused = true)]
async fn the_predicate_is_asked_once_per_value() {
    let asked = std::cell::Cell::new(0);
    let status = Status::new(vec![running(), Err(PollError::Transient), running(), Ok(Job::Done(4))]);
    assert_eq!(poll_counting(&status, &asked).await, Ok(Job::Done(4)));
    assert_eq!(asked.get(), 3, "three values, one error");

    let _clock = backoff_runtime::testing::VirtualClock::install();
    let (counter, asked) = (RefCell::new(0), std::cell::Cell::new(0));
    assert_eq!(count_counting(&counter, &asked), Ok(3));
    assert_eq!(asked.get(), 3);
}
