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
fn the_deposit_count_saturates_rather_than_wraps() {
    let budget = RetryBudget::new().ratio(1.0).min_per_second(0);
    let now = Instant::now();
    budget.deposit(now);
    // Slot 0 holds 2^32 - 2 calls; two more fill it, and then it stays full.
    budget.deposits[0].store(pack(0, 0xFFFF_FFFE), Ordering::Relaxed);
    budget.deposit(now);
    budget.deposit(now);
    assert_eq!(budget.deposits[0].load(Ordering::Relaxed), pack(0, 0xFFFF_FFFF));
    assert!(budget.try_withdraw(now), "4 billion calls allow a retry");
}

#[test]
fn a_full_retry_count_refuses_and_stays_full() {
    let budget = RetryBudget::new().ratio(1000.0).min_per_second(u32::MAX);
    let now = Instant::now();
    budget.deposit(now);
    budget.withdrawals[0].store(pack(0, MAX_COUNT - 1), Ordering::Relaxed);
    assert!(budget.try_withdraw(now));
    assert_eq!(budget.withdrawals[0].load(Ordering::Relaxed), pack(0, MAX_COUNT));
    assert!(!budget.try_withdraw(now), "no 2^32-th retry in one slot");
    assert_eq!(budget.withdrawals[0].load(Ordering::Relaxed), pack(0, MAX_COUNT));
}

#[test]
fn a_deposit_past_the_fast_count_still_counts_one() {
    let budget = RetryBudget::new();
    let now = Instant::now();
    budget.deposit(now);
    for count in [FAST_COUNT - 1, FAST_COUNT, FAST_COUNT + 1] {
        budget.deposits[0].store(pack(0, count), Ordering::Relaxed);
        budget.deposit(now);
        assert_eq!(budget.deposits[0].load(Ordering::Relaxed), pack(0, count + 1));
    }
}

#[test]
fn a_late_reset_leaves_a_later_slot_alone() {
    let budget = RetryBudget::new();
    // Slot 22 (word 0) holds 5 retries and the budget has reached it.
    budget.head.store(22, Ordering::Relaxed);
    budget.withdrawals[0].store(pack(22, 5), Ordering::Relaxed);
    // A thread that saw the budget at slot 3 and moves it to slot 11
    // (word 0 too) finds it has moved on: it must not clear slot 22.
    budget.reset(&budget.withdrawals, 11, 11);
    assert_eq!(budget.withdrawals[0].load(Ordering::Relaxed), pack(22, 5));
    budget.reset(&budget.withdrawals, 11, 22);
    assert_eq!(
        budget.withdrawals[0].load(Ordering::Relaxed),
        pack(22, 5),
        "the budget is at the target already"
    );
    // Before the budget reaches slot 33, moving there resets the word.
    budget.reset(&budget.withdrawals, 33, 33);
    assert_eq!(budget.withdrawals[0].load(Ordering::Relaxed), pack(33, 0));
    budget.withdrawals[0].store(pack(33, 2), Ordering::Relaxed);
    budget.reset(&budget.withdrawals, 33, 34);
    assert_eq!(
        budget.withdrawals[0].load(Ordering::Relaxed),
        pack(33, 2),
        "already slot 33's"
    );
}

#[test]
fn a_late_operation_is_not_counted_in_a_later_slot() {
    let budget = RetryBudget::new().ratio(1.0).min_per_second(0);
    budget.withdrawals[0].store(pack(11, 0), Ordering::Relaxed);
    budget.deposits[0].store(pack(11, 0), Ordering::Relaxed);
    // Operations that computed slot 0 and find its words taken by slot 11.
    assert!(!RetryBudget::add(&budget.withdrawals, 0, false));
    assert!(!RetryBudget::add(&budget.deposits, 0, true));
    RetryBudget::take_back(&budget.withdrawals, 0);
    assert_eq!(budget.withdrawals[0].load(Ordering::Relaxed), pack(11, 0));
    assert_eq!(budget.deposits[0].load(Ordering::Relaxed), pack(11, 0));
    // A refused retry takes back only its own count, never below zero.
    budget.withdrawals[0].store(pack(0, 0), Ordering::Relaxed);
    RetryBudget::take_back(&budget.withdrawals, 0);
    assert_eq!(budget.withdrawals[0].load(Ordering::Relaxed), pack(0, 0));
}

#[test]
fn a_deposit_whose_slot_moved_on_is_dropped() {
    let budget = RetryBudget::new();
    let now = Instant::now();
    budget.deposit(now);
    // As if a thread stalled for a window between reading the budget's
    // slot and adding to it: the word now belongs to slot 11.
    budget.deposits[0].store(pack(11, 0), Ordering::Relaxed);
    budget.deposit(now);
    assert_eq!(budget.deposits[0].load(Ordering::Relaxed), pack(11, 0));
}

#[test]
fn settings_read_back_and_default_is_new() {
    let budget = RetryBudget::new()
        .ratio(0.25)
        .min_per_second(7)
        .window(Duration::from_millis(1500));
    assert_eq!(budget.get_ratio(), 0.25);
    assert_eq!(budget.get_min_per_second(), 7);
    assert_eq!(budget.get_window(), Duration::from_millis(1500));
    let default = RetryBudget::default();
    assert_eq!(default.get_ratio(), 0.2);
    assert_eq!(default.get_min_per_second(), 10);
    assert_eq!(default.get_window(), Duration::from_secs(10));
    assert_eq!(RetryBudget::new().ratio(1000.0).get_ratio(), 1000.0);
    assert_eq!(
        RetryBudget::new().min_per_second(u32::MAX).get_min_per_second(),
        u32::MAX
    );
}

#[test]
fn a_budget_equals_only_itself() {
    let (a, b) = (RetryBudget::new(), RetryBudget::new());
    assert!(a == a);
    assert!(a != b);
}

#[test]
#[should_panic(expected = "ratio must be between 0 and 1000")]
fn a_negative_ratio_panics() {
    let _ = RetryBudget::new().ratio(-0.001);
}

#[test]
#[should_panic(expected = "ratio must be between 0 and 1000")]
fn a_ratio_above_1000_panics() {
    let _ = RetryBudget::new().ratio(1000.001);
}

#[test]
#[should_panic(expected = "ratio must be between 0 and 1000")]
fn a_nan_ratio_panics() {
    let _ = RetryBudget::new().ratio(f64::NAN);
}

#[test]
#[should_panic(expected = "the window must be at least 10 ms")]
fn a_window_below_10_ms_panics() {
    let _ = RetryBudget::new().window(Duration::from_micros(9_999));
}

#[test]
fn packing() {
    let packed = pack(7, 41);
    assert_eq!((epoch_of(packed), count_of(packed)), (7, 41));
}

/// The retries left, as the `available_retries` gauge reports them: the
/// ratio of the deposits plus the window's floor, less the withdrawals.
#[test]
fn the_retries_left_are_the_ratio_of_the_deposits_plus_the_floor_less_the_withdrawals() {
    // The default window, 10 s: 0.2 x 50 deposits + 1/s x 10 s, less 3.
    let budget = RetryBudget::new().ratio(0.2).min_per_second(1);
    assert_eq!(budget.available(3, 50), 17);
    assert_eq!(budget.available(30, 50), 0, "never below nothing");
}

/// Retries the budget allows at `now`, asked until it says no.
fn left_at(budget: &RetryBudget, now: Instant) -> usize {
    (0..1_000).take_while(|_| budget.try_withdraw(now)).count()
}

#[test]
fn a_refund_gives_back_one_withdrawal_and_never_more_than_was_taken() {
    let budget = RetryBudget::new().ratio(0.0).min_per_second(1);
    let now = Instant::now();
    budget.refund(now);
    assert_eq!(left_at(&budget, now), 10, "never more than the floor");
    budget.refund(now);
    budget.refund(now);
    assert_eq!(left_at(&budget, now), 2, "two given back, two allowed again");
}

#[test]
fn a_refund_takes_from_the_latest_slot_back_to_its_instant() {
    let budget = RetryBudget::new().ratio(0.0).min_per_second(1);
    let start = Instant::now();
    assert_eq!(left_at(&budget, start), 10);
    // 5.5 s on, the withdrawals of the first slot are still in the window.
    let later = start + Duration::from_millis(5_500);
    assert_eq!(left_at(&budget, later), 0);
    // Given back since `later`: nothing was withdrawn from then on.
    budget.refund(later);
    assert_eq!(left_at(&budget, later), 0);
    // Given back since `start`: the first slot's withdrawal.
    budget.refund(start);
    assert_eq!(left_at(&budget, later), 1);
    // Once that slot leaves the window, what it held is gone anyway.
    let gone = start + Duration::from_secs(11);
    budget.refund(start);
    assert_eq!(left_at(&budget, gone), 10);
}
