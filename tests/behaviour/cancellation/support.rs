//! What the sweep shares: a recording admission limiter ([`Rec`]) and a
//! recording retry limit ([`RecBudget`]) around the limiter under test,
//! the exact-once check of what they heard, the replay of what a call
//! should have left behind onto an identical fresh limiter, the scripted
//! body ([`Script`]) and the stepping of a future on tokio's paused clock.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use backoff_runtime::limits::{
    AdaptiveRateLimiter, AdaptiveThrottle, Admission, AdmissionLimit, AdmissionRequest, AttemptEnd, CircuitBreaker,
    Cooldown, Ending, Keyed, RetryBudget, RetryLimit, RetryThrottle,
};
use std::time::Instant;

/// What the recording limiter heard, in order.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Heard {
    Admit {
        at: Instant,
        attempt: u32,
        waited: Duration,
        key: Option<String>,
        answer: Admission,
    },
    Observed {
        at: Instant,
        ending: Ending,
        slow_down: bool,
        hint: Option<Duration>,
        key: Option<String>,
    },
    Withdrawn {
        at: Instant,
        attempt: u32,
        waited: Duration,
        key: Option<String>,
    },
}

/// A limiter under test, and what it looks like from outside now.
pub(super) trait Inspect: AdmissionLimit + Send + Sync {
    /// Its observable state at `now` (never changing it for good).
    fn state(&self, now: Instant) -> String;
}

/// Admits everything: the admission of the budget's cases.
pub(super) struct Open;

impl AdmissionLimit for Open {
    fn admit(&self, _: AdmissionRequest<'_>) -> Admission {
        Admission::Go
    }
}

impl Inspect for Open {
    fn state(&self, _: Instant) -> String {
        String::new()
    }
}

/// A user's bulkhead: `admit` takes a slot, `observed` gives it back,
/// whatever the ending.
pub(super) struct Bulkhead {
    free: AtomicU32,
}

impl Bulkhead {
    pub(super) const fn new(slots: u32) -> Self {
        Bulkhead {
            free: AtomicU32::new(slots),
        }
    }

    pub(super) fn free(&self) -> u32 {
        self.free.load(Ordering::SeqCst)
    }
}

impl AdmissionLimit for Bulkhead {
    fn admit(&self, _: AdmissionRequest<'_>) -> Admission {
        match self
            .free
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |free| free.checked_sub(1))
        {
            Ok(_) => Admission::Go,
            Err(_) => Admission::Refuse,
        }
    }

    fn observed(&self, _: AttemptEnd<'_>) {
        self.free.fetch_add(1, Ordering::SeqCst);
    }
}

impl Inspect for Bulkhead {
    fn state(&self, _: Instant) -> String {
        format!("free {}", self.free())
    }
}

impl Inspect for CircuitBreaker {
    /// Closed or not, and the window's counts. (An open breaker past its
    /// break turns half-open at its next question: a breaker that a call
    /// asked and one no call asked differ only in that, which the fresh
    /// call after the case compares by what each admits.)
    fn state(&self, _: Instant) -> String {
        let closed = self.state() == backoff_runtime::limits::CircuitState::Closed;
        format!("closed {closed} {:?}", self.failures())
    }
}

/// The keys the front ends give: none (the attribute, the builder), the
/// host (the HTTP layers), the method (gRPC).
pub(super) const KEYS: [&str; 3] = ["", HOST, METHOD];
pub(super) const HOST: &str = "svc.test";
pub(super) const METHOD: &str = "/test.Svc/Unary";

impl Inspect for Keyed<CircuitBreaker> {
    /// Each key's breaker, as [`CircuitBreaker`]'s state reads it.
    fn state(&self, now: Instant) -> String {
        KEYS.map(|key| format!("{key}: {}", Inspect::state(&*self.get(key), now)))
            .join(", ")
    }
}

impl Inspect for Cooldown {
    fn state(&self, now: Instant) -> String {
        format!("{:?}", self.admit(AdmissionRequest::new(now, 1, Duration::ZERO)))
    }
}

impl Inspect for AdaptiveRateLimiter {
    /// The rate, and whether it counts. (Its tokens are as of the last
    /// question or answer: a waiter's questions refill the bucket at their
    /// own instants, to the same total by any later instant. The fresh call
    /// after the case compares what they admit.)
    fn state(&self, _: Instant) -> String {
        format!("rate {:.9} enabled {}", self.fill_rate(), self.is_enabled())
    }
}

impl Inspect for AdaptiveThrottle {
    fn state(&self, now: Instant) -> String {
        format!("{:?}", self.counts(now))
    }
}

/// The recording wrapper around the limiter under test.
pub(super) struct Rec {
    pub inner: Arc<dyn Inspect>,
    log: Mutex<Vec<Heard>>,
}

impl Rec {
    pub(super) fn new(inner: Arc<dyn Inspect>) -> Self {
        Rec {
            inner,
            log: Mutex::default(),
        }
    }

    /// What it heard since the last call, taken.
    pub(super) fn take(&self) -> Vec<Heard> {
        std::mem::take(&mut *self.log.lock().unwrap())
    }

    fn push(&self, heard: Heard) {
        self.log.lock().unwrap().push(heard);
    }
}

impl AdmissionLimit for Rec {
    fn admit(&self, request: AdmissionRequest<'_>) -> Admission {
        let answer = self.inner.admit(request);
        self.push(Heard::Admit {
            at: request.now(),
            attempt: request.attempt,
            waited: request.waited(),
            key: request.key().map(str::to_owned),
            answer,
        });
        answer
    }

    fn observed(&self, end: AttemptEnd<'_>) {
        self.inner.observed(end);
        self.push(Heard::Observed {
            at: end.now(),
            ending: end.ending(),
            slow_down: end.slow_down(),
            hint: end.hint(),
            key: end.key().map(str::to_owned),
        });
    }

    fn withdrawn(&self, waiter: AdmissionRequest<'_>) {
        self.inner.withdrawn(waiter);
        self.push(Heard::Withdrawn {
            at: waiter.now(),
            attempt: waiter.attempt,
            waited: waiter.waited(),
            key: waiter.key().map(str::to_owned),
        });
    }
}

/// How the limiter's log of one call (dropped, panicked or finished)
/// adds up.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Tally {
    pub admitted: u32,
    pub observed: u32,
    pub answered: u32,
    pub panicked: u32,
    pub abandoned: u32,
    pub waits: u32,
    pub withdrawn: u32,
}

/// Checks the contract on the log of calls that are all over: every
/// admitted attempt (`Go`, `GoAfter`) is heard exactly once; a caller told
/// to `Wait` either asks again or is withdrawn, exactly once; nothing is
/// heard that was not owed.
pub(super) fn exactly_once(log: &[Heard]) -> Tally {
    let mut tally = Tally::default();
    let mut open = 0_u32;
    let mut waiting = false;
    for heard in log {
        match heard {
            Heard::Admit { answer, .. } => {
                waiting = false;
                match answer {
                    Admission::Go | Admission::GoAfter(_) => {
                        tally.admitted += 1;
                        open += 1;
                    }
                    Admission::Wait(_) => {
                        tally.waits += 1;
                        waiting = true;
                    }
                    Admission::Refuse | Admission::Shut(_) => {}
                }
            }
            Heard::Observed { ending, .. } => {
                assert!(open > 0, "an end heard that no admitted attempt owed: {log:#?}");
                open -= 1;
                tally.observed += 1;
                match ending {
                    Ending::Answered => tally.answered += 1,
                    Ending::Panicked => tally.panicked += 1,
                    Ending::Abandoned => tally.abandoned += 1,
                    _ => panic!("an ending of its own: {ending:?}"),
                }
            }
            Heard::Withdrawn { .. } => {
                assert!(waiting, "withdrawn, and nobody was waiting: {log:#?}");
                waiting = false;
                tally.withdrawn += 1;
            }
        }
    }
    assert_eq!(open, 0, "admitted attempts never heard of: {log:#?}");
    assert!(!waiting, "a waiter left without a word: {log:#?}");
    assert_eq!(tally.admitted, tally.observed, "{log:#?}");
    tally
}

/// What an abandoned attempt leaves in a limiter when the call is over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Ideal {
    /// Nothing: as if it had never been admitted (a bulkhead, a breaker's
    /// probe, a cooldown, the SRE throttle: nothing is known of the
    /// backend). A panic is a failure.
    Forget,
    /// Its cost stays taken, and it is heard as abandoned, which tells
    /// nothing of the backend (the adaptive rate limiter's token was spent:
    /// the request may have been sent; its end only closes the attempt it
    /// counts in flight).
    KeepCost,
}

/// Tells `into` what the call logged in `log` should have left behind:
/// every attempt that answered as it answered, a panic as a failure, an
/// abandoned attempt as `ideal` says, and nothing of a waiter that left
/// (its questions and its withdrawal). At the instants recorded.
pub(super) fn replay(log: &[Heard], into: &dyn AdmissionLimit, ideal: Ideal) {
    let mut skip = vec![false; log.len()];
    let mut open = std::collections::VecDeque::new();
    let mut line = Vec::new();
    for (index, heard) in log.iter().enumerate() {
        match heard {
            Heard::Admit { answer, .. } => match answer {
                Admission::Go | Admission::GoAfter(_) => {
                    open.push_back(index);
                    line.clear();
                }
                Admission::Wait(_) => line.push(index),
                // A refusal took nothing: not replayed (asked of B, whose
                // state differs by what it should not have heard, it may
                // answer otherwise: a breaker past its break lets a probe go).
                Admission::Refuse | Admission::Shut(_) => {
                    skip[index] = true;
                    line.clear();
                }
            },
            Heard::Observed { ending, .. } => {
                let admitted = open.pop_front().expect("checked by exactly_once");
                if *ending == Ending::Abandoned && ideal == Ideal::Forget {
                    skip[index] = true;
                    skip[admitted] = true;
                }
            }
            Heard::Withdrawn { .. } => {
                skip[index] = true;
                for waited in line.drain(..) {
                    skip[waited] = true;
                }
            }
        }
    }
    for (heard, _) in log.iter().zip(skip).filter(|(_, skip)| !skip) {
        match heard {
            Heard::Admit {
                at,
                attempt,
                waited,
                key,
                ..
            } => {
                let _ = into.admit(AdmissionRequest::new(*at, *attempt, *waited).with_key(key.as_deref()));
            }
            Heard::Observed {
                at,
                ending,
                slow_down,
                hint,
                key,
            } => {
                let failed = *slow_down || *ending == Ending::Panicked;
                let mut end = AttemptEnd::new(*at, failed);
                if *ending == Ending::Abandoned {
                    // Kept (`Ideal::KeepCost`): it ends one attempt in
                    // flight and tells nothing.
                    end = end.ended(Ending::Abandoned);
                }
                if let Some(hint) = hint {
                    end = end.with_hint(*hint);
                }
                into.observed(end.with_key(key.as_deref()));
            }
            Heard::Withdrawn { .. } => unreachable!("skipped"),
        }
    }
}

/// What the recording retry limit heard.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Spent {
    CallStarted(Instant),
    Failed,
    TryRetry(Instant, bool),
    Succeeded,
    Unsent(Instant),
}

/// A retry limit under test, and what it looks like from outside now.
pub(super) trait InspectBudget: RetryLimit + Send + Sync {
    fn state(&self, now: Instant) -> String;
}

/// Allows every retry: the budget of the admission limiters' cases.
pub(super) struct Unlimited;

impl RetryLimit for Unlimited {
    fn try_retry(&self, _: Instant) -> bool {
        true
    }
}

impl InspectBudget for Unlimited {
    fn state(&self, _: Instant) -> String {
        String::new()
    }
}

impl InspectBudget for RetryBudget {
    /// How many retries it would allow now (taken, then refunded).
    fn state(&self, now: Instant) -> String {
        let allowed = (0..64).take_while(|_| self.try_withdraw(now)).count();
        for _ in 0..allowed {
            self.refund(now);
        }
        format!("{allowed} retries")
    }
}

impl InspectBudget for RetryThrottle {
    fn state(&self, _: Instant) -> String {
        format!("{:.9} tokens", self.tokens())
    }
}

/// The recording wrapper around the retry limit under test.
pub(super) struct RecBudget {
    pub inner: Arc<dyn InspectBudget>,
    log: Mutex<Vec<Spent>>,
}

impl RecBudget {
    pub(super) fn new(inner: Arc<dyn InspectBudget>) -> Self {
        RecBudget {
            inner,
            log: Mutex::default(),
        }
    }

    pub(super) fn take(&self) -> Vec<Spent> {
        std::mem::take(&mut *self.log.lock().unwrap())
    }

    fn push(&self, spent: Spent) {
        self.log.lock().unwrap().push(spent);
    }
}

impl RetryLimit for RecBudget {
    fn reads_clock(&self) -> bool {
        true
    }

    fn call_started(&self, now: Instant) {
        self.inner.call_started(now);
        self.push(Spent::CallStarted(now));
    }

    fn failed(&self) {
        self.inner.failed();
        self.push(Spent::Failed);
    }

    fn try_retry(&self, now: Instant) -> bool {
        let allowed = self.inner.try_retry(now);
        self.push(Spent::TryRetry(now, allowed));
        allowed
    }

    fn succeeded(&self) {
        self.inner.succeeded();
        self.push(Spent::Succeeded);
    }

    fn unsent(&self, allowed_at: Instant) {
        self.inner.unsent(allowed_at);
        self.push(Spent::Unsent(allowed_at));
    }
}

/// How many times the call deposited and how many retries it kept
/// taken (allowed, not given back), and checks that every retry given
/// back was allowed first, once. The loop gives a retry back with the
/// call's start (`Charged`: allowed "at or after" it), not the instant
/// `try_retry` allowed it: it is matched with the last retry allowed since.
pub(super) fn deposits(log: &[Spent]) -> (usize, usize) {
    let mut allowed: Vec<Instant> = Vec::new();
    for spent in log {
        match spent {
            Spent::TryRetry(at, true) => allowed.push(*at),
            Spent::Unsent(at) => {
                let index = allowed
                    .iter()
                    .rposition(|allowed_at| allowed_at >= at)
                    .unwrap_or_else(|| panic!("a retry given back that was never allowed: {log:?}"));
                allowed.remove(index);
            }
            _ => {}
        }
    }
    let deposits = log
        .iter()
        .filter(|spent| matches!(spent, Spent::CallStarted(_)))
        .count();
    (deposits, allowed.len())
}

/// Tells `into` what the call should have left behind: all of it, but a
/// retry allowed and never sent (neither taken nor given back).
pub(super) fn replay_budget(log: &[Spent], into: &dyn RetryLimit) {
    let mut skip = vec![false; log.len()];
    for (index, spent) in log.iter().enumerate() {
        if let Spent::Unsent(at) = spent {
            skip[index] = true;
            let allowed = (0..index)
                .rev()
                .find(|&earlier| {
                    !skip[earlier] && matches!(log[earlier], Spent::TryRetry(allowed_at, true) if allowed_at >= *at)
                })
                .expect("checked by deposits");
            skip[allowed] = true;
        }
    }
    for (spent, _) in log.iter().zip(skip).filter(|(_, skip)| !skip) {
        match *spent {
            Spent::CallStarted(at) => into.call_started(at),
            Spent::Failed => into.failed(),
            Spent::TryRetry(at, _) => {
                let _ = into.try_retry(at);
            }
            Spent::Succeeded => into.succeeded(),
            Spent::Unsent(_) => unreachable!("skipped"),
        }
    }
}

/// The limiters of the sweep.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    Budget,
    Throttle,
    Adaptive,
    AdaptiveThrottle,
    Breaker,
    KeyedBreaker,
    Cooldown,
    Bulkhead,
}

impl Kind {
    pub(super) const ALL: [Kind; 8] = [
        Kind::Budget,
        Kind::Throttle,
        Kind::Adaptive,
        Kind::AdaptiveThrottle,
        Kind::Breaker,
        Kind::KeyedBreaker,
        Kind::Cooldown,
        Kind::Bulkhead,
    ];

    pub(super) fn ideal(self) -> Ideal {
        match self {
            Kind::Adaptive => Ideal::KeepCost,
            _ => Ideal::Forget,
        }
    }
}

/// The break of the breakers, the cooldown's hint: a few milliseconds.
pub(super) const BREAK: Duration = Duration::from_millis(5);

fn breaker() -> CircuitBreaker {
    CircuitBreaker::new()
        .consecutive_failures(1)
        .break_duration(BREAK)
        .probes(1)
}

/// One side of a case: the limiter under test behind its recorders.
pub(super) struct Env {
    pub rec: Arc<Rec>,
    pub budget: Arc<RecBudget>,
}

impl Env {
    /// A fresh limiter of `kind`, brought at `now` to where cancelling
    /// matters: a breaker open for `BREAK` (half-open after it), a
    /// cooldown for `BREAK`, an adaptive rate limiter throttled (its
    /// callers wait in line), an SRE throttle that accepted a lot (it
    /// admits without drawing).
    pub(super) fn new(kind: Kind, now: Instant) -> Self {
        let admission: Arc<dyn Inspect> = match kind {
            Kind::Budget | Kind::Throttle => Arc::new(Open),
            Kind::Adaptive => {
                let limiter = AdaptiveRateLimiter::new().cost(0.01).retry_cost(0.01);
                limiter.observed(AttemptEnd::new(now, true));
                Arc::new(limiter)
            }
            Kind::AdaptiveThrottle => {
                let limiter = AdaptiveThrottle::new();
                for _ in 0..50 {
                    limiter.observed(AttemptEnd::new(now, false));
                }
                Arc::new(limiter)
            }
            Kind::Breaker => {
                let limiter = breaker();
                limiter.observed(AttemptEnd::new(now, true));
                Arc::new(limiter)
            }
            Kind::KeyedBreaker => {
                let limiter: Keyed<CircuitBreaker> = Keyed::new(|_| breaker());
                for key in KEYS {
                    limiter.observed(AttemptEnd::new(now, true).with_key(Some(key)));
                }
                Arc::new(limiter)
            }
            Kind::Cooldown => {
                let limiter = Cooldown::new();
                limiter.observed(AttemptEnd::new(now, true).with_hint(BREAK));
                Arc::new(limiter)
            }
            Kind::Bulkhead => Arc::new(Bulkhead::new(2)),
        };
        let budget: Arc<dyn InspectBudget> = match kind {
            Kind::Budget => Arc::new(
                RetryBudget::new()
                    .ratio(0.5)
                    .min_per_second(1)
                    .window(Duration::from_secs(2)),
            ),
            Kind::Throttle => Arc::new(RetryThrottle::new(4, 0.5)),
            _ => Arc::new(Unlimited),
        };
        Env {
            rec: Arc::new(Rec::new(admission)),
            budget: Arc::new(RecBudget::new(budget)),
        }
    }

    pub(super) fn state(&self, now: Instant) -> String {
        format!("{} | {}", self.rec.inner.state(now), self.budget.inner.state(now))
    }
}

/// One attempt of a script.
#[derive(Clone, Copy, Debug)]
pub(super) enum Step {
    /// Answers a success after this many milliseconds.
    Ok(u64),
    /// Answers a retryable failure after this many milliseconds.
    Fail(u64),
    /// Panics after this many milliseconds.
    Panic(u64),
}

/// The body of one call: its attempts in order (the last repeated).
pub(super) struct Script {
    steps: Vec<Step>,
    started: AtomicU32,
    answered: AtomicU32,
}

/// What a scripted attempt answers: its number, or a retryable failure.
pub(super) type Answer = Result<u32, Failure>;

/// A scripted attempt's failure, or the limiter's refusal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Failure {
    Unavailable,
    Refused,
}

impl From<backoff_runtime::limits::Refused> for Failure {
    fn from(_: backoff_runtime::limits::Refused) -> Self {
        Failure::Refused
    }
}

impl Script {
    pub(super) fn new(steps: &[Step]) -> Arc<Self> {
        Arc::new(Script {
            steps: steps.to_vec(),
            started: AtomicU32::new(0),
            answered: AtomicU32::new(0),
        })
    }

    /// The attempts started, and answered.
    pub(super) fn counts(&self) -> (u32, u32) {
        (
            self.started.load(Ordering::SeqCst),
            self.answered.load(Ordering::SeqCst),
        )
    }

    /// The next attempt's step, counted as started.
    pub(super) fn start(&self) -> (u32, Step) {
        let index = self.started.fetch_add(1, Ordering::SeqCst);
        let at = (index as usize).min(self.steps.len() - 1);
        (index + 1, self.steps[at])
    }

    /// Runs the next attempt on tokio's clock.
    pub(super) async fn attempt(&self) -> Answer {
        let (number, step) = self.start();
        let (Step::Ok(ms) | Step::Fail(ms) | Step::Panic(ms)) = step;
        if ms > 0 {
            tokio::time::sleep(Duration::from_millis(ms)).await;
        }
        self.answer(number, step)
    }

    /// What attempt `number` of `step` answers, counted.
    pub(super) fn answer(&self, number: u32, step: Step) -> Answer {
        match step {
            Step::Ok(_) => {
                self.answered.fetch_add(1, Ordering::SeqCst);
                Ok(number)
            }
            Step::Fail(_) => {
                self.answered.fetch_add(1, Ordering::SeqCst);
                Err(Failure::Unavailable)
            }
            Step::Panic(_) => panic!("the scripted body panicked"),
        }
    }
}

/// A call through a front end, boxed: what it answered, as one word.
pub(super) type Call = Pin<Box<dyn Future<Output = String> + Send>>;

/// Polls `call` once with the task's waker, then waits until it is woken
/// (tokio's paused clock jumps to the next timer): `Some` when it answered.
pub(super) async fn step(call: &mut Call) -> Option<String> {
    let mut polled = false;
    let stepped = std::future::poll_fn(|cx: &mut Context<'_>| {
        if polled {
            return Poll::Ready(None);
        }
        polled = true;
        match call.as_mut().poll(cx) {
            Poll::Ready(answer) => Poll::Ready(Some(answer)),
            Poll::Pending => Poll::Pending,
        }
    });
    tokio::time::timeout(Duration::from_secs(60), stepped)
        .await
        .expect("a call that waits on nothing")
}

/// Runs `call` to its answer: the answer, and how many polls it took.
pub(super) async fn run(mut call: Call) -> (String, usize) {
    for polls in 1.. {
        if let Some(answer) = step(&mut call).await {
            return (answer, polls);
        }
    }
    unreachable!()
}

/// Runs two calls side by side on the same clock, polled in step: each
/// one's answer, and when it came (from the start).
pub(super) async fn side_by_side(mut a: Call, mut b: Call) -> ((String, Duration), (String, Duration)) {
    let start = tokio::time::Instant::now();
    let (mut done_a, mut done_b) = (None, None);
    while done_a.is_none() || done_b.is_none() {
        let mut polled = false;
        std::future::poll_fn(|cx: &mut Context<'_>| {
            if polled {
                return Poll::Ready(());
            }
            polled = true;
            if done_a.is_none()
                && let Poll::Ready(answer) = a.as_mut().poll(cx)
            {
                done_a = Some((answer, start.elapsed()));
            }
            if done_b.is_none()
                && let Poll::Ready(answer) = b.as_mut().poll(cx)
            {
                done_b = Some((answer, start.elapsed()));
            }
            if done_a.is_some() && done_b.is_some() {
                Poll::Ready(())
            } else {
                Poll::Pending
            }
        })
        .await;
    }
    (done_a.unwrap(), done_b.unwrap())
}
