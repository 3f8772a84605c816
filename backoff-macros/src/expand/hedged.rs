//! The hedged call (`hedge_after`).
//!
//! The body in a fresh `async` block per attempt, made by a closure, and
//! awaited through the builder's `hedge_after`, the one hedging future.
//! Attempts run side by side, so the body only borrows what the caller passed
//! (the validation rejected `&mut self` and `mut` arguments).
use super::*;

impl Generator<'_> {
    /// The hedged call: `Policy::retry(op)` with the attribute's keys as
    /// the builder's methods, then `.hedge_after(delay).await`.
    pub(super) fn hedged(&self, body: TokenStream, function: &Ident) -> TokenStream {
        let Generator { args, full, .. } = self;
        let policy = self.policy_outside();
        let into_result = respan_exactly(quote!(#full::RetryResult::into_result), self.return_span);
        let from_result = respan_exactly(quote!(#full::RetryResult::from_result), self.return_span);
        // Each call of the closure is one attempt: the body's block, made afresh.
        let attempt = quote_spanned!(Span::call_site()=> || async { #into_result(async { #body }.await) });
        let mut chain = quote!(#full::Policy::retry(#policy, #attempt));
        let name = match &args.name {
            Some(WithSpan { value: name, .. }) => quote!(#name),
            None => {
                let function = function.unraw().to_string();
                quote!(#function)
            }
        };
        chain.extend(quote!(.name(#name)));
        // `slow_down_if` goes with `admission`, below; the hooks of a
        // pending value are refused with `hedge_after` (validate.rs).
        for (method, hook) in args.hooks() {
            if method == "slow_down_if" {
                continue;
            }
            if let Some(WithSpan { value: hook, .. }) = hook {
                let method = Ident::new(method, hook.span());
                chain.extend(quote_spanned!(hook.span()=> .#method(#hook)));
            }
        }
        let mut bindings = TokenStream::new();
        if let Some(WithSpan { value: expr, .. }) = &args.budget {
            let budget = local_at("budget", expr.span());
            let shared = bindings::shared_check(expr);
            bindings.extend(quote! {
                let #budget = &(#expr);
                if false { #shared }
            });
            chain.extend(quote_spanned!(expr.span()=> .budget(#budget)));
        }
        if let Some(admission) = &args.admission {
            let expr = &admission.value;
            let limit = local_at("admission_limit", expr.span());
            let shared = bindings::shared_check(expr);
            bindings.extend(quote! {
                let #limit = &(#expr);
                if false { #shared }
            });
            let method = Ident::new("admission", admission.key_span);
            chain.extend(quote!(.#method(#limit)));
            if let Some(WithSpan { value: hook, .. }) = &args.slow_down_if {
                chain.extend(quote_spanned!(hook.span()=> .slow_down_if(#hook)));
            }
        }
        if matches!(args.nested.as_ref().map(|nested| nested.value), Some(NestedArg::Retry)) {
            chain.extend(quote!(.nested_retry()));
        }
        if let Some(timeout) = &args.timeout {
            let limit = duration_tokens(timeout.value);
            let method = Ident::new("timeout", timeout.key_span);
            chain.extend(quote!(.#method(#limit)));
        }
        if let Some(WithSpan { value: sleep, .. }) = &args.sleep {
            chain.extend(quote_spanned!(sleep.span()=> .sleep(#sleep)));
        }
        if let Some(hedge_after) = &args.hedge_after {
            let delay = duration_tokens(hedge_after.value);
            let method = Ident::new("hedge_after", hedge_after.key_span);
            chain.extend(quote!(.#method(#delay)));
        }
        quote! {
            #bindings
            #from_result(#chain.await)
        }
    }
}
