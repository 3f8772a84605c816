//! What the expansion binds before the loop.
//!
//! The function's site, the user's sleep, the policy, the budget and the
//! admission limiter, and the helpers on the arguments they read.
use super::*;

/// The function's static site (its name, made once) as an item, and the
/// expression of its `Site`: the name written with `name = "..."`, else
/// its path (the module's, or for a method the type of `self`'s).
pub(super) fn site_item(args: &Args, private: &Trees, function: &Ident, has_receiver: bool) -> (TokenStream, Trees) {
    let site = local("SITE");
    let new_site = match &args.name {
        Some(WithSpan { value: name, .. }) => quote!(#private::CallSite::named(#name)),
        None => {
            let function = function.unraw().to_string();
            quote!(#private::CallSite::new(#function, ::core::module_path!()))
        }
    };
    let item = quote!(static #site: #private::CallSite = #new_site;);
    // A `&'static Site`, made at compile time: passing it costs the
    // happy path nothing. A method's names the type of `Self`, which an
    // item inside it cannot: an inline `const` block there.
    if has_receiver && args.name.is_none() {
        let expr = quote!(const { &#private::Site::Method(&#site, ::core::any::type_name::<Self>) });
        return (item, Trees::of(expr));
    }
    let at = local("AT");
    let items = quote! {
        #item
        const #at: &#private::Site = &#private::Site::Static(&#site);
    };
    (items, Trees::ident(&at))
}

/// The user's `sleep = ...`, handed to the loop through the public
/// `bounds::sync_sleep` or `bounds::async_sleep`, spanned on it: the one
/// function whose bounds say what a sleep is (`Fn(Duration)` returning `()`,
/// or a future), so a sleep of the wrong type is one error on the user's
/// token; the loop asks nothing more of what it returns.
pub(super) fn sleep_checked(custom: &syn::Expr, krate: &syn::Path, is_async: bool) -> TokenStream {
    let check = if is_async {
        quote!(#krate::bounds::async_sleep)
    } else {
        quote!(#krate::bounds::sync_sleep)
    };
    let check = respan(check, custom.span());
    quote_spanned!(custom.span()=> #check(#custom))
}

/// The policy of one function, as the loop names it: a `const` item built
/// from the literal keys (nothing stored in the function's state, nothing
/// computed per call), or the user's `policy = EXPR` evaluated once per call
/// and borrowed.
pub(super) struct PolicyBinding {
    /// The statement at the top of the function (`policy = EXPR`), or nothing.
    pub(super) item: TokenStream,
    /// The constant of the literal keys, declared in the block that decides
    /// an attempt, or nothing.
    pub(super) scoped_item: TokenStream,
    /// A `&Policy` inside that block (the local of `policy = EXPR`, or the
    /// constant); outside it, see [`Generator::policy_outside`].
    pub(super) scoped: Trees,
    /// With literal keys, whether they set `max_elapsed` (known here, so
    /// the loop's start need not ask the policy).
    pub(super) literal_deadline: Option<bool>,
}

/// The [`PolicyBinding`] of the keys: `full` and `private` are the runtime's
/// paths outside and inside the block that decides an attempt.
pub(super) fn policy_binding(args: &Args, full: &Trees, private: &Trees) -> PolicyBinding {
    match args.policy.as_ref().map(|policy| &policy.value) {
        Some(expr) => {
            let policy = local("policy");
            // Spanned on the user's expression, so a type error points there.
            let value = quote_spanned!(expr.span()=> &(#expr));
            PolicyBinding {
                item: quote!(let #policy: &#full::Policy = #value;),
                scoped_item: TokenStream::new(),
                scoped: Trees::ident(&policy),
                literal_deadline: None,
            }
        }
        None => {
            let policy = local("POLICY");
            let scoped_value = policy_expr(args, private);
            PolicyBinding {
                item: TokenStream::new(),
                scoped_item: quote!(const #policy: &#private::Policy = &#scoped_value;),
                scoped: Trees::ident(&policy),
                literal_deadline: Some(args.max_elapsed.is_some()),
            }
        }
    }
}

/// The budget's binding and the expression of an `Option<&RetryBudget>` that
/// the loop uses: the user's `budget = EXPR` evaluated once per call (any
/// `RetryBudget` or reference to one), or `None`.
pub(super) fn budget_binding(args: &Args, private: &Trees) -> (TokenStream, Trees) {
    // Named inside and outside the block that decides an attempt: `core`'s paths.
    let krate = args.runtime_crate();
    match args.budget.as_ref().map(|budget| &budget.value) {
        Some(expr) => {
            let budget = local_at("budget", expr.span());
            let budget_of = respan(quote!(#private::budget_of), expr.span());
            let reads_clock = respan(quote!(#krate::limits::RetryLimit::reads_clock), expr.span());
            let shared = shared_check(expr);
            // Bound first, so a temporary the expression returns (a
            // reference from a method call) lives for the whole call.
            (
                quote! {
                    let #budget = &(#expr);
                    // The bound checked through the public trait, on the
                    // same argument: rustc reports this error alone. The
                    // check of a `static` is an item: it comes first
                    // (pedantic's `items_after_statements`).
                    if false {
                        #shared
                        let _ = #reads_clock(#budget);
                    }
                    let #budget = #budget_of(#budget);
                },
                Trees::of(quote!(::core::option::Option::Some(#budget))),
            )
        }
        None => (TokenStream::new(), Trees::of(quote!(::core::option::Option::None))),
    }
}

/// The binding of `admission = EXPR`: the user's expression evaluated once
/// per call and borrowed (checked through the public trait on its span), or
/// nothing.
pub(super) fn admission_binding(args: &Args, private: &Trees) -> TokenStream {
    let krate = args.runtime_crate();
    let Some(expr) = args.admission.as_ref().map(|admission| &admission.value) else {
        return TokenStream::new();
    };
    let limit = local("admission_limit");
    let limit_at = local_at("admission_limit", expr.span());
    let admission_of = respan(quote!(#private::admission_of), expr.span());
    let named = respan(quote!(#krate::limits::AdmissionLimit::name), expr.span());
    let shared = shared_check(expr);
    quote! {
        let #limit_at = &(#expr);
        if false {
            #shared
            #named(#limit_at);
        }
        let #limit = #admission_of(#limit_at);
    }
}

/// For a limit named by a bare path (`budget = BUDGET`, `admission =
/// LIMITER`): the path must be a place, a `static` or a variable, never a
/// `const`. A `const` is a new limit at each use, so it would share and
/// limit nothing. Checked in dead code: it costs nothing at run time.
///
/// A name in capitals (a `static` or a `const`) is borrowed by a `static`:
/// rustc rejects that for a `const` limit (E0492) and its help says to
/// make it a `static`. Any other name must be a place: rustc rejects
/// `addr_of!` of a `const` (E0745) on the user's token.
pub(super) fn shared_check(expr: &syn::Expr) -> TokenStream {
    match expr {
        syn::Expr::Path(path) if path.qself.is_none() && names_an_item(&path.path) => {
            quote_spanned! {expr.span()=>
                #[allow(dead_code)]
                static __BACKOFF_SHARED_LIMIT: &(dyn ::core::any::Any + ::core::marker::Sync) = &#expr;
            }
        }
        syn::Expr::Path(path) if path.qself.is_none() => {
            quote_spanned!(expr.span()=> let _ = ::core::ptr::addr_of!(#expr);)
        }
        _ => TokenStream::new(),
    }
}

/// Whether `path` names an item by Rust's convention for `static` and
/// `const` items: its last segment in capitals, without generics.
fn names_an_item(path: &syn::Path) -> bool {
    path.segments.last().is_some_and(|last| {
        let name = last.ident.to_string();
        last.arguments.is_none()
            && name.chars().any(|c| c.is_ascii_uppercase())
            && name
                .chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
    })
}

/// The policy of the keys the user wrote: `literal_policy(..)` with the
/// keys the attribute has checked, each as plain numbers (a zero for each
/// one not written), then `.jitter(..)` and `.hint_above_cap(..)` when
/// written.
pub(super) fn policy_expr(args: &Args, private: &Trees) -> TokenStream {
    let max_retries = proc_macro2::Literal::u32_unsuffixed(args.max_retries.as_ref().map_or(0, |n| n.value));
    let duration = |key: &Option<WithSpan<core::time::Duration>>| {
        let d = key.as_ref().map_or(core::time::Duration::ZERO, |d| d.value);
        let secs = proc_macro2::Literal::u64_unsuffixed(d.as_secs());
        let nanos = proc_macro2::Literal::u32_unsuffixed(d.subsec_nanos());
        quote!(#secs, #nanos)
    };
    let initial_backoff = duration(&args.initial_backoff);
    let max_backoff = duration(&args.max_backoff);
    let multiplier = proc_macro2::Literal::f64_unsuffixed(args.multiplier.as_ref().map_or(0.0, |m| m.value));
    let max_elapsed = duration(&args.max_elapsed);
    let mut policy = quote! {
        #private::literal_policy(#max_retries, #initial_backoff, #max_backoff, #multiplier, #max_elapsed)
    };
    // The schedule's modes by their public paths (`__private` names only
    // what the expansion calls).
    if let Some(WithSpan { value: jitter, .. }) = args.jitter {
        let krate = args.runtime_crate();
        let jitter = match jitter {
            JitterArg::Additive => quote!(#krate::Jitter::Additive),
            JitterArg::AdditiveUpTo(d) => {
                let d = duration_tokens(d);
                quote!(#krate::Jitter::AdditiveUpTo(#d))
            }
            JitterArg::Full => quote!(#krate::Jitter::Full),
            JitterArg::Equal => quote!(#krate::Jitter::Equal),
            JitterArg::Decorrelated => quote!(#krate::Jitter::Decorrelated),
            JitterArg::Grpc => quote!(#krate::Jitter::Grpc),
            JitterArg::None => quote!(#krate::Jitter::None),
        };
        policy.extend(quote!(.jitter(#jitter)));
    }
    if let Some(WithSpan { value: rule, .. }) = args.hint_above_cap {
        let krate = args.runtime_crate();
        let rule = match rule {
            HintArg::Stop => quote!(#krate::HintAboveCap::Stop),
            HintArg::Cap => quote!(#krate::HintAboveCap::WaitCap),
        };
        policy.extend(quote!(.hint_above_cap(#rule)));
    }
    policy
}

/// The exact value as the shortest of `Duration::from_secs`, `from_millis`,
/// `from_micros` and `Duration::new(secs, nanos)`.
pub(super) fn duration_tokens(d: core::time::Duration) -> TokenStream {
    let unsuffixed = proc_macro2::Literal::u64_unsuffixed;
    let secs = d.as_secs();
    let nanos = d.subsec_nanos();
    if nanos == 0 {
        let secs = unsuffixed(secs);
        return quote!(::core::time::Duration::from_secs(#secs));
    }
    for (per_second, unit) in [(1_000_u64, "from_millis"), (1_000_000, "from_micros")] {
        let per_unit = u32::try_from(1_000_000_000 / per_second).unwrap_or(1);
        if nanos % per_unit == 0 {
            if let Some(whole) = secs
                .checked_mul(per_second)
                .and_then(|s| s.checked_add(u64::from(nanos / per_unit)))
            {
                let whole = unsuffixed(whole);
                let unit = Ident::new(unit, Span::call_site());
                return quote!(::core::time::Duration::#unit(#whole));
            }
        }
    }
    let secs = unsuffixed(secs);
    let nanos = proc_macro2::Literal::u32_unsuffixed(nanos);
    quote!(::core::time::Duration::new(#secs, #nanos))
}

impl Args {
    /// The path to the runtime crate: `::backoff_runtime` unless `crate = "..."`.
    pub(super) fn runtime_crate(&self) -> syn::Path {
        match &self.krate {
            Some(krate) => krate.value.clone(),
            // Built, not parsed: parsing sends the tokens across the
            // proc-macro bridge, several times per function.
            None => syn::Path {
                leading_colon: Some(<syn::Token![::]>::default()),
                segments: core::iter::once(syn::PathSegment::from(Ident::new("backoff_runtime", Span::call_site())))
                    .collect(),
            },
        }
    }

    /// Whether every hook, the sleep, the policy and the budget are plain
    /// paths that name none of the function's arguments (`arguments`), so
    /// cannot read them: the body's closure may then own them.
    pub(super) fn captures_nothing_besides_the_body(&self, arguments: &[Ident]) -> bool {
        [
            &self.retry_if,
            &self.retry_after,
            &self.retry_if_ok,
            &self.retry_after_ok,
            &self.pending_error,
            &self.on_retry,
            &self.on_give_up,
            &self.on_success,
            &self.before_retry,
            &self.sleep,
            &self.policy,
            &self.budget,
            &self.admission,
            &self.slow_down_if,
            &self.chaos,
        ]
        .into_iter()
        .flatten()
        .all(|expr| match &expr.value {
            syn::Expr::Path(path) => {
                path.qself.is_some()
                    || path.path.leading_colon.is_some()
                    || path
                        .path
                        .segments
                        .first()
                        .is_none_or(|first| !arguments.contains(&first.ident))
            }
            _ => false,
        })
    }

    /// Whether a hook (or the attempt's context) needs the start instant
    /// read before the first attempt.
    pub(super) fn needs_start(&self) -> bool {
        self.on_retry.is_some()
            || self.on_give_up.is_some()
            || self.on_success.is_some()
            || self.before_retry.is_some()
            || self.context.is_some()
    }
}
