//! Settings from configuration (feature `serde`).
//!
//! A [`Policy`](crate::Policy), a [`Jitter`](crate::Jitter) and the limiters'
//! settings read from any serde format (TOML, JSON, YAML, a layered
//! configuration crate) and written back.
//!
//! The keys are the attribute's (`max_retries`, `max_backoff`, ...) and the
//! limiters' builder methods' (`ratio`, `window`, `failure_ratio`, ...);
//! durations are the attribute's grammar (`"32s"`, `"1m30s"`, `"250ms"`,
//! [`parse_duration`](crate::parse_duration)); a key left out keeps its
//! default. Every rule the attribute checks at compile time is checked at
//! load, with the attribute's text and the fix:
//!
//! ```
//! use backoff_runtime::Policy;
//!
//! let error = serde_json::from_str::<Policy>(r#"{"max_backoff": "32"}"#).unwrap_err();
//! assert!(error.to_string().starts_with(
//!     r#"max_backoff = "32": duration `32` has no unit: write "32s", "32ms" or another unit"#
//! ));
//!
//! let error = serde_json::from_str::<Policy>(r#"{"max_backof": "32s"}"#).unwrap_err();
//! assert!(error.to_string().starts_with("unknown key `max_backof`: did you mean `max_backoff`?"));
//!
//! let policy: Policy = serde_json::from_str(r#"{"max_retries": 3, "max_backoff": "10s", "jitter": "full"}"#).unwrap();
//! assert_eq!(policy.get_max_retries(), 3);
//! ```
//!
//! # A limiter's settings build it
//!
//! A limiter is read as its settings ([`RetryBudgetSettings`],
//! [`RetryThrottleSettings`], [`AdaptiveRateLimiterSettings`],
//! [`AdaptiveThrottleSettings`], [`CircuitBreakerSettings`],
//! [`CooldownSettings`]), whose `build()` makes a fresh limiter, not as the
//! limiter itself:
//!
//! - A limiter is shared state (counters, a window, a line of waiters), held
//!   in a `static` or an `Arc` and used by reference; its settings are plain
//!   values (`Copy`, `PartialEq`), so a configuration struct that holds them
//!   can derive `Clone`, `PartialEq` and `Debug`, and a reload can compare
//!   the old settings with the new.
//! - One setting makes many limiters: [`Keyed`](crate::limits::Keyed) builds one per
//!   host from a closure (`Keyed::new(move |_: &str| settings.build())`).
//! - Writing a limiter back would have to choose between its settings and
//!   its live counts; the settings are only what was set.
//! - What is not data stays in code, on the limiter built: a name
//!   (`&'static str`, the label of its metrics) and a breaker's
//!   `on_transition` hook.
//!
//! A [`Policy`](crate::Policy) is read as itself: it is already a plain value
//! (`Copy`), with no state.
//!
//! # What is written back
//!
//! Only the keys that were set: a policy read from `{ max_backoff = "500ms" }`
//! writes `{ max_backoff = "500ms" }`, not the default first wait of 1 s that
//! the cap shortens (which, written, the rules would refuse as a first wait
//! above the cap). So whatever is written reads back to an equal value. A
//! policy built in code that the rules refuse as settings (an additive
//! jitter amount above the default cap, `max_retries(u32::MAX)` without
//! `max_elapsed`) is not written: the serializer returns the rule's error.
//!
//! # Formats
//!
//! A self-describing format (TOML, JSON, YAML, figment's and config's
//! values) may give any value in any type: a duration written as a number
//! is refused with the fix (`write "32s"`), a number written as a string
//! (an environment variable) is read as the number. A format that is not
//! self-describing (bincode, postcard) reads what was written: each key in
//! one type (durations and words as strings, counts as `u32`, ratios as
//! `f64`; `max_retries = "unlimited"` as `u32::MAX`).

use core::fmt;
use core::marker::PhantomData;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, Visitor};
use serde::ser::{SerializeMap, Serializer};

use crate::schedule::grammar;

mod limiters;
mod policy;
mod values;

pub use limiters::{
    AdaptiveRateLimiterSettings, AdaptiveThrottleSettings, CircuitBreakerSettings, CooldownSettings,
    RetryBudgetSettings, RetryThrottleSettings,
};

/// A value as the format gave it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Scalar {
    /// A string: a duration, a word, or a number an environment variable
    /// wrote.
    Str(String),
    /// A whole number.
    Int(i128),
    /// A number with a fraction.
    Float(f64),
    /// `true` or `false`.
    Bool(bool),
}

/// How a format that is not self-describing stores a key's value, and so
/// how it is asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stored {
    /// A string: durations, words.
    Str,
    /// A `u32`: counts.
    U32,
    /// An `f64`: ratios, multipliers, costs.
    F64,
}

/// One key of a table.
#[derive(Debug)]
pub(crate) struct Key {
    /// Its name, as the attribute or the builder method writes it.
    pub(crate) name: &'static str,
    /// What it takes, after "expected": "a duration such as \"32s\"".
    pub(crate) takes: &'static str,
    /// Its type in a format that is not self-describing.
    pub(crate) stored: Stored,
}

/// A type read and written as a table of keys: a policy, a limiter's
/// settings.
pub(crate) trait Table: Sized {
    /// What it is, for "expected ...": "a retry policy".
    const WHAT: &'static str;
    /// Its keys, in the order they are written (at most 64).
    const KEYS: &'static [Key];
    /// What was read so far, key by key.
    type Raw: Default;

    /// Reads the value of the key `KEYS[index]` into `raw`: the value's own
    /// rule, or the message that says what is wrong and the fix.
    fn read(raw: &mut Self::Raw, index: usize, value: Scalar) -> Result<(), String>;

    /// The value from what was read: the defaults of the keys left out and
    /// the rules between keys.
    fn finish(raw: Self::Raw) -> Result<Self, String>;

    /// The keys that were set, with their values, in `KEYS`' order; for a
    /// format that is `human_readable` or not. An error when what was set
    /// would not read back (a value built in code that a file could not
    /// hold).
    fn entries(&self, human_readable: bool) -> Result<Vec<(usize, Scalar)>, String>;
}

/// `builder` with `value` set by `set`, when there is one: a key left out
/// keeps the builder's default.
pub(crate) fn set_if<B, T>(builder: B, value: Option<T>, set: impl FnOnce(B, T) -> B) -> B {
    match value {
        Some(value) => set(builder, value),
        None => builder,
    }
}

/// Reads a [`Table`] from a map of any format.
pub(crate) fn deserialize_table<'de, T: Table, D: Deserializer<'de>>(deserializer: D) -> Result<T, D::Error> {
    deserializer.deserialize_map(TableVisitor::<T>(PhantomData))
}

/// Writes the keys of a [`Table`] that were set, as a map.
pub(crate) fn serialize_table<T: Table, S: Serializer>(table: &T, serializer: S) -> Result<S::Ok, S::Error> {
    let entries = table
        .entries(serializer.is_human_readable())
        .map_err(serde::ser::Error::custom)?;
    let mut map = serializer.serialize_map(Some(entries.len()))?;
    for (index, value) in &entries {
        map.serialize_entry(T::KEYS[*index].name, value)?;
    }
    map.end()
}

/// Reads one value of `key`, for [`Table`]s and the types read alone
/// (`Jitter`, `HintAboveCap`).
pub(crate) fn deserialize_value<'de, D: Deserializer<'de>>(
    key: &'static Key,
    deserializer: D,
) -> Result<Scalar, D::Error> {
    ValueSeed { key }.deserialize(deserializer)
}

struct TableVisitor<T>(PhantomData<T>);

impl<'de, T: Table> Visitor<'de> for TableVisitor<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let keys: Vec<&str> = T::KEYS.iter().map(|key| key.name).collect();
        write!(f, "{}: a table of {}", T::WHAT, keys.join(", "))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<T, A::Error> {
        let mut raw = T::Raw::default();
        let mut seen = 0u64;
        while let Some(index) = map.next_key_seed(KeySeed { keys: T::KEYS })? {
            let key = &T::KEYS[index];
            if seen & (1 << index) != 0 {
                return Err(de::Error::custom(grammar::duplicate_key(key.name)));
            }
            seen |= 1 << index;
            let value = map.next_value_seed(ValueSeed { key })?;
            T::read(&mut raw, index, value).map_err(de::Error::custom)?;
        }
        T::finish(raw).map_err(de::Error::custom)
    }
}

/// A key of a table: its index, or "unknown key" with the nearest one.
struct KeySeed {
    keys: &'static [Key],
}

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = usize;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<usize, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeySeed {
    type Value = usize;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a key")
    }

    fn visit_str<E: de::Error>(self, name: &str) -> Result<usize, E> {
        self.keys
            .iter()
            .position(|key| key.name == name)
            .ok_or_else(|| E::custom(grammar::unknown_key(name, self.keys.iter().map(|key| key.name))))
    }
}

/// A value of `key`, as the format gave it: any type from a self-describing
/// format (the key's rule then says what is wrong), the key's stored type
/// from the others.
#[derive(Clone, Copy)]
struct ValueSeed {
    key: &'static Key,
}

impl<'de> DeserializeSeed<'de> for ValueSeed {
    type Value = Scalar;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Scalar, D::Error> {
        if deserializer.is_human_readable() {
            return deserializer.deserialize_any(self);
        }
        match self.key.stored {
            Stored::Str => deserializer.deserialize_str(self),
            Stored::U32 => deserializer.deserialize_u32(self),
            Stored::F64 => deserializer.deserialize_f64(self),
        }
    }
}

impl<'de> Visitor<'de> for ValueSeed {
    type Value = Scalar;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}` to be {}", self.key.name, self.key.takes)
    }

    fn visit_bool<E: de::Error>(self, value: bool) -> Result<Scalar, E> {
        Ok(Scalar::Bool(value))
    }

    fn visit_i64<E: de::Error>(self, value: i64) -> Result<Scalar, E> {
        Ok(Scalar::Int(value.into()))
    }

    fn visit_u64<E: de::Error>(self, value: u64) -> Result<Scalar, E> {
        Ok(Scalar::Int(value.into()))
    }

    fn visit_i128<E: de::Error>(self, value: i128) -> Result<Scalar, E> {
        Ok(Scalar::Int(value))
    }

    fn visit_u128<E: de::Error>(self, value: u128) -> Result<Scalar, E> {
        Ok(Scalar::Int(i128::try_from(value).unwrap_or(i128::MAX)))
    }

    fn visit_f64<E: de::Error>(self, value: f64) -> Result<Scalar, E> {
        Ok(Scalar::Float(value))
    }

    fn visit_str<E: de::Error>(self, value: &str) -> Result<Scalar, E> {
        Ok(Scalar::Str(value.to_owned()))
    }

    fn visit_string<E: de::Error>(self, value: String) -> Result<Scalar, E> {
        Ok(Scalar::Str(value))
    }
}

impl serde::Serialize for Scalar {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Scalar::Str(text) => serializer.serialize_str(text),
            Scalar::Int(n) => match (u32::try_from(*n), i64::try_from(*n)) {
                (Ok(n), _) => serializer.serialize_u32(n),
                (_, Ok(n)) => serializer.serialize_i64(n),
                _ => serializer.serialize_i128(*n),
            },
            Scalar::Float(x) => serializer.serialize_f64(*x),
            Scalar::Bool(b) => serializer.serialize_bool(*b),
        }
    }
}

#[cfg(test)]
mod tests;
