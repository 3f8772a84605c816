//! `AdaptiveRateLimiter`: the AWS SDKs' adaptive retry mode.
//!
//! The AWS SDKs' adaptive retry mode (a token bucket
//! for every attempt, its fill rate set by CUBIC from throttling responses),
//! with the SDKs' constants and without their bugs.

use core::time::Duration;
use std::sync::{Mutex, MutexGuard};

use crate::limits::admission_limit::{Admission, AdmissionLimit, AdmissionRequest, AttemptEnd, Ending};
use crate::limits::named::{max_wait_methods, name_methods};
use crate::time::Instant;

/// The lowest fill rate of the bucket, in tokens per second.
const MIN_FILL_RATE: f64 = 0.5;
/// The lowest capacity of the bucket, in tokens.
const MIN_CAPACITY: f64 = 1.0;
/// The weight of the newest interval in the measured sending rate.
const SMOOTH: f64 = 0.8;
/// CUBIC's multiplicative decrease after a throttle.
const BETA: f64 = 0.7;
/// CUBIC's scale constant.
const SCALE_CONSTANT: f64 = 0.4;
/// The length of one interval of the measured rate, in seconds.
const RATE_BUCKET: f64 = 0.5;
/// The shortest history an early rate is measured over, in seconds. With
/// less (every answer at the first instant), the limiter knows no rate
/// and measures 0, as AWS's SDKs do.
const EARLY_HISTORY: f64 = 0.001;
/// Capacity short of a cost by less than this is the cost (a wait of
/// exactly the computed time must not end a hair short of it).
const EPSILON: f64 = 1e-9;

/// A client-side rate limiter for every attempt, the first included: AWS's
/// adaptive retry mode. Name it in `admission = ...` (or
/// [`Retry::admission`](crate::Retry::admission)).
///
/// It lets every attempt through until the backend first throttles (an
/// attempt failed with an error that `slow_down_if` flags: by default every
/// error `retry_if` retries). From then on each attempt takes
/// [`cost`](Self::cost) tokens (a retry [`retry_cost`](Self::retry_cost))
/// from a bucket that refills at a rate CUBIC sets: a throttle cuts it to
/// 0.7 of the rate measured at that moment, and each answer that is not a
/// throttle lets it grow along CUBIC's curve back to that rate and past it,
/// never above twice the rate the client measured (in 0.5 s intervals,
/// smoothed by 0.8); the rate never drops below 0.5 per second, the bucket
/// never holds less than 1 token.
///
/// Three differences from AWS's SDKs. The first is at a cold start. Before
/// the first 0.5 s interval closes, the SDKs' measured rate is 0. A
/// throttle then (the client's first burst overran the backend) sets
/// their fill rate to the 0.5/s floor: nothing goes for seconds, and a
/// 300/s backend is reached after about 10 s. This limiter measures the
/// rate then from the answers seen so far, over the time since its first
/// instant, so a 300/s backend gets 90% of its capacity within 2 s (the
/// herd simulator's cold start). From the first closed interval on, the
/// rate is AWS's algorithm. The second is how waiters wait (below); it
/// changes no rate.
///
/// The third: the rate is cut at most once per round trip, as TCP cuts
/// its window. The SDKs cut for every throttled answer. So one burst of
/// 700 throttled answers cuts their rate 700 times, to its floor: 1,000
/// tasks against a 300/s backend then get 2% of it, and about 99% here
/// (BENCHMARKS.md, "Goodput under a burst"). The limiter sees no request
/// ids, so it counts:
///
/// - Every `Go` is an attempt in flight, until `observed` hears its end.
/// - At a cut, the attempts in flight were sent before it.
/// - The next that many ends are theirs (first sent, first answered).
/// - A throttle among them does not cut again. It counts in the measured
///   rate.
/// - Any other throttle cuts.
/// - A cut empties the bucket: what goes after it goes at the new rate.
/// - A cut voids the line: each waiter, back at its instant, finds no
///   token and takes a new place at the new rate.
///
/// With one attempt in flight every throttle cuts, as in the SDKs, and
/// their test vectors hold.
///
/// Only answers tell of the backend. An attempt whose body panicked, or
/// that the call abandoned (a timeout, a `select!`, the hedge that lost),
/// changes no rate and is not counted in the measured rate: the SDKs
/// count only answers. It still ends its attempt in flight.
///
/// An attempt that finds too few tokens joins a line. It is told the
/// instant its own tokens refill: one token after the waiter before it,
/// at the current rate. It sleeps once on the loop's own timer, then asks
/// again and takes them. So waiters wake one at a time, not all for one
/// token (about 1 wake-up per admission under 1,000 tasks; 822 when every
/// waiter is told the next token's instant, as AWS's SDKs tell them:
/// BENCHMARKS.md). Nothing is taken while an attempt waits. A call dropped
/// then gives its place back
/// ([`withdrawn`](AdmissionLimit::withdrawn)): the line's end moves back
/// by its tokens, never before now. The waiters behind it keep their
/// instants, and its token stays in the bucket for whoever asks next. The
/// line never holds a token back: a token in the bucket goes to whoever
/// asks, and a waiter that finds its token gone (it woke late) joins the
/// line again. When the rate changes without a cut, the tokens promised to
/// the line refill at the new rate, and the next place moves.
///
/// An attempt whose place comes past [`max_wait`](Self::max_wait) in all,
/// measured on the loop's clock since it first asked, is refused at once
/// (`E::from(Refused)`). One that comes back past it (a busy executor woke
/// it late) is refused too, so none is let through after `max_wait`. No
/// lock is held across a wait. A cost above the bucket's capacity waits
/// for a full bucket and takes all of it, so it never waits forever.
///
/// ```
/// use backoff_runtime::limits::{AdaptiveRateLimiter, Admission, AdmissionLimit, AdmissionRequest, AttemptEnd};
/// use std::time::{Duration, Instant};
///
/// static S3: AdaptiveRateLimiter = AdaptiveRateLimiter::new().max_wait(Duration::from_secs(5));
///
/// let start = Instant::now();
/// let at = |seconds: f64| start + Duration::from_secs_f64(seconds);
/// // Until the first throttle every attempt goes.
/// assert_eq!(S3.admit(AdmissionRequest::new(at(0.0), 1, Duration::ZERO)), Admission::Go);
/// S3.observed(AttemptEnd::new(at(0.1), true));
/// // Then the bucket counts: empty, it makes the next attempt wait.
/// assert!(matches!(S3.admit(AdmissionRequest::new(at(0.1), 1, Duration::ZERO)), Admission::Wait(_)));
/// ```
#[derive(Debug)]
pub struct AdaptiveRateLimiter {
    state: Mutex<RateState>,
    cost: f64,
    retry_cost: f64,
    max_wait: Duration,
    name: Option<&'static str>,
}

crate::limits::named::default_is_new!(AdaptiveRateLimiter);

impl AdaptiveRateLimiter {
    /// A limiter with the SDKs' constants, each attempt costing one token
    /// and waiting at most 10 seconds for admission. `const`, so it lives in
    /// a `static`.
    ///
    /// ```
    /// use backoff_runtime::limits::AdaptiveRateLimiter;
    /// use std::time::Duration;
    ///
    /// let limiter = AdaptiveRateLimiter::new();
    /// assert_eq!(limiter.get_max_wait(), Duration::from_secs(10));
    /// ```
    #[must_use]
    pub const fn new() -> Self {
        AdaptiveRateLimiter {
            state: Mutex::new(RateState::new()),
            cost: 1.0,
            retry_cost: 1.0,
            max_wait: Duration::from_secs(10),
            name: None,
        }
    }

    name_methods! {
        /// Names the limiter (the `budget` label of its metrics).
        ///
        /// ```
        /// let limiter = backoff_runtime::limits::AdaptiveRateLimiter::new().name("s3");
        /// assert_eq!(limiter.get_name(), Some("s3"));
        /// ```
        fn name;
        /// The name given with [`name`](Self::name).
        ///
        /// ```
        /// assert_eq!(backoff_runtime::limits::AdaptiveRateLimiter::new().get_name(), None);
        /// ```
        fn get_name;
    }

    max_wait_methods! {
        /// The longest an attempt waits for admission in all, on the loop's
        /// clock (default 10 seconds). One that would wait longer is refused at
        /// once; one woken after it is refused when it asks again.
        ///
        /// ```
        /// use std::time::Duration;
        ///
        /// let limiter = backoff_runtime::limits::AdaptiveRateLimiter::new().max_wait(Duration::from_secs(2));
        /// assert_eq!(limiter.get_max_wait(), Duration::from_secs(2));
        /// ```
        fn max_wait;
        /// The longest an attempt waits for admission.
        ///
        /// ```
        /// use std::time::Duration;
        /// assert_eq!(backoff_runtime::limits::AdaptiveRateLimiter::new().get_max_wait(), Duration::from_secs(10));
        /// ```
        fn get_max_wait;
    }

    /// The tokens a first attempt takes (default 1).
    ///
    /// # Panics
    ///
    /// When `cost` is not finite or not above 0 (at compile time in a
    /// `static`).
    ///
    /// ```
    /// let limiter = backoff_runtime::limits::AdaptiveRateLimiter::new().cost(2.0);
    /// assert_eq!(limiter.get_cost(), 2.0);
    /// ```
    #[must_use]
    pub const fn cost(mut self, cost: f64) -> Self {
        assert!(cost.is_finite() && cost > 0.0, "a cost must be finite and above 0");
        self.cost = cost;
        self
    }

    /// The tokens a retry takes (default 1; the smithy SDKs charge 5). A
    /// cost above the bucket's capacity waits for a full bucket.
    ///
    /// # Panics
    ///
    /// When `cost` is not finite or not above 0.
    ///
    /// ```
    /// let limiter = backoff_runtime::limits::AdaptiveRateLimiter::new().retry_cost(5.0);
    /// assert_eq!(limiter.get_retry_cost(), 5.0);
    /// ```
    #[must_use]
    pub const fn retry_cost(mut self, cost: f64) -> Self {
        assert!(cost.is_finite() && cost > 0.0, "a cost must be finite and above 0");
        self.retry_cost = cost;
        self
    }

    /// The tokens a first attempt takes.
    ///
    /// ```
    /// assert_eq!(backoff_runtime::limits::AdaptiveRateLimiter::new().get_cost(), 1.0);
    /// ```
    #[must_use]
    pub const fn get_cost(&self) -> f64 {
        self.cost
    }

    /// The tokens a retry takes.
    ///
    /// ```
    /// assert_eq!(backoff_runtime::limits::AdaptiveRateLimiter::new().get_retry_cost(), 1.0);
    /// ```
    #[must_use]
    pub const fn get_retry_cost(&self) -> f64 {
        self.retry_cost
    }

    /// The bucket's fill rate now, in tokens per second: 0.5 for a new
    /// limiter, then set by every answer (CUBIC after a throttle, twice the
    /// measured rate at most), never below 0.5.
    ///
    /// ```
    /// assert_eq!(backoff_runtime::limits::AdaptiveRateLimiter::new().fill_rate(), 0.5);
    /// ```
    #[must_use]
    pub fn fill_rate(&self) -> f64 {
        self.lock().fill_rate
    }

    /// The tokens in the bucket as of the last attempt or answer (never
    /// negative).
    ///
    /// ```
    /// assert_eq!(backoff_runtime::limits::AdaptiveRateLimiter::new().tokens(), 0.0);
    /// ```
    #[must_use]
    pub fn tokens(&self) -> f64 {
        self.lock().current_capacity
    }

    /// Whether a throttle was seen, so attempts take tokens.
    ///
    /// ```
    /// assert!(!backoff_runtime::limits::AdaptiveRateLimiter::new().is_enabled());
    /// ```
    #[must_use]
    pub fn is_enabled(&self) -> bool {
        self.lock().enabled
    }

    /// What the attempt of `request` costs: [`cost`](Self::cost) for a
    /// first attempt, [`retry_cost`](Self::retry_cost) for the others.
    fn cost_of(&self, request: &AdmissionRequest<'_>) -> f64 {
        if request.is_first() { self.cost } else { self.retry_cost }
    }

    /// The state, locked for a few arithmetic steps (never across a wait).
    /// A panic cannot leave it half-updated in a way that matters (every
    /// field stays a finite number), so a poisoned lock is taken as is.
    fn lock(&self) -> MutexGuard<'_, RateState> {
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl AdmissionLimit for AdaptiveRateLimiter {
    fn admit(&self, request: AdmissionRequest<'_>) -> Admission {
        let cost = self.cost_of(&request);
        let mut state = self.lock();
        let now = state.seconds(request.now());
        state.admit(now, cost, request.waited(), self.max_wait)
    }

    fn observed(&self, end: AttemptEnd<'_>) {
        let mut state = self.lock();
        let now = state.seconds(end.now());
        state.ended(now, end.ending(), end.slow_down());
    }

    fn withdrawn(&self, waiter: AdmissionRequest<'_>) {
        let cost = self.cost_of(&waiter);
        let mut state = self.lock();
        let now = state.seconds(waiter.now());
        state.withdraw(now, cost);
    }

    fn name(&self) -> Option<&'static str> {
        self.get_name()
    }
}

/// The limiter's numbers, in seconds since the first instant it saw (the
/// SDKs use seconds since the epoch; only differences matter).
#[derive(Debug)]
struct RateState {
    /// The first instant seen: second 0.
    anchor: Option<Instant>,
    fill_rate: f64,
    max_capacity: f64,
    current_capacity: f64,
    last_timestamp: Option<f64>,
    /// Whether a throttle was seen (the bucket counts only from then on).
    enabled: bool,
    measured_tx_rate: f64,
    last_tx_rate_bucket: f64,
    request_count: u64,
    last_max_rate: f64,
    time_of_last_throttle: f64,
    /// When the tokens promised to the attempts told to wait will have
    /// refilled: the end of the line (at or before now: no one waits).
    line_end: f64,
    /// Attempts admitted (`Go`) whose end was not heard yet.
    in_flight: u64,
    /// Ends still to come from attempts that were in flight at the last
    /// cut: a throttle among them does not cut again.
    sent_before_cut: u64,
}

impl RateState {
    const fn new() -> Self {
        RateState {
            anchor: None,
            fill_rate: MIN_FILL_RATE,
            max_capacity: MIN_CAPACITY,
            current_capacity: 0.0,
            last_timestamp: None,
            enabled: false,
            measured_tx_rate: 0.0,
            last_tx_rate_bucket: 0.0,
            request_count: 0,
            last_max_rate: 0.0,
            time_of_last_throttle: 0.0,
            line_end: 0.0,
            in_flight: 0,
            sent_before_cut: 0,
        }
    }

    /// `now` in seconds since the first instant seen (earlier ones, read
    /// by a caller that took the lock later, count as that instant).
    fn seconds(&mut self, now: Instant) -> f64 {
        let anchor = *self.anchor.get_or_insert(now);
        now.saturating_duration_since(anchor).as_secs_f64()
    }

    /// Admission at `now` of an attempt costing `cost`, which waited
    /// `waited` so far: tokens are taken only when it goes.
    fn admit(&mut self, now: f64, cost: f64, waited: Duration, max_wait: Duration) -> Admission {
        if !self.enabled {
            return self.go();
        }
        // A waiter woken late (a busy executor) is past its bound.
        if waited > max_wait {
            return Admission::Refuse;
        }
        self.refill(now);
        // A cost above the capacity would never fit: it waits for a full
        // bucket and takes all of it.
        let cost = cost.min(self.max_capacity);
        if cost <= self.current_capacity + EPSILON {
            self.current_capacity = (self.current_capacity - cost).max(0.0);
            return self.go();
        }
        // Its tokens refill after those promised to the line.
        let ready_at = if self.line_end > now {
            self.line_end + cost / self.fill_rate
        } else {
            now + (cost - self.current_capacity) / self.fill_rate
        };
        // Rounded up to a whole nanosecond: a wait always ends with the
        // tokens refilled (a zero wait would ask again at the same instant).
        let nanos = ((ready_at - now) * 1e9).ceil().max(1.0);
        // A float-to-integer cast saturates: a wait past `u64::MAX` ns is that.
        let wait = Duration::from_nanos(nanos as u64);
        if waited.saturating_add(wait) > max_wait {
            Admission::Refuse
        } else {
            self.line_end = ready_at;
            Admission::Wait(wait)
        }
    }

    /// An attempt goes: one more in flight.
    fn go(&mut self) -> Admission {
        self.in_flight = self.in_flight.saturating_add(1);
        Admission::Go
    }

    /// A waiter costing `cost` left at `now` before asking again: its
    /// tokens are no longer promised, so the end of the line moves back by
    /// their refill time (never before now). The waiters behind it keep
    /// the instants they were told; the token it would have taken stays in
    /// the bucket for whoever asks next.
    fn withdraw(&mut self, now: f64, cost: f64) {
        if self.line_end > now {
            let cost = cost.min(self.max_capacity);
            self.line_end = (self.line_end - cost / self.fill_rate).max(now);
        }
    }

    /// An admitted attempt ended at `now`. Only an answer tells of the
    /// backend: a panic or an abandoned attempt changes no rate. A
    /// throttle to an attempt sent before the last cut is counted in the
    /// measured rate and changes no rate either. Any other throttle cuts:
    /// the attempts still in flight then are the ones sent before it, the
    /// bucket empties (what goes next goes at the new rate), and the line
    /// is void (its waiters, back at their instants, find no token and
    /// take new places at the new rate; stretching the line instead counted
    /// each of them twice, and the bucket then filled for no one).
    fn ended(&mut self, now: f64, ending: Ending, throttled: bool) {
        self.in_flight = self.in_flight.saturating_sub(1);
        let before_cut = self.sent_before_cut > 0;
        self.sent_before_cut = self.sent_before_cut.saturating_sub(1);
        if ending != Ending::Answered {
            return;
        }
        if throttled && before_cut {
            self.measure(now);
            return;
        }
        self.update(now, throttled);
        if throttled {
            self.sent_before_cut = self.in_flight;
            self.current_capacity = 0.0;
            self.line_end = self.line_end.min(now);
        }
    }

    /// The bucket refilled at the current rate up to `now` (a `now` before
    /// the last one adds nothing).
    fn refill(&mut self, now: f64) {
        if let Some(last) = self.last_timestamp {
            let elapsed = (now - last).max(0.0);
            let fill = elapsed * self.fill_rate;
            self.current_capacity = self.max_capacity.min(self.current_capacity + fill);
            self.last_timestamp = Some(last.max(now));
        } else {
            self.last_timestamp = Some(now);
        }
    }

    /// An answer at `now`: the measured rate, CUBIC and the bucket's rate.
    fn update(&mut self, now: f64, throttled: bool) {
        self.measure(now);
        let measured = self.measured_rate(now);
        let calculated = if throttled {
            let rate_to_use = if self.enabled {
                measured.min(self.fill_rate)
            } else {
                measured
            };
            self.enabled = true;
            self.throttled_at(now, rate_to_use)
        } else {
            self.cubic_success(now)
        };
        let new_rate = calculated.min(2.0 * measured);
        self.set_fill_rate(now, new_rate);
    }

    /// The sending rate CUBIC works from. Once a 0.5 s interval has
    /// closed, the SDKs' smoothed rate. Before, the answers seen so far
    /// over the time since the first instant, once that is at least 1 ms
    /// (AWS's SDKs use 0 there, so an early throttle drops the rate to its
    /// 0.5/s floor).
    fn measured_rate(&self, now: f64) -> f64 {
        if self.last_tx_rate_bucket > 0.0 || now < EARLY_HISTORY {
            self.measured_tx_rate
        } else {
            self.request_count as f64 / now
        }
    }

    /// Counts an answer in the measured sending rate, in 0.5 s intervals.
    fn measure(&mut self, now: f64) {
        let bucket = (now / RATE_BUCKET).floor() * RATE_BUCKET;
        self.request_count = self.request_count.saturating_add(1);
        if bucket > self.last_tx_rate_bucket {
            let current_rate = self.request_count as f64 / (bucket - self.last_tx_rate_bucket);
            self.measured_tx_rate = current_rate * SMOOTH + self.measured_tx_rate * (1.0 - SMOOTH);
            self.request_count = 0;
            self.last_tx_rate_bucket = bucket;
        }
    }

    /// The bucket's new rate (refilled at the old one first), never below
    /// the minimum; its capacity follows, never below one token.
    fn set_fill_rate(&mut self, now: f64, rate: f64) {
        self.refill(now);
        let rate = rate.max(MIN_FILL_RATE);
        // The line's promised tokens now refill at the new rate.
        if self.line_end > now {
            self.line_end = now + (self.line_end - now) * self.fill_rate / rate;
        }
        self.fill_rate = rate;
        self.max_capacity = rate.max(MIN_CAPACITY);
        self.current_capacity = self.current_capacity.min(self.max_capacity);
    }

    /// A throttle at `now` while sending at `rate`: that rate, before the
    /// cut, is CUBIC's new maximum, and the cut rate is returned.
    fn throttled_at(&mut self, now: f64, rate: f64) -> f64 {
        self.last_max_rate = rate;
        self.time_of_last_throttle = now;
        cubic_throttle(rate)
    }

    /// CUBIC's time to climb back to the last maximum rate.
    fn time_window(&self) -> f64 {
        (self.last_max_rate * (1.0 - BETA) / SCALE_CONSTANT).cbrt()
    }

    /// CUBIC's rate at `now` after the last throttle.
    fn cubic_success(&self, now: f64) -> f64 {
        let dt = now - self.time_of_last_throttle - self.time_window();
        SCALE_CONSTANT * dt.powi(3) + self.last_max_rate
    }
}

/// CUBIC's rate just after a throttle at `rate`.
fn cubic_throttle(rate: f64) -> f64 {
    rate * BETA
}

#[cfg(test)]
mod tests;
