//! The sweep itself: one test per front end and limiter, each running
//! every cancellation mode that front end has.

use std::sync::Arc;
use std::time::{Duration, Instant};

use backoff_runtime::retry;
use backoff_runtime::testing::VirtualClock;

use super::fronts::{FAIL_THEN_OK, Front, POLICY, SLOW_THEN_FAST, retryable};
use super::support::{
    Answer, BREAK, Env, Heard, Kind, Open, Rec, RecBudget, Script, Step, Tally, deposits, exactly_once, replay,
    replay_budget, run, side_by_side, step,
};

/// Now on tokio's paused clock, as the loops read it.
fn now() -> Instant {
    tokio::time::Instant::now().into_std()
}

/// How long the limiters age before the call: a breaker's break (the call
/// is its half-open probe); nothing for the others (the cooldown's and
/// the adaptive limiter's callers wait).
fn settle(kind: Kind) -> Duration {
    match kind {
        Kind::Breaker | Kind::KeyedBreaker => BREAK,
        _ => Duration::ZERO,
    }
}

/// How a case ends its call.
#[derive(Clone, Copy, Debug)]
enum Mode {
    /// Dropped after this many polls (0: never polled), unless it
    /// answered first.
    DropAfter(usize),
    /// Spawned, its body panics; the task's panic is joined.
    Panics,
}

/// What a case saw of its call on limiter A.
struct Seen {
    tally: Tally,
    answer: Option<String>,
}

/// One case: the call of `steps` through `front` on limiter A, ended as
/// `mode`; B told what it should have left; then the same fresh call on
/// both, side by side.
async fn case(front: Front, kind: Kind, steps: &[Step], mode: Mode) -> Seen {
    let what = format!("{front:?} × {kind:?}, {mode:?}");
    let start = now();
    let (a, b) = (Env::new(kind, start), Env::new(kind, start));
    tokio::time::sleep(settle(kind)).await;

    let script = Script::new(steps);
    let mut call = front.call(&a, Arc::clone(&script));
    let mut answer = None;
    let mut answer_refused = false;
    match mode {
        Mode::DropAfter(polls) => {
            for _ in 0..polls {
                if let Some(answered) = step(&mut call).await {
                    answer = Some(answered);
                    break;
                }
            }
            drop(call);
        }
        Mode::Panics => match tokio::spawn(call).await {
            Err(joined) => assert!(joined.is_panic(), "{what}: the panic reaches the caller"),
            // A breaker the failure before the panic opened refuses the
            // retry: the body never runs again.
            Ok(answer) => {
                assert!(matches!(kind, Kind::Breaker | Kind::KeyedBreaker), "{what}: {answer:?}");
                answer_refused = true;
            }
        },
    }

    // Exactly once: every admitted attempt heard, every waiter withdrawn.
    let heard = a.rec.take();
    let tally = exactly_once(&heard);
    if let Mode::Panics = mode
        && !answer_refused
    {
        assert_eq!(
            tally.panicked, 1,
            "{what}: the panicking attempt is heard as panicked: {heard:#?}"
        );
    }
    // The budget: a deposit once the call was sent, a refund of each retry
    // never sent.
    let spent = a.budget.take();
    let (started, answered) = script.counts();
    // Sent: an attempt answered, or a hedge asked the budget (the first
    // attempt was then on its way).
    let hedge_asked = spent
        .iter()
        .any(|spent| matches!(spent, super::support::Spent::TryRetry(..)));
    let sent = answered > 0 || (front.hedges() && hedge_asked);
    let (deposited, kept) = deposits(&spent);
    assert_eq!(
        deposited,
        usize::from(sent),
        "{what}: {started} attempts started, {answered} answered: {spent:?}"
    );
    // Every retry (or hedge) the budget allowed was sent, or given back.
    assert_eq!(
        kept,
        started.saturating_sub(1) as usize,
        "{what}: {started} attempts started: {spent:?}"
    );

    // B: what the call should have left behind.
    replay(&heard, &*b.rec.inner, kind.ideal());
    replay_budget(&spent, &*b.budget.inner);
    let comparable = !(matches!(kind, Kind::Adaptive | Kind::AdaptiveThrottle) && tally.panicked > 0);
    if comparable {
        let at = now();
        assert_eq!(
            a.state(at),
            b.state(at),
            "{what}: the limiter after the call: {heard:#?} {spent:?}"
        );
    }

    // A fresh call on each, side by side.
    let (probe_a, probe_b) = (Script::new(FAIL_THEN_OK), Script::new(FAIL_THEN_OK));
    let calls = side_by_side(
        front.call(&a, Arc::clone(&probe_a)),
        front.call(&b, Arc::clone(&probe_b)),
    );
    let ((answer_a, took_a), (answer_b, took_b)) = tokio::time::timeout(Duration::from_secs(60), calls)
        .await
        .expect("the fresh calls answer");
    let _ = exactly_once(&a.rec.take());
    let _ = exactly_once(&b.rec.take());
    let _ = (a.budget.take(), b.budget.take());
    if comparable {
        assert_eq!(
            (&answer_a, probe_a.counts()),
            (&answer_b, probe_b.counts()),
            "{what}: a fresh call after it, against one on a limiter that only heard what it finished: {heard:#?}"
        );
        if front.exact_waits() {
            assert_eq!(took_a, took_b, "{what}: the fresh call's wait");
        }
        // A6's drawn backoff moves the adaptive limiter's refill.
        if front.exact_waits() || kind != Kind::Adaptive {
            let at = now();
            assert_eq!(a.state(at), b.state(at), "{what}: the limiter after the fresh call");
        }
    }
    Seen { tally, answer }
}

/// How many polls `steps` takes to answer through `front` and `kind`.
async fn polls_to_answer(front: Front, kind: Kind, steps: &[Step]) -> usize {
    let env = Env::new(kind, now());
    tokio::time::sleep(settle(kind)).await;
    let (_, polls) = run(front.call(&env, Script::new(steps))).await;
    let _ = exactly_once(&env.rec.take());
    polls
}

/// Every mode of `front` with `kind`.
async fn sweep(front: Front, kind: Kind) {
    // Dropped after k polls, for every k until it answers (k = 0: never
    // polled); the last k is the call that answered.
    let polls = polls_to_answer(front, kind, FAIL_THEN_OK).await;
    assert!(polls > 1, "{front:?} × {kind:?}: the call waits at least once");
    let mut dropped_in_flight = 0;
    for k in 0..=polls {
        let seen = case(front, kind, FAIL_THEN_OK, Mode::DropAfter(k)).await;
        assert_eq!(seen.answer.is_some(), k == polls, "{front:?} × {kind:?}: k = {k}");
        dropped_in_flight += seen.tally.abandoned + seen.tally.withdrawn;
    }
    assert!(
        dropped_in_flight > 0,
        "{front:?} × {kind:?}: some case dropped an attempt in flight"
    );
    // The body panics: at the first attempt, or at the retry.
    for steps in [&[Step::Panic(0)][..], &[Step::Fail(1), Step::Panic(1)]] {
        case(front, kind, steps, Mode::Panics).await;
    }
    // The losing hedge: the first attempt is slow, the hedge answers first,
    // and the first is cancelled; and that call dropped at every k.
    if front.hedges() {
        let polls = polls_to_answer(front, kind, SLOW_THEN_FAST).await;
        for k in 0..=polls {
            let seen = case(front, kind, SLOW_THEN_FAST, Mode::DropAfter(k)).await;
            // (A pacing limiter may hold the hedge back: then none lost.)
            let hedged = seen.tally.admitted >= 2;
            if k == polls && hedged && seen.answer.as_deref().is_some_and(|answer| answer.starts_with("ok")) {
                assert!(
                    seen.tally.abandoned >= 1,
                    "{front:?} × {kind:?}: the losing hedge is heard as abandoned"
                );
            }
        }
    }
}

macro_rules! sweeps {
    ($($name:ident: $front:ident, $kind:ident;)*) => {$(
        #[tokio::test(start_paused = true)]
        async fn $name() {
            sweep(Front::$front, Kind::$kind).await;
        }
    )*};
}

sweeps! {
    attribute_budget: Attribute, Budget;
    attribute_throttle: Attribute, Throttle;
    attribute_cooldown: Attribute, Cooldown;
    attribute_bulkhead: Attribute, Bulkhead;
    attribute_hedged_budget: AttributeHedged, Budget;
    attribute_hedged_throttle: AttributeHedged, Throttle;
    attribute_hedged_cooldown: AttributeHedged, Cooldown;
    attribute_hedged_bulkhead: AttributeHedged, Bulkhead;
    builder_budget: Builder, Budget;
    builder_throttle: Builder, Throttle;
    builder_cooldown: Builder, Cooldown;
    builder_bulkhead: Builder, Bulkhead;
    builder_hedged_budget: BuilderHedged, Budget;
    builder_hedged_throttle: BuilderHedged, Throttle;
    builder_hedged_cooldown: BuilderHedged, Cooldown;
    builder_hedged_bulkhead: BuilderHedged, Bulkhead;
    tower_budget: Tower, Budget;
    tower_throttle: Tower, Throttle;
    tower_cooldown: Tower, Cooldown;
    tower_bulkhead: Tower, Bulkhead;
    tower_hedged_budget: TowerHedged, Budget;
    tower_hedged_throttle: TowerHedged, Throttle;
    tower_hedged_cooldown: TowerHedged, Cooldown;
    tower_hedged_bulkhead: TowerHedged, Bulkhead;
    streaming_budget: Streaming, Budget;
    streaming_throttle: Streaming, Throttle;
    streaming_cooldown: Streaming, Cooldown;
    streaming_bulkhead: Streaming, Bulkhead;
    reqwest_budget: Reqwest, Budget;
    reqwest_throttle: Reqwest, Throttle;
    reqwest_cooldown: Reqwest, Cooldown;
    reqwest_bulkhead: Reqwest, Bulkhead;
    grpc_budget: Grpc, Budget;
    grpc_throttle: Grpc, Throttle;
    grpc_cooldown: Grpc, Cooldown;
    grpc_bulkhead: Grpc, Bulkhead;
    grpc_hedged_budget: GrpcHedged, Budget;
    grpc_hedged_throttle: GrpcHedged, Throttle;
    grpc_hedged_cooldown: GrpcHedged, Cooldown;
    grpc_hedged_bulkhead: GrpcHedged, Bulkhead;
}

// The breaker: an abandoned probe frees its slot, a panic is a failure.
sweeps! {
    attribute_breaker: Attribute, Breaker;
    attribute_keyed_breaker: Attribute, KeyedBreaker;
    attribute_hedged_breaker: AttributeHedged, Breaker;
    attribute_hedged_keyed_breaker: AttributeHedged, KeyedBreaker;
    builder_breaker: Builder, Breaker;
    builder_keyed_breaker: Builder, KeyedBreaker;
    builder_hedged_breaker: BuilderHedged, Breaker;
    builder_hedged_keyed_breaker: BuilderHedged, KeyedBreaker;
    tower_breaker: Tower, Breaker;
    tower_keyed_breaker: Tower, KeyedBreaker;
    tower_hedged_breaker: TowerHedged, Breaker;
    tower_hedged_keyed_breaker: TowerHedged, KeyedBreaker;
    streaming_breaker: Streaming, Breaker;
    streaming_keyed_breaker: Streaming, KeyedBreaker;
    reqwest_breaker: Reqwest, Breaker;
    reqwest_keyed_breaker: Reqwest, KeyedBreaker;
    grpc_breaker: Grpc, Breaker;
    grpc_keyed_breaker: Grpc, KeyedBreaker;
    grpc_hedged_breaker: GrpcHedged, Breaker;
    grpc_hedged_keyed_breaker: GrpcHedged, KeyedBreaker;
}

// The adaptive rate limiter (a waiter that left leaves the line, an
// abandoned attempt changes no rate) and the SRE throttle (an attempt that
// never answered counts nothing).
sweeps! {
    attribute_adaptive: Attribute, Adaptive;
    attribute_hedged_adaptive: AttributeHedged, Adaptive;
    builder_adaptive: Builder, Adaptive;
    builder_hedged_adaptive: BuilderHedged, Adaptive;
    tower_adaptive: Tower, Adaptive;
    tower_hedged_adaptive: TowerHedged, Adaptive;
    streaming_adaptive: Streaming, Adaptive;
    reqwest_adaptive: Reqwest, Adaptive;
    grpc_adaptive: Grpc, Adaptive;
    grpc_hedged_adaptive: GrpcHedged, Adaptive;
    attribute_adaptive_throttle: Attribute, AdaptiveThrottle;
    attribute_hedged_adaptive_throttle: AttributeHedged, AdaptiveThrottle;
    builder_adaptive_throttle: Builder, AdaptiveThrottle;
    builder_hedged_adaptive_throttle: BuilderHedged, AdaptiveThrottle;
    tower_adaptive_throttle: Tower, AdaptiveThrottle;
    tower_hedged_adaptive_throttle: TowerHedged, AdaptiveThrottle;
    streaming_adaptive_throttle: Streaming, AdaptiveThrottle;
    reqwest_adaptive_throttle: Reqwest, AdaptiveThrottle;
    grpc_adaptive_throttle: Grpc, AdaptiveThrottle;
    grpc_hedged_adaptive_throttle: GrpcHedged, AdaptiveThrottle;
}

// ---- sync: the attribute and `.call()`, whose body panics ----------------

#[retry(
    max_retries = 2,
    initial_backoff = "2ms",
    jitter = none,
    retry_if = retryable,
    admission = rec,
    budget = budget
)]
fn attribute_sync(script: &Script, rec: &Rec, budget: &RecBudget) -> Answer {
    let (number, step) = script.start();
    script.answer(number, step)
}

fn builder_sync(script: &Script, rec: &Rec, budget: &RecBudget) -> Answer {
    POLICY
        .retry(|| {
            let (number, step) = script.start();
            script.answer(number, step)
        })
        .retry_if(retryable)
        .admission(rec)
        .budget(budget)
        .call()
}

type SyncFront = fn(&Script, &Rec, &RecBudget) -> Answer;

/// Now on the thread's virtual clock, as the sync loop reads it (what an
/// admission limiter is asked with).
fn virtual_now() -> Instant {
    let rec = Rec::new(Arc::new(Open));
    let _ = POLICY
        .retry(|| Ok::<_, super::support::Failure>(()))
        .admission(&rec)
        .call();
    match rec.take().first() {
        Some(Heard::Admit { at, .. }) => *at,
        other => panic!("asked first: {other:?}"),
    }
}

/// A sync call whose body panics, on A; B told what it should have left;
/// then a fresh call on each.
fn sync_case(name: &str, front: SyncFront, kind: Kind, steps: &[Step]) {
    let what = format!("{name} × {kind:?}, {steps:?}");
    let clock = VirtualClock::install();
    let start = virtual_now();
    let (a, b) = (Env::new(kind, start), Env::new(kind, start));
    clock.advance(settle(kind));
    let script = Script::new(steps);
    let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| front(&script, &a.rec, &a.budget)));
    assert!(unwound.is_err(), "{what}: the panic reaches the caller");
    let heard = a.rec.take();
    let tally = exactly_once(&heard);
    assert_eq!(tally.panicked, 1, "{what}: heard as panicked: {heard:#?}");
    let spent = a.budget.take();
    let (started, answered) = script.counts();
    let (deposited, kept) = deposits(&spent);
    assert_eq!(deposited, usize::from(answered > 0), "{what}: {spent:?}");
    assert_eq!(kept, started.saturating_sub(1) as usize, "{what}: {spent:?}");
    replay(&heard, &*b.rec.inner, kind.ideal());
    replay_budget(&spent, &*b.budget.inner);
    if matches!(kind, Kind::Adaptive | Kind::AdaptiveThrottle) {
        return;
    }
    let at = virtual_now();
    assert_eq!(
        a.state(at),
        b.state(at),
        "{what}: the limiter after the call: {heard:#?}"
    );
    let mut fresh = Vec::new();
    for env in [&a, &b] {
        let probe = Script::new(&[Step::Fail(0), Step::Ok(0)]);
        let waits = clock.waits().len();
        let answer = front(&probe, &env.rec, &env.budget);
        let _ = exactly_once(&env.rec.take());
        fresh.push((answer, probe.counts(), clock.waits()[waits..].to_vec()));
    }
    assert_eq!(fresh[0], fresh[1], "{what}: a fresh call after it");
}

fn sync_sweep(kind: Kind) {
    let fronts: [(&str, SyncFront); 2] = [("attribute", attribute_sync), ("builder", builder_sync)];
    // A breaker (one failure opens it) refuses the retry after a failure:
    // its body panics at the first attempt only.
    let breaker = matches!(kind, Kind::Breaker | Kind::KeyedBreaker);
    for (name, front) in fronts {
        for steps in [&[Step::Panic(0)][..], &[Step::Fail(0), Step::Panic(0)]] {
            if breaker && steps.len() > 1 {
                continue;
            }
            sync_case(name, front, kind, steps);
        }
    }
}

#[test]
fn sync_panics_with_every_limiter_but_the_breakers() {
    for kind in Kind::ALL {
        if !matches!(kind, Kind::Breaker | Kind::KeyedBreaker) {
            sync_sweep(kind);
        }
    }
}

/// A panic is a failure for the breaker.
#[test]
fn sync_panics_with_the_breakers() {
    sync_sweep(Kind::Breaker);
    sync_sweep(Kind::KeyedBreaker);
}
