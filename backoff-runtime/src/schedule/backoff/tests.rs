use super::*;

fn secs(s: u64) -> Duration {
    Duration::from_secs(s)
}

#[test]
fn base_doubles_then_caps() {
    let p = Policy::new().max_backoff(secs(10));
    let got: Vec<_> = (0..8).map(|n| p.base_backoff(n)).collect();
    assert_eq!(got, [1, 2, 4, 8, 10, 10, 10, 10].map(secs));
}

#[test]
fn base_saturates_at_extremes() {
    let huge = Policy::new().initial_backoff(Duration::MAX).max_backoff(Duration::MAX);
    assert_eq!(huge.base_backoff(u32::MAX), Duration::MAX);
    let tiny = Policy::new()
        .initial_backoff(Duration::from_nanos(1))
        .max_backoff(Duration::MAX)
        .multiplier(u32::MAX as f64);
    assert_eq!(tiny.base_backoff(u32::MAX), Duration::MAX);
    assert_eq!(tiny.base_backoff(1), Duration::from_nanos(u32::MAX as u64));
    let float = Policy::new().multiplier(1.5).max_backoff(Duration::MAX);
    assert_eq!(float.base_backoff(u32::MAX), Duration::MAX);
    assert_eq!(float.base_backoff(2), Duration::from_millis(2250));
    let huge_float = Policy::new().multiplier(f64::MAX).max_backoff(Duration::MAX);
    assert_eq!(huge_float.base_backoff(u32::MAX), Duration::MAX);
    let one = Policy::new().multiplier(1.0);
    assert_eq!(one.base_backoff(u32::MAX), secs(1));
}

#[test]
fn durations_beyond_u64_nanoseconds_keep_their_subsecond_part() {
    let nanos = u128::from(u64::MAX) + 1_500_000_000;
    let expected = Duration::from_nanos(u64::MAX) + Duration::from_nanos(1_500_000_000);
    assert_eq!(from_nanos(nanos), expected);
    assert_eq!(from_nanos(as_nanos(Duration::MAX)), Duration::MAX);
}

#[test]
fn integral_multipliers_are_exact_beyond_float_precision() {
    // 2^53 + 1 ns is not a float: only integer arithmetic doubles it exactly.
    let initial = Duration::from_nanos((1 << 53) + 1);
    let p = Policy::new()
        .initial_backoff(initial)
        .max_backoff(Duration::MAX)
        .multiplier(2.0);
    assert_eq!(p.base_backoff(1), Duration::from_nanos((1 << 54) + 2));
}

#[test]
fn decorrelated_jitter_reaches_three_times_the_wait_actually_taken() {
    use crate::schedule::rng::FixedDraw;
    let p = Policy::new().jitter(Jitter::Decorrelated).max_backoff(secs(100));
    let mut backoff = Backoff::new();
    // The largest draw: the top of U[initial, 3 x previous], previous
    // starting at initial_backoff.
    let first = backoff.next_wait(&p, &mut FixedDraw(u64::MAX));
    assert_eq!(first, secs(3));
    backoff.advance(&p, first);
    assert_eq!(backoff.next_wait(&p, &mut FixedDraw(u64::MAX)), secs(9));
    // A hinted wait is the previous wait too.
    backoff.advance(&p, secs(20));
    assert_eq!(backoff.next_wait(&p, &mut FixedDraw(u64::MAX)), secs(60));
    assert_eq!(backoff.next_wait(&p, &mut FixedDraw(0)), secs(1));
}

#[test]
fn base_with_initial_above_cap_is_cap() {
    // The default cap (32 s) shortens a first wait set above it; a cap set
    // below it would be refused (`PolicyError::InitialAboveMax`).
    let p = Policy::new().initial_backoff(secs(60));
    assert_eq!(p.base_backoff(0), secs(32));
    assert!(
        Policy::new()
            .initial_backoff(secs(60))
            .try_max_backoff(secs(32))
            .is_err()
    );
}

#[test]
fn base_never_decreases() {
    for m in [1.0, 1.1, 1.5, 2.0, 3.0, 10.0] {
        let p = Policy::new().multiplier(m).max_backoff(secs(3600));
        let mut last = Duration::ZERO;
        for n in (0..200).chain([1_000, 100_000, u32::MAX - 1, u32::MAX]) {
            let b = p.base_backoff(n);
            assert!(b >= last, "m={m} n={n}");
            last = b;
        }
    }
}

#[test]
fn every_mode_stays_within_its_bounds() {
    let mut rng = SmallRng::seed_from_u64(42);
    let cap = secs(32);
    for mode in [
        Jitter::Additive,
        Jitter::AdditiveUpTo(secs(5)),
        Jitter::Full,
        Jitter::Equal,
        Jitter::Decorrelated,
        Jitter::Grpc,
        Jitter::None,
    ] {
        let p = Policy::new().jitter(mode).max_retries(50);
        let mut prev = p.initial_backoff;
        for n in (0..50).chain([u32::MAX]) {
            let base = p.base_backoff(n);
            let w = p.wait_for(n, prev, &mut rng);
            assert!(w <= cap, "{mode:?} n={n} w={w:?}");
            let (low, high) = match mode {
                Jitter::Additive => (base, base + secs(1)),
                Jitter::AdditiveUpTo(j) => (base, base + j),
                Jitter::Full => (Duration::ZERO, base),
                Jitter::Equal => (base / 2, base),
                Jitter::Decorrelated => (p.initial_backoff, (prev * 3).max(p.initial_backoff)),
                // base is whole seconds here: 0.8 and 1.2 x base are exact.
                Jitter::Grpc => (base * 4 / 5, base * 6 / 5),
                Jitter::None => (base, base),
            };
            assert!(w >= low.min(cap) && w <= high.min(cap), "{mode:?} n={n} w={w:?}");
            prev = w;
        }
    }
}

#[test]
fn grpc_jitter_maps_the_extreme_draws_onto_plus_minus_twenty_percent() {
    use crate::schedule::rng::FixedDraw;
    let p = Policy::new().jitter(Jitter::Grpc).max_backoff(secs(32));
    let one = secs(1);
    assert_eq!(p.wait_for(0, one, &mut FixedDraw(0)), Duration::from_millis(800));
    assert_eq!(
        p.wait_for(0, one, &mut FixedDraw(u64::MAX)),
        Duration::from_millis(1200)
    );
    assert_eq!(p.wait_for(0, one, &mut FixedDraw(1 << 63)), one);
    // At the cap (base 32 s): 0.8 x 32 s below it, 1.2 x 32 s cut to it.
    assert_eq!(p.wait_for(9, one, &mut FixedDraw(0)), Duration::from_millis(25_600));
    assert_eq!(p.wait_for(9, one, &mut FixedDraw(u64::MAX)), secs(32));
    // 0.8 x 7 ns = 5.6 ns, 1.2 x 7 ns = 8.4 ns: rounded inwards, to 6 and 8.
    let tiny = Policy::new()
        .jitter(Jitter::Grpc)
        .initial_backoff(Duration::from_nanos(7))
        .max_backoff(secs(1));
    assert_eq!(tiny.wait_for(0, one, &mut FixedDraw(0)), Duration::from_nanos(6));
    assert_eq!(tiny.wait_for(0, one, &mut FixedDraw(u64::MAX)), Duration::from_nanos(8));
}

#[test]
fn grpc_jitter_saturates_at_extremes() {
    use crate::schedule::rng::FixedDraw;
    let huge = Policy::new()
        .jitter(Jitter::Grpc)
        .initial_backoff(Duration::MAX)
        .max_backoff(Duration::MAX);
    for n in [0, 1, u32::MAX] {
        assert_eq!(huge.wait_for(n, Duration::MAX, &mut FixedDraw(u64::MAX)), Duration::MAX);
        let low = huge.wait_for(n, Duration::MAX, &mut FixedDraw(0));
        assert!(low.as_nanos() * 5 >= Duration::MAX.as_nanos() * 4 && low < Duration::MAX);
    }
    let fast = Policy::new()
        .jitter(Jitter::Grpc)
        .multiplier(f64::MAX)
        .max_backoff(Duration::MAX);
    let mut rng = SmallRng::seed_from_u64(9);
    for _ in 0..100 {
        assert!(fast.wait_for(u32::MAX, Duration::ZERO, &mut rng) <= Duration::MAX);
    }
}

#[test]
fn grpc_jitter_spreads_within_twenty_percent() {
    let p = Policy::new().jitter(Jitter::Grpc);
    let base = secs(4);
    let mut rng = SmallRng::seed_from_u64(5);
    let mut waits: Vec<Duration> = (0..2000).map(|_| p.wait_for(2, base, &mut rng)).collect();
    assert!(waits.iter().all(|w| *w >= base * 4 / 5 && *w <= base * 6 / 5));
    let mean = waits.iter().sum::<Duration>() / 2000;
    assert!(
        mean > Duration::from_millis(3950) && mean < Duration::from_millis(4050),
        "{mean:?}"
    );
    waits.sort();
    // Both ends of the range are reached, and the draws are not one value.
    assert!(waits[0] < Duration::from_millis(3220), "{:?}", waits[0]);
    assert!(waits[1999] > Duration::from_millis(4780), "{:?}", waits[1999]);
    waits.dedup();
    assert!(waits.len() > 1990, "only {} distinct waits", waits.len());
}

#[test]
fn decorrelated_survives_zero_and_huge_previous() {
    let mut rng = SmallRng::seed_from_u64(1);
    let p = Policy::new().jitter(Jitter::Decorrelated);
    let w = p.wait_for(0, Duration::ZERO, &mut rng);
    assert_eq!(w, p.initial_backoff);
    let w = p.wait_for(0, Duration::MAX, &mut rng);
    assert!(w >= p.initial_backoff && w <= p.max_backoff);
}

#[test]
fn schedule_yields_max_retries_waits() {
    let p = Policy::new().max_retries(8).max_backoff(secs(10)).jitter(Jitter::None);
    let got: Vec<_> = p.schedule().collect();
    assert_eq!(got, [1, 2, 4, 8, 10, 10, 10, 10].map(secs));
    assert_eq!(p.schedule().len(), 8);
}
