//! What the body knows about its attempt.
//!
//! What the body of a retried function knows about the attempt it is running:
//! `#[retry(context = attempt)]` binds an [`Attempt`] in the body, and
//! [`Policy::retry_with_attempt`](crate::Policy::retry_with_attempt) passes
//! one to the operation. Functions that do not ask for it pay nothing.

use core::fmt;
use core::time::Duration;

use crate::run::invocation::CallNonce;
use crate::schedule::policy::Policy;
use crate::time::Instant;
use crate::time::clock::Clock;

/// The attempt a retried body is running: its number, the retries left, the
/// time since the call started, the time left before `max_elapsed`, and the
/// call's [`InvocationId`]. A small `Copy` value, made fresh for each
/// attempt. It holds only a unique number of the call, not the id: the id is
/// computed when [`invocation_id`](Attempt::invocation_id) is called, so a
/// body that never asks for it pays nothing for it.
///
/// ```
/// use backoff_runtime::{Attempt, retry};
///
/// #[retry(max_retries = 2, initial_backoff = "1ms", context = attempt)]
/// fn numbered(seen: &std::cell::RefCell<Vec<(u32, u32)>>) -> Result<(), ()> {
///     seen.borrow_mut().push((attempt.number(), attempt.retries_left()));
///     Err(())
/// }
///
/// let seen = std::cell::RefCell::new(Vec::new());
/// assert!(numbered(&seen).is_err());
/// assert_eq!(seen.into_inner(), [(1, 2), (2, 1), (3, 0)]);
/// # let _: fn(Attempt) -> u32 = |a| a.number();
/// ```
#[derive(Clone, Copy)]
pub struct Attempt {
    number: u32,
    retries_left: u32,
    call: CallNonce,
    /// The call's start; `None` only for a caller that declared it never
    /// reads [`elapsed`](Attempt::elapsed) (a tower `Classify` with
    /// `READS_ATTEMPT_TIME = false`).
    start: Option<Instant>,
    deadline: Option<Instant>,
    clock: Clock,
}

impl Attempt {
    /// The 1-based number of this attempt: 1 for the first call, 2 for the
    /// first retry.
    ///
    /// ```
    /// # fn f(attempt: backoff_runtime::Attempt) -> bool {
    /// attempt.number() > 1 // a retry
    /// # }
    /// ```
    #[must_use]
    pub fn number(&self) -> u32 {
        self.number
    }

    /// Whether this is the first attempt (no failure before it).
    ///
    /// ```
    /// # fn f(attempt: backoff_runtime::Attempt) -> bool {
    /// attempt.is_first()
    /// # }
    /// ```
    #[must_use]
    pub fn is_first(&self) -> bool {
        self.number == 1
    }

    /// How many retries may still follow this attempt under `max_retries`
    /// (other stop rules may end the call sooner).
    ///
    /// ```
    /// # fn f(attempt: backoff_runtime::Attempt) -> bool {
    /// attempt.retries_left() == 0 // the last attempt `max_retries` allows
    /// # }
    /// ```
    #[must_use]
    pub fn retries_left(&self) -> u32 {
        self.retries_left
    }

    /// Time since the call started, read now on the retry loop's clock (so
    /// tokio's paused clock in tests). Zero, and no clock read, in the one
    /// case where the call's start was not read for the attempts: the
    /// `Classify` of a backoff-tower layer that declares
    /// `READS_ATTEMPT_TIME = false` (as `HttpRetry` does) and no key that
    /// needed it.
    ///
    /// ```
    /// # fn f(attempt: backoff_runtime::Attempt) -> std::time::Duration {
    /// attempt.elapsed()
    /// # }
    /// ```
    #[must_use]
    pub fn elapsed(&self) -> Duration {
        match self.start {
            Some(start) => self.clock.now().saturating_duration_since(start),
            None => Duration::ZERO,
        }
    }

    /// The time left before `max_elapsed` ends the call, read now; `None`
    /// when the function sets no `max_elapsed`. Give it to the request as its
    /// own deadline (deadline propagation, as gRPC does), so that no attempt
    /// runs past the call's budget:
    ///
    /// ```
    /// # fn f(attempt: backoff_runtime::Attempt) {
    /// let per_request = attempt.time_left().unwrap_or(std::time::Duration::from_secs(30));
    /// # let _ = per_request;
    /// # }
    /// ```
    #[must_use]
    pub fn time_left(&self) -> Option<Duration> {
        let deadline = self.deadline?;
        Some(deadline.saturating_duration_since(self.clock.now()))
    }

    /// When `max_elapsed` ends the call, on the retry loop's clock (for
    /// tokio's clock, `tokio::time::Instant::from_std` turns it back);
    /// `None` without `max_elapsed`.
    ///
    /// ```
    /// # fn f(attempt: backoff_runtime::Attempt) -> Option<std::time::Instant> {
    /// attempt.deadline()
    /// # }
    /// ```
    #[must_use]
    pub fn deadline(&self) -> Option<Instant> {
        self.deadline
    }

    /// The call's id: random per call, the same for each of its attempts
    /// (on whichever thread they run). Send it with each request, as an
    /// idempotency key or as a header beside the attempt number, so the
    /// server can tell a retry from a new call.
    ///
    /// Its 122 random bits come from a cryptographically secure generator
    /// (ChaCha12 under a key drawn once per process from the operating
    /// system), not from the jitter's generator: seeing ids tells nothing
    /// about other ids, and the ids of different processes collide only by
    /// chance (see [`InvocationId`]). It is computed on each call of this
    /// method (one ChaCha12 call; its cost is in BENCHMARKS.md, "Happy path
    /// instructions"), never before, so a body that does not read it pays nothing for
    /// it: keep it in a local when it is used more than once.
    ///
    /// ```
    /// # fn f(attempt: backoff_runtime::Attempt) -> String {
    /// format!("gccl-invocation-id/{} gccl-attempt-count/{}", attempt.invocation_id(), attempt.number())
    /// # }
    /// ```
    #[must_use]
    pub fn invocation_id(&self) -> InvocationId {
        InvocationId::from_bits(self.call.bits())
    }
}

impl fmt::Debug for Attempt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Attempt")
            .field("number", &self.number)
            .field("retries_left", &self.retries_left)
            .field("invocation_id", &self.invocation_id())
            .field("start", &self.start)
            .field("deadline", &self.deadline)
            .field("clock", &self.clock)
            .finish()
    }
}

/// A random id of one call to a retried function, shared by its attempts:
/// 122 random bits, shown as a version 4 UUID
/// (`xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx`), the form Google's client
/// libraries send as their invocation id.
///
/// The bits come from a cryptographically secure generator, the one rand's
/// `StdRng` and thread generator use (ChaCha12), under a 256-bit key drawn
/// once per process from the operating system (`getrandom`), at a position
/// no other id of the process uses. So an id may serve as an idempotency key
/// or any other key that must not be guessed or repeated: ids are
/// indistinguishable from independent random UUIDs, seeing any number of
/// them does not help predict the next, and two processes share an id only
/// by chance (odds of 2<sup>-122</sup> per pair). The jitter's fast
/// generator plays no part: reseeding it (`testing::seed_thread_rng`)
/// changes no id. A process that forks shares its key and counters with the
/// child, whose ids may then repeat the parent's: fork before ids are read,
/// or exec.
///
/// ```
/// use backoff_runtime::InvocationId;
///
/// let id = InvocationId::new();
/// let text = id.to_string();
/// assert_eq!(text.len(), 36);
/// assert_eq!(&text[14..15], "4");
/// assert_ne!(id, InvocationId::new());
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct InvocationId(u128);

impl InvocationId {
    /// A fresh random id from the secure generator described above, the
    /// kind an [`Attempt`] reports (no system call and no lock after the
    /// first, which draws the process's key from the OS).
    ///
    /// ```
    /// assert_ne!(backoff_runtime::InvocationId::new(), backoff_runtime::InvocationId::new());
    /// ```
    #[must_use]
    #[allow(clippy::new_without_default)]
    pub fn new() -> Self {
        Self::from_bits(CallNonce::next().bits())
    }

    /// The id with these random bits, its version and variant set.
    fn from_bits(bits: u128) -> Self {
        // RFC 9562: version 4 in bits 48-51, variant `10` in bits 64-65.
        let bits = (bits & !(0xF << 76) & !(0b11 << 62)) | (0x4 << 76) | (0b10 << 62);
        InvocationId(bits)
    }

    /// The id's 128 bits.
    ///
    /// ```
    /// let id = backoff_runtime::InvocationId::new();
    /// assert_eq!(format!("{:032x}", id.as_u128()), id.to_string().replace('-', ""));
    /// ```
    #[must_use]
    pub fn as_u128(self) -> u128 {
        self.0
    }
}

impl fmt::Display for InvocationId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let bits = self.0;
        write!(
            f,
            "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
            bits >> 96,
            (bits >> 80) & 0xFFFF,
            (bits >> 64) & 0xFFFF,
            (bits >> 48) & 0xFFFF,
            bits & 0xFFFF_FFFF_FFFF
        )
    }
}

impl fmt::Debug for InvocationId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "InvocationId({self})")
    }
}

impl CallNonce {
    /// The attempt `number` (1-based) of this call under `policy`, started
    /// at `start`: the one the call's [`AttemptSource`] would give. For a
    /// front end that keeps only the call's nonce and start between
    /// attempts (the tower layer's future, which then stores two words, not
    /// a whole source, on its happy path).
    ///
    /// ```
    /// use backoff_runtime::__front_end::{CallNonce, DefaultWait};
    /// use backoff_runtime::Policy;
    ///
    /// let call = CallNonce::next();
    /// let policy = Policy::new().max_retries(3);
    /// let second = call.nth_attempt(&policy, None, DefaultWait::CLOCK, 2);
    /// assert_eq!((second.number(), second.retries_left()), (2, 2));
    /// assert_eq!(second.invocation_id(), call.nth_attempt(&policy, None, DefaultWait::CLOCK, 1).invocation_id());
    /// ```
    #[must_use]
    #[inline]
    pub fn nth_attempt(self, policy: &Policy, start: Option<Instant>, clock: Clock, number: u32) -> Attempt {
        let mut attempt = AttemptSource::of_call(policy, self, start, clock).next;
        attempt.number = number;
        attempt.retries_left = policy.max_retries.saturating_sub(number.saturating_sub(1));
        attempt
    }
}

/// Makes the [`Attempt`] of each attempt of one call: built once per call
/// (the call's unique number, from which the invocation id is computed when
/// read, the start and the deadline), stepped once per attempt. Built by the `#[retry(context = ...)]` expansion and
/// [`Policy::retry_with_attempt`](crate::Policy::retry_with_attempt).
///
/// ```
/// use backoff_runtime::Policy;
/// use backoff_runtime::__private::{AttemptSource, BlockingSleep, DefaultSleep};
///
/// let policy = Policy::new().max_retries(1);
/// let mut source = AttemptSource::new(&policy, None, DefaultSleep.clock());
/// let (first, second) = (source.next_attempt(), source.next_attempt());
/// assert_eq!((first.number(), second.number()), (1, 2));
/// assert_eq!(first.invocation_id(), second.invocation_id());
/// ```
#[derive(Clone, Copy, Debug)]
pub struct AttemptSource {
    next: Attempt,
    max_retries: u32,
}

impl AttemptSource {
    /// Attempts of one call under `policy`, measured from `start` on `clock`
    /// (read now when `None`).
    #[must_use]
    #[inline]
    pub fn new(policy: &Policy, start: Option<Instant>, clock: Clock) -> Self {
        let start = start.unwrap_or_else(|| clock.now());
        Self::of_call(policy, CallNonce::next(), Some(start), clock)
    }

    /// Attempts of the call `call` under `policy`, started at `start`
    /// (unread when `None`), from its first attempt on.
    #[inline]
    fn of_call(policy: &Policy, call: CallNonce, start: Option<Instant>, clock: Clock) -> Self {
        let deadline = match (start, policy.max_elapsed) {
            // Never an overflow panic: a deadline beyond what `Instant` holds
            // is decades away, as tokio does.
            (Some(start), Some(max_elapsed)) => Some(crate::time::clock::far_deadline(start, max_elapsed)),
            _ => None,
        };
        AttemptSource {
            next: Attempt {
                number: 1,
                retries_left: policy.max_retries,
                call,
                start,
                deadline,
                clock,
            },
            max_retries: policy.max_retries,
        }
    }

    /// The next attempt's context.
    #[must_use]
    pub fn next_attempt(&mut self) -> Attempt {
        let attempt = self.next;
        self.next.number = attempt.number.saturating_add(1);
        self.next.retries_left = self.max_retries.saturating_sub(attempt.number);
        attempt
    }
}

#[cfg(test)]
mod tests;
