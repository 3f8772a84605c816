//! Each kind of value a settings key takes.
//!
//! Read from a [`Scalar`] with its rule: a duration in the attribute's grammar,
//! a count, a number, the retries, a jitter mode, a hint rule. Each error names
//! the key, quotes at most a short prefix of the value, and says the fix; where
//! the attribute refuses the same value, it says it in the attribute's words
//! (`grammar.rs`).

use core::time::Duration;

use crate::schedule::grammar::{self, Syntax};
use crate::schedule::policy::{HintAboveCap, Jitter};
use crate::schedule::text::ParseError;
use crate::settings::Scalar;

/// `problem` with the value written as a line of the file would: `key =
/// "value": problem` (short values whole, long ones cut).
fn at(key: &str, value: &Scalar, problem: impl core::fmt::Display) -> String {
    format!("{key} = {}: {problem}", shown(value))
}

/// A value as a settings file writes it: strings quoted, at most a short
/// prefix of a long one.
pub(super) fn shown(value: &Scalar) -> String {
    match value {
        Scalar::Str(text) => format!("\"{}\"", grammar::excerpt(text)),
        Scalar::Int(n) => grammar::excerpt(&n.to_string()),
        Scalar::Float(x) => grammar::excerpt(&x.to_string()),
        Scalar::Bool(b) => b.to_string(),
    }
}

/// Whether a duration key takes zero.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Zero {
    /// Zero means something (`max_wait = "0s"`: refuse instead of waiting).
    Allowed,
    /// Zero is refused, as the attribute refuses it.
    Refused,
}

/// A duration in the attribute's grammar (`"32s"`, `"1m30s"`), zero
/// allowed or not.
pub(super) fn duration(key: &str, value: Scalar, zero: Zero) -> Result<Duration, String> {
    match &value {
        Scalar::Str(text) => match grammar::parse_duration(text) {
            Ok(d) if d.is_zero() && zero == Zero::Refused => Err(grammar::zero_duration(key)),
            Ok(d) => Ok(d),
            Err(error) => Err(at(key, &value, error)),
        },
        Scalar::Int(n) => Err(grammar::duration_without_unit(key, &n.to_string())),
        Scalar::Float(x) => Err(grammar::duration_without_unit(key, &x.to_string())),
        Scalar::Bool(_) => Err(grammar::duration_expected(key)),
    }
}

/// A duration of at least `least`, which `why` explains.
pub(super) fn duration_at_least(key: &str, value: Scalar, least: Duration, why: &str) -> Result<Duration, String> {
    let d = duration(key, value, Zero::Refused)?;
    if d < least {
        return Err(format!(
            "`{key}` must be at least {} ({why}), got {}",
            grammar::format_duration(least),
            grammar::format_duration(d)
        ));
    }
    Ok(d)
}

/// A whole number from `least` to `most`.
pub(super) fn count(key: &str, value: Scalar, least: u32, most: u32) -> Result<u32, String> {
    let n = whole(key, &value)?;
    match u32::try_from(n) {
        Ok(n) if (least..=most).contains(&n) => Ok(n),
        _ if most == u32::MAX => Err(format!("`{key}` must be at least {least}, got {}", shown(&value))),
        _ => Err(format!("`{key}` must be from {least} to {most}, got {}", shown(&value))),
    }
}

/// A whole number, or a string that holds one (an environment variable's).
fn whole(key: &str, value: &Scalar) -> Result<i128, String> {
    let takes = || {
        format!(
            "`{key}` takes a whole number, such as `{key} = 5`; got {}",
            shown(value)
        )
    };
    match value {
        Scalar::Int(n) => Ok(*n),
        Scalar::Str(text) => text.trim().parse::<i128>().map_err(|_| takes()),
        Scalar::Float(_) | Scalar::Bool(_) => Err(takes()),
    }
}

/// A number (whole or not), or a string that holds one. `example`
/// is a value the key could take.
pub(super) fn number(key: &str, value: Scalar, example: &str) -> Result<f64, String> {
    let takes = || {
        format!(
            "`{key}` takes a number, such as `{key} = {example}`; got {}",
            shown(&value)
        )
    };
    match &value {
        Scalar::Int(n) => Ok(*n as f64),
        Scalar::Float(x) => Ok(*x),
        Scalar::Str(text) => text.trim().parse::<f64>().map_err(|_| takes()),
        Scalar::Bool(_) => Err(takes()),
    }
}

/// A number within `least..=most` (what `range` says in words).
pub(super) fn number_within(
    key: &str,
    value: Scalar,
    (least, most): (f64, f64),
    range: &str,
    example: &str,
) -> Result<f64, String> {
    let shown = shown(&value);
    let x = number(key, value, example)?;
    if (least..=most).contains(&x) {
        Ok(x)
    } else {
        Err(format!("`{key}` must be {range}, got {shown}"))
    }
}

/// `max_retries`: a whole number from 1, or `"unlimited"` (`u32::MAX`).
pub(super) fn retries(key: &str, value: Scalar) -> Result<u32, String> {
    if matches!(&value, Scalar::Str(text) if text.trim() == "unlimited") {
        return Ok(u32::MAX);
    }
    let n = whole(key, &value).map_err(|_| {
        format!(
            "`{key}` takes a whole number, such as `{key} = 5`, or \"unlimited\" (with `max_elapsed`: retries bounded by time alone); got {}",
            shown(&value)
        )
    })?;
    match u32::try_from(n) {
        Ok(0) => Err(format!(
            "`{key} = 0` would never retry: retry at least once (`{key} = 1`)"
        )),
        Ok(n) => Ok(n),
        Err(_) if n < 0 => Err(format!("`{key}` must be a positive whole number, such as `{key} = 5`")),
        Err(_) => Err(format!("`{key}` is too large: at most {}", u32::MAX)),
    }
}

/// `multiplier`: a finite number >= 1.
pub(super) fn multiplier(key: &str, value: Scalar) -> Result<f64, String> {
    let m = number(key, value, "2")?;
    match grammar::multiplier_rule(key, m) {
        None => Ok(m),
        Some(message) => Err(message),
    }
}

/// `jitter`: a word or an additive amount, as `Jitter`'s `FromStr` reads it.
pub(super) fn jitter(key: &str, value: Scalar) -> Result<Jitter, String> {
    match &value {
        Scalar::Str(text) => text.parse().map_err(ParseError::into_message),
        Scalar::Int(n) => Err(format!("{}: write `{key} = \"{n}ms\"`", grammar::jitter_expected(key))),
        Scalar::Float(_) | Scalar::Bool(_) => Err(grammar::jitter_expected(key)),
    }
}

/// `hint_above_cap`: `stop` or `cap`.
pub(super) fn hint_above_cap(value: Scalar) -> Result<HintAboveCap, String> {
    match &value {
        Scalar::Str(text) => text.parse().map_err(ParseError::into_message),
        _ => shown(&value).parse().map_err(ParseError::into_message),
    }
}

/// `unlimited` without `max_elapsed`, in a settings file's words.
pub(super) fn unlimited_without_max_elapsed() -> String {
    grammar::unlimited_without_max_elapsed(Syntax::Settings)
}
