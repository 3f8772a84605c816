//! The sync loop: the body in a closure, called once inline; only a
//! failure enters the runtime's cold loop.
use super::*;

impl Generator<'_> {
    /// The sync loop: the body in a closure, called once inline; a success
    /// returns there, only a failure enters the runtime's cold loop.
    pub(super) fn sync_loop(&self, body: TokenStream, body_span: Span) -> TokenStream {
        let Generator {
            args,
            private,
            full,
            budget,
            site,
            needs_start,
            attempts,
            ..
        } = self;
        let start = local("start");
        let body_fn = local("body");
        let first = local_at("first", self.return_span);
        // A `move` closure keeps the arguments in registers on the happy
        // path. Only when nothing else of the function captures them: a
        // hook, a sleep or a policy expression that is a closure or a
        // computation may read the arguments after the body's closure is
        // made.
        let closure = if args.captures_nothing_besides_the_body(self.arguments) {
            quote_spanned!(body_span=> move || { #body })
        } else {
            quote_spanned!(body_span=> || { #body })
        };
        let sleeper = local("sleeper");
        let sleeper_value = |paths: &Trees| match args.sleep.as_ref().map(|sleep| &sleep.value) {
            Some(custom) => sleep_checked(custom, &args.runtime_crate(), false),
            None => quote!(#paths::DefaultSleep),
        };
        let action = args.before_retry.as_ref().map(|action| &action.value);
        // `admission` with a judged value (`retry_if_ok`) stays in the
        // function too: its refusal is judged as a result there.
        let admits = self.admission().is_some();
        if action.is_some() || (admits && args.retry_if_ok.is_some()) {
            return self.sync_in_function_loop(body, body_span, action, &sleeper, &sleeper_value(full));
        }
        // The sleeper and the start, read before the first attempt: in the
        // deciding block, or with `context = ...` before the body's closure,
        // which borrows the attempts' source they make.
        let started = |paths: &Trees, policy: &TokenStream| {
            let sleeper_value = sleeper_value(paths);
            let attempts_value = attempts.map(|attempts| {
                quote! {
                    let mut #attempts = #paths::AttemptSource::new(
                        #policy,
                        #start,
                        #paths::BlockingSleep::clock(&#sleeper),
                    );
                }
            });
            let read_start = if self.start_unread() {
                quote!(::core::option::Option::None)
            } else {
                quote!(#paths::start_blocking(#policy, #budget, #needs_start, &#sleeper))
            };
            quote! {
                let #sleeper = #sleeper_value;
                let #start = #read_start;
                #attempts_value
            }
        };
        let (started_first, started_scoped) = if attempts.is_some() {
            (started(full, &self.policy_outside()), TokenStream::new())
        } else {
            (
                TokenStream::new(),
                started(private, &self.policy.scoped.to_token_stream()),
            )
        };
        let policy = &self.policy.scoped;
        let into_first = self.as_plain_result(&first);
        let value = local("value");
        let succeeded = self.returned_result(quote!(::core::result::Result::Ok(#value)));
        let failed = local("failed");
        let (scrutinee, done, again, hooks) = self.result_match(into_first, &value, &failed);
        // `on_success` is bound once: the first attempt's success reports it
        // here, a later one in the runtime's loop.
        let on_success_hook = local("on_success");
        let krate = args.runtime_crate();
        let (bind_on_success, on_success, hooks) = match &args.on_success {
            Some(WithSpan { value: hook, .. }) => (
                quote_spanned! {hook.span()=>
                    let #on_success_hook: &dyn ::core::ops::Fn(&#krate::Success) = &(#hook);
                },
                quote!(::core::option::Option::Some(#on_success_hook)),
                quote!(#hooks.on_success(#on_success_hook)),
            ),
            None => (TokenStream::new(), quote!(::core::option::Option::None), hooks),
        };
        // The body runs again lent as `&mut dyn Rerun` (the runtime's loop
        // is one per result type), moved out of its local (`&mut { body }`)
        // in the failure arm: lending the local itself takes its
        // address, which keeps its captures in memory on the happy path too
        // (`scripts/callgrind.sh` counts it), and a closure around it would
        // be two more (its body and its `rerun`) for every annotated one.
        // Spanned exactly on the return type: a function that returns no
        // `Result` is reported once, by the result check.
        let rerunning = {
            let private = private.at(self.return_span);
            quote_spanned!(self.return_span=> #private::rerunning)
        };
        let lent_body = quote!(#rerunning(&mut { #body_fn }));
        // With `admission`: the first question inline (a refusal is reported
        // and returned out of line), the success told to the limiter, and
        // the retries through the runtime's admitted cold loop.
        let limit = local("admission_limit");
        // The first attempt, admitted: the limiter hears its end once, a
        // panic's included.
        let first_admitted = local("first_admitted");
        let clock = quote!(#private::BlockingSleep::clock(&#sleeper));
        let (admission_check, admit_first, observe_success, retried) = if admits {
            let (check, refused) = self.refusal_result();
            let refusal = local("refusal");
            let refused_value = local("refused");
            let into_refused = self.as_plain_result(&refused_value);
            let refused_first = self.returned_result(quote! {
                #private::refused_first_blocking(#policy, #clock, #start, &#hooks, ::core::result::Result::Err(#failed))
            });
            let returned_value = self.returned_result(quote!(::core::result::Result::Ok(#value)));
            (
                check,
                quote! {
                    if let ::core::result::Result::Err(#refusal) = #private::FirstAdmitted::ask(#limit, #clock, &#sleeper) {
                        let #refused_value = #private::refused_as_body(&#body_fn, #refused, #refusal);
                        return match #into_refused {
                            ::core::result::Result::Ok(#value) => #returned_value,
                            ::core::result::Result::Err(#failed) => #refused_first,
                        };
                    }
                    let #first_admitted = #private::FirstAdmitted::held(#limit, #clock);
                },
                quote!(#private::FirstAdmitted::succeeded(#first_admitted, #limit, #clock);),
                {
                    // Spanned as the key's check: a missing `From<Refused>`
                    // is reported once, there.
                    let admitted_by = match &args.admission {
                        Some(admission) => respan_exactly(
                            quote!(#private::FirstAdmitted::for_retries),
                            Span::mixed_site().located_at(admission.key_span),
                        ),
                        None => quote!(#private::FirstAdmitted::for_retries),
                    };
                    self.returned_result(quote! {
                        #private::retry_blocking_owned(#policy, #budget, #start, &#hooks, #failed, #lent_body, &#sleeper, #admitted_by(#first_admitted))
                    })
                },
            )
        } else {
            (
                TokenStream::new(),
                TokenStream::new(),
                TokenStream::new(),
                self.returned_result(quote! {
                    #private::retry_blocking_owned(#policy, #budget, #start, &#hooks, #failed, #lent_body, &#sleeper, ::core::option::Option::None)
                }),
            )
        };
        let settle = self.in_decision_scope(quote! {
            #started_scoped
            #admit_first
            #private::enter_attempt();
            let #first = #body_fn();
            #bind_on_success
            match #scrutinee {
                #done => {
                    #observe_success
                    #private::first_success(#budget, &#sleeper, #start, #site, #on_success);
                    #succeeded
                }
                #again => #retried,
            }
        });
        // A helper of the user's crate, on the attribute: when the body
        // moves what the next attempt needs, rustc's E0507 help points at
        // its `FnMut` bound, which is the `#[retry]` line, never the
        // runtime's source.
        let helper = quote_spanned! {Span::call_site()=>
            #[inline]
            fn each_attempt_runs_the_body_again<R, F: ::core::ops::FnMut() -> R>(so_borrow_or_clone_what_it_moves: F) -> F {
                so_borrow_or_clone_what_it_moves
            }
        };
        quote! {
            #admission_check
            #started_first
            let mut #body_fn = {
                #helper
                each_attempt_runs_the_body_again(#closure)
            };
            #settle
        }
    }
}
