//! `RetryBudget`: a retry budget shared across calls.
//!
//! A retry budget shared across calls, in the style of
//! Finagle, Envoy and gRPC: retries are allowed while they stay under a ratio
//! of recent calls, plus a minimum rate, over a sliding window.

use core::sync::atomic::{AtomicU64, Ordering};
use core::time::Duration;
use std::sync::OnceLock;

use crate::time::Instant;

/// How many slots the window is cut into.
const SLOTS: u64 = 10;

/// Words kept per counter: the window's ten slots and the one before it, so
/// that a retry is counted for at least a whole window.
const RING: usize = SLOTS as usize + 1;

/// A slot's count is the low 32 bits of its word and saturates here.
const MAX_COUNT: u64 = 0xFFFF_FFFF;

/// Below this count a deposit adds with `fetch_add`: even one add from every
/// thread at once cannot carry into the stamp.
const FAST_COUNT: u64 = 1 << 31;

/// A retry budget, shared by every function (and every plain-API call) that
/// names it: each call deposits, each retry withdraws, and a retry is allowed
/// only while, counting it, `retries <= ratio * calls + min_per_second *
/// window` over the last `window`. When the budget refuses, the function
/// returns its error with [`StopReason::Budget`](crate::StopReason::Budget).
///
/// Only what was sent counts. A call deposits once it was sent: at its
/// first attempt's answer, or when its first hedge asks the budget. A call
/// that an admission limiter refused, or whose future was dropped before
/// its first answer, deposits nothing. A retry withdrawn and then never
/// sent (the call was dropped during its wait, or the admission limiter
/// refused it) is refunded ([`refund`](Self::refund)).
///
/// The rule is evaluated exactly, in integers, with no rounding: 10 retries
/// per second over a 100 ms window allow 1 retry, over 250 ms 2 (2.5). A
/// minimum below one retry per window (5 per second over 100 ms is 0.5)
/// allows no retry on its own, but still adds to the ratio's share.
///
/// **The window.** Time is cut into slots of a tenth of the window, numbered
/// from the budget's first use (slot boundaries fall on whole nanoseconds,
/// ten slots always make exactly one window). A retry at instant `t`, in slot
/// `k`, counts the retries granted in slots `k - 10 ..= k`, which hold every
/// retry of `(t - window, t]` and none older than 1.1 windows, and the calls
/// deposited in slots `k - 9 ..= k`, which all lie in `(t - window, t]`. Both
/// roundings are conservative: every retry granted at `t` keeps the rule
/// counted exactly over `(t - window, t]`; with a ratio of 0, no interval of
/// one window's length ever holds more than `min_per_second * window`
/// retries. A retry stays counted from 1 to 1.1 windows and a call from 0.9
/// to 1 window, so the budget may refuse a little earlier than an exact
/// sliding window would, never later. An instant earlier than the latest one
/// the budget has seen counts as that latest one.
///
/// **Limits.** Each slot counts up to 2<sup>32</sup> - 1 calls and as many
/// retries; further calls in that slot are not counted and further retries
/// are refused. Slot numbers are 64-bit (each word keeps the low 32 bits as
/// a stamp, and the budget keeps the latest slot whole), so the window works
/// after any idle time and over any uptime up to 2<sup>64</sup> slots (over
/// 584 million years for the shortest window).
///
/// Built by `const fn`, so it lives in a `static`; lock-free (atomics only);
/// a call that succeeds at once costs one clock read, two atomic loads and
/// one atomic add. Defaults: 20% of calls, at least 10 retries per second,
/// over 10 seconds (Finagle's defaults).
///
/// ```
/// use backoff_runtime::limits::RetryBudget;
/// use backoff_runtime::retry;
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
    /// The window in nanoseconds when that fits in a `u64` (so a deposit
    /// divides in `u64`), else 0.
    window_nanos: u64,
    /// Instants are measured from here (set at first use).
    origin: OnceLock<Instant>,
    /// The latest slot any operation has reached. It is published only after
    /// the words of the window ending there have been reset to their slots,
    /// so the words never hold a stale count under a matching stamp.
    head: AtomicU64,
    /// Per slot `k`, at index `k % RING`: `stamp << 32 | count`, where the
    /// stamp is the low 32 bits of `k`.
    deposits: [AtomicU64; RING],
    withdrawals: [AtomicU64; RING],
    /// The `budget` label of its metrics; an unnamed budget reports none.
    name: Option<&'static str>,
}

/// Budgets are shared by reference: one is equal only to itself.
impl PartialEq for RetryBudget {
    fn eq(&self, other: &Self) -> bool {
        core::ptr::eq(self, other)
    }
}

impl Eq for RetryBudget {}

crate::limits::named::default_is_new!(RetryBudget);

/// The stamp of slot `slot`: its low 32 bits.
const fn stamp_of(slot: u64) -> u64 {
    slot & 0xFFFF_FFFF
}

/// The stamp of a packed word.
const fn epoch_of(packed: u64) -> u64 {
    packed >> 32
}

/// The count of a packed word.
const fn count_of(packed: u64) -> u64 {
    packed & MAX_COUNT
}

const fn pack(stamp: u64, count: u64) -> u64 {
    (stamp << 32) | (count & MAX_COUNT)
}

/// The word of slot `slot` in a ring.
fn word(words: &[AtomicU64; RING], slot: u64) -> &AtomicU64 {
    // The remainder is below RING, so it fits.
    &words[(slot % RING as u64) as usize]
}

/// The window in nanoseconds if it fits in a `u64`, else 0.
const fn nanos_if_u64(window: Duration) -> u64 {
    let nanos = window.as_nanos();
    if nanos > u64::MAX as u128 { 0 } else { nanos as u64 }
}

impl RetryBudget {
    /// A budget of 20% of calls plus 10 retries per second, over 10 seconds.
    ///
    /// ```
    /// use backoff_runtime::limits::RetryBudget;
    /// static BUDGET: RetryBudget = RetryBudget::new();
    /// assert_eq!(BUDGET.get_ratio(), 0.2);
    /// ```
    #[must_use]
    pub const fn new() -> Self {
        RetryBudget {
            ratio_per_mille: 200,
            min_per_second: 10,
            window: Duration::from_secs(10),
            window_nanos: 10_000_000_000,
            origin: OnceLock::new(),
            head: AtomicU64::new(0),
            deposits: [const { AtomicU64::new(0) }; RING],
            withdrawals: [const { AtomicU64::new(0) }; RING],
            name: None,
        }
    }

    crate::limits::named::name_methods! {
        /// Names the budget: the `budget` label of its metrics (feature
        /// `metrics`). An unnamed budget reports no series of its own.
        ///
        /// ```
        /// use backoff_runtime::limits::RetryBudget;
        /// static DB_BUDGET: RetryBudget = RetryBudget::new().name("db");
        /// assert_eq!(DB_BUDGET.get_name(), Some("db"));
        /// ```
        fn name;

        /// The budget's name, if it has one.
        ///
        /// ```
        /// assert_eq!(backoff_runtime::limits::RetryBudget::new().get_name(), None);
        /// ```
        fn get_name;
    }

    /// Sets the retries allowed per call (0.2 = one retry per five calls),
    /// rounded to the nearest thousandth. Panics unless `0 <= ratio <= 1000`.
    ///
    /// ```
    /// use backoff_runtime::limits::RetryBudget;
    /// assert_eq!(RetryBudget::new().ratio(0.1).get_ratio(), 0.1);
    /// ```
    #[must_use]
    pub const fn ratio(mut self, ratio: f64) -> Self {
        assert!(ratio >= 0.0 && ratio <= 1000.0, "ratio must be between 0 and 1000");
        self.ratio_per_mille = (ratio * 1000.0 + 0.5) as u64;
        self
    }

    /// Like [`ratio`](Self::ratio), but returns an error for a ratio that is
    /// negative, above 1000 or NaN: for values read at run time (not
    /// `const`: a rejected budget is dropped).
    ///
    /// ```
    /// use backoff_runtime::limits::{BudgetError, RetryBudget};
    /// assert!(RetryBudget::new().try_ratio(0.5).is_ok());
    /// assert_eq!(RetryBudget::new().try_ratio(-1.0).err(), Some(BudgetError::BadRatio));
    /// ```
    pub fn try_ratio(self, ratio: f64) -> Result<Self, BudgetError> {
        if (0.0..=1000.0).contains(&ratio) {
            Ok(self.ratio(ratio))
        } else {
            Err(BudgetError::BadRatio)
        }
    }

    /// Sets the retries allowed per second whatever the traffic (so a quiet
    /// service can still retry): `min_per_second * window` retries per
    /// window, exactly (a fraction of a retry allows none by itself).
    ///
    /// ```
    /// use backoff_runtime::limits::RetryBudget;
    /// assert_eq!(RetryBudget::new().min_per_second(3).get_min_per_second(), 3);
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
    /// use backoff_runtime::limits::RetryBudget;
    /// use std::time::Duration;
    /// let b = RetryBudget::new().window(Duration::from_secs(30));
    /// assert_eq!(b.get_window(), Duration::from_secs(30));
    /// ```
    #[must_use]
    pub const fn window(mut self, window: Duration) -> Self {
        assert!(window.as_millis() >= SLOTS as u128, "the window must be at least 10 ms");
        self.window = window;
        self.window_nanos = nanos_if_u64(window);
        self
    }

    /// Like [`window`](Self::window), but returns an error for a window
    /// below 10 ms: for values read at run time (not `const`: a rejected
    /// budget is dropped).
    ///
    /// ```
    /// use backoff_runtime::limits::{BudgetError, RetryBudget};
    /// use std::time::Duration;
    /// assert!(RetryBudget::new().try_window(Duration::from_secs(1)).is_ok());
    /// assert_eq!(
    ///     RetryBudget::new().try_window(Duration::from_millis(5)).err(),
    ///     Some(BudgetError::WindowTooShort)
    /// );
    /// ```
    pub fn try_window(self, window: Duration) -> Result<Self, BudgetError> {
        if window.as_millis() >= SLOTS as u128 {
            Ok(self.window(window))
        } else {
            Err(BudgetError::WindowTooShort)
        }
    }

    /// The retries allowed per call.
    ///
    /// ```
    /// assert_eq!(backoff_runtime::limits::RetryBudget::new().get_ratio(), 0.2);
    /// ```
    #[must_use]
    pub const fn get_ratio(&self) -> f64 {
        self.ratio_per_mille as f64 / 1000.0
    }

    /// The minimum retries allowed per second.
    ///
    /// ```
    /// assert_eq!(backoff_runtime::limits::RetryBudget::new().get_min_per_second(), 10);
    /// ```
    #[must_use]
    pub const fn get_min_per_second(&self) -> u32 {
        self.min_per_second as u32
    }

    /// The window calls and retries are counted over.
    ///
    /// ```
    /// use std::time::Duration;
    /// assert_eq!(backoff_runtime::limits::RetryBudget::new().get_window(), Duration::from_secs(10));
    /// ```
    #[must_use]
    pub const fn get_window(&self) -> Duration {
        self.window
    }

    /// The number of the slot `now` falls in: `floor(10 * since / window)`,
    /// `since` measured from the first use, saturating at `u64::MAX`.
    fn slot_at(&self, now: Instant) -> u64 {
        let origin = *self.origin.get_or_init(|| now);
        let since = now.saturating_duration_since(origin);
        // 10 * since in nanoseconds, in u64 while it fits (58 years).
        let tenfold = since
            .as_secs()
            .checked_mul(SLOTS * 1_000_000_000)
            .and_then(|nanos| nanos.checked_add(SLOTS * u64::from(since.subsec_nanos())));
        match tenfold {
            Some(tenfold) if self.window_nanos != 0 => tenfold / self.window_nanos,
            // since < 2^94 ns, so 10 * since fits; the window is at least 10 ms.
            _ => u64::try_from(since.as_nanos() * u128::from(SLOTS) / self.window.as_nanos()).unwrap_or(u64::MAX),
        }
    }

    /// The slot an operation at `now` counts in: the slot of `now`, or the
    /// latest slot already reached if that is later. Moving the budget on to
    /// a later slot first resets the words of the slots it enters.
    fn current(&self, now: Instant) -> u64 {
        let slot = self.slot_at(now);
        let head = self.head.load(Ordering::Acquire);
        if slot <= head {
            return head;
        }
        // The words of the slots in (head, slot]; a ring holds only the
        // latest RING of them (older ones are out of every window from here).
        let first = (head + 1).max(slot.saturating_sub(RING as u64 - 1));
        for entered in first..=slot {
            self.reset(&self.deposits, entered, slot);
            self.reset(&self.withdrawals, entered, slot);
        }
        self.head.fetch_max(slot, Ordering::AcqRel).max(slot)
    }

    /// Resets the word of slot `entered` to an empty count for that slot,
    /// unless it already belongs to it, or the budget has reached `target`
    /// (whoever published that reset the word, and it may already hold
    /// counts of a later slot).
    fn reset(&self, words: &[AtomicU64; RING], entered: u64, target: u64) {
        let word = word(words, entered);
        let mut current = word.load(Ordering::Acquire);
        loop {
            if epoch_of(current) == stamp_of(entered) || self.head.load(Ordering::Acquire) >= target {
                return;
            }
            match word.compare_exchange_weak(current, pack(stamp_of(entered), 0), Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => return,
                Err(actual) => current = actual,
            }
        }
    }

    /// Adds one to the count of slot `slot` if its word still belongs to it,
    /// saturating. Returns whether it added.
    fn add(words: &[AtomicU64; RING], slot: u64, saturate: bool) -> bool {
        let word = word(words, slot);
        let mut current = word.load(Ordering::Acquire);
        loop {
            if epoch_of(current) != stamp_of(slot) {
                // The word moved on to a later slot: this operation's slot
                // is out of the window already.
                return false;
            }
            if count_of(current) == MAX_COUNT {
                return saturate;
            }
            match word.compare_exchange_weak(current, current + 1, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => return true,
                Err(actual) => current = actual,
            }
        }
    }

    /// Takes back one from the count of slot `slot`, if its word still
    /// belongs to it.
    /// Whether one was taken back.
    fn take_back(words: &[AtomicU64; RING], slot: u64) -> bool {
        let word = word(words, slot);
        let mut current = word.load(Ordering::Acquire);
        while epoch_of(current) == stamp_of(slot) && count_of(current) > 0 {
            match word.compare_exchange_weak(current, current - 1, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => return true,
                Err(actual) => current = actual,
            }
        }
        false
    }

    /// The total count of the `slots` slots ending with `slot`.
    fn total(words: &[AtomicU64; RING], slot: u64, slots: u64) -> u64 {
        (slot.saturating_sub(slots - 1)..=slot)
            .map(|counted| {
                let packed = word(words, counted).load(Ordering::Acquire);
                if epoch_of(packed) == stamp_of(counted) {
                    count_of(packed)
                } else {
                    0
                }
            })
            .sum()
    }

    /// Whether `withdrawn <= ratio * deposited + min_per_second * window`,
    /// exactly: multiplied by 10^9 (ratio in thousandths, window in
    /// nanoseconds), each side is below 2^127.
    fn allows(&self, withdrawn: u64, deposited: u64) -> bool {
        // withdrawn < 2^36 and deposited < 2^36 (RING counts of 32 bits);
        // ratio_per_mille <= 10^6 < 2^20; min_per_second < 2^32 and the
        // window < 2^94 ns.
        let retries = u128::from(withdrawn) * 1_000_000_000;
        let by_ratio = u128::from(self.ratio_per_mille) * u128::from(deposited) * 1_000_000;
        let floor = u128::from(self.min_per_second) * self.window.as_nanos();
        retries <= by_ratio + floor
    }

    /// Records a call that was sent (the loop calls it once per call: at its
    /// first answer, or when its first hedge asks; a call refused or dropped before
    /// it answered is not counted).
    ///
    /// ```
    /// use backoff_runtime::limits::RetryBudget;
    /// use std::time::Instant;
    /// let budget = RetryBudget::new().min_per_second(0);
    /// let now = Instant::now();
    /// assert!(!budget.try_withdraw(now));
    /// for _ in 0..5 { budget.deposit(now); }
    /// assert!(budget.try_withdraw(now), "one retry per five calls");
    /// ```
    pub fn deposit(&self, now: Instant) {
        let slot = self.current(now);
        let word = word(&self.deposits, slot);
        let seen = word.load(Ordering::Relaxed);
        if epoch_of(seen) == stamp_of(slot) && count_of(seen) < FAST_COUNT {
            word.fetch_add(1, Ordering::AcqRel);
        } else {
            Self::add(&self.deposits, slot, true);
        }
    }

    /// Takes one retry from the budget if it allows one now; `false` (and
    /// nothing taken) when retries would exceed the budget.
    ///
    /// ```
    /// use backoff_runtime::limits::RetryBudget;
    /// use std::time::Instant;
    /// let budget = RetryBudget::new().ratio(0.0).min_per_second(1);
    /// let now = Instant::now();
    /// let allowed = (0..100).filter(|_| budget.try_withdraw(now)).count();
    /// assert_eq!(allowed, 10, "1 per second over a 10 s window");
    /// ```
    pub fn try_withdraw(&self, now: Instant) -> bool {
        let slot = self.current(now);
        if !Self::add(&self.withdrawals, slot, false) {
            return false;
        }
        let withdrawn = Self::total(&self.withdrawals, slot, RING as u64);
        let deposited = Self::total(&self.deposits, slot, SLOTS);
        let allowed = self.allows(withdrawn, deposited);
        if !allowed {
            let _ = Self::take_back(&self.withdrawals, slot);
        }
        crate::observe::metrics::limit_asked(self.name, allowed, || {
            let withdrawn = if allowed {
                withdrawn
            } else {
                withdrawn.saturating_sub(1)
            };
            crate::observe::metrics::LimitLevel::AvailableRetries(self.available(withdrawn, deposited))
        });
        allowed
    }

    /// Gives back a retry that [`try_withdraw`](Self::try_withdraw) took
    /// at or after `withdrawn_since` and that was never sent (the call was
    /// dropped during its wait, or an admission limiter refused it). It is
    /// taken from the latest slot that counts a withdrawal, back to the
    /// slot of `withdrawn_since`; nothing once those slots left the window.
    ///
    /// ```
    /// use backoff_runtime::limits::RetryBudget;
    /// use std::time::Instant;
    /// let budget = RetryBudget::new().ratio(0.0).min_per_second(1);
    /// let now = Instant::now();
    /// assert_eq!((0..100).filter(|_| budget.try_withdraw(now)).count(), 10);
    /// budget.refund(now);
    /// assert!(budget.try_withdraw(now), "the retry given back is allowed again");
    /// ```
    pub fn refund(&self, withdrawn_since: Instant) {
        let head = self.head.load(Ordering::Acquire);
        let oldest = self.slot_at(withdrawn_since).max(head.saturating_sub(RING as u64 - 1));
        for slot in (oldest..=head).rev() {
            if Self::take_back(&self.withdrawals, slot) {
                return;
            }
        }
    }

    /// How many more retries the rule allows with these counts.
    #[cfg_attr(not(feature = "metrics"), allow(dead_code))]
    fn available(&self, withdrawn: u64, deposited: u64) -> u64 {
        let by_ratio = u128::from(self.ratio_per_mille) * u128::from(deposited) * 1_000_000;
        let floor = u128::from(self.min_per_second) * self.window.as_nanos();
        let allowed = (by_ratio + floor) / 1_000_000_000;
        u64::try_from(allowed.saturating_sub(u128::from(withdrawn))).unwrap_or(u64::MAX)
    }
}

/// A value rejected by one of the `try_` builders of [`RetryBudget`].
///
/// ```
/// use backoff_runtime::limits::{BudgetError, RetryBudget};
/// let error = RetryBudget::new().try_ratio(f64::NAN).err();
/// assert_eq!(error, Some(BudgetError::BadRatio));
/// assert_eq!(BudgetError::BadRatio.to_string(), "ratio must be between 0 and 1000");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum BudgetError {
    /// `ratio` was negative, above 1000 or NaN.
    BadRatio,
    /// `window` was below 10 ms (each of its 10 slots must be at least a
    /// millisecond).
    WindowTooShort,
}

impl core::fmt::Display for BudgetError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            BudgetError::BadRatio => f.write_str("ratio must be between 0 and 1000"),
            BudgetError::WindowTooShort => f.write_str("the window must be at least 10 ms"),
        }
    }
}

impl std::error::Error for BudgetError {}

#[cfg(test)]
mod tests;
