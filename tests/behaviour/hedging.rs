//! Hedging (`hedge_after`): the next attempt starts beside the one running
//! when the delay passes without an accepted answer, or at once after a
//! retryable failure; the first accepted result wins and the others are
//! cancelled; every hedge after the first asks the budget a retry asks.
//! All on tokio's paused clock.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use backoff_runtime::limits::{RetryBudget, RetryThrottle};
use backoff_runtime::{GiveUp, Policy, StopReason};
use tokio::time::Instant;

/// One scripted attempt: how long it takes, and what it returns.
#[derive(Clone, Copy, Debug)]
struct Plan {
    after: Duration,
    answer: Result<u32, Failure>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Failure {
    /// Retried.
    Busy,
    /// Never retried.
    Denied,
    /// Retried, the server asking for 300 ms first (in HTTP, a 503 with
    /// `retry-after-ms: 300`).
    Hinted,
}

fn ms(millis: u64) -> Duration {
    Duration::from_millis(millis)
}

fn ok(after: u64, value: u32) -> Plan {
    Plan {
        after: ms(after),
        answer: Ok(value),
    }
}

fn busy(after: u64) -> Plan {
    Plan {
        after: ms(after),
        answer: Err(Failure::Busy),
    }
}

fn hinted(after: u64) -> Plan {
    Plan {
        after: ms(after),
        answer: Err(Failure::Hinted),
    }
}

/// The server's hint of a `Hinted` failure.
fn hint(failure: &Failure) -> Option<Duration> {
    (*failure == Failure::Hinted).then_some(ms(300))
}

fn denied(after: u64) -> Plan {
    Plan {
        after: ms(after),
        answer: Err(Failure::Denied),
    }
}

/// A backend answering each attempt by its plan, in the order they start;
/// it records when each started, and which were cancelled.
#[derive(Clone, Default)]
struct Backend {
    plans: Arc<Mutex<Vec<Plan>>>,
    started: Arc<Mutex<Vec<Duration>>>,
    cancelled: Arc<Mutex<Vec<usize>>>,
    epoch: Arc<Mutex<Option<Instant>>>,
}

/// Sets the attempt's flag when dropped before it finished.
struct Running {
    index: usize,
    finished: AtomicBool,
    cancelled: Arc<Mutex<Vec<usize>>>,
}

impl Drop for Running {
    fn drop(&mut self) {
        if !self.finished.load(Ordering::SeqCst) {
            self.cancelled.lock().unwrap().push(self.index);
        }
    }
}

impl Backend {
    fn new(plans: Vec<Plan>) -> Self {
        let backend = Backend::default();
        *backend.plans.lock().unwrap() = plans;
        *backend.epoch.lock().unwrap() = Some(Instant::now());
        backend
    }

    async fn attempt(&self) -> Result<u32, Failure> {
        let epoch = self.epoch.lock().unwrap().unwrap();
        let index = {
            let mut started = self.started.lock().unwrap();
            started.push(epoch.elapsed());
            started.len() - 1
        };
        let plan = self.plans.lock().unwrap().get(index).copied().unwrap_or(ok(1, 99));
        let running = Running {
            index,
            finished: AtomicBool::new(false),
            cancelled: Arc::clone(&self.cancelled),
        };
        tokio::time::sleep(plan.after).await;
        running.finished.store(true, Ordering::SeqCst);
        plan.answer
    }

    fn started(&self) -> Vec<Duration> {
        self.started.lock().unwrap().clone()
    }

    fn cancelled(&self) -> Vec<usize> {
        let mut cancelled = self.cancelled.lock().unwrap().clone();
        cancelled.sort_unstable();
        cancelled
    }
}

fn retried(failure: &Failure) -> bool {
    matches!(failure, Failure::Busy | Failure::Hinted)
}

#[tokio::test(start_paused = true)]
async fn a_slow_attempt_is_raced_by_a_hedge_after_the_delay_and_the_first_answer_wins() {
    let backend = Backend::new(vec![ok(1_000, 1), ok(10, 2)]);
    let started = Instant::now();
    let succeeded = Mutex::new(Vec::new());
    let result = Policy::new()
        .max_retries(2)
        .retry(|| backend.attempt())
        .retry_if(retried)
        .on_success(|success: &backoff_runtime::Success| {
            succeeded.lock().unwrap().push((success.attempts(), success.hedges()));
        })
        .hedge_after(ms(50))
        .await;
    assert_eq!(result, Ok(2));
    assert_eq!(started.elapsed(), ms(60), "the hedge answered at 50 + 10 ms");
    assert_eq!(*succeeded.lock().unwrap(), [(2, 1)], "the event counts the hedge apart");
    assert_eq!(backend.started(), [ms(0), ms(50)]);
    assert_eq!(
        backend.cancelled(),
        [0],
        "the slow attempt is cancelled before the call returns"
    );
}

#[tokio::test(start_paused = true)]
async fn the_others_are_cancelled_before_the_call_returns() {
    use std::future::IntoFuture;
    let backend = Backend::new(vec![ok(1_000, 1), ok(10, 2)]);
    let policy = Policy::new().max_retries(2);
    let call = policy.retry(|| backend.attempt()).hedge_after(ms(50)).into_future();
    let mut call = std::pin::pin!(call);
    // Polled to its end, and not dropped yet.
    let result = std::future::poll_fn(|cx| call.as_mut().poll(cx)).await;
    assert_eq!(result, Ok(2));
    assert_eq!(backend.cancelled(), [0], "cancelled before the call returned");
}

/// An admission limiter answering as scripted (then `Go`), recording the
/// attempt numbers it was asked for.
#[derive(Default)]
struct Scripted {
    answers: Mutex<std::collections::VecDeque<backoff_runtime::limits::Admission>>,
    asked: Mutex<Vec<u32>>,
}

impl Scripted {
    fn new(answers: Vec<backoff_runtime::limits::Admission>) -> Self {
        Scripted {
            answers: Mutex::new(answers.into()),
            asked: Mutex::default(),
        }
    }
}

impl backoff_runtime::limits::AdmissionLimit for Scripted {
    fn admit(&self, request: backoff_runtime::limits::AdmissionRequest<'_>) -> backoff_runtime::limits::Admission {
        self.asked.lock().unwrap().push(request.attempt);
        self.answers
            .lock()
            .unwrap()
            .pop_front()
            .unwrap_or(backoff_runtime::limits::Admission::Go)
    }
}

impl From<backoff_runtime::limits::Refused> for Failure {
    fn from(_: backoff_runtime::limits::Refused) -> Self {
        Failure::Denied
    }
}

#[tokio::test(start_paused = true)]
async fn the_admission_limiter_is_asked_before_every_attempt_and_a_hedge_it_holds_is_not_sent() {
    use backoff_runtime::limits::Admission;
    // The first attempt waits 30 ms for admission; the hedge at 80 ms is
    // told to wait: not sent, and no other hedge follows.
    let limiter = Scripted::new(vec![Admission::Wait(ms(30)), Admission::Go, Admission::Wait(ms(10))]);
    let backend = Backend::new(vec![ok(200, 1)]);
    let result = Policy::new()
        .max_retries(3)
        .retry(|| backend.attempt())
        .admission(&limiter)
        .hedge_after(ms(50))
        .await;
    assert_eq!(result, Ok(1));
    assert_eq!(backend.started(), [ms(30)], "the first waited; the hedge was held back");
    assert_eq!(*limiter.asked.lock().unwrap(), [1, 1, 2]);
}

/// A retry limit that allows every retry, counting the retries it allowed
/// and those given back unsent.
#[derive(Default)]
struct Counted {
    allowed: AtomicU32,
    unsent: AtomicU32,
}

impl backoff_runtime::limits::RetryLimit for Counted {
    fn try_retry(&self, _now: backoff_runtime::Instant) -> bool {
        self.allowed.fetch_add(1, Ordering::SeqCst);
        true
    }

    fn unsent(&self, _since: backoff_runtime::Instant) {
        self.unsent.fetch_add(1, Ordering::SeqCst);
    }
}

#[tokio::test(start_paused = true)]
async fn a_retry_the_admission_limiter_holds_back_keeps_what_the_budget_allowed() {
    use backoff_runtime::limits::Admission;
    // The first attempt fails at 10 ms with a 30 ms hint; the retry the
    // budget allowed waits it out, is told to wait 20 ms more, and is sent.
    let limiter = Scripted::new(vec![Admission::Go, Admission::Wait(ms(20))]);
    let budget = Counted::default();
    let backend = Backend::new(vec![busy(10), ok(5, 2)]);
    let result = Policy::new()
        .max_retries(2)
        .retry(|| backend.attempt())
        .retry_if(retried)
        .retry_after(|_| Some(ms(30)))
        .budget(&budget)
        .admission(&limiter)
        .hedge_after(ms(500))
        .await;
    assert_eq!(result, Ok(2));
    assert_eq!(backend.started(), [ms(0), ms(60)]);
    assert_eq!(budget.allowed.load(Ordering::SeqCst), 1);
    assert_eq!(
        budget.unsent.load(Ordering::SeqCst),
        0,
        "the retry was sent: nothing is given back"
    );
}

#[tokio::test(start_paused = true)]
async fn a_refused_first_attempt_ends_the_call_and_a_refused_hedge_is_not_sent() {
    use backoff_runtime::limits::Admission;
    let limiter = Scripted::new(vec![Admission::Refuse]);
    let backend = Backend::new(vec![ok(200, 1)]);
    let result = Policy::new()
        .max_retries(3)
        .retry(|| backend.attempt())
        .admission(&limiter)
        .hedge_after(ms(50))
        .await;
    assert_eq!(result, Err(Failure::Denied), "E::from(Refused)");
    assert!(backend.started().is_empty());
    let limiter = Scripted::new(vec![Admission::Go, Admission::Refuse]);
    let backend = Backend::new(vec![ok(200, 1)]);
    let result = Policy::new()
        .max_retries(3)
        .retry(|| backend.attempt())
        .admission(&limiter)
        .hedge_after(ms(50))
        .await;
    assert_eq!(result, Ok(1), "the running attempt answers");
    assert_eq!(backend.started(), [ms(0)]);
}

#[tokio::test(start_paused = true)]
async fn an_answer_before_the_delay_sends_nothing_else() {
    let backend = Backend::new(vec![ok(40, 1)]);
    let result = Policy::new()
        .max_retries(2)
        .retry(|| backend.attempt())
        .hedge_after(ms(50))
        .await;
    assert_eq!(result, Ok(1));
    tokio::time::sleep(ms(500)).await;
    assert_eq!(backend.started(), [ms(0)]);
}

#[tokio::test(start_paused = true)]
async fn a_retryable_failure_starts_the_next_attempt_at_once() {
    let backend = Backend::new(vec![busy(10), ok(5, 2)]);
    let started = Instant::now();
    let result = Policy::new()
        .max_retries(2)
        .retry(|| backend.attempt())
        .retry_if(retried)
        .hedge_after(ms(50))
        .await;
    assert_eq!(result, Ok(2));
    assert_eq!(backend.started(), [ms(0), ms(10)], "no backoff: at once");
    assert_eq!(started.elapsed(), ms(15));
}

#[tokio::test(start_paused = true)]
async fn the_delay_starts_again_after_each_hedge() {
    // Three slow attempts: hedges at 50 and 100 ms; the third answers first.
    let backend = Backend::new(vec![ok(1_000, 1), ok(1_000, 2), ok(20, 3)]);
    let result = Policy::new()
        .max_retries(2)
        .retry(|| backend.attempt())
        .hedge_after(ms(50))
        .await;
    assert_eq!(result, Ok(3));
    assert_eq!(backend.started(), [ms(0), ms(50), ms(100)]);
    assert_eq!(backend.cancelled(), [0, 1]);
}

#[tokio::test(start_paused = true)]
async fn a_permanent_error_ends_the_call_and_cancels_the_rest() {
    let backend = Backend::new(vec![ok(1_000, 1), denied(10)]);
    let reasons = Mutex::new(Vec::new());
    let started = Instant::now();
    let result = Policy::new()
        .max_retries(3)
        .retry(|| backend.attempt())
        .retry_if(retried)
        .on_give_up(|_, give_up: &GiveUp| reasons.lock().unwrap().push(give_up.reason()))
        .hedge_after(ms(50))
        .await;
    assert_eq!(result, Err(Failure::Denied));
    assert_eq!(started.elapsed(), ms(60));
    assert_eq!(backend.cancelled(), [0]);
    assert_eq!(reasons.into_inner().unwrap(), [StopReason::Permanent]);
}

#[tokio::test(start_paused = true)]
async fn at_most_max_retries_plus_one_attempts_and_the_last_failure_is_returned() {
    let backend = Backend::new(vec![busy(300), busy(200), busy(100)]);
    let started = Instant::now();
    let reasons = Mutex::new(Vec::new());
    let result = Policy::new()
        .max_retries(2)
        .retry(|| backend.attempt())
        .retry_if(retried)
        .on_give_up(|_, give_up: &GiveUp| {
            reasons
                .lock()
                .unwrap()
                .push((give_up.reason(), give_up.attempts(), give_up.hedges()))
        })
        .hedge_after(ms(50))
        .await;
    assert_eq!(result, Err(Failure::Busy));
    // Started at 0, 50, 100; they fail at 150, 250, 300: the first to start
    // is the last to fail, and its failure is the call's. The call waits
    // for every attempt running: none is cancelled.
    assert_eq!(backend.started(), [ms(0), ms(50), ms(100)]);
    assert_eq!(started.elapsed(), ms(300));
    assert_eq!(backend.cancelled(), Vec::<usize>::new());
    assert_eq!(reasons.into_inner().unwrap(), [(StopReason::Exhausted, 3, 2)]);
}

#[tokio::test(start_paused = true)]
async fn every_hedge_asks_the_budget_a_retry_asks() {
    // Retries and hedges together may reach 20% of the calls.
    static BUDGET: RetryBudget = RetryBudget::new().ratio(0.2).min_per_second(0);
    let mut sent = 0;
    let mut hedged_won = 0;
    for _ in 0..10 {
        // Each first attempt is slow: every call would hedge at 50 ms.
        let backend = Backend::new(vec![ok(100, 1), ok(10, 2)]);
        let result = Policy::new()
            .max_retries(4)
            .retry(|| backend.attempt())
            .budget(&BUDGET)
            .hedge_after(ms(50))
            .await;
        sent += backend.started().len();
        hedged_won += usize::from(result == Ok(2));
    }
    assert_eq!(sent, 12, "10 calls, and the 2 hedges the budget allowed");
    assert_eq!(hedged_won, 2);
}

#[tokio::test(start_paused = true)]
async fn a_throttle_below_half_sends_no_hedge_and_a_lone_failure_ends_at_once() {
    let throttle = RetryThrottle::new(4, 0.1);
    // Two failures leave 2 tokens: not above half the bucket.
    backoff_runtime::limits::RetryLimit::failed(&throttle);
    backoff_runtime::limits::RetryLimit::failed(&throttle);
    let backend = Backend::new(vec![busy(100)]);
    let started = Instant::now();
    let result = Policy::new()
        .max_retries(4)
        .retry(|| backend.attempt())
        .retry_if(retried)
        .budget(&throttle)
        .hedge_after(ms(50))
        .await;
    assert_eq!(result, Err(Failure::Busy));
    assert_eq!(backend.started(), [ms(0)], "the hedge at 50 ms was refused");
    assert_eq!(started.elapsed(), ms(100), "no attempt running: ended at the failure");
}

#[tokio::test(start_paused = true)]
async fn a_server_hint_is_the_wait_before_the_next_attempt() {
    let backend = Backend::new(vec![busy(10), ok(5, 2)]);
    let result = Policy::new()
        .max_retries(2)
        .retry(|| backend.attempt())
        .retry_if(retried)
        .retry_after(|_| Some(ms(30)))
        .hedge_after(ms(500))
        .await;
    assert_eq!(result, Ok(2));
    assert_eq!(backend.started(), [ms(0), ms(40)]);
}

/// A retry the server's hint put off is still sent when, while it waits,
/// another attempt fails with no attempt left to follow it and a third
/// still runs (sent at 0, 50 and 100 ms; the first fails at 120 ms with a
/// 300 ms hint, the second at 150 ms past `max_retries`).
#[tokio::test(start_paused = true)]
async fn a_hinted_retry_outlives_another_attempt_s_last_failure() {
    let backend = Backend::new(vec![hinted(120), busy(100), ok(1_000, 3), ok(10, 4)]);
    let result = Policy::new()
        .max_retries(3)
        .retry(|| backend.attempt())
        .retry_if(retried)
        .retry_after(hint)
        .hedge_after(ms(50))
        .await;
    assert_eq!(result, Ok(4), "the hinted retry answers first");
    assert_eq!(backend.started(), [ms(0), ms(50), ms(100), ms(420)]);
}

#[tokio::test(start_paused = true)]
async fn no_attempt_starts_past_max_elapsed() {
    let backend = Backend::new(vec![ok(1_000, 1), ok(1_000, 2), ok(1_000, 3)]);
    let result = Policy::new()
        .max_retries(4)
        .max_elapsed(ms(80))
        .retry(|| backend.attempt())
        .hedge_after(ms(50))
        .await;
    assert_eq!(result, Ok(1));
    assert_eq!(
        backend.started(),
        [ms(0), ms(50)],
        "the hedge at 100 ms would start past 80 ms"
    );
}

#[tokio::test(start_paused = true)]
async fn the_hedged_future_is_send_and_counts_its_calls() {
    let calls = Arc::new(AtomicU32::new(0));
    let counted = Arc::clone(&calls);
    let handle = tokio::spawn(async move {
        Policy::new()
            .max_retries(1)
            .retry(move || {
                let calls = Arc::clone(&counted);
                async move {
                    calls.fetch_add(1, Ordering::SeqCst);
                    tokio::time::sleep(ms(100)).await;
                    Ok::<_, ()>(7)
                }
            })
            .hedge_after(ms(50))
            .await
    });
    assert_eq!(handle.await.unwrap(), Ok(7));
    assert_eq!(calls.load(Ordering::SeqCst), 2);
}

/// What the events mean in a hedged call: every attempt after the first
/// is a hedge (`hedges() == attempts() - 1`), whether the delay or a
/// failure started it; `on_retry` fires once per failure another attempt
/// follows, never for an attempt the delay started.
#[tokio::test(start_paused = true)]
async fn the_builder_s_events_count_every_attempt_after_the_first_as_a_hedge() {
    // Two fast failures, each followed at once; then a slow attempt raced
    // by a hedge the delay starts.
    let backend = Backend::new(vec![busy(5), busy(5), ok(1_000, 3), ok(10, 4)]);
    let retried = Mutex::new(0);
    let succeeded = Mutex::new(Vec::new());
    let result = Policy::new()
        .max_retries(3)
        .retry(|| backend.attempt())
        .retry_if(retried_failure)
        .on_retry(|_, _| *retried.lock().unwrap() += 1)
        .on_success(|success: &backoff_runtime::Success| {
            succeeded.lock().unwrap().push((success.attempts(), success.hedges()));
        })
        .hedge_after(ms(50))
        .await;
    assert_eq!(result, Ok(4));
    assert_eq!(backend.started(), [ms(0), ms(5), ms(10), ms(60)]);
    assert_eq!(*succeeded.lock().unwrap(), [(4, 3)], "every attempt after the first");
    assert_eq!(
        *retried.lock().unwrap(),
        2,
        "one per failure, none for the delay's hedge"
    );
}

fn retried_failure(failure: &Failure) -> bool {
    retried(failure)
}

mod attribute {
    use super::*;
    use backoff_runtime::retry;

    #[retry(max_retries = 2, hedge_after = "50ms", retry_if = retried)]
    async fn fetch(backend: &Backend) -> Result<u32, Failure> {
        backend.attempt().await
    }

    #[tokio::test(start_paused = true)]
    async fn hedge_after_races_a_slow_attempt_and_cancels_it() {
        let backend = Backend::new(vec![ok(1_000, 1), ok(10, 2)]);
        let started = Instant::now();
        assert_eq!(fetch(&backend).await, Ok(2));
        assert_eq!(started.elapsed(), ms(60));
        assert_eq!(backend.started(), [ms(0), ms(50)]);
        assert_eq!(backend.cancelled(), [0]);
    }

    #[tokio::test(start_paused = true)]
    async fn a_retryable_failure_sends_the_next_at_once_and_a_permanent_one_ends_the_call() {
        let backend = Backend::new(vec![busy(10), ok(1_000, 2), denied(20)]);
        assert_eq!(fetch(&backend).await, Err(Failure::Denied));
        // Busy at 10 ms: the next at once; the third at 60 ms fails for good at 80.
        assert_eq!(backend.started(), [ms(0), ms(10), ms(60)]);
        assert_eq!(backend.cancelled(), [1]);
    }

    struct Client {
        backend: Backend,
        gave_up: Mutex<Vec<(StopReason, u32)>>,
    }

    impl Client {
        #[retry(
            max_retries = 1,
            hedge_after = "50ms",
            on_give_up = |_, give_up| self.gave_up.lock().unwrap().push((give_up.reason(), give_up.attempts()))
        )]
        async fn get(&self, path: &str, id: u32) -> Result<u32, Failure> {
            assert_eq!((path, id), ("/item", 7), "every attempt sees what the caller passed");
            self.backend.attempt().await
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_method_of_shared_self_hedges_with_its_arguments_and_hooks() {
        let client = Client {
            backend: Backend::new(vec![busy(300), busy(100)]),
            gave_up: Mutex::new(Vec::new()),
        };
        assert_eq!(client.get("/item", 7).await, Err(Failure::Busy));
        assert_eq!(client.backend.started(), [ms(0), ms(50)]);
        assert_eq!(*client.gave_up.lock().unwrap(), [(StopReason::Exhausted, 2)]);
    }

    static EVENTS: Mutex<Vec<(&str, u32, u32)>> = Mutex::new(Vec::new());

    #[retry(
        max_retries = 2,
        hedge_after = "50ms",
        retry_if = retried,
        on_retry = |_, event| EVENTS.lock().unwrap().push(("retry", event.attempt(), 0)),
        on_give_up = |_, give_up| EVENTS.lock().unwrap().push(("give up", give_up.attempts(), give_up.hedges()))
    )]
    async fn observed(backend: &Backend) -> Result<u32, Failure> {
        backend.attempt().await
    }

    /// The attribute's events mean what the builder's do: three attempts
    /// that all fail fast are two hedges, and two retries.
    #[tokio::test(start_paused = true)]
    async fn the_attribute_s_events_count_every_attempt_after_the_first_as_a_hedge() {
        let backend = Backend::new(vec![busy(5), busy(5), busy(5)]);
        assert_eq!(observed(&backend).await, Err(Failure::Busy));
        assert_eq!(
            *EVENTS.lock().unwrap(),
            [("retry", 1, 0), ("retry", 2, 0), ("give up", 3, 2)]
        );
    }

    static SHARED: RetryBudget = RetryBudget::new().ratio(0.2).min_per_second(0);

    #[retry(max_retries = 4, hedge_after = "50ms", budget = SHARED)]
    async fn budgeted(backend: &Backend) -> Result<u32, Failure> {
        backend.attempt().await
    }

    #[tokio::test(start_paused = true)]
    async fn the_budget_bounds_the_attribute_s_hedges() {
        let mut sent = 0;
        for _ in 0..10 {
            let backend = Backend::new(vec![ok(100, 1), ok(10, 2)]);
            budgeted(&backend).await.unwrap();
            sent += backend.started().len();
        }
        assert_eq!(sent, 12);
    }
}

mod tower_layer {
    use super::*;
    use backoff_tower::RetryLayer;
    use tower::{Layer, ServiceExt};

    /// The backend as an HTTP service: a planned value is a 200 with it in
    /// the body; `Busy` is a 503, `Denied` a 400. It counts the requests
    /// it is called with.
    fn service(
        backend: &Backend,
        readied: &Arc<AtomicU32>,
    ) -> impl tower::Service<
        http::Request<String>,
        Response = http::Response<String>,
        Error = tower::BoxError,
        Future: Send + 'static,
    > + Clone
    + Send
    + 'static {
        let backend = backend.clone();
        let readied = Arc::clone(readied);
        let inner = tower::service_fn(move |_request: http::Request<String>| {
            let backend = backend.clone();
            async move {
                let (status, body) = match backend.attempt().await {
                    Ok(value) => (200, value.to_string()),
                    Err(Failure::Busy) => (503, String::new()),
                    Err(Failure::Denied) => (400, String::new()),
                    Err(Failure::Hinted) => {
                        let response = http::Response::builder().status(503).header("retry-after-ms", "300");
                        return Ok(response.body(String::new()).unwrap());
                    }
                };
                Ok::<_, tower::BoxError>(http::Response::builder().status(status).body(body).unwrap())
            }
        });
        tower::ServiceBuilder::new()
            .map_request(move |request| {
                readied.fetch_add(1, Ordering::SeqCst);
                request
            })
            .service(inner)
    }

    fn get() -> http::Request<String> {
        http::Request::get("http://backend/item").body(String::new()).unwrap()
    }

    #[tokio::test(start_paused = true)]
    async fn a_slow_get_is_hedged_through_a_clone_and_the_first_answer_wins() {
        let backend = Backend::new(vec![ok(1_000, 1), ok(10, 2)]);
        let sent = Arc::new(AtomicU32::new(0));
        let succeeded = Arc::new(Mutex::new(Vec::new()));
        let heard = Arc::clone(&succeeded);
        let layer = RetryLayer::new(Policy::new().max_retries(2))
            .on_success(move |success| heard.lock().unwrap().push((success.attempts(), success.hedges())))
            .hedge_after(ms(50));
        let started = Instant::now();
        let response = layer.layer(service(&backend, &sent)).oneshot(get()).await.unwrap();
        assert_eq!(
            (response.status().as_u16(), response.into_body()),
            (200, "2".to_owned())
        );
        assert_eq!(started.elapsed(), ms(60));
        assert_eq!(backend.started(), [ms(0), ms(50)]);
        assert_eq!(backend.cancelled(), [0]);
        assert_eq!(sent.load(Ordering::SeqCst), 2);
        assert_eq!(*succeeded.lock().unwrap(), [(2, 1)], "the event counts the hedge apart");
    }

    /// One call through a layer hedging after 50 ms whose admission
    /// limiter answers `answers`, to a backend planned as `plans`: the
    /// result, the backend and the limiter.
    async fn admitted(
        answers: Vec<backoff_runtime::limits::Admission>,
        plans: Vec<Plan>,
    ) -> (Result<http::Response<String>, tower::BoxError>, Backend, Arc<Scripted>) {
        let limiter = Arc::new(Scripted::new(answers));
        let backend = Backend::new(plans);
        let layer = RetryLayer::new(Policy::new().max_retries(3).initial_backoff(ms(10)))
            .admission(Arc::clone(&limiter))
            .hedge_after(ms(50));
        let sent = Arc::new(AtomicU32::new(0));
        let result = layer.layer(service(&backend, &sent)).oneshot(get()).await;
        (result, backend, limiter)
    }

    #[tokio::test(start_paused = true)]
    async fn a_hedge_the_limiter_lets_go_is_sent_and_one_it_holds_is_not() {
        use backoff_runtime::limits::Admission;
        let (result, backend, _) = admitted(vec![Admission::Go, Admission::Go], vec![ok(1_000, 1), ok(10, 2)]).await;
        assert_eq!(result.unwrap().into_body(), "2", "the hedge, let go, answers first");
        assert_eq!(backend.started(), [ms(0), ms(50)]);
        let (result, backend, limiter) = admitted(vec![Admission::Go, Admission::Wait(ms(10))], vec![ok(200, 1)]).await;
        assert_eq!(result.unwrap().into_body(), "1");
        assert_eq!(backend.started(), [ms(0)], "a hedge held back is not sent");
        assert_eq!(*limiter.asked.lock().unwrap(), [1, 2]);
        // A first attempt held back 30 ms, then raced by a hedge 50 ms later.
        let plans = vec![ok(1_000, 1), ok(10, 2)];
        let (result, backend, _) = admitted(vec![Admission::Wait(ms(30))], plans).await;
        assert_eq!(result.unwrap().into_body(), "2");
        assert_eq!(backend.started(), [ms(30), ms(80)]);
    }

    #[tokio::test(start_paused = true)]
    async fn a_retry_with_nothing_running_waits_as_told_or_ends_the_call_when_refused() {
        use backoff_runtime::limits::Admission;
        // The first fails at 10 ms; its retry is told to wait 30 ms.
        let (result, backend, _) =
            admitted(vec![Admission::Go, Admission::Wait(ms(30))], vec![busy(10), ok(5, 2)]).await;
        assert_eq!(result.unwrap().into_body(), "2");
        assert_eq!(backend.started()[1], ms(40), "waited as the limiter said");
        // Refused: the call ends with the refusal.
        let (result, backend, _) = admitted(vec![Admission::Go, Admission::Refuse], vec![busy(10)]).await;
        let error = result.unwrap_err();
        assert!(
            error.downcast::<backoff_runtime::limits::Refused>().is_ok(),
            "the refusal"
        );
        assert_eq!(backend.started(), [ms(0)]);
    }

    /// A hedged call whose first attempt answers on its first poll: an
    /// answer to retry is retried, an accepted one is the call's success.
    #[tokio::test(start_paused = true)]
    async fn an_answer_on_the_first_poll_is_judged_as_any_other() {
        let calls = Arc::new(AtomicU32::new(0));
        let counted = Arc::clone(&calls);
        let service = tower::service_fn(move |_: http::Request<String>| {
            let status = if counted.fetch_add(1, Ordering::SeqCst) == 0 {
                503
            } else {
                200
            };
            std::future::ready(Ok::<_, std::convert::Infallible>(
                http::Response::builder().status(status).body(String::new()).unwrap(),
            ))
        });
        let succeeded = Arc::new(Mutex::new(Vec::new()));
        let heard = Arc::clone(&succeeded);
        let layer = RetryLayer::new(Policy::new().max_retries(2).initial_backoff(ms(10)))
            .on_success(move |success| heard.lock().unwrap().push((success.attempts(), success.hedges())))
            .hedge_after(ms(50));
        let service = layer.layer(service);
        let response = service.clone().oneshot(get()).await.unwrap();
        assert_eq!(response.status(), 200, "the 503 was retried");
        assert_eq!(calls.load(Ordering::SeqCst), 2);
        let response = service.oneshot(get()).await.unwrap();
        assert_eq!(response.status(), 200);
        assert_eq!(calls.load(Ordering::SeqCst), 3);
        assert_eq!(
            *succeeded.lock().unwrap(),
            [(2, 1), (1, 0)],
            "each success heard; the attempt after the 503 is a hedge"
        );
    }

    /// The layer's events mean what the builder's do: two fast 503s and
    /// the answer after them are two hedges and two retries.
    #[tokio::test(start_paused = true)]
    async fn the_layer_s_events_count_every_attempt_after_the_first_as_a_hedge() {
        let backend = Backend::new(vec![busy(5), busy(5), ok(10, 3)]);
        let sent = Arc::new(AtomicU32::new(0));
        let heard = Arc::new(Mutex::new(Vec::new()));
        let (on_retry, on_success) = (Arc::clone(&heard), Arc::clone(&heard));
        let layer = RetryLayer::new(Policy::new().max_retries(2))
            .on_retry(move |event| on_retry.lock().unwrap().push(("retry", event.attempt())))
            .on_success(move |success| {
                on_success.lock().unwrap().push(("attempts", success.attempts()));
                on_success.lock().unwrap().push(("hedges", success.hedges()));
            })
            .hedge_after(ms(50));
        let response = layer.layer(service(&backend, &sent)).oneshot(get()).await.unwrap();
        assert_eq!(response.into_body(), "3");
        assert_eq!(
            *heard.lock().unwrap(),
            [("retry", 1), ("retry", 2), ("attempts", 3), ("hedges", 2)]
        );
    }

    /// The hedge is asked of the admission limiter while the first attempt
    /// runs on its own: refused, it is not sent, and the first answers.
    #[tokio::test(start_paused = true)]
    async fn a_hedge_the_limiter_refuses_is_not_sent_and_the_first_answers() {
        use backoff_runtime::limits::Admission;
        let (result, backend, limiter) = admitted(vec![Admission::Go, Admission::Refuse], vec![ok(200, 1)]).await;
        let response = result.unwrap();
        assert_eq!(
            (response.status().as_u16(), response.into_body()),
            (200, "1".to_owned())
        );
        assert_eq!(backend.started(), [ms(0)], "the refused hedge was not sent");
        assert_eq!(*limiter.asked.lock().unwrap(), [1, 2]);
    }

    /// The same as `a_hinted_retry_outlives_another_attempt_s_last_failure`
    /// through the layer: a 503 with `retry-after-ms: 300` puts the retry off.
    #[tokio::test(start_paused = true)]
    async fn a_hinted_retry_outlives_another_attempt_s_last_failure() {
        let backend = Backend::new(vec![hinted(120), busy(100), ok(1_000, 3), ok(10, 4)]);
        let sent = Arc::new(AtomicU32::new(0));
        let layer = RetryLayer::new(Policy::new().max_retries(3)).hedge_after(ms(50));
        let response = layer.layer(service(&backend, &sent)).oneshot(get()).await.unwrap();
        assert_eq!(response.into_body(), "4", "the hinted retry answers first");
        assert_eq!(backend.started(), [ms(0), ms(50), ms(100), ms(420)]);
    }

    #[tokio::test(start_paused = true)]
    async fn a_503_sends_the_next_at_once_and_a_400_ends_the_call() {
        let backend = Backend::new(vec![busy(10), ok(1_000, 2), denied(20)]);
        let sent = Arc::new(AtomicU32::new(0));
        let layer = RetryLayer::new(Policy::new().max_retries(2)).hedge_after(ms(50));
        let response = layer.layer(service(&backend, &sent)).oneshot(get()).await.unwrap();
        assert_eq!(response.status(), 400);
        assert_eq!(backend.started(), [ms(0), ms(10), ms(60)]);
        assert_eq!(backend.cancelled(), [1]);
    }

    #[tokio::test(start_paused = true)]
    async fn a_post_without_a_key_is_never_hedged() {
        let backend = Backend::new(vec![ok(1_000, 1)]);
        let sent = Arc::new(AtomicU32::new(0));
        let layer = RetryLayer::new(Policy::new().max_retries(2)).hedge_after(ms(50));
        let post = http::Request::post("http://backend/item").body(String::new()).unwrap();
        let response = layer.layer(service(&backend, &sent)).oneshot(post).await.unwrap();
        assert_eq!(response.into_body(), "1");
        assert_eq!(backend.started(), [ms(0)]);
    }

    #[tokio::test(start_paused = true)]
    async fn a_hedge_waits_for_its_clone_to_be_ready() {
        // One request at a time: the hedge's clone is not ready while the
        // first attempt runs, so the first attempt's answer wins.
        let backend = Backend::new(vec![ok(100, 1), ok(10, 2)]);
        let sent = Arc::new(AtomicU32::new(0));
        let limited = tower::limit::ConcurrencyLimit::new(service(&backend, &sent), 1);
        let layer = RetryLayer::new(Policy::new().max_retries(2)).hedge_after(ms(50));
        let response = layer.layer(limited).oneshot(get()).await.unwrap();
        assert_eq!(response.into_body(), "1");
        assert_eq!(backend.started(), [ms(0)]);
    }

    #[tokio::test(start_paused = true)]
    async fn the_layer_s_budget_bounds_its_hedges() {
        let budget = Arc::new(RetryBudget::new().ratio(0.2).min_per_second(0));
        let layer = RetryLayer::new(Policy::new().max_retries(4))
            .budget(budget)
            .hedge_after(ms(50));
        let mut sent_total = 0;
        for _ in 0..10 {
            let backend = Backend::new(vec![ok(100, 1), ok(10, 2)]);
            let sent = Arc::new(AtomicU32::new(0));
            layer.layer(service(&backend, &sent)).oneshot(get()).await.unwrap();
            sent_total += backend.started().len();
        }
        assert_eq!(sent_total, 12, "10 calls and the 2 hedges the budget allowed");
    }
}

/// Sizing a budget for hedging: `callers` callers at once, 400 calls in
/// all, one call in `every` slow (300 ms) on its first attempt and 1 ms
/// otherwise, hedged after 5 ms under `budget`. Returns the p99 (the
/// 396th of 400), the slow calls left unhedged, and the attempts sent.
async fn hedged_tail(budget: &RetryBudget, callers: usize, every: u32) -> (Duration, usize, usize) {
    let sent = AtomicU32::new(0);
    let numbered = AtomicU32::new(0);
    let unhedged = AtomicU32::new(0);
    let callers = (0..callers).map(|_| async {
        let mut took = Vec::new();
        for _ in 0..400 / callers {
            let slow_call = numbered.fetch_add(1, Ordering::SeqCst).is_multiple_of(every);
            let started = Instant::now();
            let mut attempt = 0;
            Policy::new()
                .max_retries(2)
                .retry(|| {
                    attempt += 1;
                    sent.fetch_add(1, Ordering::SeqCst);
                    let slow = attempt == 1 && slow_call;
                    async move {
                        tokio::time::sleep(if slow { ms(300) } else { ms(1) }).await;
                        Ok::<_, Failure>(())
                    }
                })
                .budget(budget)
                .hedge_after(ms(5))
                .await
                .unwrap();
            let elapsed = started.elapsed();
            if elapsed >= ms(300) {
                unhedged.fetch_add(1, Ordering::SeqCst);
            }
            took.push(elapsed);
        }
        took
    });
    let mut took: Vec<Duration> = futures_util::future::join_all(callers).await.concat();
    took.sort();
    (
        took[395],
        unhedged.load(Ordering::SeqCst) as usize,
        sent.load(Ordering::SeqCst) as usize,
    )
}

/// The figures of "Sizing a budget for hedging" (docs/jitter-and-budgets.md).
#[tokio::test(start_paused = true)]
async fn a_budget_for_hedging_is_sized_by_the_share_of_calls_past_the_delay() {
    // A budget below the share of calls slower than the delay binds: the
    // extra load stays under its 10%, and the p99 stays slow.
    let short = RetryBudget::new().ratio(0.1).min_per_second(0);
    let (p99, unhedged, sent) = hedged_tail(&short, 16, 5).await;
    assert_eq!((p99, unhedged, sent), (ms(300), 41, 439));
    // Above that share, every slow call is hedged: the p99 is the hedge's.
    let sized = RetryBudget::new().ratio(0.25).min_per_second(0);
    assert_eq!(hedged_tail(&sized, 16, 5).await, (ms(6), 0, 480));
    // Without a floor, nothing is deposited before the first call: a
    // caller's first slow call is not hedged. The default floor hedges it.
    let no_floor = RetryBudget::new().ratio(0.1).min_per_second(0);
    assert_eq!(hedged_tail(&no_floor, 1, 20).await.1, 1);
    let floor = RetryBudget::new().ratio(0.1);
    assert_eq!(hedged_tail(&floor, 1, 20).await.1, 0);
}
