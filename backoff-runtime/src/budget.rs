//! [`RetryBudget`]: a retry budget shared across calls, in the style of
//! Finagle, Envoy and gRPC: retries are allowed while they stay under a ratio
//! of recent calls, plus a minimum rate, over a sliding window.

use core::sync::atomic::{AtomicU64, Ordering};
use core::time::Duration;
use std::sync::OnceLock;
use std::time::Instant;

/// How many slots the window is cut into: counts older than the window
/// expire one slot at a time.
const SLOTS: usize = 10;

/// A retry budget, shared by every function (and every plain-API call) that
/// names it: each call deposits, each retry withdraws, and a retry is allowed
/// only while `retries <= ratio * calls + min_per_second * window` over the
/// last `window`. When the budget refuses, the function returns its error
/// with [`StopReason::Budget`](crate::StopReason::Budget).
///
/// Built by `const fn`, so it lives in a `static`; lock-free (atomics only);
/// a call that succeeds at once costs one clock read and one atomic add.
/// Defaults: 20% of calls, at least 10 retries per second, over 10 seconds
/// (Finagle's defaults).
///
/// ```
/// use backoff_runtime::{retry, RetryBudget};
///
/// static DB_BUDGET: RetryBudget = RetryBudget::new().ratio(0.1);
///
/// #[retry(budget = DB_BUDGET, initial_backoff = "1ms")]
/// fn query(sql: &str) -> Result<u64, String> {
///     # let _ = sql;
///     Ok(1)
/// }
/// assert_eq!(query("select 1"), Ok(1));
/// ```
#[derive(Debug)]
pub struct RetryBudget {
    /// Retries allowed per call, in thousandths.
    ratio_per_mille: u64,
    min_per_second: u64,
    window: Duration,
    /// The window's slot length in nanoseconds (kept so a deposit divides
    /// in u64, not u128).
    slot_nanos: u64,
    /// Instants are measured from here (set at first use).
    origin: OnceLock<Instant>,
    /// Per slot: `epoch << 32 | count`.
    deposits: [AtomicU64; SLOTS],
    withdrawals: [AtomicU64; SLOTS],
}

/// Budgets are shared by reference: one is equal only to itself.
impl PartialEq for RetryBudget {
    fn eq(&self, other: &Self) -> bool {
        core::ptr::eq(self, other)
    }
}

impl Eq for RetryBudget {}

impl Default for RetryBudget {
    fn default() -> Self {
        RetryBudget::new()
    }
}

/// The slot epoch of a packed counter.
const fn epoch_of(packed: u64) -> u64 {
    packed >> 32
}

/// The count of a packed counter.
const fn count_of(packed: u64) -> u64 {
    packed & 0xFFFF_FFFF
}

const fn pack(epoch: u64, count: u64) -> u64 {
    (epoch << 32) | (count & 0xFFFF_FFFF)
}

impl RetryBudget {
    /// A budget of 20% of calls plus 10 retries per second, over 10 seconds.
    ///
    /// ```
    /// use backoff_runtime::RetryBudget;
    /// static BUDGET: RetryBudget = RetryBudget::new();
    /// assert_eq!(BUDGET.ratio_value(), 0.2);
    /// ```
    #[must_use]
    pub const fn new() -> Self {
        RetryBudget {
            ratio_per_mille: 200,
            min_per_second: 10,
            window: Duration::from_secs(10),
            slot_nanos: 1_000_000_000,
            origin: OnceLock::new(),
            deposits: [const { AtomicU64::new(0) }; SLOTS],
            withdrawals: [const { AtomicU64::new(0) }; SLOTS],
        }
    }

    /// Sets the retries allowed per call (0.2 = one retry per five calls).
    /// Panics unless `0 <= ratio <= 1000`.
    ///
    /// ```
    /// use backoff_runtime::RetryBudget;
    /// assert_eq!(RetryBudget::new().ratio(0.1).ratio_value(), 0.1);
    /// ```
    #[must_use]
    pub const fn ratio(mut self, ratio: f64) -> Self {
        assert!(ratio >= 0.0 && ratio <= 1000.0, "ratio must be between 0 and 1000");
        self.ratio_per_mille = (ratio * 1000.0 + 0.5) as u64;
        self
    }

    /// Sets the retries allowed per second whatever the traffic (so a quiet
    /// service can still retry).
    ///
    /// ```
    /// use backoff_runtime::RetryBudget;
    /// assert_eq!(RetryBudget::new().min_per_second(3).min_per_second_value(), 3);
    /// ```
    #[must_use]
    pub const fn min_per_second(mut self, retries: u32) -> Self {
        self.min_per_second = retries as u64;
        self
    }

    /// Sets the window that calls and retries are counted over. Panics below
    /// 10 ms (each of the window's 10 slots must be at least a millisecond).
    ///
    /// ```
    /// use backoff_runtime::RetryBudget;
    /// use std::time::Duration;
    /// let b = RetryBudget::new().window(Duration::from_secs(30));
    /// assert_eq!(b.window_value(), Duration::from_secs(30));
    /// ```
    #[must_use]
    pub const fn window(mut self, window: Duration) -> Self {
        assert!(window.as_millis() >= SLOTS as u128, "the window must be at least 10 ms");
        self.window = window;
        let slot = window.as_nanos() / SLOTS as u128;
        self.slot_nanos = if slot > u64::MAX as u128 { u64::MAX } else { slot as u64 };
        self
    }

    /// The retries allowed per call.
    ///
    /// ```
    /// assert_eq!(backoff_runtime::RetryBudget::new().ratio_value(), 0.2);
    /// ```
    #[must_use]
    pub const fn ratio_value(&self) -> f64 {
        self.ratio_per_mille as f64 / 1000.0
    }

    /// The minimum retries allowed per second.
    ///
    /// ```
    /// assert_eq!(backoff_runtime::RetryBudget::new().min_per_second_value(), 10);
    /// ```
    #[must_use]
    pub const fn min_per_second_value(&self) -> u32 {
        self.min_per_second as u32
    }

    /// The window calls and retries are counted over.
    ///
    /// ```
    /// use std::time::Duration;
    /// assert_eq!(backoff_runtime::RetryBudget::new().window_value(), Duration::from_secs(10));
    /// ```
    #[must_use]
    pub const fn window_value(&self) -> Duration {
        self.window
    }

    /// The slot epoch of `now`: how many slot lengths since the origin.
    fn epoch(&self, now: Instant) -> u64 {
        let origin = *self.origin.get_or_init(|| now);
        let since = u64::try_from(now.saturating_duration_since(origin).as_nanos()).unwrap_or(u64::MAX);
        // Epochs fit in 32 bits for ~136 years of 1 s slots; wrap-around only
        // makes old slots look current, which a window never spans.
        (since / self.slot_nanos.max(1)) & 0xFFFF_FFFF
    }

    /// Adds `delta` (+1 or -1) to the slot of `epoch`, resetting a slot that
    /// holds an older epoch. Returns `false` (changing nothing) when asked to
    /// take 1 from a slot that has moved on.
    fn add(slots: &[AtomicU64; SLOTS], epoch: u64, delta: i64) -> bool {
        let slot = &slots[(epoch % SLOTS as u64) as usize];
        let mut current = slot.load(Ordering::Relaxed);
        loop {
            let next = if epoch_of(current) == epoch {
                pack(epoch, count_of(current).saturating_add_signed(delta))
            } else if delta > 0 {
                pack(epoch, 1)
            } else {
                return false;
            };
            match slot.compare_exchange_weak(current, next, Ordering::AcqRel, Ordering::Relaxed) {
                Ok(_) => return true,
                Err(actual) => current = actual,
            }
        }
    }

    /// The total of the slots that are inside the window ending at `epoch`.
    fn total(slots: &[AtomicU64; SLOTS], epoch: u64) -> u64 {
        slots
            .iter()
            .map(|slot| slot.load(Ordering::Acquire))
            .filter(|packed| epoch.wrapping_sub(epoch_of(*packed)) < SLOTS as u64)
            .map(count_of)
            .sum()
    }

    /// Records a call (every call of a function naming this budget).
    ///
    /// ```
    /// use backoff_runtime::RetryBudget;
    /// use std::time::Instant;
    /// let budget = RetryBudget::new().min_per_second(0);
    /// let now = Instant::now();
    /// assert!(!budget.try_withdraw(now));
    /// for _ in 0..5 { budget.deposit(now); }
    /// assert!(budget.try_withdraw(now), "one retry per five calls");
    /// ```
    pub fn deposit(&self, now: Instant) {
        let epoch = self.epoch(now);
        Self::add(&self.deposits, epoch, 1);
    }

    /// Takes one retry from the budget if it allows one now; `false` (and
    /// nothing taken) when retries would exceed the budget.
    ///
    /// ```
    /// use backoff_runtime::RetryBudget;
    /// use std::time::Instant;
    /// let budget = RetryBudget::new().ratio(0.0).min_per_second(1);
    /// let now = Instant::now();
    /// let allowed = (0..100).filter(|_| budget.try_withdraw(now)).count();
    /// assert_eq!(allowed, 10, "1 per second over a 10 s window");
    /// ```
    pub fn try_withdraw(&self, now: Instant) -> bool {
        let epoch = self.epoch(now);
        if !Self::add(&self.withdrawals, epoch, 1) {
            return false;
        }
        let withdrawn = Self::total(&self.withdrawals, epoch);
        let deposited = Self::total(&self.deposits, epoch);
        let floor = self.min_per_second.saturating_mul(self.window.as_secs().max(1));
        // withdrawn <= ratio * deposited + floor, in thousandths.
        let allowed = deposited.saturating_mul(self.ratio_per_mille) + floor.saturating_mul(1000);
        if withdrawn.saturating_mul(1000) <= allowed {
            true
        } else {
            Self::add(&self.withdrawals, epoch, -1);
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratio_and_floor() {
        let budget = RetryBudget::new().ratio(0.2).min_per_second(1);
        let now = Instant::now();
        for _ in 0..100 {
            budget.deposit(now);
        }
        let allowed = (0..1000).filter(|_| budget.try_withdraw(now)).count();
        assert_eq!(allowed, 20 + 10);
    }

    #[test]
    fn counts_expire_after_the_window() {
        let budget = RetryBudget::new().ratio(0.0).min_per_second(1);
        let start = Instant::now();
        assert_eq!((0..100).filter(|_| budget.try_withdraw(start)).count(), 10);
        let later = start + Duration::from_millis(5_500);
        assert_eq!(
            (0..100).filter(|_| budget.try_withdraw(later)).count(),
            0,
            "still inside the window"
        );
        let after = start + Duration::from_secs(11);
        assert_eq!(
            (0..100).filter(|_| budget.try_withdraw(after)).count(),
            10,
            "the old retries expired"
        );
    }

    #[test]
    fn packing() {
        let packed = pack(7, 41);
        assert_eq!((epoch_of(packed), count_of(packed)), (7, 41));
    }
}
