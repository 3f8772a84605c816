//! The grammar that `#[retry]` and the settings share.
//!
//! Durations (`"32s"`, `"1m30s"`, `"1m 30s"`, `"1.5s"`, `"250ms"`, read to the
//! exact nanosecond), "did you mean" for a misspelled key or word, the short
//! quote of a long value, and the texts of the rules on the schedule's values.
//!
//! One file compiled into two crates. It is `backoff-runtime`'s
//! `src/schedule/grammar.rs`; `backoff-macros/src/grammar.rs` is a symbolic
//! link to it (the macro crate cannot depend on the runtime, which depends
//! on it, and `cargo package` stores the link's target as a plain file). So
//! the attribute and a settings file read a duration with the same code and
//! refuse a value with the same text. It names nothing of either crate: only
//! `core` and `std`. Its tests are the runtime's (`grammar/tests.rs`).

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

/// Why a duration could not be read by [`parse_duration`]. Its `Display` is
/// the text `#[retry]` shows for the same mistake at compile time, with the
/// fix: ``duration `32` has no unit: write "32s", "32ms" or another unit
/// (ns, us (or µs), ms, s, m, h)``.
// The examples of the public items are on the runtime's re-exports
// (`lib.rs`): a doctest here would run in the macro crate too.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum DurationError {
    /// The text is empty or blank.
    Empty,
    /// A number with no unit, such as `"5"`: the number.
    MissingUnit(String),
    /// A unit that is not one of `ns`, `us` (or `µs`), `ms`, `s`, `m`, `h`,
    /// such as `"5sec"`: the number and the unit.
    UnknownUnit(String, String),
    /// A number and its unit written apart, such as `"10 sec"`: both.
    SpacedUnit(String, String),
    /// Something that is not a number where a number belongs.
    Malformed(String),
    /// A fraction finer than one nanosecond, such as `"1.5ns"`.
    SubNanosecond(String),
    /// More than a `Duration` holds.
    TooLarge,
}

impl fmt::Display for DurationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DurationError::Empty => write!(
                f,
                "empty duration: write a number and a unit, such as \"500ms\" or \"32s\""
            ),
            DurationError::MissingUnit(number) => {
                let number = excerpt(number);
                write!(
                    f,
                    "duration `{number}` has no unit: write \"{number}s\", \"{number}ms\" or another unit ({UNIT_LIST})"
                )
            }
            DurationError::UnknownUnit(number, unit) => {
                let (number, shown) = (excerpt(number), excerpt(unit));
                match spelling_of(unit) {
                    Some(known) => write!(
                        f,
                        "unknown unit `{shown}` in duration: write \"{number}{known}\" (units: {UNIT_LIST})"
                    ),
                    None => write!(f, "unknown unit `{shown}` in duration: use one of {UNIT_LIST}"),
                }
            }
            DurationError::SpacedUnit(number, unit) => {
                let (number, shown) = (excerpt(number), excerpt(unit));
                match spelling_of(unit) {
                    Some(known) => write!(
                        f,
                        "write the number and its unit together: \"{number}{known}\", not \"{number} {shown}\" (units: {UNIT_LIST})"
                    ),
                    None => write!(
                        f,
                        "write the number and its unit together, such as \"{number}s\", and use one of the units {UNIT_LIST} (not `{shown}`)"
                    ),
                }
            }
            DurationError::Malformed(part) => write!(
                f,
                "cannot read `{}` as a duration: write a number and a unit, such as \"1.5s\" or \"1m30s\" (units: {UNIT_LIST})",
                excerpt(part)
            ),
            DurationError::SubNanosecond(part) => {
                write!(
                    f,
                    "`{}` is finer than one nanosecond, the smallest duration",
                    excerpt(part)
                )
            }
            DurationError::TooLarge => write!(f, "duration is too large to represent"),
        }
    }
}

impl std::error::Error for DurationError {}

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

/// Reads a duration in `#[retry]`'s grammar: a number and a unit (`ns`,
/// `us` or `µs`, `ms`, `s`, `m`, `h`), components summed (`"1m30s"`,
/// `"1m 30s"`), each number with an optional decimal fraction (`"1.5s"`),
/// exact to the nanosecond. A bare number has no unit and is an error that
/// says how to write it. `"0s"` reads as zero: whether a zero is allowed is
/// the rule of the key that holds it.
///
/// The same code reads the attribute's durations at compile time, and a
/// policy's or a limiter's settings (feature `serde`), so an environment
/// variable or a command-line flag read with it takes what a settings file
/// and the attribute take.
///
/// # Errors
///
/// A [`DurationError`] for text that is not a duration, whose `Display`
/// says how to write it.
pub fn parse_duration(text: &str) -> Result<Duration, DurationError> {
    let nanos = parse_nanos(text)?;
    let secs = u64::try_from(nanos / 1_000_000_000).map_err(|_| DurationError::TooLarge)?;
    // The remainder is below 1e9.
    let subsec = u32::try_from(nanos % 1_000_000_000).map_err(|_| DurationError::TooLarge)?;
    Ok(Duration::new(secs, subsec))
}

/// `text` as a number of nanoseconds (see [`parse_duration`]).
fn parse_nanos(text: &str) -> Result<u128, DurationError> {
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

/// A duration as the attribute writes one: its components from hours down
/// to nanoseconds (`"1m30s"`, `"250ms"`, `"1s500ms"`, `"0s"`), which
/// [`parse_duration`] reads back exactly. The settings write durations so.
#[must_use]
pub fn format_duration(d: Duration) -> String {
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

/// The most characters of a value an error quotes.
const EXCERPT_CHARS: usize = 40;

/// `text` as an error quotes it: whole when short, else its first 40
/// characters and how long it is (a settings file or a service config can
/// hold anything, and an error is read in a log line).
pub fn excerpt(text: &str) -> String {
    match text.char_indices().nth(EXCERPT_CHARS) {
        None => text.to_owned(),
        Some((end, _)) => format!("{}... ({} bytes)", &text[..end], text.len()),
    }
}

/// The candidate closest to `word` by edit distance, when it is close enough
/// to be a likely typo (at most a third of the word's length, at least 1):
/// "did you mean" for a key or a word.
pub(crate) fn nearest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let limit = (word.chars().count() / 3).max(1);
    candidates
        .into_iter()
        .map(|c| (edit_distance(word, c), c))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// Levenshtein distance, counting characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut current = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let substitute = previous[j] + usize::from(ca != *cb);
            current.push(substitute.min(previous[j + 1] + 1).min(current[j] + 1));
        }
        previous = current;
    }
    previous[b.len()]
}

/// Where a message's examples are written: the attribute takes a word bare
/// (`jitter = none`), a settings file as a string (`jitter = "none"`).
// Each crate writes one of the two: the other variant is dead code there.
#[allow(dead_code)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Syntax {
    /// `#[retry(...)]`.
    Attribute,
    /// A settings file (TOML, JSON, ...), an environment variable.
    Settings,
}

impl Syntax {
    /// `word` as this syntax writes it.
    fn word(self, word: &str) -> String {
        match self {
            Syntax::Attribute => word.to_owned(),
            Syntax::Settings => format!("\"{word}\""),
        }
    }
}

/// "unknown key `x`", the nearest valid key when one is close, and the list.
pub(crate) fn unknown_key<'a>(key: &str, keys: impl IntoIterator<Item = &'a str> + Clone) -> String {
    let key = excerpt(key);
    let list = keys
        .clone()
        .into_iter()
        .map(|k| format!("`{k}`"))
        .collect::<Vec<_>>()
        .join(", ");
    match nearest(&key, keys) {
        Some(near) => format!("unknown key `{key}`: did you mean `{near}`?\nvalid keys: {list}"),
        None => format!("unknown key `{key}`\nvalid keys: {list}"),
    }
}

/// A key given twice.
pub(crate) fn duplicate_key(key: &str) -> String {
    format!("duplicate key `{key}`: it is already set above; remove one of them")
}

/// A duration key given a zero.
pub(crate) fn zero_duration(key: &str) -> String {
    format!("`{key}` must be greater than zero")
}

/// A duration key given a bare number (`digits`).
pub(crate) fn duration_without_unit(key: &str, digits: &str) -> String {
    let digits = excerpt(digits);
    format!(
        "`{key}` takes a duration string with a unit, not a number: write `{key} = \"{digits}s\"` or `\"{digits}ms\"`"
    )
}

/// A duration key given what is neither a string nor a number.
pub(crate) fn duration_expected(key: &str) -> String {
    format!("`{key}` takes a duration string with a unit, such as `{key} = \"32s\"` or `\"500ms\"`")
}

/// What a multiplier must be.
pub(crate) fn multiplier_takes(key: &str) -> String {
    format!("`{key}` must be a finite number >= 1, such as `{key} = 2` or `{key} = 1.5`")
}

/// Why `m` is no multiplier of the waits (below 1, or not finite), or
/// `None` when it is one.
pub(crate) fn multiplier_rule(key: &str, m: f64) -> Option<String> {
    let hint = multiplier_takes(key);
    if m.is_finite() && m >= 1.0 {
        None
    } else if m.is_finite() {
        Some(format!(
            "`{key} = {}` would shrink the waits: {hint}",
            excerpt(&m.to_string())
        ))
    } else {
        Some(format!("`{key}` is not finite: {hint}"))
    }
}

/// The jitter modes that are written as words.
pub(crate) const JITTER_MODES: &[&str] = &["additive", "full", "equal", "decorrelated", "grpc", "none"];

/// A jitter word that is none of [`JITTER_MODES`].
pub(crate) fn unknown_jitter_mode(key: &str, word: &str) -> String {
    let near = nearest(word, JITTER_MODES.iter().copied())
        .map(|m| format!(": did you mean `{m}`?"))
        .unwrap_or_default();
    let word = excerpt(word);
    let modes = JITTER_MODES.join(", ");
    format!(
        "unknown jitter mode `{word}`{near}\n{key} takes one of {modes}, or an additive amount such as `{key} = \"500ms\"`"
    )
}

/// A jitter key given what is neither a word nor an amount.
pub(crate) fn jitter_expected(key: &str) -> String {
    let modes = JITTER_MODES.join(", ");
    format!("`{key}` takes one of {modes}, or an additive amount such as `{key} = \"500ms\"`")
}

/// An additive jitter amount of zero.
pub(crate) fn zero_jitter(key: &str, syntax: Syntax) -> String {
    format!(
        "`{key} = \"0s\"` adds no jitter: write `{key} = {}` instead",
        syntax.word("none")
    )
}

/// `initial_backoff` above `max_backoff`, both written.
pub(crate) fn initial_above_max(initial: Duration, max: Duration) -> String {
    format!(
        "`initial_backoff` ({}) is longer than `max_backoff` ({}): the first wait could never be reached; lower `initial_backoff` or raise `max_backoff`",
        format_duration(initial),
        format_duration(max)
    )
}

/// An additive jitter amount above `max_backoff` (written, or the default
/// when `max_written` is false).
pub(crate) fn jitter_above_max(amount: Duration, max: Duration, max_written: bool) -> String {
    let cap = if max_written {
        format!("`max_backoff` ({})", format_duration(max))
    } else {
        format!("`max_backoff` (default {})", format_duration(max))
    };
    format!(
        "`jitter = \"{}\"` is larger than {cap}: every wait is capped at `max_backoff`, so such jitter could never be applied; lower it or raise `max_backoff`",
        format_duration(amount)
    )
}

/// `max_retries = unlimited` without `max_elapsed`.
pub(crate) fn unlimited_without_max_elapsed(syntax: Syntax) -> String {
    format!(
        "`max_retries = {}` needs `max_elapsed`: with neither bound the retries would never end; add `max_elapsed = \"2m\"` (or how long the call may take), or give a number of retries",
        syntax.word("unlimited")
    )
}
