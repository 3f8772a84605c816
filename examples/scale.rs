//! 100,000 concurrent tokio tasks, each failing 3 times and then succeeding,
//! on a current-thread runtime with tokio's clock paused (the waits of 1, 2
//! and 4 s plus jitter take no real time): peak memory and wall time of
//! `#[retry]` next to the same tasks without retry, a hand-written loop and
//! backon.
//!
//! ```sh
//! cargo run --release --example scale
//! cargo run --release --example scale -- --tasks 10000   # fewer tasks
//! ```
//!
//! Each row runs in a fresh child process (this program re-executed with
//! `--mode <row>`), so one row's peak does not hide the next one's: the
//! child reads `VmRSS` from `/proc/self/status` before spawning the tasks
//! and `VmHWM` (peak resident set) after they all finished. Linux only.
//!
//! Rows:
//! - `no_retry`: the plain async function, called once; it succeeds (the
//!   same tasks without retry: the floor).
//! - `retry`: the `#[retry]` function with the default schedule, failing 3
//!   times.
//! - `hand_loop`: the plain function in a hand-written loop with
//!   `tokio::time::sleep` and the same schedule, failing 3 times.
//! - `backon`: the plain function through backon's `Retryable` (exponential,
//!   jitter, default tokio sleeper), failing 3 times.

use std::future::Future;
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use backoff_runtime::retry;

#[path = "../benches/support/random.rs"]
mod random;

const FAILURES: u32 = 3;
const MODES: [&str; 4] = ["no_retry", "retry", "hand_loop", "backon"];

#[derive(Debug)]
struct Busy;

/// Fails `failures` times, then returns the number of the attempt.
fn attempt(calls: &AtomicU32, failures: u32) -> Result<u32, Busy> {
    let n = calls.fetch_add(1, Ordering::Relaxed) + 1;
    if n <= failures { Err(Busy) } else { Ok(n) }
}

async fn plain(calls: &AtomicU32, failures: u32) -> Result<u32, Busy> {
    attempt(calls, failures)
}

#[retry]
async fn with_retry(calls: &AtomicU32, failures: u32) -> Result<u32, Busy> {
    attempt(calls, failures)
}

/// The default schedule by hand: 1 s doubling to a 32 s cap, plus up to 1 s
/// of jitter, 5 retries.
async fn hand_loop(calls: &AtomicU32, failures: u32) -> Result<u32, Busy> {
    let cap = Duration::from_secs(32);
    let mut base = Duration::from_secs(1);
    let mut retries = 0;
    loop {
        match plain(calls, failures).await {
            Ok(n) => return Ok(n),
            Err(e) if retries == 5 => return Err(e),
            Err(_) => {
                let jitter = Duration::from_nanos(random::random_u64() % 1_000_000_001);
                tokio::time::sleep((base + jitter).min(cap)).await;
                base = (base * 2).min(cap);
                retries += 1;
            }
        }
    }
}

async fn with_backon(calls: &AtomicU32, failures: u32) -> Result<u32, Busy> {
    use backon::{ExponentialBuilder, Retryable};
    let builder = ExponentialBuilder::default()
        .with_min_delay(Duration::from_secs(1))
        .with_max_delay(Duration::from_secs(32))
        .with_max_times(5)
        .with_jitter();
    (|| plain(calls, failures)).retry(builder).await
}

/// A field of `/proc/self/status`, in KiB.
fn status_kib(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status (Linux only)");
    status
        .lines()
        .find_map(|line| line.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or_else(|| panic!("no {field} in /proc/self/status"))
}

/// Spawns one task per counter, each running `call(counter)`; waits for all
/// and checks that each succeeded on attempt `expected`. Generic, so each
/// row's tasks hold only their own future type.
async fn run_all<Fut>(counters: &'static [AtomicU32], call: fn(&'static AtomicU32) -> Fut, expected: u32)
where
    Fut: Future<Output = Result<u32, Busy>> + Send + 'static,
{
    let handles: Vec<_> = counters.iter().map(|calls| tokio::spawn(call(calls))).collect();
    for handle in handles {
        let result = handle.await.expect("the task finished");
        assert_eq!(result.ok(), Some(expected), "every task succeeds on attempt {expected}");
    }
}

/// One row, in this process: spawns `tasks` tasks, waits for all, prints
/// `RESULT <rss before KiB> <peak KiB> <wall ms> <virtual s> <attempts>`.
fn child(mode: &str, tasks: usize) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a current-thread runtime");
    // One counter per task, alive for the whole process.
    let counters: &'static [AtomicU32] = Box::leak((0..tasks).map(|_| AtomicU32::new(0)).collect());
    rt.block_on(async {
        tokio::time::pause();
        let before = status_kib("VmRSS");
        let (wall, virtual_start) = (Instant::now(), tokio::time::Instant::now());
        let expected = FAILURES + 1;
        match mode {
            "no_retry" => run_all(counters, |calls| plain(calls, 0), 1).await,
            "retry" => run_all(counters, |calls| with_retry(calls, FAILURES), expected).await,
            "hand_loop" => run_all(counters, |calls| hand_loop(calls, FAILURES), expected).await,
            "backon" => run_all(counters, |calls| with_backon(calls, FAILURES), expected).await,
            other => panic!("unknown mode {other}"),
        }
        let wall = wall.elapsed();
        let virtual_elapsed = virtual_start.elapsed();
        let peak = status_kib("VmHWM");
        let attempts = counters[0].load(Ordering::Relaxed);
        println!(
            "RESULT {before} {peak} {} {:.1} {attempts}",
            wall.as_millis(),
            virtual_elapsed.as_secs_f64()
        );
    });
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let value = |flag: &str| args.iter().position(|a| a == flag).and_then(|i| args.get(i + 1));
    let tasks: usize = value("--tasks").and_then(|n| n.parse().ok()).unwrap_or(100_000);
    if let Some(mode) = value("--mode") {
        child(mode, tasks);
        return;
    }

    let exe = std::env::current_exe().expect("the path of this program");
    println!("{tasks} tasks per row, each failing {FAILURES} times then succeeding (no_retry: succeeds at once)");
    println!("current-thread tokio runtime, paused clock; each row in a fresh process\n");
    println!("| row | attempts/task | RSS before | peak RSS (VmHWM) | growth | bytes/task | wall | virtual time |");
    println!("|---|---:|---:|---:|---:|---:|---:|---:|");
    for mode in MODES {
        let output = Command::new(&exe)
            .args(["--mode", mode, "--tasks", &tasks.to_string()])
            .output()
            .expect("a child process");
        let stdout = String::from_utf8_lossy(&output.stdout);
        let Some(line) = stdout.lines().find_map(|l| l.strip_prefix("RESULT ")) else {
            eprintln!("{mode}: failed\n{}", String::from_utf8_lossy(&output.stderr));
            std::process::exit(1);
        };
        let fields: Vec<f64> = line.split_whitespace().filter_map(|f| f.parse().ok()).collect();
        let [before, peak, wall_ms, virtual_s, attempts] = fields[..] else {
            panic!("{mode}: unexpected child output {line:?}");
        };
        let growth = peak - before;
        println!(
            "| {mode} | {attempts} | {:.1} MiB | {:.1} MiB | {:.1} MiB | {:.0} | {wall_ms} ms | {virtual_s} s |",
            before / 1024.0,
            peak / 1024.0,
            growth / 1024.0,
            growth * 1024.0 / tasks as f64,
        );
    }
}
