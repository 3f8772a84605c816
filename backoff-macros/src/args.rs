//! The grammar of `#[retry(...)]`.
//!
//! `key = value` pairs, each value read by its key's kind and kept with its
//! spans, each key set at most once, an unknown key answered with the nearest
//! known one. The keys themselves are the table in `keys.rs`, which
//! `declare_keys!` below turns into [`Args`] and its dispatch. No cross-field
//! rules here: see `validate.rs`.

use proc_macro2::Span;
use syn::ext::IdentExt;
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Expr, Ident, Token};

use crate::errors::Errors;
pub(crate) use crate::keys::Args;
use crate::keys::KEYS;

/// A value with the spans of the tokens it came from.
#[derive(Clone)]
pub(crate) struct WithSpan<T> {
    pub(crate) value: T,
    /// The span of the value.
    pub(crate) span: Span,
    /// The span of the key.
    pub(crate) key_span: Span,
}

/// One row of the key table.
pub(crate) struct Key {
    /// The name written before `=`.
    pub(crate) name: &'static str,
    /// Whether the key is part of the schedule, which `policy = ...` sets
    /// instead.
    pub(crate) in_schedule: bool,
}

/// Declares the keys of `#[retry]` from one table: [`Args`] (one field per
/// key, documented by the row's description, holding the value as its kind
/// reads it, with its spans), `KEYS` (the rows, in order, for messages and
/// the reference), and the dispatch from a written key to its kind.
///
/// A row is `/// description` then `field: Kind;`, where `Kind` is a
/// [`ValueKind`](crate::values::ValueKind) (with its fields when it has
/// any); `field as "name"` when the key is not a valid field name (`crate`);
/// `, schedule` before the `;` for a key that `policy = ...` replaces.
macro_rules! declare_keys {
    ($(
        #[doc = $description:literal]
        $field:ident $(as $name:literal)? : $kind:ident $({ $($param:ident : $arg:expr),* $(,)? })? $(, $schedule:ident)?;
    )*) => {
        /// The arguments as written: for each key, the value the user gave
        /// with its spans, or `None`.
        pub(crate) struct Args {
            $(
                #[doc = $description]
                pub(crate) $field: Option<$crate::args::WithSpan<<$crate::values::$kind as $crate::values::ValueKind>::Value>>,
            )*
        }

        /// Every key `#[retry]` accepts, in the order of the reference.
        pub(crate) const KEYS: &[$crate::args::Key] = &[$(
            $crate::args::Key {
                name: $crate::args::declare_keys!(@name $field $($name)?),
                in_schedule: $crate::args::declare_keys!(@in_schedule $($schedule)?),
            },
        )*];

        impl Args {
            /// No key set.
            pub(crate) fn none() -> Self {
                Args { $($field: None,)* }
            }

            /// Reads `value` with the kind of the key named `name` and sets
            /// it; `false` when no key has that name.
            pub(crate) fn set(&mut self, name: &str, key: &syn::Ident, value: syn::Expr, errors: &mut $crate::errors::Errors) -> bool {
                $(
                    if name == $crate::args::declare_keys!(@name $field $($name)?) {
                        let kind = $crate::values::$kind $({ $($param: $arg),* })?;
                        let name = $crate::args::declare_keys!(@name $field $($name)?);
                        $crate::args::fill(&mut self.$field, &kind, name, key, value, errors);
                        return true;
                    }
                )*
                false
            }

            /// Every key the user wrote, with its key span, in table order.
            pub(crate) fn written(&self) -> impl Iterator<Item = (&'static $crate::args::Key, proc_macro2::Span)> {
                let key_spans = [$(self.$field.as_ref().map(|value| value.key_span)),*];
                KEYS.iter().zip(key_spans).filter_map(|(key, span)| Some((key, span?)))
            }
        }
    };
    (@name $field:ident) => { stringify!($field) };
    (@name $field:ident $name:literal) => { $name };
    (@in_schedule) => { false };
    (@in_schedule schedule) => { true };
}
pub(crate) use declare_keys;

/// Reads `value` with `kind` and sets it in `slot`; a second `key = ...` is
/// an error on the second key (after its value's own errors).
pub(crate) fn fill<K: crate::values::ValueKind>(
    slot: &mut Option<WithSpan<K::Value>>,
    kind: &K,
    name: &'static str,
    key: &Ident,
    value: Expr,
    errors: &mut Errors,
) {
    let span = value.span();
    let value = kind.read(name, value, errors);
    if slot.is_some() {
        errors.push(key.span(), crate::grammar::duplicate_key(name));
        return;
    }
    if let Some(value) = value {
        *slot = Some(WithSpan {
            value,
            span,
            key_span: key.span(),
        });
    }
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
        let value = match single_token_value(input) {
            Some(value) => value?,
            None => input.parse()?,
        };
        Ok(KeyValue { key, value })
    }
}

/// A value of one token (a literal, `true`, a name such as `is_transient`)
/// followed by `,` or the end, parsed as what it is: the same `Expr` as
/// syn's expression parser gives, without running it. The macro is built
/// unoptimised, and most values are one token.
fn single_token_value(input: ParseStream<'_>) -> Option<syn::Result<Expr>> {
    let (_, rest) = input.cursor().token_tree()?;
    if !(rest.eof() || rest.punct().is_some_and(|(punct, _)| punct.as_char() == ',')) {
        return None;
    }
    if input.peek(syn::Lit) {
        let lit = input.parse::<syn::Lit>();
        return Some(lit.map(|lit| Expr::Lit(syn::ExprLit { attrs: Vec::new(), lit })));
    }
    // A keyword (`self`, `move`) is not an `Ident` to `peek`: the full parser
    // takes it.
    if input.peek(Ident) {
        return Some(input.parse::<syn::ExprPath>().map(Expr::Path));
    }
    None
}

impl Args {
    /// The hooks a call is given, each with its method's name (the same on
    /// `Hooks` and on the builder), in the order they are added:
    /// `retry_if_ok` first, so that every hook after it sees the whole
    /// result.
    pub(crate) fn hooks(&self) -> [(&'static str, Option<&WithSpan<Expr>>); 9] {
        [
            ("retry_if_ok", self.retry_if_ok.as_ref()),
            ("retry_if", self.retry_if.as_ref()),
            ("retry_after", self.retry_after.as_ref()),
            ("retry_after_ok", self.retry_after_ok.as_ref()),
            ("pending_error", self.pending_error.as_ref()),
            ("slow_down_if", self.slow_down_if.as_ref()),
            ("on_retry", self.on_retry.as_ref()),
            ("on_give_up", self.on_give_up.as_ref()),
            ("on_success", self.on_success.as_ref()),
        ]
    }

    /// Parses the attribute's arguments, recording every error in `errors`.
    /// A syntax error (no `=`, a stray token) stops parsing and is returned.
    pub(crate) fn parse(input: ParseStream<'_>, errors: &mut Errors) -> syn::Result<Self> {
        let pairs = Punctuated::<KeyValue, Token![,]>::parse_terminated(input)?;
        let mut args = Args::none();
        for KeyValue { key, value } in pairs {
            let name = key.unraw().to_string();
            if !args.set(&name, &key, value, errors) {
                errors.push(key.span(), unknown_key_message(&name));
            }
        }
        Ok(args)
    }
}

/// Keys renamed before 0.1 (CHANGELOG.md), each with its new name: what
/// the unknown-key error says for code written against the old name.
const RENAMED: &[(&str, &str)] = &[("throttled_if", "slow_down_if")];

/// "unknown key `x`", the nearest valid key when one is close, and the
/// list; a key renamed before 0.1 says its new name.
fn unknown_key_message(key: &str) -> String {
    let keys = KEYS.iter().map(|k| k.name);
    if let Some((_, now)) = RENAMED.iter().find(|(before, _)| *before == key) {
        let list = keys.map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ");
        return format!("unknown key `{key}`: it was renamed `{now}` before 0.1\nvalid keys: {list}");
    }
    crate::grammar::unknown_key(key, keys)
}
