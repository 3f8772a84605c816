use super::*;
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

/// A plain model of the bucket, stepped alongside a throttle.
trait BucketModel {
    fn success(&mut self);

    /// Takes a token; whether a retry is then allowed.
    fn failure(&mut self) -> bool;

    /// Fails unless `throttle` holds the model's tokens and gives its answer.
    fn check(&self, throttle: &RetryThrottle, step: usize) -> Result<(), TestCaseError>;
}

/// Plays `steps` (`true`: a success, `false`: a failure) on `throttle`
/// and on `model`, checking after each that they agree.
fn replay(throttle: &RetryThrottle, model: &mut impl BucketModel, steps: Vec<bool>) -> Result<(), TestCaseError> {
    for (step, success) in steps.into_iter().enumerate() {
        if success {
            throttle.record_success();
            model.success();
        } else {
            prop_assert_eq!(throttle.record_failure(), model.failure(), "step {}", step);
        }
        model.check(throttle, step)?;
    }
    Ok(())
}

/// The A6 rules written plainly, on a float count of tokens.
struct FloatModel {
    max: f64,
    ratio: f64,
    tokens: f64,
}

impl FloatModel {
    fn new(max: u32, ratio: f64) -> Self {
        FloatModel {
            max: f64::from(max),
            ratio,
            tokens: f64::from(max),
        }
    }
}

impl BucketModel for FloatModel {
    fn success(&mut self) {
        self.tokens = (self.tokens + self.ratio).min(self.max);
    }

    fn failure(&mut self) -> bool {
        self.tokens = (self.tokens - 1.0).max(0.0);
        self.tokens > self.max / 2.0
    }

    fn check(&self, throttle: &RetryThrottle, step: usize) -> Result<(), TestCaseError> {
        prop_assert_eq!(throttle.tokens(), self.tokens, "step {}", step);
        prop_assert_eq!(throttle.allows_retry(), self.tokens > self.max / 2.0, "step {}", step);
        Ok(())
    }
}

/// The A6 rules written plainly on an integer count of thousandths, for
/// ratios that a float does not hold exactly (0.1, 0.007, ...). The
/// threshold is compared by doubling, not halving.
struct ThousandthsModel {
    max: i64,
    ratio: i64,
    tokens: i64,
}

impl ThousandthsModel {
    fn new(max: u32, ratio_thousandths: u32) -> Self {
        ThousandthsModel {
            max: i64::from(max) * 1000,
            ratio: i64::from(ratio_thousandths),
            tokens: i64::from(max) * 1000,
        }
    }
}

impl BucketModel for ThousandthsModel {
    fn success(&mut self) {
        self.tokens = (self.tokens + self.ratio).min(self.max);
    }

    fn failure(&mut self) -> bool {
        self.tokens = (self.tokens - 1000).max(0);
        2 * self.tokens > self.max
    }

    fn check(&self, throttle: &RetryThrottle, step: usize) -> Result<(), TestCaseError> {
        prop_assert_eq!(
            i64::from(throttle.milli_tokens.load(Ordering::Relaxed)),
            self.tokens,
            "step {}",
            step
        );
        prop_assert_eq!(throttle.allows_retry(), 2 * self.tokens > self.max, "step {}", step);
        Ok(())
    }
}

proptest! {
    /// Ratios in eighths (0.125, 2.5, ...) have at most three decimals
    /// and are exact in a float, so the float model is exact too.
    #[test]
    fn matches_the_float_model(
        max in 1u32..=1000,
        eighths in 1u32..=8000,
        steps in proptest::collection::vec(any::<bool>(), 0..400),
    ) {
        let ratio = f64::from(eighths) / 8.0;
        let throttle = RetryThrottle::new(max, ratio);
        replay(&throttle, &mut FloatModel::new(max, ratio), steps)?;
    }

    /// Any ratio of thousandths, against the integer model; failures
    /// weighted so that the bucket spends time near its threshold.
    #[test]
    fn matches_the_thousandths_model(
        max in 1u32..=1000,
        ratio_thousandths in prop_oneof![1u32..=2000, 1u32..=1_000_000],
        steps in proptest::collection::vec(prop_oneof![3 => Just(false), 1 => Just(true)], 0..3000),
    ) {
        let throttle = RetryThrottle::new(max, f64::from(ratio_thousandths) / 1000.0);
        replay(&throttle, &mut ThousandthsModel::new(max, ratio_thousandths), steps)?;
    }
}

#[test]
fn the_threshold_is_strictly_above_half() {
    let throttle = RetryThrottle::new(10, 0.1);
    let answers: Vec<bool> = (0..6).map(|_| throttle.record_failure()).collect();
    assert_eq!(
        answers,
        [true, true, true, true, false, false],
        "9, 8, 7, 6, 5, 4 tokens"
    );
    assert_eq!(throttle.tokens(), 4.0);
    for _ in 0..10 {
        throttle.record_success();
    }
    assert_eq!(throttle.tokens(), 5.0);
    assert!(!throttle.allows_retry(), "exactly half: no retry");
    throttle.record_success();
    assert!(throttle.allows_retry(), "5.1 tokens");
    assert!(!throttle.record_failure(), "back to 4.1");
}

#[test]
fn an_odd_bucket_has_a_half_token_threshold() {
    let throttle = RetryThrottle::new(3, 0.5);
    assert!(throttle.record_failure(), "2 > 1.5");
    assert!(!throttle.record_failure(), "1 <= 1.5");
    throttle.record_success();
    assert!(!throttle.allows_retry(), "1.5 is not above 1.5");
    throttle.record_success();
    assert!(throttle.allows_retry(), "2 > 1.5");
}

#[test]
fn the_bucket_stays_between_empty_and_full() {
    let throttle = RetryThrottle::new(2, 0.75);
    let answers: Vec<bool> = (0..5).map(|_| throttle.record_failure()).collect();
    assert_eq!(answers, [false; 5], "1 token left is not above 1");
    assert_eq!(throttle.tokens(), 0.0, "never below empty");
    throttle.record_success();
    assert_eq!(throttle.tokens(), 0.75, "refills from 0, not from a debt");
    for _ in 0..10 {
        throttle.record_success();
    }
    assert_eq!(throttle.tokens(), 2.0);
    let big = RetryThrottle::new(5, 1000.0);
    let _ = big.record_failure();
    big.record_success();
    assert_eq!(big.tokens(), 5.0, "a ratio above the bucket fills it");
}

#[test]
fn the_ratio_is_rounded_to_thousandths() {
    assert_eq!(RetryThrottle::new(1, 0.0005).get_token_ratio(), 0.001);
    assert_eq!(RetryThrottle::new(1, 0.1234).get_token_ratio(), 0.123);
    assert_eq!(RetryThrottle::new(1, 0.1236).get_token_ratio(), 0.124);
    assert_eq!(RetryThrottle::new(1, 1000.0).get_token_ratio(), 1000.0);
    let throttle = RetryThrottle::new(10, 0.007);
    let _ = throttle.record_failure();
    for _ in 0..1000 {
        throttle.record_success();
    }
    assert_eq!(throttle.tokens(), 10.0, "1000 x 0.007 = 7 refills the token, exactly");
    let _ = throttle.record_failure();
    for _ in 0..142 {
        throttle.record_success();
    }
    assert_eq!(throttle.milli_tokens.load(Ordering::Relaxed), 9_994);
}

#[test]
fn settings_read_back() {
    let throttle = RetryThrottle::new(1000, 0.001);
    assert_eq!(throttle.get_max_tokens(), 1000);
    assert_eq!(throttle.get_token_ratio(), 0.001);
    assert_eq!(throttle.tokens(), 1000.0);
    assert_eq!(RetryThrottle::new(1, 3.0).get_max_tokens(), 1);
}

#[test]
fn try_new_rejects_what_new_panics_on() {
    for max in [0, 1001, u32::MAX] {
        assert_eq!(
            RetryThrottle::try_new(max, 0.1).err(),
            Some(ThrottleError::BadMaxTokens),
            "{max}"
        );
    }
    for ratio in [
        0.0,
        -0.0,
        -1.0,
        0.000_499,
        1000.001,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
    ] {
        assert_eq!(
            RetryThrottle::try_new(10, ratio).err(),
            Some(ThrottleError::BadTokenRatio),
            "{ratio}"
        );
    }
    assert_eq!(
        RetryThrottle::try_new(0, f64::NAN).err(),
        Some(ThrottleError::BadMaxTokens),
        "max_tokens is checked first"
    );
    for (max, ratio) in [(1, 0.0005), (1000, 1000.0), (10, 0.1)] {
        let throttle = RetryThrottle::try_new(max, ratio);
        assert!(throttle.is_ok(), "{max}, {ratio}");
    }
    let error: Box<dyn std::error::Error> = Box::new(ThrottleError::BadTokenRatio);
    assert_eq!(error.to_string(), "token_ratio must be between 0.001 and 1000");
}

/// What `new` panics with for these settings.
fn panic_of_new(max_tokens: u32, token_ratio: f64) -> String {
    let Err(payload) = std::panic::catch_unwind(|| RetryThrottle::new(max_tokens, token_ratio)) else {
        return format!("no panic for {max_tokens}, {token_ratio}");
    };
    let literal = payload.downcast_ref::<&str>().map(|message| (*message).to_owned());
    literal
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_default()
}

#[test]
fn new_panics_on_a_bad_bucket_or_ratio() {
    const BAD_MAX: &str = "max_tokens must be between 1 and 1000";
    const BAD_RATIO: &str = "token_ratio must be between 0.001 and 1000";
    let cases = [
        ("an empty bucket", 0, 0.1, BAD_MAX),
        ("a bucket above 1000", 1001, 0.1, BAD_MAX),
        ("a zero ratio", 10, 0.0, BAD_RATIO),
        ("a ratio that rounds to zero", 10, 0.0004, BAD_RATIO),
        ("a NaN ratio", 10, f64::NAN, BAD_RATIO),
        ("a ratio above 1000", 10, 1000.5, BAD_RATIO),
    ];
    for (case, max_tokens, token_ratio, expected) in cases {
        assert_eq!(panic_of_new(max_tokens, token_ratio), expected, "{case}");
    }
}

#[test]
fn is_send_and_sync() {
    fn shared<T: Send + Sync>() {}
    shared::<RetryThrottle>();
}

/// Every thread's failures are counted: no update is lost to a race.
#[test]
fn concurrent_failures_take_exactly_one_token_each() {
    const THREADS: u32 = 8;
    for (max, per_thread) in [(1000, 100), (1000, 125), (1000, 200), (500, 7)] {
        let throttle = RetryThrottle::new(max, 0.1);
        let allowed = std::sync::atomic::AtomicU32::new(0);
        std::thread::scope(|scope| {
            for _ in 0..THREADS {
                scope.spawn(|| {
                    for _ in 0..per_thread {
                        if throttle.record_failure() {
                            allowed.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                });
            }
        });
        let left = max.saturating_sub(THREADS * per_thread);
        assert_eq!(throttle.tokens(), f64::from(left), "{max} - {THREADS} x {per_thread}");
        // Each failure that left more than half the bucket was allowed:
        // those that left max - 1, ..., max/2 + 1 tokens.
        let expected = (THREADS * per_thread).min(max - max / 2 - 1);
        assert_eq!(allowed.load(Ordering::Relaxed), expected);
    }
}

/// The tokens of a bucket of 1000 refilled by `token_ratio`, drained to
/// 0 and then sent 500 successes by each of 8 threads.
fn tokens_after_concurrent_refills(token_ratio: f64) -> f64 {
    const THREADS: u32 = 8;
    const EACH: u32 = 500;
    let throttle = RetryThrottle::new(1000, token_ratio);
    for _ in 0..1000 {
        let _ = throttle.record_failure();
    }
    std::thread::scope(|scope| {
        for _ in 0..THREADS {
            scope.spawn(|| {
                for _ in 0..EACH {
                    throttle.record_success();
                }
            });
        }
    });
    throttle.tokens()
}

/// Every refill counts: no update is lost to a race.
#[test]
fn concurrent_successes_each_return_their_share() {
    assert_eq!(
        tokens_after_concurrent_refills(0.25),
        1000.0,
        "8 x 500 x 0.25 = 1000: exactly full"
    );
    assert_eq!(tokens_after_concurrent_refills(0.125), 500.0, "8 x 500 x 0.125");
}
