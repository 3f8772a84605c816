//! `Replay`: a streaming request body kept for retries.
//!
//! A streaming request body kept for the attempts after the
//! first, up to a cap; [`ReplayBody`], the body each attempt sends;
//! [`ReplayLimits`], the caps (per call, and a reservation shared by every
//! call of a layer).
//!
//! The body is a lazy tee (linkerd's `ReplayBody` is the model): each frame
//! of the original body goes out at once to the attempt reading it, and a
//! reference-counted clone of it (a `Bytes`, not a copy) is kept for the
//! next attempt, trailers included. The next attempt sends the kept frames,
//! then goes on with the frames of the original that no attempt has read
//! yet: a server may answer before the request body ends (RFC 9113,
//! section 8.1), and the retry then sends the rest, never a byte twice.
//!
//! One state, behind a `std` mutex held only inside a poll (never across
//! an `.await`), belongs to the call ([`Replay`]); each attempt's
//! [`ReplayBody`] is a reference to it and a cursor.

mod limits;
mod tee;

use core::fmt;
use core::pin::Pin;
use core::task::{Context, Waker};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use bytes::Bytes;
use http::HeaderMap;
use http_body::{Body, SizeHint};

pub use self::limits::ReplayLimits;
use self::tee::NextFrame;

/// Why an attempt's [`ReplayBody`] could not give its next frame.
///
/// ```
/// use backoff_tower::ReplayError;
/// let error: ReplayError<std::io::Error> = ReplayError::Superseded;
/// assert_eq!(error.to_string(), "a later attempt of the call sends the rest of the request body");
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum ReplayError<E> {
    /// The original body failed: its error, given to the attempt that read
    /// it. The call can no longer be replayed.
    Body(E),
    /// A later attempt of the same call was started, and it sends the rest
    /// of the body: this attempt is over (its stream should be reset, not
    /// ended as if the body were whole).
    Superseded,
    /// The frames this attempt needs are no longer kept: the call went past
    /// its cap, was committed, or its body failed before.
    Unavailable,
}

impl<E: fmt::Display> fmt::Display for ReplayError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReplayError::Body(error) => error.fmt(f),
            ReplayError::Superseded => f.write_str("a later attempt of the call sends the rest of the request body"),
            ReplayError::Unavailable => f.write_str("the request body is no longer kept for this attempt"),
        }
    }
}

/// An error when the body's error is one (`std::io::Error`, `tonic::Status`,
/// tower's `BoxError`), so the attempt's error converts into a `BoxError`.
impl<E: fmt::Debug + fmt::Display> std::error::Error for ReplayError<E> {}

/// Where one attempt is in the body.
#[derive(Debug)]
struct Cursor {
    /// The attempt's number, from 1: only the newest attempt reads the
    /// original body.
    generation: u64,
    /// The index, among the original's data frames, of the next one to send.
    next: usize,
    /// The trailers were sent.
    trailers_sent: bool,
    /// The body ended for this attempt.
    done: bool,
    /// The call could no longer be replayed when this attempt was made:
    /// its first poll is [`ReplayError::Unavailable`].
    lost: bool,
}

/// The kept data frames, oldest first: the first inline, the others in a
/// deque. A unary gRPC call's body is one frame: keeping it allocates
/// nothing (a deque allocates on its first push, and is freed with the
/// call: two calls of the allocator per call otherwise).
#[derive(Default)]
struct Frames {
    /// The oldest; `None` only when there is none (`rest` is then empty).
    head: Option<Bytes>,
    rest: VecDeque<Bytes>,
}

impl Frames {
    fn push_back(&mut self, data: Bytes) {
        if self.head.is_none() {
            self.head = Some(data);
        } else {
            self.rest.push_back(data);
        }
    }

    fn pop_front(&mut self) -> Option<Bytes> {
        let head = self.head.take()?;
        self.head = self.rest.pop_front();
        Some(head)
    }

    fn get(&self, index: usize) -> Option<&Bytes> {
        match index.checked_sub(1) {
            None => self.head.as_ref(),
            Some(index) => self.rest.get(index),
        }
    }

    fn clear(&mut self) {
        self.head = None;
        self.rest.clear();
    }

    fn iter(&self) -> impl Iterator<Item = &Bytes> {
        self.head.iter().chain(&self.rest)
    }
}

/// The one state of a call, shared by its attempts.
struct State<B> {
    /// The original body; `None` once it ended or failed.
    original: Option<B>,
    /// The original returned its end.
    ended: bool,
    /// The original returned an error.
    failed: bool,
    /// Whether frames are still kept for a later attempt: false once past a
    /// cap, committed, or failed.
    keeping: bool,
    /// The data frames read from the original so far.
    read: usize,
    /// The kept data frames, of index `first` onwards.
    kept: Frames,
    /// The index of `kept`'s first frame.
    first: usize,
    /// The bytes in `kept`, reserved in `limits`.
    held: usize,
    /// The original's trailers were read.
    trailers_read: bool,
    /// The original's trailers, when kept.
    trailers: Option<HeaderMap>,
    /// The newest attempt's number (0 before the first).
    generation: u64,
    /// Where the newest attempt is: kept frames before it may go once the
    /// call no longer keeps frames.
    newest_next: usize,
    /// The wakers of the attempts waiting for the original's next frame.
    waiting: Vec<Waker>,
    /// Attempts run side by side (hedges): a new attempt supersedes none,
    /// and whichever is ahead reads the original for the others.
    side_by_side: bool,
    limits: ReplayLimits,
}

impl<B> Drop for State<B> {
    fn drop(&mut self) {
        self.limits.release(self.held);
    }
}

/// The state, whether or not a panic in another attempt's poll poisoned
/// the lock (every update leaves it consistent).
fn lock<B>(state: &Mutex<State<B>>) -> MutexGuard<'_, State<B>> {
    state.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A request body kept for replay, owned by one call: [`attempt`](Self::attempt)
/// makes each attempt's [`ReplayBody`].
///
/// Each frame goes out at once to the attempt that reads it; the data
/// frames (as reference-counted `Bytes`: a body of `Bytes` is not copied;
/// another `Buf` is copied once into one) and the trailers are kept, up to
/// the caps of [`ReplayLimits`]. Each later attempt sends the kept frames,
/// then the frames of the original that no attempt has read yet; only the
/// newest attempt reads the original. Past a cap, the kept frames are
/// dropped, the attempt reading goes on, and the call can no longer be
/// replayed ([`is_replayable`](Self::is_replayable) turns false and
/// `attempt` gives `None`).
///
/// The original body must be `Unpin` (a body that is not: `Box::pin` it).
///
/// ```
/// use backoff_tower::{Replay, ReplayLimits};
/// use http_body_util::BodyExt;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let limits = ReplayLimits::new();
/// let Ok(replay) = Replay::try_new(String::from("order #17"), &limits) else {
///     panic!("a 9-byte body fits the cap");
/// };
/// let first = replay.attempt().unwrap().collect().await.unwrap().to_bytes();
/// assert_eq!(limits.reserved(), 9, "kept for a retry");
/// let second = replay.attempt().unwrap().collect().await.unwrap().to_bytes();
/// assert_eq!((first, second), ("order #17".into(), "order #17".into()));
/// drop(replay);
/// assert_eq!(limits.reserved(), 0, "given back when the call ends");
/// # }
/// ```
pub struct Replay<B> {
    state: Arc<Mutex<State<B>>>,
}

impl<B> fmt::Debug for Replay<B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = lock(&self.state);
        f.debug_struct("Replay")
            .field("attempts", &state.generation)
            .field("kept_bytes", &state.held)
            .field("replayable", &state.keeping)
            .finish_non_exhaustive()
    }
}

impl<B: Body + Unpin> Replay<B> {
    /// Wraps `body` for replay, or gives it back (`Err(body)`: send it
    /// once, unretried) when its size hint already says it is larger than
    /// [`ReplayLimits::per_call`].
    ///
    /// ```
    /// use backoff_tower::{Replay, ReplayLimits};
    ///
    /// let small = ReplayLimits::new().per_call(4);
    /// assert!(Replay::try_new(String::from("ok"), &small).is_ok());
    /// let given_back = Replay::try_new(String::from("too large"), &small).unwrap_err();
    /// assert_eq!(given_back, "too large");
    /// ```
    pub fn try_new(body: B, limits: &ReplayLimits) -> Result<Self, B> {
        if body.size_hint().lower() > limits.get_per_call() as u64 {
            return Err(body);
        }
        Ok(Replay::keeping(Some(body), limits, true))
    }

    /// A call of `body` that keeps its frames for replay (`keep`), or sends
    /// them once.
    fn keeping(body: Option<B>, limits: &ReplayLimits, keep: bool) -> Self {
        let state = State {
            original: body,
            ended: false,
            failed: false,
            keeping: keep,
            read: 0,
            kept: Frames::default(),
            first: 0,
            held: 0,
            trailers_read: false,
            trailers: None,
            generation: 0,
            newest_next: 0,
            waiting: Vec::new(),
            side_by_side: false,
            limits: limits.clone(),
        };
        Replay {
            state: Arc::new(Mutex::new(state)),
        }
    }

    /// The body of the next attempt, from its first byte; `None` when the
    /// call can no longer be replayed (the first attempt always gets one).
    ///
    /// The attempt before it is superseded: what it has not yet read of the
    /// original is the new attempt's to send, and it gets
    /// [`ReplayError::Superseded`] (and is woken) if it asks for more.
    ///
    /// ```
    /// use backoff_tower::{Replay, ReplayLimits};
    /// use bytes::Bytes;
    /// use http_body::Frame;
    /// use http_body_util::{BodyExt, StreamBody};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// // A streamed body (no size hint) that turns out larger than the cap.
    /// let frames = [Frame::data(Bytes::from("too")), Frame::data(Bytes::from(" large"))];
    /// let streamed = StreamBody::new(futures_util::stream::iter(frames.map(Ok::<_, std::io::Error>)));
    ///
    /// let replay = Replay::try_new(streamed, &ReplayLimits::new().per_call(4)).unwrap();
    /// let sent = replay.attempt().unwrap().collect().await.unwrap().to_bytes();
    /// assert_eq!(sent, "too large", "the first attempt gets every byte");
    /// assert!(replay.attempt().is_none(), "past the cap: no second attempt");
    /// # }
    /// ```
    pub fn attempt(&self) -> Option<ReplayBody<B>> {
        let mut state = lock(&self.state);
        if state.generation > 0 && !state.keeping {
            return None;
        }
        Some(state.next_attempt(&self.state, false))
    }

    /// The body of the next attempt; when the call can no longer be
    /// replayed, one whose first frame is [`ReplayError::Unavailable`]
    /// (the attempt's service fails it, and no byte is sent twice).
    pub(crate) fn attempt_or_unavailable(&self) -> ReplayBody<B> {
        let mut state = lock(&self.state);
        let lost = state.generation > 0 && !state.keeping;
        state.next_attempt(&self.state, lost)
    }
}

impl<B: Body + Unpin> Replay<B> {
    /// A call of `body` that keeps nothing: its one attempt sends `body`
    /// as it comes (no body: its attempt's first frame is
    /// [`ReplayError::Unavailable`]), for a service whose bodies are
    /// `ReplayBody`s.
    pub(crate) fn unkept(body: Option<B>, limits: &ReplayLimits) -> Self {
        Replay::keeping(body, limits, false)
    }
}

impl<B> Replay<B> {
    /// Another handle on the same call's body (a layer keeps one in the
    /// call and gives one to each attempt).
    pub(crate) fn handle(&self) -> Self {
        Replay {
            state: Arc::clone(&self.state),
        }
    }

    /// Whether another attempt may still be made: nothing has gone past a
    /// cap, the body has not failed, the call is not committed.
    ///
    /// ```
    /// use backoff_tower::{Replay, ReplayLimits};
    /// let replay = Replay::try_new(String::from("body"), &ReplayLimits::new()).unwrap();
    /// assert!(replay.is_replayable());
    /// replay.commit();
    /// assert!(!replay.is_replayable());
    /// ```
    #[must_use]
    pub fn is_replayable(&self) -> bool {
        lock(&self.state).keeping
    }

    /// Lets the attempts run side by side (hedges): a new attempt no
    /// longer supersedes the one before; whichever is ahead reads the
    /// original, and the others send the frames it kept.
    pub(crate) fn side_by_side(&self) {
        lock(&self.state).side_by_side = true;
    }

    /// Commits the call: no attempt follows the newest one. Frames are no
    /// longer kept, and those the newest attempt has sent are dropped and
    /// their bytes given back now (the rest as it sends them).
    ///
    /// ```
    /// use backoff_tower::{Replay, ReplayLimits};
    /// use http_body_util::BodyExt;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let limits = ReplayLimits::new();
    /// let replay = Replay::try_new(String::from("body"), &limits).unwrap();
    /// let body = replay.attempt().unwrap().collect().await.unwrap().to_bytes();
    /// assert_eq!((body.len(), limits.reserved()), (4, 4));
    /// replay.commit();
    /// assert_eq!(limits.reserved(), 0);
    /// assert!(replay.attempt().is_none());
    /// # }
    /// ```
    pub fn commit(&self) {
        let mut state = lock(&self.state);
        state.keeping = false;
        state.trim();
    }

    /// The bytes this call keeps now.
    ///
    /// ```
    /// use backoff_tower::{Replay, ReplayLimits};
    /// let replay = Replay::try_new(String::from("body"), &ReplayLimits::new()).unwrap();
    /// assert_eq!(replay.kept_bytes(), 0, "nothing read yet");
    /// ```
    #[must_use]
    pub fn kept_bytes(&self) -> usize {
        lock(&self.state).held
    }
}

/// The body one attempt sends, made by [`Replay::attempt`]: the frames kept
/// from earlier attempts, then those of the original no attempt has read.
/// Its data is `Bytes`; its error is [`ReplayError`].
///
/// ```
/// use backoff_tower::{Replay, ReplayBody, ReplayLimits};
/// use http_body::Body;
///
/// let replay = Replay::try_new(String::from("hello"), &ReplayLimits::new()).unwrap();
/// let body: ReplayBody<String> = replay.attempt().unwrap();
/// assert_eq!(body.size_hint().exact(), Some(5));
/// assert!(!body.is_end_stream());
/// ```
pub struct ReplayBody<B> {
    state: Arc<Mutex<State<B>>>,
    cursor: Cursor,
}

impl<B> fmt::Debug for ReplayBody<B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReplayBody")
            .field("attempt", &self.cursor.generation)
            .field("next_frame", &self.cursor.next)
            .finish_non_exhaustive()
    }
}

impl<B: Body + Unpin> Body for ReplayBody<B> {
    type Data = Bytes;
    type Error = ReplayError<B::Error>;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> NextFrame<B::Error> {
        let ReplayBody { state, cursor } = self.get_mut();
        lock(state).poll_for(cursor, cx)
    }

    fn is_end_stream(&self) -> bool {
        lock(&self.state).is_end_for(&self.cursor)
    }

    fn size_hint(&self) -> SizeHint {
        lock(&self.state).hint_for(&self.cursor)
    }
}

#[cfg(test)]
mod tests;
