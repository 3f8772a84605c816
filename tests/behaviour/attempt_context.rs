//! `context = attempt`: the attempt number, the retries left, the time
//! elapsed and left, and the invocation id, inside the body; and the plain
//! builder's `retry_with_attempt`.

use std::cell::RefCell;
use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::get;
use backoff_runtime::{Attempt, InvocationId, Policy, retry};

/// What one attempt saw of itself.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Seen {
    number: u32,
    retries_left: u32,
    elapsed: Duration,
    time_left: Option<Duration>,
}

impl Seen {
    fn of(attempt: Attempt) -> Self {
        Seen {
            number: attempt.number(),
            retries_left: attempt.retries_left(),
            elapsed: attempt.elapsed(),
            time_left: attempt.time_left(),
        }
    }
}

fn seen(number: u32, retries_left: u32, elapsed_secs: u64, time_left_secs: Option<u64>) -> Seen {
    Seen {
        number,
        retries_left,
        elapsed: Duration::from_secs(elapsed_secs),
        time_left: time_left_secs.map(Duration::from_secs),
    }
}

#[retry(max_retries = 3, jitter = none, max_elapsed = "10s", context = attempt)]
async fn with_deadline(log: &Mutex<Vec<Seen>>) -> Result<(), &'static str> {
    log.lock().unwrap().push(Seen::of(attempt));
    Err("down")
}

/// Waits 1 s, 2 s, 4 s on the paused clock: attempts start at 0, 1, 3 and 7
/// seconds; the time left is what `max_elapsed` leaves of 10 s.
#[tokio::test(start_paused = true)]
async fn the_body_sees_its_number_the_retries_left_and_the_time_left() {
    let log = Mutex::new(Vec::new());
    assert_eq!(with_deadline(&log).await, Err("down"));
    assert_eq!(
        log.into_inner().unwrap(),
        [
            seen(1, 3, 0, Some(10)),
            seen(2, 2, 1, Some(9)),
            seen(3, 1, 3, Some(7)),
            seen(4, 0, 7, Some(3)),
        ]
    );
}

#[retry(max_retries = 2, jitter = none, context = attempt)]
async fn without_deadline(log: &Mutex<Vec<Seen>>) -> Result<(), &'static str> {
    log.lock().unwrap().push(Seen::of(attempt));
    Err("down")
}

#[tokio::test(start_paused = true)]
async fn without_max_elapsed_there_is_no_time_left_or_deadline() {
    let log = Mutex::new(Vec::new());
    let _ = without_deadline(&log).await;
    assert_eq!(
        log.into_inner().unwrap(),
        [seen(1, 2, 0, None), seen(2, 1, 1, None), seen(3, 0, 3, None)]
    );
}

#[retry(max_retries = 4, initial_backoff = "1ms", max_backoff = "2ms", context = attempt)]
fn sync_ids(ids: &RefCell<Vec<(u32, InvocationId)>>, fail_until: u32) -> Result<u32, ()> {
    ids.borrow_mut().push((attempt.number(), attempt.invocation_id()));
    if attempt.number() < fail_until {
        Err(())
    } else {
        Ok(attempt.number())
    }
}

/// One id per call, shared by its attempts; a new one for each call.
#[test]
fn each_call_has_one_invocation_id_for_all_its_attempts() {
    let ids = RefCell::new(Vec::new());
    assert_eq!(sync_ids(&ids, 3), Ok(3));
    assert_eq!(sync_ids(&ids, 1), Ok(1));
    assert_eq!(sync_ids(&ids, 2), Ok(2));
    let ids = ids.into_inner();
    let numbers: Vec<u32> = ids.iter().map(|(n, _)| *n).collect();
    assert_eq!(numbers, [1, 2, 3, 1, 1, 2]);
    assert!(ids[0].1 == ids[1].1 && ids[1].1 == ids[2].1);
    assert!(ids[4].1 == ids[5].1);
    let distinct: HashSet<InvocationId> = ids.iter().map(|(_, id)| *id).collect();
    assert_eq!(distinct.len(), 3);
}

/// A sync function with `max_elapsed`: the time left shrinks by what the
/// virtual clock advanced.
#[test]
fn a_sync_body_sees_the_time_left_on_the_virtual_clock() {
    #[retry(max_retries = 2, jitter = none, max_elapsed = "5s", context = attempt)]
    fn sync_deadline(log: &RefCell<Vec<Seen>>) -> Result<(), ()> {
        log.borrow_mut().push(Seen::of(attempt));
        Err(())
    }
    let clock = backoff_runtime::testing::VirtualClock::install();
    let log = RefCell::new(Vec::new());
    let _ = sync_deadline(&log);
    drop(clock);
    assert_eq!(
        log.into_inner(),
        [seen(1, 2, 0, Some(5)), seen(2, 1, 1, Some(4)), seen(3, 0, 3, Some(2))]
    );
}

struct Counter {
    attempts: Vec<u32>,
}

impl Counter {
    #[retry(max_retries = 2, jitter = none, context = try_no)]
    async fn bump(&mut self) -> Result<u32, &'static str> {
        self.attempts.push(try_no.number());
        if try_no.number() < 3 {
            Err("busy")
        } else {
            Ok(try_no.number())
        }
    }
}

#[tokio::test(start_paused = true)]
async fn a_mut_self_method_names_its_context_as_it_likes() {
    let mut counter = Counter { attempts: Vec::new() };
    assert_eq!(counter.bump().await, Ok(3));
    assert_eq!(counter.attempts, [1, 2, 3]);
}

#[test]
fn the_plain_builder_passes_the_attempt_to_the_operation() {
    let mut seen = Vec::new();
    let result = Policy::new()
        .max_retries(3)
        .initial_backoff(Duration::from_millis(1))
        .retry_with_attempt(|attempt: Attempt| {
            seen.push((attempt.number(), attempt.retries_left(), attempt.invocation_id()));
            if attempt.number() < 3 {
                Err("busy")
            } else {
                Ok(attempt.number())
            }
        })
        .call();
    assert_eq!(result, Ok(3));
    let numbers: Vec<(u32, u32)> = seen.iter().map(|(n, left, _)| (*n, *left)).collect();
    assert_eq!(numbers, [(1, 3), (2, 2), (3, 1)]);
    assert!(seen.iter().all(|(_, _, id)| *id == seen[0].2));
}

#[tokio::test(start_paused = true)]
async fn the_plain_builder_passes_the_attempt_to_an_async_operation() {
    let log = Mutex::new(Vec::new());
    let result = Policy::new()
        .max_retries(3)
        .jitter(backoff_runtime::Jitter::None)
        .max_elapsed(Duration::from_secs(10))
        .retry_with_attempt(|attempt: Attempt| {
            log.lock().unwrap().push(Seen::of(attempt));
            async move { if attempt.number() < 3 { Err("busy") } else { Ok(()) } }
        })
        .await;
    assert_eq!(result, Ok(()));
    assert_eq!(
        log.into_inner().unwrap(),
        [seen(1, 3, 0, Some(10)), seen(2, 2, 1, Some(9)), seen(3, 1, 3, Some(7))]
    );
}

/// The headers a server saw: (attempt count, invocation id) per request.
#[derive(Clone, Default)]
struct Recorder {
    requests: Arc<Mutex<Vec<(u32, String)>>>,
}

/// Fails the first two attempts of every invocation with 503.
async fn flaky(State(recorder): State<Recorder>, headers: HeaderMap) -> StatusCode {
    let attempt: u32 = headers["x-attempt"].to_str().unwrap().parse().unwrap();
    let invocation = headers["x-invocation-id"].to_str().unwrap().to_string();
    recorder.requests.lock().unwrap().push((attempt, invocation));
    if attempt < 3 {
        StatusCode::SERVICE_UNAVAILABLE
    } else {
        StatusCode::OK
    }
}

#[retry(max_retries = 5, initial_backoff = "1ms", max_backoff = "4ms", context = attempt)]
async fn call_with_headers(client: &reqwest::Client, url: &str) -> Result<(), String> {
    let response = client
        .get(url)
        .header("x-attempt", attempt.number().to_string())
        .header("x-invocation-id", attempt.invocation_id().to_string())
        .send()
        .await
        .map_err(|e| e.to_string())?;
    if response.status().is_success() {
        Ok(())
    } else {
        Err(response.status().to_string())
    }
}

/// A loopback server records the attempt header and the invocation-id header
/// of every request of three calls: 1, 2, 3 under one id per call, and three
/// ids.
#[tokio::test]
async fn a_server_tells_the_retries_of_a_call_apart_from_new_calls() {
    let recorder = Recorder::default();
    let app = Router::new().route("/", get(flaky)).with_state(recorder.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });

    let client = reqwest::Client::new();
    for _ in 0..3 {
        call_with_headers(&client, &url).await.unwrap();
    }
    let requests = recorder.requests.lock().unwrap().clone();
    assert_eq!(requests.len(), 9);
    for call in requests.chunks(3) {
        let attempts: Vec<u32> = call.iter().map(|(n, _)| *n).collect();
        assert_eq!(attempts, [1, 2, 3]);
        assert!(call.iter().all(|(_, id)| *id == call[0].1), "{call:?}");
        assert_eq!(call[0].1.len(), 36);
    }
    let ids: HashSet<&String> = requests.iter().map(|(_, id)| id).collect();
    assert_eq!(ids.len(), 3);
}

#[async_trait::async_trait]
trait Fetch {
    async fn fetch(&self, log: &Mutex<Vec<u32>>) -> Result<u32, String>;
}

struct Remote;

#[async_trait::async_trait]
impl Fetch for Remote {
    #[retry(max_retries = 3, jitter = none, context = attempt)]
    async fn fetch(&self, log: &Mutex<Vec<u32>>) -> Result<u32, String> {
        log.lock().unwrap().push(attempt.number());
        if attempt.number() < 2 {
            Err("busy".into())
        } else {
            Ok(attempt.number())
        }
    }
}

/// Under `#[async_trait]` the context is bound inside its boxed block.
#[tokio::test(start_paused = true)]
async fn the_context_works_under_async_trait() {
    let log = Mutex::new(Vec::new());
    assert_eq!(Remote.fetch(&log).await, Ok(2));
    assert_eq!(log.into_inner().unwrap(), [1, 2]);
}

/// What one attempt saw: first or not, the deadline, the id's bits and its
/// debug form.
type Facts = (bool, Option<std::time::Instant>, Option<Duration>, u128, String, String);

#[retry(max_retries = 1, jitter = none, max_elapsed = "10s", context = attempt)]
fn facts(log: &RefCell<Vec<Facts>>) -> Result<(), ()> {
    let id = attempt.invocation_id();
    log.borrow_mut().push((
        attempt.is_first(),
        attempt.deadline(),
        attempt.time_left(),
        id.as_u128(),
        format!("{id:?}"),
        id.to_string(),
    ));
    Err(())
}

/// `is_first` only for the first attempt; one deadline for the call, 10 s
/// after its start; the id's bits are what its text shows.
#[test]
fn the_attempt_knows_if_it_is_first_its_deadline_and_its_id() {
    let _clock = backoff_runtime::testing::VirtualClock::install();
    let log = RefCell::new(Vec::new());
    assert!(facts(&log).is_err());
    let log = log.into_inner();
    assert_eq!(log.iter().map(|f| f.0).collect::<Vec<_>>(), [true, false]);
    let deadline = log[0].1.expect("a deadline under max_elapsed");
    assert_eq!(log[1].1, Some(deadline));
    assert_eq!(log[0].2, Some(Duration::from_secs(10)));
    for (_, _, _, bits, debug, text) in &log {
        assert_eq!(format!("{bits:032x}"), text.replace('-', ""));
        assert_eq!(*debug, format!("InvocationId({text})"));
        assert_ne!(*bits, 0);
    }
}

#[retry(max_retries = 1, initial_backoff = "1ms", context = attempt)]
fn read_id(ids: &RefCell<Vec<InvocationId>>) -> Result<(), ()> {
    ids.borrow_mut().push(attempt.invocation_id());
    Ok(())
}

/// Ids come from the secure generator, not the jitter's: reseeding the
/// jitter generator with the same seed repeats the waits but not the ids.
#[test]
fn reseeding_the_jitter_generator_changes_no_invocation_id() {
    use backoff_runtime::testing::seed_thread_rng;

    let ids = RefCell::new(Vec::new());
    let mut waits = Vec::new();
    for _ in 0..2 {
        seed_thread_rng(42);
        read_id(&ids).unwrap();
        let _ = InvocationId::new();
        waits.push(Policy::new().schedule().collect::<Vec<_>>());
    }
    // The seed still fixes the jitter, and neither the call nor the id in
    // between drew from the jitter's generator.
    assert_eq!(waits[0], waits[1]);
    let ids = ids.into_inner();
    assert_ne!(ids[0], ids[1]);
}

/// A call that reads its id leaves the jitter's stream where it was: the
/// waits after it are those of a thread that made no call.
#[test]
fn reading_an_id_draws_nothing_from_the_jitter_generator() {
    use backoff_runtime::testing::seed_thread_rng;

    seed_thread_rng(7);
    let alone: Vec<Duration> = Policy::new().schedule().collect();
    seed_thread_rng(7);
    let ids = RefCell::new(Vec::new());
    read_id(&ids).unwrap();
    let after_a_call: Vec<Duration> = Policy::new().schedule().collect();
    assert_eq!(alone, after_a_call);
}

/// An attempt handed to another thread reports the same id there: the id
/// follows from the call, not from the thread that reads it.
#[test]
fn an_attempt_reports_the_same_id_on_every_thread() {
    let result = Policy::new()
        .max_retries(2)
        .initial_backoff(Duration::from_millis(1))
        .retry_with_attempt(|attempt: Attempt| {
            let here = attempt.invocation_id();
            let there = std::thread::scope(|s| s.spawn(move || attempt.invocation_id()).join().unwrap());
            if attempt.number() < 2 {
                Err(())
            } else {
                Ok((here, there))
            }
        })
        .call();
    let (here, there) = result.unwrap();
    assert_eq!(here, there);
}

/// 4,000 ids from four threads: all distinct, all version 4 with the RFC
/// variant, and each of the 122 random bits set in about half of them (a
/// counter, a timestamp or a per-thread prefix would leave bits constant).
#[test]
fn ids_are_distinct_v4_uuids_whose_random_bits_are_balanced() {
    let ids: Vec<InvocationId> = std::thread::scope(|s| {
        let threads: Vec<_> = (0..4)
            .map(|_| s.spawn(|| (0..1000).map(|_| InvocationId::new()).collect::<Vec<_>>()))
            .collect();
        threads.into_iter().flat_map(|t| t.join().unwrap()).collect()
    });
    let distinct: HashSet<InvocationId> = ids.iter().copied().collect();
    assert_eq!(distinct.len(), ids.len());
    let fixed: u128 = (0xF << 76) | (0b11 << 62);
    for id in &ids {
        let text = id.to_string();
        assert_eq!(&text[14..15], "4", "{text}");
        assert!(matches!(&text[19..20], "8" | "9" | "a" | "b"), "{text}");
    }
    for bit in (0..128).filter(|bit| fixed & (1 << bit) == 0) {
        let set = ids.iter().filter(|id| id.as_u128() & (1 << bit) != 0).count();
        // Binomial(4000, 1/2): 1,750..2,250 is 7.9 standard deviations wide.
        assert!(
            (1750..=2250).contains(&set),
            "bit {bit} set in {set} of {} ids",
            ids.len()
        );
    }
}
