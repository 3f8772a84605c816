//! The lazy tee: how a call's attempts read its one body.
//!
//! Only the newest attempt reads the original (all of them, side by side,
//! for hedges); the frames it reads are kept for the next attempt, up to
//! the caps, and the kept ones an attempt has sent are dropped once the
//! call no longer keeps frames.

use core::pin::Pin;
use core::task::{Context, Poll};
use std::sync::{Arc, Mutex};

use bytes::{Buf, Bytes};
use http_body::{Body, Frame, SizeHint};

use super::{Cursor, ReplayBody, ReplayError, State};

/// `a + b`, saturating instead of overflowing.
fn add_hints(a: &SizeHint, b: u64) -> SizeHint {
    let mut sum = SizeHint::new();
    sum.set_lower(a.lower().saturating_add(b));
    if let Some(upper) = a.upper().and_then(|upper| upper.checked_add(b)) {
        sum.set_upper(upper);
    }
    sum
}

impl<B> State<B> {
    /// Keeps `data`, the original's data frame just read, if it fits both
    /// caps; otherwise stops keeping frames and gives back what is kept
    /// (the attempt reading it is the newest, and has sent every kept
    /// frame).
    fn keep(&mut self, data: &Bytes) {
        self.read += 1;
        if !self.keeping {
            return;
        }
        let len = data.len();
        let fits = self
            .held
            .checked_add(len)
            .is_some_and(|held| held <= self.limits.get_per_call());
        if fits && self.limits.reserve(len) {
            self.kept.push_back(data.clone());
            self.held += len;
        } else {
            self.stop_keeping();
        }
    }

    /// No more replays: every kept frame goes, and its bytes are given back.
    fn stop_keeping(&mut self) {
        self.keeping = false;
        self.kept.clear();
        self.first = self.read;
        self.trailers = None;
        self.limits.release(core::mem::take(&mut self.held));
    }

    /// Drops the kept frames the newest attempt has sent, once the call no
    /// longer keeps frames.
    pub(super) fn trim(&mut self) {
        if self.keeping {
            return;
        }
        while self.first < self.newest_next {
            let Some(data) = self.kept.pop_front() else { break };
            self.first += 1;
            self.held -= data.len();
            self.limits.release(data.len());
        }
    }

    /// Wakes every attempt waiting for the original's next frame.
    #[inline]
    fn wake_waiting(&mut self) {
        if !self.waiting.is_empty() {
            self.wake_all();
        }
    }

    /// Wakes every waiting attempt (out of line: mostly there are none).
    #[inline(never)]
    fn wake_all(&mut self) {
        for waiting in self.waiting.drain(..) {
            waiting.wake();
        }
    }

    /// Records that `cursor` moved, when it is the newest attempt's.
    fn moved(&mut self, cursor: &Cursor) {
        if cursor.generation == self.generation {
            self.newest_next = cursor.next;
            self.trim();
        }
    }

    /// The bytes of the kept frames from `cursor` on.
    fn kept_ahead(&self, cursor: &Cursor) -> u64 {
        let skip = cursor.next.saturating_sub(self.first);
        self.kept.iter().skip(skip).map(|data| data.len() as u64).sum()
    }
}

/// What one poll of an attempt's body gives.
pub(super) type NextFrame<E> = Poll<Option<Result<Frame<Bytes>, ReplayError<E>>>>;

impl<B: Body + Unpin> State<B> {
    /// The next frame for the attempt at `cursor`.
    pub(super) fn poll_for(&mut self, cursor: &mut Cursor, cx: &mut Context<'_>) -> NextFrame<B::Error> {
        if cursor.done {
            return Poll::Ready(None);
        }
        if cursor.lost {
            cursor.done = true;
            return Poll::Ready(Some(Err(ReplayError::Unavailable)));
        }
        if cursor.next < self.read {
            // A frame read by an earlier attempt: kept, or gone.
            let Some(data) = cursor.next.checked_sub(self.first).and_then(|i| self.kept.get(i)) else {
                return Poll::Ready(Some(Err(ReplayError::Unavailable)));
            };
            let data = data.clone();
            cursor.next += 1;
            self.moved(cursor);
            return Poll::Ready(Some(Ok(Frame::data(data))));
        }
        if self.trailers_read {
            cursor.done = true;
            if cursor.trailers_sent {
                return Poll::Ready(None);
            }
            cursor.trailers_sent = true;
            return Poll::Ready(Some(
                self.trailers
                    .clone()
                    .map(Frame::trailers)
                    .ok_or(ReplayError::Unavailable),
            ));
        }
        if self.ended || self.original.as_ref().is_some_and(Body::is_end_stream) {
            self.ended = true;
            cursor.done = true;
            return Poll::Ready(None);
        }
        if cursor.generation != self.generation && !self.side_by_side {
            return Poll::Ready(Some(Err(ReplayError::Superseded)));
        }
        let Some(original) = self.original.as_mut() else {
            return Poll::Ready(Some(Err(ReplayError::Unavailable)));
        };
        let polled = Pin::new(original).poll_frame(cx);
        if polled.is_pending() {
            if !self.waiting.iter().any(|waiting| waiting.will_wake(cx.waker())) {
                self.waiting.push(cx.waker().clone());
            }
            return Poll::Pending;
        }
        // The others waiting for this frame read it from what is kept.
        self.wake_waiting();
        match polled {
            Poll::Pending => Poll::Pending,
            Poll::Ready(None) => {
                self.ended = true;
                self.original = None;
                cursor.done = true;
                Poll::Ready(None)
            }
            Poll::Ready(Some(Err(error))) => {
                self.failed = true;
                self.original = None;
                self.stop_keeping();
                Poll::Ready(Some(Err(ReplayError::Body(error))))
            }
            Poll::Ready(Some(Ok(frame))) => {
                let frame = frame.map_data(|mut data| data.copy_to_bytes(data.remaining()));
                if let Some(data) = frame.data_ref() {
                    self.keep(data);
                    cursor.next = self.read;
                    self.moved(cursor);
                } else if let Some(trailers) = frame.trailers_ref() {
                    self.trailers_read = true;
                    if self.keeping {
                        self.trailers = Some(trailers.clone());
                    }
                    cursor.trailers_sent = true;
                } else {
                    // A kind of frame this version cannot keep: sent, not replayed.
                    self.stop_keeping();
                }
                Poll::Ready(Some(Ok(frame)))
            }
        }
    }

    /// Whether the attempt at `cursor` has nothing more to send.
    pub(super) fn is_end_for(&self, cursor: &Cursor) -> bool {
        if cursor.done {
            return true;
        }
        if cursor.next < self.read {
            return false;
        }
        if self.trailers_read {
            return cursor.trailers_sent;
        }
        !self.failed && (self.ended || self.original.as_ref().is_some_and(Body::is_end_stream))
    }

    /// The size of what the attempt at `cursor` has left to send: the kept
    /// frames ahead of it, and what the original has left.
    pub(super) fn hint_for(&self, cursor: &Cursor) -> SizeHint {
        let rest = match &self.original {
            Some(original) if !self.ended => original.size_hint(),
            _ => SizeHint::with_exact(0),
        };
        add_hints(&rest, self.kept_ahead(cursor))
    }
}

impl<B> State<B> {
    /// A new newest attempt on `shared` (this state), which supersedes the
    /// one before: the cursor of its body, from the first byte.
    pub(super) fn next_attempt(&mut self, shared: &Arc<Mutex<State<B>>>, lost: bool) -> ReplayBody<B> {
        self.generation += 1;
        self.newest_next = 0;
        self.wake_waiting();
        ReplayBody {
            state: Arc::clone(shared),
            cursor: Cursor {
                generation: self.generation,
                next: 0,
                trailers_sent: false,
                done: false,
                lost,
            },
        }
    }
}
