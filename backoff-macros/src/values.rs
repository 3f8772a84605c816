//! The kinds of value a key takes.
//!
//! Each read from the expression the user wrote with errors on its tokens: a
//! retry count, a duration string, a multiplier, a jitter mode, a hook, any
//! expression, a path in a string. The table in `keys.rs` gives each key its
//! kind.

use core::time::Duration;

use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{Expr, ExprLit, Lit, UnOp};

use crate::errors::Errors;
use crate::grammar::{self, Syntax};

/// A kind of value: how to read it from the expression written after `key =`.
pub(crate) trait ValueKind {
    /// What the value becomes once read.
    type Value;

    /// Reads `value`, written for the key `key`; records why it cannot be
    /// read in `errors` and returns `None`.
    fn read(&self, key: &'static str, value: Expr, errors: &mut Errors) -> Option<Self::Value>;
}

/// An integer literal `>= 1`, or `unlimited` (read as `u32::MAX`): how many
/// retries follow the first call.
pub(crate) struct RetryCount;

/// A string literal with a unit, such as `"32s"`, greater than zero.
pub(crate) struct DurationString;

/// A finite integer or float literal `>= 1`.
pub(crate) struct Multiplier;

/// A jitter mode written as a bare word, or an additive amount as a duration
/// string.
pub(crate) struct Jitter;

/// A path to a function or a closure, called by the retry loop.
pub(crate) struct Hook {
    /// The shape the function must have, for the error message.
    pub(crate) signature: &'static str,
    /// A path the key could take, for the error message.
    pub(crate) path_example: &'static str,
    /// A closure the key could take, for the error message.
    pub(crate) closure_example: &'static str,
}

/// Any expression: its type is checked by rustc on the expansion.
pub(crate) struct AnyExpr;

/// A string literal holding a path, such as `"my_crate::backoff"`.
pub(crate) struct PathString;

/// A non-empty string literal naming the function in metrics and events.
pub(crate) struct NameString;

/// One of a few bare words, each standing for a value.
pub(crate) struct Words<T: 'static> {
    /// Each word, with the value it stands for.
    pub(crate) words: &'static [(&'static str, T)],
    /// What the key takes, for the error message.
    pub(crate) takes: &'static str,
}

/// `stop` or `retry`: what a loop does with a failure that a retried
/// function it called already gave up on.
pub(crate) type NestedMode = Words<NestedArg>;

/// `stop` or `cap`: what a server hint longer than `max_backoff` does.
pub(crate) type HintMode = Words<HintArg>;

/// How the user wrote `hint_above_cap`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum HintArg {
    /// `hint_above_cap = stop`, the default: the call ends.
    Stop,
    /// `hint_above_cap = cap`: wait `max_backoff` and retry.
    Cap,
}

/// How the user wrote `nested`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum NestedArg {
    /// `nested = stop`, the default: one layer retries.
    Stop,
    /// `nested = retry`: retry it anyway.
    Retry,
}

/// A plain identifier: the name of a binding the expansion makes visible in
/// the body.
pub(crate) struct Binding {
    /// What the binding holds, for the error message.
    pub(crate) holds: &'static str,
    /// A name the key could take, for the error message.
    pub(crate) example: &'static str,
}

/// How the user wrote `jitter`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum JitterArg {
    /// `jitter = additive`: Google Cloud's, one `initial_backoff` of jitter.
    Additive,
    /// `jitter = "500ms"`: additive with this amount.
    AdditiveUpTo(Duration),
    /// `jitter = full`.
    Full,
    /// `jitter = equal`.
    Equal,
    /// `jitter = decorrelated`.
    Decorrelated,
    /// `jitter = grpc`: gRPC's, base x U[0.8, 1.2].
    Grpc,
    /// `jitter = none`.
    None,
}

/// The literal inside `value`, looking through parentheses and groups.
fn literal(value: &Expr) -> Option<&Lit> {
    match value {
        Expr::Lit(ExprLit { lit, .. }) => Some(lit),
        Expr::Group(group) => literal(&group.expr),
        Expr::Paren(paren) => literal(&paren.expr),
        _ => None,
    }
}

/// `-literal`, for messages about negative numbers.
fn is_negated_literal(value: &Expr) -> bool {
    matches!(value, Expr::Unary(unary) if matches!(unary.op, UnOp::Neg(_)) && literal(&unary.expr).is_some())
}

impl ValueKind for RetryCount {
    type Value = u32;

    fn read(&self, key: &'static str, value: Expr, errors: &mut Errors) -> Option<u32> {
        if let Expr::Path(path) = &value {
            if path.path.is_ident("unlimited") {
                // Bounded by `max_elapsed` alone (checked in validate.rs).
                return Some(u32::MAX);
            }
        }
        match literal(&value) {
            Some(Lit::Int(int)) => match int.base10_parse::<u32>() {
                Ok(0) => errors.reject(
                    int.span(),
                    format!(
                        "`{key} = 0` would never retry: remove `#[retry]` instead, or retry at least once (`{key} = 1`)"
                    ),
                ),
                Ok(n) => Some(n),
                Err(_) => errors.reject(int.span(), format!("`{key}` is too large: at most {}", u32::MAX)),
            },
            Some(Lit::Str(s)) => errors.reject(
                s.span(),
                format!(
                    "`{key}` takes an integer, not a string: write `{key} = {}`",
                    s.value().trim()
                ),
            ),
            _ if is_negated_literal(&value) => errors.reject(
                value.span(),
                format!("`{key}` must be a positive integer, such as `{key} = 5`"),
            ),
            _ => errors.reject(
                value.span(),
                format!(
                    "`{key}` takes an integer literal, such as `{key} = 5`, or `unlimited` (with `max_elapsed`: retries bounded by time alone)"
                ),
            ),
        }
    }
}

impl ValueKind for DurationString {
    type Value = Duration;

    fn read(&self, key: &'static str, value: Expr, errors: &mut Errors) -> Option<Duration> {
        match literal(&value) {
            Some(Lit::Str(s)) => match grammar::parse_duration(&s.value()) {
                Ok(d) if d.is_zero() => errors.reject(s.span(), grammar::zero_duration(key)),
                Ok(d) => Some(d),
                Err(e) => errors.reject(s.span(), e),
            },
            Some(Lit::Int(int)) => errors.reject(int.span(), grammar::duration_without_unit(key, int.base10_digits())),
            _ => errors.reject(value.span(), grammar::duration_expected(key)),
        }
    }
}

impl ValueKind for Multiplier {
    type Value = f64;

    fn read(&self, key: &'static str, value: Expr, errors: &mut Errors) -> Option<f64> {
        let parsed = match literal(&value) {
            Some(Lit::Int(int)) => int.base10_parse::<f64>().ok(),
            Some(Lit::Float(float)) => float.base10_parse::<f64>().ok(),
            Some(Lit::Str(s)) => {
                errors.push(
                    s.span(),
                    format!(
                        "`{key}` takes a number, not a string: write `{key} = {}`",
                        s.value().trim()
                    ),
                );
                return None;
            }
            _ => None,
        };
        match parsed {
            Some(m) => match grammar::multiplier_rule(key, m) {
                None => Some(m),
                Some(message) => errors.reject(value.span(), message),
            },
            None if is_negated_literal(&value) => errors.reject(
                value.span(),
                format!(
                    "a negative `{key}` would shrink the waits: {}",
                    grammar::multiplier_takes(key)
                ),
            ),
            None => errors.reject(value.span(), grammar::multiplier_takes(key)),
        }
    }
}

impl ValueKind for Jitter {
    type Value = JitterArg;

    fn read(&self, key: &'static str, value: Expr, errors: &mut Errors) -> Option<JitterArg> {
        match &value {
            Expr::Path(path) if path.qself.is_none() && path.path.get_ident().is_some() => {
                let ident = path.path.get_ident().map(|i| i.unraw().to_string()).unwrap_or_default();
                match ident.as_str() {
                    "additive" => Some(JitterArg::Additive),
                    "full" => Some(JitterArg::Full),
                    "equal" => Some(JitterArg::Equal),
                    "decorrelated" => Some(JitterArg::Decorrelated),
                    "grpc" => Some(JitterArg::Grpc),
                    "none" => Some(JitterArg::None),
                    other => errors.reject(value.span(), grammar::unknown_jitter_mode(key, other)),
                }
            }
            _ => match literal(&value) {
                Some(Lit::Str(s)) => match grammar::parse_duration(&s.value()) {
                    Ok(d) if d.is_zero() => errors.reject(s.span(), grammar::zero_jitter(key, Syntax::Attribute)),
                    Ok(d) => Some(JitterArg::AdditiveUpTo(d)),
                    Err(e) => errors.reject(s.span(), e),
                },
                _ => errors.reject(value.span(), grammar::jitter_expected(key)),
            },
        }
    }
}

impl ValueKind for Hook {
    type Value = Expr;

    fn read(&self, key: &'static str, value: Expr, errors: &mut Errors) -> Option<Expr> {
        let Hook {
            signature,
            path_example,
            closure_example,
        } = self;
        match value {
            Expr::Path(_) | Expr::Closure(_) => Some(value),
            other => errors.reject(
                other.span(),
                format!(
                    "`{key}` takes a path to a function or a closure ({signature}), such as `{key} = {path_example}` or `{key} = {closure_example}`"
                ),
            ),
        }
    }
}

impl ValueKind for AnyExpr {
    type Value = Expr;

    fn read(&self, _key: &'static str, value: Expr, _errors: &mut Errors) -> Option<Expr> {
        Some(value)
    }
}

impl ValueKind for PathString {
    type Value = syn::Path;

    fn read(&self, key: &'static str, value: Expr, errors: &mut Errors) -> Option<syn::Path> {
        match literal(&value) {
            Some(Lit::Str(s)) => match s.parse::<syn::Path>() {
                Ok(path) => Some(path),
                Err(_) => errors.reject(
                    s.span(),
                    format!(
                        "`{key} = \"{}\"` is not a path: write the path to backoff_runtime, such as `{key} = \"my_crate::backoff\"`",
                        s.value()
                    ),
                ),
            },
            _ => errors.reject(
                value.span(),
                format!("`{key}` takes a string with a path, such as `{key} = \"my_crate::backoff\"`"),
            ),
        }
    }
}

impl ValueKind for NameString {
    type Value = syn::LitStr;

    fn read(&self, key: &'static str, value: Expr, errors: &mut Errors) -> Option<syn::LitStr> {
        match literal(&value) {
            Some(Lit::Str(s)) if !s.value().trim().is_empty() => Some(s.clone()),
            Some(Lit::Str(s)) => errors.reject(
                s.span(),
                format!("`{key}` cannot be empty: write the name to report, such as `{key} = \"users::fetch\"`"),
            ),
            _ => errors.reject(
                value.span(),
                format!(
                    "`{key}` takes a string: the name metrics, tracing and events report, such as `{key} = \"users::fetch\"`"
                ),
            ),
        }
    }
}

impl ValueKind for Binding {
    type Value = syn::Ident;

    fn read(&self, key: &'static str, value: Expr, errors: &mut Errors) -> Option<syn::Ident> {
        let Binding { holds, example } = self;
        if let Expr::Path(path) = &value {
            if path.qself.is_none() && path.attrs.is_empty() {
                if let Some(ident) = path.path.get_ident() {
                    if ident != "self" && ident != "Self" && ident != "crate" && ident != "super" {
                        return Some(ident.clone());
                    }
                }
            }
        }
        errors.reject(
            value.span(),
            format!(
                "`{key}` takes a plain name for the binding that holds {holds} in the body, such as `{key} = {example}`"
            ),
        )
    }
}

impl<T: Copy> ValueKind for Words<T> {
    type Value = T;

    fn read(&self, key: &'static str, value: Expr, errors: &mut Errors) -> Option<T> {
        if let Expr::Path(path) = &value {
            if let Some(ident) = path.path.get_ident() {
                let word = ident.unraw().to_string();
                if let Some((_, stands_for)) = self.words.iter().find(|(each, _)| *each == word) {
                    return Some(*stands_for);
                }
            }
        }
        errors.reject(value.span(), format!("`{key}` takes {}", self.takes))
    }
}
