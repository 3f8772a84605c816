//! The sync loop that stays in the function.
//!
//! For `before_retry`, and for `admission` with `retry_if_ok`.
use super::*;

impl Generator<'_> {
    /// The sync loop of a function with `before_retry`, or `admission` with
    /// `retry_if_ok` (its refusal is judged as a result here): it
    /// stays in the function, as the async loop does, so the action
    /// (written here, evaluated per retry) may borrow what the body borrows,
    /// `&mut self` included, and a refused attempt returns from it; the
    /// body's closure is made and called per attempt.
    pub(super) fn sync_in_function_loop(
        &self,
        body: TokenStream,
        body_span: Span,
        action: Option<&syn::Expr>,
        sleeper: &Ident,
        sleeper_value: &TokenStream,
    ) -> TokenStream {
        let Generator { private, full, .. } = self;
        let state = local("loop");
        let result = local_at("result", self.return_span);
        let below = local("below");
        let wait = local("wait");
        let krate = self.args.runtime_crate();
        let attempt = quote_spanned!(body_span=> #full::blocking_attempt(|| { #body }));
        let attempts_value = self.attempts_value(&state);
        // With `admission`, as in the async loop: a refused attempt is the
        // result `E::from(Refused)`, reported and returned as a give-up.
        let (admission_check, admitting_value, attempt) = self.admitted(
            quote!(#full::BlockingSleep::clock(&#sleeper)),
            |admitting| {
                quote!(#full::Admitting::admit_blocking(&mut #admitting, &|#wait| #full::BlockingSleep::sleep(&#sleeper, #wait)))
            },
            attempt,
        );
        let decide = match action {
            Some(action) => {
                let next = local("next");
                let act = local("action");
                let after_attempt = self.after_attempt(&result, &below, true);
                let after_action = self.after_action(&next);
                // Typed through the public `bounds::sync_before_retry`, spanned on
                // the action: a wrong one is reported there. What it returns is
                // checked through the public trait's method, on the action.
                let sync_before_retry = respan(quote!(#krate::bounds::sync_before_retry), action.span());
                let run_action = respan(
                    quote!(<_ as #krate::bounds::SyncBeforeRetry>::returned(#act(#next.outcome(), #next.event()))),
                    action.span(),
                );
                quote! {
                    let #next = #after_attempt;
                    let #act = #sync_before_retry(#next.outcome(), #action);
                    #run_action;
                    let #wait = #after_action;
                }
            }
            None => {
                let after_attempt = self.after_attempt(&result, &below, false);
                quote!(let #wait = #after_attempt;)
            }
        };
        let after = self.in_decision_scope(quote! {
            #decide
            #private::BlockingSleep::sleep(&#sleeper, #wait);
        });
        let looped = self.looped(
            (&state, self.loop_start(quote!(#full::BlockingSleep::clock(&#sleeper)))),
            [admitting_value, attempts_value.unwrap_or_default()],
            (&result, &below, attempt),
            after,
        );
        quote! {
            #admission_check
            let #sleeper = #sleeper_value;
            #looped
        }
    }
}
