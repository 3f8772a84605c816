//! The schedule as the caller sees it, on tokio's paused clock (async) and
//! the runtime's virtual clock (sync).

use std::sync::Mutex;
use std::time::Duration;

use backoff_runtime::testing::{VirtualClock, seed_thread_rng};
use backoff_runtime::{Jitter, Policy, retry};
use tokio::time::Instant;

/// Records the instant of every attempt.
struct Recorder {
    calls: Mutex<Vec<Instant>>,
}

impl Recorder {
    fn new() -> Self {
        Recorder {
            calls: Mutex::new(Vec::new()),
        }
    }

    fn record(&self) -> usize {
        let mut calls = self.calls.lock().unwrap_or_else(|e| e.into_inner());
        calls.push(Instant::now());
        calls.len()
    }

    /// The gaps between consecutive attempts.
    fn waits(&self) -> Vec<Duration> {
        let calls = self.calls.lock().unwrap_or_else(|e| e.into_inner());
        calls.windows(2).map(|w| w[1] - w[0]).collect()
    }
}

#[retry(max_backoff = "32s", max_retries = 5, jitter = none)]
async fn documented_example(recorder: &Recorder) -> Result<(), String> {
    Err(format!("attempt {} failed", recorder.record()))
}

#[tokio::test(start_paused = true)]
async fn documented_example_waits_1_2_4_8_16() {
    let recorder = Recorder::new();
    let result = documented_example(&recorder).await;
    assert_eq!(
        result,
        Err("attempt 6 failed".to_string()),
        "the caller gets the last error"
    );
    assert_eq!(recorder.waits(), [1, 2, 4, 8, 16].map(Duration::from_secs));
}

#[retry(max_backoff = "10s", max_retries = 8, jitter = none)]
async fn capped(recorder: &Recorder) -> Result<(), ()> {
    recorder.record();
    Err(())
}

#[tokio::test(start_paused = true)]
async fn cap_truncates_the_growth() {
    let recorder = Recorder::new();
    assert!(capped(&recorder).await.is_err());
    assert_eq!(recorder.waits(), [1, 2, 4, 8, 10, 10, 10, 10].map(Duration::from_secs));
}

#[retry]
async fn seed_default(recorder: &Recorder) -> Result<(), ()> {
    recorder.record();
    Err(())
}

#[tokio::test(start_paused = true)]
async fn no_arguments_is_google_cloud_s_algorithm() {
    // 5 retries; wait n is 2^n s plus up to 1 s of jitter, capped at 32 s.
    for _ in 0..20 {
        let recorder = Recorder::new();
        assert!(seed_default(&recorder).await.is_err());
        let waits = recorder.waits();
        assert_eq!(waits.len(), 5);
        for (n, wait) in waits.iter().enumerate() {
            let base = Duration::from_secs(1 << n);
            assert!(
                *wait >= base && *wait <= base + Duration::from_secs(1),
                "wait {n} = {wait:?}"
            );
        }
    }
}

#[retry(max_backoff = "500ms", max_retries = 4)]
fn defaults_never_error(recorder: &Recorder) -> Result<(), ()> {
    recorder.record();
    Err(())
}

#[test]
fn an_unwritten_default_only_gets_capped() {
    // initial_backoff (1 s) and the default jitter (1 s) exceed the 500 ms cap:
    // no error, every wait is simply 500 ms.
    let clock = VirtualClock::install();
    let recorder = Recorder::new();
    assert!(defaults_never_error(&recorder).is_err());
    assert_eq!(clock.waits(), [Duration::from_millis(500); 4]);
}

macro_rules! mode_fn {
    ($name:ident, $($args:tt)*) => {
        #[retry(max_retries = 8, max_backoff = "20s", $($args)*)]
        async fn $name(recorder: &Recorder) -> Result<(), ()> {
            recorder.record();
            Err(())
        }
    };
}

mode_fn!(mode_additive, jitter = additive);
mode_fn!(mode_additive_amount, jitter = "3s");
mode_fn!(mode_full, jitter = full);
mode_fn!(mode_equal, jitter = equal);
mode_fn!(mode_decorrelated, jitter = decorrelated);
mode_fn!(mode_none, jitter = none);

mode_fn!(mode_grpc, jitter = grpc);
mode_fn!(
    mode_float_multiplier,
    multiplier = 1.5,
    initial_backoff = "2s",
    jitter = none
);

/// The waits one call of `$mode` recorded.
macro_rules! recorded {
    ($mode:ident) => {{
        let recorder = Recorder::new();
        $mode(&recorder).await.ok();
        recorder
    }};
}

#[tokio::test(start_paused = true)]
async fn every_jitter_mode_stays_inside_its_formula() {
    let cap = Duration::from_secs(20);
    let base = |n: usize| Duration::from_secs(1u64 << n).min(cap);
    let s = Duration::from_secs;
    for run in 0..50 {
        seed_thread_rng(run);
        for (mode, recorder) in [
            ("additive", recorded!(mode_additive)),
            ("additive3", recorded!(mode_additive_amount)),
            ("full", recorded!(mode_full)),
            ("equal", recorded!(mode_equal)),
            ("decorrelated", recorded!(mode_decorrelated)),
            ("grpc", recorded!(mode_grpc)),
            ("none", recorded!(mode_none)),
        ] {
            let waits = recorder.waits();
            assert_eq!(waits.len(), 8, "{mode}");
            let mut previous = s(1);
            for (n, wait) in waits.iter().copied().enumerate() {
                assert!(wait <= cap, "{mode}: wait {n} = {wait:?} breaks the cap");
                let (low, high) = match mode {
                    "additive" => (base(n), (base(n) + s(1)).min(cap)),
                    "additive3" => (base(n), (base(n) + s(3)).min(cap)),
                    "full" => (Duration::ZERO, base(n)),
                    "equal" => (base(n) / 2, base(n)),
                    "decorrelated" => (s(1), (previous * 3).min(cap)),
                    // Whole seconds: 0.8 and 1.2 x base are whole milliseconds,
                    // so tokio's rounding up to the millisecond stays inside.
                    "grpc" => ((base(n) * 4 / 5).min(cap), (base(n) * 6 / 5).min(cap)),
                    "none" => (base(n), base(n)),
                    other => unreachable!("no formula for {other}"),
                };
                assert!(
                    wait >= low && wait <= high,
                    "{mode}: wait {n} = {wait:?} not in [{low:?}, {high:?}]"
                );
                previous = wait;
            }
        }
    }
    let recorder = Recorder::new();
    mode_float_multiplier(&recorder).await.ok();
    let millis: Vec<u128> = recorder.waits().iter().map(Duration::as_millis).collect();
    // 2 s x 1.5^n; tokio's timer rounds 15187.5 ms up to the next millisecond.
    assert_eq!(millis, [2000, 3000, 4500, 6750, 10125, 15188, 20000, 20000]);
}

#[tokio::test(start_paused = true)]
async fn jitter_spreads_the_waits() {
    // Additive jitter really is random: 50 runs do not all wait the same.
    let mut first_waits = Vec::new();
    for _ in 0..50 {
        let recorder = Recorder::new();
        mode_additive(&recorder).await.ok();
        first_waits.push(recorder.waits()[0]);
    }
    first_waits.sort();
    first_waits.dedup();
    assert!(first_waits.len() > 40, "only {} distinct waits", first_waits.len());
}

#[tokio::test(start_paused = true)]
async fn grpc_jitter_spreads_within_twenty_percent_of_the_base() {
    // 50 runs: the first waits are not all the base (1 s), not all equal, and
    // all within 20% of it; the waits at the cap (20 s) stay at most the cap.
    let mut first_waits = Vec::new();
    for _ in 0..50 {
        let recorder = Recorder::new();
        mode_grpc(&recorder).await.ok();
        let waits = recorder.waits();
        assert!(waits.iter().all(|w| *w <= Duration::from_secs(20)), "{waits:?}");
        first_waits.push(waits[0]);
    }
    let (low, high) = (Duration::from_millis(800), Duration::from_millis(1200));
    assert!(first_waits.iter().all(|w| *w >= low && *w <= high), "{first_waits:?}");
    assert!(
        first_waits.iter().any(|w| *w < Duration::from_millis(950)),
        "{first_waits:?}"
    );
    assert!(
        first_waits.iter().any(|w| *w > Duration::from_millis(1050)),
        "{first_waits:?}"
    );
    first_waits.sort();
    first_waits.dedup();
    assert!(first_waits.len() > 40, "only {} distinct waits", first_waits.len());
}

#[test]
fn seeded_grpc_runs_repeat_exactly() {
    #[retry(policy = Policy::new().jitter(Jitter::Grpc))]
    fn always_fails() -> Result<(), ()> {
        Err(())
    }
    let run = |seed| {
        seed_thread_rng(seed);
        let clock = VirtualClock::install();
        always_fails().ok();
        clock.waits()
    };
    assert_eq!(run(11), run(11));
    assert_ne!(run(11), run(12));
    seed_thread_rng(11);
    let scheduled: Vec<Duration> = Policy::new().jitter(Jitter::Grpc).schedule().collect();
    assert_eq!(run(11), scheduled);
}

#[test]
fn sync_schedule_on_the_virtual_clock_matches_the_policy() {
    #[retry(max_retries = 6, initial_backoff = "100ms", max_backoff = "1s", jitter = none)]
    fn sync_capped() -> Result<(), ()> {
        Err(())
    }
    let clock = VirtualClock::install();
    assert!(sync_capped().is_err());
    let expected: Vec<Duration> = Policy::new()
        .max_retries(6)
        .initial_backoff(Duration::from_millis(100))
        .max_backoff(Duration::from_secs(1))
        .jitter(Jitter::None)
        .schedule()
        .collect();
    assert_eq!(clock.waits(), expected);
    assert_eq!(
        clock.waits(),
        [100, 200, 400, 800, 1000, 1000].map(Duration::from_millis)
    );
}

#[test]
fn seeded_sync_runs_repeat_exactly() {
    #[retry(max_retries = 5, jitter = full)]
    fn always_fails() -> Result<(), ()> {
        Err(())
    }
    let run = |seed| {
        seed_thread_rng(seed);
        let clock = VirtualClock::install();
        always_fails().ok();
        clock.waits()
    };
    assert_eq!(run(11), run(11));
    assert_ne!(run(11), run(12));
}
