//! Monotonic clocks: where "now" comes from for `max_elapsed`.
//!
//! Blocking loops with the default sleep read the thread's virtual clock when a test installed one and
//! `std::time::Instant` otherwise; async loops on tokio read tokio's clock, so
//! `tokio::time::pause` drives them; async loops with a custom `sleep =` read
//! `std::time::Instant`.
//!
//! On wasm32-unknown-unknown every clock is the web clock
//! (`performance.now()`, through `web_time::Instant`): std's clock panics
//! there, and tokio's timer does not run there.

use std::sync::OnceLock;
use std::time::Duration;

use crate::time::Instant;

/// Which clock a retry loop reads. Chosen once when the loop starts; a byte,
/// so it fits in the padding of the loop's state. Not public API: the
/// front ends name none: they read the default wait's `CLOCK`, the
/// expansion a sleep's or timer's `clock`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Clock {
    /// The thread's virtual clock (`testing::VirtualClock`) when a test
    /// installed one, else `std::time::Instant`: the default sleep's.
    StdOrVirtual,
    /// `std::time::Instant`, never virtual: a custom sleep's.
    Std,
    /// `tokio::time::Instant` (paused-clock aware).
    #[cfg(feature = "tokio")]
    Tokio,
}

impl Clock {
    /// The current instant on this clock.
    pub fn now(self) -> Instant {
        match self {
            #[cfg(any(test, feature = "test-util"))]
            Clock::StdOrVirtual => crate::testing::virtual_now().unwrap_or_else(Instant::now),
            #[cfg(not(any(test, feature = "test-util")))]
            Clock::StdOrVirtual => Instant::now(),
            Clock::Std => Instant::now(),
            #[cfg(all(feature = "tokio", not(all(target_arch = "wasm32", target_os = "unknown"))))]
            Clock::Tokio => tokio::time::Instant::now().into_std(),
            // No tokio timer runs on the web: its waits are the platform's,
            // measured on the web clock.
            #[cfg(all(feature = "tokio", target_arch = "wasm32", target_os = "unknown"))]
            Clock::Tokio => Instant::now(),
        }
    }
}

/// The clock, the start instant and where it was read, in 8 bytes: the
/// state of an async retry loop lives in the function's future, so it is
/// kept small. Instants are nanoseconds since a process-wide anchor (a year
/// before the first use, so that virtual and paused clocks, which start at or
/// after real time, are never before it): 60 bits, 36 years. One bit says
/// whether the loop holds a retry its limit allowed and it has not sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(Rust, packed(4))]
pub(crate) struct Timeline(u64);

/// The bits of [`Timeline`]: clock (2), start read at the first failure (1),
/// a retry charged and not sent (1), start (60; all ones when none).
const CLOCK_SHIFT: u32 = 62;
const FIRST_FAILURE_BIT: u64 = 1 << 61;
const CHARGED_BIT: u64 = 1 << 60;
const START_MASK: u64 = CHARGED_BIT - 1;
const NO_START: u64 = START_MASK;

/// How far a deadline that cannot be represented is put: 30 years, as
/// tokio does for its own far future.
const FAR_FUTURE: Duration = Duration::from_secs(86_400 * 365 * 30);

/// An instant of any clock, for [`far_deadline`].
pub(crate) trait Moment: Copy {
    /// `self + by`, when representable.
    fn checked_add(self, by: Duration) -> Option<Self>;
}

impl Moment for Instant {
    fn checked_add(self, by: Duration) -> Option<Self> {
        Instant::checked_add(&self, by)
    }
}

#[cfg(feature = "tokio")]
impl Moment for tokio::time::Instant {
    fn checked_add(self, by: Duration) -> Option<Self> {
        tokio::time::Instant::checked_add(&self, by)
    }
}

/// The one far-deadline rule: `now + wait`, or 30 years from now when that
/// is not representable (a `max_backoff` of `Duration::MAX` and a huge
/// `Retry-After`, or a `max_elapsed` of centuries): never an overflow panic.
pub(crate) fn far_deadline<M: Moment>(now: M, wait: Duration) -> M {
    now.checked_add(wait)
        .or_else(|| now.checked_add(FAR_FUTURE))
        .unwrap_or(now)
}

/// `wait`, or 30 years when longer: a wait that any clock can add to now
/// (futures-timer before 3.0.4 panics on an instant it cannot represent).
#[cfg(feature = "futures-timer")]
pub(crate) fn far_wait(wait: Duration) -> Duration {
    wait.min(FAR_FUTURE)
}

/// The wall clock's reading: std's, or the web's on wasm32-unknown-unknown,
/// where std's panics.
#[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
pub(crate) fn wall_clock_now() -> std::time::SystemTime {
    std::time::SystemTime::now()
}

/// The wall clock's reading: std's, or the web's on wasm32-unknown-unknown,
/// where std's panics. The same instant as a std `SystemTime`, which
/// counts there but cannot read the time.
#[cfg(all(target_arch = "wasm32", target_os = "unknown"))]
pub(crate) fn wall_clock_now() -> std::time::SystemTime {
    let since_epoch = web_time::SystemTime::now()
        .duration_since(web_time::UNIX_EPOCH)
        .unwrap_or_default();
    std::time::UNIX_EPOCH
        .checked_add(since_epoch)
        .unwrap_or(std::time::UNIX_EPOCH)
}

/// The anchor of every [`Timeline`] instant.
fn anchor() -> Instant {
    static ANCHOR: OnceLock<Instant> = OnceLock::new();
    *ANCHOR.get_or_init(|| {
        let now = Instant::now();
        now.checked_sub(Duration::from_secs(365 * 24 * 3600)).unwrap_or(now)
    })
}

/// `instant` as nanoseconds since the anchor (saturating below `NO_START`).
#[inline(never)]
pub(crate) fn nanos_since_anchor(instant: Instant) -> u64 {
    let nanos = instant.saturating_duration_since(anchor()).as_nanos();
    u64::try_from(nanos).unwrap_or(NO_START - 1).min(NO_START - 1)
}

impl Timeline {
    /// A timeline on `clock`, started at `start` (or not yet started).
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(crate) fn new(clock: Clock, start: Option<Instant>) -> Timeline {
        let clock_bits = match clock {
            Clock::StdOrVirtual => 0,
            Clock::Std => 1,
            #[cfg(feature = "tokio")]
            Clock::Tokio => 2,
        };
        let start = start.map_or(NO_START, nanos_since_anchor);
        Timeline((clock_bits << CLOCK_SHIFT) | start)
    }

    /// The clock.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(crate) fn clock(self) -> Clock {
        match self.0 >> CLOCK_SHIFT {
            0 => Clock::StdOrVirtual,
            #[cfg(feature = "tokio")]
            2 => Clock::Tokio,
            _ => Clock::Std,
        }
    }

    /// The clock's current instant.
    pub(crate) fn now(self) -> Instant {
        self.clock().now()
    }

    /// The start instant, when it was read.
    #[inline]
    pub(crate) fn start(self) -> Option<Instant> {
        let start = self.0 & START_MASK;
        (start != NO_START).then(|| {
            let anchor = anchor();
            anchor.checked_add(Duration::from_nanos(start)).unwrap_or(anchor)
        })
    }

    /// Marks whether the loop holds a retry its limit allowed and it has
    /// not sent.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(crate) fn set_charged(&mut self, charged: bool) {
        if charged {
            self.0 |= CHARGED_BIT;
        } else {
            self.0 &= !CHARGED_BIT;
        }
    }

    /// Whether the loop holds a retry its limit allowed and it has not
    /// sent.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(crate) fn charged(self) -> bool {
        self.0 & CHARGED_BIT != 0
    }

    /// Whether the start was read at the first failure rather than the call.
    pub(crate) fn started_at_first_failure(self) -> bool {
        self.0 & FIRST_FAILURE_BIT != 0
    }

    /// Time from the start to `now`, or `None` when the start was not read.
    pub(crate) fn elapsed_at(self, now: Instant) -> Option<Duration> {
        let start = self.0 & START_MASK;
        (start != NO_START).then(|| Duration::from_nanos(nanos_since_anchor(now).saturating_sub(start)))
    }

    /// Time since the start, reading the start now (and marking it as read
    /// at the first failure) if nothing read it before.
    pub(crate) fn elapsed(&mut self) -> Duration {
        let now = self.now();
        if self.0 & START_MASK == NO_START {
            self.0 = (self.0 & !START_MASK) | FIRST_FAILURE_BIT | nanos_since_anchor(now);
        }
        self.elapsed_at(now).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests;
