//! The `metrics` feature: a debugging recorder captures every metric of a
//! scripted sequence of calls, and the test checks exact counts and labels.
//! One global recorder for the process (handles are registered once per
//! function), one test function for the whole script (a snapshot drains the
//! histograms).

use std::collections::BTreeMap;
use std::time::Duration;

use backoff_runtime::limits::RetryBudget;
use backoff_runtime::{Policy, retry};
use metrics_util::debugging::{DebugValue, DebuggingRecorder};
use metrics_util::{CompositeKey, MetricKind};

#[derive(Debug, PartialEq)]
enum ApiError {
    Busy,
    Denied,
    Throttled(Duration),
}

fn hint(error: &ApiError) -> Option<Duration> {
    match error {
        ApiError::Throttled(wait) => Some(*wait),
        _ => None,
    }
}

/// Fails while `*failures > 0` (counting down), with `error`.
fn attempt(failures: &mut u32, error: impl Fn() -> ApiError) -> Result<u32, ApiError> {
    if *failures > 0 {
        *failures -= 1;
        Err(error())
    } else {
        Ok(7)
    }
}

#[retry(max_retries = 2, jitter = none, initial_backoff = "1s")]
fn metered(failures: &mut u32) -> Result<u32, ApiError> {
    attempt(failures, || ApiError::Busy)
}

#[retry(max_retries = 3, jitter = none, retry_after = hint, retry_if = |e| *e != ApiError::Denied)]
fn hinted(failures: &mut u32, denied: bool) -> Result<u32, ApiError> {
    if denied {
        return Err(ApiError::Denied);
    }
    attempt(failures, || ApiError::Throttled(Duration::from_millis(250)))
}

static TIGHT: RetryBudget = RetryBudget::new().ratio(0.0).min_per_second(0).name("tight");

#[retry(max_retries = 3, jitter = none, budget = TIGHT)]
fn budgeted() -> Result<u32, ApiError> {
    Err(ApiError::Busy)
}

static ROOMY: RetryBudget = RetryBudget::new().ratio(0.0).min_per_second(1).name("roomy");

#[retry(max_retries = 3, jitter = none, budget = ROOMY)]
fn roomy(failures: &mut u32) -> Result<u32, ApiError> {
    attempt(failures, || ApiError::Busy)
}

#[retry(max_retries = 5, jitter = none, retry_if_ok = |v: &u32| *v < 3)]
async fn polled(counter: &std::sync::atomic::AtomicU32) -> Result<u32, ApiError> {
    Ok(counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1)
}

/// A metric's identity in the snapshot: kind, name and labels.
type Series = (MetricKind, String, BTreeMap<String, String>);

fn series(key: &CompositeKey) -> Series {
    let labels = key
        .key()
        .labels()
        .map(|label| (label.key().to_string(), label.value().to_string()))
        .collect();
    (key.kind(), key.key().name().to_string(), labels)
}

fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

/// The value of one series, which must exist.
fn value<'a>(
    snapshot: &'a BTreeMap<Series, DebugValue>,
    kind: MetricKind,
    name: &str,
    pairs: &[(&str, &str)],
) -> &'a DebugValue {
    let key = (kind, name.to_string(), labels(pairs));
    snapshot
        .get(&key)
        .unwrap_or_else(|| panic!("no series {key:?} in {:#?}", snapshot.keys()))
}

/// A counter's value; 0 when it was never recorded (series are registered
/// with the recorder at their first record).
fn counter(snapshot: &BTreeMap<Series, DebugValue>, name: &str, pairs: &[(&str, &str)]) -> u64 {
    let key = (MetricKind::Counter, name.to_string(), labels(pairs));
    match snapshot.get(&key) {
        None => 0,
        Some(DebugValue::Counter(n)) => *n,
        Some(other) => panic!("{name} is not a counter: {other:?}"),
    }
}

fn histogram(snapshot: &BTreeMap<Series, DebugValue>, name: &str, pairs: &[(&str, &str)]) -> Vec<f64> {
    match value(snapshot, MetricKind::Histogram, name, pairs) {
        DebugValue::Histogram(values) => values.iter().map(|v| v.into_inner()).collect(),
        other => panic!("{name} is not a histogram: {other:?}"),
    }
}

fn gauge(snapshot: &BTreeMap<Series, DebugValue>, name: &str, pairs: &[(&str, &str)]) -> f64 {
    match value(snapshot, MetricKind::Gauge, name, pairs) {
        DebugValue::Gauge(v) => v.into_inner(),
        other => panic!("{name} is not a gauge: {other:?}"),
    }
}

#[test]
fn a_scripted_sequence_of_calls_records_exact_counts_and_labels() {
    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    recorder.install().expect("the only recorder of this test binary");
    let _clock = backoff_runtime::testing::VirtualClock::install();

    // metered: a success at once, a success after 2 retries, a give-up
    // after 2 retries (3 attempts).
    assert_eq!(metered(&mut 0), Ok(7));
    assert_eq!(metered(&mut 2), Ok(7));
    assert_eq!(metered(&mut 5), Err(ApiError::Busy));

    // hinted: one success after 2 hinted retries, one permanent error.
    assert_eq!(hinted(&mut 2, false), Ok(7));
    assert_eq!(hinted(&mut 0, true), Err(ApiError::Denied));

    // budgeted: the empty budget refuses the first retry, twice.
    assert_eq!(budgeted(), Err(ApiError::Busy));
    assert_eq!(budgeted(), Err(ApiError::Busy));

    // roomy: 1 retry per second over 10 s allows 10 retries in all.
    assert_eq!(roomy(&mut 3), Ok(7));

    // The plain builder, named.
    let mut failures = 1;
    let result = Policy::new()
        .jitter(backoff_runtime::Jitter::None)
        .retry(|| attempt(&mut failures, || ApiError::Busy))
        .name("plain_op")
        .call();
    assert_eq!(result, Ok(7));

    // polling: two pending values, then done.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    let polls = std::sync::atomic::AtomicU32::new(0);
    assert_eq!(runtime.block_on(polled(&polls)), Ok(3));

    let snapshot: BTreeMap<Series, DebugValue> = snapshotter
        .snapshot()
        .into_vec()
        .into_iter()
        .map(|(key, _unit, _description, value)| (series(&key), value))
        .collect();

    let calls = "backoff_calls_total";
    let ok_first = [("outcome", "success"), ("reason", "first_attempt")];
    let ok_after = [("outcome", "success"), ("reason", "after_retries")];
    let with = |function: &'static str, pairs: &[(&'static str, &'static str)]| {
        let mut all = vec![("function", function)];
        all.extend_from_slice(pairs);
        all
    };
    let gave_up = |reason: &'static str| [("outcome", "gave_up"), ("reason", reason)];

    assert_eq!(counter(&snapshot, calls, &with("metrics::metered", &ok_first)), 1);
    assert_eq!(counter(&snapshot, calls, &with("metrics::metered", &ok_after)), 1);
    assert_eq!(
        counter(&snapshot, calls, &with("metrics::metered", &gave_up("exhausted"))),
        1
    );
    for reason in ["permanent", "hint_above_cap", "deadline", "budget"] {
        assert_eq!(
            counter(&snapshot, calls, &with("metrics::metered", &gave_up(reason))),
            0,
            "{reason}"
        );
    }
    let retries = "backoff_retries_total";
    assert_eq!(
        counter(&snapshot, retries, &with("metrics::metered", &[("wait", "schedule")])),
        4
    );
    assert_eq!(
        counter(&snapshot, retries, &with("metrics::metered", &[("wait", "hint")])),
        0
    );
    let mut attempts = histogram(
        &snapshot,
        "backoff_attempts_per_call",
        &[("function", "metrics::metered")],
    );
    attempts.sort_by(f64::total_cmp);
    assert_eq!(attempts, [1.0, 3.0, 3.0]);
    let mut waits = histogram(&snapshot, "backoff_wait_seconds", &[("function", "metrics::metered")]);
    waits.sort_by(f64::total_cmp);
    assert_eq!(waits, [1.0, 1.0, 2.0, 2.0]);

    assert_eq!(counter(&snapshot, calls, &with("metrics::hinted", &ok_after)), 1);
    assert_eq!(
        counter(&snapshot, calls, &with("metrics::hinted", &gave_up("permanent"))),
        1
    );
    assert_eq!(
        counter(&snapshot, retries, &with("metrics::hinted", &[("wait", "hint")])),
        2
    );
    assert_eq!(
        counter(&snapshot, retries, &with("metrics::hinted", &[("wait", "schedule")])),
        0
    );
    assert_eq!(
        histogram(&snapshot, "backoff_wait_seconds", &[("function", "metrics::hinted")]),
        [0.25, 0.25]
    );

    assert_eq!(
        counter(&snapshot, calls, &with("metrics::budgeted", &gave_up("budget"))),
        2
    );
    assert_eq!(
        counter(&snapshot, "backoff_budget_refusals_total", &[("budget", "tight")]),
        2
    );
    assert_eq!(
        gauge(&snapshot, "backoff_budget_available_retries", &[("budget", "tight")]),
        0.0
    );

    assert_eq!(counter(&snapshot, calls, &with("metrics::roomy", &ok_after)), 1);
    assert_eq!(
        counter(&snapshot, "backoff_budget_refusals_total", &[("budget", "roomy")]),
        0
    );
    assert_eq!(
        gauge(&snapshot, "backoff_budget_available_retries", &[("budget", "roomy")]),
        7.0
    );

    assert_eq!(counter(&snapshot, calls, &with("plain_op", &ok_after)), 1);
    assert_eq!(
        counter(&snapshot, retries, &with("plain_op", &[("wait", "schedule")])),
        1
    );

    assert_eq!(counter(&snapshot, calls, &with("metrics::polled", &ok_after)), 1);
    assert_eq!(
        counter(&snapshot, retries, &with("metrics::polled", &[("wait", "schedule")])),
        2
    );
    assert_eq!(
        histogram(
            &snapshot,
            "backoff_attempts_per_call",
            &[("function", "metrics::polled")]
        ),
        [3.0]
    );

    // Nothing else was recorded: every series belongs to a function or a
    // budget of the script.
    let functions = [
        "metrics::metered",
        "metrics::hinted",
        "metrics::budgeted",
        "metrics::roomy",
        "plain_op",
        "metrics::polled",
    ];
    for (kind, name, labels) in snapshot.keys() {
        let owner = labels.get("function").or(labels.get("budget")).map(String::as_str);
        assert!(
            owner.is_some_and(|o| functions.contains(&o) || o == "tight" || o == "roomy"),
            "unexpected series {kind:?} {name} {labels:?}"
        );
    }
}

// ---- names, the current recorder, and limits (each with a local recorder) ----

/// Runs `calls` under a recorder of its own, on this thread, and returns
/// what it recorded.
fn recorded(calls: impl FnOnce()) -> BTreeMap<Series, DebugValue> {
    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    metrics::with_local_recorder(&recorder, calls);
    snapshotter
        .snapshot()
        .into_vec()
        .into_iter()
        .map(|(key, _unit, _description, value)| (series(&key), value))
        .collect()
}

fn calls_of(snapshot: &BTreeMap<Series, DebugValue>, function: &str, reason: &str) -> u64 {
    counter(
        snapshot,
        "backoff_calls_total",
        &[("function", function), ("outcome", "success"), ("reason", reason)],
    )
}

thread_local! {
    static EVENT_NAMES: std::cell::RefCell<Vec<&'static str>> = const { std::cell::RefCell::new(Vec::new()) };
}

fn note_name(event: &backoff_runtime::RetryEvent) {
    EVENT_NAMES.with_borrow_mut(|names| names.push(event.function()));
}

mod users {
    #[backoff_runtime::retry(max_retries = 1, initial_backoff = "1ms", jitter = none, on_retry = |_, e| super::note_name(e))]
    pub(crate) fn fetch(failures: &mut u32) -> Result<u32, super::ApiError> {
        super::attempt(failures, || super::ApiError::Busy)
    }
}

mod orders {
    #[backoff_runtime::retry(max_retries = 1, initial_backoff = "1ms", jitter = none, on_retry = |_, e| super::note_name(e))]
    pub(crate) fn fetch(failures: &mut u32) -> Result<u32, super::ApiError> {
        super::attempt(failures, || super::ApiError::Busy)
    }
}

struct Client;
struct Cache<T>(core::marker::PhantomData<T>);

impl Client {
    #[retry(max_retries = 1, initial_backoff = "1ms", jitter = none, on_retry = |_, e| note_name(e))]
    fn get(&self, failures: &mut u32) -> Result<u32, ApiError> {
        attempt(failures, || ApiError::Busy)
    }
}

impl<T> Cache<T> {
    #[retry(max_retries = 1, initial_backoff = "1ms", jitter = none, on_retry = |_, e| note_name(e))]
    fn get(&self, failures: &mut u32) -> Result<u32, ApiError> {
        attempt(failures, || ApiError::Busy)
    }
}

#[retry(max_retries = 1, initial_backoff = "1ms", jitter = none, name = "billing.charge", on_retry = |_, e| note_name(e))]
fn charge(failures: &mut u32) -> Result<u32, ApiError> {
    attempt(failures, || ApiError::Busy)
}

/// Two functions of the same name in two modules, and two methods of the
/// same name on two types, are four series, named as `RetryEvent::function`
/// and the tracing events name them; `name = "..."` sets the name.
#[test]
fn functions_of_the_same_name_are_told_apart() {
    let _clock = backoff_runtime::testing::VirtualClock::install();
    let snapshot = recorded(|| {
        assert_eq!(users::fetch(&mut 1), Ok(7));
        assert_eq!(orders::fetch(&mut 0), Ok(7));
        assert_eq!(Client.get(&mut 1), Ok(7));
        assert_eq!(Cache::<u8>(core::marker::PhantomData).get(&mut 0), Ok(7));
        assert_eq!(Cache::<String>(core::marker::PhantomData).get(&mut 1), Ok(7));
        assert_eq!(charge(&mut 1), Ok(7));
    });
    assert_eq!(calls_of(&snapshot, "metrics::users::fetch", "after_retries"), 1);
    assert_eq!(calls_of(&snapshot, "metrics::orders::fetch", "first_attempt"), 1);
    assert_eq!(calls_of(&snapshot, "metrics::users::fetch", "first_attempt"), 0);
    assert_eq!(calls_of(&snapshot, "metrics::Client::get", "after_retries"), 1);
    // Every instance of a generic type is one site.
    assert_eq!(calls_of(&snapshot, "metrics::Cache::get", "first_attempt"), 1);
    assert_eq!(calls_of(&snapshot, "metrics::Cache::get", "after_retries"), 1);
    assert_eq!(calls_of(&snapshot, "billing.charge", "after_retries"), 1);
    assert_eq!(
        EVENT_NAMES.with_borrow(Clone::clone),
        [
            "metrics::users::fetch",
            "metrics::Client::get",
            "metrics::Cache::get",
            "billing.charge"
        ]
    );
}

#[retry(max_retries = 1, initial_backoff = "1ms", jitter = none)]
fn late(failures: &mut u32) -> Result<u32, ApiError> {
    attempt(failures, || ApiError::Busy)
}

/// A recorder a call records to learns what the series are (HELP text and
/// units). Told once per recorder and thread, by the recorder's address: a
/// recorder made later at the very address of one already told (a test's
/// local recorder in a loop) gets every sample but may miss these lines.
#[test]
fn a_new_recorder_is_told_what_the_series_are() {
    let _clock = backoff_runtime::testing::VirtualClock::install();
    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    metrics::with_local_recorder(&recorder, || assert_eq!(late(&mut 1), Ok(7)));
    let described: BTreeMap<String, (Option<metrics::Unit>, Option<String>)> = snapshotter
        .snapshot()
        .into_vec()
        .into_iter()
        .map(|(key, unit, description, _)| (key.key().name().to_string(), (unit, description.map(|d| d.to_string()))))
        .collect();
    assert_eq!(
        described["backoff_calls_total"].1.as_deref(),
        Some("Calls of retried functions, by outcome and reason")
    );
    assert_eq!(described["backoff_wait_seconds"].0, Some(metrics::Unit::Seconds));
    assert_eq!(described["backoff_attempts_per_call"].0, Some(metrics::Unit::Count));
}

/// A function first called before any recorder is there records once one
/// is; two threads under two local recorders each count in their own.
#[test]
fn each_call_records_to_the_recorder_current_where_it_runs() {
    metrics::with_local_recorder(&metrics::NoopRecorder, || assert_eq!(late(&mut 0), Ok(7)));
    let snapshot = recorded(|| assert_eq!(late(&mut 0), Ok(7)));
    assert_eq!(calls_of(&snapshot, "metrics::late", "first_attempt"), 1);

    let (a, b) = std::thread::scope(|scope| {
        let a = scope.spawn(|| {
            recorded(|| {
                for _ in 0..3 {
                    assert_eq!(late(&mut 0), Ok(7));
                }
            })
        });
        let b = scope.spawn(|| recorded(|| assert_eq!(late(&mut 0), Ok(7))));
        (a.join().unwrap(), b.join().unwrap())
    });
    assert_eq!(calls_of(&a, "metrics::late", "first_attempt"), 3);
    assert_eq!(calls_of(&b, "metrics::late", "first_attempt"), 1);
}

static BACKEND: backoff_runtime::limits::RetryThrottle =
    backoff_runtime::limits::RetryThrottle::new(2, 0.1).name("backend");

#[retry(max_retries = 3, initial_backoff = "1ms", jitter = none, budget = BACKEND)]
fn throttled() -> Result<u32, ApiError> {
    Err(ApiError::Busy)
}

static UNNAMED_A: RetryBudget = RetryBudget::new().ratio(0.0).min_per_second(0);
static UNNAMED_B: RetryBudget = RetryBudget::new().ratio(0.0).min_per_second(5);

#[retry(max_retries = 1, initial_backoff = "1ms", jitter = none, budget = UNNAMED_A)]
fn unnamed_a() -> Result<u32, ApiError> {
    Err(ApiError::Busy)
}

#[retry(max_retries = 1, initial_backoff = "1ms", jitter = none, budget = UNNAMED_B)]
fn unnamed_b() -> Result<u32, ApiError> {
    Err(ApiError::Busy)
}

/// A named throttle reports its refusals and its tokens; the stop reason
/// says a budget or a throttle refused; unnamed limits report no series of
/// their own, so they cannot overwrite each other's.
#[test]
fn throttles_are_reported_and_unnamed_limits_stay_apart() {
    let _clock = backoff_runtime::testing::VirtualClock::install();
    let snapshot = recorded(|| {
        // 2 tokens: the failure takes one, 1 is not above half: refused.
        assert_eq!(throttled(), Err(ApiError::Busy));
        assert_eq!(unnamed_a(), Err(ApiError::Busy));
        assert_eq!(unnamed_b(), Err(ApiError::Busy));
    });
    assert_eq!(
        counter(&snapshot, "backoff_budget_refusals_total", &[("budget", "backend")]),
        1
    );
    assert_eq!(
        gauge(&snapshot, "backoff_throttle_tokens", &[("budget", "backend")]),
        1.0
    );
    let gave_up = |function| {
        counter(
            &snapshot,
            "backoff_calls_total",
            &[("function", function), ("outcome", "gave_up"), ("reason", "budget")],
        )
    };
    assert_eq!(gave_up("metrics::throttled"), 1);
    assert_eq!(gave_up("metrics::unnamed_a"), 1);
    for (_, name, labels) in snapshot.keys() {
        assert!(
            labels.get("budget").is_none_or(|budget| budget == "backend"),
            "an unnamed limit reported {name} {labels:?}"
        );
    }
    assert!(backoff_runtime::StopReason::Budget.to_string().contains("throttle"));
}

// ---- refused attempts (`admission`): give-ups with `reason="refused"` ----

/// Refuses every attempt from the `from`-th on.
struct RefuseFrom(u32);

impl backoff_runtime::limits::AdmissionLimit for RefuseFrom {
    fn admit(&self, request: backoff_runtime::limits::AdmissionRequest<'_>) -> backoff_runtime::limits::Admission {
        if request.attempt >= self.0 {
            backoff_runtime::limits::Admission::Refuse
        } else {
            backoff_runtime::limits::Admission::Go
        }
    }
}

static REFUSE_FIRST: RefuseFrom = RefuseFrom(1);
static REFUSE_RETRY: RefuseFrom = RefuseFrom(2);

impl From<backoff_runtime::limits::Refused> for ApiError {
    fn from(_: backoff_runtime::limits::Refused) -> Self {
        ApiError::Denied
    }
}

#[retry(admission = REFUSE_FIRST, max_retries = 2, initial_backoff = "1ms", jitter = none)]
fn shed_at_once() -> Result<u32, ApiError> {
    Err(ApiError::Busy)
}

#[retry(admission = REFUSE_RETRY, max_retries = 2, initial_backoff = "1ms", jitter = none)]
fn shed_on_retry() -> Result<u32, ApiError> {
    Err(ApiError::Busy)
}

/// A call the admission limiter refused ends as a give-up, counted in
/// `backoff_calls_total` with `reason="refused"` (every call is counted once
/// by how it ended), with the attempts it made: 0 when the first attempt
/// was refused, and the builder's the same.
#[test]
fn refused_calls_are_give_ups_with_their_reason_and_attempts() {
    let _clock = backoff_runtime::testing::VirtualClock::install();
    let snapshot = recorded(|| {
        assert_eq!(shed_at_once(), Err(ApiError::Denied));
        assert_eq!(shed_on_retry(), Err(ApiError::Denied));
        let result = Policy::new()
            .max_retries(2)
            .retry(|| Err::<u32, _>(ApiError::Busy))
            .sleep(|_| {})
            .admission(&REFUSE_FIRST)
            .name("shed_builder")
            .call();
        assert_eq!(result, Err(ApiError::Denied));
    });
    let refused = |function| {
        counter(
            &snapshot,
            "backoff_calls_total",
            &[("function", function), ("outcome", "gave_up"), ("reason", "refused")],
        )
    };
    assert_eq!(refused("metrics::shed_at_once"), 1);
    assert_eq!(refused("metrics::shed_on_retry"), 1);
    assert_eq!(refused("shed_builder"), 1);
    let attempts = |function| histogram(&snapshot, "backoff_attempts_per_call", &[("function", function)]);
    assert_eq!(attempts("metrics::shed_at_once"), [0.0]);
    assert_eq!(attempts("metrics::shed_on_retry"), [1.0]);
    assert_eq!(attempts("shed_builder"), [0.0]);
    // The refused retry was announced (its wait chosen) before it was refused.
    assert_eq!(
        counter(
            &snapshot,
            "backoff_retries_total",
            &[("function", "metrics::shed_on_retry"), ("wait", "schedule")]
        ),
        1
    );
}

// ---- the gRPC layer: gRPC's own series (A96) beside the crate's ----

#[test]
fn the_grpc_layer_records_grpc_s_retry_series_beside_the_crate_s() {
    use backoff_grpc::metrics::{GRPC_CALL_RETRIES, GRPC_CALL_RETRY_DELAY};
    use backoff_grpc::{GrpcRetryLayer, ServiceConfig};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU32, Ordering};
    use tonic::body::Body;
    use tower::{Layer, ServiceExt};

    let snapshot = recorded(|| {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build()
            .unwrap();
        runtime.block_on(async {
            // UNAVAILABLE twice (Trailers-Only), then OK.
            let answers = Arc::new(AtomicU32::new(0));
            let channel = tower::service_fn(move |_: http::Request<Body>| {
                let answer = answers.fetch_add(1, Ordering::SeqCst);
                async move {
                    let status = if answer < 2 {
                        tonic::Status::unavailable("down")
                    } else {
                        tonic::Status::ok("")
                    };
                    Ok::<_, std::convert::Infallible>(status.into_http::<Body>())
                }
            });
            let config = ServiceConfig::from_json(
                r#"{"methodConfig": [{"name": [{"service": "test.Planned"}], "retryPolicy": {"maxAttempts": 5,
                    "initialBackoff": "0.1s", "maxBackoff": "0.1s", "backoffMultiplier": 1,
                    "retryableStatusCodes": ["UNAVAILABLE"]}}]}"#,
            )
            .unwrap();
            let service = GrpcRetryLayer::new(config).name("grpc_channel").layer(channel);
            let call = |path: &str| http::Request::post(path).body(Body::empty()).unwrap();
            service.clone().oneshot(call("/test.Planned/Unary")).await.unwrap();
            // Not retried: no gRPC series of its own.
            service.oneshot(call("/test.Planned/Once")).await.unwrap();
        });
    });
    let method = [("grpc.method", "test.Planned/Unary")];
    assert_eq!(histogram(&snapshot, GRPC_CALL_RETRIES, &method), [2.0]);
    let delay = histogram(&snapshot, GRPC_CALL_RETRY_DELAY, &method);
    assert!(
        delay.len() == 1 && (0.16..=0.24).contains(&delay[0]),
        "two waits of 100 ms ±20%: {delay:?}"
    );
    let once = (
        MetricKind::Histogram,
        GRPC_CALL_RETRIES.to_string(),
        labels(&[("grpc.method", "test.Planned/Once")]),
    );
    assert!(
        !snapshot.contains_key(&once),
        "a call without retries records no retry count"
    );
    // The crate's own series, under the layer's name.
    assert_eq!(calls_of(&snapshot, "grpc_channel", "after_retries"), 1);
    assert_eq!(calls_of(&snapshot, "grpc_channel", "first_attempt"), 1);
}

/// A hedge the delay started counts apart from the retries:
/// `backoff_retries_total{wait="hedge"}`; a retry after a failure is
/// `wait="schedule"` (no backoff while hedging: a wait of zero).
#[test]
fn hedges_count_apart_from_retries() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    let snapshot = recorded(|| {
        let calls = std::sync::atomic::AtomicU32::new(0);
        let result = runtime.block_on(async {
            Policy::new()
                .max_retries(3)
                .retry(|| async {
                    // A slow first attempt; the hedge fails at once; the
                    // attempt after it answers.
                    match calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst) {
                        0 => {
                            tokio::time::sleep(Duration::from_secs(1)).await;
                            Ok(1)
                        }
                        1 => Err(ApiError::Busy),
                        n => Ok(n),
                    }
                })
                .name("hedged_op")
                .hedge_after(Duration::from_millis(50))
                .await
        });
        assert_eq!(result, Ok(2));
    });
    let retries = |wait: &str| {
        counter(
            &snapshot,
            "backoff_retries_total",
            &[("function", "hedged_op"), ("wait", wait)],
        )
    };
    assert_eq!((retries("hedge"), retries("schedule")), (1, 1));
    assert_eq!(calls_of(&snapshot, "hedged_op", "after_retries"), 1);
}

// ---- a circuit breaker's state ----

#[test]
fn a_named_breaker_reports_its_state_and_its_changes() {
    use backoff_runtime::limits::{Admission, AdmissionLimit, AdmissionRequest, AttemptEnd, CircuitBreaker};
    let breaker = CircuitBreaker::new().consecutive_failures(2).name("payments");
    let start = std::time::Instant::now();
    let snapshot = recorded(|| {
        breaker.observed(AttemptEnd::new(start, true));
        breaker.observed(AttemptEnd::new(start, true));
    });
    let state = |snapshot: &BTreeMap<Series, DebugValue>, state: &str| {
        gauge(
            snapshot,
            "backoff_circuit_state",
            &[("breaker", "payments"), ("state", state)],
        )
    };
    assert_eq!(
        (
            state(&snapshot, "open"),
            state(&snapshot, "closed"),
            state(&snapshot, "half_open")
        ),
        (1.0, 0.0, 0.0)
    );
    let opened = &[("breaker", "payments"), ("to", "open")];
    assert_eq!(counter(&snapshot, "backoff_circuit_transitions_total", opened), 1);
    let snapshot = recorded(|| {
        let after = start + breaker.get_break_duration();
        assert_eq!(
            breaker.admit(AdmissionRequest::new(after, 1, Duration::ZERO)),
            Admission::Go
        );
        breaker.observed(AttemptEnd::new(after, false));
    });
    assert_eq!((state(&snapshot, "closed"), state(&snapshot, "open")), (1.0, 0.0));
    let closed = &[("breaker", "payments"), ("to", "closed")];
    let half_open = &[("breaker", "payments"), ("to", "half_open")];
    assert_eq!(
        (
            counter(&snapshot, "backoff_circuit_transitions_total", half_open),
            counter(&snapshot, "backoff_circuit_transitions_total", closed)
        ),
        (1, 1)
    );
}
