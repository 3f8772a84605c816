use super::*;
use rand::SeedableRng;
use rand::rngs::SmallRng;

#[test]
fn stays_in_range_and_covers_it() {
    let mut rng = SmallRng::seed_from_u64(3);
    let (low, high) = (Duration::from_millis(100), Duration::from_millis(200));
    let draws: Vec<_> = (0..10_000).map(|_| uniform(&mut rng, low, high)).collect();
    assert!(draws.iter().all(|d| *d >= low && *d <= high));
    let min = draws.iter().min().copied().unwrap_or_default();
    let max = draws.iter().max().copied().unwrap_or_default();
    assert!(min < Duration::from_millis(101), "{min:?}");
    assert!(max > Duration::from_millis(199), "{max:?}");
}

#[test]
fn empty_and_huge_ranges() {
    let mut rng = SmallRng::seed_from_u64(3);
    let d = Duration::from_secs(1);
    assert_eq!(uniform(&mut rng, d, d), d);
    assert_eq!(uniform(&mut rng, d, Duration::ZERO), d);
    for _ in 0..1000 {
        assert!(uniform(&mut rng, Duration::ZERO, Duration::MAX) <= Duration::MAX);
    }
}

use crate::schedule::rng::FixedDraw as Fixed;

const LOW: Duration = Duration::from_secs(1);

#[test]
fn the_largest_draw_reaches_the_inclusive_top() {
    let high = LOW + Duration::from_nanos(3);
    assert_eq!(uniform(&mut Fixed(u64::MAX), LOW, high), high);
    assert_eq!(uniform(&mut Fixed(0), LOW, high), LOW);
}

#[test]
fn draws_map_onto_the_range_by_multiply_shift() {
    // [0, 3] ns has 4 values: the middle draw lands on the upper middle.
    let high = LOW + Duration::from_nanos(3);
    assert_eq!(uniform(&mut Fixed(1 << 63), LOW, high), LOW + Duration::from_nanos(2));
    assert_eq!(uniform(&mut Fixed((1 << 62) - 1), LOW, high), LOW);
}

#[test]
fn grpc_bounds_round_inwards() {
    assert_eq!(grpc_bounds(Duration::from_secs(1)), (800_000_000, 1_200_000_000));
    // 0.8 x 7 ns = 5.6 ns and 1.2 x 7 ns = 8.4 ns: [6, 8], inside both ends.
    assert_eq!(grpc_bounds(Duration::from_nanos(7)), (6, 8));
    assert_eq!(grpc_bounds(Duration::from_nanos(1)), (1, 1));
    let (low, high) = grpc_bounds(Duration::MAX);
    let max = as_nanos(Duration::MAX);
    assert!(low * 5 >= max * 4 && high * 5 <= max * 6 && high > max);
}

#[test]
fn uniform_nanos_reaches_both_ends_beyond_a_duration() {
    let (low, high) = grpc_bounds(Duration::MAX);
    assert_eq!(uniform_nanos(&mut Fixed(0), low, high), low);
    assert!(uniform_nanos(&mut Fixed(u64::MAX), low, high) <= high);
    assert_eq!(uniform_nanos(&mut Fixed(7), high, low), high);
}

#[test]
fn spans_beyond_u64_nanoseconds_map_proportionally() {
    let span = Duration::MAX;
    let half = uniform(&mut Fixed(1 << 63), Duration::ZERO, span);
    let ratio = half.as_secs_f64() / span.as_secs_f64();
    assert!((ratio - 0.5).abs() < 1e-6, "{ratio}");
    let quarter = uniform(&mut Fixed(1 << 62), Duration::ZERO, span);
    let ratio = quarter.as_secs_f64() / span.as_secs_f64();
    assert!((ratio - 0.25).abs() < 1e-6, "{ratio}");
}
