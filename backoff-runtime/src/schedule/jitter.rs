//! Uniform random durations: the one random draw behind every jittered wait.

use core::time::Duration;

use rand::Rng;

const NANOS_PER_SEC: u128 = 1_000_000_000;

/// A duration as nanoseconds (exact: a `Duration` holds at most ~2^94 ns).
pub(crate) const fn as_nanos(d: Duration) -> u128 {
    d.as_nanos()
}

/// The duration of `nanos` nanoseconds; callers guarantee `nanos` came from a
/// `Duration` or is below one.
/// Nanoseconds in a `u64`, saturating at `u64::MAX` (584 years).
pub(crate) fn saturating_nanos(nanos: u128) -> u64 {
    u64::try_from(nanos).unwrap_or(u64::MAX)
}

pub(crate) fn from_nanos(nanos: u128) -> Duration {
    // Below 584 years, u64 arithmetic (a hardware division, not u128's).
    if let Ok(nanos) = u64::try_from(nanos) {
        return Duration::from_nanos(nanos);
    }
    let secs = u64::try_from(nanos / NANOS_PER_SEC).unwrap_or(u64::MAX);
    // The remainder is below 1e9, so it fits in a u32.
    let subsec = (nanos % NANOS_PER_SEC) as u32;
    Duration::new(secs, subsec)
}

/// A uniformly random duration in `[low, high]` (both inclusive), from one
/// `u64` draw. Returns `low` when `high <= low` (and draws nothing).
pub(crate) fn uniform<R: Rng + ?Sized>(rng: &mut R, low: Duration, high: Duration) -> Duration {
    from_nanos(uniform_nanos(rng, as_nanos(low), as_nanos(high)))
}

/// A uniformly random number of nanoseconds in `[low, high]` (both
/// inclusive), from one `u64` draw; `low` when `high <= low` (no draw).
/// The bounds may exceed a `Duration` (gRPC jitter's `1.2 * base`); the
/// result is at most `high`. Inline: the retry loops draw through it.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) fn uniform_nanos<R: Rng + ?Sized>(rng: &mut R, low: u128, high: u128) -> u128 {
    if high <= low {
        return low;
    }
    let span = high - low;
    let draw = rng.next_u64();
    let offset = if span < u128::from(u64::MAX) {
        // Multiply-shift: maps the draw onto [0, span] without a division.
        (u128::from(draw) * (span + 1)) >> 64
    } else {
        // Spans beyond 584 years: a float fraction is precise enough.
        let fraction = draw as f64 / u64::MAX as f64;
        ((span as f64) * fraction) as u128
    };
    low + offset.min(span)
}

/// gRPC's jitter factor as exact bounds: `[ceil(0.8 * base), floor(1.2 *
/// base)]` in nanoseconds, so every draw is within 20% of `base` with no
/// rounding past either end (`base * 6` fits a `u128`: a `Duration` holds
/// at most ~2^94 ns).
pub(crate) const fn grpc_bounds(base: Duration) -> (u128, u128) {
    grpc_bounds_nanos(as_nanos(base))
}

/// [`grpc_bounds`] of a base in nanoseconds.
pub(crate) const fn grpc_bounds_nanos(base: u128) -> (u128, u128) {
    ((base * 4).div_ceil(5), base * 6 / 5)
}

/// A duration in `u64` nanoseconds, when it fits (below 584 years).
#[inline]
pub(crate) fn u64_nanos(d: Duration) -> Option<u64> {
    d.as_secs()
        .checked_mul(1_000_000_000)?
        .checked_add(u64::from(d.subsec_nanos()))
}

#[cfg(test)]
mod tests;
