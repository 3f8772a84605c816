//! The replay body's unit and property tests.
//!
//! Every byte once per attempt, in order, for any chunking and any point where
//! a retry starts; the caps; the trailers; the reservation given back.

use super::*;
use core::task::{Poll, Waker};
use http::HeaderMap;
use http_body::Frame;
use proptest::prelude::*;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU32, Ordering};
use std::task::Wake;

/// A body the test feeds while it is read, as a network body arrives: no
/// size hint, `Pending` until the next frame is sent (or the sender is
/// dropped: the end). `http-body-util`'s channel body needs a newer tokio
/// than this crate's floor.
#[derive(Default)]
struct Pipe {
    frames: VecDeque<Result<Frame<Bytes>, std::io::Error>>,
    closed: bool,
    waiting: Option<Waker>,
}

struct PipeSender(Arc<Mutex<Pipe>>);
struct Piped(Arc<Mutex<Pipe>>);

fn pipe() -> (PipeSender, Piped) {
    let shared = Arc::new(Mutex::new(Pipe::default()));
    (PipeSender(Arc::clone(&shared)), Piped(shared))
}

impl PipeSender {
    fn push(&self, frame: Result<Frame<Bytes>, std::io::Error>) {
        let mut pipe = self.0.lock().unwrap();
        pipe.frames.push_back(frame);
        if let Some(waker) = pipe.waiting.take() {
            waker.wake();
        }
    }

    fn send(&self, frame: Frame<Bytes>) {
        self.push(Ok(frame));
    }

    /// Ends the body with `error` after the frames sent so far.
    fn abort(self, error: std::io::Error) {
        self.push(Err(error));
    }
}

impl Drop for PipeSender {
    fn drop(&mut self) {
        let mut pipe = self.0.lock().unwrap();
        pipe.closed = true;
        if let Some(waker) = pipe.waiting.take() {
            waker.wake();
        }
    }
}

impl Body for Piped {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let mut pipe = self.0.lock().unwrap();
        match pipe.frames.pop_front() {
            Some(frame) => Poll::Ready(Some(frame)),
            None if pipe.closed => Poll::Ready(None),
            None => {
                pipe.waiting = Some(cx.waker().clone());
                Poll::Pending
            }
        }
    }
}

/// A body of planned data frames and trailers. With `stutter`, every other
/// poll is `Pending` (after waking itself), as a body arriving from the
/// network would be. Its size hint is unknown unless set.
struct Planned {
    frames: VecDeque<Bytes>,
    trailers: Option<HeaderMap>,
    stutter: bool,
    stalled: bool,
    hint: SizeHint,
}

impl Planned {
    fn new<'a>(chunks: impl IntoIterator<Item = &'a [u8]>) -> Self {
        Planned {
            frames: chunks.into_iter().map(Bytes::copy_from_slice).collect(),
            trailers: None,
            stutter: false,
            stalled: false,
            hint: SizeHint::new(),
        }
    }

    fn with_trailers(mut self, trailers: HeaderMap) -> Self {
        self.trailers = Some(trailers);
        self
    }

    fn stuttering(mut self) -> Self {
        self.stutter = true;
        self
    }
}

impl Body for Planned {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        if self.stutter {
            self.stalled = !self.stalled;
            if self.stalled {
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
        }
        if let Some(data) = self.frames.pop_front() {
            return Poll::Ready(Some(Ok(Frame::data(data))));
        }
        Poll::Ready(self.trailers.take().map(|trailers| Ok(Frame::trailers(trailers))))
    }

    fn size_hint(&self) -> SizeHint {
        self.hint
    }
}

/// A waker that counts its wakes.
#[derive(Default)]
struct Counting(AtomicU32);

impl Wake for Counting {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// What one read of an attempt's body gave.
#[derive(Debug, Default, PartialEq)]
struct Read {
    bytes: Vec<u8>,
    trailers: Option<HeaderMap>,
    /// How it stopped: `None` at the body's end, `Some("pending")` when it
    /// waits for the original, or the error's name.
    stopped: Option<&'static str>,
    frames: usize,
}

/// Polls `body` for at most `frames` frames (the body's `Pending`s that
/// wake at once are polled again), with `waker`.
fn read_with<B: Body + Unpin>(body: &mut ReplayBody<B>, frames: usize, waker: &Waker) -> Read
where
    B::Error: fmt::Debug,
{
    let mut cx = Context::from_waker(waker);
    let mut read = Read::default();
    let mut idle = 0;
    while read.frames < frames {
        match Pin::new(&mut *body).poll_frame(&mut cx) {
            Poll::Pending => {
                idle += 1;
                if idle > 4 {
                    read.stopped = Some("pending");
                    return read;
                }
            }
            Poll::Ready(None) => return read,
            Poll::Ready(Some(Err(error))) => {
                read.stopped = Some(match error {
                    ReplayError::Body(_) => "body",
                    ReplayError::Superseded => "superseded",
                    ReplayError::Unavailable => "unavailable",
                });
                return read;
            }
            Poll::Ready(Some(Ok(frame))) => {
                idle = 0;
                read.frames += 1;
                match frame.into_data() {
                    Ok(data) => read.bytes.extend_from_slice(&data),
                    Err(frame) => read.trailers = frame.into_trailers().ok(),
                }
            }
        }
    }
    read.stopped = Some("paused");
    read
}

fn read<B: Body + Unpin>(body: &mut ReplayBody<B>, frames: usize) -> Read
where
    B::Error: fmt::Debug,
{
    read_with(body, frames, Waker::noop())
}

fn read_all<B: Body + Unpin>(body: &mut ReplayBody<B>) -> Read
where
    B::Error: fmt::Debug,
{
    read(body, usize::MAX)
}

fn trailers(status: &'static str) -> HeaderMap {
    let mut trailers = HeaderMap::new();
    trailers.insert("grpc-status", http::HeaderValue::from_static(status));
    trailers
}

fn wrap<B: Body + Unpin>(body: B, limits: &ReplayLimits) -> Replay<B> {
    match Replay::try_new(body, limits) {
        Ok(replay) => replay,
        Err(_) => panic!("the body was refused"),
    }
}

#[test]
fn every_attempt_sends_every_byte_and_the_trailers() {
    let limits = ReplayLimits::new();
    let replay = wrap(
        Planned::new([&b"ab"[..], b"cd", b"ef"]).with_trailers(trailers("0")),
        &limits,
    );
    let reads: Vec<Read> = (0..3).map(|_| read_all(&mut replay.attempt().unwrap())).collect();
    for (n, read) in reads.iter().enumerate() {
        assert_eq!(read.bytes, b"abcdef", "attempt {}", n + 1);
        assert_eq!(read.trailers, Some(trailers("0")), "attempt {}", n + 1);
        assert_eq!((read.stopped, read.frames), (None, 4), "attempt {}", n + 1);
    }
    assert!(replay.is_replayable());
    assert_eq!((replay.kept_bytes(), limits.reserved()), (6, 6));
}

#[test]
fn the_frames_are_the_original_s_not_copies() {
    let original = Bytes::from_static(b"static data");
    let replay = wrap(Planned::new([&original[..]]), &ReplayLimits::new());
    let mut first = replay.attempt().unwrap();
    let mut cx = Context::from_waker(Waker::noop());
    let Poll::Ready(Some(Ok(frame))) = Pin::new(&mut first).poll_frame(&mut cx) else {
        panic!("one frame");
    };
    let mut second = replay.attempt().unwrap();
    let Poll::Ready(Some(Ok(again))) = Pin::new(&mut second).poll_frame(&mut cx) else {
        panic!("one frame again");
    };
    let (sent, replayed) = (frame.into_data().unwrap(), again.into_data().unwrap());
    assert_eq!(sent.as_ptr(), replayed.as_ptr(), "one buffer, shared");
}

/// A server answers before the request body ends (RFC 9113, 8.1): the
/// retry sends what was kept, then the rest of the original, and the
/// attempt it replaced is woken and told it is over.
#[test]
fn a_retry_after_an_early_answer_sends_the_rest_once() {
    let (sender, streamed) = pipe();
    let replay = wrap(streamed, &ReplayLimits::new());
    sender.send(Frame::data(Bytes::from_static(b"one,")));
    sender.send(Frame::data(Bytes::from_static(b"two,")));

    let waker = Arc::new(Counting::default());
    let mut first = replay.attempt().unwrap();
    let read_first = read_with(&mut first, usize::MAX, &Waker::from(Arc::clone(&waker)));
    assert_eq!(
        (read_first.bytes.as_slice(), read_first.stopped),
        (&b"one,two,"[..], Some("pending"))
    );

    let mut second = replay.attempt().unwrap();
    assert_eq!(waker.0.load(Ordering::SeqCst), 1, "the waiting attempt is woken");
    assert_eq!(read(&mut first, 1).stopped, Some("superseded"));
    assert!(!first.is_end_stream(), "superseded is not a whole body");

    let kept = read_all(&mut second);
    assert_eq!(
        (kept.bytes.as_slice(), kept.stopped),
        (&b"one,two,"[..], Some("pending"))
    );
    sender.send(Frame::data(Bytes::from_static(b"three")));
    sender.send(Frame::trailers(trailers("0")));
    drop(sender);
    let rest = read_all(&mut second);
    assert_eq!((rest.bytes.as_slice(), rest.stopped), (&b"three"[..], None));
    assert_eq!(rest.trailers, Some(trailers("0")));

    let third = read_all(&mut replay.attempt().unwrap());
    assert_eq!(third.bytes, b"one,two,three", "a third attempt gets the whole body");
}

/// linkerd2-proxy#4621: a replay that began before anything was kept sent
/// the first chunk twice.
#[test]
fn a_retry_before_any_frame_was_read_sends_each_once() {
    let replay = wrap(Planned::new([&b"a"[..], b"b"]).stuttering(), &ReplayLimits::new());
    let mut first = replay.attempt().unwrap();
    assert_eq!(read(&mut first, 0).bytes, b"");
    let mut second = replay.attempt().unwrap();
    assert_eq!(read_all(&mut second).bytes, b"ab");
    let late = read_all(&mut first);
    assert_eq!(
        (late.bytes.as_slice(), late.stopped),
        (&b"ab"[..], None),
        "the replaced attempt may still send the kept frames, each once"
    );
}

#[test]
fn past_the_cap_the_attempt_goes_on_and_the_call_is_not_replayable() {
    let limits = ReplayLimits::new().per_call(5);
    let replay = wrap(Planned::new([&b"abc"[..], b"def", b"gh"]), &limits);
    let mut first = replay.attempt().unwrap();
    assert_eq!(read(&mut first, 1).bytes, b"abc");
    assert!(replay.is_replayable(), "3 bytes fit in 5");
    assert_eq!(limits.reserved(), 3);
    assert_eq!(read(&mut first, 1).bytes, b"def");
    assert!(!replay.is_replayable(), "6 bytes do not");
    assert_eq!(limits.reserved(), 0, "the kept frames are dropped at once");
    let rest = read_all(&mut first);
    assert_eq!((rest.bytes.as_slice(), rest.stopped), (&b"gh"[..], None));
    assert!(replay.attempt().is_none());
}

#[test]
fn a_body_that_fills_the_cap_exactly_is_kept() {
    let limits = ReplayLimits::new().per_call(6);
    let replay = wrap(Planned::new([&b"abc"[..], b"def"]), &limits);
    assert_eq!(read_all(&mut replay.attempt().unwrap()).bytes, b"abcdef");
    assert!(replay.is_replayable());
    assert_eq!(read_all(&mut replay.attempt().unwrap()).bytes, b"abcdef");
}

#[test]
fn a_size_hint_over_the_cap_is_not_wrapped() {
    let limits = ReplayLimits::new().per_call(10);
    assert_eq!(
        Replay::try_new(String::from("eleven byte"), &limits).err().as_deref(),
        Some("eleven byte")
    );
    assert!(Replay::try_new(String::from("ten bytes!"), &limits).is_ok());
    let mut unknown = Planned::new([&b"x"[..]]);
    unknown.hint.set_upper(1 << 40);
    assert!(
        Replay::try_new(unknown, &limits).is_ok(),
        "only the lower bound refuses"
    );
    let mut at_least = Planned::new([&b"x"[..]]);
    at_least.hint.set_lower(11);
    assert!(Replay::try_new(at_least, &limits).is_err());
}

#[test]
fn the_shared_reservation_bounds_every_call_together() {
    let limits = ReplayLimits::new().shared(10);
    let first = wrap(Planned::new([&b"123456"[..]]), &limits);
    let second = wrap(Planned::new([&b"abc"[..], b"def"]), &limits.clone());
    assert_eq!(read_all(&mut first.attempt().unwrap()).bytes, b"123456");
    let mut attempt = second.attempt().unwrap();
    assert_eq!(read(&mut attempt, 1).bytes, b"abc");
    assert!(second.is_replayable(), "9 of 10 reserved");
    assert_eq!(
        read_all(&mut attempt).bytes,
        b"def",
        "the attempt goes on past the reservation"
    );
    assert!(!second.is_replayable(), "12 would not fit in 10");
    assert_eq!(limits.reserved(), 6, "the second call gave back its 3");
    assert!(first.is_replayable());
}

#[test]
fn the_reservation_is_given_back_when_the_last_handle_drops() {
    let limits = ReplayLimits::new();
    let replay = wrap(Planned::new([&b"abc"[..], b"def"]), &limits);
    let mut attempt = replay.attempt().unwrap();
    assert_eq!(read_all(&mut attempt).bytes, b"abcdef");
    assert_eq!(limits.reserved(), 6);
    drop(replay);
    assert_eq!(limits.reserved(), 6, "an attempt still being sent holds the state");
    drop(attempt);
    assert_eq!(limits.reserved(), 0);
}

#[test]
fn commit_gives_back_what_the_newest_attempt_has_sent() {
    let limits = ReplayLimits::new();
    let replay = wrap(
        Planned::new([&b"ab"[..], b"cd", b"ef"]).with_trailers(trailers("0")),
        &limits,
    );
    let mut first = replay.attempt().unwrap();
    assert_eq!(read_all(&mut first).frames, 4);
    let mut second = replay.attempt().unwrap();
    assert_eq!(read(&mut second, 1).bytes, b"ab");
    replay.commit();
    assert!(!replay.is_replayable());
    assert_eq!(
        limits.reserved(),
        4,
        "\"ab\" is sent; \"cd\" and \"ef\" are still to send"
    );
    assert_eq!(read(&mut second, 1).bytes, b"cd");
    assert_eq!(limits.reserved(), 2);
    let rest = read_all(&mut second);
    assert_eq!(
        (rest.bytes.as_slice(), rest.trailers),
        (&b"ef"[..], Some(trailers("0")))
    );
    assert_eq!(limits.reserved(), 0);
    assert!(replay.attempt().is_none(), "committed: no further attempt");
}

#[test]
fn an_attempt_behind_a_dropped_buffer_is_told_so() {
    let limits = ReplayLimits::new().per_call(4);
    let replay = wrap(Planned::new([&b"ab"[..], b"cd", b"ef"]), &limits);
    let mut first = replay.attempt().unwrap();
    assert_eq!(read(&mut first, 2).bytes, b"abcd");
    let mut second = replay.attempt().unwrap();
    assert_eq!(
        read_all(&mut second).bytes,
        b"abcdef",
        "past the cap while it reads the rest"
    );
    assert_eq!(read_all(&mut first).stopped, Some("unavailable"));
}

#[test]
fn a_body_error_reaches_the_attempt_and_ends_the_replays() {
    let (sender, streamed) = pipe();
    let limits = ReplayLimits::new();
    let replay = wrap(streamed, &limits);
    sender.send(Frame::data(Bytes::from_static(b"partial")));
    sender.abort(std::io::Error::other("client went away"));
    let read = read_all(&mut replay.attempt().unwrap());
    assert_eq!((read.bytes.as_slice(), read.stopped), (&b"partial"[..], Some("body")));
    assert!(!replay.is_replayable());
    assert!(replay.attempt().is_none());
    assert_eq!(limits.reserved(), 0);
}

#[test]
fn each_attempt_s_size_hint_and_end_are_its_own() {
    let replay = wrap(String::from("hello"), &ReplayLimits::new());
    let mut first = replay.attempt().unwrap();
    assert_eq!(first.size_hint().exact(), Some(5));
    assert!(!first.is_end_stream());
    assert_eq!(read_all(&mut first).bytes, b"hello");
    assert!(first.is_end_stream());
    let mut second = replay.attempt().unwrap();
    assert_eq!(second.size_hint().exact(), Some(5), "the kept bytes");
    assert!(!second.is_end_stream());
    assert_eq!(read(&mut second, 1).bytes, b"hello");
    assert_eq!(second.size_hint().exact(), Some(0));
    assert!(second.is_end_stream());

    let empty = wrap(String::new(), &ReplayLimits::new());
    assert!(empty.attempt().unwrap().is_end_stream(), "an empty body ends at once");
}

#[test]
fn the_error_says_what_happened() {
    let said: Vec<String> = [
        ReplayError::Body(std::io::Error::other("reset")),
        ReplayError::Superseded,
        ReplayError::Unavailable,
    ]
    .iter()
    .map(ToString::to_string)
    .collect();
    assert_eq!(
        said,
        [
            "reset",
            "a later attempt of the call sends the rest of the request body",
            "the request body is no longer kept for this attempt",
        ]
    );
    let boxed: Box<dyn std::error::Error + Send + Sync> = Box::new(ReplayError::<std::io::Error>::Unavailable);
    assert!(boxed.source().is_none());
}

/// `data` cut at `cuts` (positions, any order, repeats allowed: empty
/// frames too).
fn chunks(data: &[u8], cuts: &[usize]) -> Vec<Vec<u8>> {
    let mut at: Vec<usize> = cuts.iter().map(|cut| cut % (data.len() + 1)).collect();
    at.sort_unstable();
    let mut out = Vec::new();
    let mut from = 0;
    for cut in at.into_iter().chain([data.len()]) {
        out.push(data[from..cut].to_vec());
        from = cut;
    }
    out
}

proptest! {
    /// For any chunking, any cap, and retries started after any number of
    /// frames: each attempt sends a prefix of the body (every byte at most
    /// once, in order); the attempt that reads to the end sends all of it;
    /// a retry is refused exactly when the body went past the cap.
    #[test]
    fn every_byte_once_per_attempt_in_order(
        data in proptest::collection::vec(any::<u8>(), 0..200),
        cuts in proptest::collection::vec(any::<usize>(), 0..12),
        retries_after in proptest::collection::vec(0usize..16, 0..6),
        cap in prop_oneof![Just(usize::MAX), 0usize..250],
        stutter in any::<bool>(),
        with_trailers in any::<bool>(),
    ) {
        let pieces = chunks(&data, &cuts);
        let mut body = Planned::new(pieces.iter().map(Vec::as_slice));
        body.stutter = stutter;
        if with_trailers {
            body.trailers = Some(trailers("14"));
        }
        let limits = ReplayLimits::new().per_call(cap);
        let replay = wrap(body, &limits);
        let mut current = replay.attempt().unwrap();
        let mut sent = Vec::new();
        let mut got_trailers = false;
        for frames in retries_after {
            let read = read(&mut current, frames);
            sent.extend_from_slice(&read.bytes);
            got_trailers |= read.trailers.is_some();
            prop_assert!(data.starts_with(&sent), "in order, never twice: {:?}", sent);
            let Some(next) = replay.attempt() else {
                prop_assert!(data.len() > cap, "refused under the cap");
                break;
            };
            // The superseded attempt sends no byte it has not read before.
            let after = read_all(&mut current);
            prop_assert!(data.starts_with(&[sent.as_slice(), after.bytes.as_slice()].concat()));
            current = next;
            sent.clear();
            got_trailers = false;
        }
        let rest = read_all(&mut current);
        sent.extend_from_slice(&rest.bytes);
        prop_assert_eq!(rest.stopped, None);
        prop_assert_eq!(&sent, &data, "the last attempt sends the whole body");
        prop_assert_eq!(got_trailers || rest.trailers.is_some(), with_trailers);
        prop_assert_eq!(replay.is_replayable(), data.len() <= cap);
        prop_assert_eq!(limits.reserved(), if data.len() <= cap { data.len() } else { 0 });
        drop((current, replay));
        prop_assert_eq!(limits.reserved(), 0);
    }
}

/// Each attempt's body may go to another task (hyper's and tonic's
/// connections poll request bodies on their own tasks).
#[test]
fn the_call_and_its_attempts_can_cross_threads() {
    fn shared<T: Send + Sync + 'static>() {}
    shared::<Replay<Planned>>();
    shared::<ReplayBody<Planned>>();
    shared::<ReplayLimits>();
}

proptest! {
    /// Committed at any point of a retry's replay, the retry still sends
    /// the whole body once, the call is no longer replayable, and every
    /// reserved byte is given back by the time it has sent them.
    #[test]
    fn a_commit_at_any_point_keeps_the_retry_whole(
        data in proptest::collection::vec(any::<u8>(), 0..200),
        cuts in proptest::collection::vec(any::<usize>(), 0..12),
        first_reads in 0usize..16,
        commit_after in 0usize..16,
    ) {
        let pieces = chunks(&data, &cuts);
        let limits = ReplayLimits::new();
        let replay = wrap(Planned::new(pieces.iter().map(Vec::as_slice)), &limits);
        let mut first = replay.attempt().unwrap();
        let early = read(&mut first, first_reads);
        prop_assert!(data.starts_with(&early.bytes));
        let mut second = replay.attempt().unwrap();
        let before = read(&mut second, commit_after);
        replay.commit();
        prop_assert!(!replay.is_replayable());
        prop_assert!(replay.attempt().is_none());
        let after = read_all(&mut second);
        prop_assert_eq!([before.bytes, after.bytes].concat(), data);
        prop_assert_eq!(after.stopped, None);
        prop_assert_eq!(limits.reserved(), 0);
    }
}
