//! The seeded generator (SplitMix64: no dependency, the same inputs on
//! every machine) and each target's bound: so many inputs, or so many
//! seconds of real time, whichever comes first.

use std::time::{Duration, Instant};

/// A seeded source of numbers.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    pub fn word(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number below `n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        self.word() % n
    }

    /// True once in `n`.
    pub fn one_in(&mut self, n: u64) -> bool {
        self.below(n) == 0
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }

    /// Up to `most` bytes from `alphabet`.
    pub fn text(&mut self, alphabet: &[u8], most: usize) -> String {
        let length = self.below(most as u64 + 1) as usize;
        (0..length).map(|_| char::from(*self.pick(alphabet))).collect()
    }

    /// A number as a hostile peer writes one: a boundary, digits of any
    /// length, a sign, a fraction, an exponent, or junk.
    pub fn number(&mut self) -> String {
        const EDGES: &[&str] = &[
            "0",
            "-0",
            "00",
            "1",
            "-1",
            "2147483647",
            "2147483648",
            "4294967295",
            "4294967296",
            "9223372036854775807",
            "9223372036854775808",
            "-9223372036854775808",
            "18446744073709551615",
            "18446744073709551616",
            "99999999999999999999",
            "1e300",
            "-1e300",
            "1.5",
            "0.0",
            "+5",
            " 7 ",
            "",
            "abc",
            "120000",
            "120001",
        ];
        match self.below(4) {
            0 => (*self.pick(EDGES)).to_owned(),
            1 => self.text(b"0123456789", 25),
            2 => format!("{}{}", self.pick(&["", "-", "+", " "]), self.word() >> self.below(64)),
            _ => self.text(b"0123456789-+.eE xs", 12),
        }
    }
}

/// A target's bound, from the environment when set: `HOSTILE_INPUTS`
/// (else `inputs`) and `HOSTILE_SECONDS` (else 3).
pub struct Bound {
    inputs: u64,
    until: Instant,
    pub tried: u64,
    pub seed: u64,
}

impl Bound {
    pub fn new(inputs: u64) -> Self {
        let read = |name: &str| std::env::var(name).ok().and_then(|value| value.parse::<u64>().ok());
        let seconds = read("HOSTILE_SECONDS").unwrap_or(3);
        Bound {
            inputs: read("HOSTILE_INPUTS").unwrap_or(inputs),
            until: Instant::now() + Duration::from_secs(seconds),
            tried: 0,
            seed: read("HOSTILE_SEED").unwrap_or(56),
        }
    }

    /// The next input's generator, while inputs and time are left.
    pub fn input(&mut self) -> Option<Rng> {
        if self.tried >= self.inputs || Instant::now() >= self.until {
            return None;
        }
        self.tried += 1;
        Some(Rng::new(self.seed.wrapping_mul(1_000_003).wrapping_add(self.tried)))
    }

    /// This input's seed, for a failure's message.
    pub fn input_seed(&self) -> String {
        format!("HOSTILE_SEED={} input {}", self.seed, self.tried)
    }

    /// Says how many inputs the target tried (`--nocapture` shows it).
    pub fn report(&self, target: &str) {
        println!("hostile input: {target}: {} inputs", self.tried);
    }
}

/// Prints `input` if the code it guards panics (a failing input is told).
pub struct OnPanic(pub String);

impl Drop for OnPanic {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("the failing input: {}", self.0);
        }
    }
}
