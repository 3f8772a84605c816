//! Randomness: seeds derived from one base seed, the normal distribution by
//! Box-Muller, and the network's latency per hop.
//!
//! Every generator is rand's `SmallRng` (the runtime's own, for schedules), seeded
//! from a seed derived with `SplitMix64`, so each run, client and request has
//! its own stream and the same seed always gives the same run, whatever the
//! number of threads.

use std::f64::consts::TAU;
use std::time::Duration;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// `SplitMix64`'s output function: a bijective mix of the 64 bits.
const fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The seed of sub-stream `index` of `parent`: distinct indices give
/// unrelated seeds.
pub(crate) const fn derive_seed(parent: u64, index: u64) -> u64 {
    mix(parent ^ mix(index))
}

/// A generator seeded with `seed`.
pub(crate) fn rng_from(seed: u64) -> SmallRng {
    SmallRng::seed_from_u64(seed)
}

/// A uniform `f64` in `[0, 1)` from the top 53 bits of one draw.
fn unit<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    const SCALE: f64 = 1.0 / (1u64 << 53) as f64;
    (rng.next_u64() >> 11) as f64 * SCALE
}

/// A normal distribution sampled by the Box-Muller transform, which makes
/// two independent variates per pair of uniform draws; the second one is
/// kept for the next call.
#[derive(Clone, Debug)]
pub(crate) struct Normal {
    mean: f64,
    sd: f64,
    spare: Option<f64>,
}

impl Normal {
    /// The normal distribution with this mean and standard deviation.
    pub(crate) fn new(mean: f64, sd: f64) -> Self {
        Normal { mean, sd, spare: None }
    }

    /// One variate.
    pub(crate) fn sample<R: Rng + ?Sized>(&mut self, rng: &mut R) -> f64 {
        let z = match self.spare.take() {
            Some(z) => z,
            None => {
                // 1 - [0, 1) is (0, 1]: the logarithm stays finite.
                let radius = (-2.0 * (1.0 - unit(rng)).ln()).sqrt();
                let angle = TAU * unit(rng);
                self.spare = Some(radius * angle.sin());
                radius * angle.cos()
            }
        };
        self.mean + self.sd * z
    }
}

/// The network: each hop (client to server, or back) takes
/// `|Normal(mean, sd)|`, drawn from the network's own generator.
#[derive(Clone, Debug)]
pub(crate) struct Network {
    latency: Normal,
    rng: SmallRng,
}

impl Network {
    /// A network whose hops take `|Normal(mean, sd)|`, seeded with `seed`.
    pub(crate) fn new(mean: Duration, sd: Duration, seed: u64) -> Self {
        Network {
            latency: Normal::new(mean.as_secs_f64(), sd.as_secs_f64()),
            rng: rng_from(seed),
        }
    }

    /// The time one message takes to cross the network.
    pub(crate) fn hop(&mut self) -> Duration {
        Duration::from_secs_f64(self.latency.sample(&mut self.rng).abs())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normal_has_its_mean_and_sd() {
        let mut rng = rng_from(1);
        let mut normal = Normal::new(10.0, 2.0);
        let draws: Vec<f64> = (0..100_000).map(|_| normal.sample(&mut rng)).collect();
        let mean = draws.iter().sum::<f64>() / draws.len() as f64;
        let var = draws.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / draws.len() as f64;
        assert!((mean - 10.0).abs() < 0.05, "{mean}");
        assert!((var.sqrt() - 2.0).abs() < 0.05, "{}", var.sqrt());
    }

    #[test]
    fn derived_seeds_differ() {
        assert_ne!(derive_seed(1, 0), derive_seed(1, 1));
        assert_ne!(derive_seed(1, 0), derive_seed(2, 0));
    }
}
