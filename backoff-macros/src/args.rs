//! The raw grammar of `#[retry(...)]`: `key = value` pairs, each value kept
//! with its span, each key set at most once. No cross-field rules here: see
//! `config.rs`.

use core::time::Duration;

use proc_macro2::Span;
use syn::ext::IdentExt;
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Expr, ExprLit, Ident, Lit, Token, UnOp};

use crate::duration;
use crate::errors::Errors;

/// Every key `#[retry]` accepts, as listed in error messages.
pub(crate) const KEYS: &[&str] = &[
    "max_retries",
    "max_backoff",
    "initial_backoff",
    "multiplier",
    "jitter",
    "max_elapsed",
    "retry_if",
    "retry_after",
    "on_retry",
    "on_give_up",
    "sleep",
    "budget",
    "policy",
    "timeout",
    "crate",
];

/// The jitter modes that are written as bare words.
pub(crate) const JITTER_MODES: &[&str] = &["additive", "full", "equal", "decorrelated", "none"];

/// A value with the span of the tokens it came from.
#[derive(Clone)]
pub(crate) struct WithSpan<T> {
    pub(crate) value: T,
    /// The span of the value.
    pub(crate) span: Span,
    /// The span of the key.
    pub(crate) key_span: Span,
}

/// A key that may be set once: a second `key = ...` is an error on the second key.
pub(crate) struct Slot<T> {
    name: &'static str,
    value: Option<WithSpan<T>>,
}

impl<T> Slot<T> {
    fn new(name: &'static str) -> Self {
        Slot { name, value: None }
    }

    /// The value and its span, when the user wrote this key.
    pub(crate) fn get(&self) -> Option<&WithSpan<T>> {
        self.value.as_ref()
    }

    /// Consumes the slot, returning the user's value.
    pub(crate) fn take(self) -> Option<WithSpan<T>> {
        self.value
    }

    /// Converts the value with `convert` (told the key's name) and sets it.
    fn fill(
        &mut self,
        key: &Ident,
        span: Span,
        errors: &mut Errors,
        convert: impl FnOnce(&'static str, &mut Errors) -> Option<T>,
    ) {
        let value = convert(self.name, errors);
        self.set(key, value, span, errors);
    }

    fn set(&mut self, key: &Ident, value: Option<T>, span: Span, errors: &mut Errors) {
        if self.value.is_some() {
            errors.push(
                key.span(),
                format!(
                    "duplicate key `{}`: it is already set above; remove one of them",
                    self.name
                ),
            );
            return;
        }
        if let Some(value) = value {
            self.value = Some(WithSpan {
                value,
                span,
                key_span: key.span(),
            });
        }
    }
}

/// How the user wrote `jitter`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum JitterArg {
    /// `jitter = additive`: the seed's, one `initial_backoff` of jitter.
    Additive,
    /// `jitter = "500ms"`: additive with this amount.
    AdditiveUpTo(Duration),
    /// `jitter = full`.
    Full,
    /// `jitter = equal`.
    Equal,
    /// `jitter = decorrelated`.
    Decorrelated,
    /// `jitter = none`.
    None,
}

/// The arguments as written, before defaults and cross-field checks.
pub(crate) struct RawArgs {
    pub(crate) max_retries: Slot<u32>,
    pub(crate) max_backoff: Slot<Duration>,
    pub(crate) initial_backoff: Slot<Duration>,
    pub(crate) multiplier: Slot<f64>,
    pub(crate) jitter: Slot<JitterArg>,
    pub(crate) max_elapsed: Slot<Duration>,
    pub(crate) retry_if: Slot<Expr>,
    pub(crate) retry_after: Slot<Expr>,
    pub(crate) on_retry: Slot<Expr>,
    pub(crate) on_give_up: Slot<Expr>,
    pub(crate) sleep: Slot<Expr>,
    pub(crate) budget: Slot<Expr>,
    pub(crate) policy: Slot<Expr>,
    pub(crate) timeout: Slot<Duration>,
    pub(crate) krate: Slot<syn::Path>,
}

/// One `key = value` pair, syntactically.
struct KeyValue {
    key: Ident,
    value: Expr,
}

impl Parse for KeyValue {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        // `parse_any` also accepts keywords: `crate = "..."`.
        let key = input.call(Ident::parse_any).map_err(|e| {
            syn::Error::new(
                e.span(),
                "expected `key = value`, such as `max_retries = 5` or `max_backoff = \"32s\"`",
            )
        })?;
        if !input.peek(Token![=]) {
            return Err(syn::Error::new(
                key.span(),
                format!("expected `=` after `{key}`: write `{key} = value`"),
            ));
        }
        input.parse::<Token![=]>()?;
        let value: Expr = input.parse()?;
        Ok(KeyValue { key, value })
    }
}

impl RawArgs {
    /// Parses the attribute's arguments, recording every error in `errors`.
    /// A syntax error (no `=`, a stray token) stops parsing and is returned.
    pub(crate) fn parse(input: ParseStream<'_>, errors: &mut Errors) -> syn::Result<Self> {
        let pairs = Punctuated::<KeyValue, Token![,]>::parse_terminated(input)?;
        let mut raw = RawArgs {
            max_retries: Slot::new("max_retries"),
            max_backoff: Slot::new("max_backoff"),
            initial_backoff: Slot::new("initial_backoff"),
            multiplier: Slot::new("multiplier"),
            jitter: Slot::new("jitter"),
            max_elapsed: Slot::new("max_elapsed"),
            retry_if: Slot::new("retry_if"),
            retry_after: Slot::new("retry_after"),
            on_retry: Slot::new("on_retry"),
            on_give_up: Slot::new("on_give_up"),
            sleep: Slot::new("sleep"),
            budget: Slot::new("budget"),
            policy: Slot::new("policy"),
            timeout: Slot::new("timeout"),
            krate: Slot::new("crate"),
        };
        for KeyValue { key, value } in pairs {
            let span = value.span();
            match key.unraw().to_string().as_str() {
                "max_retries" => raw.max_retries.fill(&key, span, errors, |_, e| retries(&value, e)),
                "max_backoff" => raw
                    .max_backoff
                    .fill(&key, span, errors, |name, e| duration_value(name, &value, e)),
                "initial_backoff" => {
                    raw.initial_backoff
                        .fill(&key, span, errors, |name, e| duration_value(name, &value, e));
                }
                "max_elapsed" => raw
                    .max_elapsed
                    .fill(&key, span, errors, |name, e| duration_value(name, &value, e)),
                "timeout" => raw
                    .timeout
                    .fill(&key, span, errors, |name, e| duration_value(name, &value, e)),
                "multiplier" => raw.multiplier.fill(&key, span, errors, |_, e| multiplier(&value, e)),
                "jitter" => raw.jitter.fill(&key, span, errors, |_, e| jitter(&value, e)),
                "retry_if" => raw.retry_if.fill(&key, span, errors, |name, e| {
                    callable(
                        name,
                        "fn(&E) -> bool",
                        ("is_transient", "|e| e.is_transient()"),
                        value,
                        e,
                    )
                }),
                "retry_after" => raw.retry_after.fill(&key, span, errors, |name, e| {
                    let example = ("server_hint", "|e| e.retry_after()");
                    callable(name, "fn(&E) -> Option<Duration>", example, value, e)
                }),
                "on_retry" => raw.on_retry.fill(&key, span, errors, |name, e| {
                    callable(name, "fn(&E, &RetryEvent)", ("log_retry", "|e, event| ..."), value, e)
                }),
                "on_give_up" => raw.on_give_up.fill(&key, span, errors, |name, e| {
                    callable(name, "fn(&E, &GiveUp)", ("log_give_up", "|e, event| ..."), value, e)
                }),
                "sleep" => raw.sleep.fill(&key, span, errors, |name, e| {
                    let signature = "fn(Duration) -> impl Future in async fns, fn(Duration) in sync ones";
                    callable(
                        name,
                        signature,
                        ("async_io::Timer::after", "|d| my_runtime::sleep(d)"),
                        value,
                        e,
                    )
                }),
                "budget" => raw.budget.fill(&key, span, errors, |_, e| budget_path(value, e)),
                // Any expression giving a `Policy`; its type is checked by rustc.
                "policy" => raw.policy.fill(&key, span, errors, |_, _| Some(value)),
                "crate" => raw.krate.fill(&key, span, errors, |_, e| crate_path(&value, e)),
                other => errors.push(key.span(), unknown_key_message(other)),
            }
        }
        Ok(raw)
    }
}

/// "unknown key `x`", the nearest valid key when one is close, and the list.
fn unknown_key_message(key: &str) -> String {
    let list = KEYS.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ");
    match crate::suggest::nearest(key, KEYS) {
        Some(near) => format!("unknown key `{key}`: did you mean `{near}`?\nvalid keys: {list}"),
        None => format!("unknown key `{key}`\nvalid keys: {list}"),
    }
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

fn retries(value: &Expr, errors: &mut Errors) -> Option<u32> {
    match literal(value) {
        Some(Lit::Int(int)) => match int.base10_parse::<u32>() {
            Ok(0) => {
                errors.push(
                    int.span(),
                    "`max_retries = 0` would never retry: remove `#[retry]` instead, or retry at least once (`max_retries = 1`)",
                );
                None
            }
            Ok(n) => Some(n),
            Err(_) => {
                errors.push(int.span(), format!("`max_retries` is too large: at most {}", u32::MAX));
                None
            }
        },
        Some(Lit::Str(s)) => {
            errors.push(
                s.span(),
                format!(
                    "`max_retries` takes an integer, not a string: write `max_retries = {}`",
                    s.value().trim()
                ),
            );
            None
        }
        _ if is_negated_literal(value) => {
            errors.push(
                value.span(),
                "`max_retries` must be a positive integer, such as `max_retries = 5`",
            );
            None
        }
        _ => {
            errors.push(
                value.span(),
                "`max_retries` takes an integer literal, such as `max_retries = 5`",
            );
            None
        }
    }
}

fn duration_value(key: &str, value: &Expr, errors: &mut Errors) -> Option<Duration> {
    match literal(value) {
        Some(Lit::Str(s)) => match duration::parse(&s.value()) {
            Ok(d) if d.is_zero() => {
                errors.push(s.span(), format!("`{key}` must be greater than zero"));
                None
            }
            Ok(d) => Some(d),
            Err(e) => {
                errors.push(s.span(), e);
                None
            }
        },
        Some(Lit::Int(int)) => {
            errors.push(
                int.span(),
                format!(
                    "`{key}` takes a duration string with a unit, not a number: write `{key} = \"{}s\"` or `\"{}ms\"`",
                    int.base10_digits(),
                    int.base10_digits()
                ),
            );
            None
        }
        _ => {
            errors.push(
                value.span(),
                format!("`{key}` takes a duration string with a unit, such as `{key} = \"32s\"` or `\"500ms\"`"),
            );
            None
        }
    }
}

fn multiplier(value: &Expr, errors: &mut Errors) -> Option<f64> {
    const HINT: &str = "`multiplier` must be a finite number >= 1, such as `multiplier = 2` or `multiplier = 1.5`";
    let parsed = match literal(value) {
        Some(Lit::Int(int)) => int.base10_parse::<f64>().ok(),
        Some(Lit::Float(float)) => float.base10_parse::<f64>().ok(),
        Some(Lit::Str(s)) => {
            errors.push(
                s.span(),
                format!(
                    "`multiplier` takes a number, not a string: write `multiplier = {}`",
                    s.value().trim()
                ),
            );
            return None;
        }
        _ => None,
    };
    match parsed {
        Some(m) if m.is_finite() && m >= 1.0 => Some(m),
        Some(m) if m.is_finite() => {
            errors.push(
                value.span(),
                format!("`multiplier = {m}` would shrink the waits: {HINT}"),
            );
            None
        }
        Some(_) => {
            errors.push(value.span(), format!("`multiplier` is not finite: {HINT}"));
            None
        }
        None if is_negated_literal(value) => {
            errors.push(
                value.span(),
                format!("a negative `multiplier` would shrink the waits: {HINT}"),
            );
            None
        }
        None => {
            errors.push(value.span(), HINT);
            None
        }
    }
}

fn jitter(value: &Expr, errors: &mut Errors) -> Option<JitterArg> {
    let modes = JITTER_MODES.join(", ");
    match value {
        Expr::Path(path) if path.qself.is_none() && path.path.get_ident().is_some() => {
            let ident = path.path.get_ident().map(|i| i.unraw().to_string()).unwrap_or_default();
            match ident.as_str() {
                "additive" => Some(JitterArg::Additive),
                "full" => Some(JitterArg::Full),
                "equal" => Some(JitterArg::Equal),
                "decorrelated" => Some(JitterArg::Decorrelated),
                "none" => Some(JitterArg::None),
                other => {
                    let near = crate::suggest::nearest(other, JITTER_MODES)
                        .map(|m| format!(": did you mean `{m}`?"))
                        .unwrap_or_default();
                    errors.push(
                        value.span(),
                        format!(
                            "unknown jitter mode `{other}`{near}\njitter takes one of {modes}, or an additive amount such as `jitter = \"500ms\"`"
                        ),
                    );
                    None
                }
            }
        }
        _ => match literal(value) {
            Some(Lit::Str(s)) => match duration::parse(&s.value()) {
                Ok(d) if d.is_zero() => {
                    errors.push(
                        s.span(),
                        "`jitter = \"0s\"` adds no jitter: write `jitter = none` instead",
                    );
                    None
                }
                Ok(d) => Some(JitterArg::AdditiveUpTo(d)),
                Err(e) => {
                    errors.push(s.span(), e);
                    None
                }
            },
            _ => {
                errors.push(
                    value.span(),
                    format!("`jitter` takes one of {modes}, or an additive amount such as `jitter = \"500ms\"`"),
                );
                None
            }
        },
    }
}

/// A hook: a path to a function or a closure.
fn callable(
    key: &str,
    signature: &str,
    (path_example, closure_example): (&str, &str),
    value: Expr,
    errors: &mut Errors,
) -> Option<Expr> {
    match value {
        Expr::Path(_) | Expr::Closure(_) => Some(value),
        other => {
            errors.push(
                other.span(),
                format!(
                    "`{key}` takes a path to a function or a closure ({signature}), such as `{key} = {path_example}` or `{key} = {closure_example}`"
                ),
            );
            None
        }
    }
}

/// `budget = PATH`: a path to a `static RetryBudget`.
fn budget_path(value: Expr, errors: &mut Errors) -> Option<Expr> {
    match value {
        Expr::Path(_) => Some(value),
        other => {
            errors.push(
                other.span(),
                "`budget` takes a path to a `static` `RetryBudget`, such as `budget = DB_BUDGET` (declare it with `static DB_BUDGET: RetryBudget = RetryBudget::new();`)",
            );
            None
        }
    }
}

fn crate_path(value: &Expr, errors: &mut Errors) -> Option<syn::Path> {
    match literal(value) {
        Some(Lit::Str(s)) => match s.parse::<syn::Path>() {
            Ok(path) => Some(path),
            Err(_) => {
                errors.push(
                    s.span(),
                    format!("`crate = \"{}\"` is not a path: write the path to backoff_runtime, such as `crate = \"my_crate::backoff\"`", s.value()),
                );
                None
            }
        },
        _ => {
            errors.push(
                value.span(),
                "`crate` takes a string with a path, such as `crate = \"my_crate::backoff\"`",
            );
            None
        }
    }
}
