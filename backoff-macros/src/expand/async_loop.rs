//! The async loop: the body in a non-`move` async block per attempt, the
//! decision after each, and the sleep, all in the function.
use super::*;

impl Generator<'_> {
    /// The async loop: the body in a non-`move` async block per attempt, the
    /// decision after each, and the sleep; it stays in the function.
    pub(super) fn async_loop(&self, body: TokenStream) -> TokenStream {
        let Generator {
            args, private, full, ..
        } = self;
        let state = local("loop");
        let result = local_at("result", self.return_span);
        let below = local("below");
        let krate = args.runtime_crate();
        let mut timeout_check = None;
        // The block is on the attribute: when the body moves what the next
        // attempt needs (a field included: `opts.mode`, `let S { a, b } =
        // self`), rustc's E0382 says "value moved here, in previous
        // iteration of loop" on the `#[retry]` line, not on the body's `}`.
        let mut attempt = quote_spanned!(Span::call_site()=> async { #body });
        if let Some(limit) = &args.timeout {
            // Spanned on the `timeout` key: an error about the timed-out
            // attempt (no `E: From<Elapsed>`) points there.
            // The check (a type position) and the call carry exactly the
            // same span: rustc reports the check's error alone.
            let exact = Span::mixed_site().located_at(limit.key_span);
            let return_type = &self.return_type.erased;
            let check = respan_exactly(
                quote! {
                    let _ = <<#return_type as #krate::bounds::RetryResult>::Err as #krate::bounds::FromElapsed>::from_elapsed;
                },
                exact,
            );
            // Without a default timer, the missing feature is this check's
            // error, on the key, in the words of a public bound.
            let timer_needed = (!HAS_DEFAULT_TIMER).then(|| {
                let checked = if self.return_type.infers {
                    quote!(())
                } else {
                    return_type.clone()
                };
                respan_exactly(
                    quote! {
                        if false {
                            <#checked as #krate::bounds::TimeoutSupport>::has_default_timer();
                        }
                    },
                    exact,
                )
            });
            if !self.return_type.infers {
                timeout_check = Some(quote!(#check #timer_needed));
            } else {
                timeout_check = timer_needed;
            }
            let timed_out = respan_exactly(quote!(#full::timed_out_result()), exact);
            let with_timeout = respan(quote!(#full::with_timeout::<_, _>), limit.key_span);
            let limit = duration_tokens(limit.value);
            let policy = self.policy_outside();
            attempt = quote!(#with_timeout(#state.attempt_timeout(#policy, #limit), #attempt, #timed_out));
        }
        let action = args.before_retry.as_ref().map(|action| &action.value);
        // Neither the attempt's result nor the wait is used after the
        // sleep's `.await`: neither takes room in the future.
        let wait = local("wait");
        let timer = local("timer");
        let timer_value = match args.sleep.as_ref().map(|sleep| &sleep.value) {
            Some(custom) => sleep_checked(custom, &krate, true),
            None => quote!(#full::DefaultTimer::new()),
        };
        // Without `sleep = ...` the loop sleeps on the default timer: a
        // build without one is this check's error, in the user's words (left
        // out when the runtime's `tokio` or `futures-timer` feature is on,
        // which turns on this crate's `default-timer`).
        let timer_check = (args.sleep.is_none() && !HAS_DEFAULT_TIMER).then(|| {
            let return_type = if self.return_type.infers {
                quote!(())
            } else {
                self.return_type.erased.clone()
            };
            quote! {
                if false {
                    <#return_type as #krate::bounds::DefaultAsyncSleep>::has_default_timer();
                }
            }
        });
        // The default timer's clock is a constant: no generic call for
        // rustc to check in every function. A custom sleep's timer has no
        // name to write: `Timer::clock` reads its type's.
        let timer_clock = match args.sleep {
            None => quote!(#full::DefaultTimer::CLOCK),
            Some(_) => quote!(#full::Timer::clock(&#timer)),
        };
        let attempts_value = self.attempts_value(&state);
        // With `budget`, the retry the budget allowed is held as a charge
        // across the wait and the admission: sent with the attempt, given
        // back when the future is dropped before that, or the attempt
        // refused.
        let charge = self.args.budget.as_ref().map(|_| local("charge"));
        if let Some(charge) = &charge {
            attempt = quote!({
                #full::Charged::sent_if_held(#charge.take());
                #attempt
            });
        }
        // With `admission`, each attempt is admitted first; a refused one
        // is the result `E::from(Refused)`, which `Loop::failed_admitting`
        // reports as a give-up and returns (the admitting remembers it).
        let (admission_check, admitting_value, attempt) = self.admitted(
            timer_clock.clone(),
            // The question inline; only an answer other than `Go` awaits.
            |admitting| {
                let answer = local("answer");
                quote!({
                    let #answer = #full::Admitting::ask(&mut #admitting);
                    #answer == #full::Admission::Go || #full::admitted_from(#answer, &mut #admitting, &mut #timer).await
                })
            },
            quote!(#full::NestedAttempt { attempt: #attempt }.await),
        );
        let decide = match action {
            None => {
                let after_attempt = self.after_attempt(&result, &below, false);
                quote!(let #wait = #after_attempt;)
            }
            Some(action) => {
                // The action is written here, evaluated per retry: it may
                // borrow what the body borrows (`&mut self` included), and
                // its parameter types come from the failure.
                let next = local("next");
                let after_attempt = self.after_attempt(&result, &below, true);
                // Spanned on the action: a closure that is not async is
                // reported there (by the bound, and by the `.await`).
                let before_retry = respan(quote!(#krate::bounds::async_before_retry), action.span());
                let act = local("action");
                let run_action = respan(quote!(#act(#next.outcome(), #next.event()).await), action.span());
                let after_action = self.after_action(&next);
                quote! {
                    let #next = #after_attempt;
                    let #act = #before_retry(#next.outcome(), #action);
                    #run_action;
                    // The action's time counts: a wait that would now end
                    // past `max_elapsed` is not started.
                    let #wait = #after_action;
                }
            }
        };
        let take_charge = charge.as_ref().map(|charge| {
            let budget = self.budget;
            quote!(#charge = #private::Loop::take_charge(&mut #state, #budget);)
        });
        let after = self.in_decision_scope(quote! {
            #decide
            #take_charge
            #private::Timer::sleep(&mut #timer, #wait).await;
        });
        let charge_value = charge.map(|charge| quote!(let mut #charge = ::core::option::Option::None;));
        let looped = self.looped(
            (&state, self.loop_start(timer_clock)),
            [admitting_value, attempts_value.unwrap_or_default()],
            (&result, &below, attempt),
            after,
        );
        quote! {
            #timeout_check
            #admission_check
            #timer_check
            let mut #timer = #timer_value;
            #charge_value
            #looped
        }
    }
}
