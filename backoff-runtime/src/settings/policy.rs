//! `Deserialize` and `Serialize` for the schedule.
//!
//! For [`Policy`], [`Jitter`] and [`HintAboveCap`]: the attribute's schedule
//! keys, its duration grammar and its rules, checked at load.
//!
//! The values are set through the `try_` builders in the order of the
//! attribute's key table (`max_backoff` before `initial_backoff` and
//! `jitter`), so a rule between two keys names the key the attribute names.
//! One rule of the attribute is not a policy's: a `max_elapsed` shorter
//! than the first wait is refused by `#[retry]` only when it sees no
//! `retry_after` key (a server hint can be 0, so a retry can still start);
//! a policy does not know the hints it will be used with.

use core::time::Duration;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::schedule::grammar;
use crate::schedule::policy::{HintAboveCap, Jitter, Policy, PolicyError};
use crate::settings::values::{self, Zero};
use crate::settings::{Key, Scalar, Stored, Table, set_if};

/// `Policy::new()`'s cap: an additive jitter amount is checked against it
/// when `max_backoff` is left out, as the attribute checks it.
const DEFAULT_MAX_BACKOFF: Duration = Policy::new().get_max_backoff();

/// A duration key.
const fn duration_key(name: &'static str) -> Key {
    Key {
        name,
        takes: "a duration with a unit, such as \"32s\" or \"250ms\"",
        stored: Stored::Str,
    }
}

const JITTER: Key = Key {
    name: "jitter",
    takes: "a jitter mode (additive, full, equal, decorrelated, grpc, none) or an additive amount such as \"500ms\"",
    stored: Stored::Str,
};

const HINT_ABOVE_CAP: Key = Key {
    name: "hint_above_cap",
    takes: "\"stop\" or \"cap\"",
    stored: Stored::Str,
};

/// What a policy's keys held, as read.
#[derive(Default)]
pub(crate) struct RawPolicy {
    max_retries: Option<u32>,
    max_backoff: Option<Duration>,
    initial_backoff: Option<Duration>,
    multiplier: Option<f64>,
    jitter: Option<Jitter>,
    max_elapsed: Option<Duration>,
    hint_above_cap: Option<HintAboveCap>,
}

impl Table for Policy {
    const WHAT: &'static str = "a retry policy";
    // The schedule keys of `#[retry]`, in the order of its key table
    // (`backoff-macros/src/keys.rs`; `tests/behaviour/settings.rs` checks).
    const KEYS: &'static [Key] = &[
        Key {
            name: "max_retries",
            takes: "a whole number from 1, or \"unlimited\"",
            stored: Stored::U32,
        },
        duration_key("max_backoff"),
        duration_key("initial_backoff"),
        Key {
            name: "multiplier",
            takes: "a number >= 1",
            stored: Stored::F64,
        },
        JITTER,
        duration_key("max_elapsed"),
        HINT_ABOVE_CAP,
    ];
    type Raw = RawPolicy;

    fn read(raw: &mut RawPolicy, index: usize, value: Scalar) -> Result<(), String> {
        let key = Self::KEYS[index].name;
        match index {
            0 => raw.max_retries = Some(values::retries(key, value)?),
            1 => raw.max_backoff = Some(values::duration(key, value, Zero::Refused)?),
            2 => raw.initial_backoff = Some(values::duration(key, value, Zero::Refused)?),
            3 => raw.multiplier = Some(values::multiplier(key, value)?),
            4 => raw.jitter = Some(values::jitter(key, value)?),
            5 => raw.max_elapsed = Some(values::duration(key, value, Zero::Refused)?),
            _ => raw.hint_above_cap = Some(values::hint_above_cap(value)?),
        }
        Ok(())
    }

    fn finish(raw: RawPolicy) -> Result<Policy, String> {
        let policy = try_set(Policy::new(), raw.max_retries, Policy::try_max_retries)?;
        let policy = try_set(policy, raw.max_backoff, Policy::try_max_backoff)?;
        let policy = try_set(policy, raw.initial_backoff, Policy::try_initial_backoff)?;
        let policy = try_set(policy, raw.multiplier, Policy::try_multiplier)?;
        let policy = try_set(policy, raw.jitter, Policy::try_jitter)?;
        let policy = try_set(policy, raw.max_elapsed, Policy::try_max_elapsed)?;
        let policy = set_if(policy, raw.hint_above_cap, Policy::hint_above_cap);
        settings_rules(&policy)?;
        Ok(policy)
    }

    fn entries(&self, human_readable: bool) -> Result<Vec<(usize, Scalar)>, String> {
        settings_rules(self)?;
        let duration = |d: Duration| Scalar::Str(grammar::format_duration(d));
        let retries = if self.get_max_retries() == u32::MAX && human_readable {
            Scalar::Str("unlimited".to_owned())
        } else {
            Scalar::Int(self.get_max_retries().into())
        };
        let all = [
            (Policy::MAX_RETRIES, Some(retries)),
            (Policy::MAX_BACKOFF, Some(duration(self.get_max_backoff()))),
            (Policy::INITIAL_BACKOFF, Some(duration(self.get_initial_backoff()))),
            (Policy::MULTIPLIER, Some(Scalar::Float(self.get_multiplier()))),
            (Policy::JITTER, Some(Scalar::Str(self.get_jitter().to_string()))),
            (Policy::MAX_ELAPSED, self.get_max_elapsed().map(duration)),
            (
                Policy::HINT_ABOVE_CAP,
                Some(Scalar::Str(self.get_hint_above_cap().to_string())),
            ),
        ];
        Ok(all
            .into_iter()
            .enumerate()
            .filter_map(|(index, (bit, value))| Some((index, value.filter(|_| self.is_set(bit))?)))
            .collect())
    }
}

/// `policy` with `value` set by its `try_` builder, when there is one.
fn try_set<T>(
    policy: Policy,
    value: Option<T>,
    set: impl FnOnce(Policy, T) -> Result<Policy, PolicyError>,
) -> Result<Policy, String> {
    value.map_or(Ok(policy), |value| {
        set(policy, value).map_err(|error| error.to_string())
    })
}

/// The attribute's rules that the builders leave to the end, as they
/// depend on a value that may still be set: an additive jitter amount
/// above the default cap when no cap was set, and unlimited retries
/// without `max_elapsed`. Checked at load, and before writing (so what is
/// written reads back).
fn settings_rules(policy: &Policy) -> Result<(), String> {
    if let Jitter::AdditiveUpTo(amount) = policy.get_jitter() {
        if !policy.is_set(Policy::MAX_BACKOFF) && amount > DEFAULT_MAX_BACKOFF {
            return Err(grammar::jitter_above_max(amount, DEFAULT_MAX_BACKOFF, false));
        }
    }
    if policy.get_max_retries() == u32::MAX && policy.get_max_elapsed().is_none() {
        return Err(values::unlimited_without_max_elapsed());
    }
    Ok(())
}

/// A policy read from a table with the attribute's schedule keys:
/// `max_retries`, `max_backoff`, `initial_backoff`, `multiplier`, `jitter`,
/// `max_elapsed`, `hint_above_cap`. Each key left out keeps
/// [`Policy::new`]'s value; each value is checked with the attribute's rule,
/// and so are the values written against each other (an `initial_backoff`
/// or an additive jitter amount longer than `max_backoff`,
/// `max_retries = "unlimited"` without `max_elapsed`). An unknown key is
/// refused with the nearest known one.
///
/// ```
/// use backoff_runtime::{Jitter, Policy};
/// use std::time::Duration;
///
/// let policy: Policy = toml::from_str(r#"
///     max_retries = 8
///     max_backoff = "10s"
///     initial_backoff = "250ms"
///     jitter = "full"
/// "#).unwrap();
/// assert_eq!(policy, Policy::new()
///     .max_retries(8)
///     .max_backoff(Duration::from_secs(10))
///     .initial_backoff(Duration::from_millis(250))
///     .jitter(Jitter::Full));
///
/// let error = toml::from_str::<Policy>(r#"
///     max_backoff = "5s"
///     initial_backoff = "10s"
/// "#).unwrap_err();
/// assert!(error.message().starts_with("`initial_backoff` (10s) is longer than `max_backoff` (5s)"));
/// ```
impl<'de> Deserialize<'de> for Policy {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        crate::settings::deserialize_table(deserializer)
    }
}

/// The keys that were set, in the attribute's words: durations as the
/// attribute writes them (`"1m30s"`), jitter and `hint_above_cap` as
/// words, `max_retries` after [`retry_for`](Policy::retry_for) as
/// `"unlimited"`. What is written reads back to an equal policy; a policy
/// that a settings file could not hold (an additive jitter amount above the
/// default cap with no cap set, `max_retries(u32::MAX)` without
/// `max_elapsed`) is an error, the rule's.
///
/// ```
/// use backoff_runtime::{Jitter, Policy};
/// use std::time::Duration;
///
/// let policy = Policy::new().max_backoff(Duration::from_millis(500)).jitter(Jitter::Full);
/// let text = toml::to_string(&policy).unwrap();
/// assert_eq!(text, "max_backoff = \"500ms\"\njitter = \"full\"\n");
/// assert_eq!(toml::from_str::<Policy>(&text).unwrap(), policy);
/// ```
impl Serialize for Policy {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        crate::settings::serialize_table(self, serializer)
    }
}

/// A jitter mode read as `FromStr` reads it: a word (`"full"`) or an
/// additive amount (`"500ms"`, not zero).
///
/// ```
/// use backoff_runtime::Jitter;
///
/// assert_eq!(serde_json::from_str::<Jitter>(r#""equal""#).unwrap(), Jitter::Equal);
/// assert!(serde_json::from_str::<Jitter>("500").unwrap_err().to_string().contains("write `jitter = \"500ms\"`"));
/// ```
impl<'de> Deserialize<'de> for Jitter {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = crate::settings::deserialize_value(&JITTER, deserializer)?;
        values::jitter(JITTER.name, value).map_err(serde::de::Error::custom)
    }
}

/// The mode's word, or the additive amount as a duration (`Display`).
///
/// ```
/// use backoff_runtime::Jitter;
/// assert_eq!(serde_json::to_string(&Jitter::Decorrelated).unwrap(), r#""decorrelated""#);
/// ```
impl Serialize for Jitter {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.to_string())
    }
}

/// `"stop"` or `"cap"`.
///
/// ```
/// use backoff_runtime::HintAboveCap;
/// assert_eq!(serde_json::from_str::<HintAboveCap>(r#""cap""#).unwrap(), HintAboveCap::WaitCap);
/// ```
impl<'de> Deserialize<'de> for HintAboveCap {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = crate::settings::deserialize_value(&HINT_ABOVE_CAP, deserializer)?;
        values::hint_above_cap(value).map_err(serde::de::Error::custom)
    }
}

/// `"stop"` or `"cap"` (`Display`).
///
/// ```
/// use backoff_runtime::HintAboveCap;
/// assert_eq!(serde_json::to_string(&HintAboveCap::Stop).unwrap(), r#""stop""#);
/// ```
impl Serialize for HintAboveCap {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.to_string())
    }
}
