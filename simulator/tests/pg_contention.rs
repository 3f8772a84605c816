//! The parts of `examples/pg_contention` that need no database: its
//! argument parsing and the scaling of the simulator's contention model to
//! a measured round trip. (The experiment itself runs against a real
//! PostgreSQL through `scripts/pg-contention.sh`, outside the test suite.)

// The example's modules, included by path (not copied).
#[allow(dead_code)]
#[path = "../examples/herd/sim/mod.rs"]
mod sim;

#[allow(dead_code)]
#[path = "../examples/pg_contention/cli.rs"]
mod cli;

#[allow(dead_code)]
#[path = "../examples/pg_contention/prediction.rs"]
mod prediction;

use std::time::Duration;

use sim::contention::ContentionSetup;

#[test]
fn a_hop_of_ten_milliseconds_is_the_blog_posts_setup() {
    let scaled = prediction::scaled_setup(Duration::from_millis(10));
    let post = ContentionSetup::BROOKER;
    assert_eq!(scaled.policy, post.policy);
    assert_eq!((scaled.hop_mean, scaled.hop_sd), (post.hop_mean, post.hop_sd));
}

#[test]
fn every_duration_scales_with_the_hop() {
    let scaled = prediction::scaled_setup(Duration::from_micros(250));
    assert_eq!(scaled.hop_mean, Duration::from_micros(250));
    assert_eq!(scaled.hop_sd, Duration::from_micros(50));
    let p = scaled.policy;
    assert_eq!(p.get_initial_backoff(), Duration::from_micros(250), "one hop");
    assert_eq!(p.get_max_backoff(), Duration::from_millis(50), "200 hops");
    assert_eq!((p.get_max_retries(), p.get_multiplier()), (256, 2.0));
}

#[test]
fn an_attempt_is_four_hops() {
    assert_eq!(
        prediction::hop_of(Duration::from_micros(700)),
        Duration::from_micros(175)
    );
}

#[test]
fn the_prediction_covers_every_count_and_mode() {
    let setup = prediction::scaled_setup(Duration::from_micros(200));
    let points = prediction::predict(&setup, &[5, 10], 2, 1);
    assert_eq!(points.len(), 2 * prediction::MODES.len());
    for (point, mode) in points.iter().zip(prediction::MODES.iter().cycle()) {
        assert_eq!(point.strategy, sim::strategy::Strategy::Backoff(*mode));
        assert!(point.summary.writes >= point.clients as f64, "{point:?}");
        assert_eq!(point.summary.gave_up, 0, "{point:?}");
    }
}
