//! The replay body's cost per MiB: what [`Replay`] adds to a streamed
//! request body of 1 MiB in 64 frames of 16 KiB, against draining the same
//! body bare, in the same run.
//!
//! ```sh
//! cargo bench --bench replay_body
//! ```
//!
//! Variants (each builds the body's 64 frames first, as reference-counted
//! clones of one 16 KiB buffer, so every variant pays the same set-up):
//!
//! - `bare`: the body drained as it is (the baseline);
//! - `first_attempt`: wrapped in `Replay`, the first attempt's
//!   `ReplayBody` drained (each frame forwarded, and a clone of it kept);
//! - `first_and_retry`: the same, then a second attempt drained from what
//!   was kept (a retry's resend).
//!
//! Bodies are polled with a no-op waker: every frame is ready, so nothing
//! waits. The figures (and the overhead over `bare`, per MiB) are printed at
//! the end.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::hint::black_box;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use backoff_tower::{Replay, ReplayLimits};
use bytes::Bytes;
use criterion::{Criterion, criterion_group};
use hyper::body::{Body, Frame, SizeHint};

#[path = "support/estimates.rs"]
mod estimates;

const FRAME: usize = 16 * 1024;
const FRAMES: usize = 64;

/// A streamed body of ready frames with no size hint (as a client-streaming
/// call's body is).
struct Frames(VecDeque<Bytes>);

impl Body for Frames {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        Poll::Ready(self.0.pop_front().map(|data| Ok(Frame::data(data))))
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::default()
    }
}

fn one_mib(chunk: &Bytes) -> Frames {
    Frames((0..FRAMES).map(|_| chunk.clone()).collect())
}

/// Polls `body` to its end; the bytes it sent.
fn drain<B: Body<Data = Bytes> + Unpin>(mut body: B) -> usize
where
    B::Error: std::fmt::Debug,
{
    let mut cx = Context::from_waker(Waker::noop());
    let mut sent = 0;
    loop {
        match Pin::new(&mut body).poll_frame(&mut cx) {
            Poll::Ready(Some(frame)) => {
                if let Ok(data) = frame.expect("a frame").into_data() {
                    sent += data.len();
                }
            }
            Poll::Ready(None) => return sent,
            Poll::Pending => panic!("every frame of the body is ready"),
        }
    }
}

fn replay_body(c: &mut Criterion) {
    let chunk = Bytes::from(vec![7u8; FRAME]);
    // Room for the whole MiB (the default per-call cap is exactly 1 MiB).
    let limits = ReplayLimits::new().per_call(2 << 20);
    let mut group = c.benchmark_group("replay_body_1mib");
    group.bench_function("bare", |b| b.iter(|| black_box(drain(one_mib(&chunk)))));
    group.bench_function("first_attempt", |b| {
        b.iter(|| {
            let replay = Replay::try_new(one_mib(&chunk), &limits).ok().expect("under the cap");
            black_box(drain(replay.attempt().expect("a first attempt")))
        })
    });
    group.bench_function("first_and_retry", |b| {
        b.iter(|| {
            let replay = Replay::try_new(one_mib(&chunk), &limits).ok().expect("under the cap");
            let first = drain(replay.attempt().expect("a first attempt"));
            let again = drain(replay.attempt().expect("kept for a retry"));
            assert_eq!(
                (first, again),
                (FRAME * FRAMES, FRAME * FRAMES),
                "every byte once per attempt"
            );
            black_box(again)
        })
    });
    group.finish();
}

criterion_group!(benches, replay_body);

fn main() {
    let since = std::time::SystemTime::now();
    benches();
    Criterion::default().configure_from_args().final_summary();
    let median = |bench| estimates::median_ns("replay_body_1mib", bench, since);
    if let (Some(bare), Some(first), Some(retry)) = (median("bare"), median("first_attempt"), median("first_and_retry"))
    {
        let table = format!(
            "| replay body, 1 MiB in {FRAMES} frames | median | per MiB over the bare body |\n|---|---:|---:|\n\
             | bare drain | {bare:.0} ns | |\n\
             | first attempt through `Replay` | {first:.0} ns | +{:.0} ns ({:.2}x) |\n\
             | first attempt and a retry's resend | {retry:.0} ns | resend {:.0} ns |\n",
            first - bare,
            first / bare,
            retry - first
        );
        estimates::publish(&table, "replay_body.md");
    }
}
