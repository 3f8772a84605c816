//! The wait before retry `n`.
//!
//! The truncated exponential base and the jitter
//! applied to it. Saturating arithmetic throughout: no overflow and no panic
//! for any `n` up to `u32::MAX` and any durations.

use core::time::Duration;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::schedule::jitter::{self, as_nanos, from_nanos, saturating_nanos, u64_nanos};
use crate::schedule::policy::{Jitter, Policy};
use crate::schedule::rng::with_thread_rng;

impl Policy {
    /// The un-jittered wait before retry `n` (0 for the first retry):
    /// `min(initial_backoff * multiplier^n, max_backoff)`.
    ///
    /// Never decreases with `n`, never overflows, never panics.
    ///
    /// ```
    /// use backoff_runtime::Policy;
    /// use std::time::Duration;
    ///
    /// let p = Policy::new().max_backoff(Duration::from_secs(10));
    /// let bases: Vec<u64> = (0..6).map(|n| p.base_backoff(n).as_secs()).collect();
    /// assert_eq!(bases, [1, 2, 4, 8, 10, 10]);
    /// assert_eq!(p.base_backoff(u32::MAX), Duration::from_secs(10));
    /// ```
    #[must_use]
    pub fn base_backoff(&self, n: u32) -> Duration {
        let cap = as_nanos(self.max_backoff);
        let initial = as_nanos(self.initial_backoff);
        if initial >= cap {
            return self.max_backoff;
        }
        if n == 0 {
            return self.initial_backoff;
        }
        let m = self.multiplier;
        let grown = if m.fract() == 0.0 && m <= u32::MAX as f64 {
            // Integral multiplier: exact integer arithmetic, in u64 (584
            // years of nanoseconds) when it fits, as it always does in practice.
            match u64::try_from(initial) {
                Ok(initial) => (m as u64)
                    .checked_pow(n)
                    .and_then(|p| initial.checked_mul(p))
                    .map(u128::from),
                Err(_) => (m as u128).checked_pow(n).and_then(|p| (initial).checked_mul(p)),
            }
        } else {
            let exponent = i32::try_from(n).unwrap_or(i32::MAX);
            let value = initial as f64 * m.powi(exponent);
            // NaN and infinity fall through to the cap. Above 2^53 ns the
            // float may round below `initial`; never let it (m >= 1).
            (value < cap as f64).then_some((value as u128).max(initial))
        };
        match grown {
            Some(nanos) if nanos < cap => from_nanos(nanos),
            _ => self.max_backoff,
        }
    }

    /// `base_backoff(n + 1)` in nanoseconds (saturating at `u64::MAX`),
    /// given `base`, `base_backoff(n)` in nanoseconds: one integer product
    /// for an integral multiplier (the retry loops step the base this way,
    /// so a retry never computes a power), the power itself otherwise.
    #[inline]
    pub(crate) fn next_base_nanos(&self, n: u32, base: u64) -> u64 {
        let cap = as_nanos(self.max_backoff);
        match self.integral_multiplier() {
            // A base at the cap stays there (the product is at least the
            // base), and `base_backoff` caps a product beyond u64 too.
            Some(m) => match base.checked_mul(m) {
                Some(grown) if u128::from(grown) < cap => grown,
                _ => saturating_nanos(cap),
            },
            None => saturating_nanos(as_nanos(self.base_backoff(n.saturating_add(1)))),
        }
    }

    /// The multiplier as an integer, when it is one up to `u32::MAX` (`2.0`,
    /// not `1.5`): worked out when the policy was built.
    fn integral_multiplier(&self) -> Option<u64> {
        (self.whole_multiplier != 0).then_some(u64::from(self.whole_multiplier))
    }

    /// The wait before retry `n`, jitter included, drawing from `rng` (one
    /// draw at most). `previous` is the wait used before the previous retry
    /// (only decorrelated jitter reads it; `initial_backoff` for the first
    /// retry). The result is always `<= max_backoff`.
    #[cfg(test)]
    pub(crate) fn wait_for<R: Rng + ?Sized>(&self, n: u32, previous: Duration, rng: &mut R) -> Duration {
        self.jittered(self.base_backoff(n), previous, rng)
    }

    /// The wait jitter makes of `base` (the retry's base wait; unread by
    /// decorrelated jitter), drawing from `rng` (one draw at most).
    /// `previous` is the wait used before the previous retry (only
    /// decorrelated jitter reads it). The result is always `<= max_backoff`.
    fn jittered<R: Rng + ?Sized>(&self, base: Duration, previous: Duration, rng: &mut R) -> Duration {
        let cap = self.max_backoff;
        let wait = match self.jitter {
            Jitter::None => base,
            Jitter::Additive => base.saturating_add(jitter::uniform(rng, Duration::ZERO, self.initial_backoff)),
            Jitter::AdditiveUpTo(amount) => base.saturating_add(jitter::uniform(rng, Duration::ZERO, amount)),
            Jitter::Full => jitter::uniform(rng, Duration::ZERO, base),
            Jitter::Equal => {
                let half = base / 2;
                half + jitter::uniform(rng, Duration::ZERO, half)
            }
            Jitter::Decorrelated => {
                let low = self.initial_backoff;
                let high = previous.saturating_mul(3).max(low);
                jitter::uniform(rng, low, high)
            }
            Jitter::Grpc => {
                // Drawn in nanoseconds and capped before the conversion:
                // 1.2 x base may exceed `Duration::MAX`.
                let (low, high) = jitter::grpc_bounds(base);
                from_nanos(jitter::uniform_nanos(rng, low, high).min(as_nanos(cap)))
            }
        };
        wait.min(cap)
    }

    /// The waits this policy would use, one per retry (`max_retries` of them),
    /// drawing jitter from this thread's generator, as the retry loops do
    /// (so `testing::seed_thread_rng` makes them repeatable).
    ///
    /// ```
    /// use backoff_runtime::Policy;
    /// use std::time::Duration;
    ///
    /// let waits: Vec<Duration> = Policy::new().schedule().collect();
    /// assert_eq!(waits.len(), 5);
    /// for (n, wait) in waits.iter().enumerate() {
    ///     let base = Duration::from_secs(1 << n);
    ///     assert!(*wait >= base && *wait <= base + Duration::from_secs(1));
    /// }
    /// ```
    #[must_use]
    pub fn schedule(&self) -> Schedule {
        Schedule {
            policy: *self,
            backoff: Backoff::new(),
            draws: Draws::ThisThread,
        }
    }

    /// The waits this policy would use, with jitter drawn from a generator
    /// of its own seeded with `seed`: the same seed, the same waits, on any
    /// thread. For simulators and deterministic tests.
    ///
    /// ```
    /// use backoff_runtime::Policy;
    ///
    /// let a: Vec<_> = Policy::new().schedule_seeded(1).collect();
    /// let b: Vec<_> = Policy::new().schedule_seeded(1).collect();
    /// assert_eq!(a, b);
    /// ```
    #[must_use]
    pub fn schedule_seeded(&self, seed: u64) -> Schedule {
        Schedule {
            policy: *self,
            backoff: Backoff::new(),
            draws: Draws::Seeded(SmallRng::seed_from_u64(seed)),
        }
    }
}

/// The retry state machine: the retry counter and the wait used before the
/// latest retry. The one place that decides the next scheduled wait and
/// records a retry: the retry loops (the run layer's `RetryState`)
/// and [`Schedule`] both step it, so for the same random draws they take the
/// same waits.
#[derive(Clone, Copy, Debug, Default)]
// 4-byte aligned (12 bytes), so the loop state packs with the 4-byte fields
// around it in an async function's future.
#[repr(Rust, packed(4))]
pub(crate) struct Backoff {
    /// Retries made so far (`n` of the next retry).
    retries: u32,
    /// Read only once a retry was made, in nanoseconds. With decorrelated
    /// jitter, the wait used before the latest retry, scheduled or hinted
    /// (saturating at `u64::MAX`, 584 years); with any other, the base of
    /// the next retry, `base_backoff(retries)` (`u64::MAX`: beyond 584 years,
    /// computed again when read).
    carried_nanos: u64,
}

impl Backoff {
    /// No retry made yet. All zeros: nothing to compute on the happy path.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(crate) const fn new() -> Self {
        Backoff {
            retries: 0,
            carried_nanos: 0,
        }
    }

    /// Retries made so far.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(crate) const fn retries(&self) -> u32 {
        self.retries
    }

    /// Whether, before any retry, the call was marked as counted by its
    /// limit ([`mark_counted`](Self::mark_counted)). Always `true` once a
    /// retry was made: a call that retried was counted at its first answer.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(crate) const fn counted(&self) -> bool {
        self.retries != 0 || self.carried_nanos != 0
    }

    /// Marks the call as counted by its limit. Before any retry the
    /// carried wait is never read, so it holds the mark; the first retry
    /// overwrites it.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(crate) fn mark_counted(&mut self) {
        if self.retries == 0 {
            self.carried_nanos = 1;
        }
    }

    /// What the next retry's wait is made of: its base, and the previous
    /// wait as decorrelated jitter reads it (`initial_backoff` before the
    /// first retry, then the wait actually used). Only the one the jitter
    /// reads is meaningful.
    fn inputs(&self, policy: &Policy) -> (Duration, Duration) {
        if self.retries == 0 {
            (policy.base_backoff(0), policy.initial_backoff)
        } else if self.carried_nanos == u64::MAX {
            (policy.base_backoff(self.retries), Duration::from_nanos(u64::MAX))
        } else {
            let carried = Duration::from_nanos(self.carried_nanos);
            (carried, carried)
        }
    }

    /// The scheduled wait for the next retry (jitter drawn from `rng`).
    /// Inline where a loop decides: the `u64` path is a few branches and
    /// one draw.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(crate) fn next_wait<R: Rng + ?Sized>(&self, policy: &Policy, rng: &mut R) -> Duration {
        match self.next_wait_nanos(policy, rng) {
            Some(nanos) => Duration::from_nanos(nanos),
            None => self.exact_wait(policy, rng),
        }
    }

    /// [`next_wait`](Self::next_wait) in exact `u128` arithmetic, out of
    /// line: for policies with durations past 584 years.
    #[cold]
    #[inline(never)]
    fn exact_wait<R: Rng + ?Sized>(&self, policy: &Policy, rng: &mut R) -> Duration {
        let (base, previous) = self.inputs(policy);
        policy.jittered(base, previous, rng)
    }

    /// A state of `retries` retries carrying `carried_nanos` (for tests
    /// that start anywhere in a schedule).
    #[cfg(all(test, feature = "macros", feature = "tokio"))] // read by `props.rs`
    pub(crate) const fn at(retries: u32, carried_nanos: u64) -> Self {
        Backoff { retries, carried_nanos }
    }

    /// [`next_wait`](Self::next_wait) on the exact path alone (`u128`
    /// nanoseconds), which the `u64` path must match draw for draw.
    #[cfg(all(test, feature = "macros", feature = "tokio"))] // read by `props.rs`
    pub(crate) fn exact_next_wait<R: Rng + ?Sized>(&self, policy: &Policy, rng: &mut R) -> Duration {
        self.exact_wait(policy, rng)
    }

    /// Whether [`next_wait`](Self::next_wait) takes the `u64` path here.
    #[cfg(all(test, feature = "macros", feature = "tokio"))] // read by `props.rs`
    pub(crate) fn takes_u64_path(&self, policy: &Policy) -> bool {
        self.next_wait_nanos(policy, &mut rand::rngs::SmallRng::seed_from_u64(0))
            .is_some()
    }

    /// [`next_wait`](Self::next_wait) in `u64` nanoseconds, the same draw
    /// and the same wait, when every duration it reads is below 584 years
    /// (any policy in practice); `None` (before drawing) sends the rest to
    /// the exact path.
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn next_wait_nanos<R: Rng + ?Sized>(&self, policy: &Policy, rng: &mut R) -> Option<u64> {
        let cap = u64_nanos(policy.max_backoff)?;
        let initial = u64_nanos(policy.initial_backoff)?;
        // Only the jitter's own input is meaningful: the base, or (for
        // decorrelated jitter) the previous wait.
        let carried = if self.retries == 0 {
            None
        } else {
            Some(self.carried_nanos).filter(|&nanos| nanos != u64::MAX)
        };
        let base = || match carried {
            Some(base) => Some(base),
            None if self.retries == 0 => Some(initial.min(cap)),
            None => None,
        };
        let uniform = |rng: &mut R, low: u64, high: u64| {
            // Within [low, high], so it fits where `high` does.
            jitter::uniform_nanos(rng, u128::from(low), u128::from(high)) as u64
        };
        let wait = match policy.jitter {
            Jitter::None => base()?,
            Jitter::Additive => base()?.saturating_add(uniform(rng, 0, initial)),
            Jitter::AdditiveUpTo(amount) => {
                let amount = u64_nanos(amount)?;
                base()?.saturating_add(uniform(rng, 0, amount))
            }
            Jitter::Full => uniform(rng, 0, base()?),
            Jitter::Equal => {
                let half = base()? / 2;
                half + uniform(rng, 0, half)
            }
            Jitter::Decorrelated => {
                let previous = if self.retries == 0 { initial } else { carried? };
                let high = previous.checked_mul(3)?.max(initial);
                uniform(rng, initial, high)
            }
            Jitter::Grpc => {
                let (low, high) = jitter::grpc_bounds_nanos(u128::from(base()?));
                jitter::uniform_nanos(rng, low, high).min(u128::from(cap)) as u64
            }
        };
        Some(wait.min(cap))
    }

    /// Records that a retry is made after `wait` (scheduled or hinted).
    #[inline]
    pub(crate) fn advance(&mut self, policy: &Policy, wait: Duration) {
        self.carried_nanos = if matches!(policy.jitter, Jitter::Decorrelated) {
            saturating_nanos(as_nanos(wait))
        } else {
            let base = if self.retries == 0 {
                saturating_nanos(as_nanos(policy.base_backoff(0)))
            } else {
                self.carried_nanos
            };
            if base == u64::MAX {
                saturating_nanos(as_nanos(policy.base_backoff(self.retries.saturating_add(1))))
            } else {
                policy.next_base_nanos(self.retries, base)
            }
        };
        self.retries = self.retries.saturating_add(1);
    }

    /// Records that a retry is made after a server's exact wait (gRPC's
    /// pushback): the retry counts, and the schedule restarts, so the next
    /// scheduled wait is the first one again (`initial_backoff`, jittered).
    pub(crate) fn restart(&mut self, policy: &Policy) {
        self.carried_nanos = saturating_nanos(as_nanos(policy.base_backoff(0)));
        self.retries = self.retries.saturating_add(1);
    }

    /// Takes back the retry recorded last: it was announced, then did not
    /// happen (its action ran past `max_elapsed`). The call ends, so the
    /// previous wait no longer matters.
    pub(crate) fn undo_retry(&mut self) {
        self.retries = self.retries.saturating_sub(1);
    }
}

/// An iterator over the waits of a [`Policy`], one per retry; built by
/// [`Policy::schedule`] or [`Policy::schedule_seeded`]. It steps the same
/// state machine as the retry loops: for the same random draws, the same
/// waits.
///
/// ```
/// use backoff_runtime::{Jitter, Policy};
/// use std::time::Duration;
///
/// let p = Policy::new().max_retries(8).max_backoff(Duration::from_secs(10)).jitter(Jitter::None);
/// let secs: Vec<u64> = p.schedule().map(|d| d.as_secs()).collect();
/// assert_eq!(secs, [1, 2, 4, 8, 10, 10, 10, 10]);
/// ```
#[derive(Clone, Debug)]
pub struct Schedule {
    policy: Policy,
    backoff: Backoff,
    draws: Draws,
}

/// Where a [`Schedule`]'s jitter comes from.
#[derive(Clone, Debug)]
enum Draws {
    /// The calling thread's generator, as the retry loops use.
    ThisThread,
    /// A generator of its own.
    Seeded(SmallRng),
}

impl Iterator for Schedule {
    type Item = Duration;

    fn next(&mut self) -> Option<Duration> {
        if self.backoff.retries() >= self.policy.max_retries {
            return None;
        }
        let wait = match &mut self.draws {
            Draws::ThisThread => with_thread_rng(|rng| self.backoff.next_wait(&self.policy, rng)),
            Draws::Seeded(rng) => self.backoff.next_wait(&self.policy, rng),
        };
        self.backoff.advance(&self.policy, wait);
        Some(wait)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.policy.max_retries.saturating_sub(self.backoff.retries());
        let left = usize::try_from(left).unwrap_or(usize::MAX);
        (left, Some(left))
    }
}

impl ExactSizeIterator for Schedule {}

#[cfg(test)]
mod tests;
