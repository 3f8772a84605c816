//! The schedule's modes as text.
//!
//! In the attribute's words: [`Jitter`] and [`HintAboveCap`] read with
//! `FromStr` and written with `Display`, so an environment variable, a
//! command-line flag and a settings file (feature `serde`) take what
//! `#[retry(jitter = ...)]` takes. The durations are `grammar.rs`'s.

use core::fmt;
use core::str::FromStr;

use crate::schedule::grammar::{self, Syntax};
use crate::schedule::policy::{HintAboveCap, Jitter};

/// Text that is not a value of the attribute's grammar: a jitter mode or a
/// hint rule that [`Jitter`]'s or [`HintAboveCap`]'s `FromStr` could not
/// read. Its `Display` says what the value takes, with the nearest word when
/// one is close.
///
/// ```
/// use backoff_runtime::Jitter;
///
/// let error = "fulll".parse::<Jitter>().unwrap_err();
/// assert!(error.to_string().starts_with("unknown jitter mode `fulll`: did you mean `full`?"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    message: String,
}

impl ParseError {
    /// The error that says `message`.
    pub(crate) fn new(message: String) -> Self {
        ParseError { message }
    }

    /// What it says (a settings file's error message).
    #[cfg(feature = "serde")]
    pub(crate) fn into_message(self) -> String {
        self.message
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ParseError {}

/// A jitter mode in the attribute's words: `additive`, `full`, `equal`,
/// `decorrelated`, `grpc`, `none`, or an additive amount such as `"250ms"`
/// (not zero: write `none`). The text of an environment variable or a
/// command-line flag; settings files read the same (feature `serde`).
///
/// ```
/// use backoff_runtime::Jitter;
/// use std::time::Duration;
///
/// assert_eq!("full".parse::<Jitter>(), Ok(Jitter::Full));
/// assert_eq!("250ms".parse::<Jitter>(), Ok(Jitter::AdditiveUpTo(Duration::from_millis(250))));
/// assert!("0s".parse::<Jitter>().unwrap_err().to_string().contains("write `jitter = \"none\"`"));
/// ```
impl FromStr for Jitter {
    type Err = ParseError;

    fn from_str(text: &str) -> Result<Self, ParseError> {
        let word = text.trim();
        let mode = match word {
            "additive" => Jitter::Additive,
            "full" => Jitter::Full,
            "equal" => Jitter::Equal,
            "decorrelated" => Jitter::Decorrelated,
            "grpc" => Jitter::Grpc,
            "none" => Jitter::None,
            _ if word.starts_with(|c: char| c.is_ascii_digit() || c == '.') => match grammar::parse_duration(word) {
                Ok(amount) if amount.is_zero() => {
                    return Err(ParseError::new(grammar::zero_jitter("jitter", Syntax::Settings)));
                }
                Ok(amount) => Jitter::AdditiveUpTo(amount),
                Err(error) => {
                    return Err(ParseError::new(format!(
                        "jitter = \"{}\": {error}",
                        grammar::excerpt(word)
                    )));
                }
            },
            _ => return Err(ParseError::new(grammar::unknown_jitter_mode("jitter", word))),
        };
        Ok(mode)
    }
}

/// The attribute's word for the mode, or the additive amount as a duration
/// (`"250ms"`); `AdditiveUpTo(0s)`, the same as `None`, is `none`. What
/// `FromStr` reads back.
///
/// ```
/// use backoff_runtime::Jitter;
/// use std::time::Duration;
///
/// assert_eq!(Jitter::Decorrelated.to_string(), "decorrelated");
/// assert_eq!(Jitter::AdditiveUpTo(Duration::from_millis(1500)).to_string(), "1s500ms");
/// ```
impl fmt::Display for Jitter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let word = match self {
            Jitter::Additive => "additive",
            Jitter::AdditiveUpTo(amount) if amount.is_zero() => "none",
            Jitter::AdditiveUpTo(amount) => return f.write_str(&grammar::format_duration(*amount)),
            Jitter::Full => "full",
            Jitter::Equal => "equal",
            Jitter::Decorrelated => "decorrelated",
            Jitter::Grpc => "grpc",
            Jitter::None => "none",
        };
        f.write_str(word)
    }
}

/// The words of `hint_above_cap`, with what each stands for.
const HINT_WORDS: &[(&str, HintAboveCap)] = &[("stop", HintAboveCap::Stop), ("cap", HintAboveCap::WaitCap)];

/// The attribute's words: `stop` or `cap`.
///
/// ```
/// use backoff_runtime::HintAboveCap;
///
/// assert_eq!("cap".parse::<HintAboveCap>(), Ok(HintAboveCap::WaitCap));
/// assert!("wait".parse::<HintAboveCap>().is_err());
/// ```
impl FromStr for HintAboveCap {
    type Err = ParseError;

    fn from_str(text: &str) -> Result<Self, ParseError> {
        let word = text.trim();
        if let Some((_, rule)) = HINT_WORDS.iter().find(|(each, _)| *each == word) {
            return Ok(*rule);
        }
        let near = grammar::nearest(word, HINT_WORDS.iter().map(|(each, _)| *each))
            .map(|near| format!(": did you mean `{near}`?"))
            .unwrap_or_default();
        Err(ParseError::new(format!(
            "unknown word `{}` for `hint_above_cap`{near}\nhint_above_cap takes `stop` (the default: a server hint longer than `max_backoff` ends the call) or `cap` (wait `max_backoff` and retry)",
            grammar::excerpt(word)
        )))
    }
}

/// The attribute's word: `stop` or `cap`.
///
/// ```
/// assert_eq!(backoff_runtime::HintAboveCap::WaitCap.to_string(), "cap");
/// ```
impl fmt::Display for HintAboveCap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let word = HINT_WORDS
            .iter()
            .find(|(_, rule)| rule == self)
            .map_or("stop", |(word, _)| *word);
        f.write_str(word)
    }
}

#[cfg(test)]
mod tests;
