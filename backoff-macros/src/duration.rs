//! Human durations such as `"32s"`, `"1m30s"`, `"1m 30s"`, `"1.5s"` or
//! `"250ms"`, parsed to an exact number of nanoseconds at compile time.

use core::fmt;
use core::time::Duration;

/// The units a duration may use, with their length in nanoseconds.
const UNITS: &[(&str, u128)] = &[
    ("ns", 1),
    ("us", 1_000),
    ("µs", 1_000),
    ("ms", 1_000_000),
    ("s", 1_000_000_000),
    ("m", 60_000_000_000),
    ("h", 3_600_000_000_000),
];

/// The unit list as shown in error messages.
pub(crate) const UNIT_LIST: &str = "ns, us (or µs), ms, s, m, h";

/// Why a duration string was rejected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum DurationError {
    /// The string is empty or blank.
    Empty,
    /// A number with no unit, e.g. `"5"`.
    MissingUnit(String),
    /// A unit we do not know, e.g. `"5sec"`: the number and the unit.
    UnknownUnit(String, String),
    /// A number and a unit written apart, e.g. `"10 sec"`: both.
    SpacedUnit(String, String),
    /// Something that is not a number where a number belongs.
    Malformed(String),
    /// A fraction finer than one nanosecond, e.g. `"1.5ns"`.
    SubNanosecond(String),
    /// More than `Duration` can hold.
    TooLarge,
}

impl fmt::Display for DurationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DurationError::Empty => write!(
                f,
                "empty duration: write a number and a unit, such as \"500ms\" or \"32s\""
            ),
            DurationError::MissingUnit(number) => write!(
                f,
                "duration `{number}` has no unit: write \"{number}s\", \"{number}ms\" or another unit ({UNIT_LIST})"
            ),
            DurationError::UnknownUnit(number, unit) => match spelling_of(unit) {
                Some(known) => write!(
                    f,
                    "unknown unit `{unit}` in duration: write \"{number}{known}\" (units: {UNIT_LIST})"
                ),
                None => write!(f, "unknown unit `{unit}` in duration: use one of {UNIT_LIST}"),
            },
            DurationError::SpacedUnit(number, unit) => match spelling_of(unit) {
                Some(known) => write!(
                    f,
                    "write the number and its unit together: \"{number}{known}\", not \"{number} {unit}\" (units: {UNIT_LIST})"
                ),
                None => write!(
                    f,
                    "write the number and its unit together, such as \"{number}s\", and use one of the units {UNIT_LIST} (not `{unit}`)"
                ),
            },
            DurationError::Malformed(part) => write!(
                f,
                "cannot read `{part}` as a duration: write a number and a unit, such as \"1.5s\" or \"1m30s\" (units: {UNIT_LIST})"
            ),
            DurationError::SubNanosecond(part) => {
                write!(f, "`{part}` is finer than one nanosecond, the smallest duration")
            }
            DurationError::TooLarge => write!(f, "duration is too large to represent"),
        }
    }
}

/// The unit meant by a common spelling (`sec`, `minutes`, `hrs`, `millis`,
/// a known unit itself), in the form a duration takes.
fn spelling_of(unit: &str) -> Option<&'static str> {
    let lower = unit.to_lowercase();
    let known = match lower.trim_end_matches('.') {
        "ns" | "nsec" | "nsecs" | "nano" | "nanos" | "nanosecond" | "nanoseconds" => "ns",
        "us" | "µs" | "usec" | "usecs" | "micro" | "micros" | "microsecond" | "microseconds" => "us",
        "ms" | "msec" | "msecs" | "milli" | "millis" | "millisecond" | "milliseconds" => "ms",
        "s" | "sec" | "secs" | "second" | "seconds" => "s",
        "m" | "min" | "mins" | "minute" | "minutes" => "m",
        "h" | "hr" | "hrs" | "hour" | "hours" => "h",
        _ => return None,
    };
    Some(known)
}

/// Parses a duration such as `"1m30s"` into nanoseconds. Components are
/// summed; spaces between them are allowed; each number may have a decimal
/// fraction.
pub(crate) fn parse_nanos(text: &str) -> Result<u128, DurationError> {
    let mut rest = text.trim();
    if rest.is_empty() {
        return Err(DurationError::Empty);
    }
    let mut total: u128 = 0;
    while !rest.is_empty() {
        let number_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let (number, after) = rest.split_at(number_len);
        if number.is_empty() {
            let junk = after.split_whitespace().next().unwrap_or(after);
            return Err(DurationError::Malformed(junk.to_owned()));
        }
        let unit_len = after
            .find(|c: char| c.is_ascii_digit() || c == '.' || c.is_whitespace())
            .unwrap_or(after.len());
        let (unit, after_unit) = after.split_at(unit_len);
        if unit.is_empty() {
            let spaced = after.trim_start();
            let word_len = spaced
                .find(|c: char| c.is_ascii_digit() || c == '.' || c.is_whitespace())
                .unwrap_or(spaced.len());
            if after.starts_with(char::is_whitespace) && word_len > 0 {
                return Err(DurationError::SpacedUnit(
                    number.to_owned(),
                    spaced[..word_len].to_owned(),
                ));
            }
            return Err(DurationError::MissingUnit(number.to_owned()));
        }
        let scale = UNITS
            .iter()
            .find(|(name, _)| *name == unit)
            .map(|(_, scale)| *scale)
            .ok_or_else(|| DurationError::UnknownUnit(number.to_owned(), unit.to_owned()))?;
        let part = component_nanos(number, scale).map_err(|e| match e {
            DurationError::SubNanosecond(_) => DurationError::SubNanosecond(format!("{number}{unit}")),
            other => other,
        })?;
        total = total.checked_add(part).ok_or(DurationError::TooLarge)?;
        rest = after_unit.trim_start();
    }
    if total > Duration::MAX.as_nanos() {
        return Err(DurationError::TooLarge);
    }
    Ok(total)
}

/// Parses a duration string into a `Duration`.
pub(crate) fn parse(text: &str) -> Result<Duration, DurationError> {
    let nanos = parse_nanos(text)?;
    let secs = u64::try_from(nanos / 1_000_000_000).map_err(|_| DurationError::TooLarge)?;
    // The remainder is below 1e9.
    let subsec = u32::try_from(nanos % 1_000_000_000).map_err(|_| DurationError::TooLarge)?;
    Ok(Duration::new(secs, subsec))
}

/// `number` (digits with an optional fraction) times `scale` nanoseconds, exactly.
fn component_nanos(number: &str, scale: u128) -> Result<u128, DurationError> {
    let (whole, fraction) = match number.split_once('.') {
        Some((whole, fraction)) => (whole, fraction),
        None => (number, ""),
    };
    if (whole.is_empty() && fraction.is_empty()) || fraction.contains('.') {
        return Err(DurationError::Malformed(number.to_owned()));
    }
    let whole_value: u128 = if whole.is_empty() {
        0
    } else {
        whole.parse().map_err(|_| DurationError::TooLarge)?
    };
    let mut nanos = whole_value.checked_mul(scale).ok_or(DurationError::TooLarge)?;
    if !fraction.is_empty() {
        let digits = fraction.trim_end_matches('0');
        if digits.len() > 38 {
            return Err(DurationError::SubNanosecond(number.to_owned()));
        }
        let value: u128 = if digits.is_empty() {
            0
        } else {
            digits.parse().map_err(|_| DurationError::TooLarge)?
        };
        let denominator = 10u128.pow(digits.len() as u32);
        let scaled = value.checked_mul(scale).ok_or(DurationError::TooLarge)?;
        if scaled % denominator != 0 {
            return Err(DurationError::SubNanosecond(number.to_owned()));
        }
        nanos = nanos.checked_add(scaled / denominator).ok_or(DurationError::TooLarge)?;
    }
    Ok(nanos)
}

/// Formats a duration the way users write one (`"1m30s"`, `"250ms"`), for
/// messages that name a value.
pub(crate) fn display(d: Duration) -> String {
    let mut nanos = d.as_nanos();
    if nanos == 0 {
        return "0s".to_owned();
    }
    let mut out = String::new();
    for (name, scale) in [
        ("h", 3_600_000_000_000u128),
        ("m", 60_000_000_000),
        ("s", 1_000_000_000),
        ("ms", 1_000_000),
        ("us", 1_000),
        ("ns", 1),
    ] {
        if nanos >= scale {
            out.push_str(&format!("{}{name}", nanos / scale));
            nanos %= scale;
        }
    }
    out
}

#[cfg(test)]
mod tests;
